/**
 * The audit's pure steps as both commands use them: a catalogue built from the
 * declarations in force, and one call checked against it. The same steps, in the same
 * order, as `withUnknownKeyAudit`: `extractDeclarations`, `parseArgs`, `diffKeys`, and
 * `observe` (its `firstSeen` and `countPairs` in one step), with the same suggestions.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import { parseArgs } from '../Args.js'
import type { Suggestion } from '../Suggest.js'
import { suggestKey, suggestionsFor } from '../Suggest.js'
import type { PairCounts, UnknownKeyWarning } from '../UnknownKeys.js'
import { REASON_PARAM, diffKeys, extractDeclarations, observe } from '../UnknownKeys.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What one tool declares.
 *
 * @since 0.1.0
 * @category model
 */
export interface Declared {
  readonly keys: ReadonlySet<string>
  readonly sorted: ReadonlyArray<string>
  readonly suggest: (keys: ReadonlyArray<string>) => ReadonlyArray<Suggestion>
}

/**
 * Tool name → what it declares, for the tools whose calls are audited: readable, with
 * at least one declared property (as in the combinator: a tool that declares nothing
 * says nothing about its keys).
 *
 * @since 0.1.0
 * @category model
 */
export type Catalogue = ReadonlyMap<string, Declared>

/**
 * The outcome of checking one call.
 *
 * @since 0.1.0
 * @category model
 */
export type Check =
  /** The tool is not in the catalogue, or its arguments do not read as an object. */
  | { readonly _tag: 'NotAudited' }
  /** `unknownKeys`: every undeclared key the call carried; `warning`: only when some are new. */
  | { readonly _tag: 'Audited'; readonly unknownKeys: ReadonlyArray<string>; readonly warning: UnknownKeyWarning | undefined }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * An empty catalogue.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyCatalogue: Catalogue = new Map()

/**
 * The catalogue of declarations in the OpenAI shape (`{ function: { name, parameters } }`);
 * unreadable ones are left out, the first of two with the same name wins.
 *
 * @since 0.1.0
 * @category constructors
 */
export const catalogueOf = (declarations: ReadonlyArray<unknown>): Catalogue => {
  const out = new Map<string, Declared>()
  for (const [name, keys] of extractDeclarations(declarations)) {
    if (keys.size > 0) out.set(name, { keys, sorted: Object.freeze([...keys].sort()), suggest: lazySuggestions(keys) })
  }
  return out
}

// prepared on the first warning for a tool: most tools never warn
const lazySuggestions = (keys: ReadonlySet<string>) => {
  let prepared: ((ks: ReadonlyArray<string>) => ReadonlyArray<Suggestion>) | undefined
  return (ks: ReadonlyArray<string>): ReadonlyArray<Suggestion> => (prepared ??= suggestionsFor(suggestKey(keys)))(ks)
}

/**
 * The names never reported, declared or not: `reason`, and those given.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toleratedOf = (names: ReadonlyArray<string>): ReadonlySet<string> => new Set([REASON_PARAM, ...names])

/**
 * Adds the tools of `more` that `base` does not have yet (pages of one listing).
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeCatalogues = (base: Catalogue, more: Catalogue): Catalogue => {
  if (more.size === 0) return base
  const out = new Map(base)
  for (const [name, declared] of more) if (!out.has(name)) out.set(name, declared)
  return out
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const NOT_AUDITED: Check = { _tag: 'NotAudited' }

/**
 * Checks one call of `tool` with raw `args` (a JSON string or an object) against the
 * catalogue: the undeclared keys it carried, and a warning for those not reported
 * before, with the counts that now include this call (a pair is reported once it is
 * counted, as in the combinator).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkCall =
  (catalogue: Catalogue, tolerated: ReadonlySet<string>, tool: string, args: unknown, id: string) =>
  (counts: PairCounts): readonly [Check, PairCounts] => {
    const declared = catalogue.get(tool)
    if (declared === undefined) return [NOT_AUDITED, counts]
    const parsed = parseArgs(args)
    if (isLeft(parsed)) return [NOT_AUDITED, counts]
    const unknownKeys = diffKeys(declared.keys, tolerated)(Object.keys(parsed.right))
    if (unknownKeys.length === 0) return [{ _tag: 'Audited', unknownKeys, warning: undefined }, counts]
    const [fresh, next] = observe(tool, unknownKeys, id)(counts)
    const warning: UnknownKeyWarning | undefined =
      fresh.length === 0 ? undefined : { tool, id, unknownKeys: fresh, declaredKeys: declared.sorted, suggestions: declared.suggest(fresh) }
    return [{ _tag: 'Audited', unknownKeys, warning }, next]
  }

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * An own property of a parsed JSON value, or `undefined`: keys are data, so a missing
 * key must never fall through to `Object.prototype`.
 *
 * @since 0.1.0
 * @category utils
 */
export const own = (u: unknown, key: string): unknown =>
  typeof u === 'object' && u !== null && !Array.isArray(u) && Object.hasOwn(u, key) ? (u as Record<string, unknown>)[key] : undefined

/**
 * Whether a parsed JSON value is a non-array object.
 *
 * @since 0.1.0
 * @category utils
 */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === 'object' && u !== null && !Array.isArray(u)
