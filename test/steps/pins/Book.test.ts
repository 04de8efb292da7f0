import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Pin } from '../../../src/steps/pins/Definition.js'
import { decodePin, hashDefinition, pinOf } from '../../../src/steps/pins/Definition.js'
import type { PinBook } from '../../../src/steps/pins/Book.js'
import {
  MAX_CHANGES_PER_TOOL,
  acceptChange,
  bookEntries,
  bookOf,
  emptyBook,
  mergeBook,
  pinFirst,
  recordChange,
  sameBook,
  setPin,
} from '../../../src/steps/pins/Book.js'

const AT = '2026-12-05T00:00:00.000Z'
const pin = (tool: string, description: string): Pin => pinOf(tool, { name: tool, description }, AT)

describe('pinFirst and recordChange', () => {
  it('pins a tool once: the first definition stays, a later one is a change', () => {
    const a = pin('x', 'one')
    const b = pin('x', 'two')
    const [firsts, book] = pinFirst([a, b, pin('y', 'y')])(emptyBook)
    expect(firsts).toEqual([true, false, true])
    expect(book.pins.get('x')).toBe(a)
    const [first, changed] = recordChange(b)(book)
    expect(first).toBe(true)
    expect(changed.changes.get('x')).toEqual([b])
    // once: the same change again, or the pin itself, changes nothing (same book)
    expect(recordChange(b)(changed)).toEqual([false, changed])
    expect(recordChange(a)(changed)[1]).toBe(changed)
  })

  it('keeps the latest changes of a tool, at most a few', () => {
    let book = pinFirst([pin('x', 'pinned')])(emptyBook)[1]
    for (let i = 0; i < 10; i++) book = recordChange(pin('x', `change ${i}`))(book)[1]
    expect(book.changes.get('x')?.map((c) => c.definition?.description)).toEqual(
      Array.from({ length: MAX_CHANGES_PER_TOOL }, (_, i) => `change ${10 - MAX_CHANGES_PER_TOOL + i}`),
    )
  })
})

describe('acceptChange', () => {
  const a = pin('x', 'one')
  const b = pin('x', 'two')
  const book = recordChange(b)(pinFirst([a])(emptyBook)[1])[1]

  it('makes a changed definition the pin, and it leaves the changes', () => {
    const done = acceptChange('x', b.hash)(book)
    expect(done._tag).toBe('Right')
    if (done._tag !== 'Right') return
    expect(done.right[0]).toBe(b)
    expect(done.right[1].pins.get('x')).toBe(b)
    expect(done.right[1].changes.has('x')).toBe(false)
    // accepting the pin itself changes nothing
    expect(acceptChange('x', a.hash)(book)).toEqual({ _tag: 'Right', right: [a, book] })
  })

  it('a hash not waiting is a Left that says what is', () => {
    expect(acceptChange('x', 'sha256:' + '0'.repeat(64))(book)).toEqual({
      _tag: 'Left',
      left: `"x" has no changed definition "sha256:${'0'.repeat(64)}"; waiting: ${b.hash}`,
    })
    expect(acceptChange('nope', b.hash)(book)).toEqual({
      _tag: 'Left',
      left: 'no changed definition of "nope" is waiting to be accepted (the tool is not pinned)',
    })
  })
})

describe('mergeBook, what a store reads back', () => {
  const a = pin('x', 'one')
  const b = pin('x', 'two')

  it("the store's pin wins for a tool both pin, the changes are the union, and a change now pinned leaves", () => {
    const here = recordChange(b)(pinFirst([a])(emptyBook)[1])[1]
    const there: PinBook = bookOf([b], [pin('y', 'y2')])
    const merged = mergeBook(here, there)
    expect(merged.pins.get('x')).toBe(b)
    expect(merged.changes.has('x')).toBe(false)
    expect(merged.changes.get('y')?.length).toBe(1)
    expect(mergeBook(merged, merged)).toBe(merged)
  })

  it('property: merging is idempotent, and what was merged in is held', () => {
    const pins = fc.array(
      fc
        .record({ tool: fc.constantFrom('a', 'b', 'c'), d: fc.constantFrom('1', '2', '3') })
        .map(({ tool, d }) => pin(tool, d)),
      { maxLength: 8 },
    )
    fc.assert(
      fc.property(pins, pins, pins, (p1, c1, p2) => {
        const here = bookOf(p1, c1)
        const there = bookOf(p2, [])
        const merged = mergeBook(here, there)
        expect(sameBook(mergeBook(merged, there), merged)).toBe(true)
        for (const p of there.pins.values()) expect(merged.pins.get(p.tool)?.hash).toBe(p.hash)
      }),
    )
  })

  it('setPin makes a pin whatever was held, and bookEntries lists by tool', () => {
    const book = setPin(bookOf([a], [b, pin('w', 'w')]), b)
    expect(bookEntries(book).pins.map((p) => p.tool)).toEqual(['x'])
    expect(bookEntries(book).changes.map((p) => p.tool)).toEqual(['w'])
    expect(setPin(book, b)).toBe(book)
  })
})

describe('decodePin, what a store holds read back', () => {
  it('keeps a definition only when it hashes to the pin', () => {
    const d = { name: 'x', description: 'one' }
    const { hash } = hashDefinition(d)
    expect(decodePin({ tool: 'x', hash, at: AT, definition: d })?.definition).toEqual(d)
    expect(decodePin({ tool: 'x', hash, at: AT, definition: { ...d, description: 'two' } })).toEqual({
      tool: 'x',
      hash,
      at: AT,
    })
    expect(decodePin({ tool: 'x', hash, at: AT, definition: { ...d, extra: 1 } })).toEqual({ tool: 'x', hash, at: AT })
  })

  it('refuses what is not a pin', () => {
    for (const bad of [
      null,
      'x',
      [],
      { tool: '', hash: 'sha256:' + 'a'.repeat(64) },
      { tool: 'x', hash: 'sha256:ABC' },
      { tool: 5 },
    ])
      expect(decodePin(bad)).toBeUndefined()
  })

  it('a definition too long to keep is pinned by its hash alone', () => {
    const long = pinOf('x', { name: 'x', description: 'a'.repeat(40_000) }, AT)
    expect(long.definition).toBeUndefined()
    expect(long.hash).toBe(hashDefinition({ name: 'x', description: 'a'.repeat(40_000) }).hash)
  })
})
