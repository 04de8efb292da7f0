import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { isLeft, isRight } from 'fp-ts/lib/Either.js'
import { drawArgsProblem, parseArgs } from '../../src/index.js'
import { argsObject } from '../../src/steps/Args.js'
import { argsObjectArb } from '../support/arbitraries.js'

const tagOf = (u: unknown): string => {
  const r = parseArgs(u)
  return isLeft(r) ? r.left._tag : 'Right'
}

describe('parseArgs', () => {
  it('returns a plain object as the very same object', () => {
    const o = { path: '/tmp' }
    const r = parseArgs(o)
    expect(isRight(r) && r.right).toBe(o)
  })

  it('accepts a null-prototype object', () => {
    const o = Object.create(null) as Record<string, unknown>
    o['__proto__'] = 1
    const r = parseArgs(o)
    expect(isRight(r) && r.right).toBe(o)
  })

  it('parses a string holding a JSON object, keeping __proto__ as an own key', () => {
    const r = parseArgs('{"__proto__":{"x":1},"constructor":2}')
    expect(isRight(r)).toBe(true)
    if (isRight(r)) {
      expect(Object.keys(r.right)).toEqual(['__proto__', 'constructor'])
      expect(Object.getPrototypeOf(r.right)).toBe(Object.prototype)
    }
  })

  it.each([
    [undefined, 'Absent'],
    [null, 'Absent'],
    ['', 'Empty'],
    [' \n\t ', 'Empty'],
    ['{', 'Unparsable'],
    ['{"a":1} x', 'Unparsable'],
    ['[1,2]', 'NotAnObject'],
    ['null', 'NotAnObject'],
    ['42', 'NotAnObject'],
    ['"text"', 'NotAnObject'],
    ['true', 'NotAnObject'],
    [[1, 2], 'NotAnObject'],
    [42, 'NotAnObject'],
    [new Date(0), 'NotAnObject'],
    [new Map(), 'NotAnObject'],
  ])('tags %j as %s', (raw, tag) => {
    expect(tagOf(raw)).toBe(tag)
  })

  it.each([
    ['[1,2]', 'an array'],
    ['null', 'null'],
    ['42', 'a number'],
    ['"text"', 'a string'],
    [[1, 2], 'an array'],
    [Object.setPrototypeOf([1], null), 'an array'],
    [true, 'a boolean'],
    [new Date(0), 'an object that is not a plain object'],
    [Object.setPrototypeOf(() => ({}), null), 'a function'],
  ])('says what %j is when it is no object', (raw, got) => {
    expect(parseArgs(raw)).toEqual({ _tag: 'Left', left: { _tag: 'NotAnObject', got } })
  })

  it('describes every problem in words', () => {
    expect(drawArgsProblem({ _tag: 'Absent' })).toMatch(/missing/)
    expect(drawArgsProblem({ _tag: 'Empty' })).toMatch(/empty/)
    expect(drawArgsProblem({ _tag: 'Unparsable', message: 'Unexpected end' })).toMatch(
      /not valid JSON \(Unexpected end\)/,
    )
    expect(drawArgsProblem({ _tag: 'NotAnObject', got: 'an array' })).toMatch(/JSON object.*an array/)
  })

  it('round-trips any JSON object: the keys it reads are the keys that were sent', () => {
    fc.assert(
      fc.property(argsObjectArb, (o) => {
        const r = parseArgs(JSON.stringify(o))
        expect(isRight(r)).toBe(true)
        if (isRight(r)) expect(Object.keys(r.right)).toEqual(Object.keys(o))
      }),
    )
  })

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything(), (u) => {
        parseArgs(u)
      }),
    )
  })
})

describe('argsObject', () => {
  // the oracle: JSON.parse for a string, the plain-object test for anything else, written here on its own
  const expected = (raw: unknown): unknown => {
    if (typeof raw === 'string') {
      let parsed: unknown
      try {
        parsed = JSON.parse(raw)
      } catch {
        return undefined
      }
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : undefined
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined
    const proto: unknown = Object.getPrototypeOf(raw)
    return proto === Object.prototype || proto === null ? raw : undefined
  }
  const raws = fc.oneof(
    fc.json(),
    fc.string(),
    fc.constantFrom('', ' ', '[1]', 'null', '"x"', '{"a":', '{"__proto__":{"x":1}}', '{}'),
    fc.anything(),
    argsObjectArb.map((o) => JSON.stringify(o)),
  )

  it('is the object JSON.parse makes of a string, or the plain object given, and undefined otherwise', () => {
    fc.assert(
      fc.property(raws, (raw) => {
        const got = argsObject(raw)
        const want = expected(raw)
        if (typeof raw === 'string') expect(got).toEqual(want)
        else expect(got).toBe(want)
      }),
    )
  })

  it("is parseArgs' object exactly where parseArgs answers Right, and parseArgs' reasons are unchanged", () => {
    fc.assert(
      fc.property(raws, (raw) => {
        const r = parseArgs(raw)
        const o = argsObject(raw)
        expect(isRight(r)).toBe(o !== undefined)
        if (isRight(r) && typeof raw !== 'string') expect(r.right).toBe(o)
      }),
    )
    expect(parseArgs('  ')).toEqual({ _tag: 'Left', left: { _tag: 'Empty' } })
    expect(parseArgs('[1]')).toEqual({ _tag: 'Left', left: { _tag: 'NotAnObject', got: 'an array' } })
    expect(parseArgs('"x"')).toEqual({ _tag: 'Left', left: { _tag: 'NotAnObject', got: 'a string' } })
    expect(parseArgs(undefined)).toEqual({ _tag: 'Left', left: { _tag: 'Absent' } })
    expect(parseArgs(null)).toEqual({ _tag: 'Left', left: { _tag: 'Absent' } })
    expect(parseArgs(new Date(0))).toEqual({
      _tag: 'Left',
      left: { _tag: 'NotAnObject', got: 'an object that is not a plain object' },
    })
    const bad = parseArgs('{"a":')
    expect(bad._tag === 'Left' && bad.left._tag === 'Unparsable' && bad.left.message.length > 0).toBe(true)
  })
})
