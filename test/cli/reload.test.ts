// `toolstack serve` reloading its configuration, run as a host runs it: the built command, two upstream
// processes (the whoami fixture, which says its pid and argv), a real SDK Client over stdio (and over
// Streamable HTTP) that stays connected while the file changes and SIGHUP (or --watch) reloads it.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { isAlive } from '../support/processes.js'
import { until } from '../support/until.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const WHOAMI = join(root, 'test/mcp/fixtures/whoami-server.mjs')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const workspace = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-reload-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
  return dir
}

const whoami = (...args: ReadonlyArray<string>) => ({ command: process.execPath, args: [WHOAMI, ...args] })
const TWO = {
  mcpServers: { a: whoami('one'), b: whoami('two') },
  rules: [{ tool: '*', decision: 'allow' }],
  listWaitMs: 30_000,
}

const write = (file: string, config: unknown): void =>
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config))

const records = (log: string): Array<Record<string, unknown>> =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : []

const startedPids = (log: string, upstream: string): Array<unknown> =>
  records(log)
    .filter((r) => r['type'] === 'upstream' && r['_tag'] === 'Started' && r['upstream'] === upstream)
    .map((r) => r['pid'])

const reloads = (log: string) => records(log).filter((r) => r['type'] === 'reload')

const said = (r: Record<string, unknown>): { argv: Array<string>; pid: number } =>
  JSON.parse((r['content'] as Array<{ text: string }>)[0]?.text ?? 'null') as { argv: Array<string>; pid: number }

const call = (client: Client, name: string) => client.callTool({ name, arguments: { reason: 'who' } })
// a tool the session is not listed (removed, or hidden by a bare deny) is a JSON-RPC error, as MCP has it
const unknownTool = (client: Client, name: string) =>
  expect(call(client, name)).rejects.toThrow(`there is no tool named "${name}"`)

/** The command over stdio with an SDK client; its stderr collected, its pid for signals. */
const overStdio = async (dir: string, config: unknown, extra: ReadonlyArray<string> = []) => {
  const file = join(dir, 'toolstack.json')
  const log = join(dir, 'toolstack.jsonl')
  write(file, config)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, 'serve', '--config', file, '--log', log, ...extra],
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')))
  const client = new Client({ name: 'host', version: '1' })
  let changes = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++)
  await client.connect(transport)
  cleanups.push(() => client.close())
  const pid = transport.pid as number
  return { client, file, log, pid, stderr: () => stderr, changes: () => changes }
}

describe('toolstack serve reloads its configuration', () => {
  it('SIGHUP: only the upstream whose args changed gets a new process; the host hears list_changed and calls it; a rules change refuses an allowed call', async () => {
    const dir = workspace()
    const g = await overStdio(dir, TWO)
    await g.client.listTools()
    await until(() => startedPids(g.log, 'a').length === 1 && startedPids(g.log, 'b').length === 1)
    const [a, b] = [startedPids(g.log, 'a')[0], startedPids(g.log, 'b')[0]]

    write(g.file, { ...TWO, mcpServers: { a: whoami('one'), b: whoami('three') } })
    process.kill(g.pid, 'SIGHUP')
    await until(() => reloads(g.log).length === 1)
    expect(reloads(g.log)[0]).toMatchObject({ outcome: 'reloaded', restarted: ['b'], kept: ['a'] })
    expect(startedPids(g.log, 'a')).toEqual([a])
    await until(() => startedPids(g.log, 'b').length === 2)
    const b2 = startedPids(g.log, 'b')[1]
    expect(b2).not.toBe(b)
    expect(isAlive(b as number)).toBe(false)
    await until(() => g.changes() > 0)
    expect((await g.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['a_whoami', 'b_whoami'])
    expect(said(await call(g.client, 'b_whoami'))).toMatchObject({ argv: ['three'], pid: b2 })
    expect(said(await call(g.client, 'a_whoami'))).toMatchObject({ argv: ['one'], pid: a })
    await until(() => g.stderr().includes('toolstack serve: reloaded: restarted "b"'))

    expect((await call(g.client, 'a_whoami'))['isError']).toBeFalsy()
    write(g.file, {
      ...TWO,
      mcpServers: { a: whoami('one'), b: whoami('three') },
      rules: [{ tool: '*', decision: 'deny', note: 'closed now' }],
    })
    process.kill(g.pid, 'SIGHUP')
    await until(() => reloads(g.log).length === 2)
    expect(reloads(g.log)[1]).toMatchObject({ outcome: 'reloaded', settings: ['rules'], restarted: [] })
    const refused = await call(g.client, 'a_whoami')
    expect(refused['isError']).toBe(true)
    expect(JSON.stringify(refused['content'])).toContain('closed now')
    expect(startedPids(g.log, 'a')).toEqual([a])
  }, 60_000)

  it('a broken file (not JSON; an unknown member) keeps the running configuration and says why; SIGTERM still stops', async () => {
    const dir = workspace()
    const g = await overStdio(dir, TWO)
    await g.client.listTools()
    await until(() => startedPids(g.log, 'b').length === 1)

    write(g.file, '{ "mcpServers": ')
    process.kill(g.pid, 'SIGHUP')
    await until(() => reloads(g.log).length === 1)
    expect(reloads(g.log)[0]).toMatchObject({ outcome: 'kept' })
    await until(() => /not reloaded, the running configuration is kept: .*toolstack\.json is not JSON/.test(g.stderr()))

    write(g.file, { ...TWO, mcpServer: {}, '\u001b]0;retitled\u0007': 1 })
    process.kill(g.pid, 'SIGHUP')
    await until(() => reloads(g.log).length === 2)
    await until(() => g.stderr().includes('unknown members "mcpServer"'))
    expect(g.stderr()).not.toContain('\u001b')
    expect(g.stderr()).toContain('did you mean "mcpServers" for "mcpServer"?')
    expect(said(await call(g.client, 'b_whoami')).argv).toEqual(['two'])
    expect(startedPids(g.log, 'b')).toHaveLength(1)

    process.kill(g.pid, 'SIGTERM')
    await until(() => !isAlive(g.pid))
  }, 60_000)

  it('an added and a removed upstream; the log is opened again after logrotate moved it', async () => {
    const dir = workspace()
    const g = await overStdio(dir, TWO)
    await g.client.listTools()
    await until(() => startedPids(g.log, 'a').length === 1)
    const a = startedPids(g.log, 'a')[0] as number
    renameSync(g.log, `${g.log}.1`)

    write(g.file, { ...TWO, mcpServers: { b: whoami('two'), c: whoami('new') } })
    process.kill(g.pid, 'SIGHUP')
    await until(() => reloads(g.log).length === 1)
    expect(reloads(g.log)[0]).toMatchObject({ added: ['c'], removed: ['a'], kept: ['b'] })
    expect(reloads(`${g.log}.1`)).toEqual([])
    await until(() => g.stderr().includes('reloaded: started "c"; stopped "a"'))
    await until(() => !isAlive(a))
    await until(() => g.changes() > 0)
    expect((await g.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['b_whoami', 'c_whoami'])
    expect(said(await call(g.client, 'c_whoami')).argv).toEqual(['new'])
    await unknownTool(g.client, 'a_whoami')
  }, 60_000)

  it('--watch: a write is picked up without a signal, also when an editor renames a new file over it', async () => {
    const dir = workspace()
    const g = await overStdio(dir, TWO, ['--watch'])
    await g.client.listTools()
    write(g.file, {
      ...TWO,
      rules: [
        { tool: 'a_*', decision: 'deny' },
        { tool: '*', decision: 'allow' },
      ],
    })
    await until(() => reloads(g.log).length === 1)
    // still listed to this session (it has not listed again): refused by the new deny
    expect((await call(g.client, 'a_whoami'))['isError']).toBe(true)
    write(`${g.file}.tmp`, TWO)
    renameSync(`${g.file}.tmp`, g.file)
    await until(() => reloads(g.log).length === 2)
    expect((await call(g.client, 'a_whoami'))['isError']).toBeFalsy()
    // one reload per write, however many events the write raised
    await new Promise((r) => setTimeout(r, 500))
    expect(reloads(g.log)).toHaveLength(2)
  }, 60_000)
})

describe('toolstack serve --http reloads its configuration', () => {
  it('a session stays open across SIGHUP and is judged by the new rules; a new log path applies; SIGINT still stops', async () => {
    const dir = workspace()
    const file = join(dir, 'toolstack.json')
    write(file, TWO)
    const child: ChildProcess = spawn(process.execPath, [main, 'serve', '--config', file, '--http', '127.0.0.1:0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    cleanups.push(async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await new Promise((r) => child.once('exit', r))
      }
    })
    let stderr = ''
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')))
    await until(() => /listening on (\S+)/.test(stderr))
    const url = /listening on (\S+)/.exec(stderr)?.[1] as string
    const client = new Client({ name: 'host', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    cleanups.push(() => client.close())
    expect((await call(client, 'b_whoami'))['isError']).toBeFalsy()
    // a log named by the new file is opened from the reload on
    const log = join(dir, 'new.jsonl')
    write(file, {
      ...TWO,
      rules: [
        { tool: 'b_*', decision: 'deny' },
        { tool: '*', decision: 'allow' },
      ],
      log,
    })
    child.kill('SIGHUP')
    await until(() => stderr.includes('reloaded: rules, log changed'))
    await until(() => reloads(log).length === 1)
    expect(reloads(log)[0]).toMatchObject({ outcome: 'reloaded', settings: ['rules', 'log'] })
    expect((await call(client, 'b_whoami'))['isError']).toBe(true)
    expect((await call(client, 'a_whoami'))['isError']).toBeFalsy()
    child.kill('SIGINT')
    const code = await new Promise((r) => child.once('exit', r))
    expect(code).toBe(0)
  }, 60_000)
})
