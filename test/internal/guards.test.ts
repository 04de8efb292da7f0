import { describe, expect, it } from 'vitest'
import { left, right } from 'fp-ts/lib/Either.js'
import { memberOf, readMember } from '../../src/internal/guards.js'

describe('readMember', () => {
  it('reads a member of an object, inherited ones too', () => {
    expect(readMember({ id: 'a' }, 'id')).toStrictEqual(right('a'))
    expect(readMember(Object.create({ id: 'b' }), 'id')).toStrictEqual(right('b'))
    expect(readMember({}, 'id')).toStrictEqual(right(undefined))
  })

  it('has nothing to read in what is not an object: no member of a primitive prototype, and no throw for null or undefined', () => {
    // a primitive's members come from its prototype: 'ab'.length is 2, (1).toFixed a function
    expect(readMember('ab', 'length')).toStrictEqual(right(undefined))
    expect(readMember(1, 'toFixed')).toStrictEqual(right(undefined))
    expect(readMember(Object.assign(() => 0, { id: 'f' }), 'id')).toStrictEqual(right(undefined))
    // reading a member of null or undefined throws; with nothing to read, nothing is thrown
    expect(readMember(null, 'id')).toStrictEqual(right(undefined))
    expect(readMember(undefined, 'id')).toStrictEqual(right(undefined))
  })

  it('answers what a getter or a Proxy trap threw, apart from nothing to read', () => {
    const boom = new Error('boom')
    const getter = Object.defineProperty({}, 'id', {
      get: () => {
        throw boom
      },
    })
    expect(readMember(getter, 'id')).toStrictEqual(left(boom))
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw boom
        },
      },
    )
    expect(readMember(trap, 'id')).toStrictEqual(left(boom))
  })
})

describe('memberOf', () => {
  it('is the member read, or undefined when there is none or it cannot be read', () => {
    const boom = Object.defineProperty({}, 'id', {
      get: () => {
        throw new Error('boom')
      },
    })
    expect(memberOf({ id: 0 }, 'id')).toBe(0)
    expect(memberOf(null, 'id')).toBeUndefined()
    expect(memberOf(boom, 'id')).toBeUndefined()
  })
})
