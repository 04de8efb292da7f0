// The interpreter (`walk`) alone, where generated code hands it a place (a pattern, a discriminator) or does the
// whole check (a runtime that refuses code generation): each case's paths are written by hand, and the generated
// check, where it compiles, agrees.
import { describe, expect, it } from 'vitest'
import { buildGraph, MAX_DEPTH } from '../../../src/steps/audit/Graph.js'
import { generate } from '../../../src/steps/audit/Codegen.js'
import type { Scratch, UnknownKey } from '../../../src/steps/audit/Walk.js'
import { MAX_FOUND, MAX_VISITS, scratchOf, takeFound, walk } from '../../../src/steps/audit/Walk.js'

const run = (check: (v: unknown, s: Scratch) => void, value: unknown): ReadonlyArray<UnknownKey> => {
  const s = scratchOf(new Set(['reason', 'k']))
  check(value, s)
  return takeFound(s)
}

// what the interpreter finds from the root; the generated check must find the same
const interpreted = (schema: unknown, value: unknown): ReadonlyArray<string> => {
  const { root } = buildGraph(schema)
  const found = run((v, s) => walk(s, v, [root], 0), value)
  const generated = generate(root)
  expect(generated).toBeDefined()
  expect(run(generated?.check as (v: unknown, s: Scratch) => void, value)).toEqual(found)
  return found.map((k) => k.path)
}

const obj = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...more,
})

describe('the interpreter', () => {
  it('reads an own __proto__ key as the member it is, not the prototype', () => {
    // a pattern makes the interpreter decide every undeclared name, and a record walks the value it reads
    const schema = { type: 'object', patternProperties: { '^x': {} }, additionalProperties: obj({ a: {} }) }
    const value = JSON.parse('{"__proto__":{"a":1,"zz":2}}') as unknown
    expect(interpreted(schema, value)).toEqual(['*.zz'])
    const named = JSON.parse(
      '{"type":"object","patternProperties":{"^x":{}},"properties":{"__proto__":{"type":"object","properties":{"a":{}}}}}',
    )
    expect(interpreted(named, value)).toEqual(['__proto__.zz'])
  })

  it('reports nothing at a place that declares no keys, and nothing where a union branch takes any object', () => {
    expect(interpreted({ type: 'object' }, { zz: 1 })).toEqual([])
    const open = { anyOf: [{ type: 'object' }, obj({ a: {} })] }
    expect(interpreted(obj({ u: open }), { u: { a: 1, zz: 1 } })).toEqual([])
    // from the root, the interpreter alone
    const { root } = buildGraph(open)
    expect(run((v, s) => walk(s, v, [root], 0), { a: 1, zz: 1 })).toEqual([])
  })

  it('with a discriminator beside a union whose branch takes any object, hears nothing: the place is open', () => {
    const tagged = {
      type: 'object',
      anyOf: [obj({ kind: { const: 'a' }, a: {} }), obj({ kind: { const: 'b' }, b: {} })],
      oneOf: [{ type: 'object' }, obj({ c: {} })],
    }
    expect(interpreted(obj({ t: tagged }), { t: { kind: 'a', zz: 1 } })).toEqual([])
    // the same discriminator without the open union decides by the call's value
    const closed = { type: 'object', anyOf: tagged.anyOf }
    expect(interpreted(obj({ t: closed }), { t: { kind: 'a', a: 1, b: 1 } })).toEqual(['t.b'])
    expect(interpreted(obj({ t: closed }), { t: { kind: 'c', a: 1, zz: 1 } })).toEqual(['t.zz'])
  })

  it('hears nothing in an array where a tagged union branch takes any array', () => {
    // the branches name no type, so each may hold an array, and none declares its elements
    const schema = obj({
      t: {
        items: obj({ a: {} }),
        anyOf: [{ properties: { kind: { const: 'a' } } }, { properties: { kind: { const: 'b' } } }],
      },
    })
    expect(interpreted(schema, { t: [{ a: 1, zz: 1 }] })).toEqual([])
    expect(interpreted(obj({ t: { items: obj({ a: {} }) } }), { t: [{ a: 1, zz: 1 }] })).toEqual(['t[].zz'])
  })

  it("checks a key that a record's schema also covers against its own declaration only", () => {
    const record = obj({ y: {} })
    // `a` is declared by name, `p1` by a pattern: neither is an entry of the record
    const schema = obj(
      { a: { type: 'object' } },
      { patternProperties: { '^p': { type: 'object' } }, additionalProperties: record },
    )
    expect(interpreted(schema, { a: { x: 1 }, p1: { x: 1 }, other: { x: 1, y: 1 } })).toEqual(['*.x'])
  })

  it('passes by a string, a number, null and a boolean where an object is declared', () => {
    const schema = obj({ o: obj({ a: {} }), p: obj({ a: {} }, { patternProperties: { '^x': obj({ b: {} }) } }) })
    for (const v of ['abc', 1, null, true])
      expect(interpreted(schema, { o: v, p: { a: v, x1: v }, q: v })).toEqual(['q'])
  })

  it(`reads a value no deeper than ${MAX_DEPTH} steps below the root`, () => {
    // a recursive record: the interpreter decides each level (the pattern), deeper than the bound is not read
    const schema = { type: 'object', properties: { a: {} }, patternProperties: { '^n$': { $ref: '#' } } }
    const nested = (levels: number): unknown => {
      let v: unknown = { a: 1, zz: 1 }
      for (let i = 0; i < levels; i++) v = { n: v }
      return v
    }
    const { root } = buildGraph(schema)
    const at = (levels: number) => run((v, s) => walk(s, v, [root], 0), nested(levels)).map((k) => k.path.length)
    // `n.` per level, then `zz`
    expect(at(3)).toEqual([3 * 2 + 2])
    expect(at(MAX_DEPTH)).toEqual([MAX_DEPTH * 2 + 2])
    expect(at(MAX_DEPTH + 1)).toEqual([])
  })

  it('offers every key the deciding places declare, and reads a union that names its own place once', () => {
    // the place and both branches decide: "did you mean" compares with the keys of all three
    const union = { type: 'object', properties: { a: {} }, anyOf: [obj({ b: {} }), obj({ c: {} })] }
    const { root } = buildGraph(obj({ u: union }, { patternProperties: { '^x': {} } }))
    const [found] = run((v, s) => walk(s, v, [root], 0), { u: { zz: 1 } })
    expect(found?.path).toBe('u.zz')
    expect([...(found?.declared ?? [])].sort()).toEqual(['a', 'b', 'c'])
    // a branch that is the place itself (a reference to the root) is visited once
    const recursive = { type: 'object', properties: { a: {} }, anyOf: [{ $ref: '#' }, obj({ b: {} })] }
    expect(interpreted(recursive, { a: 1, b: 1, zz: 1 })).toEqual(['zz'])
  })
})

// -------------------------------------------------------------------------------------
// hostile object arguments: a cycle, a shared subtree, an inherited enumerable key
// -------------------------------------------------------------------------------------

describe('an object argument that JSON cannot make', () => {
  // a tree whose every node is a tree again: each object may hold the same one at many places
  const tree = obj({ l: { $ref: '#' }, r: { $ref: '#' }, v: {} })

  it('a cycle, or one object shared at every place, is walked at most MAX_VISITS times, and an undeclared key is still heard', () => {
    let reads = 0
    const node: Record<string, unknown> = { v: 1 }
    // each read of l or r is one more object entered; without a bound, 2 to the power of the depth
    for (const k of ['l', 'r'])
      Object.defineProperty(node, k, {
        enumerable: true,
        get: () => {
          reads++
          return node
        },
      })
    expect(interpreted(tree, node)).toEqual([])
    // two checks ran (the interpreter's and the generated one's), each reading at most l and r per object entered
    expect(reads).toBeLessThanOrEqual(2 * 2 * MAX_VISITS)
    expect(reads).toBeGreaterThan(2 * MAX_VISITS)
  })

  it('enters exactly MAX_VISITS objects and arrays: the last one entered is heard, one more is not', () => {
    const schema = obj({ a: { type: 'array', items: obj({ v: {} }) } })
    // the root and the array are two; each element one more
    const elements = (n: number) => ({ a: [...Array.from({ length: n - 1 }, () => ({ v: 1 })), { zz: 1 }] })
    expect(interpreted(schema, elements(MAX_VISITS - 2))).toHaveLength(1)
    expect(interpreted(schema, elements(MAX_VISITS - 1))).toEqual([])
  })

  it('a cycle with an undeclared key at every level: at most MAX_FOUND paths, the first ones found', () => {
    const c: Record<string, unknown> = { v: 1, zz: 1 }
    c['l'] = c
    c['r'] = c
    const found = interpreted(tree, c)
    expect(found).toHaveLength(MAX_FOUND)
    expect(found).toContain('zz')
    expect(found).toContain('l.zz')
  })

  it('a walk after one that met the bound starts again from nothing', () => {
    const c: Record<string, unknown> = { v: 1 }
    c['l'] = c
    c['r'] = c
    const { root } = buildGraph(tree)
    const s = scratchOf(new Set(['reason']))
    walk(s, c, [root], 0)
    expect(takeFound(s)).toEqual([])
    walk(s, { v: 1, l: { v: 1, l: { zz: 1 } } }, [root], 0)
    expect(takeFound(s).map((k) => k.path)).toEqual(['l.l.zz'])
  })

  it("an inherited enumerable key is not the call's: neither reported nor walked, where a pattern, a record or a name decides", () => {
    const inherited = (own: Record<string, unknown>, proto: Record<string, unknown>): unknown =>
      Object.assign(Object.create(proto) as object, own)
    // a pattern decides every undeclared name; a record walks each entry's value; a named key with a schema below
    const patterned = obj({ path: {} }, { patternProperties: { '^x-': {} } })
    const record = obj({ headers: { type: 'object', additionalProperties: obj({ value: {} }) } })
    const named = obj({ opts: obj({ a: {} }) })
    expect(interpreted(patterned, inherited({ path: 'a' }, { polluted: 1 }))).toEqual([])
    expect(interpreted(record, { headers: inherited({ h: { value: 1 } }, { polluted: { vaule: 1 } }) })).toEqual([])
    expect(interpreted(named, inherited({}, { opts: { zz: 1 } }))).toEqual([])
    // an own key beside them is heard as ever
    expect(interpreted(patterned, inherited({ path: 'a', zz: 1 }, { polluted: 1 }))).toEqual(['zz'])
  })
})
