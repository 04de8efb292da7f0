import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { isLeft, isRight } from 'fp-ts/lib/Either.js'
import { drawArgsProblem, parseArgs } from '../../src/index.js'
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
