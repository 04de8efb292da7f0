// A persistent hash map from strings: a CHAMP trie (Steindorfer & Vinju, "Optimizing Hash-Array Mapped
// Tries", OOPSLA 2015). It holds the audit's seen-set, which grows as long as a model keeps inventing keys.
// Adding a binding copies one path of nodes, O(log32 n), and shares the rest with the previous version.
//
// A node is one array, [dataMap, nodeMap, key, value, key, value, ..., sub-nodes in reverse order]: bindings
// sit inline and a slot's index is a popcount of the bitmap below its bit. Compared with a node object
// pointing at the array, this saves 32 bytes per node and one dependent load (a likely cache miss) per level.
// Arrays are built at their exact length, never grown, so V8 does not over-allocate them. Hashes are not
// stored: when a slot splits, the resident key is hashed again (at most once per level).
//
// Past the last 5-bit slice of the hash (depth 7) a node is a collision node: both bitmaps 0 and a flat key,
// value list searched by key equality. Correctness never depends on the hash, only speed does.
//
// Keys are never used as property names: they live in arrays and are compared with ===, so '__proto__',
// 'constructor', '' and lone surrogates are ordinary keys.

/** Ties the type to `V` (so a map of numbers is not a map of strings); no such property exists. */
declare const ValueType: unique symbol

/**
 * An immutable map from strings to `V`. Every operation that changes it returns a new map; earlier maps stay
 * valid and unchanged, and share structure with later ones.
 */
export interface StringMap<V> {
  readonly size: number
  readonly [ValueType]?: V
}

// [dataMap, nodeMap, ...bindings, ...sub-nodes reversed]. The int32 bitmaps are unboxed in Node's default
// build (no pointer compression); with pointer compression a bitmap using bit 30 or 31 is boxed.
type Node = ReadonlyArray<unknown>
const DATA_MAP = 0
const NODE_MAP = 1
const FIRST = 2

type Hash = (key: string) => number

interface Impl<V> extends StringMap<V> {
  readonly root: Node
  // Per map, not per module, so a map built under a test hash is never read with another hash.
  readonly hash: Hash
}

const BITS = 5
const MASK = 31
// Slices start at shifts 0, 5, ..., 30 (the last one 2 bits wide). The `shift > LAST_SHIFT` checks are needed
// because `>>>` takes its shift mod 32: `h >>> 35` would silently reuse low bits.
const LAST_SHIFT = 30

/**
 * FNV-1a over UTF-16 code units, then the murmur3 finaliser. FNV's multiply carries only upwards, so before
 * finalising, its low bits (the ones the trie reads first) depend only on the low bits of each code unit:
 * keys differing only in case would share a root slot. The whole key is hashed, never a sample: keys that
 * differ only where a sample does not look would all collide, and a model that invents long keys would turn
 * every lookup into a linear scan. Hashing costs what comparing the key once already costs.
 */
export const hashString = (s: string): number => {
  let h = 0x811c9dc5 | 0
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return fmix32(h)
}

/** The murmur3 finaliser: spreads every input bit over every output bit. */
export const fmix32 = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}

const bitCount = (x: number): number => {
  x -= (x >>> 1) & 0x55555555
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333)
  x = (x + (x >>> 4)) & 0x0f0f0f0f
  return Math.imul(x, 0x01010101) >>> 24
}

const EMPTY_NODE: Node = Object.freeze([0, 0])

const EMPTY: Impl<never> = Object.freeze({ size: 0, root: EMPTY_NODE, hash: hashString })

const impl = <V>(m: StringMap<V>): Impl<V> => m as Impl<V>

// -------------------------------------------------------------------------------------
// exact-length node edits (a pushed-to array keeps spare capacity)
// -------------------------------------------------------------------------------------

const replaced = (n: Node, i: number, x: unknown): Node => {
  const out = n.slice()
  out[i] = x
  return out
}

const withPairAt = (n: Node, dataMap: number, i: number, key: string, value: unknown): Node => {
  const out = n.slice(0, i).concat([key, value], n.slice(i))
  out[DATA_MAP] = dataMap
  return out
}

// Moves the pair at `i` into sub-node `sub`, stored at `at` in the new node (sub-nodes are stored in reverse,
// so `at` counts from the end).
const pairToNode = (n: Node, dataMap: number, nodeMap: number, i: number, at: number, sub: Node): Node => {
  const out = n.slice(0, i).concat(n.slice(i + 2, at + 2), [sub], n.slice(at + 2))
  out[DATA_MAP] = dataMap
  out[NODE_MAP] = nodeMap
  return out
}

// The index of `key` in a collision node, or -1. Keys sit at even indices from FIRST on; the bitmaps at 0 and
// 1 are numbers, so they never match.
const keyAt = (n: Node, key: string): number => n.findIndex((x, i) => i % 2 === 0 && x === key)

// -------------------------------------------------------------------------------------
// the trie
// -------------------------------------------------------------------------------------

// Set by `updateIn` when it adds a binding, so `update` keeps `size` without a lookup before every set.
interface Growth {
  added: 0 | 1
}

// A node holding exactly two bindings whose keys differ, from `shift` on.
const pair = (k1: string, v1: unknown, h1: number, k2: string, v2: unknown, h2: number, shift: number): Node => {
  if (shift > LAST_SHIFT) return [0, 0, k1, v1, k2, v2]
  const f1 = (h1 >>> shift) & MASK
  const f2 = (h2 >>> shift) & MASK
  if (f1 === f2) return [0, 1 << f1, pair(k1, v1, h1, k2, v2, h2, shift + BITS)]
  return f1 < f2 ? [(1 << f1) | (1 << f2), 0, k1, v1, k2, v2] : [(1 << f1) | (1 << f2), 0, k2, v2, k1, v1]
}

// Binds `key` to `f(current value)` (f(undefined) when unbound) in one walk, not a lookup and a set. Returns
// `n` itself (same reference) when nothing changes.
const updateIn = (
  n: Node,
  key: string,
  f: (old: unknown) => unknown,
  h: number,
  shift: number,
  hash: Hash,
  growth: Growth,
): Node => {
  if (shift > LAST_SHIFT) {
    const i = keyAt(n, key)
    if (i !== -1) {
      const value = f(n[i + 1])
      return Object.is(n[i + 1], value) ? n : replaced(n, i + 1, value)
    }
    growth.added = 1
    return withPairAt(n, 0, n.length, key, f(undefined))
  }
  const bit = 1 << ((h >>> shift) & MASK)
  const dataMap = n[DATA_MAP] as number
  const nodeMap = n[NODE_MAP] as number
  if ((dataMap & bit) !== 0) {
    const i = FIRST + 2 * bitCount(dataMap & (bit - 1))
    const resident = n[i] as string
    if (resident === key) {
      const value = f(n[i + 1])
      return Object.is(n[i + 1], value) ? n : replaced(n, i + 1, value)
    }
    growth.added = 1
    const sub = pair(resident, n[i + 1], hash(resident), key, f(undefined), h, shift + BITS)
    return pairToNode(n, dataMap ^ bit, nodeMap | bit, i, n.length - 2 - bitCount(nodeMap & (bit - 1)), sub)
  }
  if ((nodeMap & bit) !== 0) {
    const j = n.length - 1 - bitCount(nodeMap & (bit - 1))
    const sub = n[j] as Node
    const next = updateIn(sub, key, f, h, shift + BITS, hash, growth)
    return next === sub ? n : replaced(n, j, next)
  }
  growth.added = 1
  return withPairAt(n, dataMap | bit, FIRST + 2 * bitCount(dataMap & (bit - 1)), key, f(undefined))
}

const ABSENT: unique symbol = Symbol('absent')

// One walk for both `get` and `has`, since a key may be bound to undefined.
const lookup = (m: Impl<unknown>, key: string): unknown => {
  const h = m.hash(key)
  let n = m.root
  for (let shift = 0; ; shift += BITS) {
    if (shift > LAST_SHIFT) {
      const i = keyAt(n, key)
      return i === -1 ? ABSENT : n[i + 1]
    }
    const bit = 1 << ((h >>> shift) & MASK)
    const dataMap = n[DATA_MAP] as number
    if ((dataMap & bit) !== 0) {
      const i = FIRST + 2 * bitCount(dataMap & (bit - 1))
      return n[i] === key ? n[i + 1] : ABSENT
    }
    const nodeMap = n[NODE_MAP] as number
    if ((nodeMap & bit) === 0) return ABSENT
    n = n[n.length - 1 - bitCount(nodeMap & (bit - 1))] as Node
  }
}

function* walk(n: Node, shift: number): Generator<readonly [string, unknown], void, undefined> {
  const dataEnd = shift > LAST_SHIFT ? n.length : FIRST + 2 * bitCount(n[DATA_MAP] as number)
  for (let i = FIRST; i < dataEnd; i += 2) yield [n[i] as string, n[i + 1]]
  for (let i = dataEnd; i < n.length; i++) yield* walk(n[i] as Node, shift + BITS)
}

// -------------------------------------------------------------------------------------
// API
// -------------------------------------------------------------------------------------

/** The map with no bindings: one shared frozen value. */
export const emptyStringMap = <V>(): StringMap<V> => EMPTY

/**
 * An empty map whose keys are placed by `hash` instead of {@link hashString}, and every map derived from it
 * too. For tests only: a weak hash forces the collision paths that a good hash almost never takes. The
 * results never depend on `hash`, only the speed does.
 */
export const emptyStringMapHashedBy = <V>(hash: (key: string) => number): StringMap<V> => {
  const m: Impl<V> = { size: 0, root: EMPTY_NODE, hash }
  return m
}

/** The value bound to `key`, or undefined when there is none (or it is bound to undefined: see {@link has}). */
export const get = <V>(m: StringMap<V>, key: string): V | undefined => {
  const found = lookup(impl(m), key)
  return found === ABSENT ? undefined : (found as V)
}

/** Whether `key` is bound, even to undefined. */
export const has = (m: StringMap<unknown>, key: string): boolean => lookup(impl(m), key) !== ABSENT

/**
 * Returns `m` with `key` bound to `value`; `m` itself is unchanged. When `key` is already bound to `value`
 * (by `Object.is`), returns `m` itself (same reference), so callers can skip writing back an unchanged map by
 * comparing with `===`.
 */
export const set = <V>(m: StringMap<V>, key: string, value: V): StringMap<V> => update(m, key, () => value)

/**
 * Returns `m` with `key` bound to `f(current value)`, `f(undefined)` when unbound, in one walk; returns `m`
 * itself (same reference) when the value is unchanged (by `Object.is`). `f` must not touch the map.
 */
export const update = <V>(m: StringMap<V>, key: string, f: (old: V | undefined) => V): StringMap<V> => {
  const { root, hash, size } = impl(m)
  const growth: Growth = { added: 0 }
  const next = updateIn(root, key, f as (old: unknown) => unknown, hash(key), 0, hash, growth)
  if (next === root) return m
  const out: Impl<V> = { size: size + growth.added, root: next, hash }
  return out
}

/** Every binding of `m`, each once, in no particular order. */
export const entries = <V>(m: StringMap<V>): IterableIterator<readonly [string, V]> =>
  walk(impl(m).root, 0) as Generator<readonly [string, V], void, undefined>
