/**
 * The seen-set: every (tool, undeclared key) pair the audit has seen, with how many calls carried it and the
 * first one's id. One value serves both "was this pair reported already?" (a pair is reported when it enters
 * the set) and `stats`: a pair is seen exactly when it is counted, so there is no second memory to keep in
 * sync.
 *
 * It is a persistent hash trie: adding a pair costs the same however many are stored, and an old value never
 * changes which pairs it holds (a pair's count is its own counter, bumped in place: see `Count`). Memory is
 * bounded in two ways: each pair costs a bounded number of bytes whatever its tool, key and id (a long name or key
 * is stored as a digest, a long id truncated), and a set holds at most `capacity` pairs.
 *
 * @since 0.1.0
 */
import { createHash } from 'node:crypto'
import type { StringMap } from '../../kernel/StringMap.js'
import * as SM from '../../kernel/StringMap.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

declare const SeenSetBrand: unique symbol

/**
 * The (tool, key) pairs seen so far, each with its count. Opaque: read it with {@link hasSeen},
 * {@link pairStats} and `size`.
 *
 * @since 0.1.0
 * @category model
 */
export interface SeenSet {
  readonly _tag: 'SeenSet'
  /** How many (tool, key) pairs are remembered. */
  readonly size: number
  /** The most pairs it remembers; past it, a new pair is reported but not remembered. */
  readonly capacity: number
  readonly [SeenSetBrand]: 'SeenSet'
}

/**
 * How often one undeclared key recurred on one tool.
 *
 * @since 0.1.0
 * @category model
 */
export interface PairStat {
  /** The tool as remembered: its name, or for a name longer than {@link MAX_KEY_CHARS}, its start and a digest. */
  readonly tool: string
  /** The key as remembered: itself, or for a key longer than {@link MAX_KEY_CHARS}, its start and a digest. */
  readonly key: string
  /** How many audited calls carried it. */
  readonly calls: number
  /** The id of the first call that carried it (its first {@link MAX_ID_CHARS} characters). */
  readonly firstId: string
}

// A pair's own counter. The set's shape (which pairs, its size) is persistent and replaced through the
// audit's ref in one step; a call that only repeats known pairs bumps their counters in place instead of
// copying two trie paths per pair (that copying was most of a repeated call's cost: the flat figures of
// docs/performance.md). It stays one atomic step: the counter is bumped inside the same synchronous
// read-compute-write of the ref, so no reader sees half of it, and it belongs to the pair, so every version
// that holds the pair reads its one count.
interface Count {
  calls: number
  readonly firstId: string
}

interface Impl extends SeenSet {
  /** tool name → remembered key → its count; nested, so no two pairs can share an entry. */
  readonly byTool: StringMap<StringMap<Count>>
}

const impl = (s: SeenSet): Impl => s as Impl

/**
 * Keys longer than this are remembered by their first 48 characters and a SHA-256 digest of the whole key:
 * two different keys can share a start, not a digest. The digest form (114 characters, its digest in hex) is
 * longer than this, so no key remembered as itself can share its entry.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_KEY_CHARS = 96

/**
 * A first call's id is kept to this many characters.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_ID_CHARS = 64

/**
 * How many pairs a seen-set holds by default: far past what a model that invents a key now and then produces
 * in a session, a few megabytes at most.
 *
 * @since 0.1.0
 * @category model
 */
export const DEFAULT_CAPACITY = 100_000

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const make = (byTool: StringMap<StringMap<Count>>, size: number, capacity: number): SeenSet => {
  const s: Omit<Impl, typeof SeenSetBrand> = { _tag: 'SeenSet', size, capacity, byTool }
  return s as Impl
}

/**
 * The seen-set with nothing in it, holding at most {@link DEFAULT_CAPACITY} pairs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptySeenSet: SeenSet = make(SM.emptyStringMap(), 0, DEFAULT_CAPACITY)

/**
 * An empty seen-set holding at most `capacity` pairs (a whole number ≥ 1).
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptySeenSetOf = (capacity: number): SeenSet => {
  if (!Number.isSafeInteger(capacity) || capacity < 1) {
    throw new TypeError(`emptySeenSetOf: capacity must be a whole number of at least 1, got ${String(capacity)}`)
  }
  return make(SM.emptyStringMap(), 0, capacity)
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * How a key is remembered: itself, or, past {@link MAX_KEY_CHARS}, its start and a SHA-256 digest of the
 * whole of it, so a model that sends 10 KB keys costs a few dozen bytes per pair.
 *
 * @example
 * import { rememberedKey } from './SeenSet.js'
 * assert.strictEqual(rememberedKey('ffset'), 'ffset')
 * assert.strictEqual(rememberedKey('x'.repeat(10_000)).length < 120, true)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const rememberedKey = (key: string): string =>
  key.length <= MAX_KEY_CHARS
    ? copyOf(key)
    : `${copyOf(key.slice(0, 48))}…#${createHash('sha256').update(key).digest('hex')}`

const rememberedId = (id: string): string =>
  id.length <= MAX_ID_CHARS ? copyOf(id) : copyOf(id.slice(0, MAX_ID_CHARS)) + '…'

/**
 * A flat copy of `s` sharing no memory with it: a V8 slice keeps its whole parent alive, so a 64-character id
 * cut from a 10 KB one would pin 10 KB. UTF-16 round-trips lone surrogates too.
 */
const copyOf = (s: string): string => Buffer.from(s, 'utf16le').toString('utf16le')

// what a key is looked up by: itself, no copy; the digest form past MAX_KEY_CHARS
const lookupKey = (key: string): string => (key.length <= MAX_KEY_CHARS ? key : rememberedKey(key))

const NOTHING: ReadonlyArray<string> = Object.freeze([])

/**
 * Counts one call of `tool`, with id `id`, that carried each of `keys` (undeclared keys, from `diffKeys`):
 * returns the keys not seen before for that tool, and the seen-set that remembers them and counts this call.
 * Which pairs the input holds never changes: a new pair makes a new set (the input itself when nothing is new).
 * A count belongs to its pair, shared by every set that holds the pair, so an older set reads the latest
 * count. A key repeated within `keys` counts once. Past the set's capacity, a new pair is returned (so it is
 * reported) but not remembered.
 *
 * @example
 * import { emptySeenSet, firstSeen } from 'toolstack'
 * import { pairStats } from 'toolstack/extend'
 * const [fresh, seen] = firstSeen('fs_read', ['ffset'], 'call_1')(emptySeenSet)
 * assert.deepStrictEqual(fresh, ['ffset'])
 * const [again, more] = firstSeen('fs_read', ['ffset'], 'call_2')(seen)
 * assert.deepStrictEqual(again, [])
 * assert.deepStrictEqual(pairStats(more), [{ tool: 'fs_read', key: 'ffset', calls: 2, firstId: 'call_1' }])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const firstSeen =
  (tool: string, keys: ReadonlyArray<string>, id = '') =>
  (seen: SeenSet): readonly [ReadonlyArray<string>, SeenSet] =>
    countCall(seen, tool, keys, id)

/**
 * {@link firstSeen} without its curried closures, for the audit's per-call loop.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const countCall = (
  seen: SeenSet,
  tool: string,
  keys: ReadonlyArray<string>,
  id: string,
): readonly [ReadonlyArray<string>, SeenSet] => {
  const { byTool, size, capacity } = impl(seen)
  const known = SM.get(byTool, lookupKey(tool))
  let ofTool = known ?? SM.emptyStringMap<Count>()
  let fresh: Array<string> | undefined
  let added = 0
  // a call's keys are an object's keys, so distinct; a caller's list may not be. An indexed loop over an array
  // either way, rather than a `for…of` that meets an array at one call and a Set at another
  const distinct = keys.length === 1 ? keys : [...new Set(keys)]
  for (let i = 0; i < distinct.length; i++) {
    const key = distinct[i] as string
    const had = SM.get(ofTool, lookupKey(key))
    if (had !== undefined) {
      had.calls++
      continue
    }
    ;(fresh ??= []).push(key)
    if (size + added >= capacity) continue
    ofTool = SM.set(ofTool, rememberedKey(key), { calls: 1, firstId: rememberedId(id) })
    added++
  }
  // only known pairs: the same set, their counters bumped
  if (added === 0) return [fresh ?? NOTHING, seen]
  // a tool is remembered as a key is (a copy of its name, or its start and digest); for a known tool the map keeps
  // the copy it holds, and the one made here, on the path of a new pair only, is dropped
  return [fresh ?? NOTHING, make(SM.set(byTool, rememberedKey(tool), ofTool), size + added, capacity)]
}

/**
 * Whether the seen-set holds as many pairs as it can: new pairs are reported but no longer remembered.
 *
 * @since 0.1.0
 * @category utils
 */
export const isFull = (seen: SeenSet): boolean => seen.size >= seen.capacity

/**
 * Whether a (tool, key) pair has been seen.
 *
 * @since 0.1.0
 * @category utils
 */
export const hasSeen =
  (tool: string, key: string) =>
  (seen: SeenSet): boolean => {
    const ofTool = SM.get(impl(seen).byTool, lookupKey(tool))
    return ofTool !== undefined && SM.has(ofTool, lookupKey(key))
  }

const compare = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0)

const byToolThenKey = (a: PairStat, b: PairStat): number => compare(a.tool, b.tool) || compare(a.key, b.key)

/**
 * Every remembered pair with its count, sorted by tool, then key (by UTF-16 code units, as `<` compares
 * strings).
 *
 * @since 0.1.0
 * @category utils
 */
export const pairStats = (seen: SeenSet): ReadonlyArray<PairStat> => {
  const out: Array<PairStat> = []
  for (const [tool, keys] of SM.entries(impl(seen).byTool))
    for (const [key, { calls, firstId }] of SM.entries(keys)) out.push({ tool, key, calls, firstId })
  return out.sort(byToolThenKey)
}
