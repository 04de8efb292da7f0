// The unknown-key alarm inside a LangChain v1 agent (createAgent): its tools are a toolstack
// stack on the reference filesystem MCP server and the user's own zod tool, and one line of
// middleware, createMiddleware(unknownKeyAuditMiddleware(…)), hears every tool call; one
// sharedUnknownKeyAudit for it and the stack, so each pair is said once, naming the layer
// that heard it. The middleware's warnings are also custom events in the run of their tool
// call (toolstack.unknown_key), which a callback handler of our own prints.
// The model is LangChain's FakeToolCallingModel, scripted with the calls a chat model would
// make (no network); any chat model goes in its place.
// Run with: npm run example:langchain
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CallbackHandlerMethods } from '@langchain/core/callbacks/base'
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises'
import type { ClientTool } from '@langchain/core/tools'
import { tool } from '@langchain/core/tools'
import { pipe } from 'fp-ts/lib/function.js'
import { AIMessage, FakeToolCallingModel, ToolMessage, createAgent, createMiddleware } from 'langchain'
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
import { toLangChainTools, unknownKeyAuditMiddleware } from 'toolstack/langchain'

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-langchain-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  const show = (s: string): string => s.replaceAll(dir, '<dir>').replace(/\n/g, ' | ')
  try {
    // one memory for the stack and the middleware: each pair said once, the line ending [via <layer>]
    const shared = sharedUnknownKeyAudit({ onWarn: (w) => console.log(`  ⚠ ${show(formatWarning(w))}`) })

    // 1. a toolstack stack as LangChain tools: their schemas let every key through to the stack
    const stack = pipe(
      fromMcpClient(fs.client),
      withReasons(),
      withUnknownKeyAudit(shared),
      withPolicy({
        rules: [
          ...readOnlyRules(''),
          { tool: 'write_file', decision: 'deny', under: dir, note: 'this agent only reads' },
        ],
      }),
    )
    // 2. the user's own zod tool, heard by the middleware before zod strips what it does not declare
    const summarise = tool(
      async ({ text, words }) =>
        `${text
          .split(/\s+/)
          .slice(0, words ?? 3)
          .join(' ')}…`,
      {
        name: 'summarise',
        description: 'Summarises a text in a few words',
        schema: z.object({ text: z.string(), words: z.number().optional() }),
      },
    )
    // 3. the agent's middleware: it reads each tool from the call itself, and leaves the stack's tools to the stack
    const audit = unknownKeyAuditMiddleware(shared)

    // the model's first turn: three tool calls (two with a misspelt key); its second: no call, so the agent ends
    const model = new FakeToolCallingModel({
      toolCalls: [
        [
          {
            id: 'call_1',
            name: 'read_text_file',
            args: { path: join(dir, 'notes.txt'), haed: 1, reason: 'the user asked when the demo is' },
          },
          { id: 'call_2', name: 'summarise', args: { text: 'Ship the adapters on Friday', wrods: 2 } },
          { id: 'call_3', name: 'write_file', args: { path: join(dir, 'notes.txt'), content: '' } },
        ],
        [],
      ],
    })
    const tools: Array<ClientTool> = [...(await toLangChainTools(stack)), summarise]
    const agent = createAgent({ model, tools, middleware: [createMiddleware(audit)] })

    // what LangChain's callbacks carry: the tool runs, and the warnings' custom events in the run of their call
    const toolRuns = new Map<string, string>()
    const events: Array<{ readonly name: string; readonly data: unknown; readonly runId: string }> = []
    const handler: CallbackHandlerMethods = {
      handleToolStart: (_tool, _input, _runId, parentRunId, _tags, _metadata, runName) =>
        void toolRuns.set(parentRunId ?? '', runName ?? ''),
      handleCustomEvent: (name, data, runId) => void events.push({ name, data, runId }),
    }
    const { messages } = await agent.invoke(
      { messages: [{ role: 'user', content: 'When is the demo?' }] },
      { callbacks: [handler] },
    )
    await awaitAllCallbacks()
    for (const e of events)
      console.log(
        `  event: ${e.name} ${JSON.stringify(e.data)}, in the run of the ${toolRuns.get(e.runId) ?? '?'} call`,
      )
    for (const m of messages) {
      if (AIMessage.isInstance(m))
        for (const c of m.tool_calls ?? [])
          console.log(`model → ${c.id ?? ''} ${c.name} ${show(JSON.stringify(c.args))}`)
      if (ToolMessage.isInstance(m))
        console.log(`model ← ${m.tool_call_id} ${m.status ?? ''}: ${show(String(m.content)).slice(0, 120)}`)
    }
    console.log(`stats: ${JSON.stringify(audit.stats())}`)
  } finally {
    await fs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
