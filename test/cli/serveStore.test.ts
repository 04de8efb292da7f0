// `toolstack serve --store file:PATH`, run as a host runs it: the built command, the reference filesystem
// server, a real SDK Client over stdio answering the question through elicitation.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const require = createRequire(import.meta.url)
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const workspace = (): { readonly dir: string; readonly config: string } => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-store-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
  const config = join(dir, 'toolstack.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } },
      rules: [{ tool: 'fs_write_file', decision: 'ask', under: dir }],
      log: join(dir, 'toolstack.jsonl'),
      listWaitMs: 30_000,
    }),
  )
  return { dir, config }
}

// a host over stdio whose human answers "always allow", counting the questions
const overStdio = async (args: ReadonlyArray<string>) => {
  const asked: Array<string> = []
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message)
    return { action: 'accept', content: { action: 'always-allow' } } as never
  })
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [main, 'serve', ...args], stderr: 'ignore' }),
  )
  cleanups.push(() => client.close())
  return { client, asked }
}

describe('toolstack serve --store file:PATH', () => {
  it('an "always" answer is written to the file, and after a restart the same call is not asked about', async () => {
    const { dir, config } = workspace()
    const grants = join(dir, 'grants.json')
    // the command line docs/serve.md shows, its paths pointed at the workspace
    const line = /^toolstack serve (.*--store .*?)\s+#/m.exec(readFileSync(join(root, 'docs/serve.md'), 'utf8'))?.[1]
    const args = (line ?? '')
      .split(/\s+/)
      .map((a) => a.replace('toolstack.json', config).replace('/var/lib/toolstack/grants.json', grants))
    expect(args).toEqual(['--config', config, '--store', `file:${grants}`])
    const first = await overStdio(args)
    const write = (client: Client, name: string) =>
      client.callTool({ name: 'fs_write_file', arguments: { path: join(dir, name), content: name } })
    expect((await write(first.client, 'a.txt')).isError).toBeFalsy()
    expect(first.asked).toHaveLength(1)
    // the host goes: the gateway writes what is pending and stops
    await first.client.close()
    const written = JSON.parse(readFileSync(grants, 'utf8')) as {
      version: number
      grants: ReadonlyArray<Record<string, unknown>>
      pins: ReadonlyArray<Record<string, unknown>>
    }
    // the grant keeps the definition it was given under: the pin of fs_write_file
    const pinned = written.pins.find((p) => p['tool'] === 'fs_write_file')?.['hash']
    expect(pinned).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(written.grants).toEqual([{ tool: 'fs_write_file', decision: 'allow', under: dir, definition: pinned }])
    // docs/serve.md shows this very file up to its pins, its folder as /srv/project and the hash cut
    const shown = /^## Store\n[\s\S]*?^```json\n([\s\S]*?)^```$/m.exec(
      readFileSync(join(root, 'docs/serve.md'), 'utf8'),
    )
    const upToPins = JSON.stringify({ version: written.version, grants: written.grants }, null, 2) + '\n'
    expect(upToPins.replaceAll(JSON.stringify(dir), '"/srv/project"').replace(String(pinned), 'sha256:…')).toBe(
      shown?.[1],
    )
    expect(readdirSync(dir).filter((f) => f.startsWith('.') || f.endsWith('.lock'))).toEqual([])
    const second = await overStdio(args)
    expect((await write(second.client, 'b.txt')).isError).toBeFalsy()
    expect(second.asked).toHaveLength(0)
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('b.txt')
  }, 60_000)

  it('a truncated file is refused at start with its path named, exit 2, and left as it is', () => {
    const { dir, config } = workspace()
    const grants = join(dir, 'grants.json')
    const truncated = '{\n  "version": 1,\n  "grants": [\n    {\n      "tool": "fs_wr'
    writeFileSync(grants, truncated)
    const run = spawnSync(process.execPath, [main, 'serve', '--config', config, '--store', `file:${grants}`], {
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain(`toolstack serve: the store ${JSON.stringify(grants)} cannot be read: it is not JSON`)
    expect(readFileSync(grants, 'utf8')).toBe(truncated)
    // nothing was started, so nothing was logged
    expect(readdirSync(dir).sort()).toEqual(['grants.json', 'toolstack.json', 'toolstack.jsonl'].sort())
  })

  it('a bad --store is refused before anything starts', () => {
    const { config } = workspace()
    const run = spawnSync(process.execPath, [main, 'serve', '--config', config, '--store', 'sqlite:x'], {
      input: '',
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain('toolstack serve: ')
    expect(run.stderr).toContain('store must be a store: "memory", "file:PATH", or "redis://HOST:PORT"')
  })
})
