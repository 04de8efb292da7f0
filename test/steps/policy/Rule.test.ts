import { describe, expect, it } from 'vitest'
import * as t from 'io-ts/lib/index.js'
import { decodeRules, drawRule } from '../../../src/index.js'
import {
  AbsoluteDirectory,
  RULE_MEMBERS,
  RuleCodec,
  ToolGlob,
  decodeRule,
  drawRuleErrors,
  isBareDeny,
  isToolGlob,
  matchesTool,
} from '../../../src/steps/policy/Rule.js'

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

describe('isToolGlob', () => {
  it.each(['*', 'fs_*', 'fs_read', 'a', 'with space', 'q?[x]'])('accepts %j', (g) => {
    expect(isToolGlob(g)).toBe(true)
  })

  it.each(['', '*_read', 'f*s', '**', 'fs_**', '*fs*'])('refuses %j: a "*" anywhere but trailing', (g) => {
    expect(isToolGlob(g)).toBe(false)
  })
})

describe('decodeRule', () => {
  it('decodes each form of rule into a fresh frozen object, under in normal form', () => {
    const input = { tool: 'fs_*', decision: 'allow', under: '/p//src/', note: 'the project' }
    const out = decodeRule(input)
    expect(out).toEqual({
      _tag: 'Right',
      right: { tool: 'fs_*', decision: 'allow', under: '/p/src', note: 'the project' },
    })
    if (out._tag === 'Right') {
      expect(out.right).not.toBe(input)
      expect(Object.isFrozen(out.right)).toBe(true)
    }
    expect(decodeRule({ tool: '*', decision: 'ask' })).toEqual({ _tag: 'Right', right: { tool: '*', decision: 'ask' } })
  })

  it('holds exactly the members given: none undefined, none inherited', () => {
    const out = decodeRule({ tool: 'x', decision: 'allow' })
    expect(out._tag === 'Right' && Object.keys(out.right)).toEqual(['tool', 'decision'])
    const undefinedMembers = decodeRule({ tool: 'x', decision: 'allow', under: undefined, note: undefined })
    expect(undefinedMembers._tag === 'Right' && Object.keys(undefinedMembers.right)).toEqual(['tool', 'decision'])
    const inherited = decodeRule(
      Object.assign(Object.create({ note: 'from the prototype', under: '/etc' }) as object, {
        tool: 'x',
        decision: 'deny',
      }),
    )
    expect(inherited._tag === 'Right' && Object.keys(inherited.right)).toEqual(['tool', 'decision'])
  })

  it('names several unknown members at once', () => {
    expect(decodeRule({ tool: 'x', decision: 'deny', undr: '/etc', nte: 'n' })).toEqual({
      _tag: 'Left',
      left: 'rule has unknown members "undr", "nte" (a rule has: tool, decision, under, note, definition)',
    })
  })

  it('says a rule whose members cannot be listed cannot be read', () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('no keys')
        },
      },
    )
    expect(decodeRule(hostile)).toEqual({ _tag: 'Left', left: 'rule cannot be read' })
  })

  it('names an unknown member, never stripping it', () => {
    expect(decodeRule({ tool: 'x', decision: 'deny', undr: '/etc' })).toEqual({
      _tag: 'Left',
      left: 'rule has unknown member "undr" (a rule has: tool, decision, under, note, definition)',
    })
  })

  it('treats "__proto__" as a member name like any other', () => {
    const out = decodeRule(JSON.parse('{"tool":"x","decision":"allow","__proto__":{"under":"/"}}'))
    expect(out._tag).toBe('Left')
    if (out._tag === 'Left') expect(out.left).toContain('unknown member "__proto__"')
  })

  it('reads own members only: an inherited under neither narrows nor widens', () => {
    const rule = Object.assign(Object.create({ under: '/etc' }) as object, { tool: 'x', decision: 'deny' })
    expect(decodeRule(rule)).toEqual({ _tag: 'Right', right: { tool: 'x', decision: 'deny' } })
  })

  it.each([
    [{ tool: 'x', decision: 'alow' }, 'rule.decision must be "allow", "deny" or "ask", got the string "alow"'],
    [
      { tool: '*_read', decision: 'allow' },
      'rule.tool must be a tool name, a prefix glob ending in "*", or "*" (a "*" anywhere else is not supported), got the string "*_read"',
    ],
    [{ tool: '', decision: 'allow' }, 'rule.tool must be a tool name'],
    [{ decision: 'allow' }, 'rule.tool must be'],
    [{ tool: 'x' }, 'rule.decision must be'],
    [
      { tool: 'x', decision: 'allow', under: 'src' },
      'rule.under must be an absolute POSIX path without "..", NUL, backslash or "~", got the string "src"',
    ],
    [{ tool: 'x', decision: 'allow', under: '/p/../etc' }, 'rule.under must be an absolute POSIX path'],
    [{ tool: 'x', decision: 'allow', under: '~/p' }, 'rule.under must be an absolute POSIX path'],
    [{ tool: 'x', decision: 'allow', note: 7 }, 'rule.note must be string, got number 7'],
    [null, 'rule must be a rule { tool, decision, under?, note?, definition? }, got null'],
    [[], 'rule must be a rule'],
  ])('refuses %j, naming the problem', (input, message) => {
    const out = decodeRule(input)
    expect(out._tag).toBe('Left')
    if (out._tag === 'Left') expect(out.left).toContain(message)
  })

  it('reports every problem of a rule at once', () => {
    const out = decodeRule({ tool: 'f*o', decision: 'alow', extra: 1 })
    expect(out._tag === 'Left' && out.left.split('; ')).toHaveLength(3)
  })

  it('agrees with RuleCodec.is', () => {
    expect(RuleCodec.is({ tool: 'x', decision: 'allow' })).toBe(true)
    expect(RuleCodec.is({ tool: 'x', decision: 'allow', extra: true })).toBe(false)
    expect(RULE_MEMBERS).toEqual(['tool', 'decision', 'under', 'note', 'definition'])
  })
})

describe('ToolGlob and AbsoluteDirectory', () => {
  it('is() agrees with what they decode', () => {
    expect([ToolGlob.is('fs_*'), ToolGlob.is('*'), ToolGlob.is('*_x'), ToolGlob.is(''), ToolGlob.is(5)]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ])
    expect([
      AbsoluteDirectory.is('/p'),
      AbsoluteDirectory.is('/p/../q'),
      AbsoluteDirectory.is('p'),
      AbsoluteDirectory.is(5),
    ]).toEqual([true, false, false, false])
  })
})

describe('drawRuleErrors', () => {
  it('names where each problem is: array positions as [i], members by name', () => {
    const errors = (u: unknown, type: t.Decoder<unknown, unknown>): t.Errors => {
      const d = type.decode(u)
      if (d._tag === 'Right') throw new Error('expected a failure')
      return d.left
    }
    expect(drawRuleErrors('rules', errors([{ tool: 'x', decision: 'nope' }], t.array(RuleCodec)))).toBe(
      'rules[0].decision must be "allow", "deny" or "ask", got the string "nope"',
    )
    expect(drawRuleErrors('config', errors({ v2: 1, '2v': '' }, t.type({ v2: t.string, '2v': t.number })))).toBe(
      'config.v2 must be string, got number 1; config.2v must be number, got the string ""',
    )
  })

  it('says each problem once', () => {
    const e = t.string.decode(1)
    if (e._tag === 'Right') throw new Error('expected a failure')
    expect(drawRuleErrors('x', [...e.left, ...e.left])).toBe('x must be string, got number 1')
  })

  it('says "a valid value" when an error does not say what was expected', () => {
    expect(drawRuleErrors('x', [{ value: 1, context: [] }])).toBe('x must be a valid value, got number 1')
  })
})

describe('decodeRules', () => {
  it('names each bad rule by its index', () => {
    const out = decodeRules([{ tool: 'a', decision: 'allow' }, { tool: 'b', decision: 'nope' }, 5], 'rules')
    expect(out).toEqual({
      _tag: 'Left',
      left: 'rules[1].decision must be "allow", "deny" or "ask", got the string "nope"; rules[2] must be a rule { tool, decision, under?, note?, definition? }, got number 5',
    })
  })

  it('refuses anything but an array', () => {
    expect(decodeRules({ tool: 'a', decision: 'allow' }, 'grants')).toEqual({
      _tag: 'Left',
      left: 'grants must be an array of rules, got an object',
    })
  })

  it('calls the list "rules" unless told otherwise', () => {
    expect(decodeRules(5)).toEqual({ _tag: 'Left', left: 'rules must be an array of rules, got number 5' })
    expect(decodeRules([5])).toEqual({
      _tag: 'Left',
      left: 'rules[0] must be a rule { tool, decision, under?, note?, definition? }, got number 5',
    })
  })

  it('answers a frozen list', () => {
    const out = decodeRules([{ tool: 'a', decision: 'allow' }])
    expect(out._tag === 'Right' && Object.isFrozen(out.right)).toBe(true)
  })

  it('accepts the empty list', () => {
    expect(decodeRules([])).toEqual({ _tag: 'Right', right: [] })
  })
})

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

describe('matchesTool', () => {
  it('matches exactly, by trailing-* prefix, or everything', () => {
    expect(matchesTool('fs_read')('fs_read')).toBe(true)
    expect(matchesTool('fs_read')('fs_read_all')).toBe(false)
    expect(matchesTool('fs_*')('fs_read')).toBe(true)
    expect(matchesTool('fs_*')('fs_')).toBe(true)
    expect(matchesTool('fs_*')('web_get')).toBe(false)
    expect(matchesTool('fs_*')('fx_read')).toBe(false)
    expect(matchesTool('')('fs_read')).toBe(false)
    expect(matchesTool('*')('anything')).toBe(true)
    expect(matchesTool('__proto__')('__proto__')).toBe(true)
  })
})

describe('isBareDeny and drawRule', () => {
  it('knows a deny with no under', () => {
    expect(isBareDeny({ tool: 'x', decision: 'deny' })).toBe(true)
    expect(isBareDeny({ tool: 'x', decision: 'deny', under: '/etc' })).toBe(false)
    expect(isBareDeny({ tool: 'x', decision: 'ask' })).toBe(false)
  })

  it('draws a rule in a few words', () => {
    expect(drawRule({ tool: 'fs_*', decision: 'allow', under: '/p' })).toBe('allow "fs_*" under /p')
    expect(drawRule({ tool: 'rm', decision: 'deny', note: 'n' })).toBe('deny "rm"')
  })
})
