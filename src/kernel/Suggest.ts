/**
 * "Did you mean": the declared key an undeclared one plainly points at, if any. Added beside a warning; it
 * never changes a call or whether a warning is emitted.
 *
 * @since 0.1.0
 */
import type { Option } from 'fp-ts/lib/Option.js'
import { none, some } from 'fp-ts/lib/Option.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One reported key and the declared key it plainly points at.
 *
 * @since 0.1.0
 * @category model
 */
export interface Suggestion {
  readonly key: string
  readonly didYouMean: string
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * A name without case, `_` or `-`: `max_depth`, `maxDepth` and `Max-Depth` meet here.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeKey = (k: string): string => k.toLowerCase().replace(/[_-]/g, '')

/**
 * The words of a camelCase, snake_case or kebab-case name, lower-cased.
 *
 * @example
 * import { keyWords } from './Suggest.js'
 * assert.deepStrictEqual(keyWords('maxDepth'), ['max', 'depth'])
 * assert.deepStrictEqual(keyWords('max_file_size'), ['max', 'file', 'size'])
 *
 * @since 0.1.0
 * @category utils
 */
export const keyWords = (name: string): ReadonlyArray<string> => {
  const camel = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2')
  const acronyms = camel.replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
  return acronyms
    .split(/[\s_-]/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase())
}

/**
 * Optimal string alignment distance (edits: insert, delete, substitute, swap two neighbours), by UTF-16 code
 * unit. Stops early past `max`, returning `max + 1`.
 *
 * @since 0.1.0
 * @category utils
 */
export const editDistance = (a: string, b: string, max = Infinity): number => {
  let prev: Array<number> = Array.from({ length: b.length + 1 }, (_, j) => j)
  // the row two back, read only from the second row on (a swap needs i > 1)
  let prev2 = prev
  for (let i = 1; i <= a.length; i++) {
    const row: Array<number> = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost)
      // a swap needs two characters on each side: in the first row or column one of them is at index -1,
      // undefined, which equals no character, so the test needs no bounds
      if (a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (prev2[j - 2] as number) + 1)
      row.push(d)
      best = Math.min(best, d)
    }
    if (best > max) return max + 1
    prev2 = prev
    prev = row
  }
  // a last row can keep a cell at most max while its last cell is further off
  return Math.min(prev[b.length] as number, max + 1)
}

/** Some(candidate) for exactly one, none for several (no plain guess), undefined for none (try the next rule). */
const only = (candidates: ReadonlyArray<string>): Option<string> | undefined =>
  candidates.length === 0 ? undefined : candidates.length === 1 ? some(candidates[0] as string) : none

/**
 * Whether `b` is `a` with two neighbouring characters swapped. Assumes `a !== b` (declared keys return
 * early), so the loop stops at their first difference.
 */
const isNeighbourSwap = (a: string, b: string): boolean => {
  let i = 0
  while (a[i] === b[i]) i++
  return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2)
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The declared key an undeclared `key` plainly points at. The rules are tried in order; the first with any
 * candidate decides, and two or more candidates mean no suggestion:
 *
 * 1. the same name up to case, `_` and `-` (`max_depth` → `maxDepth`);
 * 2. a truncated end or start of a declared key, 3 characters or more (`ffset` → `offset`, `ead` → `head`);
 * 3. one or two edits away (a swap of two neighbours is one edit), for keys of 5 characters or more
 *    (`contnet` → `content`, `promt` → `prompt`);
 * 4. two neighbours swapped, for shorter keys of 3 or 4 characters (`haed` → `head`, `tial` → `tail`);
 * 5. the trailing words of a camelCase or snake_case declared name (`depth` → `maxDepth`).
 *
 * @example
 * import { suggestKey } from './Suggest.js'
 * import { some, none } from 'fp-ts/lib/Option.js'
 * const near = suggestKey(new Set(['path', 'offset', 'maxDepth']))
 * assert.deepStrictEqual(near('ffset'), some('offset'))
 * assert.deepStrictEqual(near('depth'), some('maxDepth'))
 * assert.deepStrictEqual(near('recursive'), none)
 * assert.deepStrictEqual(suggestKey(new Set(['head', 'tail']))('haed'), some('head'))
 *
 * @since 0.1.0
 * @category pure steps
 */
export const suggestKey = (declared: ReadonlySet<string>): ((key: string) => Option<string>) => {
  // precomputed once, so a model that invents a key on every call pays only for that key
  const all = [...declared].map((d) => ({ d, nd: normalizeKey(d), words: keyWords(d) }))
  const tails = all.map(({ d, words }) => ({
    d,
    // every run of trailing words, joined: `max_file_size` → `filesize`, `size`
    tails: words.slice(1).map((_, i) => words.slice(i + 1).join('')),
  }))
  return (key) => {
    if (declared.has(key)) return none
    const nk = normalizeKey(key)

    const same = only(all.filter((x) => x.nd === nk).map((x) => x.d))
    if (same !== undefined) return same

    if (nk.length >= 3) {
      // an exact normalized match returned in rule 1, so any match here is strictly longer than nk
      const truncated = only(all.filter((x) => x.nd.startsWith(nk) || x.nd.endsWith(nk)).map((x) => x.d))
      if (truncated !== undefined) return truncated
    }

    if (key.length >= 5) {
      let best = 3
      let at: Array<string> = []
      for (const { d, nd } of all) {
        const dist = Math.min(editDistance(key, d, 2), editDistance(nk, nd, 2))
        if (dist > 2) continue
        if (dist < best) {
          best = dist
          at = [d]
        } else if (dist === best) at.push(d)
      }
      const edited = only(at)
      if (edited !== undefined) return edited
    } else if (key.length >= 3) {
      // too short for two edits to be plain, but a slip of two neighbours is
      const swapped = only(all.filter((x) => isNeighbourSwap(key, x.d) || isNeighbourSwap(nk, x.nd)).map((x) => x.d))
      if (swapped !== undefined) return swapped
    }

    const kw = keyWords(key).join('')
    if (kw.length >= 3) {
      const tail = only(tails.filter((x) => x.tails.includes(kw)).map((x) => x.d))
      if (tail !== undefined) return tail
    }
    return none
  }
}

/**
 * A suggestion for each reported key that plainly points at one declared key, in the order of `keys`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const suggestKeys = (declared: ReadonlySet<string>, keys: ReadonlyArray<string>): ReadonlyArray<Suggestion> =>
  suggestionsFor(suggestKey(declared))(keys)

/**
 * {@link suggestKeys} over a suggester prepared once (for a declaration that is asked about call after call).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const suggestionsFor =
  (near: (key: string) => Option<string>) =>
  (keys: ReadonlyArray<string>): ReadonlyArray<Suggestion> => {
    const out: Array<Suggestion> = []
    for (const key of keys) {
      const s = near(key)
      if (s._tag === 'Some') out.push({ key, didYouMean: s.value })
    }
    return out
  }
