// The generated check against the interpreter it replaces, whatever the schema and the arguments (the
// interpreter is the model: a plain walk of the same places), and the fallback where code generation
// is refused: the interpreter does the whole walk, and the layer says so once.
import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { AuditDiagnostic, UnknownKeyWarning } from '../../../src/index.js'
import { compileSchema, diffKeys, drawAuditDiagnostic, fromTools, withUnknownKeyAudit } from '../../../src/index.js'
import { buildGraph } from '../../../src/steps/audit/Graph.js'
import { cleanText } from '../../../src/steps/audit/Schema.js'
import { seeded, validValue } from '../../support/validArgs.js'
import { generate } from '../../../src/steps/audit/Codegen.js'
import type { Scratch, UnknownKey } from '../../../src/steps/audit/Walk.js'
import { scratchOf, takeFound, walk } from '../../../src/steps/audit/Walk.js'

// names from a small alphabet, so schemas and arguments meet
const name = fc.constantFrom('a', 'b', 'k', 't', 'x_1', '__proto__', '*', 'a.b', '')
const prim = fc.constantFrom<unknown>('a', 'b', 1, true, null)

const schemaArb: fc.Arbitrary<unknown> = fc.letrec<{ s: unknown }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(
      {},
      true,
      false,
      { type: 'string' },
      { type: 'object' },
      { $ref: '#' },
      { $ref: '#/$defs/d' },
      { const: 'a' },
      { enum: ['b'] },
    ),
    fc.record(
      {
        type: fc.constantFrom('object', 'array', ['object', 'null']),
        properties: fc.dictionary(name, tie('s'), { maxKeys: 3 }),
        patternProperties: fc.dictionary(fc.constantFrom('^x_', 'b$', '('), tie('s'), { maxKeys: 1 }),
        additionalProperties: fc.oneof(fc.constant(false), fc.constant({}), tie('s')),
        propertyNames: fc.constant({ enum: ['a', 'k'] }),
        items: fc.oneof(tie('s'), fc.array(tie('s'), { maxLength: 2 })),
        prefixItems: fc.array(tie('s'), { maxLength: 2 }),
        additionalItems: tie('s'),
        anyOf: fc.array(tie('s'), { minLength: 1, maxLength: 3 }),
        oneOf: fc.array(tie('s'), { minLength: 1, maxLength: 3 }),
        allOf: fc.array(tie('s'), { minLength: 1, maxLength: 2 }),
        if: tie('s'),
        then: tie('s'),
        dependentSchemas: fc.dictionary(name, tie('s'), { maxKeys: 1 }),
        const: prim,
      },
      { requiredKeys: [] },
    ),
  ),
})).s

const documentArb = fc
  .tuple(
    schemaArb,
    schemaArb,
    fc.constantFrom(
      undefined,
      'http://json-schema.org/draft-07/schema#',
      'https://json-schema.org/draft/2020-12/schema',
    ),
  )
  .map(([s, d, draft]) =>
    typeof s === 'object' && s !== null
      ? { ...s, $defs: { d }, ...(draft === undefined ? {} : { $schema: draft }) }
      : s,
  )

const valueArb: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    prim,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(name, tie('v'), { maxKeys: 4 }).map((o) => JSON.parse(JSON.stringify(o)) as unknown),
  ),
})).v

const run = (check: (v: unknown, s: Scratch) => void, value: unknown): ReadonlyArray<UnknownKey> => {
  const s = scratchOf(new Set(['reason', 'k']))
  check(value, s)
  return takeFound(s)
}

describe('the generated check', () => {
  it('finds what the interpreter finds, with the same places and declared keys (model: the interpreter)', () => {
    fc.assert(
      fc.property(documentArb, fc.array(valueArb, { minLength: 1, maxLength: 4 }), (schema, values) => {
        const { root } = buildGraph(schema)
        const generated = generate(root)
        expect(generated).toBeDefined()
        const interpreted = (v: unknown, s: Scratch): void => walk(s, v, [root], 0)
        for (const v of values) {
          const want = run(interpreted, v).map((k) => ({ ...k, declared: [...k.declared].sort() }))
          const got = run(generated?.check as (v: unknown, s: Scratch) => void, v).map((k) => ({
            ...k,
            declared: [...k.declared].sort(),
          }))
          expect(got).toEqual(want)
        }
      }),
    )
  })

  it('keeps its source, one function per set of places, and reads a __proto__ key as the member it is', () => {
    const shape = compileSchema(
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","properties":{"a":{}}}}}'),
    )
    expect(shape.source).toContain('case "__proto__"')
    expect(
      diffKeys(shape)(JSON.parse('{"__proto__":{"a":1,"zz":2}}') as Record<string, unknown>).map((k) => k.path),
    ).toEqual(['__proto__.zz'])
  })

  it('allocates no result for a clean call: the same empty list every time', () => {
    const diff = diffKeys(
      compileSchema({ type: 'object', properties: { a: { type: 'object', properties: { b: {} } } } }),
    )
    expect(diff({ a: { b: 1 } })).toBe(diff({ a: { b: 2 } }))
  })
})

describe('the text check', () => {
  const tolerated = new Set(['reason', 'k'])
  // schemas whose places are mostly decided by name (what the text check follows), with unions, tuples, records
  // and references among them; and calls made valid for them, then given a stray key somewhere
  const namedArb: fc.Arbitrary<unknown> = fc.letrec<{ s: unknown }>((tie) => ({
    s: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom<unknown>({}, { type: 'string' }, { type: 'number' }, { $ref: '#' }, { const: 'a' }),
      fc.record({ type: fc.constant('object'), properties: fc.dictionary(name, tie('s'), { maxKeys: 3 }) }),
      fc.record({ type: fc.constant('array'), items: tie('s') }),
      fc.record({ type: fc.constant('array'), prefixItems: fc.array(tie('s'), { maxLength: 2 }) }),
      fc.record({ anyOf: fc.array(tie('s'), { minLength: 1, maxLength: 2 }) }),
      fc.record({ allOf: fc.array(tie('s'), { minLength: 1, maxLength: 2 }) }),
      fc.record({
        type: fc.constant('object'),
        properties: fc.dictionary(name, tie('s'), { maxKeys: 2 }),
        additionalProperties: tie('s'),
      }),
    ),
  })).s
  const rootArb = fc.dictionary(name, namedArb, { minKeys: 1, maxKeys: 4 }).map((properties) => ({
    type: 'object',
    properties,
  }))
  // a stray key put into the n-th object of a value (or none)
  const stray = (v: unknown, n: number, key: string): unknown => {
    let seen = 0
    const go = (u: unknown): unknown => {
      if (Array.isArray(u)) return u.map(go)
      if (typeof u !== 'object' || u === null) return u
      const out: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(u)) out[k] = go(x)
      if (seen++ === n) out[key] = 1
      return out
    }
    return go(v)
  }

  // its promise: a text it accepts is a call in which the walk hears nothing (model: the interpreter's walk of
  // JSON.parse's reading)
  it('whatever the schema and the call, a text it accepts is one the walk finds clean; valid calls are accepted', () => {
    let accepted = 0
    let refused = 0
    fc.assert(
      fc.property(rootArb, fc.integer(), fc.nat({ max: 6 }), name, (schema, seed, n, key) => {
        const clean = cleanText(compileSchema(schema), tolerated)
        expect(clean).toBeDefined()
        const valid = validValue(schema, seeded(seed), true)
        if (valid === undefined) return
        const { root } = buildGraph(schema)
        for (const call of [valid, stray(valid, n, key), stray(valid, n, `${key}_stray`)]) {
          const text = JSON.stringify(call)
          const heard = run((v, sc) => walk(sc, v, [root], 0), JSON.parse(text) as unknown)
          if (clean?.(text) === true) {
            accepted++
            expect(heard).toEqual([])
          } else if (heard.length > 0) refused++
        }
      }),
    )
    // the property says something: clean texts were read unparsed, and texts with a stray key refused
    expect(accepted).toBeGreaterThan(100)
    expect(refused).toBeGreaterThan(50)
  })
})

describe('where code generation is refused', () => {
  afterEach(() => vi.unstubAllGlobals())
  const refuse = () =>
    vi.stubGlobal('Function', function () {
      throw new EvalError('Code generation from strings disallowed for this context')
    })

  it('walks with the interpreter, hearing the same keys', () => {
    refuse()
    const schema = { type: 'object', properties: { o: { type: 'object', properties: { a: {} } } } }
    const shape = compileSchema(schema)
    expect(shape.source).toBeUndefined()
    expect(diffKeys(shape)({ o: { a: 1, zz: 1 }, yy: 1 }).map((k) => k.path)).toEqual(['o.zz', 'yy'])
  })

  it('says so once per layer, however many listings and tools', async () => {
    refuse()
    const diagnostics: Array<AuditDiagnostic> = []
    const said: Array<UnknownKeyWarning> = []
    const tool = (n: string) => ({
      declaration: {
        type: 'function' as const,
        function: { name: n, parameters: { type: 'object', properties: { a: {} } } },
      },
      run: () => TE.right('ok'),
    })
    const tools = pipe(
      fromTools([tool('one'), tool('two')]),
      withUnknownKeyAudit({ onWarn: (w) => void said.push(w), onDiagnostic: (d) => void diagnostics.push(d) }),
    )
    await tools.toolsForLlm()
    await tools.toolsForLlm()
    await tools.executeToolCalls([{ id: 'c1', function: { name: 'one', arguments: '{"a":1,"zz":2}' } }])()
    expect(diagnostics).toEqual([{ _tag: 'CodeGenerationRefused', tools: 2 }])
    expect(said.map((w) => w.unknownKeys)).toEqual([['zz']])
    expect(drawAuditDiagnostic({ _tag: 'CodeGenerationRefused', tools: 2 })).toBe(
      'toolstack: this runtime refuses code generated from strings (new Function), so the calls of 2 tools are ' +
        'audited by the interpreter: the same keys are heard, more slowly',
    )
    expect(drawAuditDiagnostic({ _tag: 'CodeGenerationRefused', tools: 1 })).toContain('the calls of 1 tool are')
  })

  it('says nothing where code generation works', async () => {
    const diagnostics: Array<AuditDiagnostic> = []
    const tools = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'one', parameters: { type: 'object', properties: { a: {} } } },
          },
          run: () => TE.right('ok'),
        },
      ]),
      withUnknownKeyAudit({ onWarn: () => undefined, onDiagnostic: (d) => void diagnostics.push(d) }),
    )
    await tools.toolsForLlm()
    expect(diagnostics).toEqual([])
  })
})
