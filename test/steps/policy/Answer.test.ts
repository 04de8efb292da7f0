import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Rule } from '../../../src/index.js'
import { decodeAnswer, recordGrant } from '../../../src/steps/policy/Answer.js'

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
    },
    { requiredKeys: ['tool', 'decision'] },
  )

  it('adds a rule that differs in any member, and keeps the very same list for an equal one', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 4 }), ruleArb, (grants, rule) => {
        const same = (a: Rule, b: Rule) =>
          a.tool === b.tool && a.decision === b.decision && a.under === b.under && a.note === b.note
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
  ] as const)('tells rules apart by their %s', (_, change) => {
    const base: Rule = { tool: 'fs_write', decision: 'allow', under: '/p', note: 'n' }
    const other = { ...base, ...change } as Rule
    const grants = recordGrant(base)([])
    expect(recordGrant(other)(grants)).toEqual([base, other])
    expect(recordGrant({ ...base })(grants)).toBe(grants)
  })
})
