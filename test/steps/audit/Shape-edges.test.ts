// What compileSchema and diffKeys promise beyond the constructs (round six of mutation testing): the draft a
// shape names, a union branch that cannot hold keys, a tool whose top level declares keys only through
// additionalProperties, a check made while another runs (a getter on the arguments), a key past the seen-set's
// length bound met again, and a batch whose calls are not a list.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { paths } from '../../support/schemas.js'
import { compileSchema, diffKeys, emptySeenSet } from '../../../src/index.js'
import { catalogueOf, toleratedOf } from '../../../src/steps/audit/Catalogue.js'
import { checkBatch, formatWarning } from '../../../src/steps/audit/Check.js'
import { batchOf } from '../../../src/steps/Batch.js'
import { MAX_KEY_CHARS, pairStats } from '../../../src/steps/audit/SeenSet.js'
import type { Batch, ToolCall } from '../../../src/kernel/model.js'

describe('compileSchema', () => {
  it('names the draft its $schema names, and has no draft member without one', () => {
    const object = { type: 'object', properties: { a: {} } }
    expect(compileSchema({ $schema: 'http://json-schema.org/draft-07/schema#', ...object }).draft).toBe(7)
    expect(compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...object }).draft).toBe(2020)
    expect(Object.hasOwn(compileSchema(object), 'draft')).toBe(false)
  })

  it('a union branch that cannot be an object declares no top-level key, whatever its properties say', () => {
    const shape = compileSchema({
      anyOf: [
        { type: 'object', properties: { a: {} } },
        { type: 'string', properties: { s: {} } },
      ],
    })
    expect([...shape.keys]).toEqual(['a'])
  })

  it('a tool whose top level declares keys only through additionalProperties is audited, by entry', () => {
    const schema = { type: 'object', additionalProperties: { type: 'object', properties: { v: {} } } }
    const catalogue = catalogueOf(toleratedOf())([
      { type: 'function', function: { name: 'record', parameters: schema } },
    ])
    expect(catalogue.has('record')).toBe(true)
    expect(paths(schema, { x: { v: 1, vv: 2 } })).toEqual(['*.vv'])
  })

  it('is flat when keys can be reported only at the top level', () => {
    const flat = (schema: unknown) => compileSchema(schema).flat
    expect(flat({ type: 'object', properties: { a: { type: 'string' }, b: {} } })).toBe(true)
    expect(flat({ type: 'object', properties: { a: { type: 'object', properties: { b: {} } } } })).toBe(false)
    expect(
      flat({ type: 'object', properties: { a: {} }, additionalProperties: { type: 'object', properties: { v: {} } } }),
    ).toBe(false)
    expect(flat({ type: 'object', properties: { a: {} }, patternProperties: { '^x': {} } })).toBe(false)
    expect(
      flat({
        anyOf: [
          { type: 'object', properties: { a: {} } },
          { type: 'object', properties: { b: {} } },
        ],
      }),
    ).toBe(false)
  })
})

describe('diffKeys', () => {
  it('a check made while another runs (from a getter of the arguments) keeps its own findings', () => {
    const schema = { type: 'object', properties: { a: { type: 'object', properties: { b: {} } }, c: {} } }
    const diff = diffKeys(compileSchema(schema))
    let inner: ReadonlyArray<string> = []
    // the outer check has found a key before the getter runs (for…in takes them in this order)
    const args = {
      outer_stray: 1,
      get a() {
        // two checks one after the other, both while the outer one runs
        inner = [...diff({ c: 1, inner_stray: 1 }), ...diff({ c: 1, second_stray: 1 })].map((k) => k.path)
        return { b: 1, a_stray: 1 }
      },
    }
    expect(diff(args).map((k) => k.path)).toEqual(['a.a_stray', 'outer_stray'])
    expect(inner).toEqual(['inner_stray', 'second_stray'])
    // and the next call, made after both, starts clean
    expect(diff({ c: 1, next: 1 }).map((k) => k.path)).toEqual(['next'])
  })

  it('a check a getter stops with a throw leaves nothing it found to the next call, and is not left busy', () => {
    const schema = { type: 'object', properties: { a: { type: 'object', properties: { b: {} } }, c: {} } }
    const diff = diffKeys(compileSchema(schema))
    const thrown = new Error('no a here')
    const args = {
      found_first: 1,
      get a(): never {
        throw thrown
      },
    }
    expect(() => diff(args)).toThrow(thrown)
    expect(diff({ c: 1 })).toEqual([])
    // a getter that checks again while the next call runs: that inner check gets its own findings, so the
    // outer call was the reused one, not left marked busy by the throw
    let inner: ReadonlyArray<string> = []
    const reentering = {
      outer_stray: 1,
      get a() {
        inner = diff({ inner_stray: 1 }).map((k) => k.path)
        return { b: 1 }
      },
    }
    expect(diff(reentering).map((k) => k.path)).toEqual(['outer_stray'])
    expect(inner).toEqual(['inner_stray'])
  })
})

describe('checkBatch', () => {
  const catalogue = catalogueOf(toleratedOf())([
    { type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: {} } } } },
  ])
  const call = (key: string) => ({
    id: '1',
    type: 'function' as const,
    function: { name: 'echo', arguments: JSON.stringify({ [key]: 1 }) },
  })

  it('a batch whose calls are not a list: no warning, and the same seen-set', () => {
    const seen = emptySeenSet
    const [warnings, after] = checkBatch(catalogue, {
      calls: 'not a list',
      argsAt: () => undefined,
    } as unknown as Batch)(seen)
    expect(warnings).toEqual([])
    expect(after).toBe(seen)
  })

  it("calls alone are read as a batch reads them, the name and the arguments from one read of the call's function", () => {
    const aliases = fc.array(
      fc.oneof(
        fc.constantFrom('text', 'txet', 'reason', '__proto__').map((k) => call(k)),
        fc.constantFrom(null, 7, { id: 'x' }, { id: 'y', function: { name: 'echo', arguments: '[1]' } }),
        fc.record({
          id: fc.string(),
          function: fc.record({ name: fc.constantFrom('echo', 'other'), arguments: fc.json() }),
        }),
      ),
      { maxLength: 8 },
    )
    fc.assert(
      fc.property(aliases, (calls) => {
        const asCalls = calls as unknown as ReadonlyArray<ToolCall>
        const [alone, afterAlone] = checkBatch(catalogue, { calls: asCalls })(emptySeenSet)
        const [batched, afterBatch] = checkBatch(catalogue, batchOf(asCalls))(emptySeenSet)
        expect(alone).toEqual(batched)
        expect(pairStats(afterAlone)).toEqual(pairStats(afterBatch))
      }),
    )
    // a function member that answers another object each time it is read: alone, it is read once
    let reads = 0
    const shifty = {
      id: '1',
      get function() {
        reads++
        return reads === 1 ? { name: 'echo', arguments: '{"txet":1}' } : { name: 'unlisted', arguments: '{"text":1}' }
      },
    } as unknown as ToolCall
    const [warnings] = checkBatch(catalogue, { calls: [shifty] })(emptySeenSet)
    expect(reads).toBe(1)
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['txet']])
  })

  it("never reads a clean call's id, alone or in a batch: only a call with an undeclared key is counted", () => {
    let reads = 0
    const counted = (args: string) =>
      ({
        get id() {
          reads++
          return 'c1'
        },
        type: 'function',
        function: { name: 'echo', arguments: args },
      }) as unknown as ToolCall
    const calls = [counted('{"text":1}'), counted('{"text":2}')]
    checkBatch(catalogue, { calls })(emptySeenSet)
    checkBatch(catalogue, batchOf(calls))(emptySeenSet)
    expect(reads).toBe(0)
    const [warnings] = checkBatch(catalogue, { calls: [counted('{"txet":1}')] })(emptySeenSet)
    expect(reads).toBe(1)
    expect(warnings.map((w) => w.id)).toEqual(['c1'])
  })

  it(`a key longer than ${MAX_KEY_CHARS} characters met again is not reported again; one character more is another key`, () => {
    const long = 'k'.repeat(MAX_KEY_CHARS + 50)
    const [first, seen] = checkBatch(catalogue, batchOf([call(long)]))(emptySeenSet)
    expect(first.map((w) => w.keys[0]?.key)).toEqual([long])
    const [again, after] = checkBatch(catalogue, batchOf([call(long)]))(seen)
    expect(again).toEqual([])
    const [other] = checkBatch(catalogue, batchOf([call(long + 'k')]))(after)
    expect(other).toHaveLength(1)
  })
})

describe('formatWarning', () => {
  it('an empty via names no layer', () => {
    const w = { tool: 'echo', id: '1', unknownKeys: ['x'], declaredKeys: ['text'] }
    expect(formatWarning({ ...w, via: '' })).toBe(formatWarning(w))
    expect(formatWarning({ ...w, via: 'stack' })).toBe(`${formatWarning(w)} [via stack]`)
  })
})
