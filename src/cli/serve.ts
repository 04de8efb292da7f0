/**
 * `toolstack serve --config FILE [--http [HOST:]PORT]`: one MCP server in front of many, with the
 * whole stack on every session. The library does the work (`startGateway`, `toMcpServer`, `serveStdio`,
 * `serveHttp`); this module applies the command-line options, writes the log, and shuts down cleanly.
 *
 * One file: just over 500 lines because the command's life (options, the start line, the log, reloads, the
 * page's actions, a clean shutdown) shares one set of handles that every step closes in order.
 *
 * @since 0.1.0
 */
import type { FSWatcher } from 'node:fs'
import { closeSync, openSync, watch, writeSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { MAX_RECORD_CHARS, formatWarning, warningLists } from './check.js'
import { readConfig } from './configFile.js'
import { cut, describeError, jsonLine, plural, shown } from './text.js'
import type { HttpPage, HttpServing } from '../mcp/index.js'
import type {
  ConfigChange,
  Gateway,
  GatewayRecord,
  GatewayUpstreamStatus,
  LeftOutPart,
  UpstreamEvent,
} from '../gateway/index.js'
import { serveHttp, serveStdio } from '../mcp/index.js'
import { GATEWAY_PAGE_ACTIONS, gatewayMetrics, gatewayPage, shownStoreUrl, startGateway } from '../gateway/index.js'
import { drawDefinitionEvent } from '../extend.js'

/**
 * @since 0.1.0
 * @category model
 */
export interface ServeOptions {
  readonly config: string
  /** `[HOST:]PORT`; absent: stdio. */
  readonly http?: string | undefined
  /** Overrides the configuration's `log`. */
  readonly log?: string | undefined
  /**
   * With `http`: `Host` values accepted besides loopback's (`NAME[:PORT]`: the machine's name or address
   * when it listens beyond loopback), and their `http://` and `https://` Origins.
   */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /** With `http`: the most sessions open at once (serveHttp's default when absent). */
  readonly maxSessions?: number | undefined
  /** With `http`: milliseconds a session may stay idle (serveHttp's default when absent). */
  readonly idleMs?: number | undefined
  /** Reload when the configuration file is written (as on SIGHUP). */
  readonly watch?: boolean | undefined
  /** Overrides the configuration's `store` (`memory`, `file:PATH`, `redis://…`). */
  readonly store?: string | undefined
  /** With `http`: the most connections open at once (serveHttp's default, sized to the file limit, when absent). */
  readonly maxConnections?: number | undefined
  /** Nothing on stderr but the start summary, a reload's outcome and what stops it (the log still gets everything). */
  readonly quiet?: boolean | undefined
  /** With `http`: `false` for streams a host cannot resume (serveHttp's `resumable`; resumable when absent). */
  readonly resumable?: boolean | undefined
}

/**
 * The effects `serve` needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface ServeIO {
  readonly err: (line: string) => void
  /** The bearer token HTTP clients must present (from `TOOLSTACK_TOKEN`), if any. */
  readonly token: string | undefined
  /** Subscribes to a signal sent to the command; returns the unsubscribe. */
  readonly onSignal: (signal: NodeJS.Signals, handler: () => void) => () => void
  /** Subscribes to the host closing this process's stdout (EPIPE on a write); returns the unsubscribe. */
  readonly onOutputClosed: (handler: () => void) => () => void
  readonly version: string
  /** This process's id, named in the start summary (SIGHUP goes to it). */
  readonly pid: number
  /** Called with every record too (the OTLP export, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). */
  readonly onRecord?: (record: GatewayRecord) => void
}

// what a model or an upstream wrote is cut to 200 characters on stderr (`shown`), and to these many in each
// string of a log record, as in every other record
const MAX_LOGGED = MAX_RECORD_CHARS

// `; left out: "deep" (its input schema … nest deeper than 100 levels)`, and how many more than were named
const leftOutText = (e: LeftOutPart): string => {
  const named = e.leftOut ?? []
  if (named.length === 0) return ''
  const more = (e.leftOutCount ?? named.length) - named.length
  const each = named.map((t) => `${shown(JSON.stringify(t.name))} (${t.why})`).join(', ')
  return `; left out: ${each}${more > 0 ? ` and ${more} more` : ''}`
}

const upstreamEvent = (e: UpstreamEvent): string => {
  switch (e._tag) {
    case 'Started':
      return `started with ${e.tools} tools in ${e.ms} ms${leftOutText(e)}`
    case 'Failed':
      return `failed: ${shown(e.error, MAX_LOGGED)}`
    case 'Restarting':
      return `restarts in ${e.inMs} ms`
    case 'Exited':
      return 'exited'
    case 'ToolsChanged':
      return `now has ${e.tools} tools${leftOutText(e)}`
    case 'Stderr':
      return `stderr: ${shown(e.line, MAX_LOGGED)}`
  }
}

const names = (ns: ReadonlyArray<string>): string => ns.map((n) => shown(JSON.stringify(n))).join(', ')

// `restarted "fs"; started "mem"; stopped "old"; rules, log changed`, or `nothing changed`
const reloadSummary = (c: ConfigChange): string => {
  const parts = [
    ...(c.restarted.length === 0 ? [] : [`restarted ${names(c.restarted)}`]),
    ...(c.added.length === 0 ? [] : [`started ${names(c.added)}`]),
    ...(c.removed.length === 0 ? [] : [`stopped ${names(c.removed)}`]),
    ...(c.changed.length === 0 ? [] : [`served anew ${names(c.changed)}`]),
    ...(c.settings.length === 0 ? [] : [`${c.settings.join(', ')} changed`]),
  ]
  return parts.length === 0 ? 'nothing changed' : parts.join('; ')
}

/**
 * A record as one line for stderr: every name, id and text escaped (control characters as `\uXXXX`) and cut,
 * so a tool name cannot retitle or rewrite the terminal.
 *
 * @since 0.1.0
 */
export const stderrLine = (r: GatewayRecord): string => {
  switch (r.type) {
    case 'warning':
      return formatWarning(r)
    case 'decision': {
      const refusal =
        r.refusal === undefined
          ? ''
          : r.refusal === 'NoOneToAsk'
            ? ' (NoOneToAsk: no one could be asked; the host does not support MCP elicitation)'
            : ` (${r.refusal})`
      return `toolstack serve: ${shown(r.tool)} call ${r.id === '' ? '(no id)' : shown(r.id)} ${r.outcome} by ${r.by}${refusal}`
    }
    case 'call': {
      const call = `toolstack serve: ${shown(r.tool)} call ${r.id === '' ? '(no id)' : shown(r.id)}`
      return !r.listed && r.outcome === 'refused'
        ? `${call} refused: no tool of that name is listed (unknown, misspelt, or hidden)`
        : `${call} ${r.outcome} in ${r.ms} ms`
    }
    case 'diagnostic':
      return shown(r.message, MAX_LOGGED)
    case 'upstream':
      return `toolstack serve: upstream ${shown(JSON.stringify(r.upstream))} ${upstreamEvent(r)}`
    case 'definition':
      return drawDefinitionEvent(r)
    case 'reload':
      return r.outcome === 'kept'
        ? `toolstack serve: not reloaded, the running configuration is kept: ${r.problems.map((p) => shown(p, MAX_LOGGED)).join('; ')}`
        : `toolstack serve: reloaded: ${reloadSummary(r)}`
  }
}

/**
 * A record as one JSON line for the log, with its time: every string cut at 1,000 characters, a warning's lists
 * bounded as its stderr line bounds them (`warningLists`: the first 20 of each, with the whole count of a list
 * that was cut), and the characters JSON leaves raw (DEL, C1, separators, direction marks) escaped, so the line
 * reads the same value.
 *
 * @since 0.1.0
 */
export const logLine = (r: GatewayRecord, time: Date): string =>
  jsonLine({ time: time.toISOString(), ...r, ...(r.type === 'warning' ? warningLists(r) : {}) }, (_key, value) =>
    typeof value === 'string' ? cut(value, MAX_LOGGED) : value,
  )

// editors replace a file by renaming another over it: watch its directory, for its name, and wait for the writes
// to settle (200 ms) before reading it
const watchFile = (file: string, onChange: () => void, err: (line: string) => void): (() => void) => {
  let timer: NodeJS.Timeout | undefined
  const name = basename(file)
  let watcher: FSWatcher
  try {
    watcher = watch(dirname(file), (_event, changed) => {
      if (changed !== null && changed !== name) return
      clearTimeout(timer)
      timer = setTimeout(onChange, 200)
    })
  } catch (e) {
    // no watching (no inotify watches left, say) is no reason to stop serving: SIGHUP still reloads
    err(
      `toolstack serve: --watch cannot watch ${JSON.stringify(dirname(file))}: ${(e as Error).message}; SIGHUP still reloads`,
    )
    return () => undefined
  }
  // a folder that cannot be watched any longer ends the watching, not the gateway
  watcher.on('error', () => watcher.close())
  return () => {
    clearTimeout(timer)
    watcher.close()
  }
}

// a DNS name, an IPv4 address or a bracketed IPv6 address, with an optional port
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** Parses `[HOST:]PORT` into a host and a port; returns an error message when `s` is not one. */
const parseListen = (s: string): { readonly host: string; readonly port: number } | string => {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(s)
  const port = m === null ? NaN : Number(m[2])
  if (m === null || port > 65535)
    return `--http expects [HOST:]PORT, e.g. 8931 or 127.0.0.1:8931, got ${JSON.stringify(s)}`
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port }
}

// the log file opened for appending, or why it could not be
const openLog = (file: string): number | string => {
  try {
    return openSync(file, 'a')
  } catch (e) {
    return `cannot open the log ${JSON.stringify(file)}: ${(e as Error).message}`
  }
}

// What reaches stderr, with a log or without: one line per warning, refusal (a tool the session was not listed
// included), question answered, diagnostic and upstream event; not the calls the rules allowed, nor the call
// records (noise to a person watching). A failure or an exit and the restart it leads to are one line, and a start
// that fails as the one before it says so in a few words, so a crashing upstream is one short line per back-off step.
const terminal = (err: (line: string) => void) => {
  const lastFailure = new Map<string, string>()
  // the upstreams up now: the tools a start lists are said by its own line, not as a change
  const up = new Set<string>()
  let held: { readonly upstream: string; readonly line: string } | undefined
  const flush = (): void => {
    if (held !== undefined) err(held.line)
    held = undefined
  }
  const upstream = (r: Extract<GatewayRecord, { type: 'upstream' }>): void => {
    const who = `toolstack serve: upstream ${shown(JSON.stringify(r.upstream))}`
    switch (r._tag) {
      case 'Failed': {
        up.delete(r.upstream)
        flush()
        const again = lastFailure.get(r.upstream) === r.error
        lastFailure.set(r.upstream, r.error)
        held = { upstream: r.upstream, line: again ? `${who} failed to start again, the same way` : stderrLine(r) }
        // its restart is told in the same step; closing, there is none
        return queueMicrotask(flush)
      }
      case 'Exited':
        up.delete(r.upstream)
        flush()
        held = { upstream: r.upstream, line: stderrLine(r) }
        return queueMicrotask(flush)
      case 'Restarting':
        if (held?.upstream === r.upstream) {
          err(`${held.line}; restarts in ${r.inMs} ms`)
          held = undefined
          return
        }
        break
      case 'Started':
        lastFailure.delete(r.upstream)
        up.add(r.upstream)
        break
      case 'ToolsChanged':
        if (!up.has(r.upstream)) return
        break
      default:
        break
    }
    flush()
    err(stderrLine(r))
  }
  return (r: GatewayRecord): void => {
    if (r.type === 'upstream') return upstream(r)
    if (r.type === 'call' && !(r.outcome === 'refused' && !r.listed)) return
    if (r.type === 'decision' && r.outcome === 'allowed' && r.by === 'rules') return
    flush()
    err(stderrLine(r))
  }
}

// what `GET /` says in the moment before the gateway has opened its store
const STARTING_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>toolstack serve</title></head>' +
  '<body><p>toolstack serve is starting; <a href="/">reload</a> in a moment.</p></body></html>'

// `2 upstreams, 22 tools`, naming those not up
const startSummary = (upstreams: ReadonlyArray<GatewayUpstreamStatus>): string => {
  const notUp = upstreams
    .filter((u) => u.state !== 'up')
    .map((u) => `${shown(JSON.stringify(u.name))} ${u.state === 'starting' ? 'still starting' : 'down'}`)
  const tools = upstreams.reduce((n, u) => n + u.tools.length, 0)
  return `${plural(upstreams.length, 'upstream')}${notUp.length === 0 ? '' : ` (${notUp.join(', ')})`}, ${plural(tools, 'tool')}`
}

/**
 * Runs the gateway until the host disconnects (stdio) or a signal arrives, and returns the exit
 * status: 0 when it ended normally, 2 when it could not start (a bad configuration, a port in use),
 * after reporting why to `io.err`. Over HTTP the port is bound before any upstream starts; once every upstream
 * has listed or failed (or the start-up window has passed), one line sums it up.
 *
 * @since 0.1.0
 * @category command
 */
export const runServe = async (options: ServeOptions, io: ServeIO): Promise<number> => {
  const config = readConfig(options.config, options.store)
  if ('problems' in config) {
    for (const line of config.problems) io.err(`toolstack serve: ${line}`)
    return 2
  }
  const listen = options.http === undefined ? undefined : parseListen(options.http)
  if (typeof listen === 'string') {
    io.err(`toolstack serve: ${listen}`)
    return 2
  }
  const allowedHosts = options.allowedHosts ?? []
  const badHost = allowedHosts.find((h) => !HOST.test(h))
  if (badHost !== undefined) {
    io.err(
      `toolstack serve: --allowed-host expects NAME[:PORT], e.g. mcp.example or 192.168.1.5:8931, got ${shown(JSON.stringify(badHost))}`,
    )
    return 2
  }
  const httpOnly = [
    ...(allowedHosts.length > 0 ? ['--allowed-host'] : []),
    ...(options.maxSessions !== undefined ? ['--max-sessions'] : []),
    ...(options.idleMs !== undefined ? ['--idle-timeout'] : []),
    ...(options.maxConnections !== undefined ? ['--max-connections'] : []),
    ...(options.resumable === false ? ['--no-resume'] : []),
  ]
  if (listen === undefined && httpOnly.length > 0) {
    io.err(`toolstack serve: ${httpOnly.join(', ')} ${httpOnly.length === 1 ? 'applies' : 'apply'} to --http only`)
    return 2
  }
  const logFile = options.log ?? config.config.log
  const opened = logFile === undefined ? undefined : openLog(logFile)
  if (typeof opened === 'string') {
    io.err(`toolstack serve: ${opened}`)
    return 2
  }
  // the gateway, once started; the HTTP side (bound first) reads it through these
  let gateway: Gateway | undefined
  // the page, once the gateway has started (until then, one that says it is starting)
  let page: HttpPage | undefined
  let markStarted: (g: Gateway | undefined) => void = () => undefined
  const whenStarted = new Promise<Gateway | undefined>((resolve) => {
    markStarted = resolve
  })
  const metrics =
    listen === undefined
      ? undefined
      : await gatewayMetrics({
          sessions: () => serving?.sessions() ?? 0,
          readiness: () => gateway?.readiness() ?? { ready: false },
          ...(config.config.store === undefined ? {} : { stats: () => gateway?.stats() ?? Promise.resolve([]) }),
        })
  // replaced by each reload: a new `log` applies, and the same path is opened again after logrotate moved it
  let fd = opened
  let logFailedSaid = false
  const toTerminal = options.quiet === true ? () => undefined : terminal(io.err)
  const record = (r: GatewayRecord): void => {
    metrics?.record(r)
    try {
      io.onRecord?.(r)
    } catch {
      // an export failure must not fail the tool call
    }
    try {
      // the log gets every record
      if (fd !== undefined) writeSync(fd, logLine(r, new Date()) + '\n')
    } catch (e) {
      // a failed log write must not fail the tool call; it is said once on stderr (a full disk, a file gone
      // read-only), and the log is tried again for the next record
      if (!logFailedSaid) {
        logFailedSaid = true
        try {
          io.err(
            `toolstack serve: cannot write to the log (${shown(describeError(e))}); records it does not take are lost from it`,
          )
        } catch {
          // nothing more to do
        }
      }
    }
    try {
      // a reload's outcome answers the person who asked for it, even when told to be quiet
      if (options.quiet === true && r.type === 'reload') io.err(stderrLine(r))
      else toTerminal(r)
    } catch {
      // nor a failed write to stderr
    }
  }
  const closeLog = (): void => {
    if (fd !== undefined) closeSync(fd)
  }

  // over HTTP, the port is bound before anything starts: a port in use is said at once; a request that comes
  // before the gateway has opened its store waits for it
  let serving: HttpServing | undefined
  if (listen !== undefined) {
    try {
      serving = await serveHttp(
        () =>
          whenStarted.then((g) => {
            if (g === undefined) throw new Error('the gateway did not start')
            return g.newServer()
          }),
        {
          ...listen,
          allowedHosts,
          readiness: () => gateway?.readiness() ?? { ready: false },
          ...(metrics === undefined ? {} : { metrics: metrics.scrape }),
          ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
          ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
          ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
          ...(options.resumable === false ? { resumable: false } : {}),
          onNotice: (message) => record({ type: 'diagnostic', message: `toolstack serve: ${message}` }),
          // the page, drawn from the gateway once it has started
          page: {
            render: (query, csrf) => page?.render(query, csrf) ?? STARTING_PAGE,
            actions: Object.fromEntries(
              GATEWAY_PAGE_ACTIONS.map((name) => [name, (form: URLSearchParams) => page?.actions[name]?.(form) ?? '/']),
            ),
          },
          // the library accepts http:// of every accepted Host; https:// too, for a proxy that terminates TLS
          allowedOrigins: allowedHosts.flatMap((h) =>
            /:\d+$/.test(h) || listen.port === 0 ? [`https://${h}`] : [`https://${h}`, `https://${h}:${listen.port}`],
          ),
          ...(io.token === undefined ? {} : { token: io.token }),
        },
      )
    } catch (e) {
      io.err(`toolstack serve: ${(e as Error).message}`)
      closeLog()
      return 2
    }
  }
  try {
    // its own files (the configuration, the log) are kept from every call, as the store's are
    gateway = await startGateway(
      config.config,
      record,
      { name: 'toolstack', version: io.version },
      { config: options.config, ...(options.log === undefined ? {} : { log: options.log }) },
    )
    page = gatewayPage(gateway, {
      name: 'toolstack',
      version: io.version,
      pid: io.pid,
      store: config.config.store === undefined ? undefined : shownStoreUrl(config.config.store),
      sessions: () => serving?.sessions() ?? 0,
    })
  } catch (e) {
    // the store could not be opened (a corrupt file, a package missing): nothing was started
    markStarted(undefined)
    io.err(`toolstack serve: ${shown((e as Error).message, MAX_LOGGED)}`)
    await serving?.close()
    closeLog()
    return 2
  }
  const running = gateway
  markStarted(running)
  // read, check, and apply the file again; any problem keeps the running configuration (and log) as they are
  const reloadOnce = async (): Promise<void> => {
    const next = readConfig(options.config, options.store)
    if ('problems' in next) return record({ type: 'reload', outcome: 'kept', problems: next.problems })
    const nextLog = options.log ?? next.config.log
    const reopened = nextLog === undefined ? undefined : openLog(nextLog)
    if (typeof reopened === 'string') return record({ type: 'reload', outcome: 'kept', problems: [reopened] })
    const previous = fd
    fd = reopened
    try {
      if (previous !== undefined) closeSync(previous)
    } catch {
      // the old log is done with either way
    }
    await running.reload(next.config)
  }
  let reloading: Promise<void> = Promise.resolve()
  const reload = (): void => {
    reloading = reloading.then(reloadOnce).catch(() => undefined)
  }
  let stop: () => void = () => undefined
  const ended = new Promise<void>((resolve) => {
    stop = resolve
  })
  const offs = [...(['SIGINT', 'SIGTERM'] as const).map((s) => io.onSignal(s, stop)), io.onSignal('SIGHUP', reload)]
  if (options.watch === true) offs.push(watchFile(options.config, reload, io.err))
  // over stdio, a closed stdout means the host is gone, as a closed stdin does: an orderly stop, status 0
  if (listen === undefined) offs.push(io.onOutputClosed(stop))
  // one line once every upstream has listed or failed (or the start-up window passed): what a person starting it
  // waits to read, with the pid a SIGHUP goes to (under `npx`, `$!` is npm's, which does not pass SIGHUP on)
  void running.started.then(() => {
    const where =
      serving === undefined
        ? `serving over stdio (pid ${io.pid})`
        : `listening on ${serving.url} (the page: ${new URL('/', serving.url).href}; ` +
          `${io.token === undefined ? '' : 'bearer token required, the page asks for it as a password; '}pid ${io.pid})`
    io.err(`toolstack serve: ${startSummary(running.status())}, ${where}`)
  })
  try {
    if (serving === undefined) {
      // a line from the host that could not be served is said as HTTP's notices are: on stderr and in the log
      const onNotice = (message: string): void => record({ type: 'diagnostic', message: `toolstack serve: ${message}` })
      await Promise.race([serveStdio(running.newServer(), { onNotice }), ended])
    } else {
      await ended
      await serving.close()
    }
    return 0
  } finally {
    for (const off of offs) off()
    await reloading
    await running.close()
    closeLog()
  }
}
