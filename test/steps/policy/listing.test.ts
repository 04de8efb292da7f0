import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Rule, ToolDeclaration } from '../../../src/index.js'
import { rulesNameNoTool, withoutRefusedTools } from '../../../src/steps/policy/listing.js'
import { decl } from '../../support/fakes.js'

// a declaration whose name cannot be read: the policy does not judge it
const UNNAMED = { type: 'function', function: { name: 3 } } as unknown as ToolDeclaration
const NAMELESS = { type: 'function' } as unknown as ToolDeclaration

const LISTING: ReadonlyArray<ToolDeclaration> = [decl('fs_read'), decl('fs_write'), decl('rm'), UNNAMED, NAMELESS]

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('withoutRefusedTools', () => {
  it('leaves out what a bare deny refuses, in order, keeping what it cannot name', () => {
    expect(withoutRefusedTools([{ tool: 'rm', decision: 'deny' }])(LISTING)).toEqual([
      decl('fs_read'),
      decl('fs_write'),
      UNNAMED,
      NAMELESS,
    ])
    expect(withoutRefusedTools([{ tool: 'fs_*', decision: 'deny' }])(LISTING)).toEqual([decl('rm'), UNNAMED, NAMELESS])
    expect(withoutRefusedTools([{ tool: '*', decision: 'deny' }])(LISTING)).toEqual([UNNAMED, NAMELESS])
  })

  it('answers the very same array when nothing is refused', () => {
    const noneRefused: ReadonlyArray<ReadonlyArray<Rule>> = [
      [],
      [{ tool: 'web_get', decision: 'deny' }],
      [{ tool: 'rm', decision: 'deny', under: '/p' }],
      [{ tool: 'rm', decision: 'ask' }],
    ]
    for (const rules of noneRefused) expect(withoutRefusedTools(rules)(LISTING)).toBe(LISTING)
  })

  it('keeps exactly the tools no bare deny names, whatever the rules', () => {
    const names = ['a', 'ab', 'b', 'ba']
    const ruleArb = fc.record({
      tool: fc.constantFrom('a', 'a*', 'b', '*', 'c'),
      decision: fc.constantFrom('allow' as const, 'deny' as const, 'ask' as const),
    })
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 3 }), fc.subarray(names), (rules, listed) => {
        const listing = listed.map((n) => decl(n))
        const refuses = (n: string) =>
          rules.some(
            (r) =>
              r.decision === 'deny' &&
              (r.tool === '*' || r.tool === n || (r.tool.endsWith('*') && n.startsWith(r.tool.slice(0, -1)))),
          )
        const out = withoutRefusedTools(rules)(listing)
        expect(out.map((d) => d.function.name)).toEqual(listed.filter((n) => !refuses(n)))
        if (out.length === listing.length) expect(out).toBe(listing)
      }),
    )
  })
})

describe('rulesNameNoTool', () => {
  it('is true when there are tools and rules, and no rule names a tool', () => {
    expect(rulesNameNoTool([{ tool: 'read_file', decision: 'allow' }])([decl('fs_read_file'), UNNAMED])).toBe(true)
  })

  it('is false when a rule names a listed tool', () => {
    expect(
      rulesNameNoTool([
        { tool: 'web_*', decision: 'allow' },
        { tool: 'fs_*', decision: 'deny' },
      ])([UNNAMED, decl('fs_read_file')]),
    ).toBe(false)
  })

  it('is false when there are no rules', () => {
    expect(rulesNameNoTool([])([decl('fs_read_file')])).toBe(false)
  })

  it('is false when no listed tool has a readable name', () => {
    expect(rulesNameNoTool([{ tool: 'read_file', decision: 'allow' }])([])).toBe(false)
    expect(rulesNameNoTool([{ tool: 'read_file', decision: 'allow' }])([UNNAMED, NAMELESS])).toBe(false)
  })
})
