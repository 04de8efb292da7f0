/**
 * An upstream MCP server a gateway keeps running: started (a command over stdio, or a Streamable HTTP
 * URL), watched, and restarted with back-off when it fails or exits. While it is down its tools stay
 * listed and return `is_error` results naming it, so the other upstreams keep working and the model is
 * told why; when it is back, or its tools changed, its listeners are notified.
 *
 * One file: over 500 lines because one supervisor holds a child's whole life (start, the first listing,
 * watching, back-off, restart, the noise of its stderr), and each step reads the same state.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Either } from 'fp-ts/lib/Either.js'
import { right } from 'fp-ts/lib/Either.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Batch, BatchProvider, McpCallContext, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { batchOf } from '../steps/Batch.js'
import { cut, describeError, stderrEnd } from '../kernel/describe.js'
import { errorResult, readPositions } from '../steps/answer.js'
import type { McpLeftOut, McpProvider, McpTool } from '../mcp/client.js'
import { fromMcpClient } from '../mcp/client.js'
import { connectStdio } from '../mcp/stdio.js'
import { fetchWithOwnSignal } from '../mcp/fetch.js'
import type { HostRouter } from '../mcp/relay.js'
import { newHostRouter, relayHostRequests, UPSTREAM_CAPABILITIES } from '../mcp/relay.js'
import type { LogLevel, LogMessage } from '../mcp/logging.js'
import { boundLogMessage } from '../mcp/logging.js'
import { callContextOf } from '../kernel/calls.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How to reach an upstream: the `mcpServers` entry hosts already use.
 *
 * @since 0.1.0
 * @category model
 */
export type UpstreamSpec =
  | {
      readonly command: string
      readonly args?: ReadonlyArray<string>
      readonly env?: Readonly<Record<string, string>>
      readonly cwd?: string
    }
  | { readonly url: string; readonly headers?: Readonly<Record<string, string>> }

/**
 * The tools a listing left out (see `MAX_SCHEMA_DEPTH`), in an event that reports a listing: only when there are
 * some, the first {@link MAX_LEFT_OUT_NAMED} of them with why, and how many in all.
 *
 * @since 0.1.0
 * @category model
 */
export interface LeftOutPart {
  readonly leftOut?: ReadonlyArray<McpLeftOut>
  readonly leftOutCount?: number
}

/**
 * What happened to an upstream, for a log.
 *
 * @since 0.1.0
 * @category model
 */
export type UpstreamEvent =
  | ({
      readonly _tag: 'Started'
      readonly upstream: string
      readonly tools: number
      readonly ms: number
      readonly pid?: number
    } & LeftOutPart)
  | { readonly _tag: 'Failed'; readonly upstream: string; readonly error: string }
  | { readonly _tag: 'Exited'; readonly upstream: string }
  | { readonly _tag: 'Restarting'; readonly upstream: string; readonly inMs: number }
  | ({ readonly _tag: 'ToolsChanged'; readonly upstream: string; readonly tools: number } & LeftOutPart)
  /** A line of its stderr (with `stderr: 'log'`), cut at 1,000 characters, not escaped. */
  | { readonly _tag: 'Stderr'; readonly upstream: string; readonly line: string }

/**
 * What the gateway's resources and prompts hear of an upstream: its own notifications, and each time it
 * comes up (a new client, without the old one's subscriptions) or goes down.
 *
 * @since 0.1.0
 * @category model
 */
export type UpstreamNotice =
  | { readonly _tag: 'Up' }
  | { readonly _tag: 'Down' }
  | { readonly _tag: 'ResourcesChanged' }
  | { readonly _tag: 'PromptsChanged' }
  | { readonly _tag: 'ResourceUpdated'; readonly uri: string }

/**
 * @since 0.1.0
 * @category model
 */
export interface UpstreamOptions {
  /** Called on every start, failure, exit, restart and change of tools. */
  readonly onEvent?: (event: UpstreamEvent) => void
  /** Milliseconds before the first restart; it doubles each time, up to `maxBackoffMs`. Default 500. */
  readonly backoffMs?: number
  /** Default 30 000. */
  readonly maxBackoffMs?: number
  /** Milliseconds it must stay up before the back-off starts again from `backoffMs`. Default 10 000. */
  readonly stableMs?: number
  /**
   * Milliseconds a listing waits for the upstream's fresh tools before it returns the last ones it had; the
   * re-listing goes on, and listeners hear of it if the tools changed. Default 2 000.
   */
  readonly listWaitMs?: number
  /** Per-request timeout for the upstream's calls (see `fromMcpClient`). */
  readonly timeout?: number
  /**
   * The upstream server's stderr: copied to this process's, dropped, or each line an event. Default `'ignore'`.
   * Whichever it is, a start that fails (its handshake, or its first listing) quotes its last lines, escaped.
   */
  readonly stderr?: 'inherit' | 'ignore' | 'log'
  /**
   * Whether each host session's calls go to an upstream session of its own (connected at its first call, ended
   * with it), so the server's requests, logs and progress always have exactly one host. Listings, resources
   * and prompts stay on the shared session. Default false: every host shares one upstream session.
   */
  readonly sessionPerHost?: boolean
  /** Told of a log message of the shared session while no call is in flight there (the gateway sends it to every host). */
  readonly onLog?: (message: LogMessage) => void
}

/**
 * A supervised upstream: a provider that always returns results, never a Left.
 *
 * @since 0.1.0
 * @category model
 */
export interface Upstream extends BatchProvider<never> {
  readonly name: string
  /** Resolves once the first start has succeeded or failed. */
  readonly ready: Promise<void>
  /** Whether it is running now. */
  readonly isUp: IO<boolean>
  /** The server process's id, for a command that runs now. */
  readonly pid: IO<number | undefined>
  /** Calls `listener` when its tools change (and after every restart); returns the unsubscribe function. */
  readonly onToolsChanged: (listener: IO<void>) => IO<void>
  /** The tools of its last listing, with their annotations (which a declaration does not carry); none while it is down. */
  readonly tools: IO<ReadonlyArray<McpTool>>
  /** The SDK client of the server running now (for resources and prompts); `undefined` while it is down. */
  readonly client: IO<Client | undefined>
  /** Calls `listener` on each of its notices; returns the unsubscribe function. */
  readonly onNotice: (listener: (notice: UpstreamNotice) => void) => IO<void>
  /** Stops it for good. */
  readonly close: () => Promise<void>
  /** Tells the running server its client's roots changed (`notifications/roots/list_changed`). */
  readonly rootsChanged: IO<void>
  /** Asks the server (each of its sessions, now and when they start) for logs of `level` and above, if it logs. */
  readonly setLogLevel: (level: LogLevel) => void
  /** A host session ended (the `session` of its calls' context): its upstream session, if it has one, is ended. */
  readonly endSession: (session: object) => void
  /** Where it stands now, without asking it anything (for a start summary, or a page). */
  readonly status: IO<UpstreamStatus>
  /** Resolves once the start under way, if any, has succeeded or failed; at once when none is. */
  readonly settled: () => Promise<void>
}

/**
 * Where a supervised upstream stands: `starting` while a start is under way (its server launched or reached,
 * and not yet listed), `up` once it listed, `down` between a failure or an exit and the next start.
 *
 * @since 0.1.0
 * @category model
 */
export interface UpstreamStatus {
  readonly state: 'starting' | 'up' | 'down'
  /** Its tools, as its last listing gave them (none before the first). */
  readonly tools: ReadonlyArray<ToolDeclaration>
  /** The server process's id, for a command that runs now. */
  readonly pid?: number
  /** How many times it was restarted. */
  readonly restarts: number
  /** Why it is down, or was last (cut to 1,000 characters, not escaped). */
  readonly why?: string
}

interface Running {
  readonly provider: McpProvider
  readonly client: Client
  readonly close: () => Promise<void>
  readonly pid: () => number | undefined
}

interface Connected {
  readonly client: Client
  readonly close: () => Promise<void>
  readonly pid: () => number | undefined
}

const connectTo = async (
  spec: UpstreamSpec,
  options: UpstreamOptions,
  onClose: () => void,
  onStderrLine: ((line: string) => void) | undefined,
  signal: AbortSignal,
): Promise<Connected> => {
  if ('url' in spec) {
    const client = new Client({ name: 'toolstack', version: '0.1.0' }, { capabilities: UPSTREAM_CAPABILITIES })
    client.onclose = onClose
    // imported for an HTTP upstream only: a gateway of stdio upstreams starts them sooner
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
      // each request with a signal of its own: the transport's one would gain a listener per call
      fetch: fetchWithOwnSignal(),
      requestInit: { headers: { ...(spec.headers ?? {}) } },
    })
    await client.connect(transport)
    return {
      client,
      // the upstream session is ended (DELETE), then the connection closed
      close: () =>
        transport
          .terminateSession()
          .catch(() => undefined)
          .then(() => client.close().catch(() => undefined)),
      pid: () => undefined,
    }
  }
  const conn = await connectStdio({
    command: spec.command,
    args: spec.args ?? [],
    ...(spec.env === undefined ? {} : { env: spec.env }),
    ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    // its lines are read whatever the mode, for a start that fails to quote their end; 'log' makes each an event
    stderr: options.stderr === 'inherit' ? 'inherit' : 'ignore',
    ...(onStderrLine === undefined ? {} : { onStderrLine }),
    signal,
    capabilities: UPSTREAM_CAPABILITIES,
  })
  const previous = conn.client.onclose
  conn.client.onclose = () => {
    previous?.()
    onClose()
  }
  return { client: conn.client, close: conn.close, pid: () => conn.pid }
}

// the lines of a server's stderr held while it starts: its last ones, said once it is up (a failed start quotes
// their end instead)
const EARLY_LINES = 20

// each tool's name, description and parameters as JSON (absent parameters stay distinct from `null`): a changed
// description is news too, so hosts re-list it and the gateway's pins compare it
const shapes = (ds: ReadonlyArray<ToolDeclaration>): string =>
  JSON.stringify(
    ds.map((d) => [d.function.name, d.function.description ?? null, JSON.stringify(d.function.parameters)]),
  )

/** How many of the tools a listing left out an event names (it counts them all). */
export const MAX_LEFT_OUT_NAMED = 20

// the tools a listing left out, for the event that reports the listing: so a log says why a tool is missing
const leftOutOf = (provider: McpProvider): LeftOutPart => {
  const out = provider.leftOut()
  return out.length === 0 ? {} : { leftOut: out.slice(0, MAX_LEFT_OUT_NAMED), leftOutCount: out.length }
}

const sameNames = (a: ReadonlyArray<ToolDeclaration>, b: ReadonlyArray<ToolDeclaration>): boolean =>
  shapes(a) === shapes(b)

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * Starts `spec` and keeps it running. The listing is the upstream's last good one (empty until it
 * first starts), never a Left; a call while it is down is an `is_error` result naming it and stating
 * when it is retried.
 *
 * @since 0.1.0
 * @category constructors
 */
export const superviseUpstream = (name: string, spec: UpstreamSpec, options: UpstreamOptions = {}): Upstream => {
  const emit = options.onEvent ?? (() => undefined)
  const base = options.backoffMs ?? 500
  const max = options.maxBackoffMs ?? 30_000
  const stableMs = options.stableMs ?? 10_000
  const listWaitMs = options.listWaitMs ?? 2_000
  // each line of its stderr an event (with 'log'); in any mode, a start that fails quotes their end
  const logged = options.stderr === 'log'
  let running: Running | undefined
  let upSince: number | undefined
  let known: ReadonlyArray<ToolDeclaration> = []
  let down = 'it has not started yet'
  let retry: NodeJS.Timeout | undefined
  let nextDelay = base
  let closed = false
  let startRun: Promise<void> = Promise.resolve()
  // a start under way, and how many restarts there were
  let inStart = false
  let restarts = 0
  let lastWhy: string | undefined
  // aborted by close: a start still in its handshake ends its server at once
  const starting = new AbortController()
  // the hosts of the calls in flight here, for the server's requests to its client
  const router = newHostRouter()
  // the log level the hosts asked for, applied to every session of a server that logs (its refusal is its own affair)
  let logLevel: LogLevel | undefined
  const applyLevel = (client: Client): void => {
    if (logLevel === undefined || client.getServerCapabilities()?.logging === undefined) return
    client.setLoggingLevel(logLevel).catch(() => undefined)
  }
  // a log message of the shared session goes to the hosts with a call in flight there, or, with none, to every host
  const logShared = (client: Client, hosts: HostRouter['hosts']): void =>
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const message = boundLogMessage(n.params)
      if (message === undefined) return
      const now = hosts()
      if (now.length === 0) options.onLog?.(message)
      for (const h of now) h.onLog?.(message)
    })
  const listeners = new Set<IO<void>>()
  const noticeListeners = new Set<(notice: UpstreamNotice) => void>()
  const tell = (notice: UpstreamNotice): void => {
    for (const l of [...noticeListeners]) {
      try {
        l(notice)
      } catch {
        // as for notify
      }
    }
  }
  const notify = (): void => {
    for (const l of [...listeners]) {
      try {
        l()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }

  const scheduleRestart = (): void => {
    if (closed || retry !== undefined) return
    // a flapping upstream keeps its back-off: it starts again from `base` only after a stable run
    if (upSince !== undefined && Date.now() - upSince >= stableMs) nextDelay = base
    upSince = undefined
    const inMs = nextDelay
    nextDelay = Math.min(max, nextDelay * 2)
    emit({ _tag: 'Restarting', upstream: name, inMs })
    down = `${down}; it is restarted in ${Math.ceil(inMs / 1000)} s`
    retry = setTimeout(() => {
      retry = undefined
      restarts++
      startRun = start()
    }, inMs)
    retry.unref()
  }

  // a restart is news only when the tools differ: a host that saw the upstream down calls the same tools
  const relist = async (provider: McpProvider): Promise<number> => {
    const listed = await provider.toolsForLlm()
    if (listed._tag === 'Left') throw new Error(listed.left.message)
    const changed = !sameNames(known, listed.right)
    known = listed.right
    if (changed) {
      emit({ _tag: 'ToolsChanged', upstream: name, tools: known.length, ...leftOutOf(provider) })
      notify()
    }
    return known.length
  }

  // one re-listing in flight, and at most one more after it, however many list_changed arrive meanwhile
  let inFlight: Promise<void> | undefined
  let again = false
  const refresh = (): Promise<void> => {
    const now = running
    if (now === undefined) return Promise.resolve()
    if (inFlight !== undefined) {
      again = true
      return inFlight
    }
    const current = relist(now.provider).then(
      () => undefined,
      () => undefined,
    )
    inFlight = current
    void current.then(() => {
      inFlight = undefined
      if (again) {
        again = false
        void refresh()
      }
    })
    return current
  }

  // run at construction and by the retry timer (which close clears)
  const start = async (): Promise<void> => {
    inStart = true
    try {
      await startOnce()
    } finally {
      inStart = false
    }
  }
  const startOnce = async (): Promise<void> => {
    const t0 = Date.now()
    let current: Connected | undefined
    // what the server says while it starts is held, its last lines only: a server that crashes at start says its
    // stack trace again on every restart, and the failure quotes its end (connectStdio, when the handshake fails;
    // the catch below, when what follows it does, such as the first listing)
    let early: Array<string> | undefined = []
    let dropped = 0
    const heard = (line: string): void => {
      if (early === undefined) {
        if (logged) emit({ _tag: 'Stderr', upstream: name, line })
        return
      }
      early.push(line)
      if (early.length > EARLY_LINES) {
        early.shift()
        dropped++
      }
    }
    // once it is up, what it said is said, each line an event (the first of them saying how many were left out)
    const sayEarly = (): void => {
      const lines = early ?? []
      early = undefined
      if (!logged) return
      if (dropped > 0)
        emit({ _tag: 'Stderr', upstream: name, line: `(${dropped} earlier lines of its start not shown)` })
      for (const line of lines) emit({ _tag: 'Stderr', upstream: name, line })
    }
    try {
      current = await connectTo(
        spec,
        options,
        () => {
          if (running === undefined || closed) return
          running = undefined
          down = 'it exited'
          lastWhy = down
          emit({ _tag: 'Exited', upstream: name })
          tell({ _tag: 'Down' })
          scheduleRestart()
        },
        heard,
        starting.signal,
      )
      // installed before any I/O event after the handshake, so the server's first request finds them
      relayHostRequests(current.client, router)
      logShared(current.client, router.hosts)
      applyLevel(current.client)
      // each call a host sent is routed while it runs: the server's requests go to that host
      const provider = fromMcpClient(current.client, {
        onCallContext: router.enter,
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      })
      provider.onToolsChanged(() => void refresh())
      // set on each new client, so a restarted upstream is heard as the first one was
      const client = current.client
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => tell({ _tag: 'ResourcesChanged' }))
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => tell({ _tag: 'PromptsChanged' }))
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) =>
        tell({ _tag: 'ResourceUpdated', uri: n.params.uri }),
      )
      const tools = await relist(provider)
      // closed while starting: stop for good
      if (closed) {
        await current.close()
        return
      }
      running = { provider, client, close: current.close, pid: current.pid }
      upSince = Date.now()
      const pid = current.pid()
      emit({
        _tag: 'Started',
        upstream: name,
        tools,
        ms: Date.now() - t0,
        ...(pid === undefined ? {} : { pid }),
        ...leftOutOf(provider),
      })
      sayEarly()
      tell({ _tag: 'Up' })
    } catch (e) {
      running = undefined
      await current?.close()
      // quoted once the server is gone, so its last words are in; a handshake that failed (no connection) quotes
      // them in its own error already
      const why = describeError(e) + (current === undefined ? '' : stderrEnd(early ?? [], dropped > 0))
      early = undefined
      down = `it failed to start (${why})`
      lastWhy = cut(why, 1_000)
      emit({ _tag: 'Failed', upstream: name, error: why })
      scheduleRestart()
    }
  }

  // With sessionPerHost: each host session's own upstream session, connected at its first call. Its server's
  // requests, logs and progress go to that host alone; a log while none of its calls is in flight goes on the
  // host session's own stream.
  interface HostSessionClient {
    readonly client: Client
    readonly provider: McpProvider
    readonly close: () => Promise<void>
  }
  const perHost = new Map<object, Promise<HostSessionClient>>()
  const connectFor = async (onGone: IO<void>): Promise<HostSessionClient> => {
    const own = newHostRouter()
    let last: McpCallContext | undefined
    let ended = false
    const conn = await connectTo(
      spec,
      options,
      () => {
        if (!ended) onGone()
      },
      logged ? (line) => emit({ _tag: 'Stderr', upstream: name, line }) : undefined,
      starting.signal,
    )
    if (closed) {
      await conn.close()
      throw new Error('the gateway is closing')
    }
    relayHostRequests(conn.client, own)
    conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const message = boundLogMessage(n.params)
      if (message === undefined) return
      const now = own.hosts()[0]
      ;(now ?? last)?.onLog?.(message, now === undefined ? { afterCall: true } : undefined)
    })
    applyLevel(conn.client)
    const provider = fromMcpClient(conn.client, {
      onCallContext: (context) => {
        last = context
        return own.enter(context)
      },
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    })
    return {
      client: conn.client,
      provider,
      close: () => {
        ended = true
        return conn.close()
      },
    }
  }
  const hostClient = (session: object): Promise<HostSessionClient> => {
    const known = perHost.get(session)
    if (known !== undefined) return known
    // a connection that fails or closes is forgotten, so the host's next call connects again
    const forget = (): void => {
      if (perHost.get(session) === made) perHost.delete(session)
    }
    const made: Promise<HostSessionClient> = connectFor(forget)
    perHost.set(session, made)
    made.catch(forget)
    return made
  }
  const sessionOf = (batch: Batch): object | undefined => {
    for (const c of batch.calls) {
      const session = callContextOf(c)?.session
      if (session !== undefined) return session
    }
    return undefined
  }
  const closeHostClient = (made: Promise<HostSessionClient> | undefined): Promise<void> =>
    made === undefined
      ? Promise.resolve()
      : made.then(
          (c) => c.close(),
          () => undefined,
        )

  const ready = start()
  // the start in progress or last run: close waits for it, so a server it was starting is gone when close is
  startRun = ready

  const answerAll = (batch: Batch, why: string): Either<never, ReadonlyArray<ToolResult>> => {
    const read = readPositions(batch.calls)
    if (read._tag === 'Left') return right(read.left)
    return right(
      read.right.calls.map((c, i): ToolResult => {
        const answered = read.right.unreadable[i]
        return answered?._tag === 'Answer' ? answered.result : errorResult(c, why)
      }),
    )
  }

  const executeBatch = (batch: Batch) => async (): Promise<Either<never, ReadonlyArray<ToolResult>>> => {
    const now = running
    if (now === undefined)
      return answerAll(
        batch,
        `the upstream MCP server ${JSON.stringify(name)} is not running: ${down}; the tool was not called`,
      )
    const session = options.sessionPerHost === true ? sessionOf(batch) : undefined
    let provider = now.provider
    if (session !== undefined) {
      try {
        provider = (await hostClient(session)).provider
      } catch (e) {
        return answerAll(
          batch,
          `the upstream MCP server ${JSON.stringify(name)} could not open a session for this host (${describeError(e)}); the tool was not called`,
        )
      }
    }
    // fromMcpClient never returns a Left; if it did, every call would get an error result with the reason
    const out = await provider.executeBatch(batch)()
    return out._tag === 'Left'
      ? answerAll(batch, `the upstream MCP server ${JSON.stringify(name)} failed: ${out.left.message}`)
      : out
  }

  return {
    name,
    ready,
    isUp: () => running !== undefined,
    pid: () => running?.pid(),
    toolsForLlm: async () => {
      // a hung upstream delays a listing by listWaitMs at most; what it lists later is announced then
      let timer: NodeJS.Timeout | undefined
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, listWaitMs)
        timer.unref()
      })
      await Promise.race([refresh(), waited])
      clearTimeout(timer)
      return right(known)
    },
    executeToolCalls: (calls) => executeBatch(batchOf(calls)),
    executeBatch,
    onToolsChanged: (listener) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    tools: () => running?.provider.tools() ?? [],
    client: () => running?.client,
    onNotice: (listener) => {
      noticeListeners.add(listener)
      return () => {
        noticeListeners.delete(listener)
      }
    },
    rootsChanged: () => {
      running?.client.sendRootsListChanged().catch(() => undefined)
      for (const made of perHost.values())
        void made.then(
          (c) => c.client.sendRootsListChanged().catch(() => undefined),
          () => undefined,
        )
    },
    setLogLevel: (level) => {
      logLevel = level
      if (running !== undefined) applyLevel(running.client)
      for (const made of perHost.values())
        void made.then(
          (c) => applyLevel(c.client),
          () => undefined,
        )
    },
    endSession: (session) => {
      const made = perHost.get(session)
      perHost.delete(session)
      void closeHostClient(made)
    },
    status: () => {
      const pid = running?.pid()
      return {
        state: running !== undefined ? 'up' : inStart ? 'starting' : 'down',
        tools: known,
        ...(pid === undefined ? {} : { pid }),
        restarts,
        ...(lastWhy === undefined ? {} : { why: lastWhy }),
      }
    },
    settled: () => startRun,
    close: async () => {
      closed = true
      starting.abort()
      clearTimeout(retry)
      await startRun
      const now = running
      running = undefined
      const own = [...perHost.values()]
      perHost.clear()
      await Promise.all([now?.close(), ...own.map(closeHostClient)])
    },
  }
}
