import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Roots, Rule } from '../../../src/index.js'
import type { Decision } from '../../../src/steps/policy/Rule.js'
import type { Evaluation } from '../../../src/steps/policy/evaluate.js'
import { matchesTool } from '../../../src/steps/policy/Rule.js'
import { decide, decisionWithoutArgs, evaluate, guardFiles, locateCall } from '../../../src/steps/policy/evaluate.js'
import { LOCATION_ARGS, containment } from '../../../src/kernel/paths.js'
import type { LocationResolver, Resolved } from '../../../src/kernel/resolve.js'

const allow = (tool: string, under?: string): Rule =>
  under === undefined ? { tool, decision: 'allow' } : { tool, decision: 'allow', under }
const deny = (tool: string, under?: string, note?: string): Rule => ({
  tool,
  decision: 'deny',
  ...(under === undefined ? {} : { under }),
  ...(note === undefined ? {} : { note }),
})
const ask = (tool: string, under?: string): Rule =>
  under === undefined ? { tool, decision: 'ask' } : { tool, decision: 'ask', under }

describe('evaluate', () => {
  describe('matching and strength', () => {
    it('asks when no rule matches, saying so', () => {
      expect(evaluate([allow('fs_read')], 'fs_write', { path: '/p/a' }, {})).toEqual({
        decision: 'ask',
        rule: undefined,
        why: 'no-match',
        paths: ['/p/a'],
        locations: [{ _tag: 'Known', arg: 'path', path: '/p/a' }],
        concerns: ['inside'],
        suggestedRule: { tool: 'fs_write', decision: 'allow', under: '/p' },
      })
      expect(evaluate([], 'x', {}, {}).why).toBe('no-match')
    })

    it('reports the rule that decided', () => {
      const r = allow('fs_*')
      const e = evaluate([r], 'fs_read', {}, {})
      expect([e.decision, e.rule, e.why]).toEqual(['allow', r, 'rule'])
    })

    it.each([
      [[allow('*'), deny('fs_write')], 'deny'],
      [[deny('fs_write'), allow('*')], 'deny'],
      [[allow('fs_*'), ask('fs_write')], 'ask'],
      [[ask('fs_write'), allow('fs_write')], 'ask'],
      [[ask('*'), deny('fs_*')], 'deny'],
    ] as const)('lets the strongest win whatever the order: %j', (rules, decision) => {
      expect(evaluate(rules, 'fs_write', {}, {}).decision).toBe(decision)
    })

    it('defaults roots to none', () => {
      expect(evaluate([allow('t', '/p')], 't', { path: 'a' }).why).toBe('unevaluable-path')
    })
  })

  describe('under', () => {
    const rules = [allow('fs_*', '/p')]

    it('allow fires only when every location is inside', () => {
      expect(evaluate(rules, 'fs_move', { from: '/p/a', to: '/p/b' }, {}).decision).toBe('allow')
      expect(evaluate(rules, 'fs_move', { from: '/p/a', to: '/q/b' }, {})).toMatchObject({
        decision: 'ask',
        why: 'no-match',
      })
      expect(evaluate(rules, 'fs_read', { path: '/p2/a' }, {}).decision).toBe('ask')
    })

    it('allow does not fire on an unknown location, and says why', () => {
      for (const args of [{ path: '/p/../etc' }, { path: 'rel' }, { path: 3 }, {}, { url: 'x' }, undefined]) {
        expect(evaluate(rules, 'fs_read', args, {})).toMatchObject({
          decision: 'ask',
          rule: undefined,
          why: 'unevaluable-path',
        })
      }
    })

    it('deny fires on any location inside', () => {
      const e = evaluate(
        [allow('*'), deny('fs_*', '/p/.git', 'history is read-only')],
        'fs_move',
        { from: '/p/a', to: '/p/.git/x' },
        {},
      )
      expect(e).toMatchObject({ decision: 'deny', why: 'rule', rule: { note: 'history is read-only' } })
    })

    it('deny and ask fire on an unknown location: they fail closed', () => {
      expect(evaluate([allow('*'), deny('fs_*', '/etc')], 'fs_read', { path: '../etc/passwd' }, {})).toMatchObject({
        decision: 'deny',
        why: 'unevaluable-path',
      })
      expect(evaluate([allow('*'), ask('fs_*', '/etc')], 'fs_read', { path: 'a\u0000' }, {})).toMatchObject({
        decision: 'ask',
        why: 'unevaluable-path',
      })
      expect(evaluate([allow('*'), deny('fs_*', '/etc')], 'fs_read', {}, {})).toMatchObject({
        decision: 'deny',
        why: 'unevaluable-path',
      })
    })

    it('deny and ask do not fire when every location is outside', () => {
      expect(evaluate([allow('*'), deny('fs_*', '/etc')], 'fs_read', { path: '/etcetera' }, {}).decision).toBe('allow')
    })

    it('prefers a rule that fired on its own terms over one that failed closed', () => {
      const e = evaluate(
        [deny('fs_*', '/etc', 'unknown'), deny('fs_*', '/p', 'inside')],
        'fs_move',
        { from: '/p/a', to: 'b' },
        {},
      )
      expect(e).toMatchObject({ why: 'rule', rule: { note: 'inside' } })
    })

    describe('the rule reported among rules of one strength, whatever their order', () => {
      const reported = (rules: ReadonlyArray<Rule>, tool: string, args: unknown): Rule | undefined => {
        const forward = evaluate(rules, tool, args, {}).rule
        expect(evaluate([...rules].reverse(), tool, args, {}).rule).toEqual(forward)
        return forward
      }

      it('is the one with the deeper under', () => {
        expect(reported([allow('fs_*', '/p'), allow('fs_*', '/p/src')], 'fs_read', { path: '/p/src/a' })).toEqual(
          allow('fs_*', '/p/src'),
        )
        expect(reported([deny('fs_*', '/'), deny('fs_*', '/p')], 'fs_read', { path: '/p/a' })).toEqual(
          deny('fs_*', '/p'),
        )
        // deeper counts directories, not characters
        expect(
          reported([deny('fs_*', '/abcdef'), deny('fs_*', '/p/q')], 'fs_move', { from: '/abcdef/x', to: '/p/q/y' }),
        ).toEqual(deny('fs_*', '/p/q'))
        // an under, even "/", is more specific than none
        expect(reported([deny('fs_*'), deny('fs_*', '/')], 'fs_read', { path: '/p/a' })).toEqual(deny('fs_*', '/'))
      })

      it('then the exact name over a glob, and the longer glob over a shorter one', () => {
        expect(reported([allow('ab'), allow('ab*')], 'ab', {})).toEqual(allow('ab'))
        expect(reported([allow('fs_*'), allow('fs_r*')], 'fs_read', {})).toEqual(allow('fs_r*'))
        expect(reported([allow('*'), allow('f*')], 'fs_read', {})).toEqual(allow('f*'))
      })

      it('then a fixed textual order, under and note included', () => {
        // which one is the textual order's business; that it is the same one either way is the promise
        expect(reported([deny('x', undefined, 'b'), deny('x', undefined, 'a')], 'x', {})?.note).toMatch(/^[ab]$/)
        expect(reported([deny('x', undefined, 'a'), deny('x')], 'x', {})?.tool).toBe('x')
        expect(
          reported([deny('fs_*', '/q'), deny('fs_*', '/p')], 'fs_move', { from: '/p/a', to: '/q/b' })?.under,
        ).toMatch(/^\/[pq]$/)
      })
    })

    it('resolves relative locations against the roots, longest prefix first', () => {
      const roots: Roots = { '': '/srv', fs_: '/p' }
      expect(evaluate(rules, 'fs_read', { path: 'src/a.ts' }, roots)).toMatchObject({
        decision: 'allow',
        paths: ['/p/src/a.ts'],
      })
      expect(evaluate([allow('web_*', '/srv')], 'web_get', { path: 'x' }, roots).decision).toBe('allow')
    })
  })

  describe('paths and suggestedRule', () => {
    it('lists the readable paths once each, in path/from/to order', () => {
      expect(evaluate([], 'm', { to: '/a', from: '/a', path: 'x' }, {}).paths).toEqual(['/a'])
    })

    it('suggests the tool under the deepest directory containing every path', () => {
      expect(evaluate([], 'fs_move', { from: '/p/src/a', to: '/p/lib/b' }, {}).suggestedRule).toEqual({
        tool: 'fs_move',
        decision: 'allow',
        under: '/p',
      })
    })

    it('suggests the bare tool only for a tool known to take no location', () => {
      const declaresNone = { names: LOCATION_ARGS, declared: new Set(['query']) }
      expect(evaluate([], 'web_get', { query: 'x' }, {}, declaresNone).suggestedRule).toEqual({
        tool: 'web_get',
        decision: 'allow',
      })
      // a tool that takes one, called without it, may act anywhere its server chooses: no "always"
      const declaresOne = { names: LOCATION_ARGS, declared: new Set(['path']) }
      expect(evaluate([], 'fs_list', {}, {}, declaresOne).suggestedRule).toBeUndefined()
      // nor when its declaration is not known
      expect(
        evaluate([], 'web_get', { query: 'x' }, {}, { names: LOCATION_ARGS, declared: undefined }).suggestedRule,
      ).toBeUndefined()
    })

    it('offers no "always" for a location it could not read, or one off this machine', () => {
      expect(evaluate([], 'fs_read', { path: '../x' }, { fs_: '/p' }).suggestedRule).toBeUndefined()
      expect(evaluate([], 'fs_read', { path: '../x' }, {}).suggestedRule).toBeUndefined()
      expect(evaluate([], 'fs_read', 'garbage', {}).suggestedRule).toBeUndefined()
      expect(evaluate([], 'web_get', { url: 'https://x' }, {}).suggestedRule).toBeUndefined()
      expect(evaluate([], 'fs_move', { source: '/p/a', destination: 'rel' }, {}).suggestedRule).toBeUndefined()
    })

    it("suggests the directory a path is in, so the next file beside it is covered too, never above the tool's root", () => {
      const under = (args: unknown, roots = {}) => evaluate([], 'fs_write', args, roots).suggestedRule?.under
      expect(under({ path: '/w/a' })).toBe('/w')
      const always = evaluate([], 'fs_write', { path: '/w/a' }, {}).suggestedRule
      expect(evaluate(always === undefined ? [] : [always], 'fs_write', { path: '/w/b' }, {}).decision).toBe('allow')
      expect(under({ from: '/w/src/a.ts', to: '/w/lib/b.ts' })).toBe('/w')
      expect(under({ path: 'a.txt' }, { fs_: '/w' })).toBe('/w')
      // the root itself named: its parent would be above the root, so the root it is
      expect(under({ path: '/w' }, { fs_: '/w' })).toBe('/w')
      expect(under({ path: '/w/deep/er/x' }, { fs_: '/w' })).toBe('/w/deep/er')
      // outside the root, nothing to clamp to
      expect(under({ path: '/elsewhere/x' }, { fs_: '/w' })).toBe('/elsewhere')
    })

    it('a suggestedRule matches the very call it was made for', () => {
      const args = { from: '/p/src/a', to: '/p/lib/b' }
      const { suggestedRule } = evaluate([], 'fs_move', args, {})
      expect(suggestedRule).toBeDefined()
      expect(evaluate(suggestedRule === undefined ? [] : [suggestedRule], 'fs_move', args, {})).toMatchObject({
        decision: 'allow',
        why: 'rule',
      })
    })
  })
})

// -------------------------------------------------------------------------------------
// properties
// -------------------------------------------------------------------------------------

const TOOLS = ['fs_read', 'fs_write', 'web_get']
const DIRS = ['/', '/p', '/p/src', '/q', '/p2']

const ruleArb: fc.Arbitrary<Rule> = fc
  .record({
    tool: fc.constantFrom('*', 'fs_*', 'fs_read', 'fs_write', 'web_*', 'web_get', 'f*'),
    decision: fc.constantFrom<Decision>('allow', 'deny', 'ask'),
    under: fc.option(fc.constantFrom(...DIRS), { nil: undefined }),
    note: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
  })
  .map(({ tool, decision, under, note }) => ({
    tool,
    decision,
    ...(under === undefined ? {} : { under }),
    ...(note === undefined ? {} : { note }),
  }))

const locationArb: fc.Arbitrary<unknown> = fc.constantFrom(
  '/p/a',
  '/p/src/b',
  '/q/c',
  '/p2',
  'rel/x',
  '../up',
  '/p/../q',
  'a\\b',
  7,
  null,
)

const argsArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ path: locationArb, from: locationArb, to: locationArb }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, 'garbage', [1]) },
)

const rootsArb: fc.Arbitrary<Roots> = fc.constantFrom({}, { fs_: '/p' }, { '': '/q', fs_: '/p/src' })

type Evaluate = (rules: ReadonlyArray<Rule>, tool: string, args: unknown, roots: Roots) => Evaluation

/** Any permutation of the rules gives the same evaluation. */
const orderIndependent = (ev: Evaluate) =>
  fc.property(
    fc
      .array(ruleArb, { maxLength: 6 })
      .chain((rules) =>
        fc.tuple(fc.constant(rules), fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length })),
      ),
    fc.constantFrom(...TOOLS),
    argsArb,
    rootsArb,
    ([rules, permuted], tool, args, roots) => {
      expect(ev(permuted, tool, args, roots)).toEqual(ev(rules, tool, args, roots))
    },
  )

/** The deliberately broken engine the property must catch: the first matching rule wins. */
const firstMatchWins: Evaluate = (rules, tool, args, roots) => {
  const base = evaluate([], tool, args, roots)
  for (const rule of rules) {
    const e = evaluate([rule], tool, args, roots)
    if (e.rule !== undefined) return e
  }
  return base
}

describe('evaluate (properties)', () => {
  it('is order-independent: any permutation of the rules gives the same evaluation', () => {
    fc.assert(orderIndependent(evaluate))
  })

  it('the order-independence property catches a first-match-wins engine', () => {
    const out = fc.check(orderIndependent(firstMatchWins), { numRuns: 500 })
    expect(out.failed).toBe(true)
  })

  it('never lets an allow rule with under fire when a location is outside or unknown', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 6 }),
        fc.constantFrom(...TOOLS),
        argsArb,
        rootsArb,
        (rules, tool, args, roots) => {
          const e = evaluate(rules, tool, args, roots)
          if (e.decision !== 'allow' || e.rule?.under === undefined) return
          const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>
          const root = roots['fs_'] !== undefined && tool.startsWith('fs_') ? roots['fs_'] : roots['']
          const present = ['path', 'from', 'to'].filter((k) => Object.prototype.hasOwnProperty.call(a, k))
          expect(present.length).toBeGreaterThan(0)
          for (const k of present) expect(containment(e.rule.under, a[k], root)).toBe('inside')
        },
      ),
    )
  })

  it('denies whenever a matching bare deny rule is present', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 6 }),
        fc.constantFrom(...TOOLS),
        argsArb,
        rootsArb,
        (rules, tool, args, roots) => {
          const bare = rules.some((r) => r.decision === 'deny' && r.under === undefined && matchesTool(r.tool)(tool))
          if (bare) expect(evaluate(rules, tool, args, roots).decision).toBe('deny')
        },
      ),
    )
  })
})

describe('decisionWithoutArgs', () => {
  const ruleArb = fc.record(
    {
      tool: fc.constantFrom('*', 'fs_*', 'fs_read', 'fs_write', 'web_*'),
      decision: fc.constantFrom<'allow' | 'deny' | 'ask'>('allow', 'deny', 'ask'),
      under: fc.constantFrom('/srv', '/tmp'),
    },
    { requiredKeys: ['tool', 'decision'] },
  )

  it('the strongest matching rule decides, whatever the order', () => {
    for (const rules of [
      [deny('*'), allow('fs_read')],
      [ask('fs_*'), allow('fs_read')],
      [allow('fs_read'), ask('fs_*'), deny('x')],
    ]) {
      const expected = rules.some((r) => r.decision === 'deny' && r.tool !== 'x') ? 'deny' : 'ask'
      expect(decisionWithoutArgs(rules, 'fs_read')).toBe(expected)
      expect(decisionWithoutArgs([...rules].reverse(), 'fs_read')).toBe(expected)
    }
  })

  it('agrees with evaluate whenever it answers, whatever the arguments', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 5 }),
        fc.constantFrom('fs_read', 'fs_write', 'web_get', 'other'),
        fc.jsonValue(),
        (rules, tool, args) => {
          const quick = decisionWithoutArgs(rules, tool)
          if (quick !== undefined) expect(quick).toBe(evaluate(rules, tool, args).decision)
          else expect(rules.some((r) => r.under !== undefined)).toBe(true)
        },
      ),
    )
  })
})

// -------------------------------------------------------------------------------------
// a resolver's answers: where a location leads, the link it ends on, the links it passes through
// -------------------------------------------------------------------------------------

/** A resolver that answers from a table (anything else as itself), and records what it was asked. */
const scripted = (table: ReadonlyArray<readonly [string, Resolved]>, asked: Array<string> = []): LocationResolver => {
  const answers = new Map(table)
  return {
    resolve: (p) => {
      asked.push(p)
      return answers.get(p) ?? { path: p }
    },
  }
}

describe('locateCall with a resolver', () => {
  it('keeps every way a location reaches the filesystem that differs from where it leads', () => {
    const resolver = scripted([
      ['/w/l', { path: '/real/x', entry: '/w/l', through: ['/w/t'] }],
      ['/w/x', { path: '/w/x', entry: '/w/x' }],
      ['/w/y', { path: '/w/z' }],
    ])
    expect(
      locateCall('t', { path: '/w/l', to: 'x', from: '/w/y' }, { '': '/w' }, undefined, resolver).locations,
    ).toEqual([
      {
        _tag: 'Known',
        arg: 'path',
        path: '/real/x',
        sent: '/w/l',
        forms: { written: '/w/l', link: '/w/l', through: ['/w/t'] },
      },
      { _tag: 'Known', arg: 'from', path: '/w/z', sent: '/w/y', forms: { written: '/w/y' } },
      // an entry that is where it leads is no other way; what the model wrote is kept
      { _tag: 'Known', arg: 'to', path: '/w/x', sent: 'x' },
    ])
  })

  it('resolves what an unread location reads as, and leaves the rest as read', () => {
    const resolver = scripted([['/w/l', { path: '/real/x' }]])
    const scope = { names: LOCATION_ARGS, declared: new Set(['repo_path', 'path']) }
    expect(locateCall('t', { repo_path: '/w/l', path: 3 }, {}, scope, resolver).locations).toEqual([
      { _tag: 'Unknown', arg: 'path', problem: 'is not a string (number)' },
      {
        _tag: 'Unread',
        arg: 'repo_path',
        reading: { _tag: 'Known', arg: 'repo_path', path: '/real/x', sent: '/w/l', forms: { written: '/w/l' } },
      },
    ])
    expect(locateCall('t', {}, {}, { names: LOCATION_ARGS, declared: new Set(['path']) }, resolver).locations).toEqual([
      { _tag: 'Missing' },
    ])
  })

  it('uses the resolver made for one judgement, for the locations and the directories alike', () => {
    const asked: Array<string> = []
    let made = 0
    const given: LocationResolver = {
      resolve: () => {
        throw new Error('the shared resolver was asked')
      },
      forOneJudgement: () => {
        made++
        return scripted([['/d', { path: '/D' }]], asked)
      },
    }
    const located = locateCall('t', { path: '/d/a' }, {}, undefined, given)
    expect(made).toBe(1)
    expect(located.dir('/d')).toBe('/D')
    expect(asked).toEqual(['/d/a', '/d'])
  })

  it("resolves a rule's directory once per call, however often it is asked", () => {
    const asked: Array<string> = []
    const located = locateCall('t', {}, {}, undefined, scripted([['/d', { path: '/D' }]], asked))
    expect([located.dir('/d'), located.dir('/d'), located.dir('/e'), located.dir('/d')]).toEqual([
      '/D',
      '/D',
      '/e',
      '/D',
    ])
    expect(asked).toEqual(['/d', '/e'])
  })

  it('says whether the tool declares a location the rules read', () => {
    const declares = (declared: ReadonlyArray<string> | undefined, names: ReadonlyArray<string> = LOCATION_ARGS) =>
      locateCall('t', {}, {}, { names, declared: declared === undefined ? undefined : new Set(declared) })
        .declaresLocations
    expect(declares(['query'])).toBe(false)
    expect(declares([])).toBe(false)
    expect(declares(['query', 'to'])).toBe(true)
    expect(declares(['repo'], ['repo'])).toBe(true)
    expect(declares(['path'], ['repo'])).toBe(false)
    expect(declares(undefined)).toBe(true)
    expect(locateCall('t', {}, {}).declaresLocations).toBe(true)
  })
})

describe('decide with a resolver: a location touches a directory every way it reaches it', () => {
  const judge = (
    rules: ReadonlyArray<Rule>,
    path: string,
    answer: Resolved,
    extra: ReadonlyArray<readonly [string, Resolved]> = [],
  ) => decide(rules, locateCall('t', { path }, {}, undefined, scripted([[path, answer], ...extra])))

  it('where it leads', () => {
    expect(judge([deny('t', '/s')], '/w/l', { path: '/s/x' }).decision).toBe('deny')
    expect(judge([deny('t', '/s/x/y')], '/w/l', { path: '/s/x' }).decision).toBe('deny')
    expect(judge([deny('t', '/s')], '/w/l', { path: '/t/x' }).decision).toBe('ask')
  })

  it('the link it ends on (its directory resolved): inside the directory, or holding it', () => {
    // written through a link to /s: neither as written nor where it leads is in /s, the link itself is
    expect(judge([deny('t', '/s')], '/w/l', { path: '/t/x', entry: '/s/l' }).decision).toBe('deny')
    expect(judge([deny('t', '/s/l/in')], '/w/l', { path: '/t/x', entry: '/s/l' }).decision).toBe('deny')
    expect(judge([deny('t', '/s')], '/w/l', { path: '/t/x', entry: '/u/l' }).decision).toBe('ask')
  })

  it('as written, against the directory as written', () => {
    // the rule's directory is itself a link: the path as written lies in it as written
    const dirIsLink: ReadonlyArray<readonly [string, Resolved]> = [['/s', { path: '/vault' }]]
    expect(judge([deny('t', '/s')], '/s/a', { path: '/t/a' }, dirIsLink).decision).toBe('deny')
    expect(judge([deny('t', '/s/a/b')], '/s/a', { path: '/t/a' }, dirIsLink).decision).toBe('deny')
    expect(judge([deny('t', '/s')], '/r/a', { path: '/t/a' }, dirIsLink).decision).toBe('ask')
    // and where the directory leads, the location's own form
    expect(judge([deny('t', '/s')], '/w/a', { path: '/vault/a' }, dirIsLink).decision).toBe('deny')
  })

  it('a link passed through on the way, any of them', () => {
    expect(judge([deny('t', '/s')], '/w/l', { path: '/t/x', through: ['/u', '/s/m'] }).decision).toBe('deny')
    expect(judge([deny('t', '/s')], '/w/l', { path: '/t/x', through: ['/u', '/v'] }).decision).toBe('ask')
    // a link passed through that holds the directory is not in it: only what lies in it is traversed
    expect(judge([deny('t', '/s/m')], '/w/l', { path: '/t/x', through: ['/s'] }).decision).toBe('ask')
  })

  it('is inside an allowed directory only when where it leads and the link it ends on both are', () => {
    expect(judge([allow('t', '/w')], '/w/l', { path: '/w/x', entry: '/w/l' }).decision).toBe('allow')
    expect(judge([allow('t', '/w')], '/w/l', { path: '/w/x' }).decision).toBe('allow')
    expect(judge([allow('t', '/w')], '/o/l', { path: '/w/x', entry: '/o/l' }).decision).toBe('ask')
    expect(judge([allow('t', '/w')], '/w/l', { path: '/o/x', entry: '/w/l' }).decision).toBe('ask')
  })

  it('names the concern of each location the same way', () => {
    const located = locateCall(
      't',
      { from: '/w/l', to: '/w/a', path: '/w/b' },
      {},
      undefined,
      scripted([
        ['/w/l', { path: '/w/x', entry: '/w/l', through: ['/s/m'] }],
        ['/w/a', { path: '/o/a' }],
      ]),
    )
    expect(decide([allow('t', '/w'), deny('t', '/s')], located).concerns).toEqual(['inside', 'touches', 'outside'])
    expect(decide([allow('t', '/w')], located).concerns).toEqual(['inside', 'inside', 'outside'])
    expect(decide([deny('t', '/s')], located).concerns).toEqual(['inside', 'touches', 'inside'])
  })
})

describe('concerns and protected files: what each rule and location counts for', () => {
  it("counts only the rules for this tool that name a directory, an allow's concern met by any one of them", () => {
    const concerns = (rules: ReadonlyArray<Rule>) => evaluate(rules, 't', { path: '/w/a' }, {}).concerns
    // a rule with no directory says nothing of where a location stands
    expect(concerns([allow('t')])).toEqual(['inside'])
    expect(concerns([deny('t'), allow('t', '/w')])).toEqual(['inside'])
    // a rule for another tool neither
    expect(concerns([deny('other', '/w')])).toEqual(['inside'])
    expect(concerns([allow('other', '/v')])).toEqual(['inside'])
    // inside one allowed directory is enough
    expect(concerns([allow('t', '/v'), allow('t', '/w')])).toEqual(['inside'])
    expect(concerns([allow('t', '/v')])).toEqual(['outside'])
  })

  it('a key the tool does not declare cannot touch a protected file, and is not said to be unchecked', () => {
    const files = [{ path: '/etc/toolstack', what: 'the policy' }]
    const scope = { names: LOCATION_ARGS, declared: new Set(['path']) }
    expect(guardFiles(files)(locateCall('t', { path: '/srv/a', work_dir: '/etc' }, {}, scope))).toBeUndefined()
    expect(guardFiles(files)(locateCall('t', { path: 3, work_dir: '/etc' }, {}, scope))).toEqual({
      _tag: 'Unchecked',
      unevaluable: ['path is not a string (number)'],
    })
  })
})
