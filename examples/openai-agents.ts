// The unknown-key alarm inside the OpenAI Agents SDK: run() over an Agent whose tools
// are a toolstack stack on the reference filesystem MCP server, the user's own zod tool,
// and the reference memory MCP server that the SDK runs itself (mcpServers); one line,
// auditAgent(agent), hears the zod tool and the SDK's MCP tools, the stack hears its own;
// one sharedUnknownKeyAudit, so each pair is said once, naming the layer that heard it.
// Each warning is also a custom span in the run's trace, under its tool call: a trace
// processor of our own prints them (in place of the SDK's exporter, so nothing is sent).
// The model is the SDK's ScriptedModel (no network, no key); give the Agent a real model
// and nothing else changes.
// Run with: npm run example:openai-agents
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, MCPServerStdio, run, setTraceProcessors, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { pipe } from 'fp-ts/lib/function.js'
import { z } from 'zod'
import {
  formatWarning,
  readOnlyRules,
  sharedUnknownKeyAudit,
  withPolicy,
  withReasons,
  withUnknownKeyAudit,
} from 'toolstack'
import { connectStdio, fromMcpClient } from 'toolstack/mcp'
import { auditAgent, toAgentsTools } from 'toolstack/openai-agents'

// the run's trace, seen by this processor only (no exporter): the warnings' custom spans, printed as they end,
// with the function span they are in; tracing on even under NODE_ENV=test, where the SDK turns it off
setTracingDisabled(false)
const functionSpans = new Map<string, string>()
setTraceProcessors([
  {
    onSpanStart: async (span) => {
      if (span.spanData.type === 'function') functionSpans.set(span.spanId, span.spanData.name)
    },
    onSpanEnd: async (span) => {
      const d = span.spanData
      if (d.type === 'custom' && d.name === 'toolstack.unknown_key')
        console.log(
          `  trace: ${d.name} in function span ${functionSpans.get(span.parentId ?? '')}: ${JSON.stringify(d.data)}`,
        )
    },
    onTraceStart: async () => {},
    onTraceEnd: async () => {},
    shutdown: async () => {},
    forceFlush: async () => {},
  },
])

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-agents-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const resolve = createRequire(import.meta.url).resolve
  const server = resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  // an MCP server the SDK lists and calls itself: toolstack sees its calls only through the run's hooks
  const memory = new MCPServerStdio({
    command: process.execPath,
    args: [resolve('@modelcontextprotocol/server-memory/dist/index.js')],
    env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
    // the SDK's 5 s for each request is short for a process starting on a busy machine
    timeout: 30_000,
  })
  const show = (s: string): string => s.replaceAll(dir, '<dir>').replace(/\n/g, ' | ')
  try {
    await memory.connect()
    // one memory for the stack and the run's hook: each pair said once, the line ending [via <layer>]
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => console.log(`  ⚠ ${show(formatWarning(w))}`) })

    // 1. a toolstack stack as the SDK's function tools (strict: false, raw arguments to the stack)
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
    // 2. the user's own zod tool: auditAgent hears its raw arguments before zod strips what it does not declare
    const summarise = tool({
      name: 'summarise',
      description: 'Summarises a text in a few words',
      parameters: z.object({ text: z.string(), words: z.number().nullable() }),
      execute: async ({ text, words }) =>
        `${text
          .split(/\s+/)
          .slice(0, words ?? 3)
          .join(' ')}…`,
    })

    const calls = [
      functionCall(
        'read_text_file',
        JSON.stringify({ path: join(dir, 'notes.txt'), haed: 1, reason: 'the user asked when the demo is' }),
        { callId: 'call_1' },
      ),
      functionCall('summarise', '{"text":"Ship the adapters on Friday","words":null,"wrods":2}', { callId: 'call_2' }),
      functionCall('write_file', JSON.stringify({ path: join(dir, 'notes.txt'), content: '' }), { callId: 'call_3' }),
      functionCall('search_nodes', '{"query":"demo","limt":2}', { callId: 'call_4' }),
    ]
    for (const c of calls) console.log(`model → ${c.callId} ${c.name} ${show(c.arguments)}`)
    const model = new ScriptedModel([calls, [assistantMessage('The demo is on 2 December.')]])
    const agent = new Agent({
      name: 'notes',
      instructions: 'Answer from the notes.',
      model,
      tools: [...(await toAgentsTools(stack)), summarise],
      mcpServers: [memory], // 3. the SDK's own MCP tools
    })
    // one line: every tool call of this agent, but the stack's, which the stack hears itself
    const heard = auditAgent(agent, audit)
    const result = await run(agent, 'When is the demo?')

    const input = model.calls[1]?.request.input
    for (const item of Array.isArray(input) ? input : []) {
      if (item.type !== 'function_call_result') continue
      const output: unknown = item.output
      // a text output, or (from an MCP tool) a list of them
      const said = (Array.isArray(output) ? output : [output])
        .map((o: unknown) => (typeof o === 'object' && o !== null && 'text' in o ? String(o.text) : JSON.stringify(o)))
        .join('')
      console.log(`model ← ${item.callId}: ${show(said).slice(0, 120)}`)
    }
    console.log(`assistant: ${String(result.finalOutput)}`)
    console.log(`stats: ${JSON.stringify(heard.stats())}`)
  } finally {
    await memory.close()
    await fs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
