import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { hashOf } from '../../../src/steps/pins/Canonical.js'
import type { Pin } from '../../../src/steps/pins/Definition.js'
import { decodePin, hashDefinition, pinOf } from '../../../src/steps/pins/Definition.js'
import type { PinBook } from '../../../src/steps/pins/Book.js'
import {
  MAX_CHANGES,
  MAX_CHANGES_PER_TOOL,
  MAX_PINS,
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
    expect(recordChange(a)(changed)).toEqual([false, changed])
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

describe('the bounds of a book', () => {
  const many = (n: number, prefix = 't'): ReadonlyArray<Pin> =>
    Array.from({ length: n }, (_, i) => ({ tool: `${prefix}${i}`, hash: hashOf(`${prefix}${i}`), at: AT }))

  it(`pins at most ${MAX_PINS} tools, in one call or over several, and merges in no more`, () => {
    const [firsts, full] = pinFirst(many(MAX_PINS + 1))(emptyBook)
    expect(firsts.filter((f) => f)).toHaveLength(MAX_PINS)
    expect(firsts.at(-1)).toBe(false)
    expect(full.pins.size).toBe(MAX_PINS)
    const [later, same] = pinFirst([pin('late', 'x')])(full)
    expect([later, same]).toEqual([[false], full])
    expect(same).toBe(full)
    // a store's book adds no tool past the bound, but its pin of a tool held here still wins
    const there = bookOf([pin('late', 'x'), { ...pin('t0', 'other') }], [])
    const merged = mergeBook(full, there)
    expect(merged.pins.size).toBe(MAX_PINS)
    expect(merged.pins.has('late')).toBe(false)
    expect(merged.pins.get('t0')?.hash).toBe(pin('t0', 'other').hash)
    // one short of the bound: one more is pinned, and merged in
    const almost = pinFirst(many(MAX_PINS - 1))(emptyBook)[1]
    expect(pinFirst([pin('late', 'x')])(almost)[0]).toEqual([true])
    expect(mergeBook(almost, there).pins.has('late')).toBe(true)
  })

  it(`keeps at most ${MAX_CHANGES} changes in all: past them a change of a tool with none kept is new but not kept`, () => {
    let book = bookOf(many(MAX_CHANGES / MAX_CHANGES_PER_TOOL), [])
    for (let k = 0; k < MAX_CHANGES_PER_TOOL; k++)
      for (const p of many(MAX_CHANGES / MAX_CHANGES_PER_TOOL))
        book = recordChange({ ...p, hash: hashOf(`${p.tool}:${k}`) })(book)[1]
    expect(bookEntries(book).changes).toHaveLength(MAX_CHANGES)
    const fresh = pin('fresh', 'x')
    const [isNew, same] = recordChange(fresh)(book)
    expect([isNew, same]).toEqual([true, book])
    expect(same).toBe(book)
    // a tool with changes kept still records its latest (its oldest goes)
    const latest = { tool: 't0', hash: hashOf('t0:latest'), at: AT }
    const [first, next] = recordChange(latest)(book)
    expect(first).toBe(true)
    expect(next.changes.get('t0')?.map((c) => c.hash)).toEqual([
      ...[1, 2, 3].map((k) => hashOf(`t0:${k}`)),
      latest.hash,
    ])
    // one change fewer: the fresh tool's change is kept
    const roomy = acceptChange('t0', hashOf('t0:0'))(book)
    expect(roomy._tag).toBe('Right')
    if (roomy._tag === 'Right') expect(recordChange(fresh)(roomy.right[1])[1].changes.get('fresh')).toEqual([fresh])
  })
})

describe('acceptChange, setPin, bookEntries and sameBook: the details', () => {
  const a = pin('x', 'one')
  const b = pin('x', 'two')
  const c = pin('x', 'three')

  it('accepting one of two changes leaves the other waiting; a pinned tool with none waiting says so', () => {
    const book = bookOf([a], [b, c])
    const done = acceptChange('x', b.hash)(book)
    expect(done._tag === 'Right' && done.right[1].changes.get('x')).toEqual([c])
    expect(acceptChange('x', b.hash)(bookOf([a], []))).toEqual({
      _tag: 'Left',
      left: 'no changed definition of "x" is waiting to be accepted',
    })
  })

  it('escapes and bounds the tool and the hash it names', () => {
    const hostile = `\u001b[2J${'h'.repeat(100)}`
    const book = bookOf([{ ...a, tool: 'a\u202eb' }], [{ ...b, tool: 'a\u202eb' }])
    expect(acceptChange('a\u202eb', hostile)(book)).toEqual({
      _tag: 'Left',
      left: `"a\\\\u202eb" has no changed definition "\\\\u001b[2J${'h'.repeat(80 - 9)}"; waiting: ${b.hash}`,
    })
    expect(acceptChange('t'.repeat(300), b.hash)(book)).toEqual({
      _tag: 'Left',
      left: `no changed definition of "${'t'.repeat(200)}" is waiting to be accepted (the tool is not pinned)`,
    })
  })

  it('names every hash waiting when the one asked for is not', () => {
    expect(acceptChange('x', a.hash.replace('sha256:', 'sha256:0'))(bookOf([a], [b, c]))).toEqual({
      _tag: 'Left',
      left: `"x" has no changed definition "${a.hash.replace('sha256:', 'sha256:0')}"; waiting: ${b.hash}, ${c.hash}`,
    })
  })

  it('setPin: a pin that is also a waiting change leaves the changes; the others stay', () => {
    expect(setPin(emptyBook, a).pins.get('x')).toBe(a)
    expect(setPin(emptyBook, a).changes.size).toBe(0)
    // the pin already, with another change waiting: the same book
    const held = bookOf([a], [b])
    expect(setPin(held, a)).toBe(held)
    expect(setPin(bookOf([], [b, c]), a).changes.get('x')).toEqual([b, c])
    const book = bookOf([a], [b, c])
    const set = setPin(book, b)
    expect(set.pins.get('x')).toBe(b)
    expect(set.changes.get('x')).toEqual([c])
    // the pin held, and waiting too (as a store may read it): it leaves the changes
    const odd: PinBook = { pins: new Map([['x', b]]), changes: new Map([['x', [b]]]) }
    const cleared = setPin(odd, b)
    expect(cleared).not.toBe(odd)
    expect(cleared.changes.has('x')).toBe(false)
  })

  it('mergeBook: a change read that is now the pin leaves the changes, the rest stay; nothing new, the same book', () => {
    const here: PinBook = { pins: new Map([['x', b]]), changes: new Map() }
    const merged = mergeBook(here, bookOf([], [b, c]))
    expect(merged.changes.get('x')).toEqual([c])
    // a change waiting here, the store's pin now: it leaves, the store's own change stays
    const accepted = mergeBook(bookOf([a], [b]), bookOf([b], [c]))
    expect([accepted.pins.get('x'), accepted.changes.get('x')]).toEqual([b, [c]])
    const waiting = bookOf([a], [b])
    expect(mergeBook(waiting, waiting)).toBe(waiting)
  })

  it("bookEntries lists pins and changes by tool, whatever the order they came in, a tool's changes oldest first", () => {
    const book = bookOf([pin('m', '1'), pin('z', '1'), pin('a', '1')], [pin('z', '2'), pin('a', '2'), pin('m', '2')])
    const { pins, changes } = bookEntries(book)
    expect(pins.map((p) => p.tool)).toEqual(['a', 'm', 'z'])
    expect(changes.map((p) => p.tool)).toEqual(['a', 'm', 'z'])
    const waiting = bookOf([], [pin('b', '2'), pin('a', '2'), pin('a', '3'), pin('a', '4'), pin('b', '3')])
    expect(bookEntries(waiting).changes.map((p) => `${p.tool}${p.definition?.description}`)).toEqual([
      'a2',
      'a3',
      'a4',
      'b2',
      'b3',
    ])
    // many tools, in an order of their own: sorted by UTF-16 code units, as the default sort does
    const tools = Array.from({ length: 300 }, (_, i) => `t${(i * 7919) % 300}`)
    expect(
      bookEntries(
        bookOf(
          tools.map((t) => pin(t, 'x')),
          [],
        ),
      ).pins.map((p) => p.tool),
    ).toEqual([...tools].sort())
  })

  it('sameBook compares tools and hashes, not references or times', () => {
    const book = bookOf([a], [b])
    expect(sameBook(book, bookOf([{ ...a, at: 'later' }], [{ ...b, at: 'later' }]))).toBe(true)
    expect(sameBook(book, book)).toBe(true)
    expect(sameBook(book, bookOf([a], []))).toBe(false)
    expect(sameBook(book, bookOf([b], [a]))).toBe(false)
    expect(sameBook(book, bookOf([{ ...a, tool: 'y' }], [{ ...b, tool: 'y' }]))).toBe(false)
    // the same changes, other pins; the same pins, other changes
    expect(sameBook(bookOf([a], [c]), bookOf([b], [c]))).toBe(false)
    expect(sameBook(bookOf([a], [b]), bookOf([a], [c]))).toBe(false)
  })
})
