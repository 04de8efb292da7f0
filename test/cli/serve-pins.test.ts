// `toolstack serve` pins its upstreams' definitions in its store: run as a host runs it (the built command, a
// real SDK client answering through elicitation) over an upstream that changes its tools once trusted
// (test/mcp/fixtures/rug-server.mjs). With a file store, across restarts: a grant given before the change asks
// again after it, and the change is said once, on stderr. With two replicas on a real redis-server: one
// replica's grant and pins hold for the other, and the change is said by one of them only.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { startRedis } from '../support/redis.js'
import { until } from '../support/until.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const RUG = join(root, 'test/mcp/fixtures/rug-server.mjs')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

// a workspace: the rug server's phase file, and a configuration asking before each note is written
const workspace = (extra: Record<string, unknown> = {}): { readonly dir: string; readonly config: string } => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-pins-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
  const config = join(dir, 'toolstack.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { rg: { command: process.execPath, args: [RUG, join(dir, 'phase')] } },
      rules: [
        { tool: 'rg_notes_write', decision: 'ask', under: dir },
        { tool: '*', decision: 'allow' },
      ],
      reasons: false,
      listWaitMs: 30_000,
      ...extra,
    }),
  )
  return { dir, config }
}

interface Host {
  readonly client: Client
  readonly asked: Array<string>
}

const answering = (asked: Array<string>): Client => {
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message)
    return { action: 'accept', content: { action: 'always-allow' } } as never
  })
  return client
}

// a host over stdio whose human answers "always allow"; the gateway's stderr is kept
const overStdio = async (args: ReadonlyArray<string>): Promise<Host & { readonly stderr: () => string }> => {
  const asked: Array<string> = []
  const client = answering(asked)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, 'serve', ...args],
    stderr: 'pipe',
  })
  let err = ''
  transport.stderr?.on('data', (b: Buffer) => (err += b.toString()))
  await client.connect(transport)
  cleanups.push(() => client.close())
  return { client, asked, stderr: () => err }
}

const writeNote = (h: Host, dir: string, name: string) =>
  h.client.callTool({ name: 'rg_notes_write', arguments: { path: join(dir, name), content: name } })

const changedLines = (stderr: string): ReadonlyArray<string> =>
  stderr.split('\n').filter((l) => l.startsWith('toolstack: the definition of'))

describe('toolstack serve --store file:PATH pins definitions', () => {
  it('a grant given before a change asks again after it, across restarts; the change is said once, on stderr', async () => {
    const { dir, config } = workspace()
    const store = join(dir, 'store.json')
    const args = ['--config', config, '--store', `file:${store}`]

    const first = await overStdio(args)
    expect((await writeNote(first, dir, 'a.txt')).isError).toBeFalsy()
    expect(first.asked).toHaveLength(1)
    await first.client.close()
    const kept = JSON.parse(readFileSync(store, 'utf8')) as {
      grants: Array<Record<string, unknown>>
      pins: Array<Record<string, unknown>>
    }
    const pinned = kept.pins.find((p) => p['tool'] === 'rg_notes_write')
    expect(kept.grants).toEqual([
      { tool: 'rg_notes_write', decision: 'allow', under: dir, definition: pinned?.['hash'] },
    ])
    expect(kept.pins.map((p) => p['tool']).sort()).toEqual([
      'rg_fetch_page',
      'rg_notes_write',
      'rg_rug',
      'rg_search',
      'rg_stats',
    ])
    expect(changedLines(first.stderr())).toEqual([])

    // the server changes while the gateway is down
    writeFileSync(join(dir, 'phase'), '2')
    const second = await overStdio(args)
    await second.client.listTools()
    expect((await writeNote(second, dir, 'b.txt')).isError).toBeFalsy()
    expect(second.asked).toHaveLength(1)
    expect(second.asked[0]).toContain('Asked again: "always" was answered for an earlier definition of this tool')
    expect(second.asked[0]).toContain('schema: keys added: mode')
    await until(() => changedLines(second.stderr()).length === 4)
    const said = changedLines(second.stderr())
    expect(said.filter((l) => l.includes('"rg_notes_write" changed since it was pinned'))).toEqual([
      expect.stringContaining('served as it comes: schema: keys added: mode'),
    ])
    expect(said.filter((l) => l.includes('"rg_get_page" is new'))).toEqual([
      expect.stringContaining('renamed from "rg_fetch_page"'),
    ])
    expect(said.filter((l) => l.includes('"rg_helper"'))).toEqual([expect.stringContaining('is flagged: ')])
    expect(said.filter((l) => l.includes('"rg_search"'))).toHaveLength(1)
    await second.client.close()

    // a third start: the change is known, said no more; the new grant holds for the new definition
    const third = await overStdio(args)
    await third.client.listTools()
    expect((await writeNote(third, dir, 'c.txt')).isError).toBeFalsy()
    expect(third.asked).toHaveLength(0)
    await new Promise((r) => setTimeout(r, 300))
    expect(changedLines(third.stderr())).toEqual([])
  }, 90_000)
})

interface Replica {
  readonly child: ChildProcess
  readonly url: string
  readonly records: () => Array<Record<string, unknown>>
}

const replica = async (dir: string, config: string, name: string, store: string): Promise<Replica> => {
  const log = join(dir, `${name}.jsonl`)
  const child = spawn(
    process.execPath,
    [main, 'serve', '--config', config, '--http', '127.0.0.1:0', '--store', store, '--log', log],
    { env: { ...process.env, TOOLSTACK_TOKEN: 's3cret' }, stdio: ['ignore', 'ignore', 'pipe'] },
  )
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  )
  let err = ''
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()))
  await until(() => /listening on (\S+)/.test(err) || child.exitCode !== null, 30_000)
  expect(child.exitCode, err).toBeNull()
  return {
    child,
    url: /listening on (\S+)/.exec(err)?.[1] ?? '',
    records: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
  }
}

const overHttp = async (url: string): Promise<Host> => {
  const asked: Array<string> = []
  const client = answering(asked)
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer s3cret' } } }),
  )
  cleanups.push(() => client.close())
  return { client, asked }
}

describe('toolstack serve --store redis://: two replicas share pins', () => {
  it("one replica's grant asks again on the other after the change; the change is said by one replica only", async () => {
    const redis = await startRedis()
    cleanups.push(() => redis.stop())
    const { dir, config } = workspace()
    const store = `${redis.url}?prefix=pins:`
    const [ra, rb] = await Promise.all([replica(dir, config, 'a', store), replica(dir, config, 'b', store)])
    const a = await overHttp(ra.url)
    const b = await overHttp(rb.url)
    await a.client.listTools()
    await b.client.listTools()
    expect((await writeNote(a, dir, 'a.txt')).isError).toBeFalsy()
    expect(a.asked).toHaveLength(1)
    await new Promise((r) => setTimeout(r, 300))
    expect((await writeNote(b, dir, 'b.txt')).isError).toBeFalsy()
    expect(b.asked).toHaveLength(0)

    // the server changes (both replicas' upstreams read one phase file); each replica lists it
    await a.client.callTool({ name: 'rg_rug', arguments: {} })
    await a.client.listTools()
    await b.client.listTools()
    expect((await writeNote(b, dir, 'c.txt')).isError).toBeFalsy()
    expect(b.asked).toHaveLength(1)
    expect(b.asked[0]).toContain('Asked again')
    expect(b.asked[0]).toContain('schema: keys added: mode')
    // B's answer was for the new definition: it holds on A
    await new Promise((r) => setTimeout(r, 300))
    expect((await writeNote(a, dir, 'd.txt')).isError).toBeFalsy()
    expect(a.asked).toHaveLength(1)

    const changes = () =>
      [...ra.records(), ...rb.records()].filter((r) => r['type'] === 'definition' && r['tool'] === 'rg_notes_write')
    await until(() => changes().length >= 1)
    await a.client.listTools()
    await b.client.listTools()
    await new Promise((r) => setTimeout(r, 300))
    expect(changes()).toHaveLength(1)
    expect(changes()[0]).toMatchObject({ _tag: 'DefinitionChanged', upstream: 'rg', change: { added: ['mode'] } })
  }, 90_000)
})
