// Longest-prefix ownership, shared by the registry's routing and the gateway's records.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { longestTagOf, namespaceOf } from '../../src/kernel/longest.js'

const ownerOf = (tags: ReadonlyArray<string>) => longestTagOf(tags, (t) => t)

describe('longestTagOf', () => {
  it('answers the longest tag the name starts with, whatever the order given', () => {
    expect(ownerOf(['fs_', 'fs_x_'])('fs_x_read')).toBe('fs_x_')
    expect(ownerOf(['fs_x_', 'fs_'])('fs_x_read')).toBe('fs_x_')
    expect(ownerOf(['fs_', 'fs_x_'])('fs_read')).toBe('fs_')
    expect(ownerOf(['fs_', 'web_'])('git_log')).toBeUndefined()
  })

  it('needs a name left behind: a tag alone is owned by none', () => {
    expect(ownerOf(['fs_'])('fs_')).toBeUndefined()
    expect(ownerOf(['fs_', 'fs_x_'])('fs_x_')).toBe('fs_')
  })

  it('answers the item itself, not a copy of its tag', () => {
    const items = [{ tag: 'a_' }, { tag: 'a_b_' }]
    expect(longestTagOf(items, (i) => i.tag)('a_b_c')).toBe(items[1])
  })

  // tags over a small alphabet, so that one often starts another (`a_`, `a_b_`)
  const TAG = fc.stringMatching(/^[ab](_[ab])?_$/)
  // the owner is a tag the name starts with, leaving a name, and no longer such tag exists
  const longestOwns = (owner: (tags: ReadonlyArray<string>) => (name: string) => string | undefined) =>
    fc.property(
      fc.uniqueArray(TAG, { maxLength: 6 }),
      fc.oneof(
        fc.tuple(TAG, fc.stringMatching(/^([ab]_)?[ab]{0,2}$/)).map(([t, rest]) => t + rest),
        fc.string(),
      ),
      (tags, name) => {
        const found = owner(tags)(name)
        const fits = tags.filter((t) => name.length > t.length && name.startsWith(t))
        if (found === undefined) expect(fits).toEqual([])
        else {
          expect(fits).toContain(found)
          expect(fits.every((t) => t.length <= found.length)).toBe(true)
        }
      },
    )

  it('owns by the longest fitting tag, whatever the tags and the name (property)', () => {
    fc.assert(longestOwns(ownerOf))
  })

  it('the property can fail: the first fitting tag in the order given is caught', () => {
    const firstFit = (tags: ReadonlyArray<string>) => (name: string) =>
      tags.find((t) => name.length > t.length && name.startsWith(t))
    expect(fc.check(longestOwns(firstFit)).failed).toBe(true)
  })
})

describe('namespaceOf', () => {
  it('is the prefix and its separator ("_" unless told), and nothing for the empty prefix', () => {
    expect(namespaceOf('fs')).toBe('fs_')
    expect(namespaceOf('fs', '.')).toBe('fs.')
    expect(namespaceOf('')).toBe('')
    expect(namespaceOf('', '.')).toBe('')
  })
})
