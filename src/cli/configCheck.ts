/**
 * `toolstack check CONFIG`: a configuration tried without serving it. Every problem of the file at once (as `serve`
 * names them); then, when it is valid, each upstream started as the gateway starts it, its tools listed and counted,
 * and every one stopped. Nothing is served, the store is not opened, and no log is written.
 *
 * @since 0.1.0
 */
import type { GatewayRecord, GatewayUpstreamStatus } from '../gateway/index.js'
import { shownStoreUrl, startGateway } from '../gateway/index.js'
import { readConfig } from './configFile.js'
import { cut, escapeControls, plural, shown } from './text.js'

/**
 * The effects `check` needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface CheckIO {
  /** The report, one line at a time. */
  readonly out: (line: string) => void
  readonly version: string
  /** Whether the process `pid` still runs (to say each upstream's process was stopped). */
  readonly isRunning: (pid: number) => boolean
}

/**
 * `check`'s exit statuses: 0 every upstream listed its tools; 1 the file is valid but an upstream failed, or did not
 * list in time, or did not stop; 2 the file cannot be read or is not a valid configuration.
 *
 * @since 0.1.0
 */
export const CheckStatus = { ok: 0, upstreamFailed: 1, invalid: 2 } as const

// what an upstream or the file says is cut to this many characters, and escaped
const MAX_SHOWN = 500
const shownHere = (s: string): string => shown(s, MAX_SHOWN)
// a name cut before it is quoted, so its quotes show where it ends
const named = (name: string): string => escapeControls(JSON.stringify(cut(name, 100)))

// a failed start's last lines of stderr quoted (the gateway holds a start's stderr, and quotes it when it fails)
const MAX_STDERR_LINES = 5

// how long the processes of the upstreams may take to be gone once they were stopped
const GONE_WAIT_MS = 3000

const gone = async (pids: ReadonlyArray<number>, isRunning: (pid: number) => boolean): Promise<boolean> => {
  const until = Date.now() + GONE_WAIT_MS
  while (pids.some(isRunning)) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 25))
  }
  return true
}

// what the gateway told of one upstream's first start
interface FirstStart {
  readonly listed?: { readonly tools: number; readonly ms: number }
  readonly failed?: string
}

// one upstream's line once the start is over: its first start decides (a failed one is being restarted by now)
const upstreamLine = (u: GatewayUpstreamStatus, first: FirstStart): { readonly ok: boolean; readonly line: string } => {
  const who = `upstream ${named(u.name)}`
  if (first.listed !== undefined && u.state === 'up') {
    const { tools, ms } = first.listed
    const served = tools !== u.tools.length ? ` (${tools} listed, its "tools" serve ${u.tools.length})` : ''
    const pid = u.pid === undefined ? '' : ` (pid ${u.pid})`
    return {
      ok: true,
      line: `ok    ${who}: started${pid}, listed ${plural(u.tools.length, 'tool')}${served} in ${ms} ms as ${shownHere(u.prefix)}_*`,
    }
  }
  if (first.listed !== undefined)
    return {
      ok: false,
      line: `FAIL  ${who}: listed ${plural(first.listed.tools, 'tool')}, then went down: ${shownHere(u.why ?? 'it exited')}`,
    }
  if (first.failed !== undefined) return { ok: false, line: `FAIL  ${who}: did not start: ${shownHere(first.failed)}` }
  return { ok: false, line: `FAIL  ${who}: started, but did not list its tools within the start-up window` }
}

/**
 * Checks the configuration file `file` (with `store` in place of its own, as `serve --store` would) and writes a
 * report through `io.out`; returns the exit status (`CheckStatus`). Every line is escaped and cut: names, errors
 * and stderr come from the file and from the upstreams.
 *
 * @since 0.1.0
 * @category command
 */
export const runCheck = async (file: string, store: string | undefined, io: CheckIO): Promise<number> => {
  const read = readConfig(file, store)
  if ('problems' in read) {
    for (const p of read.problems) io.out(`FAIL  ${shownHere(p)}`)
    io.out(`toolstack check: ${plural(read.problems.length, 'problem')}; nothing was started`)
    return CheckStatus.invalid
  }
  const { config } = read
  io.out(
    `ok    ${shownHere(file)}: a valid configuration: ${plural(config.servers.length, 'upstream')}, ${plural(config.rules.length, 'rule')}` +
      `${config.store === undefined ? '' : `, store ${shownHere(shownStoreUrl(config.store))} (not opened)`}`,
  )
  // each upstream's first start as the gateway saw it, and the last lines of its stderr
  const first = new Map<string, FirstStart>()
  const stderr = new Map<string, Array<string>>()
  const record = (r: GatewayRecord): void => {
    if (r.type !== 'upstream') return
    const seen = first.get(r.upstream)
    if (r._tag === 'Started' && seen === undefined) first.set(r.upstream, { listed: { tools: r.tools, ms: r.ms } })
    if (r._tag === 'Failed' && seen === undefined) first.set(r.upstream, { failed: r.error })
    if (r._tag === 'Stderr') {
      const lines = stderr.get(r.upstream) ?? []
      lines.push(r.line)
      if (lines.length > MAX_STDERR_LINES) lines.shift()
      stderr.set(r.upstream, lines)
    }
  }
  // the store is left alone (a check changes nothing a running gateway shares), and so is the log
  const { store: _store, ...withoutStore } = config
  const gateway = await startGateway(
    { ...withoutStore, log: undefined },
    record,
    { name: 'toolstack', version: io.version },
    { config: file },
  )
  await gateway.started
  const status = gateway.status()
  const pids = status.flatMap((u) => (u.pid === undefined ? [] : [u.pid]))
  let failed = 0
  for (const u of status) {
    const started = first.get(u.name) ?? {}
    const { ok, line } = upstreamLine(u, started)
    io.out(line)
    if (ok) continue
    failed++
    // a failure's own message quotes the end of its stderr; one still starting is shown by what it wrote
    if (started.listed === undefined && started.failed === undefined)
      for (const l of stderr.get(u.name) ?? []) io.out(`        stderr: ${shownHere(l)}`)
  }
  await gateway.close()
  const stopped = await gone(pids, io.isRunning)
  io.out(
    stopped
      ? `ok    ${plural(status.length, 'upstream')} stopped`
      : `FAIL  not every upstream process stopped within ${GONE_WAIT_MS} ms (pids ${pids.filter(io.isRunning).join(', ')})`,
  )
  const problems = failed + (stopped ? 0 : 1)
  io.out(
    problems === 0
      ? `toolstack check: all good: ${plural(
          status.reduce((n, u) => n + u.tools.length, 0),
          'tool',
        )} from ${plural(status.length, 'upstream')}`
      : `toolstack check: ${plural(problems, 'problem')}`,
  )
  return problems === 0 ? CheckStatus.ok : CheckStatus.upstreamFailed
}
