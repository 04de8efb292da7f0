// The exact names toolNameMapping gives (pinned: a server must list under the same
// names in every release), how it settles collisions whatever the listing order, its
// last-resort suffixes; and base64 sizes of unpadded payloads in renderBlock.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LEGAL_TOOL_NAME, renderBlock, toolNameMapping } from '../../src/mcp/index.js'

// FNV-1a (32 bits, over UTF-16 code units) with the salt mixed into the offset basis,
// written out again here so the test can fill every salted name a name could take.
const fnv1a = (s: string, salt: number): number => {
  let h = (0x811c9dc5 ^ Math.imul(salt, 0x9e3779b1)) >>> 0
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

// Two long names that clean and cut to the same prefix and whose unsalted hashes collide
// (found by a birthday search).
const A = `x.${'p'.repeat(60)}75zx`
const B = `x.${'p'.repeat(60)}epcd`
const CUT = `x_${'p'.repeat(53)}`

describe('toolNameMapping: exact names', () => {
  it('the reference hash is FNV-1a for salt 0', () => {
    // published FNV-1a 32-bit test vectors
    expect(fnv1a('', 0)).toBe(0x811c9dc5)
    expect(fnv1a('a', 0)).toBe(0xe40c292c)
    expect(fnv1a('foobar', 0)).toBe(0xbf9cf968)
  })

  it('gives each changed name its cleaned text, one _ per code point, and the 8-digit hash of the original', () => {
    const m = toolNameMapping(['files.read', 'a/b', '', 'é😀', 'n.28', 'ok_name'])
    expect(Object.fromEntries(m)).toStrictEqual({
      'files.read': 'files_read_feef3122',
      'a/b': 'a_b_3a8e75c1',
      '': '_811c9dc5',
      'é😀': '___44cc4da1',
      // a hash below 0x10000000 keeps its leading zero
      'n.28': 'n_28_0f5ab4cf',
      ok_name: 'ok_name',
    })
    for (const [name, mapped] of m)
      if (name !== 'ok_name') expect(mapped.slice(-8)).toBe(fnv1a(name, 0).toString(16).padStart(8, '0'))
  })

  it('on a collision, the name first in sorted order keeps the unsalted hash, whatever the listing order', () => {
    expect(fnv1a(A, 0)).toBe(fnv1a(B, 0))
    const want = [
      [A, `${CUT}_41f1fd19`],
      [B, `${CUT}_${fnv1a(B, 1).toString(16).padStart(8, '0')}`],
    ]
    expect([...toolNameMapping([A, B])]).toStrictEqual(want)
    expect([...toolNameMapping([B, A])]).toStrictEqual(want)
    expect(want[1]?.[1]).toBe(`${CUT}_97ad844c`)
  })

  it('the mapping, its order included, depends only on the set of names', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(fc.constantFrom('a', 'b.c', 'c/d', A, B, 'z'), fc.string({ maxLength: 8 })), {
          maxLength: 8,
        }),
        (names) => {
          expect([...toolNameMapping([...names].reverse())]).toStrictEqual([...toolNameMapping(names)])
        },
      ),
      { numRuns: 100 },
    )
  })

  it('after 65 536 taken hashes, falls back to a z-suffix in base 36, still cut to 64 characters', () => {
    const name = `x.${'y'.repeat(70)}`
    const cleaned = `x_${'y'.repeat(70)}`
    const taken = Array.from(
      { length: 65_536 },
      (_, salt) => `${cleaned.slice(0, 55)}_${fnv1a(name, salt).toString(16).padStart(8, '0')}`,
    )
    const m = toolNameMapping([name, ...taken])
    const fallback = `${cleaned.slice(0, 58)}_z1ekg`
    expect(m.get(name)).toBe(fallback)
    expect(fallback).toHaveLength(64)
    expect(fallback).toMatch(LEGAL_TOOL_NAME)
    expect(taken.every((t) => m.get(t) === t)).toBe(true)
  })
})

describe('renderBlock: unpadded base64', () => {
  it('counts the bytes an unpadded payload decodes to', () => {
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: 'AA' })).toBe('[image: image/png, 1 byte]')
    expect(renderBlock({ type: 'image', mimeType: 'image/png', data: 'AAA' })).toBe('[image: image/png, 2 bytes]')
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (data) => {
        const n = data.length
        const unpadded = Buffer.from(data).toString('base64').replace(/=+$/, '')
        expect(renderBlock({ type: 'audio', mimeType: 'x', data: unpadded })).toBe(
          `[audio: x, ${n} byte${n === 1 ? '' : 's'}]`,
        )
      }),
      { numRuns: 50 },
    )
  })
})
