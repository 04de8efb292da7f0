// A Responses API tool loop with the openai SDK over a toolstack stack on the reference
// filesystem MCP server. The client is the real `new OpenAI()`, its `fetch` answered
// with recorded responses (no network, no key): drop the `fetch` option and set
// OPENAI_API_KEY, and nothing else changes.
// Run with: npm run example:openai-responses
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import { pipe } from 'fp-ts/lib/function.js'
import { formatWarning, readOnlyRules, withPolicy, withReasons, withUnknownKeyAudit } from 'toolstack'
import { connectStdio, fromMcpClient } from 'toolstack/mcp'
import {
  fromResponsesCalls,
  toFunctionCallOutputs,
  toResponsesInput,
  toResponsesTools,
  unservedCustomCallOutputs,
} from 'toolstack/openai'

// two recorded responses: the model's calls, then its answer
const recorded = (dir: string): Array<unknown> => {
  const base = {
    object: 'response',
    created_at: 0,
    model: 'gpt-5',
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
  }
  const call = (n: number, name: string, args: unknown) => ({
    type: 'function_call',
    id: `fc_${n}`,
    call_id: `call_${n}`,
    name,
    arguments: JSON.stringify(args),
    status: 'completed',
  })
  return [
    {
      ...base,
      id: 'resp_1',
      output: [
        call(1, 'read_text_file', { path: join(dir, 'notes.txt'), haed: 1, reason: 'the user asked when the demo is' }),
        call(2, 'write_file', { path: join(dir, 'notes.txt'), content: '' }),
      ],
    },
    {
      ...base,
      id: 'resp_2',
      output: [
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'The demo is on 2 December.', annotations: [] }],
        },
      ],
    },
  ]
}

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-responses-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  const show = (s: string): string => s.replaceAll(dir, '<dir>').replace(/\n/g, ' | ')
  try {
    const answers = recorded(dir)
    const client = new OpenAI({
      apiKey: 'recorded',
      maxRetries: 0,
      fetch: async () =>
        new Response(JSON.stringify(answers.shift()), { status: 200, headers: { 'content-type': 'application/json' } }),
    })
    const stack = pipe(
      fromMcpClient(fs.client),
      withReasons(),
      withUnknownKeyAudit({ onWarn: (w) => console.log(`  ⚠ ${show(formatWarning(w))}`) }),
      withPolicy({
        rules: [
          ...readOnlyRules(''),
          { tool: 'write_file', decision: 'deny', under: dir, note: 'this agent only reads' },
        ],
      }),
    )
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error(listed.left.message)
    // strict: false, so a key the model invents reaches the stack, where the audit hears it
    const tools = toResponsesTools(listed.right, { strict: false })

    const input: Array<ResponseInputItem> = [{ role: 'user', content: 'When is the demo?' }]
    for (let turn = 1; turn <= 4; turn++) {
      const response = await client.responses.create({ model: 'gpt-5', input, tools })
      const calls = fromResponsesCalls(response.output)
      // a custom (free-text) tool call is answered, not run: toolstack serves function tools
      const unserved = unservedCustomCallOutputs(response.output)
      if (calls.length === 0 && unserved.length === 0) {
        console.log(`assistant: ${response.output_text}`)
        break
      }
      for (const c of calls) console.log(`model → ${c.id} ${c.function.name} ${show(String(c.function.arguments))}`)
      const results = await stack.executeToolCalls(calls)()
      if (results._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')
      const outputs = toFunctionCallOutputs(results.right)
      for (const o of outputs) console.log(`model ← ${o.call_id}: ${show(o.output).slice(0, 120)}`)
      // the output items go back as they came, then the outputs that answer their calls
      input.push(...toResponsesInput(response.output), ...outputs, ...unserved)
    }
  } finally {
    await fs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
