// What the audit knows about the tools in force: the catalogue of a listing.
import { describe, expect, it } from 'vitest'
import { compileSchema, diffKeys, extractDeclarations } from '../../../src/index.js'
import { catalogueOf, toleratedOf } from '../../../src/steps/audit/Catalogue.js'
import { decl } from '../../support/fakes.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

describe('toleratedOf', () => {
  it('is reason alone when no names are given', () => {
    expect([...toleratedOf()]).toEqual(['reason'])
    expect([...toleratedOf([])]).toEqual(['reason'])
  })
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('extractDeclarations', () => {
  it('reads nothing from a listing that is not an array, and does not throw', () => {
    for (const listing of [null, undefined, 42, {}, { length: 1, 0: decl('t', ['a']) }, new Set([decl('t', ['a'])])]) {
      expect(extractDeclarations(listing as never).size).toBe(0)
    }
  })
})

describe('diffKeys', () => {
  it('never reports reason, whatever names are tolerated besides', () => {
    const top = (tolerated: ReadonlySet<string>, args: Record<string, unknown>) =>
      diffKeys(compileSchema({ type: 'object', properties: { path: {} } }), tolerated)(args).map((k) => k.path)
    expect(top(new Set(['_meta']), { path: 1, reason: 1, _meta: 1, x: 1 })).toEqual(['x'])
    expect(top(new Set(), { reason: 1, x: 1 })).toEqual(['x'])
    expect(top(new Set(['reason', '_meta']), { path: 1, reason: 1, _meta: 1, x: 1 })).toEqual(['x'])
    expect(
      catalogueOf(new Set())([decl('t', ['path'])])
        .get('t')
        ?.diff({ reason: 1, x: 1 })
        .map((k) => k.path),
    ).toEqual(['x'])
  })
})

describe('catalogueOf', () => {
  it('leaves out a tool whose every property is a tolerated name, and keeps one that declares anything else', () => {
    const c = catalogueOf(toleratedOf(['_meta']))([
      decl('meta_only', ['_meta']),
      decl('meta_and_reason', ['_meta', 'reason']),
      decl('kept', ['_meta', 'path']),
    ])
    expect([...c.keys()]).toEqual(['kept'])
    expect(
      c
        .get('kept')
        ?.diff({ path: 1, _meta: 2, reason: 3, x: 4 })
        .map((k) => k.path),
    ).toEqual(['x'])
  })

  it('leaves out a tool that declares only reason, whatever names are tolerated', () => {
    expect(catalogueOf(new Set())([decl('ping', ['reason'])]).size).toBe(0)
    expect(catalogueOf(new Set(['_meta']))([decl('ping', ['reason']), decl('kept', ['reason', 'x'])]).size).toBe(1)
  })

  it('audits a tolerated name like any other when it is not tolerated here', () => {
    expect([...catalogueOf(toleratedOf())([decl('meta_only', ['_meta'])]).keys()]).toEqual(['meta_only'])
  })
})
