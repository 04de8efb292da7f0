/**
 * The command's one door into the library. Every other module under `src/cli` imports
 * library things from here only, so this file is all that changes when the library's
 * API does: keep it a thin layer of re-exports and adapters.
 *
 * - `catalogueOf(tolerate)(declarations)`: the tools in force, from declarations in the
 *   OpenAI chat shape (`{ type: 'function', function: { name, parameters } }`);
 *   `reason` and each `tolerate` name are never reported.
 * - `checkCall(catalogue, tool, args, id)(memory)`: one call checked with the
 *   combinator's own steps (`parseArgs`, `diffKeys`, once per (tool, key)): the
 *   warning when a pair is new, and the memory that counts this call.
 * - `pairStats(memory)`: the counts per (tool, key), sorted.
 * - `formatWarning(w)`, `warningFields(w)`: a warning in the combinator's words, and as
 *   the fields of a JSON record.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import { parseArgs } from '../Args.js'
import type { PairCounts, PairStat, UnknownKeyWarning } from '../UnknownKeys.js'
import { REASON_PARAM, emptyPairCounts, formatWarning as libraryFormatWarning, pairStats as libraryPairStats } from '../UnknownKeys.js'
import type { Catalogue as LibraryCatalogue } from '../internal/catalogue.js'
import { byCounts, catalogueOf as libraryCatalogueOf, emptyCatalogue as libraryEmptyCatalogue, warnOnce } from '../internal/catalogue.js'

export type { PairStat, UnknownKeyWarning } from '../UnknownKeys.js'

/** The tools whose calls are audited. Opaque here: built by `catalogueOf`, read by `checkCall`. @since 0.1.0 */
export type Catalogue = LibraryCatalogue

/** Per (tool, key) pair said: how many calls carried it, and the first one's id. A pair is said once remembered. @since 0.1.0 */
export type Memory = PairCounts

/** One call checked: not audited (tool not in the catalogue, arguments not an object), or audited. @since 0.1.0 */
export type Check = { readonly _tag: 'NotAudited' } | { readonly _tag: 'Audited'; readonly warning: UnknownKeyWarning | undefined }

/** @since 0.1.0 */
export const emptyCatalogue: Catalogue = libraryEmptyCatalogue

/** @since 0.1.0 */
export const emptyMemory: Memory = emptyPairCounts

/**
 * The catalogue of `declarations`: unreadable ones left out, the first of two with one
 * name wins, a tool declaring no property is not audited.
 *
 * @since 0.1.0
 */
export const catalogueOf = (tolerate: ReadonlyArray<string>): ((declarations: ReadonlyArray<unknown>) => Catalogue) =>
  libraryCatalogueOf(new Set([REASON_PARAM, ...tolerate]))

const NOT_AUDITED: Check = { _tag: 'NotAudited' }
const CLEAN: Check = { _tag: 'Audited', warning: undefined }

/**
 * Checks a call of `tool` with raw `args` (a JSON string or an object), as
 * `withUnknownKeyAudit` checks it.
 *
 * @since 0.1.0
 */
export const checkCall =
  (catalogue: Catalogue, tool: string, args: unknown, id: string) =>
  (memory: Memory): readonly [Check, Memory] => {
    const declared = catalogue.get(tool)
    if (declared === undefined) return [NOT_AUDITED, memory]
    const parsed = parseArgs(args)
    if (isLeft(parsed)) return [NOT_AUDITED, memory]
    const unknownKeys = declared.diff(Object.keys(parsed.right))
    if (unknownKeys.length === 0) return [CLEAN, memory]
    const [warning, next] = warnOnce(byCounts, declared, tool, unknownKeys, id)(memory)
    return [{ _tag: 'Audited', warning }, next]
  }

/** @since 0.1.0 */
export const pairStats: (memory: Memory) => ReadonlyArray<PairStat> = libraryPairStats

/** The combinator's own sentence (raw: escape it before a terminal sees it). @since 0.1.0 */
export const formatWarning = (w: UnknownKeyWarning): string => libraryFormatWarning(w)

/** A warning as the fields of a JSON record, in the combinator's field names. @since 0.1.0 */
export const warningFields = (w: UnknownKeyWarning): Readonly<Record<string, unknown>> => ({
  type: 'warning',
  tool: w.tool,
  id: w.id,
  unknownKeys: w.unknownKeys,
  declaredKeys: w.declaredKeys,
  suggestions: w.suggestions,
})
