// Reading calls and batches from code this library did not write: every read guarded,
// so a hostile call costs only itself.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { left, right } from 'fp-ts/lib/Either.js'
import {
  MAX_BATCH,
  batchSize,
  callAt,
  callContextOf,
  callIdOf,
  argumentsIn,
  callNameOf,
  functionOf,
  keepContext,
  nameIn,
  stableArgumentsText,
} from '../../src/kernel/calls.js'

// An array whose `length` reads as whatever `length` answers: what a Proxy can do.
const withLength = (length: () => unknown): ReadonlyArray<unknown> =>
  new Proxy([], { get: (t, k, r) => (k === 'length' ? length() : Reflect.get(t, k, r)) })

describe('functionOf and nameIn', () => {
  it("read a call's function member and its name, and answer undefined for whatever is not there", () => {
    const fn = { name: 'echo', arguments: '{}' }
    expect(functionOf({ function: fn })).toBe(fn)
    expect(nameIn(fn)).toBe('echo')
    for (const call of [null, undefined, 'x', 7, {}, { function: null }, { function: 'f' }, { function: () => 1 }])
      expect(functionOf(call)).toBeUndefined()
    expect(nameIn(undefined)).toBeUndefined()
    expect(nameIn({ name: 7 })).toBeUndefined()
    expect(nameIn({})).toBeUndefined()
    const parsed = { a: 1 }
    expect(argumentsIn({ arguments: parsed })).toBe(parsed)
    expect(argumentsIn({ arguments: '{}' })).toBe('{}')
    expect(argumentsIn(undefined)).toBeUndefined()
    expect(argumentsIn({})).toBeUndefined()
  })

  it('let a getter that throws throw, for the caller to skip the call (callNameOf answers undefined)', () => {
    const call = {
      get function(): never {
        throw new Error('no function')
      },
    }
    expect(() => functionOf(call)).toThrow('no function')
    expect(callNameOf(call)).toBeUndefined()
  })
})

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

describe('stableArgumentsText', () => {
  const call = (fn: unknown) => ({ id: '1', function: fn })

  it('the arguments string held as plain data, the same string', () => {
    const text = '{"a":1}'
    expect(stableArgumentsText(call({ name: 'echo', arguments: text }))).toBe(text)
  })

  it('undefined for object arguments, a getter anywhere on the way, a Proxy, or no function', () => {
    expect(stableArgumentsText(call({ name: 'echo', arguments: { a: 1 } }))).toBeUndefined()
    expect(
      stableArgumentsText(
        call({
          name: 'echo',
          get arguments() {
            return '{}'
          },
        }),
      ),
    ).toBeUndefined()
    expect(
      stableArgumentsText({
        get function() {
          return { arguments: '{}' }
        },
      }),
    ).toBeUndefined()
    expect(stableArgumentsText(call(new Proxy({ arguments: '{}' }, {})))).toBeUndefined()
    expect(stableArgumentsText(new Proxy(call({ arguments: '{}' }), {}))).toBeUndefined()
    expect(stableArgumentsText(call(null))).toBeUndefined()
    expect(stableArgumentsText(call('{}'))).toBeUndefined()
    expect(stableArgumentsText({ id: '1' })).toBeUndefined()
    for (const u of [null, undefined, '{}', 3]) expect(stableArgumentsText(u)).toBeUndefined()
    // an inherited member is not the call's own
    expect(stableArgumentsText(call(Object.create({ arguments: '{}' })))).toBeUndefined()
  })
})

describe('callContextOf and keepContext', () => {
  const fn = () => undefined

  it('only the well-typed members of mcp_context, each the same value', () => {
    const signal = new AbortController().signal
    const session = { id: 's' }
    const hostCapabilities = { elicitation: {} }
    const context = { signal, onProgress: fn, hostCapabilities, requestHost: fn, session, onLog: fn }
    const read = callContextOf({ mcp_context: context })
    expect(read).toStrictEqual(context)
    expect(read?.signal).toBe(signal)
    expect(read?.session).toBe(session)
    expect(read?.hostCapabilities).toBe(hostCapabilities)
    const wrong = { signal: {}, onProgress: 1, hostCapabilities: null, requestHost: 'x', session: null, onLog: {} }
    expect(callContextOf({ mcp_context: wrong })).toStrictEqual({})
    expect(callContextOf({ mcp_context: { session: 'str', hostCapabilities: 5 } })).toStrictEqual({})
  })

  it('undefined with no context, or one that is not an object', () => {
    for (const c of [{}, { mcp_context: null }, { mcp_context: 'ctx' }, { mcp_context: fn }, null, 'call'])
      expect(callContextOf(c)).toBeUndefined()
  })

  it('keepContext: the copy itself without a context, else the copy with the very same context', () => {
    const copy = { id: '2', function: { name: 'echo', arguments: '{}' } }
    expect(keepContext({ id: '1' }, copy)).toBe(copy)
    const mcp_context = { onLog: fn }
    const kept = keepContext({ id: '1', mcp_context }, copy)
    expect(kept).toStrictEqual({ ...copy, mcp_context })
    expect(kept.mcp_context).toBe(mcp_context)
  })
})
