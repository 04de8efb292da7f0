// Reading members of data this code did not make: nothing to read and could not be
// read are two outcomes, so a guard cannot hide behind the catch of a read.
import { describe, expect, it } from 'vitest'
import { memberOf, ownCopy } from '../../src/kernel/guards.js'

const UNREADABLE = Symbol('unreadable')
const throwing = (): never => {
  throw new Error('boom')
}

describe('memberOf', () => {
  it('reads a member of an object, inherited ones too', () => {
    expect(memberOf({ id: 'a' }, 'id', UNREADABLE)).toBe('a')
    expect(memberOf(Object.create({ id: 'b' }), 'id', UNREADABLE)).toBe('b')
    expect(memberOf({}, 'id', UNREADABLE)).toBeUndefined()
  })

  it('has nothing to read in what is not an object: no member of a primitive prototype, and no throw for null or undefined', () => {
    // a primitive's members come from its prototype: 'ab'.length is 2, (1).toFixed a function
    expect(memberOf('ab', 'length', UNREADABLE)).toBeUndefined()
    expect(memberOf(1, 'toFixed', UNREADABLE)).toBeUndefined()
    expect(
      memberOf(
        Object.assign(() => 0, { id: 'f' }),
        'id',
        UNREADABLE,
      ),
    ).toBeUndefined()
    // reading a member of null or undefined throws; with nothing to read, nothing is read
    expect(memberOf(null, 'id', UNREADABLE)).toBeUndefined()
    expect(memberOf(undefined, 'id', UNREADABLE)).toBeUndefined()
  })

  it('answers `unreadable` when a getter or a Proxy trap throws, undefined when none is given', () => {
    const getter = Object.defineProperty({}, 'id', { get: throwing })
    const trap = new Proxy({}, { get: throwing })
    expect(memberOf(getter, 'id', UNREADABLE)).toBe(UNREADABLE)
    expect(memberOf(trap, 'id', UNREADABLE)).toBe(UNREADABLE)
    expect(memberOf(getter, 'id')).toBeUndefined()
  })
})

describe('ownCopy', () => {
  it('is a plain object of the own enumerable members: each writable, enumerable and configurable, `__proto__` a member like any other', () => {
    const source = JSON.parse('{"a":1,"__proto__":{"b":2}}') as object
    Object.defineProperty(source, 'hidden', { value: 3, enumerable: false })
    const copy = ownCopy(Object.freeze(source))
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['a', '__proto__'])
    expect(Object.getOwnPropertyDescriptor(copy, 'a')).toEqual({
      value: 1,
      writable: true,
      enumerable: true,
      configurable: true,
    })
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')).toEqual({
      value: { b: 2 },
      writable: true,
      enumerable: true,
      configurable: true,
    })
    // the copy is the caller's to change, though the source was frozen
    copy['a'] = 9
    expect(copy['a']).toBe(9)
    expect((source as { a: number }).a).toBe(1)
  })
})
