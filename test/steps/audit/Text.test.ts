// The clean call decided from its text (steps/audit/Text.ts): whatever the text, an accepted one is a JSON object
// whose keys are all accepted and whose values hold no key (the oracle: JSON.parse, and a walk of what it gives);
// every such object, as JSON.stringify writes it, is accepted; and the audit says the same of a batch with the
// text check as without it.
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { catalogueOf, toleratedOf } from '../../../src/steps/audit/Catalogue.js'
import { checkBatch } from '../../../src/steps/audit/Check.js'
import { cleanText, compileSchema } from '../../../src/steps/audit/Schema.js'
import { pairStats, emptySeenSet } from '../../../src/steps/audit/SeenSet.js'
import { MAX_TEXT_PLACES, cleanTextTest } from '../../../src/steps/audit/Text.js'
import { batchOf } from '../../../src/steps/Batch.js'
import type { ToolCall } from '../../../src/kernel/model.js'
import { keyArb } from '../../support/arbitraries.js'

const ACCEPTED = ['path', 'offset', '__proto__', 'the rest', '', 'é', '\ud800', 'a/b', 'x.y']

// what the text check promises of a text it accepts, read from JSON.parse's own result
const holdsOnlyAccepted = (text: string, accepted: ReadonlySet<string>): boolean => {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return false
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const isScalar = (u: unknown): boolean => u === null || typeof u !== 'object'
  return Object.keys(v).every((k) => {
    const value = (v as Record<string, unknown>)[k]
    return accepted.has(k) && (isScalar(value) || (Array.isArray(value) && value.every(isScalar)))
  })
}

const scalarArb = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
)
const valueArb = fc.oneof(scalarArb, fc.array(scalarArb, { maxLength: 4 }))

const objectOf = (entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> => {
  const o: Record<string, unknown> = {}
  for (const [k, v] of entries)
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  return o
}

// texts near the language: objects over keys accepted and not, values of every kind, laid out three ways, and
// then cut or spliced, so a text the check accepts by mistake would be found
const nearTextArb = fc
  .tuple(
    fc.uniqueArray(
      fc.tuple(fc.oneof(fc.constantFrom(...ACCEPTED), keyArb), fc.oneof(valueArb, fc.jsonValue({ maxDepth: 2 }))),
      { selector: ([k]) => k, maxLength: 5 },
    ),
    fc.constantFrom(undefined, 2, '\t'),
  )
  .map(([entries, indent]) => JSON.stringify(objectOf(entries), null, indent))

const mutatedArb = fc
  .tuple(nearTextArb, fc.nat(), fc.nat({ max: 3 }), fc.string({ unit: 'binary', maxLength: 3 }))
  .map(([t, at, cut, put]) => {
    const i = t.length === 0 ? 0 : at % t.length
    return t.slice(0, i) + put + t.slice(i + cut)
  })

describe('cleanTextTest', () => {
  // made inside each test, not when the file loads, so a mutant of its making is live in the test
  const clean = (text: string): boolean => (cleanTextTest(ACCEPTED) as (text: string) => boolean)(text)
  const accepted = new Set(ACCEPTED)

  it('whatever the text, one it accepts is a JSON object of accepted keys whose values hold no key', () => {
    fc.assert(
      fc.property(fc.oneof(nearTextArb, mutatedArb, fc.string({ unit: 'binary' }), fc.json()), (text) => {
        if (clean(text)) expect(holdsOnlyAccepted(text, accepted)).toBe(true)
      }),
    )
  })

  it('every object of accepted keys and scalar values, or arrays of them, is accepted as JSON.stringify writes it', () => {
    // a key it writes as itself (JSON.stringify escapes a lone surrogate: such a key is matched only as sent raw)
    const plain = ACCEPTED.filter((k) => JSON.stringify(k) === `"${k}"`)
    expect(plain).toHaveLength(ACCEPTED.length - 1)
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.constantFrom(...plain), valueArb), { selector: ([k]) => k, maxLength: 6 }),
        fc.constantFrom(undefined, 1, '\t', ' \r\n'.slice(0, 1)),
        (entries, indent) => {
          expect(clean(JSON.stringify(objectOf(entries), null, indent))).toBe(true)
        },
      ),
    )
  })

  it('refuses what could hold a key, or is no JSON object: read by the parse instead', () => {
    for (const text of [
      '{"path":{}}',
      '{"path":[{}]}',
      '{"path":[[1]]}',
      '{"ffset":1}',
      '{"p\\u0061th":1}', // an accepted key written with an escape
      '[1]',
      '"path"',
      '{"path":1,}',
      '{"path":01}',
      '{"path":"a\u0001"}',
      '\ufeff{}',
      '{"path":1}x',
      '{',
      '{x',
      '{ x',
      '{"path":1} \n x',
      '{"path":1',
      '{"path":1,"offset":2',
      '{"path":1 "offset":2}',
      '',
      '   ',
      '{"path" 1}',
      '{"path":tru}',
      '{"path":"\\x"}',
    ])
      expect(clean(text), text).toBe(false)
    for (const text of [
      '{}',
      ' {\n"path" : -0.5e+3 , "offset":[ true ,null, "\\u00e9\\n" ] }\r\n',
      '{"path":1,"path":2}',
      '{"path":1} \t\n\r',
      '{"\ud800":"raw"}', // a lone surrogate sent raw, as JSON.parse reads it
    ])
      expect(clean(text), text).toBe(true)
  })

  it('leaves out a key JSON must escape, and has nothing to accept without a key it can write', () => {
    const withQuote = cleanTextTest(['a"b', 'c\\d', 'e\nf', 'ok']) as (text: string) => boolean
    expect(withQuote('{"ok":1}')).toBe(true)
    expect(withQuote(JSON.stringify({ 'a"b': 1 }))).toBe(false)
    expect(withQuote(JSON.stringify({ 'c\\d': 1 }))).toBe(false)
    // nor is such a key read as sent raw (no JSON text holds one)
    expect(withQuote('{"c\\d":1}')).toBe(false)
    expect(withQuote('{"e\nf":1}')).toBe(false)
    expect(cleanTextTest(['a"b'])).toBeUndefined()
    expect(cleanTextTest([])).toBeUndefined()
  })
})

describe('cleanText', () => {
  const of = (schema: unknown, tolerated?: ReadonlySet<string>) => cleanText(compileSchema(schema), tolerated)

  it('accepts the keys the root declares, `reason`, and the tolerated ones', () => {
    const clean = of(
      { type: 'object', properties: { path: {}, tags: { type: 'array', items: { type: 'string' } } } },
      new Set(['_meta']),
    )
    expect(clean?.('{"path":"/a","tags":["x","y"],"reason":"r","_meta":"m"}')).toBe(true)
    expect(clean?.('{"path":"/a","_other":1}')).toBe(false)
  })

  it('follows the places below: an object decided by name, an array read against one place, each value as it allows', () => {
    const clean = of({
      type: 'object',
      properties: {
        opts: { type: 'object', properties: { enc: {} } },
        edits: { type: 'array', items: { type: 'object', properties: { oldText: {}, newText: {} } } },
        pair: { type: 'array', prefixItems: [{ type: 'object', properties: { a: {} } }] },
        shape: {
          oneOf: [
            { type: 'object', properties: { kind: { const: 'circle' }, r: {} } },
            { type: 'object', properties: { kind: { const: 'square' }, side: {} } },
          ],
        },
      },
    })
    expect(clean?.('{"opts":{"enc":"utf8"},"edits":[{"oldText":"a","newText":"b"},{"newText":"c"}]}')).toBe(true)
    expect(clean?.('{"opts":{"enc":"utf8","encodng":"x"}}')).toBe(false)
    expect(clean?.('{"edits":[{"oldText":"a","newtext":"b"}]}')).toBe(false)
    // `reason` is tolerated at the top only
    expect(clean?.('{"opts":{"enc":"utf8","reason":"r"}}')).toBe(false)
    // a tuple's and a discriminated union's objects are parsed; their scalars, and arrays of scalars, are not
    expect(clean?.('{"pair":[{"a":1}]}')).toBe(false)
    expect(clean?.('{"shape":{"kind":"circle","r":1}}')).toBe(false)
    expect(clean?.('{"pair":[1,2],"shape":"circle","opts":[null]}')).toBe(true)
  })

  it('reads a tuple, and an array some branch takes whole, as scalars only: their objects are parsed', () => {
    // position 0 is read against the tuple's own place (a), the rest against the items' (c)
    const tuple = of({
      type: 'object',
      properties: {
        t: {
          type: 'array',
          prefixItems: [{ type: 'object', properties: { a: {} } }],
          items: { type: 'object', properties: { c: {} } },
        },
      },
    })
    expect(tuple?.('{"t":[{"c":1}]}')).toBe(false)
    expect(tuple?.('{"t":[1,"x"]}')).toBe(true)
    // two branches, one a tuple: position 0 is its tuple's place or the other's items, never its own items
    const either = of({
      type: 'object',
      properties: {
        t: {
          anyOf: [
            {
              type: 'array',
              prefixItems: [{ type: 'object', properties: { a: {} } }],
              items: { type: 'object', properties: { c: {} } },
            },
            { type: 'array', items: { type: 'object', properties: { b: {} } } },
          ],
        },
      },
    })
    expect(either?.('{"t":[{"c":1}]}')).toBe(false)
    // a branch that takes any array: nothing in it is heard, and the expression cannot write any JSON
    const open = of({
      type: 'object',
      properties: {
        t: { anyOf: [{ type: 'array', items: { type: 'object', properties: { a: {} } } }, { type: 'array' }] },
      },
    })
    expect(open?.('{"t":[{"a":1}]}')).toBe(false)
    expect(open?.('{"t":[1]}')).toBe(true)
  })

  it('at the top, reads `reason` and the tolerated names as any value that holds no key, and a declared one as declared', () => {
    const declared = of({ type: 'object', properties: { reason: { type: 'object', properties: { why: {} } }, a: {} } })
    expect(declared?.('{"reason":{"why":"x"}}')).toBe(true)
    expect(declared?.('{"reason":"x","a":[1]}')).toBe(true)
    const plain = of({ type: 'object', properties: { a: {} } }, new Set(['_meta']))
    expect(plain?.('{"reason":{"why":"x"}}')).toBe(false)
    expect(plain?.('{"_meta":[1,2],"reason":null}')).toBe(true)
  })

  it('follows a schema that refers to itself only so far: a call deeper is parsed', () => {
    const clean = of({ type: 'object', properties: { name: {}, child: { $ref: '#' } } })
    const nest = (n: number): string => (n === 0 ? '{"name":"x"}' : `{"name":"x","child":${nest(n - 1)}}`)
    expect(clean?.(nest(MAX_TEXT_PLACES))).toBe(true)
    expect(clean?.(nest(MAX_TEXT_PLACES + 1))).toBe(false)
    // the places are followed in the schema's order, depth first, until there are MAX_TEXT_PLACES: where a schema
    // branches into itself, the first branch takes them all, and the others' objects are parsed
    const branching = of({ type: 'object', properties: { a: { $ref: '#' }, b: { $ref: '#' }, c: { $ref: '#' } } })
    expect(branching?.('{"a":{"a":{"a":{}}},"c":1}')).toBe(true)
    expect(branching?.('{"a":{"a":{"a":{"d":1}}}}')).toBe(false)
    expect(branching?.('{"c":{}}')).toBe(false)
  })

  it('is absent where the root decides keys otherwise: those calls are parsed', () => {
    const patterned = { type: 'object', patternProperties: { '^x-': {} } }
    const record = { type: 'object', properties: { a: {} }, additionalProperties: { type: 'string' } }
    const tagged = {
      oneOf: [
        { type: 'object', properties: { t: { const: 'a' }, x: {} } },
        { type: 'object', properties: { t: { const: 'b' }, y: {} } },
      ],
    }
    const open = { type: 'object' }
    for (const schema of [patterned, record, tagged, open]) expect(of(schema), JSON.stringify(schema)).toBeUndefined()
    // an untagged union at the root declares every branch's keys, as the check does
    const either = {
      anyOf: [
        { type: 'object', properties: { a: {} } },
        { type: 'object', properties: { b: {} } },
      ],
    }
    expect(of(either)?.('{"a":1,"b":2}')).toBe(true)
  })

  it('a text too long for the engine is not accepted, and nothing throws: it is parsed', () => {
    const clean = of({ type: 'object', properties: { a: {} } })
    const huge = `{${Array.from({ length: 1_000_000 }, () => '"a":1').join(',')}}`
    expect(clean?.(huge)).toBe(false)
  })
})

describe('catalogueOf and the text check', () => {
  it('holds a text check for each tool whose keys are decided by name at the top, with the tolerated names', () => {
    const catalogue = catalogueOf(toleratedOf(['_meta']))([
      { type: 'function', function: { name: 'flat', parameters: { type: 'object', properties: { path: {} } } } },
      {
        type: 'function',
        function: {
          name: 'patterned',
          parameters: { type: 'object', properties: { a: {} }, patternProperties: { '^x-': {} } },
        },
      },
    ])
    expect(catalogue.get('flat')?.cleanText?.('{"path":"/a","_meta":1,"reason":"r"}')).toBe(true)
    expect(catalogue.get('flat')?.cleanText?.('{"path":"/a","_other":1}')).toBe(false)
    expect(catalogue.get('patterned')).toBeDefined()
    expect(catalogue.get('patterned')?.cleanText).toBeUndefined()
  })
})

describe('checkBatch with the text check', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })
  const tools = [
    {
      type: 'function',
      function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {}, offset: {} } } },
    },
  ]
  const callOf = (i: number, args: unknown): ToolCall => ({
    id: `c${i}`,
    type: 'function',
    function: { name: 'fs_read', arguments: typeof args === 'string' ? args : JSON.stringify(args) },
  })

  it('a clean call alone is not parsed; a call with an undeclared key is, once', () => {
    const catalogue = catalogueOf(toleratedOf())(tools)
    const parse = vi.spyOn(JSON, 'parse')
    const calls = Array.from({ length: 50 }, (_, i) => callOf(i, { path: `/p/${i}`, offset: i }))
    const [warnings] = checkBatch(catalogue, { calls: [...calls, callOf(50, { path: '/p', ffset: 1 })] })(emptySeenSet)
    expect(parse).toHaveBeenCalledTimes(1)
    expect(warnings.map((w) => w.unknownKeys)).toStrictEqual([['ffset']])
  })

  it('a tool without a text check, and arguments that are no text, are read as before', () => {
    const catalogue = catalogueOf(toleratedOf())([
      ...tools,
      {
        type: 'function',
        function: {
          name: 'headers',
          parameters: { type: 'object', patternProperties: { '^x-': {} }, properties: { a: {} } },
        },
      },
    ])
    expect(catalogue.get('headers')?.cleanText).toBeUndefined()
    // an object whose own toString writes a clean text: its own keys are what is audited
    const disguised = { path: '/p', ffset: 1, toString: () => '{"path":"/p"}' }
    const calls: ReadonlyArray<ToolCall> = [
      { id: 'h', type: 'function', function: { name: 'headers', arguments: '{"a":1,"b":2}' } },
      { id: 'o', type: 'function', function: { name: 'fs_read', arguments: disguised as never } },
    ]
    const [warnings] = checkBatch(catalogue, { calls })(emptySeenSet)
    expect(warnings.map((w) => [w.tool, w.unknownKeys])).toStrictEqual([
      ['headers', ['b']],
      ['fs_read', ['ffset', 'toString']],
    ])
  })

  it('whatever the calls, the audit says the same of them alone (text check) as of their batch (parsed)', () => {
    const catalogue = catalogueOf(toleratedOf())(tools)
    const argsArb = fc.oneof(
      fc
        .uniqueArray(
          fc.tuple(
            fc.oneof(fc.constantFrom('path', 'offset', 'reason'), keyArb),
            fc.oneof(valueArb, fc.jsonValue({ maxDepth: 2 })),
          ),
          {
            selector: ([k]) => k,
            maxLength: 4,
          },
        )
        .map((entries) => JSON.stringify(objectOf(entries))),
      mutatedArb,
    )
    fc.assert(
      fc.property(fc.array(argsArb, { maxLength: 8 }), (texts) => {
        const calls = texts.map((t, i) => callOf(i, t))
        const [alone, seenAlone] = checkBatch(catalogue, { calls })(emptySeenSet)
        const [batched, seenBatched] = checkBatch(catalogue, batchOf(calls))(emptySeenSet)
        expect(alone).toStrictEqual(batched)
        expect(pairStats(seenAlone)).toStrictEqual(pairStats(seenBatched))
      }),
    )
  })
})
