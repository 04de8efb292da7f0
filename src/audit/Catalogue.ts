/**
 * What the audit knows about the tools in force: for each audited tool, the keys it
 * declares, read once per listing. Shared by `withUnknownKeyAudit`, the framework
 * adapters and the `toolstack` command, so a tool is audited, or not, for the same
 * reason wherever it is listed.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import type { ToolDeclaration } from '../model.js'
import { REASON_PARAM, ReadableDeclaration } from '../model.js'
import type { Suggestion } from '../Suggest.js'
import { suggestKey, suggestionsFor } from '../Suggest.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What one audited tool declares, with its per-call steps prepared once per listing.
 *
 * @since 0.1.0
 * @category model
 */
export interface Declared {
  /** The declared property names. */
  readonly keys: ReadonlySet<string>
  /** The same, sorted: what a warning shows. */
  readonly sorted: ReadonlyArray<string>
  /** {@link diffKeys} for this tool, of a call's arguments: their undeclared keys, sorted. */
  readonly diff: (args: Readonly<Record<string, unknown>>) => ReadonlyArray<string>
  /** The "did you mean" of each reported key. */
  readonly suggest: (keys: ReadonlyArray<string>) => ReadonlyArray<Suggestion>
}

/**
 * Tool name → what it declares, for the tools whose calls are audited: readable, and
 * declaring at least one property that is not tolerated (a tool that declares nothing,
 * or only `reason`, says nothing about its keys).
 *
 * @since 0.1.0
 * @category model
 */
export type Catalogue = ReadonlyMap<string, Declared>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Nothing listed: no call is audited.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyCatalogue: Catalogue = new Map()

/**
 * The names never reported, declared or not: `reason`, and those given.
 *
 * @example
 * import { toleratedOf } from 'toolstack'
 * assert.deepStrictEqual([...toleratedOf(['_meta'])], ['reason', '_meta'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const toleratedOf = (names: ReadonlyArray<string> = []): ReadonlySet<string> => new Set([REASON_PARAM, ...names])

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const readable = (u: unknown): ReadableDeclaration | undefined => {
  try {
    const d = ReadableDeclaration.decode(u)
    return isLeft(d) ? undefined : d.right
  } catch {
    // a getter or a Proxy that throws: unreadable
  }
  return undefined
}

/**
 * Tool name → the set of its `parameters.properties` keys, for every declaration it
 * can read. Unreadable ones are left out; when two declarations share a name, the
 * first one wins (the one a model is most likely to have been shown).
 *
 * @example
 * import { extractDeclarations } from 'toolstack'
 * const m = extractDeclarations([{ type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {}, offset: {} } } } }, null])
 * assert.deepStrictEqual([...m.get('fs_read') ?? []], ['path', 'offset'])
 * assert.strictEqual(m.size, 1)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const extractDeclarations = (declarations: ReadonlyArray<unknown>): ReadonlyMap<string, ReadonlySet<string>> => {
  const out = new Map<string, ReadonlySet<string>>()
  if (!Array.isArray(declarations)) return out
  for (const d of declarations) {
    const r = readable(d)
    if (r === undefined) continue
    const { name, parameters } = r.function
    if (out.has(name)) continue
    try {
      const properties = parameters.properties
      out.set(name, new Set(properties === undefined ? [] : Object.keys(properties)))
    } catch {
      // a Proxy that refuses to list its keys: unreadable, left out
    }
  }
  return out
}

const NOTHING: ReadonlyArray<string> = Object.freeze([])

/**
 * The keys not declared, sorted, never including a tolerated name (by default
 * `reason` alone).
 *
 * @example
 * import { diffKeys } from 'toolstack'
 * assert.deepStrictEqual(diffKeys(new Set(['path', 'offset']))(['path', 'the rest', 'ffset', 'reason']), ['ffset', 'the rest'])
 * assert.deepStrictEqual(diffKeys(new Set(['path']), new Set(['_meta']))(['path', '_meta', 'x']), ['x'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const diffKeys =
  (declared: ReadonlySet<string>, tolerated: ReadonlySet<string> = toleratedOf()) =>
  (keys: ReadonlyArray<string>): ReadonlyArray<string> => {
    let out: Array<string> | undefined
    for (const k of keys) {
      if (declared.has(k) || k === REASON_PARAM || tolerated.has(k)) continue
      ;(out ??= []).push(k)
    }
    return out === undefined ? NOTHING : out.sort()
  }

/**
 * A tool's check of a call's arguments: their undeclared keys, sorted, remembering
 * the last key list it found clean. A model sends a tool's keys in the same order
 * call after call, and `JSON.parse` hands back the same interned strings, so most
 * calls are answered by walking the object's keys against that list (a pointer
 * compare each, no array made) instead of a set lookup per key. It memoises a pure
 * function, so it changes no answer: a walk that matches the list yields only keys
 * found clean before (inherited ones included, so the object's own keys are among
 * them), and anything else goes to `diff`.
 *
 * It is here for two targets: the audit's added cost ≤ 1.15 of one `JSON.parse` +
 * keys on 300-byte arguments, and ≤ 1.0× a compiled ajv on a mix of tools (without
 * it, 1.25–1.3 and 1.2 here).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const lastCleanShape = (diff: (keys: ReadonlyArray<string>) => ReadonlyArray<string>): ((args: Readonly<Record<string, unknown>>) => ReadonlyArray<string>) => {
  let clean: ReadonlyArray<string> = NOTHING
  const matchesClean = (args: Readonly<Record<string, unknown>>): boolean => {
    let i = 0
    for (const k in args) if (k !== clean[i++]) return false
    return i === clean.length && i > 0
  }
  return (args) => {
    if (matchesClean(args)) return NOTHING
    const keys = Object.keys(args)
    const unknown = diff(keys)
    if (unknown.length === 0) clean = keys
    return unknown
  }
}

// prepared on the first warning for a tool, not at listing time: most tools never warn
const lazySuggestions = (keys: ReadonlySet<string>): ((ks: ReadonlyArray<string>) => ReadonlyArray<Suggestion>) => {
  let prepared: ((ks: ReadonlyArray<string>) => ReadonlyArray<Suggestion>) | undefined
  return (ks) => (prepared ??= suggestionsFor(suggestKey(keys)))(ks)
}

/**
 * The catalogue of a listing in the OpenAI shape: {@link extractDeclarations}, keeping
 * the tools that declare a property other than a tolerated name, each with its
 * {@link diffKeys} prepared (behind {@link lastCleanShape}). Built once per listing,
 * so a call costs a lookup.
 *
 * @example
 * import { catalogueOf, toleratedOf } from 'toolstack'
 * const c = catalogueOf(toleratedOf())([
 *   { type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {} } } } },
 *   { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: { reason: {} } } } },
 * ])
 * assert.deepStrictEqual([...c.keys()], ['fs_read'])
 * assert.deepStrictEqual(c.get('fs_read')?.diff({ path: '/tmp', ffset: 3 }), ['ffset'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const catalogueOf =
  (tolerated: ReadonlySet<string>) =>
  (declarations: ReadonlyArray<ToolDeclaration> | ReadonlyArray<unknown>): Catalogue => {
    const out = new Map<string, Declared>()
    for (const [name, keys] of extractDeclarations(declarations)) {
      if (![...keys].some((k) => k !== REASON_PARAM && !tolerated.has(k))) continue
      out.set(name, { keys, sorted: Object.freeze([...keys].sort()), diff: lastCleanShape(diffKeys(keys, tolerated)), suggest: lazySuggestions(keys) })
    }
    return out
  }
