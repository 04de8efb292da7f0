import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Option } from 'fp-ts/lib/Option.js'
import { none, some } from 'fp-ts/lib/Option.js'
import { editDistance, keyWords, normalizeKey, suggestKey, suggestKeys } from '../src/index.js'

const near = (declared: ReadonlyArray<string>, key: string): Option<string> => suggestKey(new Set(declared))(key)

describe('suggestKey: what it must catch', () => {
  it.each([
    [['maxDepth', 'path'], 'max_depth', 'maxDepth'],
    [['maxDepth', 'path'], 'MaxDepth', 'maxDepth'],
    [['max-depth', 'path'], 'maxDepth', 'max-depth'],
    [['path', 'offset', 'length'], 'ffset', 'offset'],
    [['head', 'tail', 'path'], 'ead', 'head'],
    [['path', 'offset'], 'offs', 'offset'],
    [['path', 'content'], 'contnet', 'content'],
    [['prompt', 'model'], 'promt', 'prompt'],
    [['prompt', 'model'], 'prompts', 'prompt'],
    [['path', 'maxDepth'], 'depth', 'maxDepth'],
    [['path', 'max_file_size'], 'file_size', 'max_file_size'],
  ])('%j: %s → %s', (declared, key, expected) => {
    expect(near(declared, key)).toEqual(some(expected))
  })
})

describe('suggestKey: when it must not guess', () => {
  it.each([
    [['path', 'offset'], 'recursive'],
    [['path'], 'recursive'], // a single declared key is no reason to guess
    [['url'], 'headers'],
    [['url'], 'timeout'],
    [['path', 'offset'], 'x'],
    [['path', 'offset'], 'the rest'],
    [['pathA', 'pathB'], 'pathC'], // one edit from two keys: equally near
    [['maxDepth', 'minDepth'], 'depth'], // the end of two declared names
    [['head', 'ahead'], 'ead'], // the truncated start of two keys
    [['max_depth', 'maxDepth'], 'MAXDEPTH'], // the same name up to case, twice
    [[], 'anything'],
    [['path'], 'pa'], // too short to be a plain truncation
    [['abcd'], 'abce'], // one edit, but too short to be sure
  ])('%j: %s → nothing', (declared, key) => {
    expect(near(declared, key)).toEqual(none)
  })

  it('never suggests the key itself', () => {
    expect(near(['path'], 'path')).toEqual(none)
  })
})

describe('suggestKey: properties', () => {
  const nameArb = fc.stringMatching(/^[a-z][a-zA-Z_]{0,11}$/)
  const declaredArb = fc.uniqueArray(nameArb, { maxLength: 8 })

  it('never suggests for a key far from the only declared key', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{3,10}$/), fc.stringMatching(/^[0-9]{5,10}$/), (declared, key) => {
        // no letter in common: no rule can tie them, and every edit distance is over 2
        expect(near([declared], key)).toEqual(none)
      }),
    )
  })

  it('a suggestion is always a declared key, and never the key itself', () => {
    fc.assert(
      fc.property(declaredArb, fc.oneof(nameArb, fc.string({ maxLength: 12 })), (declared, key) => {
        const s = near(declared, key)
        if (s._tag === 'Some') {
          expect(declared).toContain(s.value)
          expect(s.value).not.toBe(key)
        }
      }),
    )
  })

  const orderIndependent = (suggest: (declared: ReadonlyArray<string>) => (key: string) => Option<string>) =>
    fc.property(declaredArb, nameArb, fc.nat(), (declared, key, shift) => {
      const rotated = declared.map((_, i) => declared[(i + shift) % declared.length] as string)
      expect(suggest(rotated)(key)).toEqual(suggest(declared)(key))
    })

  it('does not depend on the order of the declared keys (no guess on a tie)', () => {
    fc.assert(orderIndependent((d) => suggestKey(new Set(d))))
  })

  it('the property can fail: a suggester that takes the first of equally near keys', () => {
    const firstOfTies = (declared: ReadonlyArray<string>) => (key: string): Option<string> => {
      const hit = declared.find((d) => d !== key && editDistance(key, d, 2) <= 2)
      return hit === undefined ? none : some(hit)
    }
    expect(fc.check(orderIndependent(firstOfTies)).failed).toBe(true)
  })

  it('finds a declared key written in another case convention, when it is the only one', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{2,5}$/), { minLength: 2, maxLength: 4 }), (words) => {
        const camel = words.map((w, i) => (i === 0 ? w : w[0]?.toUpperCase() + w.slice(1))).join('')
        const snake = words.join('_')
        expect(near([camel, 'zzzzzzzzzzzzzzzzzzz'], snake)).toEqual(some(camel))
      }),
    )
  })

  it('finds the only declared key from a truncation of 3 characters or more', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{4,12}$/), fc.nat(), fc.boolean(), (declared, cut, fromStart) => {
        const len = 3 + (cut % (declared.length - 3))
        const key = fromStart ? declared.slice(declared.length - len) : declared.slice(0, len)
        expect(near([declared], key)).toEqual(some(declared))
      }),
    )
  })

  it('finds the only declared key one edit away, for keys of 5 characters or more', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{5,12}$/), fc.nat(), fc.constantFrom('q', 'x', 'z'), (declared, at, c) => {
        const i = at % declared.length
        const key = declared.slice(0, i) + c + declared.slice(i + 1)
        fc.pre(key !== declared)
        expect(near([declared], key)).toEqual(some(declared))
      }),
    )
  })
})

describe('helpers', () => {
  it('normalizes case, _ and -', () => {
    expect(normalizeKey('Max_Depth-X')).toBe('maxdepthx')
  })

  it('splits names into words', () => {
    expect(keyWords('maxDepth')).toEqual(['max', 'depth'])
    expect(keyWords('max_file_size')).toEqual(['max', 'file', 'size'])
    expect(keyWords('HTTPServerURL')).toEqual(['http', 'server', 'url'])
  })

  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('contnet', 'content')).toBe(1)
    expect(editDistance('promt', 'prompt')).toBe(1)
    expect(editDistance('abc', 'xyz', 1)).toBe(2)
  })

  it('is symmetric and zero only for equal strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), (a, b) => {
        expect(editDistance(a, b)).toBe(editDistance(b, a))
        expect(editDistance(a, b) === 0).toBe(a === b)
      }),
    )
  })

  it('suggestKeys keeps the order of the reported keys and leaves out keys with no plain answer', () => {
    expect(suggestKeys(new Set(['offset', 'path', 'maxDepth']), ['depth', 'ffset', 'recursive'])).toEqual([
      { key: 'depth', didYouMean: 'maxDepth' },
      { key: 'ffset', didYouMean: 'offset' },
    ])
  })
})

describe('suggestKey: neighbours swapped', () => {
  it('points a short key with two neighbours swapped at the declared key (issue 14)', () => {
    const near = suggestKey(new Set(['head', 'tail', 'path']))
    expect(near('haed')).toEqual(some('head'))
    expect(near('tial')).toEqual(some('tail'))
    expect(near('ptah')).toEqual(some('path'))
    // two swaps, or a swap that is not of neighbours, is no plain slip
    expect(near('ehda')).toEqual(none)
    expect(near('hdae')).toEqual(none)
  })

  it('stays silent when a swap points at two keys', () => {
    // "bac" is "abc" with its first two swapped, and "bca" with its last two
    expect(suggestKey(new Set(['abc', 'bca']))('bac')).toEqual(none)
    expect(suggestKey(new Set(['abc']))('bac')).toEqual(some('abc'))
  })
})
