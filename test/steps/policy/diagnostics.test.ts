// What the policy says about itself: which diagnostics are its own, and each drawn in one line that a name
// from a server cannot break, lengthen without bound, or hide in.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { PolicyDiagnostic } from '../../../src/index.js'
import { drawPolicyDiagnostic } from '../../../src/index.js'
import { isPolicyDiagnostic } from '../../../src/combinators/Policy.js'

// what a terminal must never be handed raw: C0, DEL, C1, the line and paragraph separators, the direction
// marks and overrides, zero-width characters, the BOM
const raw = (line: string): ReadonlyArray<string> =>
  [...line].filter((c) => {
    const u = c.charCodeAt(0)
    return (
      u < 0x20 ||
      (u >= 0x7f && u <= 0x9f) ||
      u === 0x2028 ||
      u === 0x2029 ||
      (u >= 0x200b && u <= 0x200f) ||
      (u >= 0x202a && u <= 0x202e) ||
      (u >= 0x2066 && u <= 0x2069) ||
      u === 0xfeff
    )
  })

describe('isPolicyDiagnostic', () => {
  it("tells the policy's three diagnostics from the audit's and from any other tag", () => {
    const own = ['RulesNameNoTool', 'UnreadLocation', 'UnresolvedLocation']
    for (const _tag of own) expect(isPolicyDiagnostic({ _tag })).toBe(true)
    for (const _tag of ['CalledBeforeListing', 'NothingToAudit', 'SeenSetFull', 'ListingNotAnEither', ''])
      expect(isPolicyDiagnostic({ _tag })).toBe(false)
    fc.assert(fc.property(fc.string(), (_tag) => isPolicyDiagnostic({ _tag }) === own.includes(_tag)))
  })
})

describe('drawPolicyDiagnostic', () => {
  it('names a tool and an argument quoted, and says how to read it or set it aside', () => {
    expect(drawPolicyDiagnostic({ _tag: 'UnreadLocation', tool: 'git_add', arg: 'repo_path' })).toBe(
      'toolstack: "git_add" declares "repo_path", which looks like a location but is not read as one, so its ' +
        '"under" rules fail closed on every call; add "repo_path" to locationArgs to read it, or "!repo_path" ' +
        'if it is not a location',
    )
  })

  it('says an unresolved location was judged unknown', () => {
    expect(
      drawPolicyDiagnostic({ _tag: 'UnresolvedLocation', problem: 'passes through too many symbolic links' }),
    ).toBe(
      'toolstack: a location passes through too many symbolic links, so it was judged unknown and the rules failed closed on it (later ones are not said)',
    )
  })

  it('names exactly four without "…", and cuts at four', () => {
    const four = drawPolicyDiagnostic({ _tag: 'RulesNameNoTool', patterns: ['a', 'b', 'c', 'd'], tools: ['t'] })
    expect(four).toContain('rules ("a", "b", "c", "d") name none of the listed tools ("t"),')
    const five = drawPolicyDiagnostic({ _tag: 'RulesNameNoTool', patterns: ['a'], tools: ['t', 'u', 'v', 'w', 'x'] })
    expect(five).toContain('rules ("a") name none of the listed tools ("t", "u", "v", "w", …),')
  })

  it('cuts a name at 200 characters and a problem at 300, each marked with "…"', () => {
    const long = 'n'.repeat(1000)
    const unread = drawPolicyDiagnostic({ _tag: 'UnreadLocation', tool: long, arg: 'a' })
    expect(unread.startsWith(`toolstack: "${'n'.repeat(200)}…" declares "a",`)).toBe(true)
    const exact = drawPolicyDiagnostic({ _tag: 'UnreadLocation', tool: 'n'.repeat(200), arg: 'a' })
    expect(exact.startsWith(`toolstack: "${'n'.repeat(200)}" declares "a",`)).toBe(true)
    const unresolved = drawPolicyDiagnostic({ _tag: 'UnresolvedLocation', problem: 'p'.repeat(1000) })
    expect(unresolved).toBe(
      `toolstack: a location ${'p'.repeat(300)}…, so it was judged unknown and the rules failed closed on it (later ones are not said)`,
    )
    expect(drawPolicyDiagnostic({ _tag: 'UnresolvedLocation', problem: 'p'.repeat(300) })).toBe(
      `toolstack: a location ${'p'.repeat(300)}, so it was judged unknown and the rules failed closed on it (later ones are not said)`,
    )
  })

  it('draws one bounded line with no raw control or invisible character, whatever the names', () => {
    // names mostly of the characters that matter, so that every kind is drawn often
    const hostile = fc.string({
      unit: fc.oneof(
        fc.constantFrom(
          '\n',
          '\r',
          '\u001b',
          '\u0007',
          '\u007f',
          '\u0085',
          '\u2028',
          '\u202e',
          '\u200b',
          '\ufeff',
          '"',
        ),
        fc.constantFrom('a', 'é', ' ', '/'),
        fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      ),
      maxLength: 400,
    })
    const diagnosticArb: fc.Arbitrary<PolicyDiagnostic> = fc.oneof(
      fc.record({
        _tag: fc.constant('RulesNameNoTool' as const),
        patterns: fc.array(hostile, { maxLength: 8 }),
        tools: fc.array(hostile, { maxLength: 8 }),
      }),
      fc.record({ _tag: fc.constant('UnreadLocation' as const), tool: hostile, arg: hostile }),
      fc.record({ _tag: fc.constant('UnresolvedLocation' as const), problem: hostile }),
    )
    fc.assert(
      fc.property(diagnosticArb, (d) => {
        const line = drawPolicyDiagnostic(d)
        expect(raw(line)).toEqual([])
        // each name at most 201 characters, each escaped to at most 12 (a surrogate pair as two \uXXXX), and
        // quoted: eight names and the words around them, or the problem's 301 and its words
        expect(line.length).toBeLessThan(8 * (201 * 12 + 4) + 400)
      }),
    )
  })
})
