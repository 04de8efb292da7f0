// unknownKeyAuditProcessor: the audit as a Mastra processor, so an Agent whose model is a
// string id (Mastra's model router) is audited too. Driven through a real Agent.generate
// loop with the AI SDK's mock model; the string form is checked by the type checker (its
// run needs the network).
import { Agent } from '@mastra/core/agent'
import { createTool } from '@mastra/core/tools'
import { jsonSchema, wrapLanguageModel } from 'ai'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { toAiSdkTools, unknownKeyAuditMiddleware, unknownKeyAuditProcessor } from '../../src/ai-sdk/index.js'
import { scriptedModel } from './support.js'

const stack = fromTools([
  {
    declaration: {
      type: 'function',
      function: { name: 'read', parameters: { type: 'object', properties: { path: {}, head: {} } } },
    },
    run: () => TE.right('file text'),
  },
])

const executed: Array<unknown> = []
const count = createTool({
  id: 'count',
  description: 'Counts words',
  inputSchema: z.object({ text: z.string() }),
  execute: async (input) => {
    executed.push(input)
    return { words: 2 }
  },
})

const model = () =>
  scriptedModel((_, turn) =>
    turn < 2
      ? [
          { id: `r${turn}`, tool: 'read', input: '{"path":"/n","haed":1}' },
          { id: `c${turn}`, tool: 'count', input: '{"text":"one two","lang":"en"}' },
        ]
      : 'done',
  )

describe('unknownKeyAuditProcessor in Mastra Agent.generate', () => {
  it('warns once per pair of a Mastra tool (before zod strips it) and of a toolstack tool', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditProcessor({ onWarn: (w) => void warnings.push(w) })
    const agent = new Agent({
      id: 'notes',
      name: 'notes',
      instructions: 'be brief',
      model: model() as never, // Mastra types a V4 model with its own copy of @ai-sdk/provider (see mastra.test.ts)
      tools: { ...(await toAiSdkTools(stack)), count },
      inputProcessors: [audit],
      outputProcessors: [audit],
    })
    const r = await agent.generate('go', { maxSteps: 4 })
    expect(r.text).toBe('done')
    expect(warnings.map((w) => [w.tool, w.unknownKeys.join(), w.id, w.suggestions])).toEqual([
      ['read', 'haed', 'r0', [{ key: 'haed', didYouMean: 'head' }]],
      ['count', 'lang', 'c0', []],
    ])
    expect(executed.at(-1)).toEqual({ text: 'one two' })
    expect(audit.auditedTools()).toEqual(['count', 'read'])
    expect(audit.stats().map((s) => [s.tool, s.key, s.calls])).toEqual([
      ['count', 'lang', 2],
      ['read', 'haed', 2],
    ])
  })

  it('sharing one memory with an audited stack, each pair is said once, via the processor', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const shared = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const audit = unknownKeyAuditProcessor(shared)
    const agent = new Agent({
      id: 'notes',
      name: 'notes',
      instructions: 'be brief',
      model: model() as never,
      tools: { ...(await toAiSdkTools(pipe(stack, withUnknownKeyAudit(shared)))), count },
      inputProcessors: [audit],
      outputProcessors: [audit],
    })
    await agent.generate('go', { maxSteps: 4 })
    expect(warnings.map((w) => [w.tool, w.via])).toEqual([
      ['read', 'mastra-processor'],
      ['count', 'mastra-processor'],
    ])
  })

  it('a string model id takes the processor, under strict, without a cast', () => {
    const audit = unknownKeyAuditProcessor({ onWarn: () => undefined })
    const agent = new Agent({
      id: 'a',
      name: 'a',
      instructions: 'x',
      model: 'openai/gpt-5',
      tools: { count },
      inputProcessors: [audit],
      outputProcessors: [audit],
    })
    expect(agent.name).toBe('a')
  })
})

describe('an ai 7 model object in a Mastra 1.71 Agent (docs/ai-sdk.md, "A model object and Mastra’s types")', () => {
  it('is refused by Mastra’s types wrapped or not, so the cast is not toolstack’s; the processor needs no wrapping', () => {
    const plain = model()
    const wrapped = wrapLanguageModel({ model: plain, middleware: unknownKeyAuditMiddleware() })
    const audit = unknownKeyAuditProcessor()
    const agents = [
      // @ts-expect-error TS2322: Mastra's copy of @ai-sdk/provider v7 has no finishReason 'interrupted'
      new Agent({ id: 'a', name: 'a', instructions: 'x', model: plain, inputProcessors: [audit] }),
      // @ts-expect-error TS2322: the same type, the same refusal: wrapLanguageModel gives ai's LanguageModelV4
      new Agent({ id: 'b', name: 'b', instructions: 'x', model: wrapped }),
    ]
    // at run time Mastra takes either as it is
    expect(agents.map((a) => a.name)).toEqual(['a', 'b'])
  })
})

describe('unknownKeyAuditProcessor reading what Mastra hands it', () => {
  it('an unreadable call is skipped, the others still heard, and the message list comes back as it was', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditProcessor({ onWarn: (w) => void warnings.push(w) })
    const messageList = {}
    await audit.processInputStep({ tools: { count }, messageList })
    const hostile = Object.defineProperty({}, 'toolName', {
      get: () => {
        throw new Error('no')
      },
    })
    const toolCalls = [
      hostile,
      { toolName: 7, toolCallId: 'x', args: {} },
      { toolName: 'count', toolCallId: 'c9', args: { text: 'a', lnag: 'en' } },
    ] as never
    expect(audit.processOutputStep({ toolCalls, messageList })).toBe(messageList)
    expect(warnings.map((w) => [w.tool, w.unknownKeys.join(), w.id])).toEqual([['count', 'lnag', 'c9']])
    // another request (another list) has no catalogue yet: nothing heard, a new key included
    const other = [{ toolName: 'count', toolCallId: 'c10', args: { text: 'a', extra: 1 } }] as never
    const otherList = {}
    expect(audit.processOutputStep({ toolCalls: other, messageList: otherList })).toBe(otherList)
    expect(audit.processOutputStep({ toolCalls: other, messageList: 'not a list' })).toBe('not a list')
    expect(warnings).toHaveLength(1)
  })

  it('a call id that is not a string is ""; no tool calls at all is nothing to hear', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditProcessor({ onWarn: (w) => void warnings.push(w) })
    const messageList = {}
    await audit.processInputStep({ tools: { count }, messageList })
    expect(audit.processOutputStep({ messageList })).toBe(messageList)
    const toolCalls = [{ toolName: 'count', toolCallId: 9, args: { text: 'a', lnag: 'en' } }] as never
    audit.processOutputStep({ toolCalls, messageList })
    expect(warnings.map((w) => [w.tool, w.unknownKeys.join(), w.id])).toEqual([['count', 'lnag', '']])
  })

  it('audits the tools of each step as they are, an AI SDK tool’s inputSchema included; a tool with no schema is not', async () => {
    const audit = unknownKeyAuditProcessor({ onWarn: () => undefined })
    const aiTool = { description: 'Reads', inputSchema: jsonSchema({ type: 'object', properties: { path: {} } }) }
    await audit.processInputStep({
      tools: { count, read: aiTool, bare: { description: 'no schema' } },
      messageList: {},
    })
    expect(audit.auditedTools()).toEqual(['count', 'read'])
    await audit.processInputStep({ tools: undefined, messageList: {} })
    expect(audit.auditedTools()).toEqual([])
  })

  it('is Mastra processor toolstack-unknown-key-audit, and its options are checked at construction, naming it', () => {
    const audit = unknownKeyAuditProcessor()
    expect([audit.id, audit.name]).toEqual(['toolstack-unknown-key-audit', 'toolstack unknown-key audit'])
    expect(() => unknownKeyAuditProcessor({ tolerate: 'x' } as never)).toThrow(
      /^unknownKeyAuditProcessor: tolerate must be/,
    )
  })
})
