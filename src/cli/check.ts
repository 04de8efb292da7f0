/**
 * The audit's pure steps as both commands use them: a catalogue built from the
 * declarations in force, and one call checked against it, with the very steps
 * `withUnknownKeyAudit` takes (`extractDeclarations`, `parseArgs`, `diffKeys`, and
 * `observe`: its `firstSeen` and `countPairs` in one step), and the same suggestions.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import { parseArgs } from '../Args.js'
import type { Catalogue, Declared, PairCounts, SeenSet, UnknownKeyWarning } from '../index.js'
import { REASON_PARAM, firstSeen, warnOnce as warnOnceOf } from '../index.js'

/** How the said pairs are remembered (one way now: the seen-set counts). */
export type Remember<S> = (tool: string, unknownKeys: ReadonlyArray<string>, id: string) => (memory: S) => readonly [ReadonlyArray<string>, S]
export const byCounts: Remember<SeenSet> = (tool, keys, id) => firstSeen(tool, keys, id)
export const bySeen: Remember<SeenSet> = byCounts
const warnOnce =
  <S>(_remember: Remember<S>, declared: Declared, tool: string, unknownKeys: ReadonlyArray<string>, id: string) =>
  (memory: S): readonly [UnknownKeyWarning | undefined, S] =>
    warnOnceOf(declared, tool, unknownKeys, id)(memory as unknown as SeenSet) as unknown as readonly [UnknownKeyWarning | undefined, S]

export type { Catalogue } from '../index.js'
export { catalogueOf, emptyCatalogue } from '../index.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

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


const checkDeclared = <S>(remember: Remember<S>, declared: Declared, tool: string, keys: ReadonlyArray<string>, id: string, memory: S): readonly [Check, S] => {
  const unknownKeys = declared.diff(Object.fromEntries(keys.map((k) => [k, true])))
  if (unknownKeys.length === 0) return [{ _tag: 'Audited', unknownKeys, warning: undefined }, memory]
  const [warning, next] = warnOnce(remember, declared, tool, unknownKeys, id)(memory)
  return [{ _tag: 'Audited', unknownKeys, warning }, next]
}

/**
 * Checks one call of `tool` that carried argument `keys` (in the order they came)
 * against the catalogue: the undeclared keys, and a warning for those not said
 * before, with the memory that now includes this call.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkKeys =
  <S>(remember: Remember<S>, catalogue: Catalogue, tool: string, keys: ReadonlyArray<string>, id: string) =>
  (memory: S): readonly [Check, S] => {
    const declared = catalogue.get(tool)
    return declared === undefined ? [NOT_AUDITED, memory] : checkDeclared(remember, declared, tool, keys, id, memory)
  }

/**
 * `checkKeys` for a call with raw `args` (a JSON string or an object): a call whose
 * arguments do not read as an object is not audited. Remembers by counts (see
 * `checkCallWith` for another memory).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkCall = (catalogue: Catalogue, tool: string, args: unknown, id: string): ((counts: PairCounts) => readonly [Check, PairCounts]) =>
  checkCallWith(byCounts, catalogue, tool, args, id)

/**
 * `checkCall` with the memory `remember` keeps.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkCallWith =
  <S>(remember: Remember<S>, catalogue: Catalogue, tool: string, args: unknown, id: string) =>
  (memory: S): readonly [Check, S] => {
    const declared = catalogue.get(tool)
    if (declared === undefined) return [NOT_AUDITED, memory]
    const parsed = parseArgs(args)
    return isLeft(parsed) ? [NOT_AUDITED, memory] : checkDeclared(remember, declared, tool, Object.keys(parsed.right), id, memory)
  }

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * A warning as one JSON Lines record, in the combinator's field names, with whatever
 * the command adds (`file` and `line` for a recorded session).
 *
 * @since 0.1.0
 * @category utils
 */
export const warningRecord = (w: UnknownKeyWarning, more: Readonly<Record<string, unknown>> = {}): string =>
  JSON.stringify({ type: 'warning', tool: w.tool, id: w.id, unknownKeys: w.unknownKeys, declaredKeys: w.declaredKeys, suggestions: w.suggestions, ...more })
