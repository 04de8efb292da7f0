/**
 * `toolstack serve --config FILE [--http [HOST:]PORT]`: one MCP server in front of many, with the
 * whole stack on every session. The library does the work (`startGateway`, `toMcpServer`, `serveStdio`,
 * `serveHttp`); this module applies the command-line options, writes the log, and shuts down cleanly.
 *
 * @since 0.1.0
 */
import type { FSWatcher } from 'node:fs'
import { closeSync, openSync, readFileSync, watch, writeSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { formatWarning } from './check.js'
import { cut, escapeControls, jsonLine } from './text.js'
import type { ConfigChange, Gateway, GatewayConfig, GatewayRecord, Readiness, UpstreamEvent } from '../mcp/index.js'
import { decodeGatewayConfig, gatewayMetrics, serveHttp, serveStdio, startGateway } from '../mcp/index.js'
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
  /** Called with every record too (the OTLP export, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). */
  readonly onRecord?: (record: GatewayRecord) => void
}

// what a model or an upstream wrote (a tool name, an error) is cut to these many characters: on stderr,
// and in each string of a log record
const MAX_SHOWN = 200
const MAX_LOGGED = 1000

const shown = (s: string, max = MAX_SHOWN): string => escapeControls(cut(s, max))

const upstreamEvent = (e: UpstreamEvent): string => {
  switch (e._tag) {
    case 'Started':
      return `started with ${e.tools} tools in ${e.ms} ms`
    case 'Failed':
      return `failed: ${shown(e.error, MAX_LOGGED)}`
    case 'Restarting':
      return `restarts in ${e.inMs} ms`
    case 'Exited':
      return 'exited'
    case 'ToolsChanged':
      return `now has ${e.tools} tools`
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
      const refusal = r.refusal === undefined ? '' : ` (${r.refusal})`
      return `toolstack serve: ${shown(r.tool)} call ${r.id === '' ? '(no id)' : shown(r.id)} ${r.outcome} by ${r.by}${refusal}`
    }
    case 'call':
      return `toolstack serve: ${shown(r.tool)} call ${r.id === '' ? '(no id)' : shown(r.id)} ${r.outcome} in ${r.ms} ms`
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
 * A record as one JSON line for the log, with its time: every string cut at 1,000 characters, and the
 * characters JSON leaves raw (DEL, C1, separators, direction marks) escaped, so the line reads the same value.
 *
 * @since 0.1.0
 */
export const logLine = (r: GatewayRecord, time: Date): string =>
  jsonLine({ time: time.toISOString(), ...r }, (_key, value) =>
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

// the configuration file read and checked (with --store in place of its `store`): its problems (each a line), or
// the configuration
const readConfig = (
  file: string,
  store: string | undefined,
): { readonly problems: ReadonlyArray<string> } | { readonly config: GatewayConfig } => {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    return { problems: [`cannot read the configuration ${JSON.stringify(file)}: ${(e as Error).message}`] }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return { problems: [`${file} is not JSON: ${(e as Error).message}`] }
  }
  const config = decodeGatewayConfig(
    store === undefined || typeof json !== 'object' || json === null || Array.isArray(json) ? json : { ...json, store },
  )
  return config._tag === 'Left'
    ? { problems: config.left.split('\n').map((l) => `${file}: ${l}`) }
    : { config: config.right }
}

// the log file opened for appending, or why it could not be
const openLog = (file: string): number | string => {
  try {
    return openSync(file, 'a')
  } catch (e) {
    return `cannot open the log ${JSON.stringify(file)}: ${(e as Error).message}`
  }
}

/**
 * Runs the gateway until the host disconnects (stdio) or a signal arrives, and returns the exit
 * status: 0 when it ended normally, 2 when it could not start (a bad configuration, a port in use),
 * after reporting why to `io.err`.
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
  // over HTTP, GET /metrics: read from the gateway and the listener once they exist
  let readiness = (): Readiness => ({ ready: false })
  let sessions = (): number => 0
  let stats = (): ReturnType<Gateway['stats']> => Promise.resolve([])
  const metrics =
    listen === undefined
      ? undefined
      : await gatewayMetrics({
          sessions: () => sessions(),
          readiness: () => readiness(),
          ...(config.config.store === undefined ? {} : { stats: () => stats() }),
        })
  // replaced by each reload: a new `log` applies, and the same path is opened again after logrotate moved it
  let fd = opened
  const record = (r: GatewayRecord): void => {
    metrics?.record(r)
    try {
      io.onRecord?.(r)
    } catch {
      // an export failure must not fail the tool call
    }
    try {
      // the log gets every record; stderr leaves out the calls the rules allowed and the call records, noise to a
      // person watching (each refusal has its decision line)
      if (fd !== undefined) writeSync(fd, logLine(r, new Date()) + '\n')
      else if (r.type !== 'call' && !(r.type === 'decision' && r.outcome === 'allowed' && r.by === 'rules'))
        io.err(stderrLine(r))
      // a reload's outcome answers the person who asked for it, on stderr, even with a log
      if (fd !== undefined && r.type === 'reload') io.err(stderrLine(r))
    } catch {
      // a failed log write must not fail the tool call
    }
  }
  let gateway: Gateway
  try {
    // its own files (the configuration, the log) are kept from every call, as the store's are
    gateway = await startGateway(
      config.config,
      record,
      { name: 'toolstack', version: io.version },
      { config: options.config, ...(options.log === undefined ? {} : { log: options.log }) },
    )
  } catch (e) {
    // the store could not be opened (a corrupt file): nothing was started
    io.err(`toolstack serve: ${shown((e as Error).message, MAX_LOGGED)}`)
    if (fd !== undefined) closeSync(fd)
    return 2
  }
  readiness = gateway.readiness
  stats = gateway.stats
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
    await gateway.reload(next.config)
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
  try {
    if (listen === undefined) {
      await Promise.race([serveStdio(gateway.newServer()), ended])
      return 0
    }
    let serving
    try {
      serving = await serveHttp(gateway.newServer, {
        ...listen,
        allowedHosts,
        readiness: gateway.readiness,
        ...(metrics === undefined ? {} : { metrics: metrics.scrape }),
        ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
        ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
        // the library accepts http:// of every accepted Host; https:// too, for a proxy that terminates TLS
        allowedOrigins: allowedHosts.flatMap((h) =>
          /:\d+$/.test(h) || listen.port === 0 ? [`https://${h}`] : [`https://${h}`, `https://${h}:${listen.port}`],
        ),
        ...(io.token === undefined ? {} : { token: io.token }),
      })
    } catch (e) {
      io.err(`toolstack serve: ${(e as Error).message}`)
      return 2
    }
    sessions = serving.sessions
    io.err(`toolstack serve: listening on ${serving.url}${io.token === undefined ? '' : ' (bearer token required)'}`)
    await ended
    await serving.close()
    return 0
  } finally {
    for (const off of offs) off()
    await reloading
    await gateway.close()
    if (fd !== undefined) closeSync(fd)
  }
}
