// One memory, one voice: the middleware on the model and an audited stack behind
// toAiSdkTools hear the same calls. Given one sharedUnknownKeyAudit, a (tool, key) pair is
// said once, by the layer that heard it first, and the warning names that layer (`via`).
// Real generateText and streamText loops, the SDK's own mock model.
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai'
import type { ToolSet } from 'ai'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyAuditOptions, UnknownKeyWarning } from '../../src/index.js'
import { formatWarning, fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { toAiSdkTools, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { warningFields } from '../../src/cli/check.js'
import { scriptedModel } from './support.js'

const stackTools = fromTools([
  {
    declaration: {
      type: 'function',
      function: {
        name: 'read',
        parameters: { type: 'object', properties: { path: { type: 'string' }, head: { type: 'number' } } },
      },
    },
    run: () => TE.right('file text'),
  },
])

const summarise = tool({
  description: 'Summarises a text',
  inputSchema: z.object({ text: z.string(), words: z.number().optional() }),
  execute: async ({ text }) => text,
})

// each turn, the model mistypes a key of a stack tool and of its own zod tool
const script = (_: unknown, turn: number) =>
  turn < 2
    ? [
        { id: `r${turn}`, tool: 'read', input: '{"path":"/notes.txt","haed":1}' },
        { id: `s${turn}`, tool: 'summarise', input: '{"text":"a b c","wrods":2}' },
      ]
    : 'done'

const combined = async (layers: {
  readonly model?: UnknownKeyAuditOptions
  readonly stack?: UnknownKeyAuditOptions
}) => {
  const stack = layers.stack === undefined ? stackTools : pipe(stackTools, withUnknownKeyAudit(layers.stack))
  const tools: ToolSet = { ...(await toAiSdkTools(stack)), summarise }
  const base = scriptedModel(script)
  const model =
    layers.model === undefined
      ? base
      : wrapLanguageModel({ model: base, middleware: unknownKeyAuditMiddleware(layers.model) })
  return { stack, tools, model }
}

const said = (ws: ReadonlyArray<UnknownKeyWarning>) => ws.map((w) => [w.tool, w.unknownKeys.join(), w.id, w.via])

const loops = {
  generateText: async (s: Awaited<ReturnType<typeof combined>>) =>
    (await generateText({ model: s.model, tools: s.tools, prompt: 'go', stopWhen: stepCountIs(5) })).text,
  streamText: async (s: Awaited<ReturnType<typeof combined>>) =>
    streamText({ model: s.model, tools: s.tools, prompt: 'go', stopWhen: stepCountIs(5) }).text,
}

describe.each(Object.entries(loops))('%s: the middleware and an audited stack', (_, loop) => {
  it('sharing one memory, say each pair once, named by the layer that heard it first', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const s = await combined({ model: audit, stack: audit })
    expect(await loop(s)).toBe('done')
    // the middleware hears the raw input before the SDK runs the tool: it speaks, the stack stays silent
    expect(said(warnings)).toEqual([
      ['read', 'haed', 'r0', 'ai-sdk-middleware'],
      ['summarise', 'wrods', 's0', 'ai-sdk-middleware'],
    ])
    expect(warningFields(warnings[0] as UnknownKeyWarning)).toMatchObject({ tool: 'read', via: 'ai-sdk-middleware' })
    expect(formatWarning(warnings[0] as UnknownKeyWarning)).toBe(
      'toolstack: read call r0 carried undeclared argument key "haed" (declared: "head", "path") (did you mean head?) [via ai-sdk-middleware]',
    )
  })

  it('a pair only the stack hears (a call not through the model) is said by the stack, once', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const s = await combined({ model: audit, stack: audit })
    await loop(s)
    const direct = (args: string) =>
      s.stack.executeToolCalls([{ id: 'd1', function: { name: 'read', arguments: args } }])()
    await direct('{"path":"x","haed":1}')
    await direct('{"path":"x","tali":1}')
    await direct('{"path":"x","tali":1}')
    expect(said(warnings).slice(2)).toEqual([['read', 'tali', 'd1', 'stack']])
  })

  it('each layer alone warns as before: every pair once, no via', async () => {
    const byModel: Array<UnknownKeyWarning> = []
    await loop(await combined({ model: { onWarn: (w) => void byModel.push(w) } }))
    expect(said(byModel)).toEqual([
      ['read', 'haed', 'r0', undefined],
      ['summarise', 'wrods', 's0', undefined],
    ])
    expect(byModel[0]).not.toHaveProperty('via')
    expect(warningFields(byModel[0] as UnknownKeyWarning)).not.toHaveProperty('via')

    const byStack: Array<UnknownKeyWarning> = []
    await loop(await combined({ stack: { onWarn: (w) => void byStack.push(w) } }))
    // the stack never hears the zod tool
    expect(said(byStack)).toEqual([['read', 'haed', 'r0', undefined]])
    expect(byStack[0]).not.toHaveProperty('via')
  })

  it('two layers with their own memories say the pair twice (what sharing mends)', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const onWarn = (w: UnknownKeyWarning) => void warnings.push(w)
    await loop(await combined({ model: { onWarn }, stack: { onWarn } }))
    expect(said(warnings).filter(([tool]) => tool === 'read')).toHaveLength(2)
  })
})

describe('sharedUnknownKeyAudit', () => {
  it('checks its options at once, and a memory not made by it is refused by name', () => {
    expect(() => sharedUnknownKeyAudit({ maxPairs: 0 })).toThrow(TypeError)
    expect(() => withUnknownKeyAudit({ memory: {} as never })).toThrow(
      /options\.memory must come from sharedUnknownKeyAudit/,
    )
    expect(() => unknownKeyAuditMiddleware({ memory: 'x' as never })).toThrow(TypeError)
  })

  it('counts in one seen-set, bounded by its maxPairs', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({
      onWarn: (w) => void warnings.push(w),
      maxPairs: 1,
      onDiagnostic: () => undefined,
    })
    const s = await combined({ model: audit, stack: audit })
    await loops.generateText(s)
    const mw = unknownKeyAuditMiddleware(audit)
    // one pair remembered; the full set still reports new pairs each time, as alone
    expect(mw.stats()).toHaveLength(1)
    expect(said(warnings)[0]).toEqual(['read', 'haed', 'r0', 'ai-sdk-middleware'])
  })

  it('a hostile via is shown escaped and cut', () => {
    const line = formatWarning({
      tool: 't',
      id: '',
      unknownKeys: ['k'],
      declaredKeys: [],
      via: '\u001b]0;x\u0007' + 'v'.repeat(500),
    })
    expect([...line].some((c) => c.charCodeAt(0) < 0x20)).toBe(false)
    expect(line.length).toBeLessThan(400)
    expect(line).toContain('[via \\u001b]0;x\\u0007vvv')
  })
})
