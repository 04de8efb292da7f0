// The audit's shared steps for one call, as the command uses them on a log of calls.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { emptySeenSet, formatWarning } from '../../../src/index.js'
import { catalogueOf, toleratedOf } from '../../../src/steps/audit/Catalogue.js'
import { checkCall, checkKeys } from '../../../src/steps/audit/Check.js'
import { cut, escapeControls } from '../../../src/kernel/describe.js'
import { decl } from '../../support/fakes.js'

const catalogue = catalogueOf(toleratedOf())([decl('fs_read', ['path', 'offset'])])

describe("a warning's keys", () => {
  it('hold each key exactly as sent, and its place as segments, whatever the path had to quote (model: the keys sent)', () => {
    const nested = catalogueOf(toleratedOf())([
      {
        type: 'function',
        function: {
          name: 't',
          parameters: {
            type: 'object',
            properties: {
              a: {},
              edits: { type: 'array', items: { type: 'object', properties: { x: {} } } },
              m: { type: 'object', additionalProperties: { type: 'object', properties: { v: {} } } },
            },
          },
        },
      },
    ])
    const strange = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('a.b', '', '*', '"q"', 'x[0]', 'two words'))
    fc.assert(
      fc.property(strange, strange, strange, (top, inEdit, inRecord) => {
        fc.pre(top !== 'a' && top !== 'edits' && top !== 'm' && top !== 'reason' && inEdit !== 'x' && inRecord !== 'v')
        const args = JSON.parse(JSON.stringify({ a: 1, edits: [{ x: 1 }], m: { e1: { v: 1 } } })) as Record<
          string,
          Record<string, unknown>
        >
        Object.defineProperty(args, top, { value: 1, enumerable: true, writable: true, configurable: true })
        Object.defineProperty((args['edits'] as unknown as Array<Record<string, unknown>>)[0], inEdit, {
          value: 1,
          enumerable: true,
        })
        Object.defineProperty(args['m']?.['e1'], inRecord, { value: 1, enumerable: true })
        const [check] = checkKeys(nested, 't', args, 'c')(emptySeenSet)
        const keys = check._tag === 'Audited' ? (check.warning?.keys ?? []) : []
        expect(keys.map((k) => [k.key, k.place])).toEqual(
          expect.arrayContaining([
            [top, []],
            [inEdit, ['edits', { each: 'element' }]],
            [inRecord, ['m', { each: 'entry' }]],
          ]),
        )
        expect(keys).toHaveLength(3)
        expect(keys.map((k) => k.path)).toEqual(check._tag === 'Audited' ? check.warning?.unknownKeys : [])
      }),
    )
  })

  it('leave a top-level key that needs no quoting as itself in unknownKeys', () => {
    const [check] = checkKeys(catalogue, 'fs_read', { ffset: 1, 'a.b': 2 }, 'c')(emptySeenSet)
    expect(check._tag === 'Audited' && check.warning?.unknownKeys).toEqual(['["a.b"]', 'ffset'])
    expect(check._tag === 'Audited' && check.warning?.keys.map((k) => k.key)).toEqual(['a.b', 'ffset'])
  })
})

describe('checkKeys', () => {
  it('does not audit a tool the catalogue does not hold', () => {
    const [check, seen] = checkKeys(catalogue, 'other', { x: 1 }, '1')(emptySeenSet)
    expect(check).toEqual({ _tag: 'NotAudited' })
    expect(seen).toBe(emptySeenSet)
  })

  it('finds no undeclared key in a clean call, and leaves the seen-set as it was', () => {
    const [check, seen] = checkKeys(catalogue, 'fs_read', { path: 'a', reason: 'why' }, '1')(emptySeenSet)
    expect(check).toEqual({ _tag: 'Audited', unknownKeys: [], warning: undefined })
    expect(seen).toBe(emptySeenSet)
  })

  it('warns about undeclared keys the first time only, and reports them every time', () => {
    const [first, seen] = checkKeys(catalogue, 'fs_read', { path: 'a', ffset: 1 }, 'c1')(emptySeenSet)
    expect(first).toEqual({
      _tag: 'Audited',
      unknownKeys: ['ffset'],
      warning: {
        tool: 'fs_read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    })
    const [again] = checkKeys(catalogue, 'fs_read', { ffset: 2 }, 'c2')(seen)
    expect(again).toEqual({ _tag: 'Audited', unknownKeys: ['ffset'], warning: undefined })
  })
})

describe('checkCall', () => {
  it('reads the arguments first: a string or an object; anything that does not read as an object is not audited', () => {
    expect(checkCall(catalogue, 'fs_read', '{"ffset":1}', '1')(emptySeenSet)[0]).toMatchObject({
      _tag: 'Audited',
      unknownKeys: ['ffset'],
    })
    expect(checkCall(catalogue, 'fs_read', { ffset: 1 }, '1')(emptySeenSet)[0]).toMatchObject({
      _tag: 'Audited',
      unknownKeys: ['ffset'],
    })
    for (const args of ['[1]', '{"ffset":', '', 7]) {
      const [check, seen] = checkCall(catalogue, 'fs_read', args, '1')(emptySeenSet)
      expect(check).toEqual({ _tag: 'NotAudited' })
      expect(seen).toBe(emptySeenSet)
    }
    expect(checkCall(catalogue, 'other', '{"x":1}', '1')(emptySeenSet)[0]).toEqual({ _tag: 'NotAudited' })
  })

  it('does not read the arguments of a tool the catalogue does not hold', () => {
    const touched: Array<string> = []
    const args = new Proxy<Record<string, unknown>>(
      { ffset: 1 },
      {
        get: (target, key, receiver) => (touched.push('get'), Reflect.get(target, key, receiver) as unknown),
        getPrototypeOf: (target) => (touched.push('getPrototypeOf'), Reflect.getPrototypeOf(target)),
        ownKeys: (target) => (touched.push('ownKeys'), Reflect.ownKeys(target)),
        getOwnPropertyDescriptor: (target, key) => (
          touched.push('getOwnPropertyDescriptor'),
          Reflect.getOwnPropertyDescriptor(target, key)
        ),
      },
    )
    expect(checkCall(catalogue, 'other', args, '1')(emptySeenSet)[0]).toEqual({ _tag: 'NotAudited' })
    expect(touched).toEqual([])
    // the same arguments to an audited tool are read
    checkCall(catalogue, 'fs_read', args, '1')(emptySeenSet)
    expect(touched).not.toEqual([])
  })
})

describe('formatWarning', () => {
  // how many entries of each list a line names, as the docs promise
  const MAX_KEYS_SHOWN = 20
  const base = { tool: 'fs_read', id: 'c1', unknownKeys: ['ffset'], declaredKeys: ['offset'] }

  it('says "keys" for more than one, and "none" when the tool declares nothing', () => {
    expect(formatWarning({ ...base, unknownKeys: ['a', 'b'], declaredKeys: [] })).toBe(
      'toolstack: fs_read call c1 carried undeclared argument keys "a", "b" (declared: none)',
    )
  })

  it('cuts every name, id and key at 200 characters', () => {
    const long = 'k'.repeat(201)
    expect(formatWarning({ tool: long, id: long, unknownKeys: [long], declaredKeys: ['d'.repeat(200)] })).toBe(
      `toolstack: ${'k'.repeat(200)}… call ${'k'.repeat(200)}… carried undeclared argument key "${'k'.repeat(200)}…" (declared: "${'d'.repeat(200)}")`,
    )
  })

  it('shows a name or an id of exactly 200 characters whole', () => {
    const edge = 'k'.repeat(200)
    expect(formatWarning({ tool: edge, id: edge, unknownKeys: ['x'], declaredKeys: [] })).toBe(
      `toolstack: ${edge} call ${edge} carried undeclared argument key "x" (declared: none)`,
    )
  })

  it('escapes control characters everywhere, so the line is safe on a terminal', () => {
    const esc = '\u001b]0;owned\u0007'
    const line = formatWarning({
      tool: esc,
      id: esc,
      unknownKeys: [esc],
      declaredKeys: [esc],
      suggestions: [{ key: esc, didYouMean: esc }],
    })
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
    expect(line).toContain('\\u001b]0;owned\\u0007')
  })

  it('gives one suggestion plainly, and several each with its key', () => {
    expect(formatWarning({ ...base, suggestions: [{ key: 'ffset', didYouMean: 'offset' }] })).toMatch(
      / \(did you mean offset\?\)$/,
    )
    expect(
      formatWarning({
        ...base,
        unknownKeys: ['ffset', 'pth', 'zz'],
        declaredKeys: ['offset', 'path'],
        suggestions: [
          { key: 'ffset', didYouMean: 'offset' },
          { key: 'pth', didYouMean: 'path' },
        ],
      }),
    ).toMatch(/ \(did you mean offset for "ffset", path for "pth"\?\)$/)
    expect(
      formatWarning({ ...base, unknownKeys: ['ffset', 'zz'], suggestions: [{ key: 'ffset', didYouMean: 'offset' }] }),
    ).toMatch(/ \(did you mean offset for "ffset"\?\)$/)
    expect(formatWarning({ ...base, suggestions: [] })).toBe(
      'toolstack: fs_read call c1 carried undeclared argument key "ffset" (declared: "offset")',
    )
  })

  it('names every suggestion it is given, whatever the keys', () => {
    const nameArb = fc.stringMatching(/^[a-z]{1,6}$/)
    fc.assert(
      fc.property(
        fc.uniqueArray(nameArb, { minLength: 1, maxLength: 3 }),
        fc.uniqueArray(nameArb, { minLength: 1, maxLength: 3 }),
        (unknownKeys, hints) => {
          const suggestions = hints.map((h, i) => ({
            key: unknownKeys[i % unknownKeys.length] as string,
            didYouMean: `DYM_${h}`,
          }))
          const line = formatWarning({ tool: 't', id: '1', unknownKeys, declaredKeys: [], suggestions })
          for (const s of suggestions) expect(line).toContain(s.didYouMean)
        },
      ),
    )
  })

  it('names the first 20 keys of each list, then how many more, so 20,000 keys make one short line', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}`)
    const declared = Array.from({ length: 3000 }, (_, i) => `d${i}`)
    const suggestions = keys.map((key, i) => ({ key, didYouMean: `d${i}` }))
    const first = (ks: ReadonlyArray<string>): string =>
      ks
        .slice(0, 20)
        .map((k) => `"${k}"`)
        .join(', ')
    const hints = suggestions
      .slice(0, 20)
      .map((h) => `${h.didYouMean} for "${h.key}"`)
      .join(', ')
    expect(formatWarning({ tool: 't', id: 'c', unknownKeys: keys, declaredKeys: declared })).toBe(
      `toolstack: t call c carried undeclared argument keys ${first(keys)} and 19980 more (declared: ${first(declared)} and 2980 more)`,
    )
    const line = formatWarning({ tool: 't', id: 'c', unknownKeys: keys, declaredKeys: declared, suggestions })
    expect(line).toMatch(new RegExp(` \\(did you mean ${hints} and 19980 more\\?\\)$`))
    expect(line.length).toBeLessThan(1000)
  })

  it('names a list of exactly 20 whole, with no count', () => {
    const keys = Array.from({ length: MAX_KEYS_SHOWN }, (_, i) => `k${i}`)
    const line = formatWarning({ tool: 't', id: 'c', unknownKeys: keys, declaredKeys: keys })
    expect(line).not.toContain('more')
    expect(line.match(/"k19"/g)).toHaveLength(2)
  })

  // The rendering before lists were bounded, written out: under the limit, a line must not change by a byte
  // (the docs and the hosts' tests show it).
  const unbounded = (w: {
    tool: string
    id: string
    unknownKeys: ReadonlyArray<string>
    declaredKeys: ReadonlyArray<string>
    suggestions: ReadonlyArray<{ key: string; didYouMean: string }>
    via?: string
  }): string => {
    const shown = (s: string): string => escapeControls(cut(s, 200))
    const quoted = (s: string): string => escapeControls(JSON.stringify(cut(s, 200)))
    const quote = (ks: ReadonlyArray<string>): string => (ks.length === 0 ? 'none' : ks.map(quoted).join(', '))
    const call = w.id === '' ? 'a call without an id' : `call ${shown(w.id)}`
    const keys = `key${w.unknownKeys.length === 1 ? '' : 's'} ${quote(w.unknownKeys)}`
    const line = `toolstack: ${shown(w.tool)} ${call} carried undeclared argument ${keys} (declared: ${quote(w.declaredKeys)})`
    const via = w.via !== undefined && w.via !== '' ? ` [via ${shown(w.via)}]` : ''
    if (w.suggestions.length === 0) return line + via
    const hint =
      w.unknownKeys.length === 1 && w.suggestions.length === 1
        ? shown(w.suggestions[0]?.didYouMean ?? '')
        : w.suggestions.map((x) => `${shown(x.didYouMean)} for ${quoted(x.key)}`).join(', ')
    return `${line} (did you mean ${hint}?)${via}`
  }

  const anyText = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 250 }),
    fc.constantFrom('\u001b]0;x\u0007', 'c\u009b31m', 'a\u202eb', '\ud800', ''),
  )
  const suggestionArb = fc.record({ key: anyText, didYouMean: anyText })

  it('writes a warning whose lists hold at most 20 entries exactly as it always has', () => {
    const upTo20 = <A>(a: fc.Arbitrary<A>): fc.Arbitrary<Array<A>> => fc.array(a, { maxLength: MAX_KEYS_SHOWN })
    fc.assert(
      fc.property(
        fc.record(
          {
            tool: anyText,
            id: anyText,
            unknownKeys: upTo20(anyText),
            declaredKeys: upTo20(anyText),
            suggestions: upTo20(suggestionArb),
            via: anyText,
          },
          { requiredKeys: ['tool', 'id', 'unknownKeys', 'declaredKeys', 'suggestions'] },
        ),
        (w) => {
          expect(formatWarning(w)).toBe(unbounded(w))
        },
      ),
    )
  })

  it('is at most L characters, with no raw control character, whatever the names, ids and keys, and however many', () => {
    // a name, an id or a key is cut at 200 characters (201 with its ellipsis), and each character is written as
    // at most 6 (`\u009b`); a quoted key adds its two quotes
    const NAME = 6 * 201
    const QUOTED = NAME + 2
    // tool, id, via; 20 undeclared and 20 declared keys with their ", "; 20 suggestions `NAME for QUOTED, `; and
    // the sentence's own words, three counts included
    const L = 3 * NAME + 2 * MAX_KEYS_SHOWN * (QUOTED + 2) + MAX_KEYS_SHOWN * (NAME + 5 + QUOTED + 2) + 300
    // many keys, long ones: past the limit, the line before this bound held every one of them
    const many = <A>(a: (i: number) => A): fc.Arbitrary<Array<A>> =>
      fc.integer({ min: 0, max: 2_000 }).map((n) => Array.from({ length: n }, (_, i) => a(i)))
    const long = (i: number): string => `${'\u009b'.repeat(210)}${i}`
    const keys = fc.oneof(fc.array(anyText, { maxLength: 40 }), many(long))
    const suggestions = fc.oneof(
      fc.array(suggestionArb, { maxLength: 40 }),
      many((i) => ({ key: long(i), didYouMean: long(i) })),
    )
    fc.assert(
      fc.property(
        fc.record({ tool: anyText, id: anyText, unknownKeys: keys, declaredKeys: keys, suggestions, via: anyText }),
        (w) => {
          const line = formatWarning(w)
          expect(line.length).toBeLessThanOrEqual(L)
          // eslint-disable-next-line no-control-regex
          expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/)
        },
      ),
      { numRuns: 50 },
    )
  })
})
