// unknownKeyAuditMiddleware: in real generateText and streamText loops (the SDK's own
// mock model), directly against the middleware contract, and against withUnknownKeyAudit
// itself, whose semantics it must keep.
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { AuditDiagnostic, UnknownKeyWarning } from '../../src/index.js'
import { fromTools, withUnknownKeyAudit } from '../../src/index.js'
import type { LanguageModelCallParams } from '../../src/ai-sdk/index.js'
import { declarationsOfRequest, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { argsObjectArb, keyArb } from '../support/arbitraries.js'
import { scriptedModel, usage } from './support.js'

const readTool = (seen: Array<unknown>) =>
  tool({
    description: 'Reads a file',
    inputSchema: z.object({ path: z.string(), offset: z.number().optional() }),
    execute: async (input) => {
      seen.push(input)
      return 'file text'
    },
  })

const RAW = '{"path":"/notes.txt","ffset":3}'
const once = (calls: ReadonlyArray<{ id: string; tool: string; input: string }>) => (_: unknown, turn: number) =>
  turn === 0 ? calls : 'done'

describe('unknownKeyAuditMiddleware in a real loop', () => {
  it('generateText: warns of the key zod then strips, with its suggestion; execute gets the stripped input', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const executed: Array<unknown> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const model = wrapLanguageModel({
      model: scriptedModel(once([{ id: 'c1', tool: 'read', input: RAW }])),
      middleware: audit,
    })
    const r = await generateText({ model, tools: { read: readTool(executed) }, prompt: 'go', stopWhen: stepCountIs(3) })
    expect(r.text).toBe('done')
    expect(warnings).toEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
    expect(executed).toEqual([{ path: '/notes.txt' }])
    expect(audit.auditedTools()).toEqual(['read'])
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 1, firstId: 'c1' }])
  })

  it('streamText: the same warning, once per (tool, key) across requests, and the same text', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const executed: Array<unknown> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => () => void warnings.push(w) })
    for (const id of ['c1', 'c2']) {
      const model = wrapLanguageModel({
        model: scriptedModel(once([{ id, tool: 'read', input: RAW }])),
        middleware: audit,
      })
      const s = streamText({ model, tools: { read: readTool(executed) }, prompt: 'go', stopWhen: stepCountIs(3) })
      expect(await s.text).toBe('done')
    }
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.id])).toEqual([['read', ['ffset'], 'c1']])
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 2, firstId: 'c1' }])
    expect(executed).toEqual([{ path: '/notes.txt' }, { path: '/notes.txt' }])
  })

  it('a clean call, an unlisted tool and unparsable input say nothing', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const calls = [
      { id: 'a', tool: 'read', input: '{"path":"/x","offset":1}' },
      { id: 'b', tool: 'nope', input: '{"zzz":1}' },
      { id: 'c', tool: 'read', input: '{"path":' },
    ]
    const model = wrapLanguageModel({ model: scriptedModel(once(calls)), middleware: audit })
    await generateText({ model, tools: { read: readTool([]) }, prompt: 'go', stopWhen: stepCountIs(3) })
    expect(warnings).toEqual([])
  })
})

// -------------------------------------------------------------------------------------
// the middleware contract, driven directly
// -------------------------------------------------------------------------------------

const params = (tools: ReadonlyArray<{ name: string; keys: ReadonlyArray<string> }>): LanguageModelCallParams =>
  ({
    prompt: [],
    tools: tools.map((t) => ({
      type: 'function',
      name: t.name,
      inputSchema: { type: 'object', properties: Object.fromEntries(t.keys.map((k) => [k, {}])) },
    })),
  }) as unknown as LanguageModelCallParams

const generated = (content: ReadonlyArray<unknown>) => ({
  content,
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
})

const callPart = (id: string, toolName: string, input: string) => ({
  type: 'tool-call',
  toolCallId: id,
  toolName,
  input,
})

type Mw = ReturnType<typeof unknownKeyAuditMiddleware>

const runGenerate = (mw: Pick<Mw, 'wrapGenerate'>, p: LanguageModelCallParams, result: unknown) =>
  mw.wrapGenerate({
    doGenerate: async () => result,
    doStream: async () => Promise.reject(new Error('not streamed')),
    params: p,
    model: {},
  } as never)

const runStream = async (
  mw: Pick<Mw, 'wrapStream'>,
  p: LanguageModelCallParams,
  parts: ReadonlyArray<unknown>,
): Promise<Array<unknown>> => {
  const stream = new ReadableStream<unknown>({
    start: (c) => {
      for (const part of parts) c.enqueue(part)
      c.close()
    },
  })
  const out = await mw.wrapStream({
    doGenerate: async () => Promise.reject(new Error('not generated')),
    doStream: async () => ({ stream }),
    params: p,
    model: {},
  } as never)
  const read: Array<unknown> = []
  const reader = (out as { stream: ReadableStream<unknown> }).stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return read
    read.push(value)
  }
}

const partArb: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .record({ id: fc.string({ maxLength: 4 }), tool: fc.constantFrom('read', 'write', 'other'), args: argsObjectArb })
    .map(({ id, tool, args }) => callPart(id, tool, JSON.stringify(args))),
  fc
    .record({ id: fc.string({ maxLength: 4 }), input: fc.string({ maxLength: 12 }) })
    .map(({ id, input }) => callPart(id, 'read', input)),
  fc.constantFrom<unknown>(
    { type: 'text-delta', id: 't', delta: 'hi' },
    { type: 'finish' },
    { type: 'tool-call' },
    { type: 'tool-call', toolName: 7 },
    null,
    'part',
    42,
  ),
)

const TOOLS = [
  { name: 'read', keys: ['path', 'offset'] },
  { name: 'write', keys: ['path', 'content'] },
]

describe('unknownKeyAuditMiddleware changes nothing', () => {
  it('says which middleware contract it keeps: v4, the one whose wrapGenerate and wrapStream it implements', () => {
    expect(unknownKeyAuditMiddleware().specificationVersion).toBe('v4')
  })

  it('wrapGenerate answers the very result the model gave', async () => {
    const mw = unknownKeyAuditMiddleware({ onWarn: () => undefined })
    const result = generated([callPart('c1', 'read', RAW)])
    expect(await runGenerate(mw, params(TOOLS), result)).toBe(result)
  })

  it('whatever the stream holds, the same parts come out, each the very same object, in order', async () => {
    const mw = unknownKeyAuditMiddleware({ onWarn: () => undefined, onDiagnostic: () => undefined })
    await fc.assert(
      fc.asyncProperty(fc.array(partArb, { maxLength: 12 }), async (parts) => {
        const out = await runStream(mw, params(TOOLS), parts)
        expect(out).toHaveLength(parts.length)
        out.forEach((p, i) => expect(p).toBe(parts[i]))
      }),
    )
  })

  it('the property can fail: a middleware that copies the parts breaks it', async () => {
    const copying: Pick<Mw, 'wrapStream'> = {
      wrapStream: async ({ doStream }) => {
        const r = await doStream()
        return {
          ...r,
          stream: r.stream.pipeThrough(
            new TransformStream({ transform: (p, c) => c.enqueue(typeof p === 'object' && p !== null ? { ...p } : p) }),
          ),
        }
      },
    }
    const out = await fc.check(
      fc.asyncProperty(fc.array(partArb, { maxLength: 12 }), async (parts) => {
        const read = await runStream(copying, params(TOOLS), parts)
        return read.every((p, i) => p === parts[i])
      }),
    )
    expect(out.failed).toBe(true)
  })

  it('a stream of a request without tools is the very result the model gave', async () => {
    const mw = unknownKeyAuditMiddleware({ onWarn: () => undefined })
    const result = { stream: new ReadableStream() }
    const out = await mw.wrapStream({
      doGenerate: async () => Promise.reject(new Error('no')),
      doStream: async () => result,
      params: params([]),
      model: {},
    } as never)
    expect(out).toBe(result)
  })

  it('an onWarn that throws changes nothing about the result', async () => {
    const mw = unknownKeyAuditMiddleware({
      onWarn: () => {
        throw new Error('host logger broke')
      },
    })
    const result = generated([callPart('c1', 'read', RAW)])
    expect(await runGenerate(mw, params(TOOLS), result)).toBe(result)
    expect(mw.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 1, firstId: 'c1' }])
  })
})

describe('unknownKeyAuditMiddleware keeps the semantics of withUnknownKeyAudit', () => {
  it('whatever the calls, it says exactly what withUnknownKeyAudit says of them, and counts the same', async () => {
    const callArb = fc.record({
      id: fc.string({ maxLength: 3 }),
      tool: fc.constantFrom('read', 'write', 'other'),
      args: fc.oneof(
        { weight: 4, arbitrary: argsObjectArb.map((a) => JSON.stringify(a)) },
        { weight: 1, arbitrary: fc.constantFrom('', '{', '[1]', 'null') },
      ),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(callArb, { maxLength: 4 }), { maxLength: 6 }),
        fc.array(keyArb, { maxLength: 2 }),
        async (turns, tolerate) => {
          const byMiddleware: Array<UnknownKeyWarning> = []
          const byCombinator: Array<UnknownKeyWarning> = []
          const mw = unknownKeyAuditMiddleware({ onWarn: (w) => void byMiddleware.push(w), tolerate })
          const declarations = declarationsOfRequest(params(TOOLS).tools)
          const stack = pipe(
            fromTools(declarations.map((declaration) => ({ declaration, run: () => TE.right('ok') }))),
            withUnknownKeyAudit({ onWarn: (w) => void byCombinator.push(w), tolerate }),
          )
          await stack.toolsForLlm()
          for (const turn of turns) {
            await runGenerate(mw, params(TOOLS), generated(turn.map((c) => callPart(c.id, c.tool, c.args))))
            await stack.executeToolCalls(
              turn.map((c) => ({ id: c.id, type: 'function', function: { name: c.tool, arguments: c.args } })),
            )()
          }
          expect(byMiddleware).toEqual(byCombinator)
          expect(mw.stats()).toEqual(stack.stats())
          // the middleware reads the tools of a request: there are none before the first
          if (turns.length > 0) expect(mw.auditedTools()).toEqual(stack.auditedTools())
        },
      ),
    )
  })

  it('concurrent requests with different tools are each audited against their own', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const mw = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    let release: () => void = () => undefined
    const gate = new Promise<void>((r) => (release = r))
    // request A's stream is still open when request B, with other tools, comes and goes
    const partsA = new ReadableStream<unknown>({
      start: async (c) => {
        await gate
        c.enqueue(callPart('a1', 'read', '{"path":"x","ffset":1}'))
        c.close()
      },
    })
    const outA = await mw.wrapStream({
      doGenerate: async () => Promise.reject(new Error('no')),
      doStream: async () => ({ stream: partsA }),
      params: params([{ name: 'read', keys: ['path', 'offset'] }]),
      model: {},
    } as never)
    await runGenerate(
      mw,
      params([{ name: 'read', keys: ['path', 'ffset'] }]),
      generated([callPart('b1', 'read', '{"path":"x","ffset":1}')]),
    )
    release()
    const reader = (outA as { stream: ReadableStream<unknown> }).stream.getReader()
    while (!(await reader.read()).done);
    expect(warnings.map((w) => [w.id, w.unknownKeys])).toEqual([['a1', ['ffset']]])
  })

  it('says once when a request lists tools that declare nothing, and is checked like withUnknownKeyAudit', async () => {
    const diagnostics: Array<AuditDiagnostic> = []
    const mw = unknownKeyAuditMiddleware({ onDiagnostic: (d) => void diagnostics.push(d) })
    await runGenerate(mw, params([{ name: 'ping', keys: [] }]), generated([]))
    await runGenerate(mw, params([{ name: 'ping', keys: [] }]), generated([]))
    expect(diagnostics).toEqual([{ _tag: 'NothingToAudit', tools: 1 }])
    expect(() => unknownKeyAuditMiddleware({ onWran: () => undefined } as never)).toThrow(
      /unknownKeyAuditMiddleware: unknown option "onWran"/,
    )
    expect(() => unknownKeyAuditMiddleware({ maxPairs: 0 })).toThrow(
      /unknownKeyAuditMiddleware: maxPairs must be a whole number of at least 1, got number 0/,
    )
    expect(() => unknownKeyAuditMiddleware({ onWarn: (_a: unknown, _b: unknown) => undefined } as never)).toThrow(
      /option "onWarn" must take at most 1 parameter/,
    )
  })
})
