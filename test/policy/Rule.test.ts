import { describe, expect, it } from 'vitest'
import { RULE_MEMBERS, RuleCodec, decodeRule, decodeRules, drawRule, isBareDeny, isToolGlob, matchesTool } from '../../src/index.js'

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
    expect(out).toEqual({ _tag: 'Right', right: { tool: 'fs_*', decision: 'allow', under: '/p/src', note: 'the project' } })
    if (out._tag === 'Right') {
      expect(out.right).not.toBe(input)
      expect(Object.isFrozen(out.right)).toBe(true)
    }
    expect(decodeRule({ tool: '*', decision: 'ask' })).toEqual({ _tag: 'Right', right: { tool: '*', decision: 'ask' } })
  })

  it('names an unknown member, never stripping it', () => {
    expect(decodeRule({ tool: 'x', decision: 'deny', undr: '/etc' })).toEqual({
      _tag: 'Left',
      left: 'rule has unknown member "undr" (a rule has: tool, decision, under, note)',
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
    [{ tool: '*_read', decision: 'allow' }, 'rule.tool must be a tool name, a prefix glob ending in "*", or "*" (a "*" anywhere else is not supported), got the string "*_read"'],
    [{ tool: '', decision: 'allow' }, 'rule.tool must be a tool name'],
    [{ decision: 'allow' }, 'rule.tool must be'],
    [{ tool: 'x' }, 'rule.decision must be'],
    [{ tool: 'x', decision: 'allow', under: 'src' }, 'rule.under must be an absolute POSIX path without "..", NUL, backslash or "~", got the string "src"'],
    [{ tool: 'x', decision: 'allow', under: '/p/../etc' }, 'rule.under must be an absolute POSIX path'],
    [{ tool: 'x', decision: 'allow', under: '~/p' }, 'rule.under must be an absolute POSIX path'],
    [{ tool: 'x', decision: 'allow', note: 7 }, 'rule.note must be string, got number 7'],
    [null, 'rule must be a rule { tool, decision, under?, note? }, got null'],
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
    expect(RULE_MEMBERS).toEqual(['tool', 'decision', 'under', 'note'])
  })
})

describe('decodeRules', () => {
  it('names each bad rule by its index', () => {
    const out = decodeRules([{ tool: 'a', decision: 'allow' }, { tool: 'b', decision: 'nope' }, 5], 'rules')
    expect(out).toEqual({
      _tag: 'Left',
      left: 'rules[1].decision must be "allow", "deny" or "ask", got the string "nope"; rules[2] must be a rule { tool, decision, under?, note? }, got number 5',
    })
  })

  it('refuses anything but an array', () => {
    expect(decodeRules({ tool: 'a', decision: 'allow' }, 'grants')).toEqual({ _tag: 'Left', left: 'grants must be an array of rules, got an object' })
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
