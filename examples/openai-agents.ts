// The unknown-key alarm inside the OpenAI Agents SDK: run() over an Agent whose tools
// are a toolstack stack on the reference filesystem MCP server, next to the user's own
// zod tool wrapped by auditAgentsTools. The model is the SDK's ScriptedModel (no
// network, no key); give the Agent a real model and nothing else changes.
// Run with: npm run example:openai-agents
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { pipe } from 'fp-ts/lib/function.js'
import { z } from 'zod'
import { formatWarning, readOnlyRules, withPolicy, withReasons, withUnknownKeyAudit } from 'toolstack'
import { connectStdio, fromMcpClient } from 'toolstack/mcp'
import { auditAgentsTools, toAgentsTools } from 'toolstack/openai-agents'

setTracingDisabled(true)

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-agents-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  const show = (s: string): string => s.replaceAll(dir, '<dir>').replace(/\n/g, ' | ')
  try {
    const say = (who: string) => (w: Parameters<typeof formatWarning>[0]) =>
      console.log(`  ⚠ ${who}: ${show(formatWarning(w))}`)

    // 1. a toolstack stack as the SDK's function tools (strict: false, raw arguments to the stack)
    const stack = pipe(
      fromMcpClient(fs.client),
      withReasons(),
      withUnknownKeyAudit({ onWarn: say('stack') }),
      withPolicy({
        rules: [
          ...readOnlyRules(''),
          { tool: 'write_file', decision: 'deny', under: dir, note: 'this agent only reads' },
        ],
      }),
    )
    // 2. the user's own zod tool, audited before zod strips what it does not declare
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
    const own = auditAgentsTools([summarise], { onWarn: say('auditAgentsTools') })

    const calls = [
      functionCall(
        'read_text_file',
        JSON.stringify({ path: join(dir, 'notes.txt'), haed: 1, reason: 'the user asked when the demo is' }),
        { callId: 'call_1' },
      ),
      functionCall('summarise', '{"text":"Ship the adapters on Friday","words":null,"wrods":2}', { callId: 'call_2' }),
      functionCall('write_file', JSON.stringify({ path: join(dir, 'notes.txt'), content: '' }), { callId: 'call_3' }),
    ]
    for (const c of calls) console.log(`model → ${c.callId} ${c.name} ${show(c.arguments)}`)
    const model = new ScriptedModel([calls, [assistantMessage('The demo is on 2 December.')]])
    const agent = new Agent({
      name: 'notes',
      instructions: 'Answer from the notes.',
      model,
      tools: [...(await toAgentsTools(stack)), ...own.tools],
    })
    const result = await run(agent, 'When is the demo?')

    const input = model.calls[1]?.request.input
    for (const item of Array.isArray(input) ? input : []) {
      if (item.type !== 'function_call_result') continue
      const output: unknown = item.output
      const said =
        typeof output === 'object' && output !== null && 'text' in output ? String(output.text) : JSON.stringify(output)
      console.log(`model ← ${item.callId}: ${show(said).slice(0, 120)}`)
    }
    console.log(`assistant: ${String(result.finalOutput)}`)
    console.log(`stats: ${JSON.stringify(own.stats())}`)
  } finally {
    await fs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
