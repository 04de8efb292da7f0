// Two `toolstack serve --http` replicas sharing one real redis-server, started with the command line
// docs/fleet.md shows, each with a real SDK client over Streamable HTTP: what one replica's human answered
// and what one replica said holds for the other; Redis dies and comes back under them.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The replicas' command line as docs/fleet.md shows it: `serve` and its options, after `toolstack`. */
const documented = (): ReadonlyArray<string> => {
  const line = /^toolstack (serve .*)$/m.exec(blocksOf('docs/fleet.md', 'sh')[0] ?? '')?.[1] ?? ''
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '')
}

interface Replica {
  readonly child: ChildProcess
  readonly url: string
  readonly stderr: () => string
  readonly records: () => Array<Record<string, unknown>>
}

/** A replica: the page's command line, its config, listen address, store host and log pointed at this test's. */
const replica = async (dir: string, name: string, store: string): Promise<Replica> => {
  const log = join(dir, `${name}.jsonl`)
  const args = documented().map((a, i, all) => {
    const option = all[i - 1]
    if (option === '--config') return join(dir, 'toolstack.json')
    if (option === '--http') return '127.0.0.1:0'
    if (option === '--store') return `${store}${new URL(a).pathname}${new URL(a).search}`
    return a
  })
  const child = spawn(process.execPath, [main, ...args, '--log', log], {
    env: { ...process.env, TOOLSTACK_TOKEN: 's3cret' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
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
    stderr: () => err,
    records: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
  }
}

/** A host over Streamable HTTP whose human answers each question with `answer` and counts them. */
const host = async (url: string, answer: () => string): Promise<{ client: Client; asked: () => number }> => {
  let asked = 0
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked++
    return { action: 'accept', content: { action: answer() } } as never
  })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer s3cret' } } }),
  )
  cleanups.push(() => client.close())
  return { client, asked: () => asked }
}

const ok = (r: Record<string, unknown>): boolean => r['isError'] !== true

describe('toolstack serve --http --store redis://: two replicas sharing one Redis', () => {
  it('share grants, pairs said and stats; keep answering every call while Redis is down, saying so once; share again when it is back', async () => {
    const redis = await startRedis()
    cleanups.push(() => redis.stop())
    const dir = mkdtempSync(join(tmpdir(), 'toolstack-fleet-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
    writeFileSync(join(dir, 'notes.txt'), 'one\n')
    writeFileSync(
      join(dir, 'toolstack.json'),
      JSON.stringify({
        mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } },
        rules: [
          { tool: 'fs_read_text_file', decision: 'allow' },
          { tool: 'fs_write_file', decision: 'ask', under: dir },
          { tool: 'fs_create_directory', decision: 'ask', under: dir },
        ],
        listWaitMs: 30_000,
      }),
    )
    const [ra, rb] = await Promise.all([replica(dir, 'a', redis.url), replica(dir, 'b', redis.url)])
    const a = await host(ra.url, () => 'always-allow')
    const b = await host(rb.url, () => 'always-allow')
    const write = (h: Client, name: string) =>
      h.callTool({ name: 'fs_write_file', arguments: { path: join(dir, name), content: name } })
    const read = (h: Client, extra: Record<string, unknown> = {}) =>
      h.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), ...extra } })

    // a grant answered through A is used by B without a question
    expect(ok(await write(a.client, 'a.txt'))).toBe(true)
    expect(a.asked()).toBe(1)
    await new Promise((r) => setTimeout(r, 300))
    expect(ok(await write(b.client, 'b.txt'))).toBe(true)
    expect(b.asked()).toBe(0)

    // a pair warned by A is not warned by B
    const warned = (r: Replica) =>
      r.records().filter((x) => x['type'] === 'warning' && String(x['unknownKeys']) === 'ffset')
    expect(ok(await read(a.client, { ffset: 1 }))).toBe(true)
    await until(() => warned(ra).length === 1)
    expect(ok(await read(b.client, { ffset: 2 }))).toBe(true)
    expect(ok(await read(b.client, { ffset: 3 }))).toBe(true)
    await new Promise((r) => setTimeout(r, 300))
    expect(warned(rb)).toEqual([])

    // stats equal on both: each replica's /metrics shows the store's sum, both replicas' calls with the key
    const calls = async (r: Replica): Promise<number> => {
      const body = await (
        await fetch(r.url.replace('/mcp', '/metrics'), { headers: { Authorization: 'Bearer s3cret' } })
      ).text()
      return Number(/^toolstack_undeclared_key_calls\{tool="fs_read_text_file",key="ffset"\} (\d+)$/m.exec(body)?.[1])
    }
    await until(async () => (await calls(ra)) === 3 && (await calls(rb)) === 3)

    // Redis dies: every call is answered, each replica says so once, neither crashes
    await redis.kill()
    for (let i = 0; i < 5; i++) {
      expect(ok(await read(a.client))).toBe(true)
      expect(ok(await read(b.client, { ffset: i }))).toBe(true)
      expect(ok(await write(a.client, `a${i}.txt`))).toBe(true)
    }
    // B's human answers "always" while Redis is down
    expect(ok(await b.client.callTool({ name: 'fs_create_directory', arguments: { path: join(dir, 'made') } }))).toBe(
      true,
    )
    expect(b.asked()).toBe(1)
    // with a log, a notice is a diagnostic record in it
    const said = (r: Replica, what: RegExp) =>
      r.records().filter((x) => x['type'] === 'diagnostic' && what.test(String(x['message']))).length
    const unreachable = (r: Replica) => said(r, /^the store redis:\/\/127\.0\.0\.1:\d+\/0 cannot be reached/)
    await until(() => unreachable(ra) === 1 && unreachable(rb) === 1)
    await new Promise((r) => setTimeout(r, 1_000))
    expect([unreachable(ra), unreachable(rb)]).toEqual([1, 1])
    expect([isAlive(ra.child.pid as number), isAlive(rb.child.pid as number)]).toEqual([true, true])

    // Redis is back: shared again; B's grant made while it was down reaches A
    await redis.restart()
    const back = (r: Replica) => said(r, /answers again/)
    await until(() => back(ra) === 1 && back(rb) === 1)
    expect(ok(await a.client.callTool({ name: 'fs_create_directory', arguments: { path: join(dir, 'made2') } }))).toBe(
      true,
    )
    expect(a.asked()).toBe(1)
    // and B's calls with the key while it was down are the sum both show: this Redis keeps nothing, so it came
    // back empty, and what each replica had not written is all it holds
    await until(async () => (await calls(ra)) === 5 && (await calls(rb)) === 5).catch(async (e: unknown) => {
      throw new Error(`${String(e)}: ${await calls(ra)} and ${await calls(rb)}`)
    })
    expect(ra.child.exitCode).toBeNull()
    expect(rb.child.exitCode).toBeNull()
  }, 120_000)
})
