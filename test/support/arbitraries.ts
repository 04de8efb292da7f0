// Arbitraries shared by every property: calls as models really send them, garbage
// included, and keys that are data (`__proto__`, NUL, …).
import fc from 'fast-check'
import type { ToolCall } from '../../src/index.js'

/** Keys a model may send: ordinary names, prototype names, odd characters. */
export const keyArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'path',
    'offset',
    'length',
    'reason',
    'reasons',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'the rest',
    '',
    '\u0000',
    'a\u0000b',
  ),
  fc.string({ maxLength: 8 }),
)

export const toolNameArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('fs_read', 'fs_write', 'web_get', '__proto__', 'constructor', 'a\u0000b'),
  fc.string({ minLength: 1, maxLength: 10 }),
)

/** A JSON object with arbitrary keys, built with own properties only. */
export const argsObjectArb: fc.Arbitrary<Record<string, unknown>> = fc
  .uniqueArray(fc.tuple(keyArb, fc.jsonValue({ maxDepth: 1 })), { selector: ([k]) => k, maxLength: 6 })
  .map((entries) => {
    const o: Record<string, unknown> = {}
    for (const [k, v] of entries)
      Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
    return o
  })

/** Raw `arguments` values: JSON strings, objects, and garbage. */
export const rawArgsArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: argsObjectArb.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: argsObjectArb },
  { weight: 1, arbitrary: fc.constantFrom('', '   ', '{', '[1,2]', 'null', '42', '"s"', undefined, null, 7, [1]) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
)

/** A well-formed call to one of `names`. */
export const wellFormedCallArb = (names: fc.Arbitrary<string> = toolNameArb): fc.Arbitrary<ToolCall> =>
  fc
    .record({ id: fc.string({ maxLength: 6 }), name: names, args: rawArgsArb })
    .map(({ id, name, args }) => ({ id, type: 'function', function: { name, arguments: args } }) as ToolCall)

const throwingCall = (): unknown =>
  new Proxy(
    {},
    {
      get: () => {
        throw new Error('boom')
      },
      ownKeys: () => {
        throw new Error('boom')
      },
    },
  )

/** Anything at all where a call should be: garbage, Proxies, getters that throw. */
export const garbageCallArb: fc.Arbitrary<ToolCall> = fc
  .oneof(
    fc.constantFrom<unknown>(
      null,
      undefined,
      'call',
      42,
      [],
      {},
      { function: null },
      { id: 'x', function: {} },
      { id: 'y', function: { name: 7 } },
    ),
    fc.constant(null).map(() => throwingCall()),
    fc.constant(null).map(() =>
      Object.defineProperty({ id: 'g' }, 'function', {
        enumerable: true,
        get: () => {
          throw new Error('getter')
        },
      }),
    ),
  )
  .map((u) => u as ToolCall)

export const anyCallArb = (names?: fc.Arbitrary<string>): fc.Arbitrary<ToolCall> =>
  fc.oneof({ weight: 5, arbitrary: wellFormedCallArb(names) }, { weight: 1, arbitrary: garbageCallArb })

/**
 * How a batch itself can be hostile, not only its calls: a slot whose getter throws, a
 * Proxy over the array that throws on some reads, holes, a length that lies, a length
 * that cannot be read at all.
 */
export type Hostility = 'throwing-slot' | 'proxy' | 'holes' | 'longer-length' | 'shorter-length' | 'throwing-length'

const hostile = (calls: ReadonlyArray<ToolCall>, how: Hostility, at: number): ReadonlyArray<ToolCall> => {
  const arr = [...calls]
  const i = calls.length === 0 ? 0 : at % calls.length
  // so that fast-check can print a counterexample without reading the hostile parts
  Object.defineProperty(arr, fc.toStringMethod, {
    value: () => `hostile batch (${how} at ${i}) of ${calls.length} calls`,
  })
  const boom = (): never => {
    throw new Error(`slot ${i} refuses to be read`)
  }
  switch (how) {
    case 'throwing-slot':
      if (arr.length === 0) arr.push(undefined as unknown as ToolCall)
      return Object.defineProperty(arr, i, { get: boom, enumerable: true })
    case 'proxy':
      return new Proxy(arr, { get: (t, k, r) => (k === String(i) ? boom() : Reflect.get(t, k, r)) })
    case 'holes': {
      const holey = new Array<ToolCall>(arr.length + 2)
      arr.forEach((c, j) => {
        if (j !== i) holey[j] = c
      })
      Object.defineProperty(holey, fc.toStringMethod, {
        value: () => `batch with holes at ${i}, ${arr.length + 1} and ${arr.length + 2}`,
      })
      return holey
    }
    case 'longer-length':
      return new Proxy(arr, { get: (t, k, r) => (k === 'length' ? t.length + 2 : Reflect.get(t, k, r)) })
    case 'shorter-length':
      return new Proxy(arr, { get: (t, k, r) => (k === 'length' ? Math.max(0, t.length - 1) : Reflect.get(t, k, r)) })
    case 'throwing-length':
      return new Proxy(arr, { get: (t, k, r) => (k === 'length' ? boom() : Reflect.get(t, k, r)) })
  }
}

export const hostilityArb: fc.Arbitrary<Hostility> = fc.constantFrom(
  'throwing-slot',
  'proxy',
  'holes',
  'longer-length',
  'shorter-length',
  'throwing-length',
)

/** Batches of calls as models send them, garbage calls among them; the batch itself well formed. */
export const plainBatchArb = (names?: fc.Arbitrary<string>): fc.Arbitrary<ReadonlyArray<ToolCall>> =>
  fc.array(anyCallArb(names), { maxLength: 8 })

/** Batches of calls as models send them, garbage calls among them, and now and then a hostile batch. */
export const batchArb = (names?: fc.Arbitrary<string>): fc.Arbitrary<ReadonlyArray<ToolCall>> =>
  fc.oneof(
    { weight: 4, arbitrary: plainBatchArb(names) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(anyCallArb(names), { maxLength: 6 }), hostilityArb, fc.nat())
        .map(([calls, how, at]) => hostile(calls, how, at)),
    },
  )

/** The number of results a layer that answers for a provider owes a batch: its length, as read; 1 (a refusal) when it cannot be read. */
export const owedResults = (calls: ReadonlyArray<unknown>): number => {
  try {
    return calls.length
  } catch {
    return 1
  }
}

/** Whether a batch's length can be read. */
export const lengthReadable = (calls: ReadonlyArray<unknown>): boolean => {
  try {
    return typeof calls.length === 'number'
  } catch {
    return false
  }
}
