/**
 * The pin book: each tool's pinned definition, and the changed definitions seen since, awaiting an operator's
 * acceptance. Pure values and steps; where the book is kept (this process, a file, Redis) is a `PinMemory`.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import type { IO } from 'fp-ts/lib/IO.js'
import { showText } from '../../kernel/describe.js'
import type { Pin } from './Definition.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The pinned definitions by tool, and the changed definitions seen since by tool (oldest first, at most
 * {@link MAX_CHANGES_PER_TOOL} each), which an operator may accept.
 *
 * @since 0.1.0
 * @category model
 */
export interface PinBook {
  readonly pins: ReadonlyMap<string, Pin>
  readonly changes: ReadonlyMap<string, ReadonlyArray<Pin>>
}

/**
 * Where a book is kept, for every layer that pins and every process that shares it: this process
 * (`newPinMemory`), or a gateway's store (`file:`, `redis://`). `book` answers with what is known now, never
 * waits; the rest write after, and a store that cannot reach its backend answers from this process.
 *
 * @since 0.1.0
 * @category model
 */
export interface PinMemory {
  /** The book as known now. */
  readonly book: IO<PinBook>
  /**
   * Pins each definition whose tool has no pin yet (a pin made first elsewhere is kept); resolves, for each,
   * whether this call pinned it (so it is said once).
   */
  readonly pin: (pins: ReadonlyArray<Pin>) => Promise<ReadonlyArray<boolean>>
  /** Records a changed definition, awaiting acceptance; resolves true for the first to record it (who says it). */
  readonly change: (pin: Pin) => Promise<boolean>
  /**
   * An operator accepts a changed definition: it becomes the tool's pin, everywhere the book is shared.
   * A Left says why not (no such changed definition is known; a store that cannot be written).
   */
  readonly accept: (tool: string, hash: string) => Promise<Either<string, Pin>>
  /** Calls `listener` after the book changed from elsewhere (an acceptance, another process's pin). */
  readonly onPinsChanged: (listener: IO<void>) => IO<void>
}

/**
 * The most tools a book pins (a server chooses how many tools it lists); past it a new tool is not pinned.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_PINS = 10_000

/**
 * The most changed definitions a book keeps per tool: past it, the oldest go first.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_CHANGES_PER_TOOL = 4

/**
 * The most changed definitions a book keeps in all: past it, a change of a tool with none kept is said but not
 * kept (and cannot be accepted until the tool lists it again with room for it).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_CHANGES = 2_000

/**
 * @since 0.1.0
 * @category constructors
 */
export const emptyBook: PinBook = { pins: new Map(), changes: new Map() }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const changeCount = (book: PinBook): number => {
  let n = 0
  for (const cs of book.changes.values()) n += cs.length
  return n
}

/**
 * The book with each of `pins` pinned whose tool has no pin yet, and for each whether it was pinned now; the
 * same book (same reference) when none was.
 *
 * @example
 * import { emptyBook, pinFirst } from './Book.js'
 * const a = { tool: 'x', hash: 'sha256:' + 'a'.repeat(64), at: '' }
 * const b = { tool: 'x', hash: 'sha256:' + 'b'.repeat(64), at: '' }
 * const [firsts, book] = pinFirst([a, b])(emptyBook)
 * assert.deepStrictEqual([firsts, book.pins.get('x')], [[true, false], a])
 * assert.strictEqual(pinFirst([b])(book)[1], book)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const pinFirst =
  (pins: ReadonlyArray<Pin>) =>
  (book: PinBook): readonly [ReadonlyArray<boolean>, PinBook] => {
    let next: Map<string, Pin> | undefined
    const firsts = pins.map((p) => {
      const held = next ?? book.pins
      if (held.has(p.tool) || held.size >= MAX_PINS) return false
      ;(next ??= new Map(book.pins)).set(p.tool, p)
      return true
    })
    return [firsts, next === undefined ? book : { ...book, pins: next }]
  }

/**
 * The book with `pin` recorded as a changed definition of its tool, and whether it is new to the book; the
 * same book when it is known already or is the tool's pin.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const recordChange =
  (pin: Pin) =>
  (book: PinBook): readonly [boolean, PinBook] => {
    if (book.pins.get(pin.tool)?.hash === pin.hash) return [false, book]
    const had = book.changes.get(pin.tool) ?? []
    if (had.some((c) => c.hash === pin.hash)) return [false, book]
    // the oldest of this tool go first; past the book's bound, nothing more is kept (it is still said)
    if (had.length === 0 && changeCount(book) >= MAX_CHANGES) return [true, book]
    const changes = new Map(book.changes)
    changes.set(pin.tool, [...had, pin].slice(-MAX_CHANGES_PER_TOOL))
    return [true, { ...book, changes }]
  }

/**
 * The book once an operator accepted `hash` for `tool`: that changed definition becomes its pin and leaves the
 * changes. Accepting the tool's pin itself changes nothing; a hash the book does not hold for the tool is a Left
 * that says what is known.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const acceptChange =
  (tool: string, hash: string) =>
  (book: PinBook): Either<string, readonly [Pin, PinBook]> => {
    const pinned = book.pins.get(tool)
    if (pinned?.hash === hash) return right([pinned, book])
    const had = book.changes.get(tool) ?? []
    const found = had.find((c) => c.hash === hash)
    const named = JSON.stringify(showText(tool, 200).text)
    if (found === undefined)
      return left(
        had.length === 0
          ? `no changed definition of ${named} is waiting to be accepted${pinned === undefined ? ' (the tool is not pinned)' : ''}`
          : `${named} has no changed definition ${JSON.stringify(showText(hash, 80).text)}; waiting: ${had.map((c) => c.hash).join(', ')}`,
      )
    const pins = new Map(book.pins)
    pins.set(tool, found)
    const changes = new Map(book.changes)
    const rest = had.filter((c) => c.hash !== hash)
    if (rest.length === 0) changes.delete(tool)
    else changes.set(tool, rest)
    return right([found, { pins, changes }])
  }

/**
 * `held` with what `read` (a store's copy) holds merged in: `read`'s pin wins for a tool both pin (another
 * process pinned it first, or an operator accepted a change there), and the changes are the union, less those
 * that became a pin. The same book (same reference) when `read` adds nothing.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const mergeBook = (held: PinBook, read: PinBook): PinBook => {
  let pins: Map<string, Pin> | undefined
  for (const [tool, p] of read.pins) {
    if (held.pins.get(tool)?.hash === p.hash) continue
    if (!held.pins.has(tool) && (pins ?? held.pins).size >= MAX_PINS) continue
    ;(pins ??= new Map(held.pins)).set(tool, p)
  }
  let book: PinBook = pins === undefined ? held : { ...held, pins }
  for (const cs of read.changes.values()) for (const c of cs) book = recordChange(c)(book)[1]
  // a change that is now a tool's pin is no longer waiting
  let changes: Map<string, ReadonlyArray<Pin>> | undefined
  for (const [tool, cs] of book.changes) {
    const pin = book.pins.get(tool)
    if (pin === undefined || !cs.some((c) => c.hash === pin.hash)) continue
    const rest = cs.filter((c) => c.hash !== pin.hash)
    changes ??= new Map(book.changes)
    if (rest.length === 0) changes.delete(tool)
    else changes.set(tool, rest)
  }
  return changes === undefined ? book : { ...book, changes }
}

/**
 * A book as lists, sorted by tool: what a store writes and a page shows.
 *
 * @since 0.1.0
 * @category destructors
 */
export const bookEntries = (
  book: PinBook,
): { readonly pins: ReadonlyArray<Pin>; readonly changes: ReadonlyArray<Pin> } => {
  // by a map's keys, which are never equal; a tool's changes keep their order, oldest first
  const byTool = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]): number => (a < b ? -1 : 1)
  return {
    pins: [...book.pins].sort(byTool).map(([, p]) => p),
    changes: [...book.changes].sort(byTool).flatMap(([, cs]) => cs),
  }
}

/**
 * A book from lists (a store's file, Redis), each pin as `decodePin` read it: the first pin of a tool wins,
 * and the changes are recorded in order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bookOf = (pins: ReadonlyArray<Pin>, changes: ReadonlyArray<Pin>): PinBook => {
  let book = pinFirst(pins)(emptyBook)[1]
  for (const c of changes) book = recordChange(c)(book)[1]
  return book
}

/**
 * The book with `pin` as its tool's pin, whatever it held (an acceptance made here, applied again over what a
 * store read); the change it was leaves the changes.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const setPin = (book: PinBook, pin: Pin): PinBook => {
  const waiting = book.changes.get(pin.tool) ?? []
  if (book.pins.get(pin.tool)?.hash === pin.hash && !waiting.some((c) => c.hash === pin.hash)) return book
  const pins = new Map(book.pins)
  pins.set(pin.tool, pin)
  const changes = new Map(book.changes)
  const rest = waiting.filter((c) => c.hash !== pin.hash)
  if (rest.length === 0) changes.delete(pin.tool)
  else changes.set(pin.tool, rest)
  return { pins, changes }
}

/**
 * Whether two books hold the same pins and changes (by tool and hash).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const sameBook = (a: PinBook, b: PinBook): boolean => {
  if (a === b) return true
  const key = (book: PinBook): string => {
    const { pins, changes } = bookEntries(book)
    return JSON.stringify([pins.map((p) => [p.tool, p.hash]), changes.map((c) => [c.tool, c.hash])])
  }
  return key(a) === key(b)
}
