// A Claude Agent SDK session, offline: query() starts the SDK's own Claude Code CLI, pointed
// (ANTHROPIC_BASE_URL) at a stand-in server that answers with recorded Messages API turns (no network, no key:
// drop ANTHROPIC_BASE_URL and set ANTHROPIC_API_KEY, and nothing else changes). The session has an in-process
// MCP server of the host's own tools and the reference filesystem server over stdio. toolstack's audit hears
// each call's raw input in the PreToolUse hook; its policy answers the SDK's permission decisions.
// Run with: npm run example:claude-agent
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSdkMcpServer, query, tool } from '@anthropic-ai/claude-agent-sdk'
import { z } from 'zod'
import { formatWarning } from 'toolstack'
import { claudeAgentAudit, claudeAgentPolicy } from 'toolstack/claude-agent'
import { assistantTurns, messageEvents, recordedApi } from './support/recorded-api.js'

// the model's turns: a search with a mistyped nested key, then a write and a read at once, then the answer
const recorded = (dir: string) => {
  const message = (id: string, content: ReadonlyArray<Record<string, unknown>>, stop_reason: string) => ({
    id,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  })
  const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input })
  return [
    message('msg_1', [use('toolu_1', 'mcp__notes__search', { query: 'demo', opts: { limmit: 2 } })], 'tool_use'),
    message(
      'msg_2',
      [
        use('toolu_2', 'mcp__notes__write', { path: '/srv/notes/summary.md', text: 'Demo on 2 December.' }),
        use('toolu_3', 'mcp__fs__read_text_file', { path: join(dir, 'notes.txt'), haed: 1 }),
      ],
      'tool_use',
    ),
    message('msg_3', [{ type: 'text', text: 'The demo is on 2 December.' }], 'end_turn'),
  ] as const
}

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-claude-agent-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const show = (s: string): string => s.replaceAll(dir, '<dir>')
  const turns = recorded(dir)
  // the turn the CLI is at is the number of assistant messages it sends back
  const api = await recordedApi((_, body) => {
    const [search, pair, answer] = turns
    const turn = assistantTurns(body)
    return { events: messageEvents(turn === 0 ? search : turn === 1 ? pair : answer) }
  })
  const filesystem = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  try {
    const notes = createSdkMcpServer({
      name: 'notes',
      tools: [
        tool(
          'search',
          'Searches the notes',
          { query: z.string(), opts: z.object({ limit: z.number() }).partial().optional() },
          async (args) => {
            console.log(`  notes.search received ${JSON.stringify(args)}`)
            return { content: [{ type: 'text', text: 'notes.txt: Demo on 2 December.' }] }
          },
        ),
        tool('write', 'Writes a note', { path: z.string(), text: z.string() }, async () => ({
          content: [{ type: 'text', text: 'written' }],
        })),
      ],
    })
    // the audit lists the servers (the stdio one is started once more for it) and hears each call's raw input
    const audit = await claudeAgentAudit({
      mcpServers: {
        notes,
        fs: { type: 'stdio', command: process.execPath, args: [filesystem, dir], alwaysLoad: true },
      },
      onWarn: (w) => console.log(`  ⚠ ${show(formatWarning(w))}`),
    })
    // the policy answers the SDK's permission decisions; what it asks about goes to the host's own prompt
    const policy = claudeAgentPolicy({
      rules: [
        { tool: 'mcp__notes__search', decision: 'allow' },
        { tool: 'mcp__notes__write', decision: 'deny', under: '/srv/notes', note: 'the notes are read-only' },
        { tool: 'mcp__fs__*', decision: 'ask', under: dir, note: 'reads of the workspace need a human' },
      ],
      canUseTool: async (name, input, { decisionReason }) => {
        console.log(`  host asked: ${name} (${show(decisionReason ?? '')}): yes`)
        return { behavior: 'allow', updatedInput: input }
      },
    })
    for await (const m of query({
      prompt: 'When is the demo?',
      options: {
        cwd: dir,
        persistSession: false,
        settingSources: [],
        mcpServers: audit.mcpServers,
        hooks: { PreToolUse: [audit.preToolUse, policy.preToolUse] },
        canUseTool: policy.canUseTool,
        env: {
          ...process.env,
          ANTHROPIC_BASE_URL: api.url,
          ANTHROPIC_API_KEY: 'recorded',
          CLAUDE_CONFIG_DIR: join(dir, '.claude'),
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    })) {
      if (m.type === 'user' && Array.isArray(m.message.content))
        for (const b of m.message.content)
          if (typeof b === 'object' && b.type === 'tool_result') {
            const text =
              typeof b.content === 'string'
                ? b.content
                : (b.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('')
            console.log(
              `model ← ${b.tool_use_id}${b.is_error === true ? ' error' : ''}: ${show(text).replace(/\n/g, ' | ').slice(0, 110)}`,
            )
          }
      if (m.type === 'result' && m.subtype === 'success') console.log(`assistant: ${m.result}`)
    }
    console.log(`stats: ${JSON.stringify(audit.stats())}`)
  } finally {
    await api.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
