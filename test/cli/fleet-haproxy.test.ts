// docs/fleet.md's HAProxy configuration, run as written by Debian's haproxy (its addresses made this test's: loopback
// and free ports) in front of two replicas started with the page's command line, sharing one real redis-server: a
// call through the balancer works, and a grant answered through one replica is honoured through the other.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { isAlive } from '../support/processes.js'
import { startRedis } from '../support/redis.js'
import { blocksOf } from '../support/blocks.js'
import { until } from '../support/until.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const FILESYSTEM = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const HAPROXY = '/usr/sbin/haproxy'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))))
    })
  })

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

// a process this test started, ended (SIGTERM, then SIGKILL) whatever happens
const started = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) => {
  const child: ChildProcess = spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()))
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        const kill = setTimeout(() => child.kill('SIGKILL'), 5_000)
        child.once('exit', () => {
          clearTimeout(kill)
          resolve()
        })
        child.kill('SIGTERM')
      }),
  )
  return { child, output: () => output }
}

/** docs/fleet.md's replica command line: `serve` and its options, after `toolstack`. */
const documentedServe = (): ReadonlyArray<string> => {
  const line = /^toolstack (serve .*)$/m.exec(blocksOf('docs/fleet.md', 'sh')[0] ?? '')?.[1] ?? ''
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '')
}

/** docs/fleet.md's HAProxy file, its frontend on `lb` and its first two servers on `replicas`; the others dropped. */
const documentedHaproxy = (lb: number, replicas: ReadonlyArray<number>): string => {
  let n = 0
  return (blocksOf('docs/fleet.md', 'haproxy')[0] ?? '')
    .split('\n')
    .flatMap((line) => {
      if (/^\s*bind :\d+$/.test(line)) return [line.replace(/bind :\d+/, `bind 127.0.0.1:${lb}`)]
      const server = /^(\s*server \w+ )\S+( check)$/.exec(line)
      if (server === null) return [line]
      const port = replicas[n++]
      return port === undefined ? [] : [`${server[1]}127.0.0.1:${port}${server[2]}`]
    })
    .join('\n')
}

/** A host over Streamable HTTP, through the balancer, whose human answers "always" and counts the questions. */
const host = async (url: string): Promise<{ readonly client: Client; readonly asked: () => number }> => {
  let asked = 0
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked++
    return { action: 'accept', content: { action: 'always-allow' } } as never
  })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer s3cret' } } }),
  )
  cleanups.push(() => client.close())
  return { client, asked: () => asked }
}

describe('docs/fleet.md: HAProxy in front of two replicas sharing a store', () => {
  it('a call through the balancer works, and a grant answered through one replica is honoured through the other', async () => {
    expect(existsSync(HAPROXY), `${HAPROXY} is missing: apt-get install -y haproxy`).toBe(true)
    const redis = await startRedis()
    cleanups.push(() => redis.stop())
    const dir = mkdtempSync(join(tmpdir(), 'toolstack-haproxy-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
    writeFileSync(join(dir, 'notes.txt'), 'one\n')
    writeFileSync(
      join(dir, 'toolstack.json'),
      JSON.stringify({
        mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } },
        rules: [
          { tool: 'fs_read_text_file', decision: 'allow' },
          { tool: 'fs_write_file', decision: 'ask', under: dir },
        ],
      }),
    )
    const [lb, pa, pb] = [await freePort(), await freePort(), await freePort()]

    // the replicas: the page's command line, with this test's config, ports, balancer address, store and logs
    const replica = (name: string, port: number) => {
      const args = documentedServe().map((a, i, all) => {
        const option = all[i - 1]
        if (option === '--config') return join(dir, 'toolstack.json')
        if (option === '--http') return `127.0.0.1:${port}`
        if (option === '--allowed-host') return `127.0.0.1:${lb}`
        if (option === '--store') return `${redis.url}${new URL(a).pathname}${new URL(a).search}`
        return a
      })
      expect(args).toContain('--allowed-host')
      const log = join(dir, `${name}.jsonl`)
      const r = started(process.execPath, [main, ...args, '--log', log], { ...process.env, TOOLSTACK_TOKEN: 's3cret' })
      return {
        ...r,
        // the tools called through this replica, from its log
        called: (): Array<string> =>
          existsSync(log)
            ? readFileSync(log, 'utf8')
                .split('\n')
                .filter((l) => l !== '')
                .map((l) => JSON.parse(l) as Record<string, unknown>)
                .filter((x) => x['type'] === 'call')
                .map((x) => String(x['tool']))
            : [],
      }
    }
    const a = replica('a', pa)
    const b = replica('b', pb)
    await until(() => [a, b].every((r) => /listening on /.test(r.output())), 60_000, 'the replicas')

    // the balancer: the page's file, as written but for its addresses
    const cfg = join(dir, 'toolstack.cfg')
    writeFileSync(cfg, documentedHaproxy(lb, [pa, pb]))
    const balancer = started(HAPROXY, ['-db', '-f', cfg])
    await until(() => accepts(lb), 15_000, 'haproxy')
    expect(balancer.child.exitCode, balancer.output()).toBeNull()

    // a host through the balancer: a call works (the Host it sends is the balancer's, which --allowed-host names)
    const url = `http://127.0.0.1:${lb}/mcp`
    const first = await host(url)
    const read = await first.client.callTool({
      name: 'fs_read_text_file',
      arguments: { path: join(dir, 'notes.txt') },
    })
    expect(read.isError).not.toBe(true)
    expect(JSON.stringify(read.content)).toContain('one')
    await until(() => a.called().length + b.called().length === 1, 10_000, 'the call in a log')
    const [mine, theirs] = a.called().length === 1 ? [a, b] : [b, a]

    // its human answers "always" to a write: the grant is in the store
    const wrote = await first.client.callTool({
      name: 'fs_write_file',
      arguments: { path: join(dir, 'a.txt'), content: 'a' },
    })
    expect(wrote.isError).not.toBe(true)
    expect(first.asked()).toBe(1)
    // the session stuck to its replica
    expect(mine.called()).toEqual(['fs_read_text_file', 'fs_write_file'])

    // a host whose session the balancer gives to the other replica (round robin: the next one, or the one after)
    let other: Awaited<ReturnType<typeof host>> | undefined
    for (let i = 0; i < 6 && other === undefined; i++) {
      const h = await host(url)
      const before = theirs.called().length
      await h.client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt') } })
      await new Promise((r) => setTimeout(r, 200))
      if (theirs.called().length > before) other = h
    }
    if (other === undefined) throw new Error('the balancer never gave a session to the second replica')
    await new Promise((r) => setTimeout(r, 300))
    const honoured = await other.client.callTool({
      name: 'fs_write_file',
      arguments: { path: join(dir, 'b.txt'), content: 'b' },
    })
    expect(honoured.isError).not.toBe(true)
    // no question: the grant answered through the first replica holds on the second
    expect(other.asked()).toBe(0)
    expect(theirs.called()).toContain('fs_write_file')
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('b')

    const pids = [a.child.pid, b.child.pid, balancer.child.pid].map(Number)
    for (const c of cleanups.splice(0).reverse()) await c()
    expect(pids.filter(isAlive)).toEqual([])
  }, 180_000)
})
