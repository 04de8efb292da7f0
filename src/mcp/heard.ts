/**
 * What a gateway shows a person of what happened, kept in bounded memory: what the alarm heard (each undeclared
 * (tool, key) pair, its "did you mean", the calls that carried it and the first call's id) and the guard's latest
 * decisions. A model chooses names and keys, so each text is cut and the pairs are capped; the decisions are a ring.
 * Each is an immutable value changed by a pure step, in one synchronous write.
 *
 * @since 0.1.0
 */
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { cut } from '../kernel/describe.js'
import type { PairCount } from './store.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One undeclared key the alarm heard for a tool.
 *
 * @since 0.1.0
 * @category model
 */
export interface HeardPair {
  readonly tool: string
  /** The key's path (`haed`, `opts.encodng`). */
  readonly key: string
  readonly upstream: string
  /** The declared key it plainly points at, if any. */
  readonly didYouMean?: string
  /** Calls that carried it, counted by the sessions' audits (sent here at most once a second per session). */
  readonly calls: number
  /** The id of the first call that carried it, as the log names it. */
  readonly firstId: string
  /** When it was first heard (ms since the epoch). */
  readonly first: number
}

/**
 * What the alarm heard: each pair, in the order first heard, at most `MAX_HEARD_PAIRS`; pairs past it are counted in
 * `others` only.
 *
 * @since 0.1.0
 * @category model
 */
export interface Heard {
  readonly pairs: ReadonlyMap<string, HeardPair>
  readonly others: number
}

/**
 * A decision the guard made (or a call it refused because the tool is not listed), as a page shows it.
 *
 * @since 0.1.0
 * @category model
 */
export interface RecentDecision {
  readonly time: number
  readonly tool: string
  readonly id: string
  readonly upstream: string
  readonly outcome: 'allowed' | 'refused'
  /** Who decided: the rules, a grant, the human asked, nobody (no one could be asked), or `unlisted` (no such tool). */
  readonly by: 'rules' | 'grant' | 'human' | 'nobody' | 'unlisted'
  readonly refusal?: string
}

/**
 * The pairs a gateway's page remembers, and the decisions.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_HEARD_PAIRS = 1_000
/** @since 0.1.0 @category model */
export const MAX_RECENT = 100
// each text a model or an upstream chose is kept to this many characters
const MAX_TEXT = 200

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Nothing heard yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyHeard: Heard = { pairs: new Map(), others: 0 }

const pairKey = (tool: string, key: string): string => JSON.stringify([tool, key])

/**
 * `heard` with a warning's pairs: each new one remembered (its first call, its suggestion), within the cap.
 *
 * @example
 * import { emptyHeard, hearWarning } from './heard.js'
 * const w = { tool: 'fs_read', unknownKeys: ['haed'], declaredKeys: ['head'], id: 'c1', suggestions: [{ key: 'haed', didYouMean: 'head' }] }
 * const heard = hearWarning(w, 'fs', 5)(emptyHeard)
 * assert.deepStrictEqual([...heard.pairs.values()], [
 *   { tool: 'fs_read', key: 'haed', upstream: 'fs', didYouMean: 'head', calls: 0, firstId: 'c1', first: 5 },
 * ])
 * assert.strictEqual(hearWarning(w, 'fs', 6)(heard), heard)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const hearWarning =
  (w: UnknownKeyWarning, upstream: string, now: number) =>
  (heard: Heard): Heard => {
    let pairs: Map<string, HeardPair> | undefined
    let others = heard.others
    for (const key of w.unknownKeys) {
      const k = pairKey(w.tool, key)
      if ((pairs ?? heard.pairs).has(k)) continue
      if ((pairs ?? heard.pairs).size >= MAX_HEARD_PAIRS) {
        others++
        continue
      }
      const didYouMean = w.suggestions.find((s) => s.key === key)?.didYouMean
      ;(pairs ??= new Map(heard.pairs)).set(k, {
        tool: cut(w.tool, MAX_TEXT),
        key: cut(key, MAX_TEXT),
        upstream: cut(upstream, MAX_TEXT),
        ...(didYouMean === undefined ? {} : { didYouMean: cut(didYouMean, MAX_TEXT) }),
        calls: 0,
        firstId: cut(w.id, MAX_TEXT),
        first: now,
      })
    }
    return pairs === undefined && others === heard.others ? heard : { pairs: pairs ?? heard.pairs, others }
  }

/**
 * `heard` with the calls a session's audit counted since it last sent them, for the pairs it remembers.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const hearCounts =
  (counts: ReadonlyArray<PairCount>) =>
  (heard: Heard): Heard => {
    let pairs: Map<string, HeardPair> | undefined
    for (const c of counts) {
      const k = pairKey(c.tool, c.key)
      const p = (pairs ?? heard.pairs).get(k)
      if (p === undefined || !(Number.isSafeInteger(c.calls) && c.calls > 0)) continue
      ;(pairs ??= new Map(heard.pairs)).set(k, { ...p, calls: p.calls + c.calls })
    }
    return pairs === undefined ? heard : { ...heard, pairs }
  }

/**
 * `recent` with `d` last, keeping the latest `MAX_RECENT`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const remember =
  (d: RecentDecision) =>
  (recent: ReadonlyArray<RecentDecision>): ReadonlyArray<RecentDecision> => [
    ...recent.slice(Math.max(0, recent.length - MAX_RECENT + 1)),
    { ...d, tool: cut(d.tool, MAX_TEXT), id: cut(d.id, MAX_TEXT) },
  ]
