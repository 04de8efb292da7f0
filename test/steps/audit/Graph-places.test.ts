// Building the places (`buildGraph`, from the annotations to the discriminators): what each keyword adds to a
// place, read through what the audit hears, and, where only the graph shows it (shared leaves, a tag's values),
// through the graph. Each expected path is written by hand.
import { describe, expect, it } from 'vitest'
import { paths, obj, DRAFT_7, DRAFT_2019 } from '../../support/schemas.js'
import type { Node } from '../../../src/steps/audit/Graph.js'
import { buildGraph, FREE, reportsHere } from '../../../src/steps/audit/Graph.js'

describe('propertyNames with an enum or a const: the names a record may hold', () => {
  const values = obj({ x: {} })

  it('declares the one name of a const, by its name, and no other key', () => {
    const schema = { type: 'object', propertyNames: { const: 'a' }, additionalProperties: values }
    expect(paths(schema, { a: { x: 1, zz: 1 }, b: 1 })).toEqual(['a.zz', 'b'])
  })

  it('reads a list of names that is not all strings as a record of every key', () => {
    // a key is a string: an enum with a number names no key by it, so the names are not read
    const schema = { type: 'object', propertyNames: { enum: ['a', 1] }, additionalProperties: values }
    expect(paths(schema, { a: { x: 1, zz: 1 }, b: { zz: 1 } })).toEqual(['*.zz'])
    const strings = { type: 'object', propertyNames: { enum: ['a', '1'] }, additionalProperties: values }
    expect(paths(strings, { a: { x: 1, zz: 1 }, b: { zz: 1 } })).toEqual(['a.zz', 'b'])
  })

  it('leaves a name properties declares to properties alone', () => {
    const schema = obj(
      { a: obj({ x: {} }) },
      { propertyNames: { enum: ['a', 'b'] }, additionalProperties: obj({ y: {} }) },
    )
    expect(paths(schema, { a: { y: 1 }, b: { x: 1, y: 1 } })).toEqual(['a.y', 'b.x'])
  })
})

describe('leaves', () => {
  it('are shared places, none added to the graph: only what holds more than a type is built', () => {
    const g = buildGraph(
      obj({ a: { type: 'string' }, b: { description: 'free' }, c: { type: ['object', 'null'] }, d: { type: 'array' } }),
    )
    expect(g.nodes).toEqual([g.root])
    const at = (k: string): Node | undefined => g.root.props.get(k)?.[0]
    expect(at('b')).toBe(FREE)
    // the same place in another graph
    expect(at('a')).toBe(buildGraph({ type: 'number' }).root)
    expect([at('a')?.object, at('a')?.array]).toEqual([false, false])
    expect([at('c')?.object, at('c')?.array]).toEqual([true, false])
    expect([at('d')?.object, at('d')?.array]).toEqual([false, true])
  })
})

describe('conjuncts', () => {
  it('reads a place whose allOf names itself once', () => {
    expect(paths(obj({ a: {} }, { allOf: [{ $ref: '#' }] }), { a: 1, zz: 1 })).toEqual(['zz'])
  })

  it('reads a conditional that names itself once, as a conditional', () => {
    const schema = obj(
      { a: {} },
      {
        if: { $ref: '#/$defs/B' },
        $defs: { B: { properties: { b: {} }, if: { $ref: '#/$defs/B' } } },
      },
    )
    expect(paths(schema, { a: 1, b: 1, zz: 1 })).toEqual(['zz'])
  })

  it('keeps a schema met first as itself and then in its own conditional as itself: its pin still tags', () => {
    // A pins kind, and its `if` names A: A stays a main conjunct, so the union is tagged by kind
    const schema = obj(
      { s: { anyOf: [{ $ref: '#/$defs/A' }, obj({ kind: { const: 'b' }, y: {} })] } },
      { $defs: { A: obj({ kind: { const: 'a' }, x: {} }, { if: { $ref: '#/$defs/A' } }) } },
    )
    expect(paths(schema, { s: { kind: 'b', x: 1, y: 1 } })).toEqual(['s.x'])
    expect(paths(schema, { s: { kind: 'a', x: 1, y: 1 } })).toEqual(['s.y'])
  })

  it('makes a place schema-free at an unresolved reference, though a reference before it named false', () => {
    // allOf's branches are read last first: `false` takes nothing, then the unresolved one takes anything
    const free = { allOf: [{ $ref: '#/$defs/missing' }, { $ref: '#/$defs/no' }] }
    const none = { allOf: [{ $ref: '#/$defs/no' }] }
    const $defs = { no: false }
    const objects = (branch: unknown) => obj({ v: { anyOf: [branch, obj({ a: {} })] } }, { $defs })
    const arrays = (branch: unknown) =>
      obj({ v: { anyOf: [branch, { type: 'array', items: obj({ a: {} }) }] } }, { $defs })
    expect(paths(objects(free), { v: { zz: 1 } })).toEqual([])
    expect(paths(arrays(free), { v: [{ zz: 1 }] })).toEqual([])
    expect(paths(objects(none), { v: { zz: 1 } })).toEqual(['v.zz'])
    expect(paths(arrays(none), { v: [{ zz: 1 }] })).toEqual(['v[].zz'])
  })

  it('declares the keys of conditionals and dependent schemas without taking their type, const or enum', () => {
    // a string type would close the branch to objects, and the other branch would then decide alone
    const union = (branch: unknown) => obj({ u: { anyOf: [branch, obj({ c: {} })] } })
    const stringy = { type: 'string', properties: { t: {} }, const: 'x' }
    for (const more of [
      { dependentSchemas: { a: stringy } },
      { $schema: DRAFT_7, dependencies: { a: stringy } },
      { then: stringy },
      { else: stringy },
      { if: stringy },
    ])
      expect(paths(union(obj({ a: {} }, more)), { u: { a: 1, t: 1, zz: 1 } }), JSON.stringify(more)).toEqual(['u.zz'])
  })
})

describe('arrays', () => {
  it('closes an object-only union branch to arrays', () => {
    const schema = obj({ v: { anyOf: [obj({ a: {} }), { type: 'array', items: obj({ b: {} }) }] } })
    expect(paths(schema, { v: [{ b: 1, zz: 1 }] })).toEqual(['v[].zz'])
    expect(paths(schema, { v: { a: 1, zz: 1 } })).toEqual(['v.zz'])
  })

  it('reads items that say nothing as no items: a union branch with them takes any array', () => {
    const decided = { type: 'array', items: obj({ b: {} }) }
    for (const items of [true, {}, { description: 'any' }])
      expect(paths(obj({ v: { anyOf: [{ type: 'array', items }, decided] } }), { v: [{ zz: 1 }] })).toEqual([])
    expect(paths(obj({ v: { anyOf: [{ type: 'array' }, decided] } }), { v: [{ zz: 1 }] })).toEqual([])
    // items: false takes no element, so the other branch decides
    expect(paths(obj({ v: { anyOf: [{ type: 'array', items: false }, decided] } }), { v: [{ zz: 1 }] })).toEqual([
      'v[].zz',
    ])
  })

  it('reads every element by items before 2020-12, where prefixItems is not read', () => {
    for (const $schema of [DRAFT_7, DRAFT_2019])
      expect(
        paths(obj({ v: { type: 'array', items: obj({ a: {} }) } }, { $schema }), { v: [{ a: 1, zz: 1 }] }),
      ).toEqual(['v[].zz'])
  })
})

describe('the depth bound through records and the rest of a tuple', () => {
  // as in Schema.test.ts: each level sits in a union's branch, so a level's deciding place is deeper in the
  // schema than its object is in the arguments, and the schema's bound (64) comes first
  const BOUND = 64
  const LEVELS = 70
  const chain = (wrap: (next: unknown) => unknown): unknown => {
    let s: unknown = obj({ k: {} })
    for (let i = 0; i < LEVELS; i++) s = { anyOf: [wrap(s)] }
    return s
  }
  // LEVELS + 1 objects, each with a stray `zz`, each holding the next through `step`
  const deepArgs = (step: (v: Record<string, unknown>) => unknown): Record<string, unknown> => {
    let v: Record<string, unknown> = { zz: 1 }
    for (let i = 0; i < LEVELS; i++) v = { k: step(v), zz: 1 }
    return v
  }
  const heard = (last: number, segment: string) =>
    Array.from({ length: last + 1 }, (_, l) => segment.repeat(l) + 'zz').sort()

  it('an enum-keyed record: level L decided 2L + 1 steps down', () => {
    const schema = chain((next) => ({ type: 'object', propertyNames: { enum: ['k'] }, additionalProperties: next }))
    expect(
      paths(
        schema,
        deepArgs((v) => v),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 2), 'k.'))
  })

  it('a record: level L decided 3L + 1 steps down', () => {
    const schema = chain((next) => obj({ k: { type: 'object', additionalProperties: next } }))
    expect(
      paths(
        schema,
        deepArgs((v) => ({ e: v })),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 3), 'k.*.'))
  })

  it("a tuple's additionalItems: level L decided 3L + 1 steps down", () => {
    const schema = chain((next) => obj({ k: { type: 'array', items: [], additionalItems: next } }))
    expect(
      paths(
        schema,
        deepArgs((v) => [v]),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 3), 'k[].'))
  })
})

describe('what a place can report', () => {
  it('reports nowhere a record takes every other key, and speaks only where something below can', () => {
    const record = buildGraph(obj({ a: {} }, { additionalProperties: { type: 'number' } })).root
    expect(reportsHere(record)).toBe(false)
    expect(record.speaks).toBe(false)
    const named = buildGraph(obj({ a: {} })).root
    expect(reportsHere(named)).toBe(true)
    expect(named.speaks).toBe(true)
    const above = buildGraph(obj({ a: obj({ b: {} }) }, { additionalProperties: { type: 'number' } })).root
    expect(reportsHere(above)).toBe(false)
    expect(above.speaks).toBe(true)
  })
})

describe('discriminators', () => {
  const tagOf = (schema: unknown) => buildGraph(schema).root.unions[0]?.tag

  it('reads each branch by the key it is asked about, not its first pin', () => {
    const schema = {
      anyOf: [obj({ kind: { const: 'a' }, x: {} }), obj({ v: { const: 1 }, kind: { const: 'b' }, y: {} })],
    }
    expect(paths(schema, { kind: 'b', x: 1 })).toEqual(['x'])
    expect(paths(schema, { kind: 'a', y: 1 })).toEqual(['y'])
  })

  it('picks by the values nested unions pin, exactly those', () => {
    const schema = {
      anyOf: [
        obj({ kind: { const: 'a' }, x: {} }),
        { anyOf: [obj({ kind: { const: 'b' }, y: {} }), obj({ kind: { enum: ['c'] }, y: {} })] },
      ],
    }
    const tag = tagOf(schema)
    expect(tag?.key).toBe('kind')
    expect([...(tag?.picks.keys() ?? [])]).toEqual(['a', 'b', 'c'])
    expect(paths(schema, { kind: 'c', x: 1, y: 1 })).toEqual(['x'])
  })

  it('takes no tag from a nested union one of whose branches does not pin the key', () => {
    const schema = {
      anyOf: [obj({ kind: { const: 'a' }, x: {} }), { anyOf: [obj({ kind: { const: 'b' }, y: {} }), obj({ z: {} })] }],
    }
    expect(tagOf(schema)).toBeUndefined()
    // every branch decides: x is declared by the first
    expect(paths(schema, { kind: 'b', x: 1, zz: 1 })).toEqual(['zz'])
  })

  it('reads a branch whose own union names it once, and takes no tag from it', () => {
    const schema = {
      $defs: { U: { anyOf: [{ $ref: '#/$defs/U' }, obj({ kind: { const: 'a' }, x: {} })] } },
      anyOf: [obj({ kind: { const: 'b' }, y: {} }), { $ref: '#/$defs/U' }],
    }
    expect(tagOf(schema)).toBeUndefined()
    expect(paths(schema, { kind: 'b', x: 1, y: 1, zz: 1 })).toEqual(['zz'])
  })

  // zod 4's nested discriminated union: the error branches all pin status to "failed", and code tells them apart
  it('passes over a key every branch pins to one value while another tells them apart, whatever their order', () => {
    const error = (code: number, extra: string) =>
      obj({ status: { type: 'string', const: 'failed' }, message: {}, code: { const: code }, [extra]: {} })
    const nested = obj({
      result: {
        oneOf: [
          obj({ status: { const: 'success' }, data: {} }),
          { oneOf: [error(400, 'field'), error(500, 'retryAfter')] },
        ],
      },
    })
    expect(paths(nested, { result: { status: 'failed', message: 'm', code: 400, retryAfter: '3' } })).toEqual([
      'result.retryAfter',
    ])
    expect(paths(nested, { result: { status: 'failed', message: 'm', code: 500, retryAfter: '3' } })).toEqual([])
    // the same union, with its one-value key first: the key that tells them apart still decides
    const rpc = {
      anyOf: [
        obj({ jsonrpc: { const: '2.0' }, method: { const: 'ping' } }),
        obj({ jsonrpc: { const: '2.0' }, method: { const: 'read' }, params: {} }),
      ],
    }
    expect(tagOf(rpc)?.key).toBe('method')
    expect(paths(rpc, { jsonrpc: '2.0', method: 'ping', params: {} })).toEqual(['params'])
    // no key tells them apart: the one-value key is the tag, and picks every branch
    const same = { anyOf: [obj({ v: { const: 1 }, a: {} }), obj({ v: { const: 1 }, b: {} })] }
    expect(tagOf(same)?.key).toBe('v')
    expect(paths(same, { v: 1, a: 1, b: 1 })).toEqual([])
  })

  it("takes the first branch's own pins before those of its unions", () => {
    // both branches pin kind and x; the first pins kind itself and x only through a union of its own
    const schema = {
      anyOf: [
        obj(
          { x: { type: 'number' }, kind: { const: 'a' }, p: {} },
          { anyOf: [obj({ x: { const: 1 } }), obj({ x: { const: 2 } })] },
        ),
        obj({ kind: { const: 'b' }, x: { const: 3 }, q: {} }),
      ],
    }
    expect(tagOf(schema)?.key).toBe('kind')
    expect(paths(schema, { kind: 'b', x: 1, q: 1 })).toEqual([])
    expect(paths(schema, { kind: 'a', x: 1, q: 1 })).toEqual(['q'])
  })
})
