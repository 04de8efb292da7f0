// `toolstack proxy`, the built command, over a real server: a log it cannot write never stops the forwarding
// (each record it could not take goes to stderr, and the failure is said once), and however the proxy ends, even
// on an error nobody caught, its server (which runs in a process group of its own) ends with it.
import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { eventually, isRunning, killAll, tempDir, track } from './support.js'

let tmp: ReturnType<typeof tempDir>
// the servers' pids: a server the proxy left behind is ended here, whatever the test found
const servers: Array<string> = []
beforeEach(() => {
  tmp = tempDir()
})
afterEach(async () => {
  await killAll()
  for (const pidFile of servers.splice(0)) {
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0
    if (pid > 0 && isRunning(pid)) process.kill(-pid, 'SIGKILL')
  }
  tmp.remove()
})

// a small MCP server: answers initialize, tools/list (one tool, "t", declaring "a") and tools/call; writes its pid
// once it reads its input; ends at the end of its input unless IGNORE_EOF; ignores SIGTERM with IGNORE_TERM
const SERVER = `
import { writeFileSync } from 'node:fs'
import readline from 'node:readline'
const [pidFile] = process.argv.slice(2)
if (process.env.IGNORE_TERM) process.on('SIGTERM', () => {})
if (process.env.IGNORE_EOF) setInterval(() => {}, 1000)
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n')
const tools = [{ name: 't', inputSchema: { type: 'object', properties: { a: {} } } }]
readline.createInterface({ input: process.stdin }).on('line', (l) => {
  let m
  try { m = JSON.parse(l) } catch { return }
  if (m.method === 'initialize') out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } })
  else if (m.method === 'tools/list') out({ jsonrpc: '2.0', id: m.id, result: { tools } })
  else if (m.method === 'tools/call') out({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } })
})
writeFileSync(pidFile, String(process.pid))
`

// loaded into the proxy's process before the command: once the server has started, an error nobody catches (or an
// exit from nowhere), as a bug in the proxy would be
const FAULT = `
import { existsSync, readFileSync } from 'node:fs'
const pidFile = process.env.FAULT_PID_FILE
const t = setInterval(() => {
  if (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') return
  clearInterval(t)
  if (process.env.FAULT === 'exit') process.exit(3)
  if (process.env.FAULT === 'reject') Promise.reject(new Error('an injected rejection'))
  else throw new Error('an injected fault')
}, 20)
`

interface Proxy {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly send: (line: unknown) => void
  readonly exited: Promise<number | null>
  readonly serverPid: () => number
}

const startProxy = (
  options: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = {},
  nodeArgs: ReadonlyArray<string> = [],
): Proxy => {
  const script = join(tmp.dir, 'server.mjs')
  writeFileSync(script, SERVER)
  const pidFile = join(tmp.dir, `server-${servers.length}.pid`)
  servers.push(pidFile)
  const child = track(
    process.execPath,
    [...nodeArgs, 'dist/esm/cli/main.js', 'proxy', ...options, '--', process.execPath, script, pidFile],
    { env: { ...process.env, NO_COLOR: '1', FAULT_PID_FILE: pidFile, ...env }, stdio: ['pipe', 'pipe', 'pipe'] },
  )
  let out = ''
  let err = ''
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (out += s))
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s))
  child.stdin?.on('error', () => undefined)
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    send: (line) => child.stdin?.write((typeof line === 'string' ? line : JSON.stringify(line)) + '\n'),
    // 'exit', not 'close': a server left behind would hold the proxy's stderr open
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    serverPid: () => Number(readFileSync(pidFile, 'utf8')),
  }
}

const answered = (p: Proxy, id: number): Promise<void> =>
  eventually(() => p.stdout().includes(`"id":${id},"result"`), 15_000, `the answer to ${id}`)

const request = (id: number, method: string, params?: unknown): unknown => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
})

describe('toolstack proxy: a log it cannot write', () => {
  it.runIf(existsSync('/dev/full'))(
    'forwards every request after a record the log refused, says so once on stderr, and puts the records there',
    async () => {
      const p = startProxy(['--log', '/dev/full', '--max-line-bytes', '150'])
      p.send(request(1, 'initialize', {}))
      await answered(p, 1)
      // over 150 bytes: forwarded, not audited, and a notice for the log
      p.send(request(2, 'tools/list', { pad: 'x'.repeat(200) }))
      await answered(p, 2)
      p.send(request(3, 'tools/list'))
      await answered(p, 3)
      p.send(request(4, 'tools/call', { name: 't', arguments: { a: 1, b: 2 } }))
      await answered(p, 4)
      await eventually(() => p.stderr().includes('undeclared argument key "b"'), 15_000, 'the warning')
      const server = p.serverPid()
      p.child.stdin?.end()
      expect(await p.exited).toBe(0)
      expect(isRunning(server) && !isZombie(server)).toBe(false)
      const said = p
        .stderr()
        .split('\n')
        .filter((l) => l !== '')
      // one line says the log failed, with the error; the records it refused follow on stderr, nothing else
      expect(said.filter((l) => l.includes('/dev/full'))).toEqual([
        'toolstack proxy: cannot write to the log "/dev/full" (ENOSPC: no space left on device, write): ' +
          'each record it does not take goes to stderr',
      ])
      expect(said).toHaveLength(3)
      expect(said[1]).toMatch(
        / \[.*server\.mjs.*\] toolstack proxy: a line of 2\d\d bytes from the host was forwarded /,
      )
      expect(said[2]).toMatch(/ toolstack: t call 4 carried undeclared argument key "b" \(declared: "a"\)$/)
    },
  )
})

describe('toolstack proxy: its server ends with it, however it ends', () => {
  const cases = [
    { fault: 'throw', status: 1, env: { IGNORE_EOF: '1' } },
    { fault: 'reject', status: 1, env: { IGNORE_EOF: '1' } },
    { fault: 'exit', status: 3, env: { IGNORE_EOF: '1', IGNORE_TERM: '1' } },
  ]
  for (const { fault, status, env } of cases) {
    it(`on ${fault === 'exit' ? 'an exit' : 'an error'} nobody expected (${fault}), its server ignoring ${Object.keys(env).join(', ')}`, async () => {
      const faultFile = join(tmp.dir, 'fault.mjs')
      writeFileSync(faultFile, FAULT)
      const p = startProxy(['--grace', '300'], { ...env, FAULT: fault }, ['--import', pathToFileURL(faultFile).href])
      expect(await p.exited).toBe(status)
      const server = p.serverPid()
      // SIGTERM as the proxy exits, and SIGKILL after the grace for a server that ignores SIGTERM too
      await eventually(() => !isRunning(server) || isZombie(server), 5_000, 'the server to end')
    })
  }
})

// a process that ended but that its parent (here, whatever adopted it) has not reaped yet
const isZombie = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') === true
  } catch {
    return false
  }
}
