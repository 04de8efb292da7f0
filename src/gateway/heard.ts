/**
 * What a gateway shows a person of what happened, kept in bounded memory: what the alarm heard (each undeclared
 * (tool, key) pair, its "did you mean", the calls that carried it and the first call's id), the guard's latest
 * decisions, and the questions waiting for a human's answer. A model chooses names, keys and ids, so each text is
 * kept cut and copied (a slice would keep its whole parent alive), the pairs and questions are capped and the
 * decisions are a ring. Each is an immutable value changed by a pure step, in one synchronous write.
 *
 * @since 0.1.0
 */
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { rememberedKey } from '../steps/audit/SeenSet.js'
import type { PairCount } from './stores/store.js'

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
  /** Why it was refused: the refusal's tag. */
  readonly refusal?: string
}

/**
 * A question put to a host's human and not answered yet.
 *
 * @since 0.1.0
 * @category model
 */
export interface PendingQuestion {
  /** When it was asked (ms since the epoch). */
  readonly since: number
  readonly tool: string
  readonly id: string
  readonly upstream: string
  /** The locations the call acts on, as the human is shown them (at most `MAX_PATHS_SHOWN`). */
  readonly paths: ReadonlyArray<string>
}

/**
 * The questions open now, by a number the gateway gives each; past `MAX_PENDING`, counted in `others` only.
 *
 * @since 0.1.0
 * @category model
 */
export interface Pending {
  readonly questions: ReadonlyMap<number, PendingQuestion>
  readonly others: number
}

/**
 * The pairs a gateway's page remembers.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_HEARD_PAIRS = 1_000
/**
 * The decisions a gateway's page remembers (the latest).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_RECENT = 100
/**
 * The open questions a gateway's page lists (a session has one open at most, so this is only a bound).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_PENDING = 100
/**
 * Each text a model or an upstream chose is kept to this many characters (and an ellipsis).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_TEXT = 200
const MAX_PATHS_SHOWN = 5

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Nothing heard yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyHeard: Heard = { pairs: new Map(), others: 0 }

/**
 * No question open.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noPending: Pending = { questions: new Map(), others: 0 }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * `s` cut at `max` characters (an ellipsis marks the cut), as a flat copy that shares no memory with `s`.
 *
 * @example
 * import { kept } from './heard.js'
 * assert.strictEqual(kept('abcdef', 3), 'abc…')
 * assert.strictEqual(kept('abc', 3), 'abc')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const kept = (s: string, max: number = MAX_TEXT): string =>
  // through UTF-16 bytes: a V8 slice (or a short string equal to a part of a long one) keeps the whole parent alive
  Buffer.from(s.length > max ? `${s.slice(0, max)}…` : s, 'utf16le').toString('utf16le')

// a pair is found by its tool and key as the audit remembers them (a long one by its start and digest), so two keys
// that share a start stay two pairs, and the counts, which carry both as remembered already, find theirs
const pairKey = (tool: string, key: string): string => JSON.stringify([tool, key])

/**
 * `heard` with a warning's pairs: each new one remembered (its first call, its suggestion), within the cap; the same
 * object when there is nothing new.
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
    const tool = rememberedKey(w.tool)
    for (const key of w.unknownKeys) {
      const k = pairKey(tool, rememberedKey(key))
      const known = pairs ?? heard.pairs
      if (known.has(k)) continue
      if (known.size >= MAX_HEARD_PAIRS) {
        others++
        continue
      }
      const didYouMean = w.suggestions.find((s) => s.key === key)?.didYouMean
      ;(pairs ??= new Map(heard.pairs)).set(k, {
        tool: kept(w.tool),
        key: kept(key),
        upstream: kept(upstream),
        ...(didYouMean === undefined ? {} : { didYouMean: kept(didYouMean) }),
        calls: 0,
        firstId: kept(w.id),
        first: now,
      })
    }
    return pairs === undefined && others === heard.others ? heard : { pairs: pairs ?? heard.pairs, others }
  }

/**
 * `heard` with the calls a session's audit counted since it last sent them, added to the pairs it remembers (a pair
 * past the cap, or a count that is not a positive whole number, is left out); the same object when none applies.
 *
 * @example
 * import { emptyHeard, hearCounts, hearWarning } from './heard.js'
 * const w = { tool: 't', unknownKeys: ['k'], declaredKeys: [], id: 'c1', suggestions: [] }
 * const heard = hearCounts([{ tool: 't', key: 'k', calls: 2 }, { tool: 't', key: 'other', calls: 5 }])(hearWarning(w, 'u', 0)(emptyHeard))
 * assert.deepStrictEqual([...heard.pairs.values()].map((p) => p.calls), [2])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const hearCounts =
  (counts: ReadonlyArray<PairCount>) =>
  (heard: Heard): Heard => {
    let pairs: Map<string, HeardPair> | undefined
    for (const c of counts) {
      if (!(Number.isSafeInteger(c.calls) && c.calls > 0)) continue
      const k = pairKey(c.tool, c.key)
      const p = (pairs ?? heard.pairs).get(k)
      if (p === undefined) continue
      ;(pairs ??= new Map(heard.pairs)).set(k, { ...p, calls: p.calls + c.calls })
    }
    return pairs === undefined ? heard : { ...heard, pairs }
  }

/**
 * `recent` with `d` last, keeping the latest `MAX_RECENT`; its texts kept cut. A copy of at most `MAX_RECENT`
 * references per decision: far less than the call it describes costs.
 *
 * @example
 * import { remember } from './heard.js'
 * const d = { time: 0, tool: 't', id: 'c1', upstream: 'u', outcome: 'allowed' as const, by: 'rules' as const }
 * assert.deepStrictEqual(remember(d)([]), [d])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const remember =
  (d: RecentDecision) =>
  (recent: ReadonlyArray<RecentDecision>): ReadonlyArray<RecentDecision> => [
    ...recent.slice(Math.max(0, recent.length - MAX_RECENT + 1)),
    {
      ...d,
      tool: kept(d.tool),
      id: kept(d.id),
      upstream: kept(d.upstream),
      ...(d.refusal === undefined ? {} : { refusal: kept(d.refusal) }),
    },
  ]

/**
 * `pending` with question `n` open (within the cap; past it, counted in `others`).
 *
 * @example
 * import { asked, answered, noPending } from './heard.js'
 * const open = asked(1, { since: 0, tool: 't', id: 'c1', upstream: 'u', paths: ['/srv/a'] })(noPending)
 * assert.deepStrictEqual([...open.questions.keys()], [1])
 * assert.deepStrictEqual(answered(1)(open), noPending)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const asked =
  (n: number, q: PendingQuestion) =>
  (pending: Pending): Pending =>
    pending.questions.size >= MAX_PENDING
      ? { ...pending, others: pending.others + 1 }
      : {
          questions: new Map(pending.questions).set(n, {
            since: q.since,
            tool: kept(q.tool),
            id: kept(q.id),
            upstream: kept(q.upstream),
            paths: q.paths.slice(0, MAX_PATHS_SHOWN).map((p) => kept(p)),
          }),
          others: pending.others,
        }

/**
 * `pending` without question `n`: answered, failed or given up (one counted in `others` when `n` is not listed).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const answered =
  (n: number) =>
  (pending: Pending): Pending => {
    if (!pending.questions.has(n)) return pending.others > 0 ? { ...pending, others: pending.others - 1 } : pending
    const questions = new Map(pending.questions)
    questions.delete(n)
    return { questions, others: pending.others }
  }
