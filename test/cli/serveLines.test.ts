// What `toolstack serve` writes of a record, on stderr and in its log: whatever a model or an upstream put
// in a tool name, an id, an upstream's error or a diagnostic, nothing raw reaches a terminal and nothing is
// unbounded.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GatewayRecord } from '../../src/gateway/index.js'
import { logLine, stderrLine } from '../../src/cli/serve.js'

// written apart from the code: C0, DEL, C1, line and paragraph separators, bidi marks and overrides, BOM
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/u

const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('fs_\u001b]0;pwned\u0007', 'c\u009b31m', 'a\u202eb', 'x\ny', '', 'fs_read'),
  fc.string({ minLength: 8000, maxLength: 9000 }),
)

const recordArb: fc.Arbitrary<GatewayRecord> = fc.oneof(
  fc.record({
    type: fc.constant('decision' as const),
    upstream: hostile,
    tool: hostile,
    id: hostile,
    outcome: fc.constantFrom('allowed' as const, 'refused' as const),
    by: fc.constantFrom('rules' as const, 'grant' as const, 'human' as const, 'nobody' as const),
  }),
  fc.record({
    type: fc.constant('upstream' as const),
    _tag: fc.constant('Failed' as const),
    upstream: hostile,
    error: hostile,
  }),
  fc.record({ type: fc.constant('upstream' as const), _tag: fc.constant('Exited' as const), upstream: hostile }),
  fc.record({
    type: fc.constant('upstream' as const),
    _tag: fc.constant('Stderr' as const),
    upstream: hostile,
    line: hostile,
  }),
  fc.record({ type: fc.constant('diagnostic' as const), message: hostile }),
  fc.record({
    type: fc.constant('call' as const),
    upstream: hostile,
    tool: hostile,
    listed: fc.boolean(),
    id: hostile,
    outcome: fc.constantFrom('ok' as const, 'error' as const, 'refused' as const),
    ms: fc.double({ min: 0, max: 1e7, noNaN: true }),
  }),
)

/** Every string in a JSON value. */
const strings = (u: unknown): ReadonlyArray<string> =>
  typeof u === 'string'
    ? [u]
    : Array.isArray(u)
      ? u.flatMap(strings)
      : u !== null && typeof u === 'object'
        ? Object.entries(u).flatMap(([k, v]) => [k, ...strings(v)])
        : []

describe('toolstack serve: the lines it writes', () => {
  it('on stderr: no raw control character, and no line longer than its parts allow, whatever the record', () => {
    fc.assert(
      fc.property(recordArb, (r) => {
        const line = stderrLine(r)
        expect(line).not.toMatch(RAW)
        // two parts at the most: one of at most 200 characters and one of at most 1,000, each with its
        // ellipsis, each character at most 6 once escaped, and the line's own words
        expect(line.length).toBeLessThanOrEqual(6 * (201 + 1001) + 100)
      }),
    )
  })

  it('in the log: one JSON line with the same time, no raw control character, every string at most 1,001 characters', () => {
    const time = new Date('2026-12-04T10:00:00.000Z')
    fc.assert(
      fc.property(recordArb, (r) => {
        const line = logLine(r, time)
        expect(line).not.toMatch(RAW)
        const parsed = JSON.parse(line) as Record<string, unknown>
        expect(parsed['time']).toBe(time.toISOString())
        expect(parsed['type']).toBe(r.type)
        for (const s of strings(parsed)) expect(s.length).toBeLessThanOrEqual(1001)
      }),
    )
  })

  it('a terminal-retitling tool name and a C1 id are shown escaped, and a short text is shown whole', () => {
    const r: GatewayRecord = {
      type: 'decision',
      upstream: 'fs',
      tool: 'fs_\u001b]0;pwned\u0007',
      id: 'c\u009b31m',
      outcome: 'refused',
      by: 'nobody',
      refusal: 'NoOneToAsk',
    }
    expect(stderrLine(r)).toBe(
      'toolstack serve: fs_\\u001b]0;pwned\\u0007 call c\\u009b31m refused by nobody (NoOneToAsk: no one could be asked; the host does not support MCP elicitation)',
    )
    expect(JSON.parse(logLine(r, new Date(0)))).toStrictEqual({ time: '1970-01-01T00:00:00.000Z', ...r })
    expect(logLine(r, new Date(0))).toContain('"id":"c\\u009b31m"')
  })

  it('a listing that left tools out says which (escaped), why, and how many more than it names', () => {
    const why = 'its input schema or annotations nest deeper than 100 levels'
    const r: GatewayRecord = {
      type: 'upstream',
      _tag: 'Started',
      upstream: 'fs',
      tools: 3,
      ms: 12,
      leftOut: [
        { name: 'deep', why },
        { name: 'x\u001b]0;owned\u0007', why },
      ],
      leftOutCount: 7,
    }
    expect(stderrLine(r)).toBe(
      `toolstack serve: upstream "fs" started with 3 tools in 12 ms; left out: "deep" (${why}), "x\\u001b]0;owned\\u0007" (${why}) and 5 more`,
    )
    expect(
      stderrLine({ type: 'upstream', _tag: 'ToolsChanged', upstream: 'fs', tools: 2, leftOut: [{ name: 'd', why }] }),
    ).toBe(`toolstack serve: upstream "fs" now has 2 tools; left out: "d" (${why})`)
    expect(stderrLine({ type: 'upstream', _tag: 'ToolsChanged', upstream: 'fs', tools: 2 })).toBe(
      'toolstack serve: upstream "fs" now has 2 tools',
    )
  })

  it('a long upstream error is cut at 1,000 characters with an ellipsis, on stderr and in the log', () => {
    const r: GatewayRecord = { type: 'upstream', _tag: 'Failed', upstream: 'fs', error: 'e'.repeat(5000) }
    expect(stderrLine(r)).toBe(`toolstack serve: upstream "fs" failed: ${'e'.repeat(1000)}…`)
    expect((JSON.parse(logLine(r, new Date(0))) as { error: string }).error).toBe(`${'e'.repeat(1000)}…`)
  })
})

describe('toolstack serve: the lines of a reload', () => {
  const names = fc.array(hostile, { maxLength: 3 })
  const reloadArb: fc.Arbitrary<GatewayRecord> = fc.oneof(
    fc.record({
      type: fc.constant('reload' as const),
      outcome: fc.constant('reloaded' as const),
      added: names,
      removed: names,
      restarted: names,
      changed: names,
      kept: names,
      settings: fc.subarray(['rules', 'tolerate', 'log'] as const),
      listChanged: fc.boolean(),
    }),
    fc.record({ type: fc.constant('reload' as const), outcome: fc.constant('kept' as const), problems: names }),
  )

  it('names and problems escaped and cut, on stderr and in the log, whatever they hold', () => {
    fc.assert(
      fc.property(reloadArb, (r) => {
        const line = stderrLine(r)
        expect(line).not.toMatch(RAW)
        expect(line.length).toBeLessThanOrEqual(6 * 1001 * 3 * 4 + 200)
        const logged = logLine(r, new Date(0))
        expect(logged).not.toMatch(RAW)
        expect(JSON.parse(logged)).toMatchObject({ type: 'reload', outcome: r.type === 'reload' ? r.outcome : '' })
      }),
    )
  })

  it('says what changed, each name quoted, or that nothing did', () => {
    const change = {
      added: ['mem'],
      removed: ['old'],
      restarted: ['fs'],
      changed: ['web'],
      kept: [],
      listChanged: true,
    }
    expect(stderrLine({ type: 'reload', outcome: 'reloaded', ...change, settings: ['rules', 'log'] })).toBe(
      'toolstack serve: reloaded: restarted "fs"; started "mem"; stopped "old"; served anew "web"; rules, log changed',
    )
    const none = { added: [], removed: [], restarted: [], changed: [], kept: ['fs'], settings: [], listChanged: false }
    expect(stderrLine({ type: 'reload', outcome: 'reloaded', ...none })).toBe(
      'toolstack serve: reloaded: nothing changed',
    )
    expect(stderrLine({ type: 'reload', outcome: 'kept', problems: ['f: a', 'f: b'] })).toBe(
      'toolstack serve: not reloaded, the running configuration is kept: f: a; f: b',
    )
  })
})

describe('toolstack serve: the lines of a warning', () => {
  const warning = (n: number, declared = 3): GatewayRecord => {
    const unknownKeys = Array.from({ length: n }, (_, i) => `k${i}`)
    return {
      type: 'warning',
      upstream: 'h',
      tool: 'h_echo',
      unknownKeys,
      keys: unknownKeys.map((key) => ({ path: key, key, place: [] })),
      declaredKeys: Array.from({ length: declared }, (_, i) => `d${i}`),
      id: '2',
      suggestions: unknownKeys.map((key) => ({ key, didYouMean: 'd0' })),
    }
  }

  it('a call with 20,000 undeclared keys: one short line on stderr, and a short record that keeps the counts', () => {
    const r = warning(20_000, 500)
    const line = stderrLine(r)
    expect(line).toContain('"k19" and 19980 more (declared: ')
    expect(line).toContain('"d19" and 480 more)')
    expect(line.length).toBeLessThan(1000)
    const logged = logLine(r, new Date(0))
    expect(logged.length).toBeLessThan(4000)
    const parsed = JSON.parse(logged) as Record<string, ReadonlyArray<unknown>>
    expect(parsed).toMatchObject({
      type: 'warning',
      unknownKeyCount: 20_000,
      declaredKeyCount: 500,
      suggestionCount: 20_000,
    })
    for (const list of ['unknownKeys', 'keys', 'declaredKeys', 'suggestions']) expect(parsed[list]).toHaveLength(20)
    expect(parsed['unknownKeys']?.[19]).toBe('k19')
  })

  it('a warning with at most 20 entries in each list is logged as it always was, with no count', () => {
    const r = warning(20, 20)
    expect(JSON.parse(logLine(r, new Date(0)))).toStrictEqual({ time: '1970-01-01T00:00:00.000Z', ...r })
  })

  // `hostile`, its long strings made by repeating, and a list of up to 20 of them or of thousands of one of a
  // few (a long one among them): so that a failure shrinks in a few steps
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('fs_\u001b]0;pwned\u0007', 'c\u009b31m', 'a\u202eb', 'x\ny', '', 'fs_read'),
    fc.tuple(fc.constantFrom('a', '\u009b', 'é'), fc.integer({ min: 8000, max: 9000 })).map(([c, n]) => c.repeat(n)),
  )
  const few = fc.constantFrom('k', 'c\u009b31m', 'x'.repeat(5000))
  const hostileList = <A>(a: fc.Arbitrary<A>, one: fc.Arbitrary<A>): fc.Arbitrary<ReadonlyArray<A>> =>
    fc.oneof(
      fc.array(a, { maxLength: 20 }),
      fc.tuple(one, fc.integer({ min: 21, max: 3000 })).map(([x, n]) => Array.from({ length: n }, () => x)),
    )
  const warningArb: fc.Arbitrary<GatewayRecord> = fc
    .record({
      upstream: text,
      tool: text,
      id: text,
      unknownKeys: hostileList(text, few),
      declaredKeys: hostileList(text, few),
      suggestions: hostileList(
        fc.record({ key: text, didYouMean: text }),
        few.map((k) => ({ key: k, didYouMean: k })),
      ),
    })
    .map((w) => ({
      type: 'warning' as const,
      ...w,
      keys: w.unknownKeys.map((key) => ({ path: key, key, place: [key, { each: 'element' as const }] })),
    }))

  it('in the log: at most 20 entries in each list, each string at most 1,001 characters, and the count of a list cut, whatever the warning', () => {
    fc.assert(
      fc.property(warningArb, (r) => {
        if (r.type !== 'warning') return
        const logged = logLine(r, new Date(0))
        expect(logged).not.toMatch(RAW)
        const parsed = JSON.parse(logged) as Record<string, unknown>
        for (const s of strings(parsed)) expect(s.length).toBeLessThanOrEqual(1001)
        const lists = [
          ['unknownKeys', r.unknownKeys, 'unknownKeyCount'],
          ['keys', r.keys, 'unknownKeyCount'],
          ['declaredKeys', r.declaredKeys, 'declaredKeyCount'],
          ['suggestions', r.suggestions, 'suggestionCount'],
        ] as const
        for (const [name, whole, count] of lists) {
          expect(parsed[name]).toHaveLength(Math.min(whole.length, 20))
          expect(parsed[count]).toBe(whole.length > 20 ? whole.length : undefined)
        }
      }),
      { numRuns: 50 },
    )
  })
})
