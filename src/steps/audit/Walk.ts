/**
 * The walk of a call's arguments along a schema's places, read as they come: the interpreter. It decides what
 * generated code cannot know before a call (the branch a discriminator picks, the patterns a key matches), and
 * it is the whole check where a runtime forbids generated code. Internal.
 *
 * @since 0.1.0
 */
import { REASON_PARAM } from '../../kernel/model.js'
import { hasOwn } from '../../kernel/guards.js'
import type { Node } from './Graph.js'
import { MAX_DEPTH, declaresKeys, isPrimitive } from './Graph.js'
import type { Segment } from './Path.js'
import { ELEMENT, ENTRY, pathOf, renderPlace } from './Path.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One undeclared key of a call.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKey {
  /** Where it sits, from the arguments' root: `haed`, `opts.encodng`, `edits[].oldtext`, `m.*.vv`. */
  readonly path: string
  /** The key itself, exactly as sent. */
  readonly key: string
  /** The path of the object that holds it (`''` at the top). */
  readonly at: string
  /** The place of the object that holds it, as segments (`[]` at the top). */
  readonly place: ReadonlyArray<Segment>
  /** The keys declared at that place, for "did you mean". */
  readonly declared: ReadonlySet<string>
}

/**
 * What one check carries while it walks: the tolerated top-level names, the segments of the place it is at
 * (`stack[0..depth)`, written in place, so a clean walk allocates nothing), and what it found (read it with
 * {@link takeFound}).
 *
 * @since 0.1.0
 * @category model
 */
export interface Scratch {
  readonly tolerated: ReadonlySet<string>
  /** Whether `tolerated` names more than `reason`: when not, a top-level key is never looked up in it. */
  readonly others: boolean
  readonly stack: Array<Segment>
  /** The first undeclared key found. */
  first: UnknownKey | undefined
  /** Every one found, by path, once a second is found: a call with one undeclared key met once makes no Map. */
  more: Map<string, UnknownKey> | undefined
  /** How many objects and arrays this walk has entered (see {@link MAX_VISITS}). */
  visits: number
}

/**
 * The most objects and arrays one call's walk enters, and the most undeclared paths it records. Arguments parsed
 * from JSON hold each value once, so a walk enters each at most once and finds at most as many paths as the
 * text holds keys; an object argument a host built may hold one object at many places, or itself (a cycle),
 * and walking every path would take as long, and find as many paths, as 2 to the power of the depth bound.
 * Past either, the rest of the call is not walked (the keys found so far are reported).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_VISITS = 100_000

/**
 * See {@link MAX_VISITS}.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_FOUND = 1_000

/**
 * A scratch with nothing in it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scratchOf = (tolerated: ReadonlySet<string>): Scratch => ({
  tolerated,
  others: [...tolerated].some((name) => name !== REASON_PARAM),
  stack: [],
  first: undefined,
  more: undefined,
  visits: 0,
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Whether a top-level key is never reported: `reason` or a tolerated name.
 *
 * @since 0.1.0
 * @category utils
 */
export const isTolerated = (s: Scratch, depth: number, key: string): boolean =>
  depth === 0 && (key === REASON_PARAM || (s.others && s.tolerated.has(key)))

const TOP: ReadonlyArray<Segment> = Object.freeze([])

/**
 * Records `key` as undeclared in the object at `stack[0..depth)`, whose deciding places are `deciding`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const report = (s: Scratch, depth: number, key: string, deciding: ReadonlyArray<Node>): void => {
  // enough found: the walk stops here (see MAX_FOUND)
  if (s.more !== undefined && s.more.size >= MAX_FOUND) {
    s.visits = MAX_VISITS
    return
  }
  // a top-level key (most reported keys) shares one empty place and renders none: a call repeating a reported key
  // allocates no copy of the stack (the flat figure of docs/performance.md; the same place either way)
  const place = depth === 0 ? TOP : s.stack.slice(0, depth)
  const at = depth === 0 ? '' : renderPlace(place)
  const path = pathOf(at, key)
  const found: UnknownKey = { path, key, at, place, declared: declaredAt(deciding) }
  // a path seen again (in another element of the same array, another entry of a record) is one key, the
  // last one met
  if (s.more !== undefined) s.more.set(path, found)
  else if (s.first === undefined) s.first = found
  else
    s.more = new Map([
      [s.first.path, s.first],
      [path, found],
    ])
}

const NONE: ReadonlyArray<UnknownKey> = Object.freeze([])

/**
 * Orders undeclared keys by path (by UTF-16 code units, as `<` compares strings).
 *
 * @since 0.1.0
 * @category utils
 */
export const byPath = (a: UnknownKey, b: UnknownKey): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/**
 * What a walk found, each path once, sorted by path; the scratch is emptied for the next walk.
 *
 * @since 0.1.0
 * @category utils
 */
export const takeFound = (s: Scratch): ReadonlyArray<UnknownKey> => {
  const { first, more } = s
  s.visits = 0
  if (first === undefined) return NONE
  s.first = undefined
  if (more === undefined) return [first]
  s.more = undefined
  return [...more.values()].sort(byPath)
}

// per value kind (object or array): whether a branch can hold such a value, and whether it declares anything
// for it (a branch that declares nothing takes any such value)
interface Kind {
  readonly holds: (p: Node) => boolean
  readonly declares: (p: Node) => boolean
}

/**
 * What decides an object's keys.
 *
 * @since 0.1.0
 * @category model
 */
export const OBJECT: Kind = { holds: (p) => p.object, declares: declaresKeys }
/**
 * What decides an array's elements.
 *
 * @since 0.1.0
 * @category model
 */
export const ARRAY: Kind = { holds: (p) => p.array, declares: (p) => p.items.length > 0 || p.prefix.length > 0 }

/**
 * Visits the places that decide a value at `places`: each of them, and their union branches (those the
 * discriminator picks, when it picks some; else every branch that may hold the value). Returns whether some
 * branch takes any such value, which makes the place open (nothing reported). Without `obj`, no discriminator
 * picks: every branch that may hold the value is visited, except those of a tagged union when `stopAtTags`
 * says so (it then returns `undefined`: what decides depends on the call).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const expand = (
  places: ReadonlyArray<Node>,
  kind: Kind,
  obj: Readonly<Record<string, unknown>> | undefined,
  visit: (p: Node) => void,
  stopAtTags = false,
): boolean | undefined => {
  const seen = new Set<Node>()
  let open = false
  let tagged = false
  const go = (p: Node, isBranch: boolean): void => {
    if (seen.has(p)) return
    seen.add(p)
    visit(p)
    if (isBranch && p.unions.length === 0 && !kind.declares(p)) open = true
    for (const u of p.unions) {
      const tag = u.tag
      if (tag !== undefined && stopAtTags) tagged = true
      const value = tag === undefined || obj === undefined || !hasOwn(obj, tag.key) ? undefined : obj[tag.key]
      const picked = tag !== undefined && isPrimitive(value) ? tag.picks.get(value) : undefined
      // a picked branch declares its tag, so it is never open
      for (const b of picked ?? u.branches.filter(kind.holds)) go(b, true)
    }
  }
  for (const p of places) go(p, false)
  return tagged ? undefined : open
}

/**
 * Whether any of the places can report a key, there or below.
 *
 * @since 0.1.0
 * @category utils
 */
export const speaksAny = (places: ReadonlyArray<Node>): boolean => {
  for (const q of places) if (q.speaks) return true
  return false
}

/**
 * The keys declared by name at the deciding places: what "did you mean" compares with.
 *
 * @since 0.1.0
 * @category utils
 */
export const declaredAt = (places: ReadonlyArray<Node>): ReadonlySet<string> =>
  places.length === 1 ? (places[0] as Node).declared : new Set(places.flatMap((p) => [...p.declared]))

/**
 * The places a key's value is checked against, and whether a name or a pattern declares it (else only
 * `additionalProperties` does: the key is a record's, written `*` in paths); `undefined` when nothing
 * declares it.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const childrenAt = (
  deciding: ReadonlyArray<Node>,
  key: string,
): { readonly places: ReadonlyArray<Node>; readonly named: boolean } | undefined => {
  let places: Array<Node> | undefined
  let named = false
  for (const p of deciding) {
    const own = p.props.get(key)
    if (own !== undefined) {
      ;(places ??= []).push(...own)
      named = true
    }
    for (const [re, q] of p.patterns) {
      if (!re.test(key)) continue
      ;(places ??= []).push(q)
      named = true
    }
    for (const r of p.rests) {
      if (r.own.has(key) || r.patterns.some((re) => re.test(key))) continue
      ;(places ??= []).push(r.node)
    }
  }
  return places === undefined ? undefined : { places, named }
}

/**
 * One key of an object whose deciding places are `deciding`: reported, or its value walked.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const keyAt = (
  s: Scratch,
  obj: Readonly<Record<string, unknown>>,
  key: string,
  deciding: ReadonlyArray<Node>,
  depth: number,
): void => {
  if (isTolerated(s, depth, key)) return
  const children = childrenAt(deciding, key)
  if (children === undefined) return report(s, depth, key, deciding)
  if (!speaksAny(children.places)) return
  s.stack[depth] = children.named ? key : ENTRY
  // an own key (Object.keys): a plain read takes the member, `__proto__` included
  walk(s, obj[key], children.places, depth + 1)
}

/**
 * The keys of an object at `places`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const walkObject = (
  s: Scratch,
  obj: Readonly<Record<string, unknown>>,
  places: ReadonlyArray<Node>,
  depth: number,
): void => {
  const deciding: Array<Node> = []
  if (expand(places, OBJECT, obj, (p) => deciding.push(p)) === true || !deciding.some(declaresKeys)) return
  for (const key of Object.keys(obj)) keyAt(s, obj, key, deciding, depth)
}

/**
 * The elements of an array at `places`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const walkArray = (
  s: Scratch,
  arr: ReadonlyArray<unknown>,
  places: ReadonlyArray<Node>,
  depth: number,
): void => {
  const all: Array<Node> = []
  if (expand(places, ARRAY, undefined, (p) => all.push(p)) === true) return
  s.stack[depth] = ELEMENT
  arr.forEach((e, i) => {
    const here = all.flatMap((p) => (i < p.prefix.length ? (p.prefix[i] as ReadonlyArray<Node>) : p.items))
    if (speaksAny(here)) walk(s, e, here, depth + 1)
  })
}

/**
 * A value at `places`, `depth` steps below the arguments' root.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const walk = (s: Scratch, value: unknown, places: ReadonlyArray<Node>, depth: number): void => {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || ++s.visits > MAX_VISITS) return
  if (Array.isArray(value)) walkArray(s, value, places, depth)
  else walkObject(s, value as Readonly<Record<string, unknown>>, places, depth)
}
