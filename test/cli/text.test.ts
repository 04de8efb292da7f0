import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { escapeControls, jsonLine } from '../../src/cli/text.js'

// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/
// strings rich in what a terminal acts on
const text = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0xa0 }).map((c) => String.fromCharCode(c)),
    fc.constantFrom('é', '😀', '\u2028', '\u202e', '\u2066', '\ufeff', '\u200f', '\\'),
  ),
  maxLength: 30,
})

describe('output a terminal can trust', () => {
  it('escapeControls leaves no control character, and changes nothing else', () => {
    fc.assert(
      fc.property(text, (s) => {
        const out = escapeControls(s)
        expect(out).not.toMatch(RAW_CONTROL)
        expect(out.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))).toBe(
          s.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        )
      }),
    )
  })

  it('jsonLine leaves no control character, and reads back as the same value', () => {
    const value = fc.jsonValue().chain((v) => fc.tuple(fc.constant(v), text).map(([x, s]) => ({ x, s, [s]: [s] })))
    fc.assert(
      fc.property(value, (v) => {
        const line = jsonLine(v)
        expect(line).not.toMatch(RAW_CONTROL)
        expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(v)))
      }),
    )
  })

  it('the property can fail: JSON.stringify alone leaves DEL and C1 raw', () => {
    const failed = fc.check(
      fc.property(text, (s) => {
        expect(JSON.stringify(s)).not.toMatch(RAW_CONTROL)
      }),
    ).failed
    expect(failed).toBe(true)
  })
})
