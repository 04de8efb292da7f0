// Runs the command as a user would: a separate Node process, from source, through
// tsx's loader (one process, so its pid, its signals and its memory are its own).
import type { ChildProcess, SpawnOptions } from 'node:child_process'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { until } from '../support/until.js'

const require = createRequire(import.meta.url)

export const root = fileURLToPath(new URL('../..', import.meta.url))
export const mainTs = join(root, 'src/cli/main.ts')
const tsxLoader = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href

/** Node arguments that run the CLI from source with `args`. */
export const cliArgs = (...args: ReadonlyArray<string>): Array<string> => ['--import', tsxLoader, mainTs, ...args]

/** The entry of an installed server's bin. */
export const serverEverything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
export const serverFilesystem = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

const live = new Set<ChildProcess>()

/** Spawns a process that `killAll` will end, whatever happens to the test. */
export const track = (command: string, args: ReadonlyArray<string>, options: SpawnOptions = {}): ChildProcess => {
  const child = spawn(command, [...args], { cwd: root, ...options })
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

/** Kills every tracked process still running and resolves once each has exited (for afterEach), so a
 * temporary directory removed after it has no process still writing into it. */
export const killAll = async (): Promise<void> => {
  const running = [...live]
  live.clear()
  await Promise.all(
    running.map(async (child) => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }),
  )
}

export interface Run {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: Buffer
  readonly stderr: string
}

/** Runs the CLI to completion, feeding `input` to its stdin. */
export const runCli = (
  args: ReadonlyArray<string>,
  options: {
    readonly input?: string | Buffer
    readonly env?: NodeJS.ProcessEnv
    readonly cwd?: string
    readonly nodeArgs?: ReadonlyArray<string>
  } = {},
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = track(process.execPath, [...(options.nodeArgs ?? []), ...cliArgs(...args)], {
      cwd: options.cwd ?? root,
      env: options.env ?? { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const out: Array<Buffer> = []
    let err = ''
    child.stdout?.on('data', (b: Buffer) => out.push(b))
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s))
    child.stdin?.on('error', () => undefined)
    child.stdin?.end(options.input ?? '')
    child.once('error', reject)
    child.once('close', (status, signal) => resolve({ status, signal, stdout: Buffer.concat(out), stderr: err }))
  })

/** A fresh temporary directory, and its removal. */
export const tempDir = (): { readonly dir: string; readonly remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-cli-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }) }
}

/** Whether a process with this pid is still running. */
export { isAlive as isRunning } from '../support/processes.js'

/** Resolves when `predicate` holds, polling; rejects after `ms` (as long as a test may take: see until.ts). */
export const eventually = (predicate: () => boolean, ms = 30_000, what = 'condition'): Promise<void> =>
  until(predicate, ms, what, 20)

/** The pids of every process descending from `pid` (Linux: read from /proc). */
export const descendants = (pid: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  let entries: Array<string>
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e))
  } catch {
    return []
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      // the command name may hold spaces and parentheses: the ppid follows the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const list = children.get(ppid)
      if (list === undefined) children.set(ppid, [Number(e)])
      else list.push(Number(e))
    } catch {
      // gone meanwhile
    }
  }
  const out: Array<number> = []
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      out.push(c)
      walk(c)
    }
  }
  walk(pid)
  return out
}

/** Kills `pid` and everything under it. */
export const killTree = (pid: number): void => {
  for (const p of [...descendants(pid), pid]) {
    try {
      process.kill(p, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

/**
 * A fake stdio server for byte-level tests. It appends every byte it receives to
 * argv[2], writes its pid to argv[3], writes the file $FAKE_EMIT_FILE to stdout at
 * start, and obeys control lines `{"fake":"emit","b64":…}`, `{"fake":"exit","code":n}`,
 * `{"fake":"kill","signal":…}`, and `{"fake":"ignore","signal":…}` (from then on; it says `{"ignoring":…}` once it does). At
 * stdin EOF it exits 0, unless FAKE_IGNORE_EOF; FAKE_IGNORE_TERM makes it ignore SIGTERM.
 */
export const FAKE_SERVER = `
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
const [record, pidFile] = process.argv.slice(2)
writeFileSync(record, '')
if (process.env.FAKE_IGNORE_TERM) process.on('SIGTERM', () => {})
if (process.env.FAKE_EMIT_FILE) process.stdout.write(readFileSync(process.env.FAKE_EMIT_FILE))
let line = []
// stdout to a pipe is asynchronous: exit only once what was written is out
const exit = (code) => process.stdout.write('', () => process.exit(code))
const control = (text) => {
  if (!text.startsWith('{"fake":')) return
  const c = JSON.parse(text)
  if (c.fake === 'emit') process.stdout.write(Buffer.from(c.b64, 'base64'))
  if (c.fake === 'exit') exit(c.code)
  if (c.fake === 'kill') process.kill(process.pid, c.signal)
  if (c.fake === 'ignore') {
    process.on(c.signal, () => {})
    process.stdout.write(JSON.stringify({ ignoring: c.signal }) + '\\n')
  }
}
process.stdin.on('data', (b) => {
  appendFileSync(record, b)
  let start = 0
  for (let nl = b.indexOf(10); nl !== -1; nl = b.indexOf(10, start)) {
    line.push(b.subarray(start, nl))
    control(Buffer.concat(line).toString('utf8'))
    line = []
    start = nl + 1
  }
  if (start < b.length) line.push(b.subarray(start))
})
process.stdin.on('end', () => {
  if (!process.env.FAKE_IGNORE_EOF) exit(0)
  setInterval(() => {}, 1000)
})
writeFileSync(pidFile, String(process.pid))
`
