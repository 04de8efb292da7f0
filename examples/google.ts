// A generateContent tool loop with @google/genai over a toolstack stack on the reference filesystem MCP
// server. The client is the real `new GoogleGenAI()`, pointed at a stand-in server that answers with recorded
// responses (no network, no key): drop `baseUrl` and set the API key, and nothing else changes. The client's
// fetch and the stack share one audit memory: each (tool, key) pair is said once.
// Run with: npm run example:google
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Content } from '@google/genai'
import { GoogleGenAI } from '@google/genai'
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
import { executeFunctionCalls, toFunctionDeclarations, unknownKeyAuditFetch } from 'toolstack/google'
import { recordedApi } from './support/recorded-api.js'

// the model's three turns: code it ran on the API's side beside a read with a mistyped key, a write, an answer
const recorded = (dir: string): ReadonlyArray<unknown> => {
  const response = (id: string, parts: ReadonlyArray<unknown>) => ({
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    modelVersion: 'gemini-2.5-flash',
    responseId: id,
  })
  return [
    response('resp_1', [
      { executableCode: { language: 'PYTHON', code: 'print(2 + 2)' } },
      { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '4\n' } },
      {
        functionCall: {
          id: 'fc_1',
          name: 'read_text_file',
          args: { path: join(dir, 'notes.txt'), haed: 1, reason: 'the user asked when the demo is' },
        },
      },
    ]),
    response('resp_2', [
      { functionCall: { id: 'fc_2', name: 'write_file', args: { path: join(dir, 'notes.txt'), content: '' } } },
    ]),
    response('resp_3', [{ text: 'The demo is on 2 December.' }]),
  ]
}

const main = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-google-'))
  writeFileSync(join(dir, 'notes.txt'), 'Ship the adapters on Friday.\nDemo on 2 December.\nRetro after.\n')
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
  const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
  const answers = [...recorded(dir)]
  const api = await recordedApi(() => ({ json: answers.shift() }))
  const show = (s: string): string => s.replaceAll(dir, '<dir>').replace(/\n/g, ' | ')
  try {
    // one memory for the client's fetch and the stack (the line ends with [via …])
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => console.log(`  ⚠ ${show(formatWarning(w))}`) })
    const heard = unknownKeyAuditFetch(audit)
    const ai = new GoogleGenAI({ apiKey: 'recorded', httpOptions: { baseUrl: api.url, fetch: heard } })
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
    const tools = [{ functionDeclarations: toFunctionDeclarations(listed.right) }]

    const contents: Array<Content> = [{ role: 'user', parts: [{ text: 'When is the demo?' }] }]
    for (let turn = 1; turn <= 4; turn++) {
      const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents, config: { tools } })
      const calls = response.functionCalls
      const said = response.candidates?.[0]?.content
      if (calls === undefined || said === undefined) {
        console.log(`assistant: ${response.text ?? ''}`)
        break
      }
      if (said.parts?.some((p) => p.executableCode !== undefined) === true)
        console.log('model ran code on the API’s side: left alone')
      for (const c of calls) console.log(`model → ${c.id ?? ''} ${c.name ?? ''} ${show(JSON.stringify(c.args))}`)
      // one functionResponse part per call, in order, each with the call's id and name
      const parts = await executeFunctionCalls(stack)(calls)()
      if (parts._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')
      for (const { functionResponse: r } of parts.right)
        console.log(`model ← ${r.id ?? ''} ${show(JSON.stringify(r.response)).slice(0, 110)}`)
      contents.push(said, { role: 'user', parts: parts.right })
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
