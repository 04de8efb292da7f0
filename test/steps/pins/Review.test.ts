import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { ToolDefinition } from '../../../src/steps/pins/Definition.js'
import { hashDefinition, pinOf } from '../../../src/steps/pins/Definition.js'
import { emptyBook, pinFirst } from '../../../src/steps/pins/Book.js'
import type { ListedTool, ServerOf, Standing } from '../../../src/steps/pins/Review.js'
import { grantHolds, noticeOf, reviewListing } from '../../../src/steps/pins/Review.js'

const AT = '2026-12-05T00:00:00.000Z'
const listed = (definition: ToolDefinition, server?: ServerOf): ListedTool => ({
  tool: definition.name,
  definition,
  ...hashDefinition(definition),
  ...(server === undefined ? {} : { server }),
})
const noFlags = () => []
const add = { name: 'ev_add', description: 'Adds two numbers', inputSchema: { properties: { a: {}, b: {} } } }
const read = { name: 'fs_read', description: 'Reads a file', inputSchema: { properties: { path: {} } } }

// routes by prefix, as a registry does
const byPrefix = (tool: string): ServerOf | undefined => {
  const [prefix, ...rest] = tool.split('_')
  return prefix === 'ev' || prefix === 'fs' ? { server: prefix, name: rest.join('_') } : undefined
}

describe('reviewListing', () => {
  it('pins what it has never seen; a definition equal to its pin is unchanged', () => {
    const first = reviewListing(emptyBook, [listed(add), listed(read)], 'hold', AT, noFlags)
    expect(first.first.map((p) => p.tool)).toEqual(['ev_add', 'fs_read'])
    expect(first.changed).toEqual([])
    const book = pinFirst(first.first)(emptyBook)[1]
    const again = reviewListing(book, [listed(add), listed(read)], 'hold', AT, noFlags)
    expect([again.first, again.changed]).toEqual([[], []])
    expect(again.standings.get('ev_add')).toEqual({
      tool: 'ev_add',
      hash: listed(add).hash,
      pinned: listed(add).hash,
      flags: [],
    })
  })

  it('a changed definition is a change, with what changed and what follows', () => {
    const book = pinFirst([pinOf('ev_add', add, AT)])(emptyBook)[1]
    const widened = { ...add, inputSchema: { properties: { a: {}, b: {}, sidenote: {} } } }
    const r = reviewListing(book, [listed(widened)], 'hold', AT, noFlags)
    expect(r.first).toEqual([])
    expect(r.changed).toHaveLength(1)
    expect(r.changed[0]?.standing).toMatchObject({
      tool: 'ev_add',
      hash: listed(widened).hash,
      pinned: listed(add).hash,
      action: 'hold',
      change: { added: ['sidenote'], removed: [] },
    })
  })

  it('a renaming within one server is a change naming the tool it renames; not across servers, nor a new prefix', () => {
    const book = pinFirst([pinOf('ev_add', add, AT)])(emptyBook)[1]
    const renamed = { ...add, name: 'ev_sum' }
    const r = reviewListing(book, [listed(renamed, byPrefix('ev_sum'))], 'warn', AT, noFlags, byPrefix)
    expect(r.first).toEqual([])
    expect(r.changed[0]?.standing).toMatchObject({
      tool: 'ev_sum',
      pinned: undefined,
      change: { renamedFrom: 'ev_add' },
    })
    // the same definition under another server's prefix is a new tool of that server
    const moved = { ...add, name: 'fs_add' }
    const other = reviewListing(book, [listed(moved, byPrefix('fs_add'))], 'warn', AT, noFlags, byPrefix)
    expect(other.first.map((p) => p.tool)).toEqual(['fs_add'])
    // a prefix the registry no longer routes (the operator changed it): pinned anew, no renaming
    const reprefixed = { ...add, name: 'math_add' }
    const routes = (tool: string): ServerOf | undefined =>
      tool.startsWith('math_') ? { server: 'ev', name: tool.slice(5) } : undefined
    const prefix = reviewListing(book, [listed(reprefixed, routes('math_add'))], 'hold', AT, noFlags, routes)
    expect(prefix.first.map((p) => p.tool)).toEqual(['math_add'])
    // a pinned tool still listed is not taken for a renaming
    const both = reviewListing(
      book,
      [listed(add, byPrefix('ev_add')), listed(renamed, byPrefix('ev_sum'))],
      'hold',
      AT,
      noFlags,
      byPrefix,
    )
    expect(both.first.map((p) => p.tool)).toEqual(['ev_sum'])
  })

  it('property: a listing reviewed against the book it pinned says nothing changed', () => {
    const definition = fc.record({
      name: fc.string({ minLength: 1, maxLength: 6 }),
      description: fc.string({ maxLength: 20 }),
    })
    fc.assert(
      fc.property(fc.array(definition, { maxLength: 8 }), (ds) => {
        const tools = ds.map((d) => listed(d))
        const first = reviewListing(emptyBook, tools, 'hold', AT, noFlags)
        const book = pinFirst(first.first)(emptyBook)[1]
        const again = reviewListing(book, tools, 'hold', AT, noFlags)
        expect(again.changed).toEqual([])
        expect(again.first).toEqual([])
      }),
    )
  })
})

describe('grantHolds', () => {
  const unchanged: Standing = { tool: 'fs_write', hash: 'sha256:a', pinned: 'sha256:a', flags: [] }
  const changed: Standing = { tool: 'fs_write', hash: 'sha256:b', pinned: 'sha256:a', flags: [] }

  it('a grant holds for the definition it was given under, and only that one', () => {
    expect(grantHolds({ tool: 'fs_write', definition: 'sha256:a' }, unchanged)).toBe(true)
    expect(grantHolds({ tool: 'fs_write', definition: 'sha256:a' }, changed)).toBe(false)
    expect(grantHolds({ tool: 'fs_write', definition: 'sha256:b' }, changed)).toBe(true)
    // given for an earlier definition, since changed and accepted: the tool is as pinned, but not as granted
    expect(grantHolds({ tool: 'fs_write', definition: 'sha256:old' }, unchanged)).toBe(false)
  })

  it('a grant that names no definition holds while the tool is as pinned; so does a glob given for another tool', () => {
    expect(grantHolds({ tool: 'fs_write' }, unchanged)).toBe(true)
    expect(grantHolds({ tool: 'fs_write' }, changed)).toBe(false)
    expect(grantHolds({ tool: 'fs_*', definition: 'sha256:other' }, unchanged)).toBe(true)
    expect(grantHolds({ tool: 'fs_*', definition: 'sha256:other' }, changed)).toBe(false)
    // nothing is known of the tool: as without pins
    expect(grantHolds({ tool: 'fs_write', definition: 'sha256:x' }, undefined)).toBe(true)
  })
})

describe('noticeOf', () => {
  it('says nothing of an unchanged, unflagged tool; else what changed, the flags, and a grant set aside', () => {
    const s: Standing = { tool: 't', hash: 'sha256:b', pinned: 'sha256:b', flags: [] }
    expect(noticeOf(s, false)).toBeUndefined()
    expect(noticeOf(undefined, true)).toBeUndefined()
    expect(noticeOf(s, true)).toEqual({
      hash: 'sha256:b',
      pinned: 'sha256:b',
      changes: [],
      flags: [],
      grantSetAside: true,
    })
    const changed: Standing = {
      ...s,
      pinned: 'sha256:a',
      change: { added: ['note'], removed: [], more: 0, schemaOtherwise: false, annotations: [] },
      flags: [{ rule: 'hidden-steps', where: 'description', excerpt: { text: 'Do not tell the user.', cut: 0 } }],
    }
    expect(noticeOf(changed, false)).toEqual({
      hash: 'sha256:b',
      pinned: 'sha256:a',
      changes: ['schema: keys added: note'],
      flags: ['hidden-steps (asks for steps kept from the user) in description: "Do not tell the user."'],
      grantSetAside: false,
    })
  })
})

describe('reviewListing: the details', () => {
  it('reads a tool listed twice once, as first listed', () => {
    const r = reviewListing(emptyBook, [listed(add), listed({ ...add, description: 'other' })], 'hold', AT, noFlags)
    expect(r.first).toEqual([pinOf('ev_add', add, AT)])
    expect(r.standings.get('ev_add')?.hash).toBe(listed(add).hash)
  })

  it('a standing carries its flags, pinned now, unchanged, changed or renamed', () => {
    const flag = { rule: 'hidden-steps' as const, where: 'description', excerpt: { text: 'x', cut: 0 } }
    const flagsOf = (t: ListedTool) => (t.tool === 'ev_sum' || t.tool === 'fs_read' ? [flag] : [])
    const book = pinFirst([pinOf('ev_add', add, AT), pinOf('fs_read', read, AT)])(emptyBook)[1]
    const r = reviewListing(
      book,
      [listed({ ...add, name: 'ev_sum' }, byPrefix('ev_sum')), listed(read, byPrefix('fs_read'))],
      'warn',
      AT,
      flagsOf,
      byPrefix,
    )
    expect(r.standings.get('ev_sum')?.flags).toEqual([flag])
    expect(r.standings.get('fs_read')).toEqual({
      tool: 'fs_read',
      hash: listed(read).hash,
      pinned: listed(read).hash,
      flags: [flag],
    })
  })

  it('a renaming is matched with the first gone tool of that definition; a gone pin kept by its hash alone, or one that cannot be hashed, with none', () => {
    const twin = { ...add, name: 'ev_plus' }
    const book = pinFirst([pinOf('ev_add', add, AT), pinOf('ev_plus', twin, AT)])(emptyBook)[1]
    const r = reviewListing(
      book,
      [listed({ ...add, name: 'ev_sum' }, byPrefix('ev_sum'))],
      'warn',
      AT,
      noFlags,
      byPrefix,
    )
    expect(r.changed[0]?.standing.change?.renamedFrom).toBe('ev_add')
    const hashOnly = pinFirst([{ tool: 'ev_add', hash: listed(add).hash, at: AT }])(emptyBook)[1]
    const none = reviewListing(
      hashOnly,
      [listed({ ...add, name: 'ev_sum' }, byPrefix('ev_sum'))],
      'warn',
      AT,
      noFlags,
      byPrefix,
    )
    expect(none.first.map((p) => p.tool)).toEqual(['ev_sum'])
    // a host's memory may hold what JSON cannot: that pin renames nothing, and the listing is still reviewed
    const odd = pinFirst([
      { tool: 'ev_odd', hash: listed(add).hash, at: AT, definition: { name: 'ev_odd', annotations: 1n } },
    ])(emptyBook)[1]
    const still = reviewListing(odd, [listed(add, byPrefix('ev_add'))], 'warn', AT, noFlags, byPrefix)
    expect(still.first.map((p) => p.tool)).toEqual(['ev_add'])
  })
})

describe('noticeOf: the details', () => {
  it('a flagged tool, unchanged and with no grant set aside, has its flags told', () => {
    const flag = { rule: 'hidden-steps' as const, where: 'description', excerpt: { text: 'Do not tell.', cut: 0 } }
    const s: Standing = { tool: 't', hash: 'sha256:b', pinned: 'sha256:b', flags: [flag] }
    expect(noticeOf(s, false)).toEqual({
      hash: 'sha256:b',
      pinned: 'sha256:b',
      changes: [],
      flags: ['hidden-steps (asks for steps kept from the user) in description: "Do not tell."'],
      grantSetAside: false,
    })
    // a change with nothing to draw is still a change
    const changed: Standing = {
      ...s,
      flags: [],
      change: { added: [], removed: [], more: 0, schemaOtherwise: false, annotations: [] },
    }
    expect(noticeOf(changed, false)).toMatchObject({ changes: [], flags: [] })
  })
})
