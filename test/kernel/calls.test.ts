// Reading calls and batches from code this library did not write: every read guarded,
// so a hostile call costs only itself.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { left, right } from 'fp-ts/lib/Either.js'
import { MAX_BATCH, batchSize, callAt, callIdOf, callNameOf } from '../../src/kernel/calls.js'

// An array whose `length` reads as whatever `length` answers: what a Proxy can do.
const withLength = (length: () => unknown): ReadonlyArray<unknown> =>
  new Proxy([], { get: (t, k, r) => (k === 'length' ? length() : Reflect.get(t, k, r)) })

describe('callIdOf', () => {
  it('reads the id as a string', () => {
    expect(callIdOf({ id: 'a' })).toBe('a')
    expect(callIdOf({ id: 7 })).toBe('7')
  })

  it('answers "" for a call with no id, an id of null or undefined', () => {
    expect(callIdOf({})).toBe('')
    expect(callIdOf({ id: null })).toBe('')
    expect(callIdOf({ id: undefined })).toBe('')
  })

  it('answers "" for anything that is not an object, even a function carrying an id', () => {
    expect(callIdOf(Object.assign(() => 0, { id: 'f' }))).toBe('')
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined)), (u) => {
        expect(callIdOf(u)).toBe('')
      }),
    )
  })

  it('answers "" when the id getter throws', () => {
    const call = Object.defineProperty({}, 'id', {
      get: () => {
        throw new Error('boom')
      },
    })
    expect(callIdOf(call)).toBe('')
  })

  it('answers "" for an id whose own toString throws', () => {
    const id = {
      toString: () => {
        throw new Error('boom')
      },
    }
    expect(callIdOf({ id })).toBe('')
  })
})

describe('callNameOf', () => {
  it('reads the function name when it is a string', () => {
    expect(callNameOf({ function: { name: 'ls' } })).toBe('ls')
  })

  it('answers undefined for a name that is not a string', () => {
    expect(callNameOf({ function: { name: 7 } })).toBeUndefined()
    expect(callNameOf({ function: {} })).toBeUndefined()
  })

  it('answers undefined when the call or its function is not an object, even a named JS function', () => {
    expect(callNameOf(Object.assign(() => 0, { function: { name: 'ls' } }))).toBeUndefined()
    expect(callNameOf({ function: function ls() {} })).toBeUndefined()
    expect(callNameOf({ function: null })).toBeUndefined()
    expect(callNameOf({ function: 'ls' })).toBeUndefined()
    expect(callNameOf(null)).toBeUndefined()
    expect(callNameOf('ls')).toBeUndefined()
  })

  it('answers undefined when a getter throws', () => {
    const call = {
      get function(): unknown {
        throw new Error('boom')
      },
    }
    expect(callNameOf(call)).toBeUndefined()
  })
})

describe('batchSize', () => {
  it('counts the calls of an array', () => {
    fc.assert(
      fc.property(fc.array(fc.anything(), { maxLength: 20 }), (calls) => {
        expect(batchSize(calls)).toEqual(right(calls.length))
      }),
    )
  })

  it('refuses what is not an array, saying what it got', () => {
    expect(batchSize({ length: 1 })).toEqual(left('expected an array of tool calls, got an object'))
  })

  it('takes exactly MAX_BATCH calls and refuses one more, saying how many', () => {
    expect(batchSize(new Array(MAX_BATCH))).toEqual(right(MAX_BATCH))
    expect(batchSize(new Array(MAX_BATCH + 1))).toEqual(
      left(`it holds ${MAX_BATCH + 1} calls, more than the ${MAX_BATCH} one batch may hold`),
    )
  })

  it('refuses a length that is not a non-negative safe integer, saying what it was', () => {
    expect(batchSize(withLength(() => '3'))).toEqual(left('its length is the string "3"'))
    expect(batchSize(withLength(() => 1.5))).toEqual(left('its length is number 1.5'))
    expect(batchSize(withLength(() => -1))).toEqual(left('its length is number -1'))
    expect(batchSize(withLength(() => Number.MAX_SAFE_INTEGER + 2))).toEqual(
      left(`its length is number ${Number.MAX_SAFE_INTEGER + 2}`),
    )
    expect(batchSize(withLength(() => 0))).toEqual(right(0))
  })

  it('refuses a length that throws when read, saying why', () => {
    const calls = withLength(() => {
      throw new Error('boom')
    })
    expect(batchSize(calls)).toEqual(left('its length cannot be read (boom)'))
  })
})

describe('callAt', () => {
  it('reads the call at a position, a hole as undefined', () => {
    expect(callAt(['a', 'b'], 1)).toEqual(right('b'))
    expect(callAt(['a'], 3)).toEqual(right(undefined))
  })

  it('answers why when reading the position throws', () => {
    const calls = new Proxy(['a'], {
      get: () => {
        throw new Error('boom')
      },
    })
    expect(callAt(calls, 0)).toEqual(left('boom'))
  })
})
