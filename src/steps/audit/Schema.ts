/**
 * A tool's `parameters` read as a JSON Schema: where, in a call's arguments, keys are declared. A declaration
 * is compiled once per listing into places (one per schema position, with `allOf` and local `$ref` folded
 * in); a call's arguments are then walked along them, and each key no place declares is named by its path
 * (`opts.encodng`, `edits[].oldtext`).
 *
 * A place that declares no property (an open map, `{}`, a schema-free object) reports nothing; neither does a
 * union with a branch that takes any object. `additionalProperties` is ignored: a server that accepts a key
 * it does not advertise is exactly the case worth reporting.
 *
 * @since 0.1.0
 */
import { REASON_PARAM } from '../../kernel/model.js'
import { hasOwn, isRecord } from '../../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

type Primitive = string | number | boolean | null

declare const PlaceBrand: unique symbol

/**
 * A declaration's schema compiled for the walk. Opaque: read it with {@link diffKeys}.
 *
 * @since 0.1.0
 * @category model
 */
export interface Place {
  readonly [PlaceBrand]: 'Place'
}

// One position of a schema, with `allOf` and `$ref` folded in.
interface Node {
  /** Declared property → the places its value is checked against (one per declaring schema). */
  readonly props: ReadonlyMap<string, ReadonlyArray<Node>>
  /** `patternProperties`: a key matching one is declared. */
  readonly patterns: ReadonlyArray<readonly [RegExp, Node]>
  /** `anyOf` and `oneOf` groups. */
  readonly unions: ReadonlyArray<Union>
  /** The places of every array element past `prefix`. */
  readonly items: ReadonlyArray<Node>
  /** `prefixItems` (or a draft-4 `items` array), by position. */
  readonly prefix: ReadonlyArray<ReadonlyArray<Node>>
  /** Whether the place may hold an object (`type` absent or naming `object`). */
  readonly object: boolean
  /** Whether the place may hold an array (`type` absent or naming `array`). */
  readonly array: boolean
  /** The one value it allows (`const`, or an `enum` of one), when that is a primitive. */
  readonly pinned: { readonly value: Primitive } | undefined
  /** Whether a key can be reported here or below: when not, the walk does not go in. */
  readonly speaks: boolean
}

type Branches = readonly [Node, ...ReadonlyArray<Node>]

// An `anyOf` or `oneOf`: its branches, and, when every branch pins one shared property (a discriminated
// union), that property and the branches each value picks.
interface Union {
  readonly branches: Branches
  readonly tag: { readonly key: string; readonly picks: ReadonlyMap<Primitive, ReadonlyArray<Node>> } | undefined
}

/**
 * A declaration's schema, compiled: the root place and the keys declared at the top.
 *
 * @since 0.1.0
 * @category model
 */
export interface Shape {
  readonly root: Place
  /** Every key declared at the top level (by the root and by each of its union branches). */
  readonly keys: ReadonlySet<string>
  /** Whether the top level declares keys by pattern too. */
  readonly patterned: boolean
  /** Whether keys can be reported only at the top level (no union, no pattern, nothing below): the fast path. */
  readonly flat: boolean
}

/**
 * One undeclared key of a call.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKey {
  /** Where it sits, from the arguments' root: `haed`, `opts.encodng`, `edits[].oldtext`. */
  readonly path: string
  /** The key itself. */
  readonly key: string
  /** The path of the object that holds it (`''` at the top). */
  readonly at: string
  /** The keys declared at that place, for "did you mean". */
  readonly declared: ReadonlySet<string>
}

// -------------------------------------------------------------------------------------
// paths
// -------------------------------------------------------------------------------------

// a top-level key is shown as is unless it could be taken for a path; below the top, a name that is not a
// plain word is quoted (`opts["a.b"]`), so no two places share a path
const PATH_CHARS = /[.[\]"]/
const QUOTED_BELOW = /[.[\]" ]/

/**
 * The path of `key` in the object at `at` (`''` for the arguments' root).
 *
 * @example
 * import { pathOf } from 'toolstack'
 * assert.strictEqual(pathOf('', 'haed'), 'haed')
 * assert.strictEqual(pathOf('opts', 'encodng'), 'opts.encodng')
 * assert.strictEqual(pathOf('opts', 'a.b'), 'opts["a.b"]')
 * assert.strictEqual(pathOf('edits[]', 'oldtext'), 'edits[].oldtext')
 *
 * @since 0.1.0
 * @category paths
 */
export const pathOf = (at: string, key: string): string =>
  at === ''
    ? PATH_CHARS.test(key) || key === ''
      ? `[${JSON.stringify(key)}]`
      : key
    : QUOTED_BELOW.test(key) || key === ''
      ? `${at}[${JSON.stringify(key)}]`
      : `${at}.${key}`

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** Deeper than this, a schema or an argument is not read (bounds the stack; not a limit users should hit). */
const MAX_DEPTH = 64

interface Building extends Prepared {
  props: Map<string, Array<Node>>
  patterns: Array<readonly [RegExp, Node]>
  unions: Array<Union>
  items: Array<Node>
  prefix: Array<Array<Node>>
  object: boolean
  array: boolean
  pinned: { readonly value: Primitive } | undefined
  speaks: boolean
}

/**
 * Per-place walk state besides the schema: whether the short walk applies (no union, no pattern), and a memo
 * of the last clean key list with the children to descend into. The memo serves the nested performance target
 * (added cost ≤ 1.5 parses and below ajv on 10 elements of 4 keys): a model repeats keys in order and
 * `JSON.parse` returns interned strings, so a clean object costs one pointer compare per key. It memoises a
 * pure function: a matching list holds only declared keys.
 */
interface Prepared {
  simple: boolean
  /** The keys `props` declares, as one set made once: what "did you mean" compares with. */
  declared: ReadonlySet<string>
  clean: ReadonlyArray<string>
  /** For each key of `clean`, its children when a key can be reported in them; empty when none can. */
  deep: ReadonlyArray<ReadonlyArray<Node> | undefined>
}

const prepared = (p: Node): Prepared => p as unknown as Prepared

// casts between the opaque Place callers see and the Node the walk reads
const nodeOf = (p: Place): Node => p as unknown as Node
const asPlace = (n: Node): Place => n as unknown as Place

const blank = (takes: boolean): Building => ({
  props: new Map(),
  patterns: [],
  unions: [],
  items: [],
  prefix: [],
  object: takes,
  array: takes,
  pinned: undefined,
  speaks: false,
  simple: true,
  declared: new Set(),
  clean: [],
  deep: [],
})

/** `{}`, `true`, an unresolved reference: takes anything, declares nothing. */
const FREE: Node = Object.freeze(blank(true))
/** `false`: takes nothing. */
const NOTHING: Node = Object.freeze(blank(false))

const isPrimitive = (u: unknown): u is Primitive =>
  u === null || typeof u === 'string' || typeof u === 'number' || typeof u === 'boolean'

const arrayOf = (s: Readonly<Record<string, unknown>>, k: string): ReadonlyArray<unknown> => {
  const v = hasOwn(s, k) ? s[k] : undefined
  return Array.isArray(v) ? v : []
}

const memberOf = (s: Readonly<Record<string, unknown>>, k: string): unknown => (hasOwn(s, k) ? s[k] : undefined)

const regExpOf = (pattern: string): RegExp | undefined => {
  for (const flags of ['u', '']) {
    try {
      return new RegExp(pattern, flags)
    } catch {
      // not valid with these flags: try the next, or declare nothing
    }
  }
  return undefined
}

// a JSON pointer in a URI fragment: `#`, `#/$defs/a~1b`, `#/definitions/x%20y`
const resolve = (root: unknown, ref: string): unknown => {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let at: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    let token: string
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return undefined
    }
    if (typeof at !== 'object' || at === null || !hasOwn(at, token)) return undefined
    at = (at as Record<string, unknown>)[token]
  }
  return at
}

// the places below a place (union branches, items, prefix items): a place whose children can report keys can
// report keys too, even if it declares none itself
const childrenOf = (p: Node): ReadonlyArray<Node> => [
  ...p.unions.flatMap((u) => u.branches),
  ...p.items,
  ...p.prefix.flat(),
]

const declaresHere = (p: Node): boolean => p.props.size > 0 || p.patterns.length > 0

// the discriminator: the first key of the first branch that every branch pins to a primitive
const tagOf = (branches: Branches): Union['tag'] => {
  const pinnedAt = (b: Node, key: string): { readonly value: Primitive } | undefined =>
    b.props.get(key)?.find((q) => q.pinned !== undefined)?.pinned
  for (const key of branches[0].props.keys()) {
    const picks = new Map<Primitive, Array<Node>>()
    let every = true
    for (const b of branches) {
      const pin = pinnedAt(b, key)
      if (pin === undefined) {
        every = false
        break
      }
      const had = picks.get(pin.value)
      if (had === undefined) picks.set(pin.value, [b])
      else had.push(b)
    }
    if (every) return { key, picks }
  }
  return undefined
}

/**
 * Compiles a declaration's `parameters` into places. Never throws on a schema it cannot read: what it cannot
 * read declares nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compileSchema = (parameters: unknown): Shape => {
  const built = new Map<object, Building>()
  const unionsToTag: Array<[Building, number]> = []

  const placeOf = (schema: unknown, depth: number): Node => {
    if (schema === false) return NOTHING
    if (!isRecord(schema) || depth > MAX_DEPTH) return FREE
    const had = built.get(schema)
    if (had !== undefined) return had
    const p = blank(true)
    built.set(schema, p)
    // the schema itself, its allOf branches and what its $ref names, each once
    const conjuncts: Array<Readonly<Record<string, unknown>>> = []
    const todo: Array<unknown> = [schema]
    while (todo.length > 0) {
      const s = todo.pop()
      if (!isRecord(s) || conjuncts.includes(s)) continue
      conjuncts.push(s)
      const ref = memberOf(s, '$ref')
      if (typeof ref === 'string') {
        const target = resolve(parameters, ref)
        // an unresolvable reference makes the place schema-free
        if (target === undefined) return Object.assign(p, blank(true))
        if (target === false) Object.assign(p, { object: false, array: false })
        todo.push(target)
      }
      // `then`, `else` and `dependentSchemas` may declare keys too: counted as declared, never reported
      todo.push(...arrayOf(s, 'allOf'), memberOf(s, 'then'), memberOf(s, 'else'))
      const dependent = memberOf(s, 'dependentSchemas')
      if (isRecord(dependent)) todo.push(...Object.values(dependent))
    }
    for (const s of conjuncts) fold(p, s, depth)
    return p
  }

  const fold = (p: Building, s: Readonly<Record<string, unknown>>, depth: number): void => {
    const properties = memberOf(s, 'properties')
    if (isRecord(properties)) {
      for (const k of Object.keys(properties)) {
        const child = placeOf(properties[k], depth + 1)
        const had = p.props.get(k)
        if (had === undefined) p.props.set(k, [child])
        else had.push(child)
      }
    }
    const patterns = memberOf(s, 'patternProperties')
    if (isRecord(patterns)) {
      for (const k of Object.keys(patterns)) {
        const re = regExpOf(k)
        if (re !== undefined) p.patterns.push([re, placeOf(patterns[k], depth + 1)])
      }
    }
    for (const group of ['anyOf', 'oneOf']) {
      const [first, ...rest] = arrayOf(s, group).map((b) => placeOf(b, depth + 1))
      if (first === undefined) continue
      p.unions.push({ branches: [first, ...rest], tag: undefined })
      unionsToTag.push([p, p.unions.length - 1])
    }
    const items = memberOf(s, 'items')
    const prefix = Array.isArray(items) ? items : arrayOf(s, 'prefixItems')
    if (items !== undefined && !Array.isArray(items)) p.items.push(placeOf(items, depth + 1))
    prefix.forEach((item, i) => (p.prefix[i] ??= []).push(placeOf(item, depth + 1)))
    const type = memberOf(s, 'type')
    const types: ReadonlyArray<unknown> | undefined =
      typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined
    if (types !== undefined)
      Object.assign(p, { object: p.object && types.includes('object'), array: p.array && types.includes('array') })
    const constant = memberOf(s, 'const')
    const oneValue = arrayOf(s, 'enum')
    if (isPrimitive(constant)) p.pinned = { value: constant }
    else if (oneValue.length === 1 && isPrimitive(oneValue[0])) p.pinned = { value: oneValue[0] }
  }

  const root = placeOf(parameters, 0)

  // discriminated unions are found once every branch is built
  for (const [p, i] of unionsToTag) {
    const u = p.unions[i] as Union
    p.unions[i] = { branches: u.branches, tag: tagOf(u.branches) }
  }
  // `speaks`: the place, or a place below it, declares a property (propagated up to the parents)
  const parents = new Map<Node, Array<Building>>()
  for (const p of built.values()) {
    for (const c of childrenOf(p)) {
      const had = parents.get(c)
      if (had === undefined) parents.set(c, [p])
      else had.push(p)
    }
  }
  const todo = [...built.values()].filter(declaresHere)
  for (const p of todo) p.speaks = true
  while (todo.length > 0) {
    for (const q of parents.get(todo.pop() as Building) ?? []) {
      if (q.speaks) continue
      q.speaks = true
      todo.push(q)
    }
  }

  for (const p of built.values()) {
    p.simple = p.unions.length === 0 && p.patterns.length === 0
    p.declared = new Set(p.props.keys())
  }

  const keys = new Set<string>()
  expand([root], OBJECT, undefined, (p) => {
    for (const k of p.props.keys()) keys.add(k)
  })
  const flat =
    root.unions.length === 0 &&
    root.patterns.length === 0 &&
    [...root.props.values()].every((ps) => ps.every((q) => !q.speaks))
  return { root: asPlace(root), keys, patterned: root.patterns.length > 0, flat }
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// per value kind (object or array): whether a branch can hold such a value, and whether it declares anything
// for it (a branch that declares nothing takes any such value)
interface Kind {
  readonly holds: (p: Node) => boolean
  readonly declares: (p: Node) => boolean
}

const OBJECT: Kind = { holds: (p) => p.object, declares: declaresHere }
const ARRAY: Kind = { holds: (p) => p.array, declares: (p) => p.items.length > 0 || p.prefix.length > 0 }

/**
 * Visits the places that decide a value at `places`: each of them, and their union branches (those the
 * discriminator picks, when it picks some; else every branch that may hold the value). Returns whether some
 * branch takes any such value, which makes the place open (nothing reported).
 */
const expand = (
  places: ReadonlyArray<Node>,
  kind: Kind,
  obj: Readonly<Record<string, unknown>> | undefined,
  visit: (p: Node) => void,
): boolean => {
  const seen = new Set<Node>()
  let open = false
  const go = (p: Node, isBranch: boolean): void => {
    if (seen.has(p)) return
    seen.add(p)
    visit(p)
    if (isBranch && p.unions.length === 0 && !kind.declares(p)) open = true
    for (const u of p.unions) {
      const tag = u.tag
      const value = tag === undefined || obj === undefined || !hasOwn(obj, tag.key) ? undefined : obj[tag.key]
      const picked = tag !== undefined && isPrimitive(value) ? tag.picks.get(value) : undefined
      // a picked branch declares its tag, so it is never open
      for (const b of picked ?? u.branches.filter(kind.holds)) go(b, true)
    }
  }
  for (const p of places) go(p, false)
  return open
}

// where the walk is: rendered as a path only when a key there is reported
interface Loc {
  readonly up: Loc | undefined
  /** The key in the object above; `undefined` for an element of the array above. */
  readonly key: string | undefined
}

const ROOT: Loc = { up: undefined, key: undefined }

const render = (loc: Loc): string => {
  if (loc.up === undefined) return ''
  const at = render(loc.up)
  return loc.key === undefined ? `${at}[]` : pathOf(at, loc.key)
}

interface Walk {
  readonly tolerated: ReadonlySet<string>
  found: Map<string, UnknownKey> | undefined
}

const speaksAny = (places: ReadonlyArray<Node>): boolean => {
  for (const q of places) if (q.speaks) return true
  return false
}

const declaresAny = (places: ReadonlyArray<Node>): boolean => {
  for (const q of places) if (declaresHere(q)) return true
  return false
}

// the places a key's value is checked against, or undefined when no place declares it
const childrenAt = (deciding: ReadonlyArray<Node>, key: string): ReadonlyArray<Node> | undefined => {
  let children: Array<Node> | undefined
  for (const p of deciding) {
    const own = p.props.get(key)
    if (own !== undefined) (children ??= []).push(...own)
    for (const [re, q] of p.patterns) if (re.test(key)) (children ??= []).push(q)
  }
  return children
}

const report = (w: Walk, loc: Loc, key: string, declared: () => ReadonlySet<string>): void => {
  const at = render(loc)
  const path = pathOf(at, key)
  // a path seen again (in another element of the same array) is one key
  ;(w.found ??= new Map()).set(path, { path, key, at, declared: declared() })
}

// returns whether `obj`'s keys match the last clean key list, walking the memoised children if so
const walkClean = (w: Walk, obj: Readonly<Record<string, unknown>>, p: Prepared, loc: Loc, depth: number): boolean => {
  const clean = p.clean
  let i = 0
  // keys that are a prefix of a clean list, in its order, are declared (fewer, or none, included)
  for (const k in obj) if (k !== clean[i++]) return false
  const deep = p.deep
  for (let j = 0; j < deep.length; j++) {
    const children = deep[j]
    if (children !== undefined) walk(w, obj[clean[j] as string], children, { up: loc, key: clean[j] }, depth + 1)
  }
  return true
}

// one place without unions or patterns: its own map, and the memo of its last clean list
const walkSimple = (w: Walk, obj: Readonly<Record<string, unknown>>, p: Node, loc: Loc, depth: number): void => {
  const memo = prepared(p)
  if (p.props.size === 0 || walkClean(w, obj, memo, loc, depth)) return
  const top = loc === ROOT
  const keys = Object.keys(obj)
  const deep: Array<ReadonlyArray<Node> | undefined> = []
  let clean = true
  for (const key of keys) {
    if (top && (key === REASON_PARAM || w.tolerated.has(key))) {
      deep.push(undefined)
      continue
    }
    const children = p.props.get(key)
    if (children === undefined) {
      clean = false
      report(w, loc, key, () => memo.declared)
      continue
    }
    const speaking = speaksAny(children) ? children : undefined
    deep.push(speaking)
    if (speaking !== undefined) walk(w, obj[key], speaking, { up: loc, key }, depth + 1)
  }
  if (clean) {
    memo.clean = keys
    memo.deep = deep.some((d) => d !== undefined) ? deep : []
  }
}

const walkObject = (
  w: Walk,
  obj: Readonly<Record<string, unknown>>,
  places: ReadonlyArray<Node>,
  loc: Loc,
  depth: number,
): void => {
  const only = places[0] as Node
  if (places.length === 1 && prepared(only).simple) return walkSimple(w, obj, only, loc, depth)
  const deciding: Array<Node> = []
  if (expand(places, OBJECT, obj, (p) => deciding.push(p)) || !declaresAny(deciding)) return
  const top = loc === ROOT
  for (const key of Object.keys(obj)) {
    if (top && (key === REASON_PARAM || w.tolerated.has(key))) continue
    const children = childrenAt(deciding, key)
    if (children === undefined) report(w, loc, key, () => declaredAt(deciding))
    else if (speaksAny(children)) walk(w, obj[key], children, { up: loc, key }, depth + 1)
  }
}

const declaredAt = (places: ReadonlyArray<Node>): ReadonlySet<string> =>
  new Set(places.flatMap((p) => [...p.props.keys()]))

const walkArray = (
  w: Walk,
  arr: ReadonlyArray<unknown>,
  places: ReadonlyArray<Node>,
  loc: Loc,
  depth: number,
): void => {
  const element: Loc = { up: loc, key: undefined }
  const only = places[0] as Node
  // one place without unions or a prefix: every element is checked against its items
  if (places.length === 1 && only.unions.length === 0 && only.prefix.length === 0) {
    const items = only.items
    if (!speaksAny(items)) return
    for (const e of arr) walk(w, e, items, element, depth + 1)
    return
  }
  const all: Array<Node> = []
  if (expand(places, ARRAY, undefined, (p) => all.push(p))) return
  arr.forEach((e, i) => {
    const here = all.flatMap((p) => (i < p.prefix.length ? (p.prefix[i] as ReadonlyArray<Node>) : p.items))
    if (speaksAny(here)) walk(w, e, here, element, depth + 1)
  })
}

const TOLERATED: ReadonlySet<string> = new Set([REASON_PARAM])

const walk = (w: Walk, value: unknown, places: ReadonlyArray<Node>, loc: Loc, depth: number): void => {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return
  if (Array.isArray(value)) walkArray(w, value, places, loc, depth)
  else walkObject(w, value as Readonly<Record<string, unknown>>, places, loc, depth)
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
 * The keys of `args` that no place of `shape` declares, each once per path, sorted by path. `reason` and the
 * `tolerated` names are never reported at the top level. Each array's positions are one place
 * (`edits[].oldtext`), so a typo repeated in a hundred elements is one key.
 *
 * @example
 * import { compileSchema, diffKeys } from 'toolstack'
 * const shape = compileSchema({
 *   type: 'object',
 *   properties: { edits: { type: 'array', items: { type: 'object', properties: { oldText: {}, newText: {} } } } },
 * })
 * const found = diffKeys(shape)({
 *   reason: 'r',
 *   edits: [
 *     { oldtext: 'a', newText: 'b' },
 *     { oldtext: 'c', newText: 'd' },
 *   ],
 * })
 * assert.deepStrictEqual(
 *   found.map((k) => k.path),
 *   ['edits[].oldtext'],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const diffKeys =
  (shape: Shape, tolerated: ReadonlySet<string> = TOLERATED) =>
  (args: Readonly<Record<string, unknown>>): ReadonlyArray<UnknownKey> => {
    const w: Walk = { tolerated, found: undefined }
    walkObject(w, args, [nodeOf(shape.root)], ROOT, 0)
    return w.found === undefined ? NONE : [...w.found.values()].sort(byPath)
  }
