// What the audit knows about the tools in force, and the one check it makes of a
// call's keys: shared by withUnknownKeyAudit and by the `toolstack` command, so a
// warning is decided in one place, with the same steps, whoever says it.
//
// (This module and ../UnknownKeys.ts import each other; neither reads the other's
// bindings while it loads, only when a function runs, so the cycle is harmless in ESM
// and in the CommonJS build alike.)
import type { Suggestion } from '../Suggest.js'
import { suggestKey, suggestionsFor } from '../Suggest.js'
import type { PairCounts, SeenSet, UnknownKeyWarning } from '../UnknownKeys.js'
import { diffKeys, extractDeclarations, firstSeen, observe } from '../UnknownKeys.js'

/** What one audited tool declares, with its per-call steps prepared once per listing. */
export interface Declared {
  readonly keys: ReadonlySet<string>
  readonly sorted: ReadonlyArray<string>
  readonly diff: (keys: ReadonlyArray<string>) => ReadonlyArray<string>
  readonly suggest: (keys: ReadonlyArray<string>) => ReadonlyArray<Suggestion>
}

/**
 * Tool name → what it declares, for the tools whose calls are audited: readable, with
 * at least one declared property (a tool that declares nothing says nothing about its
 * keys).
 */
export type Catalogue = ReadonlyMap<string, Declared>

export const emptyCatalogue: Catalogue = new Map()

const NOTHING: ReadonlyArray<string> = Object.freeze([])

const sameKeys = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

// A model sends a tool's keys in the same order call after call, so the last key
// list found clean answers most calls with a few pointer comparisons instead of a
// set lookup per key. It memoises a pure function (clean or not), so it changes no
// answer; it is written in the same synchronous step that reads it.
const withCleanShape = (diff: (keys: ReadonlyArray<string>) => ReadonlyArray<string>) => {
  let clean: ReadonlyArray<string> = NOTHING
  return (keys: ReadonlyArray<string>): ReadonlyArray<string> => {
    if (keys.length > 0 && sameKeys(keys, clean)) return NOTHING
    const unknown = diff(keys)
    if (unknown.length === 0) clean = keys
    return unknown
  }
}

// prepared on the first warning for a tool, not at listing time: most tools never warn
const lazySuggestions = (keys: ReadonlySet<string>) => {
  let prepared: ((ks: ReadonlyArray<string>) => ReadonlyArray<Suggestion>) | undefined
  return (ks: ReadonlyArray<string>): ReadonlyArray<Suggestion> => (prepared ??= suggestionsFor(suggestKey(keys)))(ks)
}

/**
 * The catalogue of declarations in the OpenAI shape; unreadable ones are left out, the
 * first of two with the same name wins, and `tolerated` names are never reported.
 * Built once per listing, so a call costs a lookup, not a closure.
 */
export const catalogueOf =
  (tolerated: ReadonlySet<string>) =>
  (declarations: unknown): Catalogue => {
    const out = new Map<string, Declared>()
    for (const [name, keys] of extractDeclarations(declarations as ReadonlyArray<unknown>)) {
      if (keys.size > 0) {
        out.set(name, { keys, sorted: Object.freeze([...keys].sort()), diff: withCleanShape(diffKeys(keys, tolerated)), suggest: lazySuggestions(keys) })
      }
    }
    return out
  }

/**
 * How the said pairs are remembered: the keys of a call never said before for its
 * tool, and the memory that now includes them.
 */
export type Remember<S> = (tool: string, unknownKeys: ReadonlyArray<string>, id: string) => (memory: S) => readonly [ReadonlyArray<string>, S]

/** Per (tool, key): how many calls carried it and the first one's id (what `stats` reports). */
export const byCounts: Remember<PairCounts> = (tool, unknownKeys, id) => observe(tool, unknownKeys, id)

/** Only which pairs were said: a pair said before costs a lookup and leaves the memory as it was. */
export const bySeen: Remember<SeenSet> = (tool, unknownKeys) => firstSeen(tool, unknownKeys)

/**
 * Remembers a call of `tool` that carried `unknownKeys` (from its `Declared.diff`), and
 * the warning for those never said before: a pair is said once it is remembered.
 * Only calls with undeclared keys come here; a clean call costs its diff alone.
 */
export const warnOnce =
  <S>(remember: Remember<S>, declared: Declared, tool: string, unknownKeys: ReadonlyArray<string>, id: string) =>
  (memory: S): readonly [UnknownKeyWarning | undefined, S] => {
    const [fresh, next] = remember(tool, unknownKeys, id)(memory)
    return [
      fresh.length === 0 ? undefined : { tool, unknownKeys: fresh, declaredKeys: declared.sorted, id, suggestions: declared.suggest(fresh) },
      next,
    ]
  }
