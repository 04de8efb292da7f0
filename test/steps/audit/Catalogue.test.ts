// What the audit knows about the tools in force: the catalogue of a listing, and the
// memo each tool's check keeps of the last key list it found clean.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { extractDeclarations } from '../../../src/index.js'
import { catalogueOf, diffTopKeys, lastCleanShape, toleratedOf } from '../../../src/steps/audit/Catalogue.js'
import { decl } from '../../support/fakes.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

describe('toleratedOf', () => {
  it('is reason alone when no names are given', () => {
    expect([...toleratedOf()]).toEqual(['reason'])
    expect([...toleratedOf([])]).toEqual(['reason'])
  })
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('extractDeclarations', () => {
  it('reads nothing from a listing that is not an array, and does not throw', () => {
    for (const listing of [null, undefined, 42, {}, { length: 1, 0: decl('t', ['a']) }, new Set([decl('t', ['a'])])]) {
      expect(extractDeclarations(listing as never).size).toBe(0)
    }
  })
})

describe('diffKeys', () => {
  it('never reports reason, whatever names are tolerated besides', () => {
    expect(diffTopKeys(new Set(['path']), new Set(['_meta']))(['path', 'reason', '_meta', 'x'])).toEqual(['x'])
    expect(diffTopKeys(new Set(['path']), new Set())(['reason', 'x'])).toEqual(['x'])
  })
})

describe('catalogueOf', () => {
  it('leaves out a tool whose every property is a tolerated name, and keeps one that declares anything else', () => {
    const c = catalogueOf(toleratedOf(['_meta']))([
      decl('meta_only', ['_meta']),
      decl('meta_and_reason', ['_meta', 'reason']),
      decl('kept', ['_meta', 'path']),
    ])
    expect([...c.keys()]).toEqual(['kept'])
    expect(
      c
        .get('kept')
        ?.diff({ path: 1, _meta: 2, reason: 3, x: 4 })
        .map((k) => k.path),
    ).toEqual(['x'])
  })

  it('leaves out a tool that declares only reason, whatever names are tolerated', () => {
    expect(catalogueOf(new Set())([decl('ping', ['reason'])]).size).toBe(0)
    expect(catalogueOf(new Set(['_meta']))([decl('ping', ['reason']), decl('kept', ['reason', 'x'])]).size).toBe(1)
  })

  it('audits a tolerated name like any other when it is not tolerated here', () => {
    expect([...catalogueOf(toleratedOf())([decl('meta_only', ['_meta'])]).keys()]).toEqual(['meta_only'])
  })
})

describe('lastCleanShape', () => {
  const declared = new Set(['a', 'b', 'c'])
  /** A check over diffKeys that counts how often it asks diff. */
  const counted = () => {
    const asked: Array<ReadonlyArray<string>> = []
    const inner = diffTopKeys(declared)
    const check = lastCleanShape((keys) => {
      asked.push(keys)
      return inner(keys)
    })
    return { check, asked }
  }
  const argsOf = (keys: ReadonlyArray<string>): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, 1]))

  it('answers only from the list found clean when the keys are that list, in that order', () => {
    const { check, asked } = counted()
    expect(check({ a: 1, b: 2 })).toEqual([])
    expect(asked).toHaveLength(1)
    expect(check({ a: 3, b: 4 })).toEqual([])
    expect(asked).toHaveLength(1)
  })

  it('asks diff about anything else: no keys, fewer, more, another order, other keys', () => {
    const { check, asked } = counted()
    expect(check({})).toEqual([])
    expect(asked).toHaveLength(1)
    check({ a: 1, b: 2 })
    for (const keys of [[], ['a'], ['a', 'b', 'c'], ['b', 'a'], ['a', 'x']]) {
      const before = asked.length
      expect(check(argsOf(keys))).toEqual(diffTopKeys(declared)(keys))
      expect(asked).toHaveLength(before + 1)
    }
  })

  it('never remembers a list that was not clean', () => {
    const { check, asked } = counted()
    expect(check({ a: 1, x: 2 })).toEqual(['x'])
    expect(check({ a: 1, x: 2 })).toEqual(['x'])
    expect(asked).toHaveLength(2)
  })

  it('changes no answer, and asks diff exactly when the keys are not the last clean list (model: that list)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'x', 'y'), { maxLength: 4 }), { maxLength: 12 }),
        (keySets) => {
          const { check, asked } = counted()
          let lastClean: ReadonlyArray<string> = []
          for (const keys of keySets) {
            const before = asked.length
            const expected = diffTopKeys(declared)(keys)
            expect(check(argsOf(keys))).toEqual(expected)
            const remembered =
              lastClean.length > 0 && lastClean.length === keys.length && lastClean.every((k, i) => k === keys[i])
            expect(asked.length - before).toBe(remembered ? 0 : 1)
            if (!remembered && expected.length === 0) lastClean = keys
          }
        },
      ),
    )
  })
})
