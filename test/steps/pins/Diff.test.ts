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
