// The provider guards: what counts as a provider, and the TypeError that names what
// is wrong with anything else.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { right } from 'fp-ts/lib/Either.js'
import { assertProvider, isProvider } from '../../src/kernel/model.js'

const toolsForLlm = () => Promise.resolve(right([]))
const executeToolCalls = () => () => Promise.resolve(right([]))

describe('isProvider', () => {
  it('answers true for a record of the two functions', () => {
    expect(isProvider({ toolsForLlm, executeToolCalls })).toBe(true)
  })

  it('answers false for anything that is not an object, even a function carrying both members', () => {
    expect(isProvider(Object.assign(() => 0, { toolsForLlm, executeToolCalls }))).toBe(false)
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined)), (u) => {
        expect(isProvider(u)).toBe(false)
      }),
    )
  })

  it('answers false for an object missing either function', () => {
    expect(isProvider({})).toBe(false)
    expect(isProvider({ toolsForLlm })).toBe(false)
    expect(isProvider({ executeToolCalls })).toBe(false)
    expect(isProvider({ toolsForLlm: 1, executeToolCalls })).toBe(false)
  })
})

describe('assertProvider', () => {
  const refusal = (u: unknown): string => {
    try {
      assertProvider('withX', u)
    } catch (e) {
      expect(e).toBeInstanceOf(TypeError)
      return (e as TypeError).message
    }
    throw new Error('expected a TypeError')
  }
  const expected = 'withX: expected a provider ({ toolsForLlm, executeToolCalls }), but '

  it('lets a provider through', () => {
    expect(() => assertProvider('withX', { toolsForLlm, executeToolCalls })).not.toThrow()
  })

  it('says what it got when it got no object', () => {
    expect(refusal(null)).toBe(`${expected}got null`)
    expect(refusal(1)).toBe(`${expected}got number 1`)
    expect(refusal(Object.assign(() => 0, { toolsForLlm, executeToolCalls }))).toBe(
      `${expected}got a function of 0 parameters`,
    )
  })

  it('names each member that is not a function', () => {
    expect(refusal({})).toBe(`${expected}\`toolsForLlm\` is not a function and \`executeToolCalls\` is not a function`)
    expect(refusal({ toolsForLlm })).toBe(`${expected}\`executeToolCalls\` is not a function`)
    expect(refusal({ executeToolCalls })).toBe(`${expected}\`toolsForLlm\` is not a function`)
  })

  it('refuses an async executeToolCalls, pointing at fromAsync', () => {
    expect(refusal({ toolsForLlm, executeToolCalls: async () => Promise.resolve([]) })).toMatch(
      /^withX: .*async function.*fromAsync\(provider\)$/,
    )
  })

  it('lets through an executeToolCalls with no constructor to look at', () => {
    const bare = Object.setPrototypeOf(() => () => Promise.resolve(right([])), null) as unknown
    expect(() => assertProvider('withX', { toolsForLlm, executeToolCalls: bare })).not.toThrow()
  })

  it('throws nothing but its own TypeError when executeToolCalls changes between reads', () => {
    let reads = 0
    const fickle = {
      toolsForLlm,
      get executeToolCalls(): unknown {
        reads += 1
        return reads === 1 ? executeToolCalls : undefined
      },
    }
    expect(() => assertProvider('withX', fickle)).not.toThrow()
  })
})
