// Construction-time validation: a mistyped option is a TypeError that names it.
import { describe, expect, it, vi } from 'vitest'
import * as t from 'io-ts/lib/index.js'
import { isLeft } from 'fp-ts/lib/Either.js'
import { assertCallback, callBack, decodeOptions, drawErrors } from '../../src/kernel/options.js'

const errorsOf = (c: t.Any, u: unknown): t.Errors => {
  const r = c.decode(u)
  if (!isLeft(r)) throw new Error('expected a failure')
  return r.left
}

describe('drawErrors', () => {
  it('names a failure at the root "value"', () => {
    expect(drawErrors(errorsOf(t.number, 'x'))).toBe('value must be number, got the string "x"')
  })

  it('names a nested failure by its dotted path, leaving out empty keys', () => {
    const c = t.partial({ a: t.record(t.string, t.number) })
    expect(drawErrors(errorsOf(c, { a: { b: 'x' } }))).toBe('a.b must be number, got the string "x"')
    expect(drawErrors(errorsOf(c, { a: { '': 'x' } }))).toBe('a must be number, got the string "x"')
  })

  it('says "a valid value" when no type is known', () => {
    expect(drawErrors([{ value: 1, context: [] }])).toBe('value must be a valid value, got number 1')
  })

  it('joins distinct failures with "; " and says a repeated one once', () => {
    const c = t.type({ a: t.number, b: t.string })
    const errors = errorsOf(c, { a: 'x', b: 1 })
    const drawn = 'a must be number, got the string "x"; b must be string, got number 1'
    expect(drawErrors(errors)).toBe(drawn)
    expect(drawErrors([...errors, ...errors])).toBe(drawn)
  })
})

describe('decodeOptions', () => {
  const props = { n: t.number, s: t.string }

  it('takes undefined as no options and keeps the present ones', () => {
    expect(decodeOptions('withX', props, undefined)).toEqual({})
    expect(decodeOptions('withX', props, { n: 1 })).toEqual({ n: 1 })
  })

  it('refuses options that are not an object, null and arrays included', () => {
    expect(() => decodeOptions('withX', props, null)).toThrow(
      new TypeError('withX: options must be an object, got null'),
    )
    expect(() => decodeOptions('withX', props, [])).toThrow(
      new TypeError('withX: options must be an object, got an array'),
    )
    expect(() => decodeOptions('withX', props, 1)).toThrow(
      new TypeError('withX: options must be an object, got number 1'),
    )
  })

  it('names one unknown option in the singular, several in the plural, with the known ones', () => {
    expect(() => decodeOptions('withX', props, { m: 1 })).toThrow(
      new TypeError('withX: unknown option "m" (known options: n, s)'),
    )
    expect(() => decodeOptions('withX', props, { m: 1, o: 2 })).toThrow(
      new TypeError('withX: unknown options "m", "o" (known options: n, s)'),
    )
  })

  it('says which known option an unknown one plainly points at, or the one an alias names', () => {
    const named = { maxDepth: t.number, path: t.string }
    expect(() => decodeOptions('withX', named, { max_depth: 1 })).toThrow(
      new TypeError('withX: unknown option "max_depth" (known options: maxDepth, path); did you mean "maxDepth"?'),
    )
    expect(() =>
      decodeOptions('withX', named, { file: 'a', depth: 1, zzz: 0 }, '', new Map([['file', 'path']])),
    ).toThrow(
      new TypeError(
        'withX: unknown options "file", "depth", "zzz" (known options: maxDepth, path); did you mean "path" for "file", "maxDepth" for "depth"?',
      ),
    )
  })

  it('refuses a value that does not decode, saying where and what', () => {
    expect(() => decodeOptions('withX', props, { n: 'x' })).toThrow(
      new TypeError('withX: n must be number, got the string "x"'),
    )
  })
})

describe('callBack', () => {
  it('runs a callback that does its work at once', () => {
    const f = vi.fn()
    callBack(f, 1)
    expect(f).toHaveBeenCalledWith(1)
  })

  it('runs the effect a callback answers', () => {
    const effect = vi.fn()
    callBack(() => effect, 1)
    expect(effect).toHaveBeenCalledOnce()
  })

  it('swallows a callback that throws, or whose effect throws, and answers what was thrown', () => {
    const boom = new Error('boom')
    expect(
      callBack(() => {
        throw boom
      }, 1),
    ).toBe(boom)
    expect(
      callBack(
        () => () => {
          throw boom
        },
        1,
      ),
    ).toBe(boom)
  })

  // an async callback, or a Task (which passes for an IO): a rejection left unhandled would end a Node process
  it('handles the rejection of a promise a callback or its effect answers', async () => {
    const handlers: Array<unknown> = []
    const thenable = { then: (_ok: unknown, ko: unknown) => void handlers.push(ko) }
    callBack(() => thenable, 1)
    callBack(() => () => thenable, 1)
    expect(handlers.map((h) => typeof h)).toEqual(['function', 'function'])
    // a real rejection, from an async callback and from a Task: vitest fails the run on an unhandled one
    callBack(async () => Promise.reject(new Error('later')), 1)
    callBack(() => () => Promise.reject(new Error('later')), 1)
    await new Promise((r) => setTimeout(r, 10))
  })

  it('answers undefined for a callback that ran to the end, whatever it answered, and for no callback', () => {
    // a callback answering a non-function is not called again: calling it would throw
    for (const answer of [undefined, null, 0, 'done', {}, Promise.resolve()])
      expect(callBack(() => answer, 1)).toBeUndefined()
    expect(callBack(() => () => 'ran', 1)).toBeUndefined()
    expect(callBack(undefined, 1)).toBeUndefined()
  })
})

describe('assertCallback', () => {
  it('lets undefined and a function of few enough parameters through', () => {
    expect(() => assertCallback('withX', 'onY', undefined, 1)).not.toThrow()
    expect(() => assertCallback('withX', 'onY', (_a: unknown) => 0, 1)).not.toThrow()
  })

  it('refuses what is not a function', () => {
    expect(() => assertCallback('withX', 'onY', 1, 1)).toThrow(
      new TypeError('withX: option "onY" must be a function, got number 1'),
    )
  })

  it('refuses a function of too many parameters, in the singular for one', () => {
    expect(() => assertCallback('withX', 'onY', (_a: unknown, _b: unknown) => 0, 1)).toThrow(
      new TypeError('withX: option "onY" must take at most 1 parameter and return an effect, but it takes 2'),
    )
    expect(() => assertCallback('withX', 'onY', (_a: unknown, _b: unknown, _c: unknown) => 0, 2)).toThrow(
      new TypeError('withX: option "onY" must take at most 2 parameters and return an effect, but it takes 3'),
    )
  })
})
