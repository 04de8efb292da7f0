// The constructs of issue 35, one by one, as zod 4 and the MCP SDK emit them and as the drafts spell
// them: records (additionalProperties with a schema), draft-7 tuples (additionalItems), discriminated
// unions inside discriminated unions, keys named only by `if`, `dependencies`, `$id` bases, `$anchor`
// and absolute self references; where the drafts differ, the document's `$schema` decides.
import { describe, expect, it } from 'vitest'
import { paths, obj, DRAFT_7, DRAFT_2020 } from '../../support/schemas.js'
import { z } from 'zod'
import { compileSchema, diffKeys } from '../../../src/index.js'

describe('additionalProperties with a schema: a record', () => {
  it('reads the values of z.record(z.string(), z.object(…)), each entry one place written .*', () => {
    const schema = z.toJSONSchema(z.object({ m: z.record(z.string(), z.object({ v: z.string() })) }))
    expect(paths(schema, { m: { a: { v: 'x' }, b: { v: 'y' } } })).toEqual([])
    expect(paths(schema, { m: { a: { vv: 'x' }, b: { vv: 'y', v: 'z' } } })).toEqual(['m.*.vv'])
    const [k] = diffKeys(compileSchema(schema))({ m: { a: { vv: 1 } } })
    expect(k?.place).toEqual(['m', { each: 'entry' }])
    expect(k?.key).toBe('vv')
  })

  it('reads an enum-keyed record by its names: a key outside the enum is heard, by its name below', () => {
    const schema = z.toJSONSchema(z.object({ m: z.record(z.enum(['a', 'b']), z.object({ v: z.string() })) }))
    expect(paths(schema, { m: { a: { v: '1' }, b: { vv: '2' }, c: { v: '3' } } })).toEqual(['m.b.vv', 'm.c'])
  })

  it('reads .catchall(obj): named keys as declared, every other key as an entry of the record', () => {
    const schema = z.toJSONSchema(z.object({ a: z.string() }).catchall(z.object({ v: z.number() })))
    expect(paths(schema, { a: 'x', extra: { v: 1 } })).toEqual([])
    expect(paths(schema, { a: 'x', extra: { vv: 1 } })).toEqual(['*.vv'])
  })

  it('declares nothing with true, {} or annotations only (an open object), and every key with a value schema', () => {
    for (const open of [true, {}, { description: 'anything' }])
      expect(paths(obj({ a: {} }, { additionalProperties: open }), { a: 1, zz: 1 }), JSON.stringify(open)).toEqual([
        'zz',
      ])
    expect(paths(obj({ a: {} }, { additionalProperties: { type: 'string' } }), { a: 1, zz: 'x' })).toEqual([])
  })

  it('keeps a record beside a sibling conjunct that names the key: both decide its value', () => {
    const schema = {
      allOf: [obj({ o: obj({ a: {} }) }), { type: 'object', additionalProperties: obj({ b: {} }) }],
    }
    // `o` is named by the first conjunct, and falls to the second's record: a and b are both declared in it
    expect(paths(schema, { o: { a: 1, b: 1, zz: 1 } })).toEqual(['o.zz'])
  })

  it('quotes a literal * key, so no record entry and key share a path', () => {
    expect(paths(obj({ a: obj({ x: {} }) }), { a: { '*': 1 }, '*': 2 })).toEqual(['["*"]', 'a["*"]'])
  })
})

describe('additionalItems (draft 4 to 2019-09)', () => {
  it('reads the rest of a tuple as the MCP SDK writes z.tuple([…], rest)', () => {
    const schema = z.toJSONSchema(
      z.object({ t: z.tuple([z.object({ a: z.string() })], z.object({ b: z.string() })) }),
      {
        target: 'draft-7',
      },
    )
    expect(paths(schema, { t: [{ a: 'x' }, { b: 'y' }, { b: 'z' }] })).toEqual([])
    expect(
      paths(schema, {
        t: [
          { a: 'x', b: 'q' },
          { b: 'y', a: 'q' },
        ],
      }),
    ).toEqual(['t[].a', 't[].b'])
  })

  it('is not read in 2020-12, where prefixItems and items are, nor past an items schema', () => {
    const tuple = { type: 'array', items: [obj({ a: {} })], additionalItems: obj({ b: {} }) }
    expect(paths({ $schema: DRAFT_2020, ...obj({ t: tuple }) }, { t: [{ zz: 1 }, { zz: 1 }] })).toEqual([])
    expect(
      paths(obj({ t: { type: 'array', items: obj({ a: {} }), additionalItems: obj({ b: {} }) } }), {
        t: [{ a: 1, b: 1 }],
      }),
    ).toEqual(['t[].b'])
    expect(
      paths(obj({ t: { type: 'array', items: [], additionalItems: obj({ b: {} }) } }), { t: [{ zz: 1 }] }),
    ).toEqual(['t[].zz'])
  })

  it('leaves prefixItems unread before 2020-12, and reads both spellings without a $schema', () => {
    const both = obj({ t: { type: 'array', prefixItems: [obj({ a: {} })], items: [obj({ b: {} })] } })
    expect(paths(both, { t: [{ a: 1, b: 1, zz: 1 }] })).toEqual(['t[].zz'])
    expect(paths({ $schema: DRAFT_7, ...both }, { t: [{ a: 1, b: 1, zz: 1 }] })).toEqual(['t[].a', 't[].zz'])
    expect(paths({ $schema: DRAFT_2020, ...both }, { t: [{ a: 1, b: 1, zz: 1 }] })).toEqual(['t[].b', 't[].zz'])
  })
})

describe('discriminated unions inside discriminated unions', () => {
  const schema = z.toJSONSchema(
    z.discriminatedUnion('t', [
      z.object({ t: z.literal('x'), a: z.string() }),
      z.discriminatedUnion('t', [
        z.object({ t: z.literal('y'), p: z.string() }),
        z.object({ t: z.literal('z'), q: z.string() }),
      ]),
    ]),
  )

  it('lets the tag pick through both levels, so a key of another branch is heard', () => {
    expect(paths(schema, { t: 'x', p: 'no' })).toEqual(['p'])
    expect(paths(schema, { t: 'y', a: 'no', q: 'no' })).toEqual(['a', 'q'])
    expect(paths(schema, { t: 'z', q: 'yes' })).toEqual([])
  })

  it('falls back to every branch when the value picks none', () => {
    expect(paths(schema, { t: 'w', a: 1, p: 1, q: 1, zz: 1 })).toEqual(['zz'])
  })
})

describe('conditionals and dependencies', () => {
  it('declares a key named only in if, and in then and else, without judging the place by their type', () => {
    const schema = obj(
      { kind: {} },
      { if: obj({ mode: { const: 'x' } }), then: { type: 'string' }, else: obj({ e: {} }) },
    )
    expect(paths(schema, { kind: 1, mode: 'x', e: 1, zz: 1 })).toEqual(['zz'])
    // a draft-6 document has no conditionals: their keys are not declared
    expect(paths({ $schema: 'http://json-schema.org/draft-06/schema#', ...schema }, { kind: 1, mode: 'x' })).toEqual([
      'mode',
    ])
  })

  it('reads dependencies whose values are schemas (drafts 4 to 7) as dependentSchemas', () => {
    const schema = obj({ a: {} }, { dependencies: { a: obj({ b: obj({ c: {} }) }), x: ['a'] } })
    expect(paths(schema, { a: 1, b: { c: 1, zz: 1 } })).toEqual(['b.zz'])
    expect(paths({ $schema: DRAFT_7, ...schema }, { a: 1, b: {} })).toEqual([])
    expect(paths({ $schema: DRAFT_2020, ...schema }, { a: 1, b: {} })).toEqual(['b'])
    expect(
      paths({ $schema: DRAFT_7, ...obj({ a: {} }, { dependentSchemas: { a: obj({ b: {} }) } }) }, { a: 1, b: 1 }),
    ).toEqual(['b'])
  })

  it('does not take a tag from a pin inside a conditional', () => {
    const branch = (tag: string, key: string) =>
      obj({ kind: { type: 'string' }, [key]: {} }, { if: obj({ kind: { const: tag } }), then: obj({}) })
    const schema = { oneOf: [branch('a', 'x'), branch('b', 'y')] }
    expect(paths(schema, { kind: 'a', y: 1 })).toEqual([])
  })
})

describe('references by base URI, anchor and absolute URI', () => {
  it('resolves $ref inside a sub-schema with its own $id from that $id, not from the document root', () => {
    const schema = {
      $id: 'https://example.com/root.json',
      ...obj({
        inner: {
          $id: 'inner/',
          $defs: { item: obj({ right: {} }) },
          ...obj({ x: { $ref: '#/$defs/item' } }),
        },
      }),
      $defs: { item: obj({ wrong: {} }) },
    }
    expect(paths(schema, { inner: { x: { right: 1, wrong: 1 } } })).toEqual(['inner.x.wrong'])
  })

  it('resolves $anchor, a draft-7 $id fragment and a draft-4 id fragment', () => {
    expect(
      paths(
        { ...obj({ a: { $ref: '#node' } }), $defs: { n: { $anchor: 'node', ...obj({ b: {} }) } } },
        { a: { b: 1, zz: 1 } },
      ),
    ).toEqual(['a.zz'])
    const seven = {
      $schema: DRAFT_7,
      ...obj({ a: { $ref: '#node' } }),
      definitions: { n: { $id: '#node', ...obj({ b: {} }) } },
    }
    expect(paths(seven, { a: { b: 1, zz: 1 } })).toEqual(['a.zz'])
    const four = {
      $schema: 'http://json-schema.org/draft-04/schema#',
      ...obj({ a: { $ref: '#node' } }),
      definitions: { n: { id: '#node', ...obj({ b: {} }) } },
    }
    expect(paths(four, { a: { b: 1, zz: 1 } })).toEqual(['a.zz'])
    // $anchor is not a keyword before 2019-09
    expect(
      paths(
        {
          $schema: DRAFT_7,
          ...obj({ a: { $ref: '#node' } }),
          definitions: { n: { $anchor: 'node', ...obj({ b: {} }) } },
        },
        { a: { zz: 1 } },
      ),
    ).toEqual([])
  })

  it('resolves an absolute reference to the document itself, whole or by pointer, and a relative one by $id', () => {
    const id = 'https://example.com/tree.json'
    const tree = {
      $id: id,
      ...obj({ name: {}, kids: { type: 'array', items: { $ref: id } }, best: { $ref: `${id}#/$defs/leaf` } }),
      $defs: { leaf: obj({ l: {} }) },
    }
    expect(paths(tree, { kids: [{ nmae: 1 }], best: { l: 1, zz: 1 } })).toEqual(['best.zz', 'kids[].nmae'])
    const relative = { $id: id, ...obj({ kid: { $ref: 'tree.json' } }) }
    expect(paths(relative, { kid: { kid: { zz: 1 } } })).toEqual(['kid.kid.zz'])
  })

  it('leaves a remote reference silent, and one through a URN base', () => {
    expect(paths(obj({ a: { $ref: 'https://other.example/s.json' } }), { a: { zz: 1 } })).toEqual([])
    expect(paths({ $id: 'urn:uuid:1', ...obj({ a: { $ref: 'other.json' } }) }, { a: { zz: 1 } })).toEqual([])
    expect(
      paths(
        { $id: 'urn:uuid:1', ...obj({ a: { $ref: 'urn:uuid:1#/$defs/d' } }), $defs: { d: obj({ b: {} }) } },
        { a: { zz: 1 } },
      ),
    ).toEqual(['a.zz'])
  })

  it('ignores the siblings of $ref up to draft 7, their $id included, and reads them from 2019-09 on', () => {
    const withSibling = (draft: string) => ({
      $schema: draft,
      ...obj({ a: { $ref: '#/$defs/d', properties: { s: {} } } }),
      $defs: { d: obj({ b: {} }) },
    })
    expect(paths(withSibling(DRAFT_7), { a: { b: 1, s: 1 } })).toEqual(['a.s'])
    expect(paths(withSibling(DRAFT_2020), { a: { b: 1, s: 1 } })).toEqual([])
  })
})
