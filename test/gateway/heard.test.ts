// What a gateway's page remembers, in bounded memory whatever a model sends: the pairs the alarm heard (capped,
// each text cut, a long key told apart by its digest), their counts, the latest decisions (a ring) and the open
// questions (capped). Checked against plain models: a Set of pairs, an array of every decision.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { UnknownKeyWarning } from '../../src/steps/audit/Check.js'
import { emptySeenSet, firstSeen, pairStats, rememberedKey } from '../../src/steps/audit/SeenSet.js'
import type { Heard, RecentDecision } from '../../src/gateway/heard.js'
import {
  MAX_HEARD_PAIRS,
  MAX_PENDING,
  MAX_RECENT,
  MAX_TEXT,
  answered,
  asked,
  emptyHeard,
  hearCounts,
  hearWarning,
  kept,
  noPending,
  remember,
} from '../../src/gateway/heard.js'

const warning = (tool: string, keys: ReadonlyArray<string>, id = 'c1'): UnknownKeyWarning => ({
  tool,
  unknownKeys: keys,
  keys: keys.map((k) => ({ key: k, place: [], path: k })),
  declaredKeys: [],
  id,
  suggestions: [],
})

const hearAll = (ws: ReadonlyArray<UnknownKeyWarning>): Heard =>
  ws.reduce((h, w, i) => hearWarning(w, 'up', i)(h), emptyHeard)

describe('kept', () => {
  it('keeps a text of at most max characters as it is, cuts a longer one to max and an ellipsis', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 1, max: 250 }), (s, max) => {
        const k = kept(s, max)
        if (s.length <= max) expect(k).toBe(s)
        else expect(k).toBe(`${s.slice(0, max)}…`)
      }),
    )
  })
})

describe('hearWarning', () => {
  it('remembers each (tool, key) pair once, in the order first heard, with its first call, upstream and did-you-mean', () => {
    const w: UnknownKeyWarning = {
      tool: 'fs_read',
      unknownKeys: ['haed', 'opts.encodng'],
      keys: [
        { key: 'haed', place: [], path: 'haed' },
        { key: 'encodng', place: ['opts'], path: 'opts.encodng' },
      ],
      declaredKeys: ['head', 'opts'],
      id: 'call-1',
      suggestions: [{ key: 'haed', didYouMean: 'head' }],
    }
    const once = hearWarning(w, 'fs', 10)(emptyHeard)
    const again = hearWarning({ ...w, id: 'call-2', unknownKeys: ['haed', 'tail'] }, 'fs', 20)(once)
    expect([...again.pairs.values()]).toStrictEqual([
      { tool: 'fs_read', key: 'haed', upstream: 'fs', didYouMean: 'head', calls: 0, firstId: 'call-1', first: 10 },
      { tool: 'fs_read', key: 'opts.encodng', upstream: 'fs', calls: 0, firstId: 'call-1', first: 10 },
      { tool: 'fs_read', key: 'tail', upstream: 'fs', calls: 0, firstId: 'call-2', first: 20 },
    ])
    expect(hearWarning(w, 'fs', 30)(again)).toBe(again)
  })

  it('whatever the warnings, keeps at most MAX_HEARD_PAIRS pairs and counts the rest: kept + others = distinct pairs', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('a', 'b', '__proto__'), fc.array(fc.string({ maxLength: 4 }), { maxLength: 400 })),
          { maxLength: 12 },
        ),
        (ws) => {
          const heard = hearAll(ws.map(([t, ks]) => warning(t, ks)))
          // the model: every distinct pair, in the order first heard
          const distinct: Array<string> = []
          for (const [t, ks] of ws) for (const k of ks) if (!distinct.includes(`${t} ${k}`)) distinct.push(`${t} ${k}`)
          expect(heard.pairs.size).toBe(Math.min(distinct.length, MAX_HEARD_PAIRS))
          expect(heard.pairs.size + heard.others).toBe(distinct.length)
          expect([...heard.pairs.values()].map((p) => `${p.tool} ${p.key}`)).toStrictEqual(
            distinct.slice(0, MAX_HEARD_PAIRS),
          )
        },
      ),
      { numRuns: 30 },
    )
  })

  it('past the cap, a new pair is only counted, a known one still found', () => {
    const keys = Array.from({ length: MAX_HEARD_PAIRS + 50 }, (_, i) => `k${i}`)
    const heard = hearAll([warning('t', keys), warning('t', ['k0', 'new'])])
    expect([heard.pairs.size, heard.others]).toStrictEqual([MAX_HEARD_PAIRS, 51])
    const counted = hearCounts([{ tool: 't', key: 'k0', calls: 1 }])(heard)
    expect([...counted.pairs.values()].find((p) => p.key === 'k0')?.calls).toBe(1)
  })

  it('keeps every text a model chose cut to MAX_TEXT, and tells apart two long keys that share their start', () => {
    const long = 'k'.repeat(100_000)
    const w = warning('t'.repeat(5_000), [`${long}1`, `${long}2`], 'i'.repeat(5_000))
    const heard = hearWarning(
      { ...w, suggestions: [{ key: `${long}1`, didYouMean: 'd'.repeat(5_000) }] },
      'u'.repeat(5_000),
      0,
    )(emptyHeard)
    expect(heard.pairs.size).toBe(2)
    for (const p of heard.pairs.values()) {
      for (const text of [p.tool, p.key, p.upstream, p.firstId, p.didYouMean ?? ''])
        expect(text.length).toBeLessThanOrEqual(MAX_TEXT + 1)
    }
    // and what the map is keyed by is bounded too
    for (const k of heard.pairs.keys()) expect(k.length).toBeLessThan(300)
  })
})

describe('hearCounts', () => {
  it("adds each count to its pair, found by the key as the audit remembers it (a long key's digest form too)", () => {
    const long = 'x'.repeat(1_000)
    const heard = hearAll([warning('t', ['k', long])])
    const counted = hearCounts([
      { tool: 't', key: 'k', calls: 2 },
      { tool: 't', key: rememberedKey(long), calls: 3 },
      { tool: 't', key: 'k', calls: 1 },
    ])(heard)
    expect([...counted.pairs.values()].map((p) => p.calls)).toStrictEqual([3, 3])
  })

  it("finds a long tool's pairs by the counts the audit's own seen-set reports, which remember the tool as a key", () => {
    const tool = 't'.repeat(1_000)
    const heard = hearAll([warning(tool, ['k'])])
    const [, seen] = firstSeen(tool, ['k'], 'c1')(emptySeenSet)
    const counted = hearCounts(pairStats(seen))(heard)
    expect([...counted.pairs.values()].map((p) => p.calls)).toStrictEqual([1])
  })

  it('leaves out a pair it does not remember and a count that is not a positive whole number: the same object then', () => {
    const heard = hearAll([warning('t', ['k'])])
    const none = hearCounts([
      { tool: 't', key: 'other', calls: 4 },
      { tool: 'u', key: 'k', calls: 4 },
      { tool: 't', key: 'k', calls: 0 },
      { tool: 't', key: 'k', calls: -1 },
      { tool: 't', key: 'k', calls: 1.5 },
      { tool: 't', key: 'k', calls: Number.NaN },
    ])(heard)
    expect(none).toBe(heard)
  })
})

describe('remember', () => {
  const decision = (i: number, tool = `tool${i}`): RecentDecision => ({
    time: i,
    tool,
    id: `c${i}`,
    upstream: 'u',
    outcome: 'allowed',
    by: 'rules',
  })

  it('whatever the number of decisions, keeps the latest MAX_RECENT, oldest first', () => {
    fc.assert(
      fc.property(fc.nat({ max: 3 * MAX_RECENT }), (n) => {
        const all = Array.from({ length: n }, (_, i) => decision(i))
        const recent = all.reduce((r, d) => remember(d)(r), [] as ReadonlyArray<RecentDecision>)
        expect(recent).toStrictEqual(all.slice(-MAX_RECENT))
      }),
      { numRuns: 40 },
    )
  })

  it("keeps a decision's texts cut", () => {
    const [d] = remember({ ...decision(0, 'n'.repeat(10_000)), id: 'i'.repeat(10_000), upstream: 'u'.repeat(900) })([])
    expect([d?.tool.length, d?.id.length, d?.upstream.length]).toStrictEqual([MAX_TEXT + 1, MAX_TEXT + 1, MAX_TEXT + 1])
    const [r] = remember({ ...decision(0), outcome: 'refused', refusal: 'R'.repeat(1_000) })([])
    expect(r?.refusal).toBe(`${'R'.repeat(MAX_TEXT)}…`)
    expect(remember(decision(1))([])[0]).not.toHaveProperty('refusal')
  })
})

describe('asked and answered', () => {
  const q = (i: number) => ({ since: i, tool: `t${i}`, id: `c${i}`, upstream: 'u', paths: ['/a', '/b'] })

  it('lists each open question until it is answered, at most MAX_PENDING, counting the rest until they are answered', () => {
    const n = MAX_PENDING + 3
    let pending = noPending
    for (let i = 1; i <= n; i++) pending = asked(i, q(i))(pending)
    expect([pending.questions.size, pending.others]).toStrictEqual([MAX_PENDING, 3])
    pending = answered(1)(pending)
    expect([pending.questions.has(1), pending.questions.size, pending.others]).toStrictEqual([
      false,
      MAX_PENDING - 1,
      3,
    ])
    for (let i = MAX_PENDING + 1; i <= n; i++) pending = answered(i)(pending)
    expect([pending.questions.size, pending.others]).toStrictEqual([MAX_PENDING - 1, 0])
    for (let i = 2; i <= MAX_PENDING; i++) pending = answered(i)(pending)
    expect(pending).toStrictEqual(noPending)
  })

  it('answering a question not open, with none counted past the cap, changes nothing: the same object', () => {
    const open = asked(1, q(1))(noPending)
    expect(answered(2)(open)).toBe(open)
    expect(answered(1)(noPending)).toBe(noPending)
  })

  it("keeps a question's texts cut and its first five locations", () => {
    const p = asked(1, {
      since: 0,
      tool: 't'.repeat(1_000),
      id: 'i'.repeat(1_000),
      upstream: 'u',
      paths: Array.from({ length: 50 }, (_, i) => `/${i}`.repeat(500)),
    })(noPending)
    const shown = p.questions.get(1)
    expect(shown?.paths).toHaveLength(5)
    expect(Math.max(...(shown?.paths ?? []).map((x) => x.length), shown?.tool.length ?? 0)).toBe(MAX_TEXT + 1)
  })
})
