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
import type { PairCounts, UnknownKeyWarning } from '../UnknownKeys.js'
import { REASON_PARAM } from '../UnknownKeys.js'
import type { Catalogue } from '../internal/catalogue.js'
import { warnOnce } from '../internal/catalogue.js'

export type { Catalogue } from '../internal/catalogue.js'
export { catalogueOf, emptyCatalogue } from '../internal/catalogue.js'

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
  (catalogue: Catalogue, tool: string, args: unknown, id: string) =>
  (counts: PairCounts): readonly [Check, PairCounts] => {
    const declared = catalogue.get(tool)
    if (declared === undefined) return [NOT_AUDITED, counts]
    const parsed = parseArgs(args)
    if (isLeft(parsed)) return [NOT_AUDITED, counts]
    const unknownKeys = declared.diff(Object.keys(parsed.right))
    if (unknownKeys.length === 0) return [{ _tag: 'Audited', unknownKeys, warning: undefined }, counts]
    const [warning, next] = warnOnce(declared, tool, unknownKeys, id)(counts)
    return [{ _tag: 'Audited', unknownKeys, warning }, next]
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
