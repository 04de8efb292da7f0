import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { CHANGE_LIMITS, declaredPaths, diffDefinitions, diffText, drawChange } from '../../../src/steps/pins/Diff.js'

// anything a terminal acts on or a person cannot see, raw: what must never appear in a drawn line
const RAW_UNSAFE =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u

describe('declaredPaths', () => {
  it("names every key at every depth in the audit's path form", () => {
    const schema = {
      type: 'object',
      properties: {
        path: { type: 'string' },
        opts: { properties: { 'a.b': {}, encoding: {} } },
        edits: { type: 'array', items: { properties: { oldText: {}, newText: {} } } },
        pair: { prefixItems: [{ properties: { left: {} } }] },
      },
      allOf: [{ properties: { dryRun: {} } }],
      oneOf: [{ properties: { mode: {} } }, { $ref: '#/$defs/extra' }],
      $defs: { extra: { properties: { verbose: {} } } },
    }
    expect(declaredPaths(schema)).toEqual([
      'dryRun',
      'edits',
      'edits[].newText',
      'edits[].oldText',
      'mode',
      'opts',
      'opts.encoding',
      'opts["a.b"]',
      'pair',
      'pair[].left',
      'path',
      'verbose',
    ])
  })

  it('ends on a schema that refers to itself, and reads nothing from what is not a schema', () => {
    const tree = { properties: { name: {}, children: { type: 'array', items: { $ref: '#' } } } }
    // a recursive schema's keys are named at their first place
    expect(declaredPaths(tree)).toEqual(['children', 'name'])
    const point = { properties: { x: {} } }
    const shared = { $defs: { point }, properties: { from: { $ref: '#/$defs/point' }, to: { $ref: '#/$defs/point' } } }
    expect(declaredPaths(shared)).toEqual(['from', 'from.x', 'to', 'to.x'])
    for (const odd of [undefined, null, true, 5, 'x', [], { properties: 5 }, { $ref: '#/nowhere' }])
      expect(declaredPaths(odd)).toEqual([])
  })

  it('treats keys as data: __proto__ and constructor are keys like any other', () => {
    const schema = JSON.parse('{"properties":{"__proto__":{"properties":{"constructor":{}}}}}') as unknown
    expect(declaredPaths(schema)).toEqual(['__proto__', '__proto__.constructor'])
  })
})

describe('diffText', () => {
  it('is the span where two texts differ, with a little of what comes before', () => {
    expect(diffText('same', 'same')).toBeUndefined()
    expect(diffText('Reads a file.', 'Reads a whole file.')).toEqual({
      at: 8,
      before: { text: 'Reads a ', cut: 0 },
      removed: { text: '', cut: 0 },
      added: { text: 'whole ', cut: 0 },
    })
    expect(diffText('abc', '')).toMatchObject({ at: 0, removed: { text: 'abc' }, added: { text: '' } })
  })

  it('never splits a surrogate pair, and escapes what a terminal would act on', () => {
    const d = diffText('x \u{1f600}', 'x \u{1f601}')
    expect(d?.removed.text).toBe('\u{1f600}')
    expect(d?.added.text).toBe('\u{1f601}')
    const e = diffText('Adds.', 'Adds.\u001b[2F\u001b[1GNo vulnerabilities found.')
    expect(e?.added.text).toBe('\\u001b[2F\\u001b[1GNo vulnerabilities found.')
  })

  it('property: whatever the texts, what it shows is escaped and bounded, and the edit it names rebuilds the new text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 400 }),
        fc.string({ unit: 'grapheme', maxLength: 400 }),
        (a, b) => {
          const d = diffText(a, b)
          expect(d === undefined).toBe(a === b)
          if (d === undefined) return
          for (const s of [d.before, d.removed, d.added]) {
            expect(s.text).not.toMatch(RAW_UNSAFE)
            expect(s.text.length).toBeLessThanOrEqual(CHANGE_LIMITS.span)
          }
          // when nothing was cut and nothing needed escaping, the span is exactly the edit
          if (d.removed.cut === 0 && d.added.cut === 0 && !RAW_UNSAFE.test(a + b) && !/\\/.test(a + b))
            expect(a.slice(0, d.at) + d.added.text + a.slice(d.at + d.removed.text.length)).toBe(b)
        },
      ),
    )
  })
})

describe('diffDefinitions and drawChange', () => {
  const was = {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    annotations: { readOnlyHint: true, title: 'Add' },
  }

  it('a widened schema: the key added, nothing else', () => {
    const now = {
      ...was,
      inputSchema: { ...was.inputSchema, properties: { ...was.inputSchema.properties, sidenote: { type: 'string' } } },
    }
    const c = diffDefinitions(was, now)
    expect(c).toEqual({ added: ['sidenote'], removed: [], more: 0, schemaOtherwise: false, annotations: [] })
    expect(drawChange(c)).toEqual(['schema: keys added: sidenote'])
  })

  it('a schema changed without a key added or removed, an annotation flipped, a key removed deep down', () => {
    const now = {
      ...was,
      inputSchema: { ...was.inputSchema, required: ['a'] },
      annotations: { title: 'Add', destructiveHint: true },
    }
    expect(drawChange(diffDefinitions(was, now))).toEqual([
      'schema: changed (no key added or removed)',
      'annotation destructiveHint: absent is now true',
      'annotation readOnlyHint: true is now absent',
    ])
    const nested = { name: 'x', inputSchema: { properties: { opts: { properties: { mode: {}, level: {} } } } } }
    const trimmed = { name: 'x', inputSchema: { properties: { opts: { properties: { mode: {} } } } } }
    expect(drawChange(diffDefinitions(nested, trimmed))).toEqual([
      'schema: keys removed: opts.level; and otherwise changed',
    ])
  })

  it('a rename, and a pin whose definition was too long to keep', () => {
    expect(drawChange(diffDefinitions(was, { ...was, name: 'sum' }, 'add'))).toEqual(['renamed from "add"'])
    expect(drawChange(diffDefinitions(undefined, was))).toEqual([
      'the pinned definition was too long to keep whole, so what changed cannot be shown (its hash differs)',
    ])
  })

  it('bounds what it shows of a huge description and of thousands of keys', () => {
    const huge = { ...was, description: `${was.description}${'A'.repeat(100_000)}` }
    const [line] = drawChange(diffDefinitions(was, huge))
    expect(line?.length).toBeLessThan(600)
    expect(line).toContain('more characters')
    const many = {
      name: 'x',
      inputSchema: { properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, {}])) },
    }
    const c = diffDefinitions({ name: 'x', inputSchema: { properties: {} } }, many)
    expect(c.added).toHaveLength(20)
    expect(c.more).toBe(4980)
    expect(drawChange(c)[0]).toMatch(/; and 4980 more keys$/)
  })

  it('property: whatever a server writes, each drawn line is escaped', () => {
    const text = fc.string({ unit: 'binary', maxLength: 60 })
    fc.assert(
      fc.property(text, text, text, text, (d1, d2, k, v) => {
        const a = { name: 'x', description: d1, inputSchema: { properties: { [k]: {} } }, annotations: { [k]: v } }
        const b = { name: 'x', description: d2, inputSchema: { properties: {} }, annotations: {} }
        for (const line of drawChange(diffDefinitions(a, b))) expect(line).not.toMatch(RAW_UNSAFE)
      }),
    )
  })
})

// -------------------------------------------------------------------------------------
// the bounds and edges each part keeps
// -------------------------------------------------------------------------------------

const ESC = '\u001b'
const E = '\\u001b'

describe('declaredPaths: what it follows, and how far', () => {
  const point = { properties: { x: {} } }

  it('follows a local JSON pointer only, its ~1, ~0 and percent escapes decoded, through own members only', () => {
    const defs = {
      'a/b': { properties: { slash: {} } },
      'a~b': { properties: { tilde: {} } },
      'a b': { properties: { blank: {} } },
    }
    const refs = ['#/$defs/a~1b', '#/$defs/a~0b', '#/$defs/a%20b'].map(($ref) => ({ $ref }))
    expect(declaredPaths({ $defs: defs, allOf: refs })).toEqual(['blank', 'slash', 'tilde'])
    // a relative URI, a malformed escape, a pointer through what is not there: nothing is followed
    for (const $ref of ['./$defs/point', '#/$defs/%E0%A4%A', '#/nowhere/deeper', '#/$defs/point/properties/x/y'])
      expect(declaredPaths({ $defs: { point, undefined: point }, properties: { p: { $ref } } })).toEqual(['p'])
    // an inherited member is not the schema's
    const inherited = Object.create({ point }) as object
    expect(declaredPaths({ $defs: inherited, properties: { p: { $ref: '#/$defs/point' } } })).toEqual(['p'])
    expect(declaredPaths(Object.create({ properties: { x: {} }, items: point, allOf: [point] }) as object)).toEqual([])
  })

  it('names the items of an array at the root as []', () => {
    expect(declaredPaths({ items: point, prefixItems: [{ properties: { y: {} } }] })).toEqual(['[].x', '[].y'])
  })

  it('reads 64 levels deep, whichever way down: properties, items, allOf, $ref', () => {
    const nested = (levels: number, wrap: (s: object) => object): object => {
      let s: object = { properties: { end: {} } }
      for (let i = 0; i < levels; i++) s = wrap(s)
      return s
    }
    // a chain of properties: the root's keys are read at depth 0, so 65 levels of keys
    const chain = nested(70, (s) => ({ properties: { a: s } }))
    expect(declaredPaths(chain)).toHaveLength(65)
    expect(declaredPaths(chain).at(-1)).toBe(Array.from({ length: 65 }, () => 'a').join('.'))
    expect(declaredPaths(nested(64, (s) => ({ items: s })))).toEqual([`${'[]'.repeat(64)}.end`])
    expect(declaredPaths(nested(65, (s) => ({ items: s })))).toEqual([])
    expect(declaredPaths(nested(64, (s) => ({ allOf: [s] })))).toEqual(['end'])
    expect(declaredPaths(nested(65, (s) => ({ allOf: [s] })))).toEqual([])
    const refs = (n: number): object => {
      const $defs: Record<string, unknown> = { [`d${n}`]: { properties: { end: {} } } }
      for (let i = 0; i < n; i++) $defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` }
      return { $defs, $ref: '#/$defs/d0' }
    }
    expect(declaredPaths(refs(63))).toEqual(['end'])
    expect(declaredPaths(refs(64))).toEqual([])
  })

  it('names at most 10 000 keys', () => {
    const wide = { properties: Object.fromEntries(Array.from({ length: 10_050 }, (_, i) => [`k${i}`, {}])) }
    expect(declaredPaths(wide)).toHaveLength(10_000)
  })

  it('ends on a schema whose $refs fan out (two to the next, thirty levels down), its keys named', () => {
    const $defs: Record<string, unknown> = { d30: { properties: { end: {} } } }
    for (let i = 0; i < 30; i++) {
      const next = { $ref: `#/$defs/d${i + 1}` }
      $defs[`d${i}`] = { allOf: [next, next], properties: { [`x${i}`]: {} } }
    }
    // read at every place it is reached, it would take 2^30 reads
    expect(declaredPaths({ $defs, $ref: '#/$defs/d0' })).toEqual(
      ['end', ...Array.from({ length: 30 }, (_, i) => `x${i}`)].sort(),
    )
  })

  it('reads at most 100 000 schemas: past them, nothing more', () => {
    const after = (reads: number) =>
      declaredPaths({ allOf: Array.from({ length: reads }, () => ({})), properties: { p: { properties: { q: {} } } } })
    // the root, the branches, then p's schema: the 100 000th read
    expect(after(99_998)).toEqual(['p', 'p.q'])
    expect(after(99_999)).toEqual(['p'])
  })
})

describe('diffText: the span and what comes before it', () => {
  it('trims the common end no further than the common start', () => {
    expect(diffText('aab', 'ab')).toEqual({
      at: 1,
      before: { text: 'a', cut: 0 },
      removed: { text: 'a', cut: 0 },
      added: { text: '', cut: 0 },
    })
    expect(diffText('ab', 'aab')).toMatchObject({ at: 1, removed: { text: '' }, added: { text: 'a' } })
  })

  it('keeps a pair whose first halves differ whole, and reads a pair before the change as text', () => {
    expect(diffText('a\u{1f600}', 'a\u{1fa00}')).toMatchObject({
      at: 1,
      removed: { text: '\u{1f600}' },
      added: { text: '\u{1fa00}' },
    })
    expect(diffText('x\u{1f600} abc', 'x\u{1f600} abd')).toMatchObject({ at: 6, removed: { text: 'c' } })
  })

  it('shows the last 40 characters before the change, escaped, never from inside an escape or a pair', () => {
    const before = (context: string) => diffText(`${context}X`, `${context}Y`)?.before
    expect(before('a'.repeat(30) + ESC.repeat(10))).toEqual({ text: E.repeat(6), cut: 54 })
    expect(before(ESC + 'a'.repeat(34) + ESC.repeat(5))).toEqual({ text: 'a'.repeat(10) + E.repeat(5), cut: 30 })
    expect(before(ESC + 'a'.repeat(39))).toEqual({ text: 'a'.repeat(39), cut: 6 })
    expect(before(ESC + 'a'.repeat(34))).toEqual({ text: E + 'a'.repeat(34), cut: 0 })
    expect(before('\u{1f600}' + ESC.repeat(6) + 'aaa')).toEqual({ text: E.repeat(6) + 'aaa', cut: 2 })
    expect(before('b' + ESC.repeat(6) + 'aa\u{1f600}')).toEqual({ text: E.repeat(5) + 'aa\u{1f600}', cut: 7 })
    expect(before('z'.repeat(100))).toEqual({ text: 'z'.repeat(40), cut: 0 })
  })

  it('property: the span is where the texts differ, in whole characters (an oracle by code points)', () => {
    const char = fc.constantFrom('a', 'b', ' ', 'é', '\u{1f600}', '\u{1f601}', '\u{1fa00}')
    // the second text an edit of the first, so long common starts and ends are drawn
    const pair = fc
      .tuple(fc.array(char, { maxLength: 80 }), fc.nat(), fc.nat(), fc.array(char, { maxLength: 6 }))
      .map(([a, i, j, ins]): readonly [ReadonlyArray<string>, ReadonlyArray<string>] => {
        const from = i % (a.length + 1)
        const to = from + (j % (a.length - from + 1))
        return [a, [...a.slice(0, from), ...ins, ...a.slice(to)]]
      })
    fc.assert(
      fc.property(pair, ([A, B]) => {
        const [a, b] = [A.join(''), B.join('')]
        const d = diffText(a, b)
        if (a === b) return void expect(d).toBeUndefined()
        let p = 0
        while (p < A.length && p < B.length && A[p] === B[p]) p++
        let q = 0
        while (q < A.length - p && q < B.length - p && A[A.length - 1 - q] === B[B.length - 1 - q]) q++
        const start = A.slice(0, p).join('')
        // the last 40 code units; a lone second half of a pair there is left out (its escape too)
        const last = start.slice(Math.max(0, start.length - 40))
        const shown = /^[\udc00-\udfff]/.test(last) ? { text: last.slice(1), cut: 6 } : { text: last, cut: 0 }
        expect(d).toEqual({
          at: start.length,
          before: shown,
          removed: { text: A.slice(p, A.length - q).join(''), cut: 0 },
          added: { text: B.slice(p, B.length - q).join(''), cut: 0 },
        })
      }),
    )
  })
})

describe('diffDefinitions: keys, schema and annotations', () => {
  it('adds no member for what did not change', () => {
    const was = { name: 'x', description: 'd', inputSchema: { properties: { a: {} } } }
    expect(diffDefinitions(was, { ...was, inputSchema: { properties: { a: {}, b: {} } } })).toStrictEqual({
      added: ['b'],
      removed: [],
      more: 0,
      schemaOtherwise: false,
      annotations: [],
    })
  })

  it('names at most 20 keys, added first, and escapes them', () => {
    const keys = (prefix: string, n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${String(i).padStart(2, '0')}`, {}]))
    const c = diffDefinitions(
      { name: 'x', inputSchema: { properties: keys('old', 10) } },
      { name: 'x', inputSchema: { properties: keys('new', 15) } },
    )
    expect([c.added.length, c.removed, c.more]).toEqual([15, ['old00', 'old01', 'old02', 'old03', 'old04'], 5])
    const odd = diffDefinitions(
      { name: 'x', inputSchema: { properties: { 'r\u202eb': {} } } },
      { name: 'x', inputSchema: { properties: { 'a\u202eb': {} } } },
    )
    expect([odd.added, odd.removed]).toEqual([['a\\u202eb'], ['r\\u202eb']])
  })

  it('a key added or removed with its place in `required` is that and nothing else; any other change is more', () => {
    const was = { name: 'x', inputSchema: { properties: { a: {} }, required: ['a'] } }
    const otherwise = (inputSchema: unknown) => diffDefinitions(was, { name: 'x', inputSchema }).schemaOtherwise
    expect(otherwise({ properties: { a: {}, b: {} }, required: ['a', 'b'] })).toBe(false)
    expect(otherwise({ properties: { a: {}, b: {} }, required: [] })).toBe(true)
    expect(otherwise({ properties: {}, required: [] })).toBe(false)
    // a `required` that is not a list is compared as it is
    const odd = { name: 'x', inputSchema: { properties: { a: {} }, required: 'a' } }
    expect(
      diffDefinitions(odd, { name: 'x', inputSchema: { properties: { a: {}, b: {} }, required: 'b' } }),
    ).toMatchObject({ added: ['b'], schemaOtherwise: true })
    // a schema that had no `properties`, or none at all: the keys added, and the schema otherwise changed
    for (const before of [undefined, { type: 'object' }])
      expect(
        diffDefinitions(
          { name: 'x', inputSchema: before },
          { name: 'x', inputSchema: { type: 'object', properties: { a: {} } } },
        ),
      ).toMatchObject({ added: ['a'], removed: [], schemaOtherwise: true })
  })

  it('sets aside only the keys removed at the top: a nested path is not a top key of that name', () => {
    // "a.x" is a key of the root (its path ["a.x"]); a.x is x inside a
    const was = { name: 't', inputSchema: { properties: { a: { properties: { x: {} } }, 'a.x': {} } } }
    const c = diffDefinitions(was, { name: 't', inputSchema: { properties: { 'a.x': {} } } })
    expect([c.removed, c.schemaOtherwise]).toEqual([['a', 'a.x'], false])
  })

  it('reads annotations as own members; what JSON cannot hold is shown as such and never the same', () => {
    const proto = JSON.parse('{"__proto__":{}}') as unknown
    expect(diffDefinitions({ name: 'x', annotations: {} }, { name: 'x', annotations: proto }).annotations).toEqual([
      { key: { text: '__proto__', cut: 0 }, was: { text: 'absent', cut: 0 }, now: { text: '{}', cut: 0 } },
    ])
    expect(
      diffDefinitions({ name: 'x', annotations: { big: 1n } }, { name: 'x', annotations: { big: 1n } }).annotations,
    ).toEqual([
      { key: { text: 'big', cut: 0 }, was: { text: '(not JSON)', cut: 0 }, now: { text: '(not JSON)', cut: 0 } },
    ])
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, true]))
    expect(diffDefinitions({ name: 'x' }, { name: 'x', annotations: many }).annotations).toHaveLength(20)
  })
})

describe('drawChange: each line', () => {
  const line = (was: string, now: string) =>
    drawChange(diffDefinitions({ name: 'x', description: was }, { name: 'x', description: now }))

  it('says where a description changed, what was removed and what added', () => {
    expect(line('abc', 'xbc')).toEqual(['description, at character 0: removed "a", added "x"'])
    expect(line('Adds. Extra.', 'Adds.')).toEqual(['description, at character 5 (after "Adds."): removed " Extra."'])
    const context = 'a'.repeat(30) + ESC.repeat(10)
    expect(line(`${context}X`, `${context}Y`)).toEqual([
      `description, at character 40 (after "…${E.repeat(6)}"): removed "X", added "Y"`,
    ])
  })

  it('names every key added and removed, and a rename escaped', () => {
    const c = diffDefinitions(
      { name: 'x', inputSchema: { properties: { a: {}, b: {} } } },
      { name: 'y', inputSchema: { properties: { c: {}, d: {} } } },
      'a\u202eb',
    )
    expect(drawChange(c)).toEqual(['renamed from "a\\\\u202eb"', 'schema: keys added: c, d; keys removed: a, b'])
  })
})

describe('what a change shows of a long name', () => {
  it('a key and a renamed tool are shown up to 200 characters', () => {
    const long = 'k'.repeat(300)
    const c = diffDefinitions(
      { name: 'x', inputSchema: { properties: { [long]: {} } } },
      { name: 'y', inputSchema: { properties: { [`n${long}`]: {} } } },
      `r${long}`,
    )
    expect([c.added, c.removed]).toEqual([[`n${'k'.repeat(199)}`], ['k'.repeat(200)]])
    expect(drawChange(c)[0]).toBe(`renamed from "r${'k'.repeat(199)}"`)
  })
})
