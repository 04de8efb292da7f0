import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LEGAL_TOOL_NAME, isLegalToolName, toolNameMapping } from '../../src/mcp/index.js'

// Names as MCP servers write them: legal ones, dotted and slashed ones, long ones,
// names that clean up to the same thing, unicode, prototype names, the empty name.
const legalNameArb = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/)
const mcpNameArb: fc.Arbitrary<string> = fc.oneof(
  legalNameArb,
  fc.constantFrom(
    'files.read',
    'files_read',
    'files-read',
    'a/b',
    'a b',
    'a.b',
    'a_b',
    '',
    '__proto__',
    'constructor',
    'é',
    '😀',
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(128),
  ),
  fc.string({ maxLength: 128 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  // long names sharing a 64-character prefix: plain truncation merges them
  fc.tuple(fc.constant('p'.repeat(60)), fc.string({ maxLength: 10 })).map(([a, b]) => a + b),
)
const namesArb = fc.array(mcpNameArb, { maxLength: 20 })

const injective = (m: ReadonlyMap<string, string>): boolean => new Set(m.values()).size === m.size

describe('toolNameMapping', () => {
  it('maps every name to a legal one', () => {
    fc.assert(
      fc.property(namesArb, (names) => {
        const m = toolNameMapping(names)
        for (const n of names) expect(m.get(n)).toMatch(LEGAL_TOOL_NAME)
      }),
    )
  })

  it('is injective over any set of names', () => {
    fc.assert(fc.property(namesArb, (names) => injective(toolNameMapping(names))))
  })

  it('is deterministic and ignores listing order and repeats', () => {
    fc.assert(
      fc.property(namesArb, fc.infiniteStream(fc.nat()), (names, seeds) => {
        const shuffled = [...names, ...names.slice(0, 3)].sort(() => (seeds.next().value % 3) - 1)
        expect([...toolNameMapping(shuffled)].sort()).toEqual([...toolNameMapping(names)].sort())
      }),
    )
  })

  it('is the identity on legal names', () => {
    fc.assert(
      fc.property(fc.array(legalNameArb, { maxLength: 20 }), namesArb, (legal, others) => {
        const m = toolNameMapping([...others, ...legal])
        for (const n of legal) expect(m.get(n)).toBe(n)
      }),
    )
  })

  it('gives a changed name the same model-facing name whatever its neighbours', () => {
    // a name's mapping depends on the others only on a true collision
    fc.assert(
      fc.property(
        mcpNameArb.filter((n) => !isLegalToolName(n)),
        namesArb,
        (name, others) => {
          const alone = toolNameMapping([name]).get(name)
          const m = toolNameMapping([name, ...others])
          const collides = [...m.entries()].some(([k, v]) => k !== name && v === alone)
          if (!collides) expect(m.get(name)).toBe(alone)
        },
      ),
    )
  })

  it('keeps names readable: cleaned, cut to fit, hashed', () => {
    const m = toolNameMapping(['files.read', 'x'.repeat(128), ''])
    expect(m.get('files.read')).toMatch(/^files_read_[0-9a-f]{8}$/)
    expect(m.get('x'.repeat(128))).toMatch(/^x{55}_[0-9a-f]{8}$/)
    expect(m.get('')).toMatch(/^_[0-9a-f]{8}$/)
  })

  it('salts the hash when a derived name is already a legal listed name', () => {
    const derived = toolNameMapping(['a.b']).get('a.b') as string
    const m = toolNameMapping(['a.b', derived])
    expect(m.get(derived)).toBe(derived)
    expect(m.get('a.b')).not.toBe(derived)
    expect(m.get('a.b')).toMatch(LEGAL_TOOL_NAME)
  })

  it('the injectivity property can fail: plain cleaning and truncation merges names', () => {
    const truncate = (names: ReadonlyArray<string>): ReadonlyMap<string, string> =>
      new Map(names.map((n) => [n, n.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || '_']))
    const out = fc.check(fc.property(namesArb, (names) => injective(truncate(names))))
    expect(out.failed).toBe(true)
  })
})
