import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { parseArgs } from '../../src/index.js'
import { argsOfBatch, handDown, peekBatch } from '../../src/internal/argsMemo.js'
import { rawArgsArb } from '../support/arbitraries.js'

const callWith = (raw: unknown) => ({ id: 'x', function: { name: 't', arguments: raw } })

describe('the shared arguments memo', () => {
  it('parses a call of a batch once, however many readers ask', () => {
    const c = callWith('{"a":1}')
    const batch = [c]
    const first = argsOfBatch(batch)(0, c, c.function.arguments)
    expect(argsOfBatch(batch)(0, c, c.function.arguments)).toBe(first)
    expect(peekBatch(batch)(0, c, c.function.arguments)).toBe(first)
  })

  it('answers only for the very same call with the very same raw value', () => {
    const c = callWith('{"a":1}')
    const batch = [c]
    const first = argsOfBatch(batch)(0, c, c.function.arguments)
    expect(argsOfBatch(batch)(0, callWith('{"a":1}'), '{"a":1}')).not.toBe(first)
    expect(peekBatch(batch)(0, c, '{"a":1} ')).toBeUndefined()
    expect(peekBatch([c])(0, c, c.function.arguments)).toBeUndefined() // another batch
  })

  it('hands a parse down to a batch a layer built', () => {
    const c = callWith('{"a":1}')
    const parsed = argsOfBatch([c])(0, c, c.function.arguments)
    const copy = { ...c }
    const below = [copy]
    handDown(below)(0, copy, copy.function.arguments, parsed)
    expect(argsOfBatch(below)(0, copy, copy.function.arguments)).toBe(parsed)
    handDown(below)(0, copy, copy.function.arguments, undefined) // nothing known: nothing changes
    expect(peekBatch(below)(0, copy, copy.function.arguments)).toBe(parsed)
  })

  it('always answers what parseArgs answers', () => {
    fc.assert(
      fc.property(fc.array(rawArgsArb, { maxLength: 6 }), (raws) => {
        const batch = raws.map(callWith)
        const read = argsOfBatch(batch)
        batch.forEach((c, i) => {
          expect(read(i, c, c.function.arguments)).toEqual(parseArgs(c.function.arguments))
          expect(argsOfBatch(batch)(i, c, c.function.arguments)).toEqual(parseArgs(c.function.arguments))
        })
      }),
    )
  })
})
