// Values and failures as words: what every error message a model or a human reads is
// made of.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  STDERR_TAIL_CHARS,
  cut,
  describeError,
  describeValue,
  escapeControls,
  firstOf,
  stderrEnd,
  unknownToolMessage,
} from '../../src/kernel/describe.js'
import { describeError as cliDescribeError } from '../../src/cli/text.js'

describe('describeValue', () => {
  it('quotes a short string whole', () => {
    expect(describeValue('')).toBe('the string ""')
    expect(describeValue('x'.repeat(40))).toBe(`the string "${'x'.repeat(40)}"`)
  })

  it('cuts a string longer than 40 characters to its first 40 and an ellipsis', () => {
    expect(describeValue('x'.repeat(41))).toBe(`the string "${'x'.repeat(40)}…"`)
  })

  it('counts a function’s parameters, in the singular for one', () => {
    expect(describeValue(() => 0)).toBe('a function of 0 parameters')
    expect(describeValue((_a: unknown) => 0)).toBe('a function of 1 parameter')
    expect(describeValue((_a: unknown, _b: unknown) => 0)).toBe('a function of 2 parameters')
  })

  it('names null, arrays, objects, undefined and the other primitives', () => {
    expect(describeValue(null)).toBe('null')
    expect(describeValue([1])).toBe('an array')
    expect(describeValue({})).toBe('an object')
    expect(describeValue(undefined)).toBe('undefined')
    expect(describeValue(7)).toBe('number 7')
    expect(describeValue(true)).toBe('boolean true')
  })
})

describe('describeError', () => {
  it('is an error’s message, or its name when the message is empty', () => {
    expect(describeError(new TypeError('bad'))).toBe('bad')
    expect(describeError(new TypeError(''))).toBe('TypeError')
  })

  it('is a string as it is, and anything else as JSON, or as String where JSON has no text for it', () => {
    expect(describeError('down')).toBe('down')
    expect(describeError({ code: 1 })).toBe('{"code":1}')
    expect(describeError(undefined)).toBe('undefined')
    expect(describeError(Symbol('s'))).toBe('Symbol(s)')
  })

  it('is String of a value JSON cannot write', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expect(describeError(cyclic)).toBe('[object Object]')
    expect(describeError(10n)).toBe('10')
  })

  it('still answers for a value that cannot be written at all', () => {
    const hostile = {
      toJSON: () => {
        throw new Error('no')
      },
      toString: () => {
        throw new Error('no')
      },
    }
    expect(describeError(hostile)).toBe('an unreadable error')
  })

  it('still answers for an Error whose message cannot be read', () => {
    const e = new Error('x')
    Object.defineProperty(e, 'message', {
      get: () => {
        throw new Error('no')
      },
    })
    expect(describeError(e)).toBe('an unreadable error')
  })

  it('is the one the command prints with (its copy, which could throw on both, is gone)', () => {
    expect(cliDescribeError).toBe(describeError)
  })
})

describe('escapeControls', () => {
  it('writes every C0, DEL and C1 control character as \\uXXXX', () => {
    expect(escapeControls('\u001b[2J\u0007\u0000')).toBe('\\u001b[2J\\u0007\\u0000')
    expect(escapeControls('a\u007fb\u0085c\u009f')).toBe('a\\u007fb\\u0085c\\u009f')
  })

  it('writes line and paragraph separators, direction marks and overrides, and the BOM as \\uXXXX too', () => {
    expect(escapeControls('a\u2028b\u2029c\u202ed\u2066e\u200ef\u061cg\ufeff')).toBe(
      'a\\u2028b\\u2029c\\u202ed\\u2066e\\u200ef\\u061cg\\ufeff',
    )
  })

  it('leaves every other character as it was, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (s) => {
        // eslint-disable-next-line no-control-regex
        const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g
        const plain = s.replace(unsafe, '')
        expect(escapeControls(plain)).toBe(plain)
        expect(escapeControls(s)).not.toMatch(unsafe)
      }),
      { numRuns: 50 },
    )
  })
})

describe('cut', () => {
  it('keeps a string of at most max characters as it is, and cuts a longer one to max with an ellipsis', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.nat({ max: 200 }), (s, max) => {
        const out = cut(s, max)
        expect(out).toBe(s.length <= max ? s : s.slice(0, max) + '…')
      }),
    )
  })
})

describe('unknownToolMessage', () => {
  it('names the tool as called, cut at 200 characters (a model chose it), and the first 30 available', () => {
    const names = Array.from({ length: 31 }, (_, i) => `t${i}`)
    const long = 'x'.repeat(10_000)
    expect(unknownToolMessage(long, names)).toBe(
      `there is no tool named "${'x'.repeat(200)}…"; the available tools are ${names
        .slice(0, 30)
        .map((n) => `"${n}"`)
        .join(', ')}, …`,
    )
    expect(unknownToolMessage('a\u001b', [])).toBe('there is no tool named "a\\u001b"; no tools are available')
  })
})

describe('stderrEnd', () => {
  it('quotes the last five lines that say something, escaped, marking what came before', () => {
    expect(stderrEnd([], false)).toBe('')
    expect(stderrEnd([' ', ''], true)).toBe('')
    expect(stderrEnd(['a', ' ', 'b'], false)).toBe('; the end of its stderr: a | b')
    expect(stderrEnd(['a'], true)).toBe('; the end of its stderr: … | a')
    expect(stderrEnd(['a'], false, true)).toBe('; the end of its stderr: …a')
    expect(stderrEnd(['1', '2', '3', '4', '5', '6'], false)).toBe('; the end of its stderr: … | 2 | 3 | 4 | 5 | 6')
    expect(stderrEnd(['1', '2', '3', '4', '5'], false)).toBe('; the end of its stderr: 1 | 2 | 3 | 4 | 5')
    expect(stderrEnd(['\u001b]0;owned\u0007'], false)).toBe('; the end of its stderr: \\u001b]0;owned\\u0007')
  })

  it(`keeps the last ${STDERR_TAIL_CHARS} characters of what it quotes, marked as cut`, () => {
    const long = `${'x'.repeat(2 * STDERR_TAIL_CHARS)}END`
    expect(stderrEnd([long], false)).toBe(`; the end of its stderr: …${long.slice(-STDERR_TAIL_CHARS)}`)
    const exact = 'y'.repeat(STDERR_TAIL_CHARS)
    expect(stderrEnd([exact], false)).toBe(`; the end of its stderr: ${exact}`)
  })
})

describe('firstOf', () => {
  it('the very array when none is left out, at the bound too; else the first max and how many more', () => {
    const items = ['a', 'b', 'c']
    expect(firstOf(items, 3).shown).toBe(items)
    expect(firstOf(items, 4)).toStrictEqual({ shown: items, more: 0 })
    expect(firstOf(items, 2)).toStrictEqual({ shown: ['a', 'b'], more: 1 })
  })
})
