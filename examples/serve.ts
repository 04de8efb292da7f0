// `npm run demo:serve`: `toolstack serve` as a host meets it, offline, in seconds.
//
// It writes a gateway configuration for two real MCP servers (the reference
// filesystem server on a temporary folder, and server-everything), starts
// `toolstack serve --config FILE` as a host would (a child process over stdio), and
// plays the host's part with the MCP SDK's own Client, which declares the
// elicitation capability so the gateway can ask its "human" (here: a scripted answer).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const require = createRequire(import.meta.url)
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
// the command from its sources (no build needed); installed, it is just `toolstack`
const TOOLSTACK = ['--import', pathToFileURL(require.resolve('tsx')).href, join(root, 'src/cli/main.ts')]

const shown = (content: unknown): string =>
  (Array.isArray(content) ? content : [])
    .map((b: { type?: string; text?: string; mimeType?: string }) =>
      b.type === 'text' ? (b.text ?? '') : `[${b.type ?? '?'} ${b.mimeType ?? ''}]`,
    )
    .join(' ')
    .replaceAll('\n', ' ⏎ ')
    .slice(0, 160)

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-serve-demo-'))
  writeFileSync(join(dir, 'notes.md'), '1. ship the gateway\n2. write the docs\n3. tag 0.1.0\n')
  const log = join(dir, 'toolstack.jsonl')
  const config = join(dir, 'toolstack.json')
  // the mcpServers shape hosts use, each server given a prefix, and the policy's rules
  writeFileSync(
    config,
    JSON.stringify(
      {
        mcpServers: {
          fs: { command: process.execPath, args: [FILESYSTEM, dir] },
          ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        },
        rules: [
          { tool: 'fs_read_text_file', decision: 'allow' },
          { tool: 'fs_list_directory', decision: 'allow' },
          { tool: 'ev_*', decision: 'allow' },
          { tool: 'fs_write_file', decision: 'ask', under: dir },
          { tool: 'fs_move_file', decision: 'deny', note: 'nothing moves here' },
        ],
        // how long the gateway waits for a slow upstream before it serves what is ready (2 s by default); a
        // busy machine can take longer to start server-everything, and this demo lists once
        listWaitMs: 15_000,
        log,
      },
      null,
      2,
    ),
  )
  console.log(`config ${config}\n`)

  const host = new Client({ name: 'demo-host', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  // the host's human: shown the question, answers "allow once"
  host.setRequestHandler(ElicitRequestSchema, (request) => {
    console.log(`  host asks its human:\n    ${request.params.message.replaceAll('\n', '\n    ')}\n  human: allow once`)
    return { action: 'accept', content: { action: 'allow-once' } }
  })
  await host.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...TOOLSTACK, 'serve', '--config', config],
      stderr: 'inherit',
    }),
  )
  try {
    const { tools } = await host.listTools()
    const withReason = tools.filter((t) => Object.hasOwn(t.inputSchema.properties ?? {}, 'reason')).length
    console.log(
      `tools/list: ${tools.length} tools, ${tools.filter((t) => t.name.startsWith('fs_')).length} fs_… and ${tools.filter((t) => t.name.startsWith('ev_')).length} ev_…; ${withReason} of them ask for a reason\n`,
    )

    const call = async (name: string, args: Record<string, unknown>): Promise<void> => {
      console.log(`→ ${name} ${JSON.stringify(args).replaceAll(dir, '…')}`)
      const r = await host.callTool({ name, arguments: args })
      console.log(`  ${r.isError === true ? '✗' : '✓'} ${shown(r.content).replaceAll(dir, '…')}\n`)
    }
    await call('fs_read_text_file', { path: join(dir, 'notes.md'), reason: 'to see what is left' })
    // the incident: a generation cut inside "head":2 and closed into valid JSON
    await call('fs_read_text_file', { path: join(dir, 'notes.md'), haed: 2, reason: 'the first two items' })
    await call('fs_write_file', {
      path: join(dir, 'summary.md'),
      content: 'Gateway ships Friday.\n',
      reason: 'the summary asked for',
    })
    await call('fs_move_file', { source: join(dir, 'notes.md'), destination: join(dir, 'old.md'), reason: 'tidy up' })
    await call('ev_get-tiny-image', { reason: 'a picture' })
  } finally {
    await host.close()
  }

  console.log(`the log (${log.replace(dir, '…')}), JSON Lines:`)
  for (const line of readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')) {
    const r = JSON.parse(line) as Record<string, unknown>
    const what =
      r['type'] === 'warning'
        ? `warning   ${String(r['tool'])} carried ${JSON.stringify(r['unknownKeys'])} (suggestions ${JSON.stringify(r['suggestions'])})`
        : r['type'] === 'decision'
          ? `decision  ${String(r['tool'])}: ${String(r['outcome'])} by ${String(r['by'])}`
          : r['type'] === 'upstream'
            ? `upstream  ${String(r['upstream'])} ${String(r['_tag'])}${r['tools'] === undefined ? '' : `, ${String(r['tools'])} tools`}`
            : String(r['type'])
    console.log(`  ${String(r['time']).slice(11, 23)} ${what}`)
  }
  rmSync(dir, { recursive: true, force: true })
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
