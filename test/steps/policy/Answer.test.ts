import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Rule } from '../../../src/index.js'
import type { ShownLocation } from '../../../src/steps/policy/Answer.js'
import {
  decodeAnswer,
  drawPermissionRequest,
  forgetGrant,
  recordGrant,
  showFacts,
  showValue,
} from '../../../src/steps/policy/Answer.js'
import type { PathLocation, Reading } from '../../../src/kernel/paths.js'
import type { DefinitionNotice } from '../../../src/steps/pins/Review.js'

const suggestedRule: Rule = { tool: 'fs_write', decision: 'allow', under: '/p' }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('decodeAnswer', () => {
  it.each([
    [null, 'null'],
    [[{ action: 'allow-once' }], 'an array'],
    ['allow-once', 'the string "allow-once"'],
  ])('calls an answer that is not an object unclear, saying what it was: %j', (answer, what) => {
    expect(decodeAnswer(answer, suggestedRule)).toEqual({
      _tag: 'Left',
      left: { _tag: 'UnclearAnswer', problem: expect.stringMatching(/^expected \{ action, rule\? \}, got /) },
    })
    const out = decodeAnswer(answer, suggestedRule)
    expect(out._tag === 'Left' && out.left.problem).toContain(what)
  })

  it('refuses to remember "always" over a tool name holding "*" (the name a model called, read back as a wildcard); once is fine', () => {
    for (const tool of ['*', 'fs_*', 'a*b']) {
      const fromModel: Rule = { tool, decision: 'allow' }
      for (const action of ['always-allow', 'always-deny']) {
        const out = decodeAnswer({ action }, fromModel)
        expect(out._tag === 'Left' && out.left._tag).toBe('InvalidRule')
        expect(out._tag === 'Left' && out.left.problem).toContain(JSON.stringify(tool))
      }
      expect(decodeAnswer({ action: 'allow-once' }, fromModel)).toEqual({
        _tag: 'Right',
        right: { action: 'allow-once', grant: undefined },
      })
    }
    // a rule the human's host gives on purpose is still theirs to give
    expect(
      decodeAnswer({ action: 'always-allow', rule: { tool: 'fs_*' } }, { tool: 'fs_*', decision: 'allow' }),
    ).toEqual({
      _tag: 'Right',
      right: { action: 'always-allow', grant: { tool: 'fs_*', decision: 'allow' } },
    })
  })

  it('reads "unasked" as no one asked: no grant, whatever rule comes with it', () => {
    for (const rule of [undefined, { tool: 'fs_write' }, 'not a rule'])
      expect(
        decodeAnswer(rule === undefined ? { action: 'unasked' } : { action: 'unasked', rule }, suggestedRule),
      ).toEqual({
        _tag: 'Right',
        right: { action: 'unasked', grant: undefined },
      })
  })

  it('names every unknown member, apart', () => {
    expect(decodeAnswer({ action: 'allow-once', scope: 'x', ttl: 3 }, suggestedRule)).toEqual({
      _tag: 'Left',
      left: { _tag: 'UnclearAnswer', problem: 'unknown member "scope", "ttl"; an answer has: action, rule' },
    })
  })

  it.each([
    ['a string', 'fs_*', 'the string "fs_*"'],
    ['null', null, 'null'],
    ['an array', [{ tool: 'fs_*' }], 'an array'],
    ['a number', 3, '3'],
  ])('refuses an always answer whose rule is %s, saying so', (_, rule, what) => {
    for (const action of ['always-allow', 'always-deny']) {
      const out = decodeAnswer({ action, rule }, suggestedRule)
      expect(out).toEqual({
        _tag: 'Left',
        left: { _tag: 'InvalidRule', problem: expect.stringMatching(/^rule must be a rule, got /) },
      })
      expect(out._tag === 'Left' && out.left.problem).toContain(what)
    }
  })

  it('takes a rule whose decision agrees with the action, and refuses one that contradicts it', () => {
    expect(decodeAnswer({ action: 'always-allow', rule: { tool: 'fs_*', decision: 'allow' } }, suggestedRule)).toEqual({
      _tag: 'Right',
      right: { action: 'always-allow', grant: { tool: 'fs_*', decision: 'allow' } },
    })
    expect(
      decodeAnswer({ action: 'always-deny', rule: { tool: 'fs_*', decision: 'deny', note: 'no' } }, suggestedRule),
    ).toEqual({
      _tag: 'Right',
      right: { action: 'always-deny', grant: { tool: 'fs_*', decision: 'deny', note: 'no' } },
    })
    expect(decodeAnswer({ action: 'always-deny', rule: { tool: 'fs_*', decision: 'allow' } }, suggestedRule)).toEqual({
      _tag: 'Left',
      left: { _tag: 'InvalidRule', problem: 'its decision the string "allow" contradicts the answer "always-deny"' },
    })
  })

  it('takes the rule the host gives for "always" when none was suggested: only the suggestion is withheld', () => {
    expect(decodeAnswer({ action: 'always-allow', rule: { tool: 'fs_write', under: '/p' } }, undefined)).toEqual({
      _tag: 'Right',
      right: { action: 'always-allow', grant: { tool: 'fs_write', decision: 'allow', under: '/p' } },
    })
    expect(decodeAnswer({ action: 'always-deny' }, undefined)).toEqual({
      _tag: 'Left',
      left: {
        _tag: 'InvalidRule',
        problem: '"always" was not offered for this call (a location could not be checked): answer once',
      },
    })
  })

  it('calls an answer that cannot be read unclear, and never throws', () => {
    const hostile = {
      get action(): string {
        throw new Error('no action here')
      },
    }
    const out = decodeAnswer(hostile, suggestedRule)
    expect(out).toMatchObject({ _tag: 'Left', left: { _tag: 'UnclearAnswer' } })
    expect(out._tag === 'Left' && out.left.problem).toMatch(/^it could not be read: .*no action here/)
  })
})

describe('recordGrant', () => {
  const ruleArb: fc.Arbitrary<Rule> = fc.record(
    {
      tool: fc.constantFrom('fs_write', 'fs_*', 'web_get'),
      decision: fc.constantFrom('allow' as const, 'deny' as const, 'ask' as const),
      under: fc.constantFrom('/p', '/q'),
      note: fc.constantFrom('a', 'b'),
      definition: fc.constantFrom(`sha256:${'a'.repeat(64)}`, `sha256:${'b'.repeat(64)}`),
    },
    { requiredKeys: ['tool', 'decision'] },
  )

  it('adds a rule that differs in any member, and keeps the very same list for an equal one', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 4 }), ruleArb, (grants, rule) => {
        const same = (a: Rule, b: Rule) =>
          a.tool === b.tool &&
          a.decision === b.decision &&
          a.under === b.under &&
          a.note === b.note &&
          a.definition === b.definition
        const out = recordGrant({ ...rule })(grants)
        if (grants.some((g) => same(g, rule))) expect(out).toBe(grants)
        else expect(out).toEqual([...grants, rule])
      }),
    )
  })

  it.each([
    ['tool', { tool: 'fs_*' }],
    ['decision', { decision: 'deny' }],
    ['under', { under: '/q' }],
    ['under, left out', { under: undefined }],
    ['note', { note: 'other' }],
    ['definition', { definition: `sha256:${'c'.repeat(64)}` }],
  ] as const)('tells rules apart by their %s', (_, change) => {
    const base: Rule = { tool: 'fs_write', decision: 'allow', under: '/p', note: 'n' }
    const other = { ...base, ...change } as Rule
    const grants = recordGrant(base)([])
    expect(recordGrant(other)(grants)).toEqual([base, other])
    expect(recordGrant({ ...base })(grants)).toBe(grants)
  })
})

describe('forgetGrant', () => {
  it('takes back only the equal rule, and leaves the others in order', () => {
    const a: Rule = { tool: 'fs_write', decision: 'allow', under: '/p' }
    const b: Rule = { tool: 'fs_read', decision: 'allow' }
    const c: Rule = { tool: 'fs_write', decision: 'deny' }
    const out = forgetGrant({ ...a })([a, b, c])
    expect(out).toEqual([b, c])
    expect(Object.isFrozen(out)).toBe(true)
  })
})

// -------------------------------------------------------------------------------------
// what a human is shown
// -------------------------------------------------------------------------------------

const shown = (text: string) => ({ text, cut: 0 })

describe('showValue', () => {
  it('describes a value that has no JSON text, or whose JSON text cannot be made', () => {
    const cycle: Record<string, unknown> = {}
    cycle['self'] = cycle
    expect(showValue(undefined, 100)).toEqual(shown('undefined'))
    expect(showValue(1n, 100)).toEqual(shown('bigint 1'))
    expect(showValue(cycle, 100)).toEqual(shown('an object'))
  })
})

describe('showFacts', () => {
  const known: PathLocation = { _tag: 'Known', arg: 'to', path: '/w/a' }
  const relative: PathLocation = { _tag: 'Unknown', arg: 'from', problem: 'is relative' }

  it('without concerns, puts a location that could not be checked first and reads a known one as inside', () => {
    expect(showFacts([known, relative], {}).locations).toEqual([
      { _tag: 'Unknown', arg: shown('from'), problem: 'is relative' },
      { _tag: 'Known', arg: shown('to'), path: shown('/w/a'), concern: 'inside' },
    ])
  })

  it('says of an unread location what it would read as, when it reads as a path at all', () => {
    const unread = (reading: Reading): PathLocation => ({ _tag: 'Unread', arg: 'file', reading })
    const problems = showFacts(
      [
        unread({ _tag: 'Known', arg: 'file', path: '/w/f' }),
        unread({ _tag: 'Unknown', arg: 'file', problem: 'is relative' }),
      ],
      {},
    ).locations.map((l) => (l._tag === 'Unknown' ? l.problem : undefined))
    expect(problems).toEqual([
      'looks like a location and is not read as one: a locationArgs entry "file" reads it; it reads as /w/f',
      'looks like a location and is not read as one: a locationArgs entry "file" reads it',
    ])
  })
})

describe('drawPermissionRequest', () => {
  const known = (arg: string, path: string, sent?: string): ShownLocation => ({
    _tag: 'Known',
    arg: shown(arg),
    path: shown(path),
    ...(sent === undefined ? {} : { sent: shown(JSON.stringify(sent)) }),
    concern: 'inside',
  })
  const unchecked = (arg: string): ShownLocation => ({ _tag: 'Unknown', arg: shown(arg), problem: 'is relative' })
  const firstLine = (paths: ReadonlyArray<string>, locations?: ReadonlyArray<ShownLocation>): string | undefined =>
    drawPermissionRequest({
      tool: 't',
      paths,
      suggestedRule: undefined,
      shown: [],
      ...(locations === undefined ? {} : { locations }),
    })[0]

  it('names the one path only when every location was checked, and counts what could not be', () => {
    expect(firstLine(['/w/a'], [known('to', '/w/a')])).toBe('May the model call t on /w/a?')
    expect(firstLine(['/w/a'])).toBe('May the model call t on /w/a?')
    expect(firstLine(['/w/a'], [known('to', '/w/a'), unchecked('from')])).toBe(
      'May the model call t on 1 path and 1 location that could not be checked?',
    )
    expect(firstLine([], [unchecked('from'), unchecked('via')])).toBe(
      'May the model call t on 2 locations that could not be checked?',
    )
    expect(firstLine([])).toBe('May the model call t?')
    expect(firstLine([], [])).toBe('May the model call t?')
  })

  it('shows what the model sent beside the path judged, when they differ', () => {
    const lines = drawPermissionRequest({
      tool: 't',
      paths: ['/w/a'],
      suggestedRule: undefined,
      shown: [],
      locations: [known('to', '/w/a', 'a')],
    })
    expect(lines).toContain('  to: /w/a (sent as "a")')
  })

  it('shows up to 12 locations, and says how many more there are past that', () => {
    const draw = (n: number) =>
      drawPermissionRequest({
        tool: 't',
        paths: [],
        suggestedRule: undefined,
        shown: [],
        locations: Array.from({ length: n }, (_, i) => unchecked(`a${i}`)),
      }).filter((l) => l.startsWith('  '))
    expect(draw(12)).toHaveLength(12)
    expect(draw(12).at(-1)).toBe('  a11: not checked (is relative)')
    expect(draw(13)).toHaveLength(13)
    expect(draw(13).at(-1)).toBe('  … and 1 more locations not shown')
  })

  describe("the tool's definition", () => {
    const hash = `sha256:${'a'.repeat(64)}`
    const pinned = `sha256:${'b'.repeat(64)}`
    const lines = (d: Partial<DefinitionNotice>) =>
      drawPermissionRequest({
        tool: 't',
        paths: [],
        suggestedRule: undefined,
        shown: [],
        definition: { hash, pinned, changes: [], flags: [], grantSetAside: false, ...d },
      })
    const numbered = (what: string, n: number) => Array.from({ length: n }, (_, i) => `${what} ${i}`)

    it('says nothing of a definition with no change and no flag', () => {
      expect(lines({})).toEqual(drawPermissionRequest({ tool: 't', paths: [], suggestedRule: undefined, shown: [] }))
    })

    it('tells a definition that was never accepted from one that changed, and shows at most 12 changes', () => {
      const fresh = lines({ pinned: undefined, changes: numbered('change', 13) })
      expect(fresh.slice(1, 3)).toEqual([
        `Its definition is new and not accepted yet (sha256:aaaaaaaaaaaa…):`,
        '  change 0',
      ])
      expect(fresh.filter((l) => l.startsWith('  change'))).toEqual(numbered('  change', 12))
      expect(lines({ changes: ['one'] }).slice(1, 3)).toEqual([
        'Its definition changed since it was pinned (sha256:bbbbbbbbbbbb… is now sha256:aaaaaaaaaaaa…):',
        '  one',
      ])
    })

    it('shows at most 12 flags', () => {
      const flagged = lines({ flags: numbered('flag', 13) })
      expect(flagged[1]).toBe('Its definition is flagged:')
      expect(flagged.filter((l) => l.startsWith('  flag'))).toEqual(numbered('  flag', 12))
    })
  })
})
