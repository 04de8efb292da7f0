import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import { isNone, isSome } from 'fp-ts/lib/Option.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../../src/index.js'
import { REASON_PARAM, fromTools, parseArgs, withReasons, withUnknownKeyAudit } from '../../src/index.js'
import { DEFAULT_REASON_DESCRIPTION, addReasonParam, stripReason } from '../../src/combinators/Reasons.js'
import { answersOnePerCall, behavingProvider, isLazy, listingFailurePassesThrough } from '../laws.js'
import { argsObjectArb, plainBatchArb } from '../support/arbitraries.js'
import {
  batchingProvider,
  call,
  decl,
  failingProvider,
  okResult,
  recordingProvider,
  rejectingProvider,
} from '../support/fakes.js'
import { runExample } from '../support/examples.js'

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

const listOf = async (p: Provider<unknown>): Promise<ReadonlyArray<ToolDeclaration>> => {
  const out = await p.toolsForLlm()
  if (out._tag === 'Left') throw new Error('the listing failed')
  return out.right
}

const resultsOf = async (p: Provider<unknown>, calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
  const out = await p.executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error('the batch failed')
  return out.right
}

const propertiesOf = (d: ToolDeclaration | undefined): Readonly<Record<string, unknown>> =>
  (d?.function.parameters?.['properties'] ?? {}) as Readonly<Record<string, unknown>>

const deepFreeze = <A>(a: A): A => {
  if (typeof a === 'object' && a !== null) {
    for (const v of Object.values(a)) deepFreeze(v)
    Object.freeze(a)
  }
  return a
}

/** A fresh listed layer over a recording provider. */
const listed = async (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer?: Parameters<typeof recordingProvider>[1],
): Promise<{
  readonly layer: ReturnType<ReturnType<typeof withReasons>>
  readonly inner: ReturnType<typeof recordingProvider>
}> => {
  const inner = recordingProvider(declarations, answer)
  const layer = withReasons()(inner)
  await layer.toolsForLlm()
  return { layer, inner }
}

// -------------------------------------------------------------------------------------
// construction
// -------------------------------------------------------------------------------------

describe('withReasons: construction', () => {
  it('names an unknown option', () => {
    expect(() => withReasons({ descripton: 'x' } as never)).toThrow(TypeError)
    expect(() => withReasons({ descripton: 'x' } as never)).toThrow(
      /withReasons: unknown option "descripton" \(known options: description\)/,
    )
  })

  it.each([
    [{ description: 7 }, /description must be string, got number 7/],
    [{ description: '  ' }, /"description" must not be blank/],
    ['fast', /options must be an object/],
  ])('refuses %j', (options, message) => {
    expect(() => withReasons(options as never)).toThrow(message)
  })

  it('refuses a non-provider', () => {
    expect(() => withReasons()({ toolsForLlm: TE.right([]) } as never)).toThrow(
      /withReasons: expected a provider.*`executeToolCalls` is not a function/,
    )
  })

  it('keeps no state between layers', async () => {
    const make = withReasons()
    const a = make(recordingProvider([decl('a')]))
    const b = make(recordingProvider([decl('b')]))
    await a.toolsForLlm()
    expect(a.augmentedTools()).toEqual(['a'])
    expect(b.augmentedTools()).toEqual([])
  })
})

// -------------------------------------------------------------------------------------
// catalogue
// -------------------------------------------------------------------------------------

describe('withReasons: catalogue', () => {
  it('adds an optional reason string with a one-sentence description, never required', async () => {
    const d = decl('fs_read', ['path'], { required: ['path'] })
    const { layer } = await listed([d])
    const [out] = await listOf(layer)
    expect(out?.function.parameters).toEqual({
      type: 'object',
      properties: { path: { type: 'string' }, reason: { type: 'string', description: DEFAULT_REASON_DESCRIPTION } },
      required: ['path'],
    })
    expect(DEFAULT_REASON_DESCRIPTION).toMatch(/^[^.]*why[^.]*human[^.]*\.$/)
    expect(REASON_PARAM).toBe('reason')
  })

  it('uses the description option', async () => {
    const layer = withReasons({ description: 'Why?' })(recordingProvider([decl('a', ['x'])]))
    const [out] = await listOf(layer)
    expect(propertiesOf(out)['reason']).toEqual({ type: 'string', description: 'Why?' })
  })

  it('copies along the changed path only, and never mutates the inner objects', async () => {
    const pathSchema = { type: 'string' }
    const extra = { deep: true }
    const d = deepFreeze({
      type: 'function' as const,
      extra,
      function: {
        name: 'fs_read',
        description: 'read',
        parameters: { type: 'object', properties: { path: pathSchema }, additionalProperties: extra },
      },
    })
    const snapshot = JSON.stringify(d)
    const { layer } = await listed([d])
    const [out] = await listOf(layer)
    expect(JSON.stringify(d)).toBe(snapshot)
    expect(out).not.toBe(d)
    expect(out?.function).not.toBe(d.function)
    expect(out?.function.parameters).not.toBe(d.function.parameters)
    expect(propertiesOf(out)).not.toBe(d.function.parameters.properties)
    // everything off the path is shared, not copied
    expect((out as unknown as { extra: unknown }).extra).toBe(extra)
    expect(propertiesOf(out)['path']).toBe(pathSchema)
    expect(out?.function.parameters?.['additionalProperties']).toBe(extra)
    expect(out?.function.description).toBe('read')
  })

  it('creates properties when a declaration has none', async () => {
    const d: ToolDeclaration = { type: 'function', function: { name: 'now', parameters: { type: 'object' } } }
    const { layer } = await listed([d])
    const [out] = await listOf(layer)
    expect(Object.keys(propertiesOf(out))).toEqual(['reason'])
    expect(layer.augmentedTools()).toEqual(['now'])
  })

  it('keeps `__proto__` an ordinary key, in properties and as a tool name', async () => {
    const properties = JSON.parse('{"__proto__":{"type":"string"},"path":{}}') as Record<string, unknown>
    const d: ToolDeclaration = {
      type: 'function',
      function: { name: '__proto__', parameters: { type: 'object', properties } },
    }
    const { layer } = await listed([d])
    const [out] = await listOf(layer)
    const props = propertiesOf(out)
    expect(Object.keys(props)).toEqual(['__proto__', 'path', 'reason'])
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype)
    expect(layer.augmentedTools()).toEqual(['__proto__'])
  })

  describe('collision rule', () => {
    it.each([
      ['declares reason', decl('t', ['reason', 'x'])],
      ['requires reason', decl('t', ['x'], { required: ['reason'] })],
    ])('passes a declaration that %s through untouched and untracked; its reason is never stripped', async (_, d) => {
      const { layer, inner } = await listed([d])
      const [out] = await listOf(layer)
      expect(out).toBe(d)
      expect(layer.augmentedTools()).toEqual([])
      const c = call('1', 't', { x: 1, reason: 'real argument' })
      await resultsOf(layer, [c])
      expect(inner.rec.batches[0]?.[0]).toBe(c)
    })

    it('does not strip a name that is also listed with a real reason', async () => {
      const { layer, inner } = await listed([decl('t', ['x']), decl('t', ['reason'])])
      expect(layer.augmentedTools()).toEqual([])
      const c = call('1', 't', { reason: 'real' })
      await resultsOf(layer, [c])
      expect(inner.rec.batches[0]?.[0]).toBe(c)
    })
  })

  it('passes unreadable declarations through untouched and untracked', async () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom')
        },
      },
    )
    const unreadable: ReadonlyArray<unknown> = [
      null,
      'fs_read',
      { type: 'function' },
      { type: 'function', function: { name: 7, parameters: {} } },
      { type: 'function', function: { name: 'no_params' } },
      { type: 'function', function: { name: 'array_params', parameters: [] } },
      { type: 'function', function: { name: 'bad_props', parameters: { properties: 'path' } } },
      hostile,
    ]
    const { layer } = await listed([...unreadable, decl('ok', ['x'])] as ReadonlyArray<ToolDeclaration>)
    const out = await listOf(layer)
    unreadable.forEach((u, i) => expect(out[i]).toBe(u))
    expect(layer.augmentedTools()).toEqual(['ok'])
  })

  it('passes a listing that is not an Either, or whose declarations throw when listed, through as it came, augmenting nothing', async () => {
    const throwing = new Proxy([decl('a', ['x'])], {
      get: (target, k, receiver) => {
        if (k === Symbol.iterator || k === 'length') throw new Error('no listing')
        return Reflect.get(target, k, receiver) as unknown
      },
    })
    for (const listing of [null, undefined, 'tools', { _tag: 'Right', right: throwing }]) {
      const inner = {
        toolsForLlm: () => Promise.resolve(listing),
        executeToolCalls: () => TE.right([]),
      } as unknown as Provider<string>
      const layer = withReasons()(inner)
      expect(await layer.toolsForLlm()).toBe(listing)
      expect(layer.augmentedTools()).toEqual([])
    }
  })

  it('leaves as it came a declaration that can be read once but throws when read again', () => {
    let reads = 0
    const fn = { name: 't', parameters: { type: 'object', properties: { x: {} } } }
    const d = {
      type: 'function',
      get function() {
        if (++reads > 1) throw new Error('read twice')
        return fn
      },
    }
    expect(isNone(addReasonParam('why')(d))).toBe(true)
    expect(reads).toBe(2)
  })

  it('returns the inner listing itself when nothing is augmented', async () => {
    const declarations = [decl('t', ['reason'])]
    const inner = recordingProvider(declarations)
    const first = await inner.toolsForLlm()
    const layer = withReasons()(inner)
    const out = await layer.toolsForLlm()
    expect(out._tag === 'Right' && out.right).toBe(first._tag === 'Right' && first.right)
  })

  it('augmentedTools is sorted, replaced wholesale by each successful listing, kept on a failed one', async () => {
    let step = 0
    const listings: ReadonlyArray<() => Promise<unknown>> = [
      () => Promise.resolve({ _tag: 'Right', right: [decl('zeta'), decl('alpha'), decl('mid')] }),
      () => Promise.resolve({ _tag: 'Left', left: 'down' }),
      () => Promise.reject(new Error('gone')),
      () => Promise.resolve({ _tag: 'Right', right: [decl('beta')] }),
      () => Promise.resolve({ _tag: 'Right', right: 'not an array' }),
    ]
    const inner = {
      toolsForLlm: () => (listings[step++] as () => Promise<never>)(),
      executeToolCalls: () => TE.right([]),
    } as Provider<string>
    const layer = withReasons()(inner)
    expect(layer.augmentedTools()).toEqual([])
    await layer.toolsForLlm()
    expect(layer.augmentedTools()).toEqual(['alpha', 'mid', 'zeta'])
    await layer.toolsForLlm()
    expect(layer.augmentedTools()).toEqual(['alpha', 'mid', 'zeta'])
    await layer.toolsForLlm().catch(() => undefined)
    expect(layer.augmentedTools()).toEqual(['alpha', 'mid', 'zeta'])
    await layer.toolsForLlm()
    expect(layer.augmentedTools()).toEqual(['beta'])
    expect(await layer.toolsForLlm()).toEqual({ _tag: 'Right', right: 'not an array' })
    expect(layer.augmentedTools()).toEqual([])
  })

  it('addReasonParam is none for what it leaves alone, some copy otherwise', () => {
    expect(isNone(addReasonParam('why')(null))).toBe(true)
    expect(isNone(addReasonParam('why')(decl('t', ['reason'])))).toBe(true)
    const d = decl('t', ['x'])
    const out = addReasonParam('why')(d)
    expect(isSome(out) && out.value).not.toBe(d)
    expect(Object.keys(propertiesOf(d))).toEqual(['x'])
  })

  it("offers no reason on a schema closed to other keys, and strips none from its calls: there reason stays the model's", async () => {
    const closed = (name: string, key: string): ToolDeclaration => ({
      type: 'function',
      function: {
        name,
        parameters: { type: 'object', properties: { x: { type: 'string' } }, [key]: false },
      },
    })
    const open: ToolDeclaration = {
      type: 'function',
      function: {
        name: 'open',
        parameters: { type: 'object', properties: {}, additionalProperties: { type: 'string' } },
      },
    }
    const listing = [closed('a', 'additionalProperties'), closed('u', 'unevaluatedProperties'), open]
    for (const d of listing.slice(0, 2)) expect(isNone(addReasonParam('why')(d))).toBe(true)
    const received: Array<unknown> = []
    const inner: Provider<never> = {
      toolsForLlm: TE.right(listing),
      executeToolCalls: (calls) => {
        received.push(...calls.map((c) => c.function.arguments))
        return TE.right(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'ok' })))
      },
    }
    const tools = withReasons()(inner)
    const listed = await tools.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right.slice(0, 2)).toStrictEqual(listing.slice(0, 2))
    expect(tools.augmentedTools()).toEqual(['open'])
    await tools.executeToolCalls([{ id: '1', function: { name: 'a', arguments: '{"x":"1","reason":"r"}' } }])()
    expect(received).toEqual(['{"x":"1","reason":"r"}'])
  })
})

// -------------------------------------------------------------------------------------
// calls
// -------------------------------------------------------------------------------------

describe('withReasons: calls', () => {
  it('strips reason from a string call, re-serialised as compact JSON, leaving the caller its call', async () => {
    const { layer, inner } = await listed([decl('fs_read', ['path'])])
    const raw = '{ "path": "/tmp", "reason": "look", "n": [1, 2] }'
    const c = { id: 'c1', type: 'function', function: { name: 'fs_read', arguments: raw }, extra: 1 } as ToolCall
    await resultsOf(layer, [c])
    const got = inner.rec.batches[0]?.[0]
    expect(got).not.toBe(c)
    expect(got).toEqual({
      id: 'c1',
      type: 'function',
      function: { name: 'fs_read', arguments: '{"path":"/tmp","n":[1,2]}' },
      extra: 1,
    })
    expect(c.function.arguments).toBe(raw)
  })

  it('strips reason from an object call, keeping an object', async () => {
    const { layer, inner } = await listed([decl('fs_read', ['path'])])
    const args = { path: '/tmp', reason: 'look' }
    await resultsOf(layer, [call('c1', 'fs_read', args, true)])
    expect(inner.rec.batches[0]?.[0]?.function.arguments).toEqual({ path: '/tmp' })
    expect(args).toEqual({ path: '/tmp', reason: 'look' })
  })

  it('hands the stripped call down with its arguments already read, so the layers below do not parse it again', async () => {
    const inner = batchingProvider([decl('fs_read', ['path'])])
    const layer = withReasons()(inner)
    await layer.toolsForLlm()
    const spy = vi.spyOn(JSON, 'parse')
    try {
      await resultsOf(layer, [
        call('c1', 'fs_read', { path: '/tmp', reason: 'r' }),
        call('c2', 'fs_read', { path: '/x' }),
      ])
      expect(spy).toHaveBeenCalledTimes(2)
      const below = inner.received[0]
      expect(below?.calls[0]?.function.arguments).toBe('{"path":"/tmp"}')
      expect(below?.argsAt(0)).toEqual({ _tag: 'Right', right: { path: '/tmp' } })
      expect(below?.argsAt(1)).toEqual({ _tag: 'Right', right: { path: '/x' } })
      expect(spy).toHaveBeenCalledTimes(2)
    } finally {
      spy.mockRestore()
    }
  })

  it.each([
    ['without a reason', call('1', 'fs_read', { path: '/tmp' })],
    ['to a tool not augmented', call('1', 'other', { reason: 'r' })],
    ['with unparsable arguments', call('1', 'fs_read', '{"reason":', true)],
    ['with array arguments', call('1', 'fs_read', '["reason"]', true)],
    [
      'with a reason that is not an own key',
      call('1', 'fs_read', Object.create({ reason: 'inherited' }) as object, true),
    ],
    ['that is garbage', { function: null } as unknown as ToolCall],
  ])('forwards a call %s as the very same object, in the very same array', async (_, c) => {
    const { layer, inner } = await listed([decl('fs_read', ['path'])])
    const calls = [c]
    await resultsOf(layer, calls)
    expect(inner.rec.batches[0]).toBe(calls)
    expect(inner.rec.batches[0]?.[0]).toBe(c)
  })

  it('forwards calls untouched before any listing', async () => {
    const inner = recordingProvider([decl('fs_read', ['path'])])
    const layer = withReasons()(inner)
    const calls = [call('1', 'fs_read', { reason: 'r' })]
    await resultsOf(layer, calls)
    expect(inner.rec.batches[0]).toBe(calls)
  })

  it('copies only the calls it strips, in order', async () => {
    const { layer, inner } = await listed([decl('a', ['x'])])
    const keep1 = call('1', 'a', { x: 1 })
    const strip = call('2', 'a', { x: 2, reason: 'r' })
    const keep2 = call('3', 'b', { reason: 'r' })
    await resultsOf(layer, [keep1, strip, keep2])
    const got = inner.rec.batches[0] ?? []
    expect(got[0]).toBe(keep1)
    expect(got[1]).not.toBe(strip)
    expect(got[1]?.function.arguments).toBe('{"x":2}')
    expect(got[2]).toBe(keep2)
  })

  it('returns the inner results as the very objects', async () => {
    const { layer, inner } = await listed([decl('a')])
    const out = await resultsOf(layer, [call('1', 'a', { reason: 'r' }), call('2', 'a')])
    expect(out[0]).toBe(inner.rec.results[0]?.[0])
    expect(out[1]).toBe(inner.rec.results[0]?.[1])
  })

  it('stripReason returns a call that throws when read as the very call', () => {
    const hostile = {
      id: '1',
      function: {
        name: 'a',
        get arguments(): never {
          throw new Error('unreadable')
        },
      },
    } as unknown as ToolCall
    expect(stripReason(new Set(['a']))(hostile)).toBe(hostile)
  })

  // sent unchanged, its reason would reach the provider: answered here instead
  it('answers a call whose arguments cannot be read from the batch with an error, never sends its reason, and the rest as usual', async () => {
    const inner = batchingProvider([decl('a', ['x'])])
    const layer = withReasons()(inner)
    await layer.toolsForLlm()
    const bad = call('1', 'a', { x: 1, reason: 'r' })
    const good = call('2', 'a', { x: 2, reason: 'r' })
    const batch = {
      calls: [bad, good],
      argsAt: (i: number) => {
        if (i === 0) throw new Error('no args')
        return parseArgs(good.function.arguments)
      },
    }
    const out = await layer.executeBatch(batch)()
    expect(out._tag === 'Right' && out.right.map((r) => r.tool_call_id)).toEqual(['1', '2'])
    expect(out._tag === 'Right' && out.right[0]).toEqual({
      role: 'tool',
      tool_call_id: '1',
      content:
        'the arguments of this call to "a" could not be read (no args), so its reason could not be taken out; it was not run',
      is_error: true,
    })
    const below = inner.received[0]
    expect(below?.calls.map((c) => c.function.arguments)).toEqual(['{"x":2}'])
  })

  it('never sends the reason of a call whose arguments throw when the layer copies them', async () => {
    const inner = batchingProvider([decl('a', ['text'])])
    const layer = withReasons()(inner)
    await layer.toolsForLlm()
    let reads = 0
    const args = {
      get text() {
        if (reads++ === 0) throw new Error('not ready')
        return 'hi'
      },
      reason: 'private',
    }
    const out = await layer.executeToolCalls([
      { id: '1', type: 'function', function: { name: 'a', arguments: args as never } },
    ])()
    expect(out._tag === 'Right' && out.right[0]?.is_error).toBe(true)
    expect(inner.received).toEqual([])
  })

  it('stripReason returns the very call when it has nothing to do', () => {
    const c = call('1', 'a', { x: 1 })
    expect(stripReason(new Set(['a']))(c)).toBe(c)
    expect(stripReason(new Set())(call('1', 'a', { reason: 'r' })).function.arguments).toBe('{"reason":"r"}')
  })
})

// -------------------------------------------------------------------------------------
// never fails a batch
// -------------------------------------------------------------------------------------

describe('withReasons: never fails a batch', () => {
  const calls = [call('1', 'a', { reason: 'r' }), call('2', 'b')]

  it.each<[string, Provider<unknown>, RegExp]>([
    ['a Left', failingProvider('inner failed'), /^the tool provider failed: inner failed$/],
    ['a rejection', rejectingProvider(new Error('socket closed')), /^the tool provider failed: socket closed$/],
    [
      'a throw',
      {
        toolsForLlm: TE.right([]),
        executeToolCalls: () => {
          throw new Error('bad')
        },
      },
      /^the tool provider failed: bad$/,
    ],
  ])('answers %s with one is_error result per call, in order', async (_, inner, message) => {
    const out = await resultsOf(withReasons()(inner), calls)
    expect(out).toEqual([
      { role: 'tool', tool_call_id: '1', is_error: true, content: expect.stringMatching(message) },
      { role: 'tool', tool_call_id: '2', is_error: true, content: expect.stringMatching(message) },
    ])
  })

  it('fills the gaps of a short answer', async () => {
    const { layer } = await listed([decl('a')], (cs) => cs.slice(0, 1).map(okResult))
    const out = await resultsOf(layer, calls)
    expect(out[0]?.is_error).toBeUndefined()
    expect(out[1]).toEqual({
      role: 'tool',
      tool_call_id: '2',
      is_error: true,
      content: expect.stringMatching(/no result/),
    })
  })

  it('answers an empty batch with no results', async () => {
    const { layer } = await listed([decl('a')])
    expect(await resultsOf(layer, [])).toEqual([])
  })
})

// -------------------------------------------------------------------------------------
// laws and properties
// -------------------------------------------------------------------------------------

const catalogue: ReadonlyArray<ToolDeclaration> = [
  decl('fs_read', ['path', 'offset']),
  decl('fs_write', ['path', 'content']),
  decl('__proto__', ['x']),
  decl('keeps', ['reason', 'x']),
]
const augmented = new Set(['fs_read', 'fs_write', '__proto__'])
const namesArb = fc.constantFrom('fs_read', 'fs_write', '__proto__', 'keeps', 'unknown', 'constructor')

const shouldStrip = (c: ToolCall): boolean => {
  try {
    if (!augmented.has(c.function.name)) return false
    const args = parseArgs(c.function.arguments)
    return args._tag === 'Right' && hasOwn(args.right, REASON_PARAM)
  } catch {
    return false
  }
}

/** A batch of readable calls to augmented tools, each with or without a reason. */
const reasonedBatchArb = fc.array(
  fc.record({
    id: fc.string({ maxLength: 4 }),
    name: fc.constantFrom('fs_read', 'fs_write', '__proto__'),
    args: argsObjectArb,
    reason: fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined }),
    asString: fc.boolean(),
  }),
  { maxLength: 6 },
)

interface CallRecord {
  readonly id: string
  readonly name: string
  readonly args: Record<string, unknown>
  readonly reason: unknown
  readonly asString: boolean
}

const toCall = (r: CallRecord): ToolCall => {
  const args: Record<string, unknown> = { ...r.args }
  if (r.reason !== undefined)
    Object.defineProperty(args, REASON_PARAM, { value: r.reason, enumerable: true, writable: true, configurable: true })
  return { id: r.id, type: 'function', function: { name: r.name, arguments: r.asString ? JSON.stringify(args) : args } }
}

const reasonNeverReaches = (make: (inner: Provider<string>) => Provider<unknown>) =>
  fc.asyncProperty(reasonedBatchArb, async (records) => {
    const calls = records.map(toCall)
    const inner = behavingProvider(catalogue, () => 'ok')
    const layer = make(inner)
    await layer.toolsForLlm()
    await layer.executeToolCalls(calls)()
    const got = inner.seen[0] ?? []
    expect(got).toHaveLength(calls.length)
    got.forEach((c, i) => {
      const args = parseArgs(c.function.arguments)
      expect(args._tag).toBe('Right')
      if (args._tag !== 'Right') return
      expect(hasOwn(args.right, REASON_PARAM)).toBe(false)
      // everything else arrives as the model sent it
      const sent = parseArgs(calls[i]?.function.arguments)
      const others = sent._tag === 'Right' ? Object.entries(sent.right).filter(([k]) => k !== REASON_PARAM) : []
      expect(Object.entries(args.right)).toEqual(others)
      expect(typeof c.function.arguments).toBe(typeof calls[i]?.function.arguments)
      expect(c.id).toBe(calls[i]?.id)
    })
  })

describe('withReasons: laws', () => {
  it('answers one result per call, in order, whatever the inner provider does', async () => {
    await fc.assert(answersOnePerCall(withReasons(), catalogue, namesArb))
  })

  it('is lazy', async () => {
    await isLazy(withReasons(), [call('1', 'a', { reason: 'r' })])
  })

  it('passes a listing failure through', async () => {
    await listingFailurePassesThrough(withReasons())
  })

  it('property: the reason never reaches the provider of an augmented tool', async () => {
    await fc.assert(reasonNeverReaches(withReasons()))
  })

  it('property: the property can fail — a layer that forgets to strip is caught', async () => {
    const forgetful = (inner: Provider<string>): Provider<unknown> => {
      const layer = withReasons()(inner)
      return { toolsForLlm: layer.toolsForLlm, executeToolCalls: inner.executeToolCalls }
    }
    const out = await fc.check(reasonNeverReaches(forgetful))
    expect(out.failed).toBe(true)
  })

  it('property: every call not stripped is forwarded as the very same object', async () => {
    await fc.assert(
      fc.asyncProperty(plainBatchArb(namesArb), async (calls) => {
        const inner = behavingProvider(catalogue, () => 'ok')
        const layer = withReasons()(inner)
        await layer.toolsForLlm()
        await layer.executeToolCalls(calls)()
        const got = inner.seen[0] ?? []
        expect(got).toHaveLength(calls.length)
        if (!calls.some(shouldStrip)) expect(got).toBe(calls)
        calls.forEach((c, i) => {
          if (shouldStrip(c)) expect(got[i]).not.toBe(c)
          else expect(got[i]).toBe(c)
        })
      }),
    )
  })

  it('property: the caller’s calls are never modified', async () => {
    await fc.assert(
      fc.asyncProperty(reasonedBatchArb, async (records) => {
        const calls = records.map(toCall)
        const before = calls.map((c) => JSON.stringify(c))
        const layer = withReasons()(behavingProvider(catalogue, () => 'ok'))
        await layer.toolsForLlm()
        await layer.executeToolCalls(calls)()
        expect(calls.map((c) => JSON.stringify(c))).toEqual(before)
      }),
    )
  })
})

// -------------------------------------------------------------------------------------
// composition
// -------------------------------------------------------------------------------------

describe('withReasons: under the audit, over fromTools', () => {
  it('the audit is silent about reason, and the tool never sees it', async () => {
    const warnings: Array<string> = []
    const got: Array<unknown> = []
    const tools = pipe(
      fromTools([
        {
          declaration: decl('echo', ['text']),
          run: (a) => {
            got.push(a)
            return TE.right(String(a['text']))
          },
        },
      ]),
      withReasons(),
      withUnknownKeyAudit({
        onWarn: (w) => () => {
          warnings.push(...w.unknownKeys)
        },
      }),
    )
    const [d] = await listOf(tools)
    expect(Object.keys(propertiesOf(d))).toEqual(['text', 'reason'])
    const out = await resultsOf(tools, [call('1', 'echo', { text: 'hi', reason: 'demo', txet: 'typo' })])
    expect(out).toEqual([{ role: 'tool', tool_call_id: '1', content: 'hi' }])
    expect(got).toEqual([{ text: 'hi', txet: 'typo' }])
    expect(warnings).toEqual(['txet'])
  })
})

describe('examples/reasons.ts', () => {
  it('runs: the model sees reason, the tool never gets it, the host log keeps it', () => {
    const r = runExample('reasons.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(
      /the model is shown:\n {2}read_file .*"reason":\{"type":"string","description":"In one sentence/,
    )
    expect(r.stdout).toMatch(/call_1 read_file — reason: "The user asked what is on their shopping list\."/)
    expect(r.stdout).toMatch(/tool received: \{"path":"\/notes\.txt"\}\n/)
    expect(r.stdout).not.toMatch(/tool received: .*reason/)
    expect(r.stdout).toMatch(/call_1: buy milk/)
    expect(r.stdout).toMatch(/still has its reason: yes/)
  })
})
