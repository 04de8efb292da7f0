import { createHash } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { HASH_PATTERN, canonicalJson, hashOf, shortHash } from '../../../src/steps/pins/Canonical.js'
import type { ToolDefinition } from '../../../src/steps/pins/Definition.js'
import { bodyHash, hashDefinition } from '../../../src/steps/pins/Definition.js'

// -------------------------------------------------------------------------------------
// oracles, written apart from the code under test
// -------------------------------------------------------------------------------------

/** The same JSON value with every object's members in another order, `order` choosing it. */
const reordered = (u: unknown, order: (keys: ReadonlyArray<string>) => ReadonlyArray<string>): unknown => {
  if (Array.isArray(u)) return u.map((v) => reordered(v, order))
  if (typeof u !== 'object' || u === null) return u
  const o = u as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of order(Object.keys(o)))
    Object.defineProperty(out, k, {
      value: reordered(o[k], order),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  return out
}

/** Its text as a server may send it: `blank` (any JSON whitespace) around every token, members in their order. */
const respaced = (u: unknown, blank: string): string => {
  if (Array.isArray(u)) return `[${blank}${u.map((v) => respaced(v, blank)).join(`${blank},${blank}`)}${blank}]`
  if (typeof u === 'object' && u !== null) {
    const o = u as Record<string, unknown>
    const members = Object.keys(o).map((k) => `${JSON.stringify(k)}${blank}:${blank}${respaced(o[k], blank)}`)
    return `{${blank}${members.join(`${blank},${blank}`)}${blank}}`
  }
  return `${blank}${JSON.stringify(u)}${blank}`
}

/** JSON values as a server's JSON text can carry them (no -0, no undefined). */
const jsonValue = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown)

const definitionArb: fc.Arbitrary<ToolDefinition> = fc
  .record(
    {
      name: fc.string({ minLength: 1, maxLength: 20 }),
      description: fc.string({ maxLength: 80 }),
      inputSchema: fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 5 }),
      annotations: fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 3 }),
    },
    { requiredKeys: ['name'] },
    // as a server's JSON reads back: plain objects
  )
  .map((d) => JSON.parse(JSON.stringify(d)) as ToolDefinition)

const shuffled = (seed: number) => (keys: ReadonlyArray<string>) => {
  const out = [...keys]
  let s = seed
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j] as string, out[i] as string]
  }
  return out
}

// -------------------------------------------------------------------------------------
// canonicalJson
// -------------------------------------------------------------------------------------

describe('canonicalJson', () => {
  it("writes RFC 8785's form: members sorted by UTF-16 code units, no blanks, ECMAScript numbers", () => {
    expect(canonicalJson({ b: 1, a: [true, null], '10': 'x', '2': 'y', é: 0.1 })).toBe(
      '{"10":"x","2":"y","a":[true,null],"b":1,"é":0.1}',
    )
    expect(canonicalJson([1e21, 1e-7, -0, 100, 1.5])).toBe('[1e+21,1e-7,0,100,1.5]')
    expect(canonicalJson('\u2028\n"')).toBe('"\u2028\\n\\""')
    // code units, not code points: U+FFFF sorts after a surrogate pair's high half
    expect(canonicalJson({ '\uffff': 1, '\u{1f600}': 2 })).toBe('{"\u{1f600}":2,"\uffff":1}')
  })

  it('reads own members only, __proto__ as any other name, and leaves out what JSON cannot hold as a member', () => {
    const o = JSON.parse('{"__proto__":{"x":1},"constructor":2}') as unknown
    expect(canonicalJson(o)).toBe('{"__proto__":{"x":1},"constructor":2}')
    expect(canonicalJson(Object.create({ inherited: 1 }) as object)).toBe('{}')
    expect(canonicalJson({ a: undefined, b: () => 1, c: 1, d: Symbol('d') })).toBe('{"c":1}')
  })

  it('throws a TypeError for what is not JSON: BigInt, non-finite numbers, cycles, very deep values', () => {
    const cycle: Record<string, unknown> = {}
    cycle['self'] = cycle
    let deep: unknown = 1
    for (let i = 0; i < 200; i++) deep = [deep]
    for (const bad of [10n, Infinity, NaN, cycle, deep]) expect(() => canonicalJson(bad)).toThrow(TypeError)
  })

  it('says in its error what is not JSON', () => {
    const cycle: Record<string, unknown> = {}
    cycle['self'] = cycle
    expect(() => canonicalJson(10n)).toThrow('a bigint is not a JSON value')
    expect(() => canonicalJson([Symbol('s')])).toThrow('a symbol is not a JSON value')
    expect(() => canonicalJson({ n: -Infinity })).toThrow('-Infinity is not a JSON number')
    expect(() => canonicalJson(NaN)).toThrow('NaN is not a JSON number')
    expect(() => canonicalJson(cycle)).toThrow('the value is nested deeper than 128 levels')
  })

  it('reads a value nested 128 levels deep, and no deeper', () => {
    const nested = (levels: number, leaf: unknown): unknown => {
      let v = leaf
      for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v }
      return v
    }
    // the oracle: JSON.stringify, whose form for these (one member, no blanks) is the canonical one
    const deepest = nested(128, 1)
    expect(canonicalJson(deepest)).toBe(JSON.stringify(deepest))
    expect(() => canonicalJson(nested(129, 1))).toThrow(TypeError)
  })

  it('property: a value and the JSON text it parses back from have one form (the round trip is the identity)', () => {
    fc.assert(
      fc.property(jsonValue, (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(v)
        expect(canonicalJson(JSON.parse(canonicalJson(v)))).toBe(canonicalJson(v))
      }),
    )
  })
})

// -------------------------------------------------------------------------------------
// the definition hash
// -------------------------------------------------------------------------------------

describe('hashDefinition', () => {
  it('is sha256 of the canonical text, written sha256:HEX; shortHash keeps 12 digits', () => {
    const { text, hash } = hashDefinition({ name: 'add', description: 'Adds' })
    expect(text).toBe('{"description":"Adds","name":"add"}')
    expect(hash).toBe(hashOf(text))
    expect(hash).toMatch(HASH_PATTERN)
    expect(shortHash(hash)).toBe(`${hash.slice(0, 19)}…`)
    expect(shortHash('not a hash')).toBe('not a hash')
  })

  it('property: a definition equal up to member order and blanks never drifts (same hash)', () => {
    fc.assert(
      fc.property(
        definitionArb,
        fc.nat(),
        fc.constantFrom('', ' ', '\n', '\r\n  ', '\t', '\n\t \r'),
        (d, seed, blank) => {
          const sent = respaced(reordered(d, shuffled(seed)), blank)
          const received = JSON.parse(sent) as ToolDefinition
          // the oracle: JSON's own equality, which ignores member order
          expect(isDeepStrictEqual(received, d)).toBe(true)
          expect(hashDefinition(received).hash).toBe(hashDefinition(d).hash)
        },
      ),
    )
  })

  it('property: definitions that differ as JSON values hash differently', () => {
    fc.assert(
      fc.property(definitionArb, definitionArb, (a, b) => {
        fc.pre(!isDeepStrictEqual(a, b))
        expect(hashDefinition(a).hash).not.toBe(hashDefinition(b).hash)
      }),
    )
  })

  it('property: one changed leaf anywhere in the schema changes the hash', () => {
    fc.assert(
      fc.property(definitionArb, fc.string({ minLength: 1, maxLength: 8 }), (d, key) => {
        const schema = (d.inputSchema ?? {}) as Record<string, unknown>
        const widened = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
        // keys are data: `__proto__` or `toString` is a member like any other
        const was = Object.hasOwn(schema, key) ? schema[key] : null
        Object.defineProperty(widened, key, {
          value: [was, 'widened'],
          enumerable: true,
          writable: true,
          configurable: true,
        })
        const changed = { ...d, inputSchema: widened }
        expect(hashDefinition(changed).hash).not.toBe(hashDefinition(d).hash)
      }),
    )
  })

  it('the property can fail: a hash of JSON.stringify would drift on member order', () => {
    const naive = (d: ToolDefinition): string => hashOf(JSON.stringify(d))
    const out = fc.check(
      fc.property(
        definitionArb,
        fc.nat(),
        (d, seed) => naive(reordered(d, shuffled(seed)) as ToolDefinition) === naive(d),
      ),
    )
    expect(out.failed).toBe(true)
  })

  it('hashes the UTF-8 bytes of the text', () => {
    // the oracle: SHA-256 of the bytes written out by hand (é is C3 A9, 😀 is F0 9F 98 80)
    const bytes = Buffer.from([0x22, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0x22])
    expect(hashOf('"é\u{1f600}"')).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`)
  })

  it('bodyHash leaves the name out: a renamed tool keeps it', () => {
    const d = { name: 'add', description: 'Adds', inputSchema: { type: 'object' } }
    expect(bodyHash({ ...d, name: 'sum' })).toBe(bodyHash(d))
    expect(bodyHash({ ...d, description: 'Sums' })).not.toBe(bodyHash(d))
  })
})
