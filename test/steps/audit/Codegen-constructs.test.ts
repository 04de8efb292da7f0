// The generated check, construct by construct: each piece of source the generator writes compiles (the
// interpreter's fallback is only for a runtime that refuses code generation) and finds what the interpreter
// finds; and nothing is written for a value that cannot report.
import { describe, expect, it } from 'vitest'
import { buildGraph } from '../../../src/steps/audit/Graph.js'
import { generate, sourceOf } from '../../../src/steps/audit/Codegen.js'
import type { Scratch, UnknownKey } from '../../../src/steps/audit/Walk.js'
import { scratchOf, takeFound, walk } from '../../../src/steps/audit/Walk.js'

// the tolerated names are `reason` and `k`
const run = (check: (v: unknown, s: Scratch) => void, value: unknown): ReadonlyArray<UnknownKey> => {
  const s = scratchOf(new Set(['reason', 'k']))
  check(value, s)
  return takeFound(s)
}

describe('the generated check, construct by construct', () => {
  // each construct the generator writes out, a call that meets it, and the paths reported (written by hand)
  const cases: ReadonlyArray<readonly [string, unknown, unknown, ReadonlyArray<string>]> = [
    [
      'named keys, one descended into, one not',
      {
        type: 'object',
        properties: {
          o: { type: 'object', properties: { a: {} } },
          free: {},
          k: { type: 'object', properties: { a: {} } },
        },
      },
      { o: { a: 1, zz: 1 }, free: { yy: 1 }, k: { z: 1 }, reason: 'r', top: 1 },
      ['o.zz', 'top'],
    ],
    [
      'a pattern deciding undeclared names',
      {
        type: 'object',
        properties: { a: {} },
        patternProperties: { '^x_': { type: 'object', properties: { b: {} } } },
      },
      { a: 1, x_1: { b: 1, zz: 1 }, yy: 1 },
      ['x_1.zz', 'yy'],
    ],
    [
      'a record whose entries are walked, at the top',
      { type: 'object', additionalProperties: { type: 'object', properties: { b: {} } } },
      { one: { b: 1 }, two: { b: 1, zz: 1 }, k: { yy: 1 }, reason: { ww: 1 } },
      ['*.zz'],
    ],
    [
      'a record below the top',
      {
        type: 'object',
        properties: { h: { type: 'object', additionalProperties: { type: 'object', properties: { b: {} } } } },
      },
      { h: { one: { b: 1, zz: 1 }, k: { yy: 1 } } },
      ['h.*.yy', 'h.*.zz'],
    ],
    [
      'a record of free values',
      { type: 'object', properties: { a: {} }, additionalProperties: { type: 'object' } },
      { a: 1, anything: { zz: 1 } },
      [],
    ],
    [
      'an array with positions and a tail',
      {
        type: 'object',
        properties: {
          t: {
            type: 'array',
            prefixItems: [{ type: 'object', properties: { p: {} } }, {}],
            items: { type: 'object', properties: { q: {} } },
          },
        },
      },
      { t: [{ p: 1, zz: 1 }, { free: 1 }, { q: 1, yy: 1 }, { q: 1, ww: 1 }] },
      ['t[].ww', 't[].yy', 't[].zz'],
    ],
    [
      'an array whose elements are free',
      { type: 'object', properties: { t: { type: 'array', items: {} } } },
      { t: [{ zz: 1 }] },
      [],
    ],
    [
      'a value that may be an object with declared keys or any array',
      { type: 'object', properties: { t: { anyOf: [{ type: 'object', properties: { a: {} } }, { type: 'array' }] } } },
      { t: { a: 1, zz: 1 } },
      ['t.zz'],
    ],
    [
      'a __proto__ key declared',
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","properties":{"a":{}}}}}'),
      JSON.parse('{"__proto__":{"a":1,"zz":2}}'),
      ['__proto__.zz'],
    ],
  ]

  for (const [what, schema, args, paths] of cases)
    it(`compiles ${what}, and finds what the interpreter finds`, () => {
      const { root } = buildGraph(schema)
      const generated = generate(root)
      // the source compiles: the interpreter's fallback is only for a runtime that refuses code generation
      expect(generated).toBeDefined()
      const got = run(generated?.check as (v: unknown, s: Scratch) => void, args)
      expect(got.map((k) => k.path)).toEqual(paths)
      expect(got).toEqual(run((v, s) => walk(s, v, [root], 0), args))
    })
})

describe('the generated source', () => {
  it('writes nothing for what cannot report: no function, loop or case body for a free value; the tolerated names tested at the root only', () => {
    const schema = {
      type: 'object',
      properties: {
        o: { type: 'object', properties: { a: {} } },
        free: { type: 'object' },
        list: { type: 'array', items: { type: 'object', properties: { b: {} } } },
        loose: { type: 'array', items: {} },
      },
    }
    const source = generate(buildGraph(schema).root)?.source ?? ''
    const count = (s: string): number => source.split(s).length - 1
    // the root, o, list and list's elements
    expect(count('function v')).toBe(4)
    // the root's two cases that descend, and its default
    expect(count('R.tol(')).toBe(3)
    expect(source).toContain('case "free": break')
    expect(source).toContain('case "loose": break')
    // one loop over list's elements, with no switch on positions
    expect(count('for (let i')).toBe(1)
    expect(count('switch (i)')).toBe(0)
    // every undeclared name reported where it is met: no pattern to ask the interpreter about
    expect(count('R.keyAt(')).toBe(0)
  })
})

describe('the constants the source reads', () => {
  // a schema for each way a constant is written: the places a report names, the places a pattern decides, and
  // a discriminated union handed to the interpreter whole
  const schemas: ReadonlyArray<readonly [string, unknown]> = [
    [
      'named keys, reported where undeclared',
      { type: 'object', properties: { o: { type: 'object', properties: { a: {} } } } },
    ],
    [
      'a pattern',
      {
        type: 'object',
        properties: { a: {} },
        patternProperties: { '^x_': { type: 'object', properties: { b: {} } } },
      },
    ],
    [
      'a discriminated union below the top',
      {
        type: 'object',
        properties: {
          u: {
            oneOf: [
              { type: 'object', properties: { kind: { const: 'a' }, a: {} } },
              { type: 'object', properties: { kind: { const: 'b' }, b: {} } },
            ],
          },
        },
      },
    ],
    ['nothing that can report', { type: 'object' }],
  ]

  for (const [what, schema] of schemas)
    it(`${what}: each constant is a list of the graph's places, and the source reads each one`, () => {
      const { root, nodes } = buildGraph(schema)
      const { source, constants } = sourceOf(root)
      const read = new Set([...source.matchAll(/C\[(\d+)\]/g)].map((m) => Number(m[1])))
      expect([...read].sort((a, b) => a - b)).toEqual(constants.map((_, i) => i))
      const places = new Set(nodes)
      for (const c of constants) {
        expect(Array.isArray(c)).toBe(true)
        expect((c as ReadonlyArray<unknown>).length).toBeGreaterThan(0)
        for (const p of c as ReadonlyArray<unknown>) expect(places.has(p as never)).toBe(true)
      }
    })
})
