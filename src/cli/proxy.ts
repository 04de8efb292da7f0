/**
 * `toolstack proxy`: a stdio MCP proxy that forwards every byte both ways, unchanged and in order,
 * and audits a copy after forwarding it.
 *
 * Each direction is a plain pipe (`Readable.pipe`, with backpressure) plus a `data` listener added
 * after it: a chunk is written to the other side first, then split into lines, and only the relevant
 * lines are parsed. A parse per `tools/call` costs microseconds and hosts send a few calls a second,
 * so no worker thread or ring buffer is needed. (Lines over 64 KiB are shrunk before parsing: see
 * `withoutLongStrings`.)
 *
 * @since 0.1.0
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import { watchGroup } from '../mcp/watchdog.js'
import { splitLines } from './lines.js'
import type { LogRecord, ProxyAudit, ProxyAuditOptions } from './proxyaudit.js'
import type { Direction } from './sidechannel.js'
import { describeError, shown } from './text.js'

/** @since 0.1.0 */
export interface ProxyOptions extends ProxyAuditOptions {
  /** Milliseconds between closing the server's stdin and SIGTERM, and between SIGTERM and SIGKILL. */
  readonly graceMs: number
  /** The longest line the audit reads; a longer one is forwarded all the same. */
  readonly maxLineBytes: number
}

/** The effects the proxy needs, passed in. @since 0.1.0 */
export interface ProxyIO {
  readonly stdin: Readable
  readonly stdout: Writable
  readonly env: NodeJS.ProcessEnv
  /** Logs a warning or notice (to stderr or the log file). */
  readonly log: (record: LogRecord) => void
  /** The proxy's own messages (a server that cannot be started). */
  readonly err: (line: string) => void
  /** Subscribes to a signal sent to the proxy; returns the unsubscribe. */
  readonly onSignal: (signal: NodeJS.Signals, handler: () => void) => () => void
  /** Subscribes to the proxy's process exiting, however it exits (a synchronous handler); returns the unsubscribe. */
  readonly onExit: (handler: () => void) => () => void
}

const loadProxyAudit = async (options: ProxyAuditOptions, log: (record: LogRecord) => void): Promise<ProxyAudit> =>
  (await import('./proxyaudit.js')).proxyAudit(options, log)

// A host line can carry "tools/list" or "tools/call" only if it contains "tools" or a backslash (an
// escape could spell it); any other line is skipped without parsing.
const TOOLS = Buffer.from('tools')
const mayConcernTools = (line: Buffer): boolean => line.includes(TOOLS) || line.includes(0x5c)

/**
 * Where the forwarded lines go: the audit, loaded (and the library with it) on the first host line
 * that may concern tools. Loading blocks the thread for a while, and a host sends `initialize` first,
 * so its response is forwarded before loading begins.
 *
 * @since 0.1.0
 */
export interface AuditTap {
  readonly host: (bytes: Buffer) => void
  /** A server line, passed only when `wantsServer()` returned true as the line started. */
  readonly server: (bytes: Buffer) => void
  readonly wantsServer: () => boolean
  /** Resolves once every line passed in was read (or the audit failed to load). */
  readonly settled: () => Promise<void>
}

/**
 * Returns a tap over the audit that `load` resolves to. Lines arriving while it loads are queued in
 * arrival order across both sides (a listing's request before its response); every server line is
 * queued then, since whether a listing is pending is not known yet.
 *
 * @since 0.1.0
 */
export const auditTap = (load: () => Promise<ProxyAudit>, err: (line: string) => void): AuditTap => {
  let audit: ProxyAudit | undefined
  let loading: Promise<void> | undefined
  let waiting: Array<readonly [Direction, Buffer]> | undefined = []
  const read = (a: ProxyAudit, from: Direction, bytes: Buffer): void => {
    try {
      a.line(from, bytes)
    } catch {
      // an audit failure must never affect forwarding
    }
  }
  const take = (from: Direction, bytes: Buffer): void => {
    if (audit !== undefined) return read(audit, from, bytes)
    waiting?.push([from, bytes])
    loading ??= load().then(
      (a) => {
        for (const [f, b] of waiting ?? []) read(a, f, b)
        waiting = undefined
        audit = a
      },
      (e: unknown) => {
        waiting = undefined
        err(`the audit could not be loaded (${shown(describeError(e))}); forwarding goes on, unaudited`)
      },
    )
  }
  return {
    host: (bytes) => {
      if (mayConcernTools(bytes)) take('host', bytes)
    },
    server: (bytes) => {
      if (loading !== undefined) take('server', bytes)
    },
    wantsServer: () => (audit === undefined ? loading !== undefined && waiting !== undefined : audit.awaitingListing()),
    settled: () => loading ?? Promise.resolve(),
  }
}

// How long to wait for the server's stdout to end once the server exited: a process the server
// started may hold it open forever.
const OUTPUT_GRACE_MS = 1000

const signalNumber = (signal: NodeJS.Signals): number => constants.signals[signal] ?? 0

/**
 * Returns `log` shielded: a record it fails to take (it throws) must not stop the forwarding that reported it,
 * so the failure is said once through `err` and the proxy goes on. (The command's own log never throws: it
 * writes to stderr what its file refuses.)
 */
const shieldedLog = (log: ProxyIO['log'], err: ProxyIO['err']): ProxyIO['log'] => {
  let told = false
  return (record) => {
    try {
      log(record)
    } catch (e) {
      if (told) return
      told = true
      try {
        err(`a warning or notice could not be written (${shown(describeError(e))}); forwarding goes on`)
      } catch {
        // nowhere left to say it
      }
    }
  }
}

// blocks the thread for `ms`: an exit handler runs synchronously, so it cannot wait on a timer
const pause = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

const startError = (command: string, e: unknown): readonly [string, number] => {
  const code = (e as { readonly code?: unknown } | null)?.code
  if (code === 'ENOENT') return [`cannot start ${JSON.stringify(command)}: command not found`, 127]
  if (code === 'EACCES') return [`cannot start ${JSON.stringify(command)}: permission denied`, 126]
  return [`cannot start ${JSON.stringify(command)}: ${describeError(e)}`, 126]
}

/**
 * Runs `command args…` as an MCP server behind the proxy and returns the exit status
 * the proxy should end with: the server's own (128 + n when signal n ended it), 127
 * when the command does not exist, 126 when it cannot be run.
 *
 * @since 0.1.0
 */
export const runProxy = (
  command: string,
  args: ReadonlyArray<string>,
  options: ProxyOptions,
  io: ProxyIO,
): Promise<number> =>
  new Promise<number>((resolve) => {
    let child: ChildProcess
    try {
      // own process group: kill(-pid) reaches whatever the server started, so none of it outlives the proxy
      child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'inherit'], env: io.env, detached: true })
    } catch (e) {
      const [message, status] = startError(command, e)
      io.err(message)
      resolve(status)
      return
    }
    const serverIn = child.stdin as Writable
    const serverOut = child.stdout as Readable
    const log = shieldedLog(io.log, io.err)
    const audit = auditTap(() => loadProxyAudit(options, log), io.err)

    const timers = new Set<NodeJS.Timeout>()
    const later = (ms: number, f: () => void): void => {
      const t = setTimeout(() => {
        timers.delete(t)
        f()
      }, ms)
      timers.add(t)
    }
    const signalGroup = (signal: NodeJS.Signals | 0): boolean => {
      if (child.pid === undefined) return false
      try {
        process.kill(-child.pid, signal)
        return true
      } catch {
        return false
      }
    }
    let killing = false
    const killAfterGrace = (): void => {
      if (killing) return
      killing = true
      later(options.graceMs, () => signalGroup('SIGKILL'))
    }
    // once the server has exited: SIGTERM to what is left in its group, SIGKILL after the grace period
    const endGroup = async (): Promise<void> => {
      if (!signalGroup('SIGTERM')) return
      for (const until = Date.now() + options.graceMs; Date.now() < until;) {
        await new Promise((r) => setTimeout(r, 25))
        if (!signalGroup(0)) return
      }
      signalGroup('SIGKILL')
    }
    // The server's group is not the proxy's, so nothing ends it when the proxy's process ends: should the proxy exit
    // before `finish` has ended the group (an error nobody caught, an exit called elsewhere), the group gets SIGTERM
    // as it exits, and SIGKILL after the grace. A server that ended but is not yet reaped still counts as there
    // (its parent is exiting), so this may wait the whole grace; only an unexpected exit pays it.
    const endGroupNow = (): void => {
      if (!signalGroup('SIGTERM')) return
      for (const until = Date.now() + options.graceMs; Date.now() < until;) {
        pause(Math.min(25, options.graceMs))
        if (!signalGroup(0)) return
      }
      signalGroup('SIGKILL')
    }
    const offExit = io.onExit(endGroupNow)
    // and should the proxy be killed outright (SIGKILL: no exit event runs), a watchdog ends the group
    const stopWatching = child.pid === undefined ? () => undefined : watchGroup(child.pid, options.graceMs)

    const unsubscribe: Array<() => void> = []
    let finished = false
    let exitStatus: number | undefined
    let serverOutputDone = false

    const finish = (status: number): void => {
      if (finished) return
      finished = true
      for (const t of timers) clearTimeout(t)
      for (const u of unsubscribe) u()
      // the host may keep stdin open and a server's child may keep its stdout open: finish regardless
      io.stdin.unpipe(serverIn)
      io.stdin.destroy()
      serverOut.destroy()
      // wait for the warnings about the last calls before resolving
      const ended = endGroup().then(() => {
        offExit()
        stopWatching()
      })
      void Promise.all([ended, audit.settled()]).then(() => {
        if (io.stdout.writable && !io.stdout.destroyed) io.stdout.write('', () => resolve(status))
        else resolve(status)
      })
    }
    const maybeFinish = (): void => {
      if (exitStatus !== undefined && serverOutputDone) finish(exitStatus)
    }

    let closing = false
    const closeServer = (): void => {
      if (closing) return
      closing = true
      if (!serverIn.destroyed) serverIn.end()
      later(options.graceMs, () => {
        signalGroup('SIGTERM')
        killAfterGrace()
      })
    }

    child.once('error', (e) => {
      if (child.pid !== undefined) return
      const [message, status] = startError(command, e)
      io.err(message)
      finish(status)
    })
    child.once('exit', (code, signal) => {
      exitStatus = code ?? (signal === null ? 1 : 128 + signalNumber(signal))
      later(OUTPUT_GRACE_MS, () => finish(exitStatus as number))
      maybeFinish()
    })
    serverIn.on('error', () => {
      // EPIPE once the server is gone: its exit decides what happens next
    })
    io.stdout.on('error', () => {
      // the host went away: treat it as stdin closed; drain and drop further server output so the
      // server never blocks on a full pipe
      serverOut.resume()
      closeServer()
    })

    // a line over the limit is forwarded but not audited; reported once
    let toldTooLong = false
    const tooLong =
      (from: Direction) =>
      (length: number): void => {
        if (toldTooLong) return
        toldTooLong = true
        const message =
          `a line of ${length} bytes from the ${from} was forwarded but not audited: it is longer than ` +
          `--max-line-bytes (${options.maxLineBytes}); longer lines are not mentioned again`
        log({ text: `toolstack proxy: ${message}`, fields: { type: 'notice', message } })
      }
    const fromHost = splitLines({ line: audit.host, tooLong: tooLong('host') }, { maxBytes: options.maxLineBytes })
    const fromServer = splitLines(
      { line: audit.server, tooLong: tooLong('server') },
      { wants: audit.wantsServer, maxBytes: options.maxLineBytes },
    )

    // pipe() adds its own `data` listener first, so every chunk is written before the audit reads it
    io.stdin.pipe(serverIn)
    io.stdin.on('data', (chunk: Buffer) => fromHost.push(chunk))
    io.stdin.once('end', () => {
      fromHost.end()
      closeServer()
    })
    io.stdin.on('error', closeServer)
    serverOut.pipe(io.stdout, { end: false })
    serverOut.on('data', (chunk: Buffer) => fromServer.push(chunk))
    serverOut.once('end', () => {
      fromServer.end()
      serverOutputDone = true
      maybeFinish()
    })

    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      unsubscribe.push(
        io.onSignal(signal, () => {
          signalGroup(signal)
          killAfterGrace()
        }),
      )
    }
  })
