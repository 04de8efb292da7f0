import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Option } from 'fp-ts/lib/Option.js'
import { none, some } from 'fp-ts/lib/Option.js'
import { editDistance, keyWords, normalizeKey, suggestKey, suggestKeys } from '../../src/kernel/Suggest.js'

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
    const firstOfTies =
      (declared: ReadonlyArray<string>) =>
      (key: string): Option<string> => {
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

describe('suggestKey, at the edges of its rules', () => {
  it('matches trailing words only, never the whole name run together (rule 1 owns the whole name)', () => {
    // spaces stay in a normalized name, so 'abcde' is 4 edits from 'a b c d e': only a tail could name it
    expect(near(['a b c d e'], 'abcde')).toEqual(none)
    expect(near(['a b c d e'], 'bcde')).toEqual(some('a b c d e'))
  })

  it('finds a swap of two neighbours anywhere in a short key, in keys of other lengths too', () => {
    expect(near(['head'], 'ehad')).toEqual(some('head'))
    expect(near(['head'], 'heda')).toEqual(some('head'))
    expect(near(['heads'], 'hed')).toEqual(none)
    expect(near(['he'], 'ehx')).toEqual(none)
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

describe('suggestKey: each rule, where the earlier ones are silent', () => {
  it('rule 1 finds a short key that differs only in case, too short for the edit rule', () => {
    expect(near(['path', 'offset'], 'Path')).toEqual(some('path'))
    expect(near(['head', 'tail'], 'TAIL')).toEqual(some('tail'))
    // under 3 characters no later rule applies at all
    expect(near(['id', 'path'], 'ID')).toEqual(some('id'))
    expect(near(['x_y', 'path'], 'XY')).toEqual(some('x_y'))
  })

  it('the first rule with candidates decides: a tie there is no suggestion, even when a later rule has one answer', () => {
    // "depth" truncates both (rule 2, a tie); only maxDepth ends in the word "depth" (rule 5)
    expect(near(['maxDepth', 'depthLimit'], 'depth')).toEqual(none)
  })

  it('rule 3 finds a slip in another case convention: the edits are counted on the names without case, _ or -', () => {
    expect(near(['maxDepth', 'path'], 'max_dpeth')).toEqual(some('maxDepth'))
    expect(near(['contentType', 'path'], 'Content-Tpye')).toEqual(some('contentType'))
  })

  it('rule 3 prefers the one nearest key to one further off, in any order', () => {
    expect(near(['content', 'contents'], 'contnet')).toEqual(some('content'))
    expect(near(['contents', 'content'], 'contnet')).toEqual(some('content'))
  })

  it('rule 3 finds the only declared key two substitutions away, for keys of 5 characters or more', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{5,12}$/), fc.nat(), fc.nat(), (declared, at1, at2) => {
        const i = at1 % declared.length
        const j = (i + 1 + (at2 % (declared.length - 1))) % declared.length
        const chars = [...declared]
        chars[i] = '1'
        chars[j] = '2'
        expect(near([declared], chars.join(''))).toEqual(some(declared))
      }),
    )
  })

  it('rule 4 (neighbours swapped) is for keys of 3 or 4 characters: a 2-character key is not guessed', () => {
    expect(near(['id', 'path'], 'di')).toEqual(none)
    expect(near(['to', 'path'], 'ot')).toEqual(none)
  })

  it('rule 4 finds a short key with two neighbours swapped in another case', () => {
    expect(near(['head', 'tail'], 'Haed')).toEqual(some('head'))
    expect(near(['head', 'tail'], 'TIAL')).toEqual(some('tail'))
  })

  it('rule 4 suggests the one declared key of 3 or 4 characters exactly when the key is it with two different neighbours swapped', () => {
    const swapsOf = (d: string): ReadonlyArray<string> =>
      [...d.slice(1)]
        .map((_, i) => d.slice(0, i) + d.charAt(i + 1) + d.charAt(i) + d.slice(i + 2))
        .filter((s) => s !== d)
    const shortArb = fc.stringMatching(/^[abc]{3,4}$/)
    fc.assert(
      fc.property(shortArb, shortArb, (declared, key) => {
        fc.pre(declared !== key && declared.length === key.length)
        // one lower-case word of the same length: no other rule can point at it
        expect(near([declared], key)).toEqual(swapsOf(declared).includes(key) ? some(declared) : none)
      }),
    )
  })

  it('rule 5 finds the trailing words of a declared name in a key written with spaces', () => {
    expect(near(['path', 'max_file_size'], 'file size')).toEqual(some('max_file_size'))
    expect(near(['path', 'maxFileSize'], 'File Size')).toEqual(some('maxFileSize'))
    // 3 characters are enough
    expect(near(['path', 'base_url'], 'url ')).toEqual(some('base_url'))
  })

  it('rule 5 wants 3 characters or more, as a truncation does', () => {
    expect(near(['user_id', 'path'], 'id')).toEqual(none)
    expect(near(['user_id', 'path'], 'i d')).toEqual(none)
  })
})

describe('keyWords: separators', () => {
  it('leaves no empty word for separators at the ends or in a run', () => {
    expect(keyWords('_private')).toEqual(['private'])
    expect(keyWords('max__depth-')).toEqual(['max', 'depth'])
    expect(keyWords(' -_ ')).toEqual([])
  })

  it('gives only non-empty, lower-case words without separators, whatever the name', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 16 }), (name) => {
        for (const w of keyWords(name)) {
          expect(w).not.toBe('')
          expect(w).toBe(w.toLowerCase())
          expect(w).not.toMatch(/[\s_-]/)
        }
      }),
    )
  })
})

describe('editDistance: the cap', () => {
  it('answers the distance when it is at most max, and max + 1 otherwise', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), fc.nat(4), (a, b, max) => {
        expect(editDistance(a, b, max)).toBe(Math.min(editDistance(a, b), max + 1))
      }),
    )
  })

  it('caps a difference in length alone, and a distance equal to max is no distance past it', () => {
    expect(editDistance('', 'abcd', 1)).toBe(2)
    expect(editDistance('ab', 'abcd', 2)).toBe(2)
    expect(editDistance('ab', 'ac', 1)).toBe(1)
  })

  it('caps a distance past max even when the last row holds a nearer cell (was: the whole distance)', () => {
    // the rows' nearest cells stay within 2, the distance is 4
    expect(editDistance('aa', 'bbbb')).toBe(4)
    expect(editDistance('aa', 'bbbb', 2)).toBe(3)
  })
})
