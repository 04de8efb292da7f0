// A Messages API tool loop with the Anthropic SDK over a toolstack stack on the reference filesystem MCP
// server. The client is the real `new Anthropic()`, pointed at a stand-in server that answers with recorded
// responses (no network, no key): drop `baseURL` and set ANTHROPIC_API_KEY, and nothing else changes. The
// client's middleware and the stack share one audit memory: each (tool, key) pair is said once.
// Run with: npm run example:anthropic
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages'
import { pipe } from 'fp-ts/lib/function.js'
import {
  formatWarning,
  readOnlyRules,
  sharedUnknownKeyAudit,
  withPolicy,
  withReasons,
  withUnknownKeyAudit,
} from 'toolstack'
import { connectStdio, fromMcpClient } from 'toolstack/mcp'
import { executeToolUses, toAnthropicTools, unknownKeyAuditMiddleware } from 'toolstack/anthropic'
import { recordedApi } from './support/recorded-api.js'

// the model's three turns: a read with a mistyped key (beside a web search the API ran itself), a write, an answer
const recorded = (dir: string): ReadonlyArray<unknown> => {
  const message = (id: string, content: ReadonlyArray<unknown>, stop_reason: string) => ({
    id,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  })
  const direct = { type: 'direct' }
  return [
    message(
      'msg_1',
      [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', caller: direct, input: { query: 'demo day' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', caller: direct, content: [] },
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'read_text_file',
          caller: direct,
          input: { path: join(dir, 'notes.txt'), haed: 1, reason: 'the user asked when the demo is' },
        },
      ],
      'tool_use',
    ),
    message(
      'msg_2',
      [
        {
          type: 'tool_use',
          id: 'toolu_2',
          name: 'write_file',
          caller: direct,
          input: { path: join(dir, 'notes.txt'), content: '' },
        },
      ],
      'tool_use',
    ),
    message('msg_3', [{ type: 'text', text: 'The demo is on 2 December.', citations: null }], 'end_turn'),
  ]
}

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-anthropic-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  const answers = [...recorded(dir)]
  const api = await recordedApi(() => ({ json: answers.shift() }))
  const show = (s: string): string => s.replaceAll(dir, '<dir>').replace(/\n/g, ' | ')
  try {
    // one memory for the client's middleware and the stack (the line ends with [via …])
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => console.log(`  ⚠ ${show(formatWarning(w))}`) })
    const heard = unknownKeyAuditMiddleware(audit)
    const client = new Anthropic({ apiKey: 'recorded', baseURL: api.url, maxRetries: 0, middleware: [heard] })
    const stack = pipe(
      fromMcpClient(fs.client),
      withReasons(),
      withUnknownKeyAudit(audit),
      withPolicy({
        rules: [
          ...readOnlyRules(''),
          { tool: 'write_file', decision: 'deny', under: dir, note: 'this agent only reads' },
        ],
      }),
    )
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error(listed.left.message)
    const tools = toAnthropicTools(listed.right)

    const messages: Array<MessageParam> = [{ role: 'user', content: 'When is the demo?' }]
    for (let turn = 1; turn <= 4; turn++) {
      const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools })
      messages.push({ role: 'assistant', content: message.content })
      if (message.stop_reason !== 'tool_use') {
        console.log(`assistant: ${message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')}`)
        break
      }
      for (const b of message.content)
        if (b.type === 'tool_use') console.log(`model → ${b.id} ${b.name} ${show(JSON.stringify(b.input))}`)
        else if (b.type === 'server_tool_use') console.log(`model ran ${b.name} on the API's side: left alone`)
      // one tool_result per tool_use, in order; the web search's blocks are the API's own
      const results = await executeToolUses(stack)(message.content)()
      if (results._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')
      for (const r of results.right)
        console.log(`model ← ${r.tool_use_id}${r.is_error === true ? ' error' : ''}: ${show(r.content).slice(0, 100)}`)
      messages.push({ role: 'user', content: results.right })
    }
    console.log(`stats: ${JSON.stringify(heard.stats())}`)
  } finally {
    await api.close()
    await fs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
