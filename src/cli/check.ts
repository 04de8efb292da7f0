/**
 * The command's one door into the library: the audit's steps as both commands use
 * them. Every other module under `src/cli` imports library things from here only, so
 * this file is all that changes when the library's API does. Keep it a thin layer of
 * re-exports and adapters.
 *
 * The surface:
 * - `catalogueOf(tolerate)(declarations)`: the tools in force, from declarations in the
 *   OpenAI chat-completions shape (`{ type: 'function', function: { name, parameters } }`);
 *   `reason` and the `tolerate` names are never reported.
 * - `checkCall(catalogue, tool, args, id)(memory)`: one call checked, with the
 *   combinator's own steps (`parseArgs`, `diffKeys`, once per (tool, key)), giving the
 *   warning when a pair is new, and the memory that counts this call.
 * - `pairStats(memory)`: the counts per (tool, key), sorted.
 * - `formatWarning(w)` and `warningFields(w)`: a warning in the combinator's words, and
 *   as the fields of a JSON record.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import { parseArgs } from '../Args.js'
import type { PairCounts, PairStat, UnknownKeyWarning } from '../UnknownKeys.js'
import { REASON_PARAM, emptyPairCounts, formatWarning as formatLibraryWarning, pairStats as libraryPairStats } from '../UnknownKeys.js'
import type { Catalogue as LibraryCatalogue } from '../internal/catalogue.js'
import { byCounts, catalogueOf as libraryCatalogueOf, emptyCatalogue as libraryEmptyCatalogue, warnOnce } from '../internal/catalogue.js'

export type { PairStat, UnknownKeyWarning } from '../UnknownKeys.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The tools whose calls are audited, and what each declares. Opaque outside this
 * module: built by `catalogueOf`, read by `checkCall`.
 *
 * @since 0.1.0
 * @category model
 */
export type Catalogue = LibraryCatalogue

/**
 * What the audit remembers across calls: for each (tool, key) pair said, how many
 * calls carried it and the first one's id. A pair is said once it is remembered.
 *
 * @since 0.1.0
 * @category model
 */
export type Memory = PairCounts

/**
 * The outcome of checking one call: not audited (a tool not in the catalogue, or
 * arguments that do not read as an object), or audited, with a warning when it
 * carried a pair not said before.
 *
 * @since 0.1.0
 * @category model
 */
export type Check = { readonly _tag: 'NotAudited' } | { readonly _tag: 'Audited'; readonly warning: UnknownKeyWarning | undefined }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/** @since 0.1.0 */
export const emptyCatalogue: Catalogue = libraryEmptyCatalogue

/** @since 0.1.0 */
export const emptyMemory: Memory = emptyPairCounts

/**
 * The catalogue of `declarations` (OpenAI shape; unreadable ones left out, the first of
 * two with one name wins, a tool declaring no property is not audited). `reason` and
 * each of `tolerate` are never reported.
 *
 * @since 0.1.0
 * @category constructors
 */
export const catalogueOf = (tolerate: ReadonlyArray<string>): ((declarations: ReadonlyArray<unknown>) => Catalogue) =>
  libraryCatalogueOf(new Set([REASON_PARAM, ...tolerate]))

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const NOT_AUDITED: Check = { _tag: 'NotAudited' }
const CLEAN: Check = { _tag: 'Audited', warning: undefined }

/**
 * Checks one call of `tool` with raw `args` (a JSON string or an object) against the
 * catalogue, as `withUnknownKeyAudit` checks it.
 *
 * @since 0.1.0
 * @category pure steps
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

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Every (tool, key) pair remembered, with how many calls carried it; sorted by tool, then key.
 *
 * @since 0.1.0
 * @category utils
 */
export const pairStats = (memory: Memory): ReadonlyArray<PairStat> => libraryPairStats(memory)

/**
 * A warning in the combinator's own sentence (raw: escape it before a terminal sees it).
 *
 * @since 0.1.0
 * @category utils
 */
export const formatWarning = (w: UnknownKeyWarning): string => formatLibraryWarning(w)

/**
 * A warning as the fields of a JSON record, in the combinator's field names.
 *
 * @since 0.1.0
 * @category utils
 */
export const warningFields = (w: UnknownKeyWarning): Readonly<Record<string, unknown>> => ({
  type: 'warning',
  tool: w.tool,
  id: w.id,
  unknownKeys: w.unknownKeys,
  declaredKeys: w.declaredKeys,
  suggestions: w.suggestions,
})
