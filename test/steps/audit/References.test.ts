// What a `$ref` names, case by case: the index of identifiers (`$id`, `id`, `$anchor`, a fragment `$id`) as each
// draft reads it, its depth bound, JSON pointers, and the base a schema reached by pointer keeps. Each case is
// written so that the reference, resolved or not, changes what is heard: a resolved one declares `a` and closes
// nothing, so a stray `zz` is heard; an unresolved one makes the place schema-free, so nothing is.
import { describe, expect, it } from 'vitest'
import { paths, obj, DRAFT_4, DRAFT_6, DRAFT_7, DRAFT_2019, DRAFT_2020 } from '../../support/schemas.js'

// `x` names `ref`; whatever `x` holds, `a` is declared there only if the reference resolves
const through = (ref: string, more: Record<string, unknown>) => obj({ x: { $ref: ref } }, more)
const RESOLVED = ['x.zz']
const UNRESOLVED: ReadonlyArray<string> = []
const ARGS = { x: { a: 1, zz: 1 } }

describe('the index of identifiers', () => {
  it('reads identifiers to its depth bound, and no deeper', () => {
    // a chain of $defs, one level per step, with the identified schema at `depth`
    const nested = (depth: number) => {
      let s: Record<string, unknown> = obj({ a: {} }, { $id: 'https://example.com/deep.json' })
      for (let i = 0; i < depth; i++) s = { $defs: { d: s } }
      return s
    }
    const at = (depth: number) =>
      paths({ ...through('https://example.com/deep.json', {}), $defs: { d: nested(depth - 1) } }, ARGS)
    expect(at(1)).toEqual(RESOLVED)
    expect(at(256)).toEqual(RESOLVED)
    expect(at(257)).toEqual(UNRESOLVED)
  })

  it('up to draft 7, lets a $ref hide the $id beside it; from 2019-09, reads it', () => {
    // a.json, when read, is only a reference to b.json, relative to a.json's own base
    const beside = (draft: string | undefined) =>
      paths(
        through('https://example.com/a.json', {
          $schema: draft,
          $defs: {
            a: { $id: 'https://example.com/a.json', $ref: 'b.json' },
            b: obj({ a: {} }, { $id: 'https://example.com/b.json' }),
          },
        }),
        ARGS,
      )
    expect(beside(DRAFT_7)).toEqual(UNRESOLVED)
    expect(beside(DRAFT_2019)).toEqual(RESOLVED)
    expect(beside(DRAFT_2020)).toEqual(RESOLVED)
    expect(beside(undefined)).toEqual(RESOLVED)
  })

  it('reads id in draft 4, $id from draft 6, and both without a draft', () => {
    const named = (draft: string | undefined, key: string) =>
      paths(
        through('https://example.com/a.json', {
          $schema: draft,
          $defs: { a: obj({ a: {} }, { [key]: 'https://example.com/a.json' }) },
        }),
        ARGS,
      )
    expect(named(DRAFT_4, 'id')).toEqual(RESOLVED)
    expect(named(DRAFT_4, '$id')).toEqual(UNRESOLVED)
    for (const draft of [DRAFT_6, DRAFT_7, DRAFT_2019, DRAFT_2020]) {
      expect(named(draft, '$id'), draft).toEqual(RESOLVED)
      expect(named(draft, 'id'), draft).toEqual(UNRESOLVED)
    }
    expect(named(undefined, '$id')).toEqual(RESOLVED)
    expect(named(undefined, 'id')).toEqual(RESOLVED)
  })

  it('takes an $id with a fragment as the resource without it', () => {
    for (const id of ['https://example.com/a.json#', 'https://example.com/a.json#/x'])
      expect(
        paths(through('https://example.com/a.json', { $defs: { a: obj({ a: {} }, { $id: id }) } }), ARGS),
        id,
      ).toEqual(RESOLVED)
  })

  it('reads a fragment $id as an anchor up to draft 7 only, and $anchor from 2019-09 only', () => {
    const fragment = (draft: string | undefined) =>
      paths(through('#here', { $schema: draft, $defs: { a: obj({ a: {} }, { $id: '#here' }) } }), ARGS)
    expect(fragment(DRAFT_7)).toEqual(RESOLVED)
    expect(fragment(undefined)).toEqual(RESOLVED)
    expect(fragment(DRAFT_2019)).toEqual(UNRESOLVED)
    expect(fragment(DRAFT_2020)).toEqual(UNRESOLVED)
    const anchor = (draft: string | undefined) =>
      paths(through('#here', { $schema: draft, $defs: { a: obj({ a: {} }, { $anchor: 'here' }) } }), ARGS)
    expect(anchor(DRAFT_7)).toEqual(UNRESOLVED)
    expect(anchor(DRAFT_2019)).toEqual(RESOLVED)
    expect(anchor(DRAFT_2020)).toEqual(RESOLVED)
    expect(anchor(undefined)).toEqual(RESOLVED)
  })

  it('names no anchor for a schema that declares none', () => {
    // every schema the index visits but `x` declares `a` (`true` is no schema object it visits)
    const declaring = { ...obj({ a: true }), $defs: { b: obj({ a: true }) } }
    for (const draft of [DRAFT_2020, undefined])
      expect(paths(through('#undefined', { $schema: draft, $defs: { a: declaring } }), ARGS)).toEqual(UNRESOLVED)
  })

  it('finds an $id under every keyword that holds a schema, a list or a map of them, and not in a value', () => {
    const identified = obj({ a: {} }, { $id: 'https://example.com/s.json' })
    const held = (holder: Record<string, unknown>) =>
      paths(through('https://example.com/s.json', { $defs: { holder } }), ARGS)
    const one = ['additionalProperties', 'additionalItems', 'items', 'contains', 'propertyNames', 'not', 'if', 'then']
    const more = ['else', 'unevaluatedProperties', 'unevaluatedItems', 'contentSchema']
    for (const k of [...one, ...more]) expect(held({ [k]: identified }), k).toEqual(RESOLVED)
    for (const k of ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'])
      expect(held({ [k]: [{}, identified] }), k).toEqual(RESOLVED)
    for (const k of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])
      expect(held({ [k]: { p: {}, q: identified } }), k).toEqual(RESOLVED)
    for (const k of ['const', 'enum', 'default', 'examples', 'stash'])
      expect(held({ [k]: k === 'enum' || k === 'examples' ? [identified] : identified }), k).toEqual(UNRESOLVED)
  })

  it('passes by an $id that is not a URI, keeping the base it had', () => {
    const schema = through('https://example.com/a.json#/$defs/b', {
      $id: 'https://example.com/a.json',
      $defs: { b: obj({ a: {} }), c: { $id: 'http://exa mple.com/', ...obj({ y: { $ref: '#/$defs/b' } }) } },
    })
    expect(paths(schema, ARGS)).toEqual(RESOLVED)
    // the bad `$id` neither throws nor moves the base: `#/$defs/b` below it is still a.json's
    const below = { ...schema, properties: { c: { $ref: '#/$defs/c' } } }
    expect(paths(below, { c: { y: { a: 1, zz: 1 } } })).toEqual(['c.y.zz'])
  })
})

describe('what each draft reads', () => {
  it('reads if, then and else from draft 7 on, and without a draft', () => {
    const conditional = (draft: string | undefined) =>
      paths(obj({ a: {} }, { $schema: draft, if: {}, then: obj({ b: {} }) }), { a: 1, b: 1, zz: 1 })
    expect(conditional(DRAFT_6)).toEqual(['b', 'zz'])
    for (const draft of [DRAFT_7, DRAFT_2019, DRAFT_2020, undefined]) expect(conditional(draft), draft).toEqual(['zz'])
  })

  it('reads a draft only from a $schema that is a string', () => {
    // draft 7 reads a `$ref` alone; without a draft, its siblings count too
    const schema = (named: unknown) =>
      obj({ x: { $ref: '#/$defs/e', ...obj({ a: {} }) } }, { $schema: named, $defs: { e: {} } })
    expect(paths(schema(DRAFT_7), ARGS)).toEqual([])
    expect(paths(schema([DRAFT_7]), ARGS)).toEqual(['x.zz'])
    expect(paths(schema(undefined), ARGS)).toEqual(['x.zz'])
  })
})

describe('resolving a reference', () => {
  it('takes a URI with an empty fragment as the resource itself', () => {
    const schema = through('https://example.com/a.json#', {
      $defs: { a: obj({ a: {} }, { $id: 'https://example.com/a.json' }) },
    })
    expect(paths(schema, ARGS)).toEqual(RESOLVED)
  })

  it('leaves a reference to a document it does not hold unresolved, siblings included', () => {
    for (const ref of ['https://example.com/other.json', 'https://example.com/other.json#/$defs/a'])
      expect(paths(obj({ x: { $ref: ref, ...obj({ a: {} }) } }), ARGS)).toEqual(UNRESOLVED)
  })

  it('gives a schema reached by a pointer its document as base, unless the index gave it one', () => {
    // `stash` is no keyword: the index does not read it, so the schema there is met only through the pointer
    const inner = {
      $id: 'https://example.com/inner.json',
      $defs: { c: obj({ a: {} }) },
      stash: { $ref: '#/$defs/c' },
    }
    const schema = through('https://example.com/inner.json#/stash', { $defs: { inner, c: obj({ b: {} }) } })
    expect(paths(schema, ARGS)).toEqual(RESOLVED)
    // a schema the index read keeps the base it gave it (its own `$id`), not the document the pointer went through
    const outer = {
      $id: 'https://example.com/outer.json',
      $defs: {
        c: obj({ b: {} }),
        own: { $id: 'https://example.com/own.json', $ref: '#/$defs/c', $defs: { c: obj({ a: {} }) } },
      },
    }
    expect(paths(through('https://example.com/outer.json#/$defs/own', { $defs: { outer } }), ARGS)).toEqual(RESOLVED)
  })
})
