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
 *   of a JSON record; both name at most the first 20 entries of each list, and say how many more.
 * - `warningLists(w)`: a warning's lists bounded that way, for a record the command did not build;
 *   `firstOf` and `MAX_KEYS_SHOWN`, the same bound for the command's own lists (its summary).
 *
 * @since 0.1.0
 */
import type { Catalogue, ReportedKey, Segment } from '../extend.js'
import { catalogueOf as libraryCatalogueOf, toleratedOf } from '../extend.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { MAX_KEYS_SHOWN } from '../steps/audit/Check.js'
import { firstOf } from '../kernel/describe.js'
import { MAX_KEY_CHARS, rememberedKey } from '../steps/audit/SeenSet.js'
import { cut } from './text.js'

export type { Catalogue, Check } from '../extend.js'
export { checkCall, emptyCatalogue, pairStats } from '../extend.js'
export type { UnknownKeyWarning } from '../steps/audit/Check.js'
export { formatWarning, MAX_KEYS_SHOWN } from '../steps/audit/Check.js'
export { firstOf } from '../kernel/describe.js'
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

type Suggestion = UnknownKeyWarning['suggestions'][number]

/**
 * A warning's lists as a record holds them: the first `MAX_KEYS_SHOWN` of each, as its line names them, and for
 * each list that was cut its whole length. @since 0.1.0
 */
export interface WarningLists {
  readonly unknownKeys: ReadonlyArray<string>
  /** The same keys as `unknownKeys`, in the same order. */
  readonly keys: ReadonlyArray<ReportedKey>
  readonly declaredKeys: ReadonlyArray<string>
  readonly suggestions: ReadonlyArray<Suggestion>
  /** How many undeclared keys the warning holds (in `unknownKeys` and `keys`); only when more than were kept. */
  readonly unknownKeyCount?: number
  /** How many keys the tool declares; only when more than were kept. */
  readonly declaredKeyCount?: number
  /** How many suggestions the warning holds; only when more than were kept. */
  readonly suggestionCount?: number
}

/**
 * Returns a warning's lists bounded (see {@link WarningLists}), so a call with 20,000 undeclared keys, or a tool
 * declaring as many, makes a short record that still says how many were left out. A warning under the limit
 * keeps its lists as they are (the same arrays), and gains no field. @since 0.1.0
 */
export const warningLists = (
  w: Pick<UnknownKeyWarning, 'unknownKeys' | 'keys' | 'declaredKeys' | 'suggestions'>,
): WarningLists => {
  const unknown = firstOf(w.unknownKeys, MAX_KEYS_SHOWN)
  const declared = firstOf(w.declaredKeys, MAX_KEYS_SHOWN)
  const suggestions = firstOf(w.suggestions, MAX_KEYS_SHOWN)
  return {
    unknownKeys: unknown.shown,
    keys: firstOf(w.keys, MAX_KEYS_SHOWN).shown,
    declaredKeys: declared.shown,
    suggestions: suggestions.shown,
    ...(unknown.more === 0 ? {} : { unknownKeyCount: w.unknownKeys.length }),
    ...(declared.more === 0 ? {} : { declaredKeyCount: w.declaredKeys.length }),
    ...(suggestions.more === 0 ? {} : { suggestionCount: w.suggestions.length }),
  }
}

/**
 * How many characters of each string a record keeps (a `--json` record, a line of `toolstack serve`'s log): a key a
 * model sends may be as long as the line that carries it (64 MiB by default), and a record holds it three times
 * (unknownKeys, keys' path and key).
 *
 * @since 0.1.0
 */
export const MAX_RECORD_CHARS = 1000

const text = (s: string): string => cut(s, MAX_RECORD_CHARS)
const segment = (s: Segment): Segment => (typeof s === 'string' ? text(s) : s)
// a name or key longer than MAX_KEY_CHARS is remembered (in the summary, a gateway's counts) by its start and a
// digest: a record carries that form beside it, so a machine can join the two whatever the length
const isRememberedOtherwise = (s: string): boolean => s.length > MAX_KEY_CHARS

const reportedKey = (k: ReportedKey): ReportedKey & { readonly remembered?: string } => ({
  path: text(k.path),
  key: text(k.key),
  place: k.place.map(segment),
  ...(isRememberedOtherwise(k.key) ? { remembered: rememberedKey(k.key) } : {}),
})
const suggestion = (s: Suggestion): Suggestion => ({ key: text(s.key), didYouMean: text(s.didYouMean) })

/**
 * A warning as the fields of a JSON record, in the combinator's field names: its lists bounded by
 * {@link warningLists} (with their counts when cut), and each string cut at 1,000 characters. @since 0.1.0
 */
export const warningFields = (w: UnknownKeyWarning): Readonly<Record<string, unknown>> => {
  const { unknownKeys, keys, declaredKeys, suggestions, ...counts } = warningLists(w)
  return {
    type: 'warning',
    tool: text(w.tool),
    ...(isRememberedOtherwise(w.tool) ? { rememberedTool: rememberedKey(w.tool) } : {}),
    id: text(w.id),
    unknownKeys: unknownKeys.map(text),
    keys: keys.map(reportedKey),
    declaredKeys: declaredKeys.map(text),
    suggestions: suggestions.map(suggestion),
    ...counts,
    ...(w.via === undefined ? {} : { via: text(w.via) }),
  }
}
