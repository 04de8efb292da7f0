/**
 * A tool's `parameters` read as a JSON Schema, into places: one per schema position, with `allOf`, `$ref` and
 * the conditional keywords folded in, linked by what declares a key (`properties`, `patternProperties`,
 * `additionalProperties`), an array's elements (`items`, `prefixItems`, `additionalItems`) and unions
 * (`anyOf`, `oneOf`). Where the drafts differ, the document's `$schema` decides; without one, both spellings
 * are read. Internal: `Schema.ts` is the public face; `Walk.ts` and `Codegen.ts` read these places.
 *
 * One file: over 500 lines because each keyword's reading depends on the draft and on the others (a `$ref`
 * beside `properties`, `if` beside `then`); split, the drafts' differences would be spread over several files.
 *
 * @since 0.1.0
 */
import { hasOwn, isRecord } from '../../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A value a discriminator can pin.
 *
 * @since 0.1.0
 * @category model
 */
export type Primitive = string | number | boolean | null

/**
 * `additionalProperties` with a schema: every key its own schema object declares neither by name nor pattern.
 *
 * @since 0.1.0
 * @category model
 */
export interface Rest {
  readonly node: Node
  readonly own: ReadonlySet<string>
  readonly patterns: ReadonlyArray<RegExp>
}

/**
 * One position of a schema, with `allOf`, `$ref` and the conditional keywords folded in.
 *
 * @since 0.1.0
 * @category model
 */
export interface Node {
  readonly id: number
  /** Declared property → the places its value is checked against (one per declaring schema). */
  readonly props: Map<string, Array<Node>>
  /** `patternProperties`: a key matching one is declared. */
  readonly patterns: Array<readonly [RegExp, Node]>
  /** `additionalProperties` with a schema: every other key is declared, its value checked against `node`. */
  readonly rests: Array<Rest>
  /** `anyOf` and `oneOf` groups. */
  readonly unions: Array<Union>
  /** The places of every array element past `prefix`. */
  readonly items: Array<Node>
  /** `prefixItems` (or a draft-4 to 2019-09 `items` array), by position. */
  readonly prefix: Array<Array<Node>>
  /** The properties of the schema itself, its `allOf` and `$ref` (not its conditionals): what a tag reads. */
  readonly tagProps: Array<readonly [string, Node]>
  /** Whether the place may hold an object (`type` absent or naming `object`). */
  object: boolean
  /** Whether the place may hold an array (`type` absent or naming `array`). */
  array: boolean
  /** The one value it allows (`const`, or an `enum` of one), when that is a primitive. */
  pinned: { readonly value: Primitive } | undefined
  /** Whether a key can be reported here or below: when not, the walk does not go in. */
  speaks: boolean
  /** The keys `props` declares, as one set made once: what "did you mean" compares with. */
  declared: ReadonlySet<string>
}

/**
 * The branches of an `anyOf` or `oneOf`.
 *
 * @since 0.1.0
 * @category model
 */
export type Branches = readonly [Node, ...ReadonlyArray<Node>]

/**
 * An `anyOf` or `oneOf`: its branches, and, when every branch pins one shared property (a discriminated
 * union, nested ones included), that property and the branches each value picks.
 *
 * @since 0.1.0
 * @category model
 */
export interface Union {
  readonly branches: Branches
  readonly tag: Tag | undefined
}

/**
 * A discriminator: the property, and the branches each of its values picks.
 *
 * @since 0.1.0
 * @category model
 */
export interface Tag {
  readonly key: string
  readonly picks: ReadonlyMap<Primitive, ReadonlyArray<Node>>
}

/**
 * Which draft's spelling decides where the drafts differ; `undefined`: both are read.
 *
 * @since 0.1.0
 * @category model
 */
export type Draft = 4 | 6 | 7 | 2019 | 2020 | undefined

/**
 * The places of one schema.
 *
 * @since 0.1.0
 * @category model
 */
export interface Graph {
  readonly root: Node
  readonly nodes: ReadonlyArray<Node>
  readonly draft: Draft
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Deeper than this, a schema or an argument is not read (bounds the stack; not a limit users should hit).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_DEPTH = 64

const blank = (takes: boolean, id: number): Node => ({
  id,
  props: new Map(),
  patterns: [],
  rests: [],
  unions: [],
  items: [],
  prefix: [],
  tagProps: [],
  object: takes,
  array: takes,
  pinned: undefined,
  speaks: false,
  declared: new Set(),
})

/**
 * `{}`, `true`, an unresolved reference: takes anything, declares nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const FREE: Node = Object.freeze(blank(true, -1))
/**
 * `false`: takes nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const NOTHING: Node = Object.freeze(blank(false, -2))

/**
 * Whether a value is one a discriminator can pin (a string, a number, a boolean or `null`).
 *
 * @since 0.1.0
 * @category utils
 */
export const isPrimitive = (u: unknown): u is Primitive =>
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

// what a draft's `$schema` names; another value, or none, reads both spellings
const DRAFTS: ReadonlyArray<readonly [RegExp, Draft]> = [
  [/^https?:\/\/json-schema\.org\/draft-04\/schema#?$/, 4],
  [/^https?:\/\/json-schema\.org\/draft-06\/schema#?$/, 6],
  [/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, 7],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, 2019],
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, 2020],
]

const draftOf = (root: unknown): Draft => {
  const named = isRecord(root) ? memberOf(root, '$schema') : undefined
  if (typeof named !== 'string') return undefined
  for (const [re, draft] of DRAFTS) if (re.test(named)) return draft
  return undefined
}

/** What each draft reads. `undefined` (no `$schema`) reads every spelling. */
const readsOf = (draft: Draft) => ({
  /** `items` as an array of schemas, one per position (a tuple) and `additionalItems` past it. */
  tupleItems: draft !== 2020,
  prefixItems: draft === undefined || draft === 2020,
  /** `dependencies` whose values are schemas. */
  dependencies: draft === undefined || draft <= 7,
  dependentSchemas: draft === undefined || draft >= 2019,
  conditionals: draft === undefined || draft >= 7,
  /** Up to draft 7, a schema with `$ref` is only that reference: its other keywords are ignored. */
  refSiblings: draft === undefined || draft >= 2019,
  /** `id` (draft 4) or `$id` (draft 6 on): where the base URI changes. */
  ids: draft === 4 ? ['id'] : draft === undefined ? ['$id', 'id'] : ['$id'],
  /** `$anchor` (2019-09 on); before it, an `$id` (or `id`) that is a fragment alone. */
  anchor: draft === undefined || draft >= 2019,
  fragmentIds: draft === undefined || draft <= 7,
})

type Reads = ReturnType<typeof readsOf>

// -------------------------------------------------------------------------------------
// references
// -------------------------------------------------------------------------------------

// the base of a document that names none: a reference relative to it that is not in the document stays remote
const DEFAULT_BASE = 'https://toolstack.invalid/parameters.json'

const SUBSCHEMA = ['additionalProperties', 'additionalItems', 'items', 'contains', 'propertyNames', 'not', 'if', 'then']
const SUBSCHEMA_MORE = ['else', 'unevaluatedProperties', 'unevaluatedItems', 'contentSchema']
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']

const SUBSCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  ...SUBSCHEMA,
  ...SUBSCHEMA_MORE,
  ...SUBSCHEMA_LISTS,
  ...SUBSCHEMA_MAPS,
])

// whether `s` has an own member named by `keywords`: most schemas of a listing are leaves (`{ type: 'string',
// description }`), told apart by their two or three names rather than a lookup per keyword (the compile time
// of docs/performance.md)
const hasAnyOf = (s: object, keywords: ReadonlySet<string>): boolean => {
  for (const k of Object.getOwnPropertyNames(s)) if (keywords.has(k)) return true
  return false
}

/** Calls `f` on every schema position below `s`: what the index of identifiers walks. */
const eachSubschema = (s: Readonly<Record<string, unknown>>, f: (sub: unknown) => void): void => {
  if (!hasAnyOf(s, SUBSCHEMA_KEYWORDS)) return
  for (const k of SUBSCHEMA) f(memberOf(s, k))
  for (const k of SUBSCHEMA_MORE) f(memberOf(s, k))
  for (const k of SUBSCHEMA_LISTS) for (const sub of arrayOf(s, k)) f(sub)
  for (const k of SUBSCHEMA_MAPS) {
    const m = memberOf(s, k)
    if (isRecord(m)) for (const key of Object.keys(m)) f(m[key])
  }
}

const absolute = (ref: string, base: string): string | undefined => {
  try {
    return new URL(ref, base).href
  } catch {
    return undefined
  }
}

const withoutFragment = (uri: string): string => uri.replace(/#.*/s, '')

/** The resources (`$id`), anchors and base URI (never with a fragment) of each schema of a document. */
interface Index {
  readonly resources: Map<string, unknown>
  readonly anchors: Map<string, unknown>
  readonly bases: Map<object, string>
}

// the index reads identifiers this deep (deeper, a reference to them stays unresolved)
const MAX_INDEX_DEPTH = 4 * MAX_DEPTH

const indexOf = (root: unknown, reads: Reads): Index => {
  const index: Index = { resources: new Map(), anchors: new Map(), bases: new Map() }
  const visit = (s: unknown, base: string, depth: number): void => {
    if (!isRecord(s) || depth > MAX_INDEX_DEPTH || index.bases.has(s)) return
    let here = base
    // up to draft 7, `$ref` hides its siblings, `$id` among them
    if (reads.refSiblings || typeof memberOf(s, '$ref') !== 'string') {
      for (const key of reads.ids) {
        const id = memberOf(s, key)
        if (typeof id !== 'string') continue
        if (id.startsWith('#')) {
          if (reads.fragmentIds) index.anchors.set(base + id, s)
        } else {
          const uri = absolute(id, base)
          if (uri !== undefined) {
            here = withoutFragment(uri)
            index.resources.set(here, s)
          }
        }
        break
      }
      const anchor = reads.anchor ? memberOf(s, '$anchor') : undefined
      if (typeof anchor === 'string') index.anchors.set(`${here}#${anchor}`, s)
    }
    index.bases.set(s, here)
    eachSubschema(s, (sub) => visit(sub, here, depth + 1))
  }
  index.resources.set(DEFAULT_BASE, root)
  visit(root, DEFAULT_BASE, 0)
  return index
}

const NOT_FOUND = Symbol('not found')

// a JSON pointer in a URI fragment (`/$defs/a~1b`, `/definitions/x%20y`), from a resource's root
const pointer = (doc: unknown, fragment: string): unknown => {
  let at: unknown = doc
  for (const raw of fragment.slice(1).split('/')) {
    let token: string
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return NOT_FOUND
    }
    if (typeof at !== 'object' || at === null || !hasOwn(at, token)) return NOT_FOUND
    at = (at as Record<string, unknown>)[token]
  }
  return at
}

/** What `ref`, met in schema `from`, names: in this document (by pointer, anchor or `$id`), else not found. */
const resolve = (index: Index, from: object, ref: string): unknown => {
  const base = index.bases.get(from) ?? DEFAULT_BASE
  // a fragment alone stays in the base's document: no URI to parse (the common `#/$defs/…`)
  const uri = ref.startsWith('#') ? base + ref : absolute(ref, base)
  if (uri === undefined) return NOT_FOUND
  const doc = withoutFragment(uri)
  const fragment = uri.slice(doc.length + 1)
  if (fragment !== '' && !fragment.startsWith('/')) return index.anchors.get(uri) ?? NOT_FOUND
  // a remote document is not fetched: its reference stays unresolved
  if (!index.resources.has(doc)) return NOT_FOUND
  const target = fragment === '' ? index.resources.get(doc) : pointer(index.resources.get(doc), fragment)
  // a schema reached by a pointer through a place the index does not read keeps its document's base
  if (isRecord(target) && !index.bases.has(target)) index.bases.set(target, doc)
  return target
}

// -------------------------------------------------------------------------------------
// compile
// -------------------------------------------------------------------------------------

// keywords that say nothing about a value: `additionalProperties` holding only these takes any value, as `true`
const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title',
  'description',
  '$comment',
  'default',
  'examples',
  'deprecated',
])

const saysNothing = (s: unknown): boolean =>
  s === true || (isRecord(s) && Object.keys(s).every((k) => ANNOTATIONS.has(k)))

/** The strings an `enum` or `const` allows, when it allows only strings. */
const namesOf = (s: unknown): ReadonlyArray<string> | undefined => {
  if (!isRecord(s)) return undefined
  const values = hasOwn(s, 'const') ? [s['const']] : hasOwn(s, 'enum') ? arrayOf(s, 'enum') : undefined
  return values !== undefined && values.every((v) => typeof v === 'string')
    ? (values as ReadonlyArray<string>)
    : undefined
}

// the keywords that make a place more than its `type`, `const` and `enum`: a schema without any is a leaf
const BEYOND_LEAF: ReadonlySet<string> = new Set([
  '$ref',
  'allOf',
  'anyOf',
  'oneOf',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
  'properties',
  'patternProperties',
  'additionalProperties',
  'propertyNames',
  'items',
  'prefixItems',
  'additionalItems',
  'const',
  'enum',
])

const leaf = (object: boolean, array: boolean, id: number): Node => Object.freeze({ ...blank(true, id), object, array })

// the places of a leaf by what its `type` allows, shared by every schema and listing as FREE is: a leaf holds
// nothing to build, and most places of a listing are leaves (the compile time of docs/performance.md)
const LEAVES: ReadonlyArray<Node> = [leaf(false, false, -3), leaf(true, false, -4), leaf(false, true, -5), FREE]

const leafOf = (s: Readonly<Record<string, unknown>>): Node => {
  const type = memberOf(s, 'type')
  const types: ReadonlyArray<unknown> | undefined =
    typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined
  if (types === undefined) return FREE
  return LEAVES[(types.includes('object') ? 1 : 0) + (types.includes('array') ? 2 : 0)] as Node
}

/** A conjunct of a place: the schema itself, an `allOf` branch or a `$ref` target (main), or a conditional. */
type Conjunct = readonly [Readonly<Record<string, unknown>>, boolean]

/**
 * Compiles a schema into places. Never throws on a schema it cannot read: what it cannot read declares
 * nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const buildGraph = (parameters: unknown): Graph => {
  const draft = draftOf(parameters)
  const reads = readsOf(draft)
  const index = indexOf(parameters, reads)
  const built = new Map<object, Node>()
  const nodes: Array<Node> = []
  const unionsToTag: Array<Node> = []

  const placeOf = (schema: unknown, depth: number): Node => {
    if (schema === false) return NOTHING
    if (!isRecord(schema) || depth > MAX_DEPTH) return FREE
    const had = built.get(schema)
    if (had !== undefined) return had
    if (!hasAnyOf(schema, BEYOND_LEAF)) return leafOf(schema)
    const p = blank(true, nodes.length)
    built.set(schema, p)
    nodes.push(p)
    // the schema itself, its allOf branches and what its $ref names (main), and its conditionals, each once;
    // a schema met both ways is main
    const conjuncts = new Map<Readonly<Record<string, unknown>>, boolean>()
    // up to draft 7, a schema with `$ref` is only what it names
    const refOnly = new Set<object>()
    const todo: Array<readonly [unknown, boolean]> = [[schema, false]]
    while (todo.length > 0) {
      const [s, aux] = todo.pop() as readonly [unknown, boolean]
      if (!isRecord(s)) continue
      const had = conjuncts.get(s)
      if (had === false || had === aux) continue
      conjuncts.set(s, aux)
      const ref = memberOf(s, '$ref')
      if (typeof ref === 'string') {
        const target = resolve(index, s, ref)
        // an unresolvable reference makes the place schema-free
        if (target === NOT_FOUND) {
          Object.assign(p, { object: true, array: true })
          return p
        }
        if (target === false && !aux) Object.assign(p, { object: false, array: false })
        todo.push([target, aux])
        if (!reads.refSiblings) {
          refOnly.add(s)
          continue
        }
      }
      todo.push(...arrayOf(s, 'allOf').map((b) => [b, aux] as const))
      // the conditionals' keys count as declared (a key named only in `if` is the model's to send), but their
      // `type`, `const` and `enum` constrain nothing here
      if (reads.conditionals) for (const k of ['if', 'then', 'else']) todo.push([memberOf(s, k), true])
      for (const k of ['dependentSchemas', 'dependencies'] as const) {
        const d = reads[k] ? memberOf(s, k) : undefined
        if (isRecord(d)) for (const v of Object.values(d)) todo.push([v, true])
      }
    }
    for (const c of conjuncts) if (!refOnly.has(c[0])) fold(p, c, depth)
    return p
  }

  const fold = (p: Node, [s, aux]: Conjunct, depth: number): void => {
    const own = new Set<string>()
    const add = (k: string, child: Node): void => {
      own.add(k)
      const had = p.props.get(k)
      if (had === undefined) p.props.set(k, [child])
      else had.push(child)
      if (!aux) p.tagProps.push([k, child])
    }
    const properties = memberOf(s, 'properties')
    if (isRecord(properties)) for (const k of Object.keys(properties)) add(k, placeOf(properties[k], depth + 1))
    const patterns: Array<RegExp> = []
    const patternProperties = memberOf(s, 'patternProperties')
    if (isRecord(patternProperties)) {
      for (const k of Object.keys(patternProperties)) {
        const re = regExpOf(k)
        if (re === undefined) continue
        patterns.push(re)
        p.patterns.push([re, placeOf(patternProperties[k], depth + 1)])
      }
    }
    const additional = memberOf(s, 'additionalProperties')
    const rest = additional === false || saysNothing(additional) ? undefined : additional
    // `propertyNames` with an enum (an enum-keyed record) names every key the object may hold: each is declared
    const names = namesOf(memberOf(s, 'propertyNames'))
    if (names !== undefined) {
      const value = placeOf(rest, depth + 1)
      for (const k of names) if (!own.has(k)) add(k, value)
    } else if (rest !== undefined) p.rests.push({ node: placeOf(rest, depth + 1), own, patterns })
    for (const group of ['anyOf', 'oneOf']) {
      const [first, ...others] = arrayOf(s, group).map((b) => placeOf(b, depth + 1))
      if (first === undefined) continue
      p.unions.push({ branches: [first, ...others], tag: undefined })
      unionsToTag.push(p)
    }
    const items = memberOf(s, 'items')
    const tuple = Array.isArray(items) && reads.tupleItems
    // `items` that says nothing (`true`, `{}`) takes any element, as no `items` does: a union branch with it is open
    if ((items === false || isRecord(items)) && !saysNothing(items)) p.items.push(placeOf(items, depth + 1))
    // draft 4 to 2019-09: past a tuple, `additionalItems`
    else if (tuple && hasOwn(s, 'additionalItems')) p.items.push(placeOf(s['additionalItems'], depth + 1))
    for (const positions of [
      tuple ? (items as ReadonlyArray<unknown>) : [],
      reads.prefixItems ? arrayOf(s, 'prefixItems') : [],
    ])
      positions.forEach((item, i) => (p.prefix[i] ??= []).push(placeOf(item, depth + 1)))
    if (aux) return
    const type = memberOf(s, 'type')
    const types: ReadonlyArray<unknown> | undefined =
      typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined
    if (types !== undefined) {
      p.object = p.object && types.includes('object')
      p.array = p.array && types.includes('array')
    }
    const constant = memberOf(s, 'const')
    const oneValue = arrayOf(s, 'enum')
    if (isPrimitive(constant)) p.pinned = { value: constant }
    else if (oneValue.length === 1 && isPrimitive(oneValue[0])) p.pinned = { value: oneValue[0] }
  }

  const root = placeOf(parameters, 0)

  // discriminated unions are found once every branch is built
  for (const p of new Set(unionsToTag)) p.unions.forEach((u, i) => (p.unions[i] = { ...u, tag: tagOf(u.branches) }))

  // `speaks`: a key can be reported at the place (it declares keys by name or pattern, and not every other
  // key through `additionalProperties`), or at a place below it; propagated up to the parents
  const parents = new Map<Node, Array<Node>>()
  for (const p of nodes) {
    eachChild(p, (c) => {
      const had = parents.get(c)
      if (had === undefined) parents.set(c, [p])
      else had.push(p)
    })
  }
  const todo = nodes.filter(reportsHere)
  for (const p of todo) p.speaks = true
  while (todo.length > 0) {
    for (const q of parents.get(todo.pop() as Node) ?? []) {
      if (q.speaks) continue
      q.speaks = true
      todo.push(q)
    }
  }
  for (const p of nodes) p.declared = new Set(p.props.keys())
  return { root, nodes, draft }
}

// the places below a place whose keys can make it speak: union branches, property, pattern and record values,
// items, prefix items
const eachChild = (p: Node, f: (c: Node) => void): void => {
  for (const u of p.unions) for (const b of u.branches) f(b)
  for (const ps of p.props.values()) for (const c of ps) f(c)
  for (const [, q] of p.patterns) f(q)
  for (const r of p.rests) f(r.node)
  for (const c of p.items) f(c)
  for (const ps of p.prefix) for (const c of ps) f(c)
}

/**
 * Whether a key can be reported at the place itself.
 *
 * @since 0.1.0
 * @category utils
 */
export const reportsHere = (p: Node): boolean => (p.props.size > 0 || p.patterns.length > 0) && p.rests.length === 0

/**
 * Whether the place says which keys an object may hold (by name, pattern or `additionalProperties`).
 *
 * @since 0.1.0
 * @category utils
 */
export const declaresKeys = (p: Node): boolean => p.props.size > 0 || p.patterns.length > 0 || p.rests.length > 0

// the values a branch pins `key` to: its own `const` or one-value `enum`, or, through a union of its own
// whose every branch pins it (a discriminated union inside a discriminated union), all of theirs
const pinsOf = (b: Node, key: string, seen: Set<Node>): ReadonlyArray<Primitive> | undefined => {
  for (const [k, q] of b.tagProps) if (k === key && q.pinned !== undefined) return [q.pinned.value]
  if (seen.has(b)) return undefined
  seen.add(b)
  for (const u of b.unions) {
    const values: Array<Primitive> = []
    let every = true
    for (const c of u.branches) {
      const pins = pinsOf(c, key, seen)
      if (pins === undefined) {
        every = false
        break
      }
      values.push(...pins)
    }
    if (every) return values
  }
  return undefined
}

// the keys a branch (or a union of its own) names with a pin: where a discriminator may be
const pinnedKeysOf = (b: Node, out: Set<string>, seen: Set<Node>): void => {
  if (seen.has(b)) return
  seen.add(b)
  for (const [k, q] of b.tagProps) if (q.pinned !== undefined) out.add(k)
  for (const u of b.unions) for (const c of u.branches) pinnedKeysOf(c, out, seen)
}

// the discriminator: the first key, among those the first branch pins, that every branch pins to a primitive
// and that tells branches apart. A key every branch pins to one value ("status": "failed" beside "code" in
// zod's nested unions, "jsonrpc": "2.0" beside "method") picks them all: it is taken only when no key does better
const tagOf = (branches: Branches): Tag | undefined => {
  const keys = new Set<string>()
  pinnedKeysOf(branches[0], keys, new Set())
  let same: Tag | undefined
  for (const key of keys) {
    const picks = new Map<Primitive, Array<Node>>()
    let every = true
    for (const b of branches) {
      const pins = pinsOf(b, key, new Set())
      if (pins === undefined) {
        every = false
        break
      }
      for (const v of new Set(pins)) {
        const had = picks.get(v)
        if (had === undefined) picks.set(v, [b])
        else had.push(b)
      }
    }
    if (!every) continue
    if (picks.size > 1) return { key, picks }
    same ??= { key, picks }
  }
  return same
}
