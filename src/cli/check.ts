/**
 * The audit's pure steps as the command uses them. The only file of cli/ that imports the audit (the
 * rest imports `mcp/index.ts` and the kernel's `describe` and `guards`); it imports public names only,
 * so the command checks a call exactly as `withUnknownKeyAudit` does.
 *
 * - `catalogueTolerating(tolerate)(declarations)`: the tools to audit against, from declarations in the
 *   OpenAI chat shape; `reason` and each `tolerate` name are never reported.
 * - `checkCall(catalogue, tool, args, id)(seen)`: checks one call (`parseArgs`, `diffKeys`, once per
 *   (tool, key)); returns the warning when a pair is new, and the seen-set updated with this call.
 * - `pairStats(seen)`: the counts per (tool, key), sorted.
 * - `formatWarning(w)`, `warningFields(w)`: a warning as the combinator formats it, and as the fields
 *   of a JSON record.
 *
 * @since 0.1.0
 */
import type { Catalogue } from '../extend.js'
import { catalogueOf as libraryCatalogueOf, toleratedOf } from '../extend.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'

export type { Catalogue, Check } from '../extend.js'
export { checkCall, emptyCatalogue, pairStats } from '../extend.js'
export type { UnknownKeyWarning } from '../steps/audit/Check.js'
export { formatWarning } from '../steps/audit/Check.js'
export type { PairStat, SeenSet } from '../steps/audit/SeenSet.js'
export { emptySeenSet } from '../steps/audit/SeenSet.js'

/**
 * Builds the catalogue of `declarations`: unreadable ones are skipped, the first of two with the same
 * name wins, and a tool declaring only tolerated names is not audited.
 *
 * @since 0.1.0
 */
export const catalogueTolerating = (
  tolerate: ReadonlyArray<string>,
): ((declarations: ReadonlyArray<unknown>) => Catalogue) => libraryCatalogueOf(toleratedOf(tolerate))

/** A warning as the fields of a JSON record, in the combinator's field names. @since 0.1.0 */
export const warningFields = (w: UnknownKeyWarning): Readonly<Record<string, unknown>> => ({
  type: 'warning',
  tool: w.tool,
  id: w.id,
  unknownKeys: w.unknownKeys,
  keys: w.keys,
  declaredKeys: w.declaredKeys,
  suggestions: w.suggestions,
  ...(w.via === undefined ? {} : { via: w.via }),
})
