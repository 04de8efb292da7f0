// The unknown-key alarm inside the Vercel AI SDK: a generateText loop over the
// reference filesystem MCP server, behind a toolstack stack, next to a user's own zod
// tool. The model is the SDK's own mock (no network, no key); it mistypes a key of
// each tool. Swap in a real model (`openai('gpt-5')`) and nothing else changes.
// Run with: npm run example:ai-sdk
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
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
import { toAiSdkTools, unknownKeyAuditMiddleware } from 'toolstack/ai-sdk'

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-ai-sdk-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  try {
    // one audit memory for the middleware and the stack: each (tool, key) pair is said once,
    // by the layer that heard it first (the line ends with [via …])
    const audit = sharedUnknownKeyAudit({
      onWarn: (w) => console.log(`  ⚠ ${formatWarning(w).replaceAll(dir, '<dir>')}`),
    })

    // 1. a toolstack stack as AI SDK tools: every key the model wrote reaches the stack
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
    const tools = {
      ...(await toAiSdkTools(stack)),
      // 2. a user's own zod tool: the SDK strips what it does not declare before execute
      summarise: tool({
        description: 'Summarises a text in a few words',
        inputSchema: z.object({ text: z.string(), words: z.number().optional() }),
        execute: async ({ text, words }) =>
          `${text
            .split(/\s+/)
            .slice(0, words ?? 3)
            .join(' ')}…`,
      }),
    }

    // the mock model: one turn of calls, then an answer built from what it was sent
    const model = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        const results = prompt.flatMap((m) => (m.role === 'tool' ? m.content : []))
        if (results.length === 0) {
          const calls = [
            {
              toolCallId: 'call_1',
              toolName: 'read_text_file',
              input: JSON.stringify({
                path: join(dir, 'notes.txt'),
                haed: 1,
                reason: 'the user asked when the demo is',
              }),
            },
            { toolCallId: 'call_2', toolName: 'summarise', input: '{"text":"Ship the adapters on Friday","wrods":2}' },
            {
              toolCallId: 'call_3',
              toolName: 'write_file',
              input: JSON.stringify({ path: join(dir, 'notes.txt'), content: '' }),
            },
          ]
          for (const c of calls) console.log(`model → ${c.toolCallId} ${c.toolName} ${c.input.replace(dir, '<dir>')}`)
          return {
            content: calls.map((c) => ({ type: 'tool-call' as const, ...c })),
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage,
            warnings: [],
          }
        }
        for (const r of results) {
          if (r.type !== 'tool-result') continue
          const text =
            r.output.type === 'text' || r.output.type === 'error-text' ? r.output.value : JSON.stringify(r.output)
          console.log(
            `model ← ${r.toolCallId} ${r.output.type}: ${text.replaceAll(dir, '<dir>').replace(/\n/g, ' | ').slice(0, 120)}`,
          )
        }
        return {
          content: [{ type: 'text', text: 'The demo is on 2 December.' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        }
      },
    })

    // 3. the one-line drop-in: the middleware sees the raw input of every tool call
    const audited = wrapLanguageModel({ model, middleware: unknownKeyAuditMiddleware(audit) })
    const r = await generateText({ model: audited, tools, prompt: 'When is the demo?', stopWhen: stepCountIs(3) })
    console.log(`assistant: ${r.text}`)
  } finally {
    await fs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
