/**
 * The audit's one decision: a call's keys against its tool's declaration, and a warning for the undeclared
 * keys not reported before. Pure steps over a {@link Catalogue} and a {@link SeenSet}; `withUnknownKeyAudit`,
 * the framework adapters and the `toolstack` command all use these, so whether to warn is decided in one
 * place.
 *
 * @since 0.1.0
 */
import { getOrElse, getOrElseW, isLeft } from 'fp-ts/lib/Either.js'
import { argsObject, parseArgs } from '../Args.js'
import type { Either } from 'fp-ts/lib/Either.js'
import type { Args, CallReads } from '../../kernel/model.js'
import type { Suggestion } from '../../kernel/Suggest.js'
import type { Catalogue, Declared } from './Catalogue.js'
import type { Segment, UnknownKey } from './Schema.js'
import { argumentsIn, batchSize, callIdOf, functionOf, nameIn } from '../../kernel/calls.js'
import type { SeenSet } from './SeenSet.js'
import { countCall } from './SeenSet.js'
import { cut, escapeControls, firstOf } from '../../kernel/describe.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One reported key, for a machine: the key exactly as the model sent it, and the place of the object holding
 * it as segments (object keys, `{ each: 'element' }` for every element of an array, `{ each: 'entry' }` for
 * every entry of a record), beside the rendered path.
 *
 * @since 0.1.0
 * @category model
 */
export interface ReportedKey {
  /** The rendered path, as in `unknownKeys`. */
  readonly path: string
  /** The key itself, character for character. */
  readonly key: string
  /** Where the object holding it sits (`[]` at the top). */
  readonly place: ReadonlyArray<Segment>
}

/**
 * What `onWarn` is told, at most once per call.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyWarning {
  /** The tool name, as listed. */
  readonly tool: string
  /**
   * Undeclared keys reported now for the first time, each by its path (`haed`, `opts.encodng`,
   * `edits[].oldtext`), sorted. A top-level key that needs no quoting is the key itself.
   */
  readonly unknownKeys: ReadonlyArray<string>
  /** The same keys, in the same order, each as sent and with its place as segments: nothing to parse. */
  readonly keys: ReadonlyArray<ReportedKey>
  /** Every key the tool declares at the top level, sorted. */
  readonly declaredKeys: ReadonlyArray<string>
  /** The call's `id` as a string; `''` when it has none. */
  readonly id: string
  /**
   * For each reported key that plainly points at one key declared at the same place, that key's path; in the
   * order of `unknownKeys`.
   */
  readonly suggestions: ReadonlyArray<Suggestion>
  /**
   * Which layer heard the call (`'ai-sdk-middleware'`, `'stack'`, …), set when two layers share one memory
   * (`sharedUnknownKeyAudit`) or the layer always names itself; absent otherwise.
   */
  readonly via?: string
}

/**
 * The outcome of checking one call.
 *
 * @since 0.1.0
 * @category model
 */
export type Check =
  /** The tool is not in the catalogue, or its arguments do not read as an object. */
  | { readonly _tag: 'NotAudited' }
  /** `unknownKeys`: the path of every undeclared key the call carried; `warning`: only when some are new. */
  | {
      readonly _tag: 'Audited'
      readonly unknownKeys: ReadonlyArray<string>
      readonly warning: UnknownKeyWarning | undefined
    }

const NOT_AUDITED: Check = { _tag: 'NotAudited' }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Counts a call that carried `unknown` (from its tool's `Declared.diff`) and returns the warning for the
 * paths not reported before: a pair is reported once, when first seen.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const warnOnce =
  (declared: Declared, unknown: ReadonlyArray<UnknownKey>, id: string) =>
  (seen: SeenSet): readonly [UnknownKeyWarning | undefined, SeenSet] => {
    const [fresh, next] = countCall(seen, declared.name, pathsOf(unknown), id)
    return [fresh.length === 0 ? undefined : warningOf(declared, unknown, fresh, id), next]
  }

const pathsOf = (unknown: ReadonlyArray<UnknownKey>): ReadonlyArray<string> =>
  unknown.length === 1 ? [(unknown[0] as UnknownKey).path] : unknown.map((k) => k.path)

// the warning for the `fresh` paths among `unknown`
const warningOf = (
  declared: Declared,
  unknown: ReadonlyArray<UnknownKey>,
  fresh: ReadonlyArray<string>,
  id: string,
): UnknownKeyWarning => {
  const freshKeys = new Set(fresh)
  const reported = unknown.filter((k) => freshKeys.has(k.path))
  const suggestions = declared.suggest(reported)
  const keys = reported.map(({ path, key, place }) => ({ path, key, place }))
  return { tool: declared.name, unknownKeys: fresh, keys, declaredKeys: declared.sorted, id, suggestions }
}

/**
 * Checks one call of `tool` whose arguments parsed as the object `args` against the catalogue: returns its
 * undeclared keys and a warning for those not reported before, with the seen-set that now counts this call.
 * The combinator, the adapters and the command all decide here.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkKeys =
  (catalogue: Catalogue, tool: string, args: Readonly<Record<string, unknown>>, id: string) =>
  (seen: SeenSet): readonly [Check, SeenSet] => {
    const declared = catalogue.get(tool)
    if (declared === undefined) return [NOT_AUDITED, seen]
    const unknown = declared.diff(args)
    if (unknown.length === 0) return [CLEAN, seen]
    const [warning, next] = warnOnce(declared, unknown, id)(seen)
    return [{ _tag: 'Audited', unknownKeys: unknown.map((k) => k.path), warning }, next]
  }

const rightOf: (args: Either<unknown, Args>) => Args | undefined = getOrElseW(() => undefined)

const NO_PATHS: ReadonlyArray<string> = Object.freeze([])
const CLEAN: Check = Object.freeze({ _tag: 'Audited', unknownKeys: NO_PATHS, warning: undefined })

/**
 * {@link checkKeys} for each call of a batch whose tool is in the catalogue and whose arguments parse as an
 * object (read once each: through the batch's `argsAt`, shared with the layers below, or from the call itself
 * when the calls come alone): returns the warnings for pairs not reported before, in the batch's order. A call
 * that cannot be read is skipped: the audit adds no failure of its own.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkBatch =
  (catalogue: Catalogue, batch: CallReads) =>
  (seen: SeenSet): readonly [ReadonlyArray<UnknownKeyWarning>, SeenSet] => {
    // Stryker disable next-line ArrowFunction: a batch whose size cannot be read runs no iteration either way
    const size = getOrElse(() => 0)(batchSize(batch.calls))
    const warnings: Array<UnknownKeyWarning> = []
    for (let i = 0; i < size; i++) {
      // a call that cannot be read, or whose arguments cannot list their keys, is not audited
      try {
        const call: unknown = batch.calls[i]
        const fn = functionOf(call)
        const name = nameIn(fn)
        // a name that is no string names no tool
        const declared = (catalogue as ReadonlyMap<string | undefined, Declared>).get(name)
        if (declared === undefined) continue
        // the calls alone are read from the member their name came from, and no Either is made for each; a
        // clean call's text is read unparsed where its tool allows (`cleanText`: the flat figures of
        // docs/performance.md), as nothing below shares the audit's parse
        let args: Args | undefined
        if (batch.argsAt === undefined) {
          const raw = argumentsIn(fn)
          if (typeof raw === 'string' && declared.cleanText?.(raw) === true) continue
          args = argsObject(raw)
        } else args = rightOf(batch.argsAt(i))
        // a diff of no object finds nothing: the test is for the types
        // Stryker disable next-line ConditionalExpression: equivalent (above)
        if (args === undefined) continue
        // checkKeys inlined without a Check per call: a clean call costs only its diff (the floor and ajv
        // targets in docs/performance.md); its id is read only for an undeclared key
        const unknown = declared.diff(args)
        if (unknown.length === 0) continue
        // warnOnce without its closures: a call that repeats a reported key costs its count
        const id = callIdOf(call)
        const [fresh, next] = countCall(seen, declared.name, pathsOf(unknown), id)
        seen = next
        if (fresh.length > 0) warnings.push(warningOf(declared, unknown, fresh, id))
      } catch {
        // skipped, like a call that cannot be read
      }
    }
    return [warnings, seen]
  }

/**
 * {@link checkKeys} for a call with raw `args` (a JSON string or an object), read with `parseArgs`: a call
 * whose arguments do not read as an object is not audited.
 *
 * @example
 * import { emptySeenSet } from 'toolstack'
 * import { catalogueOf, checkCall, toleratedOf } from 'toolstack/extend'
 * const catalogue = catalogueOf(toleratedOf())([
 *   { type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { offset: {} } } } },
 * ])
 * const [check] = checkCall(catalogue, 'fs_read', '{"ffset":3}', 'call_1')(emptySeenSet)
 * assert.deepStrictEqual(check._tag === 'Audited' && check.warning?.suggestions, [
 *   { key: 'ffset', didYouMean: 'offset' },
 * ])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const checkCall =
  (catalogue: Catalogue, tool: string, args: unknown, id: string) =>
  (seen: SeenSet): readonly [Check, SeenSet] => {
    if (!catalogue.has(tool)) return [NOT_AUDITED, seen]
    const parsed = parseArgs(args)
    return isLeft(parsed) ? [NOT_AUDITED, seen] : checkKeys(catalogue, tool, parsed.right, id)(seen)
  }

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

const MAX_SHOWN = 200

/**
 * How many entries of each of a warning's lists (its undeclared keys, its tool's declared keys, its
 * suggestions) its line names, and a log record holds, before saying how many more there are. A model can put
 * 20,000 keys in one call, and new ones in the next, and a server can declare as many; the first 20 are enough to
 * see what a call got wrong, and the count says how many more there were.
 *
 * @since 0.1.0
 * @category utils
 */
export const MAX_KEYS_SHOWN = 20

// names, ids and keys come from models and servers: escaped, so a key holding `ESC]0;…BEL` cannot retitle a
// terminal, and truncated, so a 10 KB key stays a short line
const shown = (s: string): string => escapeControls(cut(s, MAX_SHOWN))
const quoted = (s: string): string => escapeControls(JSON.stringify(cut(s, MAX_SHOWN)))

// at most MAX_KEYS_SHOWN of `items`, each as `show` writes it, then how many more, so 20,000 keys stay one short
// line; a list under the limit reads as it always has
const listed = <A>(items: ReadonlyArray<A>, show: (a: A) => string): string => {
  const { shown: first, more } = firstOf(items, MAX_KEYS_SHOWN)
  return first.map(show).join(', ') + (more === 0 ? '' : ` and ${more} more`)
}

/**
 * The default one-line rendering of a warning. Every name, id and key is escaped (control characters as
 * `\uXXXX`) and cut at 200 characters, and each list (undeclared keys, declared keys, suggestions) names its
 * first {@link MAX_KEYS_SHOWN} entries, then `and N more`, so a line is safe to print on a terminal and short
 * whatever the call.
 *
 * @example
 * import { formatWarning } from 'toolstack'
 * assert.strictEqual(
 *   formatWarning({ tool: 'fs_read', id: 'call_1', unknownKeys: ['ffset'], declaredKeys: ['offset', 'path'] }),
 *   'toolstack: fs_read call call_1 carried undeclared argument key "ffset" (declared: "offset", "path")',
 * )
 * assert.strictEqual(
 *   formatWarning({ tool: 'fs_read', id: 'c2', unknownKeys: ['x'], declaredKeys: ['path'], via: 'stack' }),
 *   'toolstack: fs_read call c2 carried undeclared argument key "x" (declared: "path") [via stack]',
 * )
 * const many = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, '0')}`)
 * assert.match(
 *   formatWarning({ tool: 't', id: 'c3', unknownKeys: many, declaredKeys: ['path'] }),
 *   /"k18", "k19" and 5 more \(declared: "path"\)$/,
 * )
 *
 * @since 0.1.0
 * @category utils
 */
export const formatWarning = (
  w: Omit<UnknownKeyWarning, 'suggestions' | 'keys'> & { readonly suggestions?: ReadonlyArray<Suggestion> },
): string => {
  const quote = (ks: ReadonlyArray<string>): string => (ks.length === 0 ? 'none' : listed(ks, quoted))
  const call = w.id === '' ? 'a call without an id' : `call ${shown(w.id)}`
  const keys = `key${w.unknownKeys.length === 1 ? '' : 's'} ${quote(w.unknownKeys)}`
  const line = `toolstack: ${shown(w.tool)} ${call} carried undeclared argument ${keys} (declared: ${quote(w.declaredKeys)})`
  const suggestions = w.suggestions ?? []
  // the layer's name is the library's own, but a host may set it: shown like any other name
  const via = typeof w.via === 'string' && w.via !== '' ? ` [via ${shown(w.via)}]` : ''
  if (suggestions.length === 0) return line + via
  const hint =
    w.unknownKeys.length === 1 && suggestions.length === 1
      ? shown((suggestions[0] as Suggestion).didYouMean)
      : listed(suggestions, (s) => `${shown(s.didYouMean)} for ${quoted(s.key)}`)
  return `${line} (did you mean ${hint}?)${via}`
}
