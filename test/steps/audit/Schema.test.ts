// The audit over whole schemas: nested objects, arrays, unions, references and
// patterns, against an oracle that knows the undeclared keys because it built the
// arguments that carry them.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { z } from 'zod'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { AuditDiagnostic, ToolCall, UnknownKeyWarning } from '../../../src/index.js'
import { compileSchema, diffKeys, fromTools, pathOf, withUnknownKeyAudit } from '../../../src/index.js'
import { catalogueOf, toleratedOf } from '../../../src/steps/audit/Catalogue.js'
import { byPath } from '../../../src/steps/audit/Walk.js'
import { ELEMENT as PATH_ELEMENT, ENTRY as PATH_ENTRY, renderPlace } from '../../../src/steps/audit/Path.js'

// -------------------------------------------------------------------------------------
// the oracle: a schema and a value built together, with the paths of the keys the value
// carries that the schema does not declare
// -------------------------------------------------------------------------------------

type Segment = string | typeof ELEMENT | typeof ENTRY
const ELEMENT = Symbol('element')
const ENTRY = Symbol('entry')

interface Built {
  readonly schema: unknown
  readonly value: unknown
  /** Undeclared keys, each as the segments from this value down to it. */
  readonly unknown: ReadonlyArray<ReadonlyArray<Segment>>
}

// written apart from pathOf: top-level keys bare unless empty, `*` or holding . [ ] ",
// deeper names bare unless empty, `*` or holding . [ ] " or a space
const render = (segments: ReadonlyArray<Segment>): string => {
  let out = ''
  segments.forEach((s, i) => {
    if (s === ELEMENT) out += '[]'
    else if (s === ENTRY) out += i === 0 ? '*' : '.*'
    else if (s === '' || s === '*' || (i === 0 ? /[.[\]"]/ : /[.[\]" ]/).test(s)) out += `[${JSON.stringify(s)}]`
    else out += i === 0 ? s : `.${s}`
  })
  return out
}

// declared names are lower-case words; undeclared ones come from another alphabet, so
// they are never declared anywhere, and some need quoting
const declaredName = fc.constantFrom('path', 'mode', 'text', 'items', 'opts', 'name', 'kind', 'size', 'tags', 'meta')
const strayName = fc.constantFrom('Stray', 'ZZ', 'a.b', 'two words', 'x[0]', '"q"', '', '*', '__proto__', 'constructor')

const leaf: fc.Arbitrary<Built> = fc.constantFrom<Built>(
  { schema: { type: 'string' }, value: 's', unknown: [] },
  { schema: { type: 'number' }, value: 3, unknown: [] },
  { schema: {}, value: null, unknown: [] },
  // an open map: a place that declares nothing is silent, whatever it holds
  { schema: { type: 'object', additionalProperties: true }, value: { Anything: 1, 'a.b': { c: 2 } }, unknown: [] },
)

const withOwn = (o: Record<string, unknown>, k: string, v: unknown): Record<string, unknown> =>
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })

/** An object schema with some properties, a value using some of them, and strays. */
const objectOf = (
  child: fc.Arbitrary<Built>,
): fc.Arbitrary<{
  props: Map<string, Built>
  schema: Record<string, unknown>
  value: Record<string, unknown>
  strays: ReadonlyArray<string>
}> =>
  fc
    .tuple(
      fc.uniqueArray(fc.tuple(declaredName, child), { minLength: 1, maxLength: 4, selector: ([k]) => k }),
      fc.uniqueArray(strayName, { maxLength: 2 }),
      fc.nat(),
    )
    .map(([entries, strays, pick]) => {
      const props = new Map(entries)
      const properties: Record<string, unknown> = {}
      const value: Record<string, unknown> = {}
      entries.forEach(([k, b], i) => {
        properties[k] = b.schema
        // the value leaves some declared keys out
        if ((pick >> i) % 3 !== 0) withOwn(value, k, b.value)
      })
      for (const s of strays) withOwn(value, s, 1)
      return { props, schema: { type: 'object', properties, additionalProperties: false }, value, strays }
    })

const unknownOf = (o: {
  props: Map<string, Built>
  value: Record<string, unknown>
  strays: ReadonlyArray<string>
}): Array<ReadonlyArray<Segment>> => [
  ...o.strays.map((s) => [s]),
  ...[...o.props]
    .filter(([k]) => Object.prototype.hasOwnProperty.call(o.value, k))
    .flatMap(([k, b]) => b.unknown.map((u) => [k, ...u])),
]

let defs = 0

const builtArb: (depth: number) => fc.Arbitrary<Built> = (depth) => {
  if (depth <= 0) return leaf
  const child = builtArb(depth - 1)
  const object = objectOf(child).map((o): Built => ({ schema: o.schema, value: o.value, unknown: unknownOf(o) }))
  const array = fc.tuple(child, fc.array(fc.nat(), { maxLength: 3 })).map(([b, n]): Built => ({
    schema: { type: 'array', items: b.schema },
    // every element is the same value: each position is the same place
    value: n.map(() => b.value),
    unknown: n.length === 0 ? [] : b.unknown.map((u) => [ELEMENT, ...u]),
  }))
  const tuple = fc.tuple(child, child).map(([a, b]): Built => ({
    schema: { type: 'array', prefixItems: [a.schema, b.schema] },
    value: [a.value, b.value],
    unknown: [...a.unknown, ...b.unknown].map((u) => [ELEMENT, ...u]),
  }))
  // anyOf: the value follows one branch; a key no branch declares is undeclared
  const anyOf = fc.tuple(objectOf(child), objectOf(child), fc.boolean()).map(([a, b, second]): Built => {
    const names = new Set(a.props.keys())
    for (const k of [...b.props.keys()]) if (names.has(k)) b.props.delete(k)
    // each branch declares a key of its own, so neither takes any object
    const bSchema = {
      type: 'object',
      properties: { onlyb: {}, ...Object.fromEntries([...b.props].map(([k, x]) => [k, x.schema])) },
    }
    const chosen =
      second && b.props.size > 0
        ? { ...b, value: Object.fromEntries([...b.props].map(([k, x]) => [k, x.value])), strays: [] }
        : a
    return { schema: { anyOf: [a.schema, bSchema, { type: 'null' }] }, value: chosen.value, unknown: unknownOf(chosen) }
  })
  // a discriminated union: the tag picks the branch, which alone decides, so a key only
  // the other branch declares is undeclared
  const tagged = fc.tuple(objectOf(child), objectOf(child)).map(([a, b]): Built => {
    a.props.delete('kind')
    b.props.delete('kind')
    const branch = (tag: string, o: typeof a) => ({
      type: 'object',
      properties: { kind: { const: tag }, ...Object.fromEntries([...o.props].map(([k, x]) => [k, x.schema])) },
    })
    const value: Record<string, unknown> = { kind: 'a' }
    for (const [k, x] of a.props) withOwn(value, k, x.value)
    const onlyB = [...b.props.keys()].filter((k) => !a.props.has(k))
    for (const k of onlyB) withOwn(value, k, 0)
    return {
      schema: { oneOf: [branch('a', a), branch('b', b)] },
      value,
      unknown: [...onlyB.map((k) => [k]), ...[...a.props].flatMap(([k, x]) => x.unknown.map((u) => [k, ...u]))],
    }
  })
  // allOf: the keys of every branch
  const allOf = fc.tuple(objectOf(child), objectOf(child)).map(([a, b]): Built => {
    for (const k of [...b.props.keys()]) if (a.props.has(k)) b.props.delete(k)
    const value: Record<string, unknown> = { ...a.value }
    for (const [k, x] of b.props) withOwn(value, k, x.value)
    return {
      schema: {
        allOf: [
          a.schema,
          { type: 'object', properties: Object.fromEntries([...b.props].map(([k, x]) => [k, x.schema])) },
        ],
      },
      value,
      unknown: [...unknownOf(a), ...[...b.props].flatMap(([k, x]) => x.unknown.map((u) => [k, ...u]))],
    }
  })
  // a reference into $defs (collected by the root)
  const ref = object.map((b): Built => ({
    schema: { $ref: `#/$defs/d${defs}`, [DEF]: b.schema, [DEF_NAME]: `d${defs++}` },
    value: b.value,
    unknown: b.unknown,
  }))
  // patternProperties: a key matching a pattern is declared
  const patterned = child.map((b): Built => ({
    schema: {
      type: 'object',
      properties: { name: { type: 'string' } },
      patternProperties: { '^x_': b.schema, '(': {} },
    },
    value: { name: 'n', x_1: b.value, x_2: b.value, Stray: 1 },
    unknown: [['Stray'], ...b.unknown.map((u) => ['x_1', ...u]), ...b.unknown.map((u) => ['x_2', ...u])],
  }))
  // a record (additionalProperties with a schema): every key declared, each entry's value one place (`*`)
  const record = objectOf(child).map((o): Built => ({
    schema: { type: 'object', additionalProperties: o.schema },
    value: { r1: o.value, r2: o.value },
    unknown: unknownOf(o).map((u) => [ENTRY, ...u]),
  }))
  // a draft-7 tuple: a position, then additionalItems for the rest
  const additionalItems = fc.tuple(child, child).map(([a, b]): Built => ({
    schema: { type: 'array', items: [a.schema], additionalItems: b.schema },
    value: [a.value, b.value, b.value],
    unknown: [...a.unknown, ...b.unknown].map((u) => [ELEMENT, ...u]),
  }))
  // a discriminated union inside a discriminated union: the tag picks through both levels
  const nestedTagged = fc.tuple(objectOf(child), objectOf(child), objectOf(child)).map(([a, b, c]): Built => {
    for (const o of [a, b, c]) o.props.delete('kind')
    const branch = (tag: string, o: typeof a) => ({
      type: 'object',
      properties: { kind: { const: tag }, ...Object.fromEntries([...o.props].map(([k, x]) => [k, x.schema])) },
    })
    const value: Record<string, unknown> = { kind: 'b' }
    for (const [k, x] of b.props) withOwn(value, k, x.value)
    const others = [...new Set([...a.props.keys(), ...c.props.keys()])].filter((k) => !b.props.has(k))
    for (const k of others) withOwn(value, k, 0)
    return {
      schema: { oneOf: [branch('a', a), { oneOf: [branch('b', b), branch('c', c)] }] },
      value,
      unknown: [...others.map((k) => [k]), ...[...b.props].flatMap(([k, x]) => x.unknown.map((u) => [k, ...u]))],
    }
  })
  // a key named only by `if` is declared
  const conditional = objectOf(child).map((o): Built => {
    const value = { ...o.value }
    withOwn(value, 'onlyif', 1)
    return {
      schema: { ...o.schema, if: { properties: { onlyif: { const: 1 } } }, then: { properties: { onlythen: {} } } },
      value,
      unknown: unknownOf(o),
    }
  })
  return fc.oneof(
    { weight: 3, arbitrary: object },
    array,
    tuple,
    anyOf,
    tagged,
    allOf,
    ref,
    patterned,
    record,
    additionalItems,
    nestedTagged,
    conditional,
  )
}

const DEF = Symbol('def')
const DEF_NAME = Symbol('defName')

/** Moves every inline reference target into the root's $defs, as JSON Schema wants it. */
const hoistDefs = (root: Record<string, unknown>): Record<string, unknown> => {
  const $defs: Record<string, unknown> = {}
  const visit = (u: unknown): unknown => {
    if (Array.isArray(u)) return u.map(visit)
    if (typeof u !== 'object' || u === null) return u
    const o = u as Record<string | symbol, unknown>
    if (o[DEF] !== undefined) {
      $defs[o[DEF_NAME] as string] = visit(o[DEF])
      return { $ref: o['$ref'] }
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, visit(v)]))
  }
  const out = visit(root) as Record<string, unknown>
  return { ...out, $defs }
}

const toolArb = fc.tuple(objectOf(builtArb(3)), fc.boolean()).map(([o, reason]) => {
  const value = { ...o.value }
  if (reason) withOwn(value, 'reason', 'why')
  return { parameters: hoistDefs(o.schema), value, expected: [...new Set(unknownOf(o).map(render))].sort() }
})

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('pathOf', () => {
  it('names top-level keys as they are, unless they could be taken for a path', () => {
    expect(['haed', 'the rest', '', '*', 'a.b', 'x[0]', '"q"', '__proto__'].map((k) => pathOf('', k))).toEqual([
      'haed',
      'the rest',
      '[""]',
      '["*"]',
      '["a.b"]',
      '["x[0]"]',
      '["\\"q\\""]',
      '__proto__',
    ])
  })

  it('quotes deeper names that are not plain words, and marks array elements', () => {
    expect(['encodng', 'a.b', 'two words', '', 'x]'].map((k) => pathOf('opts', k))).toEqual([
      'opts.encodng',
      'opts["a.b"]',
      'opts["two words"]',
      'opts[""]',
      'opts["x]"]',
    ])
    expect(pathOf('edits[]', 'oldtext')).toBe('edits[].oldtext')
  })

  it('gives no two places the same path, whatever the names (model: the segments themselves)', () => {
    const seg = fc.oneof(
      fc.constant<Segment>(ELEMENT),
      fc.constant<Segment>(ENTRY),
      fc.string({ maxLength: 4 }),
      strayName,
    )
    const pathArb = fc
      .tuple(fc.oneof(fc.string({ maxLength: 4 }), fc.constant<Segment>(ENTRY)), fc.array(seg, { maxLength: 3 }))
      .map(([first, rest]) => [first, ...rest] as Array<Segment>)
    fc.assert(
      fc.property(pathArb, pathArb, (a, b) => {
        const build = (ss: ReadonlyArray<Segment>) =>
          renderPlace(ss.map((s) => (s === ELEMENT ? PATH_ELEMENT : s === ENTRY ? PATH_ENTRY : s)))
        expect(build(a) === build(b)).toBe(JSON.stringify(a.map(String)) === JSON.stringify(b.map(String)))
      }),
    )
  })
})

describe('diffKeys over whole schemas', () => {
  it('reports exactly the undeclared paths, each once (model: the arguments built with the schema)', () => {
    fc.assert(
      fc.property(toolArb, ({ parameters, value, expected }) => {
        expect(diffKeys(compileSchema(parameters))(value).map((k) => k.path)).toEqual(expected)
      }),
    )
  })

  it('warns once per (tool, path), forwards the very same call, and answers the inner results', async () => {
    await fc.assert(
      fc.asyncProperty(toolArb, async ({ parameters, value, expected }) => {
        const said: Array<UnknownKeyWarning> = []
        const got: Array<unknown> = []
        const tools = pipe(
          fromTools([
            {
              declaration: { type: 'function', function: { name: 't', parameters } },
              run: (a) => (got.push(a), TE.right('ok')),
            },
          ]),
          withUnknownKeyAudit({ onWarn: (w) => () => void said.push(w), onDiagnostic: () => undefined }),
        )
        await tools.toolsForLlm()
        const call: ToolCall = { id: 'c1', function: { name: 't', arguments: JSON.stringify(value) } }
        const batch = [call, { ...call, id: 'c2' }]
        const results = await tools.executeToolCalls(batch)()
        expect(results).toEqual({
          _tag: 'Right',
          right: [
            { role: 'tool', tool_call_id: 'c1', content: 'ok' },
            { role: 'tool', tool_call_id: 'c2', content: 'ok' },
          ],
        })
        expect(said.flatMap((w) => w.unknownKeys)).toEqual(expected)
        expect(said.every((w) => w.id === 'c1')).toBe(true)
        expect(tools.stats().map((s) => [s.key, s.calls])).toEqual(expected.map((p) => [p, 2]))
      }),
      { numRuns: 60 },
    )
  })

  it('is the flat diff for a schema only its top level can speak of (model: the top-level keys)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 3 })),
        fc.uniqueArray(fc.string({ maxLength: 3 })),
        (declared, keys) => {
          const parameters = {
            type: 'object',
            properties: Object.fromEntries(declared.map((k) => [k, { type: 'string' }])),
          }
          const args: Record<string, unknown> = {}
          for (const k of keys) withOwn(args, k, { Nested: 1 })
          // a place that declares nothing is silent
          const expected =
            declared.length === 0
              ? []
              : keys
                  .filter((k) => !declared.includes(k) && k !== 'reason')
                  .map((k) => render([k]))
                  .sort()
          const shape = compileSchema(parameters)
          expect(shape.flat).toBe(true)
          expect(diffKeys(shape)(args).map((k) => k.path)).toEqual(expected)
          const c = catalogueOf(toleratedOf())([{ type: 'function', function: { name: 't', parameters } }]).get('t')
          expect((c?.diff(args) ?? []).map((k) => k.path)).toEqual(declared.some((k) => k !== 'reason') ? expected : [])
        },
      ),
    )
  })
})

describe('compileSchema: the constructs one by one', () => {
  const paths = (parameters: unknown, args: Record<string, unknown>) =>
    diffKeys(compileSchema(parameters))(args).map((k) => k.path)
  const obj = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
    type: 'object',
    properties,
    ...more,
  })

  it('hears the filesystem server edit_file typo, once for every element', () => {
    const editFile = obj({
      path: { type: 'string' },
      edits: {
        type: 'array',
        items: obj({ oldText: {}, newText: {} }, { required: ['oldText', 'newText'], additionalProperties: false }),
      },
      dryRun: {},
    })
    const edits = Array.from({ length: 100 }, () => ({ oldtext: 'a', newText: 'b' }))
    expect(paths(editFile, { path: 'f', edits })).toEqual(['edits[].oldtext'])
  })

  it('resolves $ref to $defs and definitions, recursive ones included, and leaves an unresolved one schema-free', () => {
    const tree = {
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      $defs: { node: obj({ name: {}, children: { type: 'array', items: { $ref: '#/$defs/node' } } }) },
    }
    expect(paths(tree, { root: { name: 'a', children: [{ name: 'b', children: [{ nmae: 'c' }] }] } })).toEqual([
      'root.children[].children[].nmae',
    ])
    expect(
      paths({ ...obj({ a: { $ref: '#/definitions/x~1y' } }), definitions: { 'x/y': obj({ b: {} }) } }, { a: { c: 1 } }),
    ).toEqual(['a.c'])
    expect(
      paths(obj({ a: { $ref: '#/$defs/missing' }, b: { $ref: 'https://example.com/s.json' } }), {
        a: { c: 1 },
        b: { d: 2 },
      }),
    ).toEqual([])
    expect(paths(obj({ self: { $ref: '#' }, x: {} }), { self: { self: { y: 1 } } })).toEqual(['self.self.y'])
  })

  it('takes a pattern that is not a regular expression as declaring nothing, without throwing', () => {
    expect(paths(obj({ a: {} }, { patternProperties: { '(': {}, '^b': {} } }), { a: 1, b1: 2, c: 3 })).toEqual(['c'])
  })

  it('stays silent at a union with a branch that takes any object, and where nothing is declared', () => {
    expect(paths(obj({ o: { anyOf: [obj({ a: {} }), { type: 'object' }] } }), { o: { zz: 1 } })).toEqual([])
    expect(paths(obj({ o: { type: 'object', additionalProperties: { type: 'string' } } }), { o: { zz: 'a' } })).toEqual(
      [],
    )
    expect(paths(obj({ o: {} }), { o: { zz: 'a' } })).toEqual([])
  })

  it('falls back to every branch when the tag picks none', () => {
    const u = obj({ s: { oneOf: [obj({ kind: { enum: ['a'] }, x: {} }), obj({ kind: { const: 'b' }, y: {} })] } })
    expect(paths(u, { s: { kind: 'a', y: 1 } })).toEqual(['s.y'])
    expect(paths(u, { s: { kind: 'c', x: 1, y: 1, z: 1 } })).toEqual(['s.z'])
    expect(paths(u, { s: { x: 1, y: 1, z: 1 } })).toEqual(['s.z'])
  })

  it('tolerates reason and the tolerated names at the top level only', () => {
    const shape = compileSchema(obj({ opts: obj({ a: {} }) }))
    expect(
      diffKeys(shape, new Set(['_meta']))({ reason: 1, _meta: 1, opts: { reason: 1, _meta: 1 } }).map((k) => k.path),
    ).toEqual(['opts._meta', 'opts.reason'])
  })

  it('reads neither a schema nor arguments deeper than it can bound, and does not throw', () => {
    let deep: Record<string, unknown> = obj({ leaf: {} })
    for (let i = 0; i < 5000; i++) deep = obj({ d: deep })
    expect(() => compileSchema(deep)).not.toThrow()
    let args: Record<string, unknown> = { x: 1 }
    for (let i = 0; i < 5000; i++) args = { d: args }
    const self = obj({ d: { $ref: '#' } })
    expect(() => diffKeys(compileSchema(self))(args)).not.toThrow()
  })
})

describe('tools that declare keys only through unions, references or nesting', () => {
  const unionTool = {
    type: 'function' as const,
    function: {
      name: 'draw',
      parameters: z.toJSONSchema(
        z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('circle'), radius: z.number() }),
          z.object({ kind: z.literal('square'), side: z.number() }),
        ]),
      ),
    },
  }
  const refTool = {
    type: 'function' as const,
    function: {
      name: 'tree',
      parameters: {
        $ref: '#/$defs/node',
        $defs: {
          node: { type: 'object', properties: { name: {}, kids: { type: 'array', items: { $ref: '#/$defs/node' } } } },
        },
      },
    },
  }

  it('are audited, and never said to declare nothing', async () => {
    const said: Array<UnknownKeyWarning> = []
    const diagnostics: Array<AuditDiagnostic> = []
    const tools = pipe(
      fromTools([unionTool, refTool].map((declaration) => ({ declaration, run: () => TE.right('ok') }))),
      withUnknownKeyAudit({
        onWarn: (w) => () => void said.push(w),
        onDiagnostic: (d) => () => void diagnostics.push(d),
      }),
    )
    await tools.toolsForLlm()
    expect(tools.auditedTools()).toEqual(['draw', 'tree'])
    await tools.executeToolCalls([
      { id: '1', function: { name: 'draw', arguments: '{"kind":"circle","side":2,"radius":1}' } },
      { id: '2', function: { name: 'tree', arguments: '{"name":"a","kids":[{"name":"b","kisd":[]}]}' } },
    ])()
    expect(said.map((w) => [w.tool, w.unknownKeys, w.declaredKeys])).toEqual([
      ['draw', ['side'], ['kind', 'radius', 'side']],
      ['tree', ['kids[].kisd'], ['kids', 'name']],
    ])
    expect(said[1]?.suggestions).toEqual([{ key: 'kids[].kisd', didYouMean: 'kids[].kids' }])
    expect(diagnostics).toEqual([])
  })
})

describe('compileSchema: what decides a place', () => {
  const paths = (parameters: unknown, args: Record<string, unknown>) =>
    diffKeys(compileSchema(parameters))(args).map((k) => k.path)
  const obj = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
    type: 'object',
    properties,
    ...more,
  })
  // a discriminated union of two branches, pinned by `pin` to a and b, each with a key of its own
  const tagged = (pinA: unknown, pinB: unknown) =>
    obj({ s: { oneOf: [obj({ kind: pinA, onlyA: {} }), obj({ kind: pinB, onlyB: {} })] } })

  it('reads a tag of every primitive type, by const or by an enum of one value', () => {
    const cases: ReadonlyArray<readonly [unknown, unknown, unknown]> = [
      [{ const: 'a' }, { const: 'b' }, 'a'],
      [{ const: 1 }, { const: 2 }, 1],
      [{ const: true }, { const: false }, true],
      [{ const: null }, { const: 'x' }, null],
      [{ enum: ['a'] }, { enum: ['b'] }, 'a'],
      [{ enum: [null] }, { enum: [0] }, null],
    ]
    for (const [a, b, value] of cases)
      expect(paths(tagged(a, b), { s: { kind: value, onlyB: 1 } }), JSON.stringify([a, b])).toEqual(['s.onlyB'])
  })

  it('takes no tag from an enum of two values, an object const, or a branch without the pin', () => {
    const undecided: ReadonlyArray<readonly [unknown, unknown]> = [
      [{ enum: ['a', 'c'] }, { const: 'b' }],
      [{ const: { a: 1 } }, { const: 'b' }],
      [{ enum: [{ a: 1 }] }, { const: 'b' }],
      [{ type: 'string' }, { const: 'b' }],
      [{ const: 'a' }, { type: 'string' }],
    ]
    // with no tag, a key either branch declares is declared
    for (const [a, b] of undecided)
      expect(paths(tagged(a, b), { s: { kind: 'a', onlyB: 1, onlyA: 1 } }), JSON.stringify([a, b])).toEqual([])
    // a branch that does not declare the first branch's key at all
    expect(
      paths(obj({ s: { oneOf: [obj({ kind: { const: 'a' }, x: {} }), obj({ y: {} })] } }), { s: { kind: 'a', y: 1 } }),
    ).toEqual([])
  })

  it('finds the tag past the first key, through allOf, and lets two branches share a value', () => {
    const later = obj({
      s: {
        oneOf: [
          obj({ name: { type: 'string' }, kind: { const: 'a' }, x: {} }),
          obj({ name: { type: 'string' }, kind: { const: 'b' }, y: {} }),
        ],
      },
    })
    expect(paths(later, { s: { name: 'n', kind: 'a', y: 1 } })).toEqual(['s.y'])
    for (const conjuncts of [
      [obj({ kind: { type: 'string' } }), obj({ kind: { const: 'a' }, x: {} })],
      [obj({ kind: { const: 'a' }, x: {} }), obj({ kind: { type: 'string' } })],
    ]) {
      const folded = obj({ s: { oneOf: [{ allOf: conjuncts }, obj({ kind: { const: 'b' }, y: {} })] } })
      expect(paths(folded, { s: { kind: 'a', y: 1 } })).toEqual(['s.y'])
    }
    const shared = obj({
      s: {
        oneOf: [
          obj({ kind: { const: 'a' }, x: {} }),
          obj({ kind: { const: 'a' }, y: {} }),
          obj({ kind: { const: 'b' }, z: {} }),
        ],
      },
    })
    expect(paths(shared, { s: { kind: 'a', x: 1, y: 1, z: 1 } })).toEqual(['s.z'])
    // a value that is not a primitive picks nothing: every branch decides
    expect(paths(tagged({ const: 'a' }, { const: 'b' }), { s: { kind: { a: 1 }, onlyA: 1, onlyB: 1, zz: 1 } })).toEqual(
      ['s.zz'],
    )
  })

  it('leaves out of a union the branches that take no object, and is silent when one takes any object', () => {
    const withBranch = (branch: unknown, more: Record<string, unknown> = {}) => ({
      ...obj({ o: { anyOf: [branch, obj({ a: {} })] } }),
      ...more,
    })
    for (const notAnObject of [
      { type: 'string' },
      { type: ['string', 'null'] },
      false,
      { $ref: '#/$defs/no' },
      { allOf: [{ type: 'number' }] },
    ]) {
      expect(
        paths(withBranch(notAnObject, { $defs: { no: false } }), { o: { a: 1, zz: 1 } }),
        JSON.stringify(notAnObject),
      ).toEqual(['o.zz'])
    }
    for (const anyObject of [
      { type: 'object' },
      { type: ['object', 'null'] },
      true,
      {},
      { $ref: '#/$defs/missing' },
      { $ref: '#/$defs/yes' },
    ]) {
      expect(
        paths(withBranch(anyObject, { $defs: { yes: {} } }), { o: { a: 1, zz: 1 } }),
        JSON.stringify(anyObject),
      ).toEqual([])
    }
  })

  it('is silent where neither a place nor any branch that may hold an object declares a key', () => {
    expect(
      paths(obj({ o: { anyOf: [{ anyOf: [{ type: 'string' }] }, { type: 'number' }] } }), { o: { zz: 1 } }),
    ).toEqual([])
  })

  it('visits a union that names itself once, and still decides with its other branches', () => {
    expect(paths({ anyOf: [{ $ref: '#' }, obj({ a: {} })] }, { a: 1, zz: 1 })).toEqual(['zz'])
  })

  it('lets a property and a pattern that both take a key decide its value together', () => {
    const both = obj({ a: {} }, { patternProperties: { '^a': obj({ b: {} }) } })
    expect(paths(both, { a: { b: 1, zz: 1 } })).toEqual(['a.zz'])
  })

  it('keeps every schema that declares the same key (allOf), and the keys of then, else and dependentSchemas', () => {
    expect(
      paths({ allOf: [obj({ o: obj({ a: {} }) }), obj({ o: obj({ b: {} }) })] }, { o: { a: 1, b: 1, zz: 1 } }),
    ).toEqual(['o.zz'])
    const conditional = obj(
      { a: {} },
      {
        if: obj({ a: { const: 1 } }),
        then: obj({ b: {} }),
        else: obj({ c: {} }),
        dependentSchemas: { a: obj({ d: {} }) },
      },
    )
    expect(paths(conditional, { a: 1, b: 1, c: 1, d: 1, zz: 1 })).toEqual(['zz'])
  })

  it('resolves only JSON pointers, unescapes ~0 and ~1, and makes a place it cannot resolve schema-free, siblings included', () => {
    const at = (ref: string, $defs: Record<string, unknown>) =>
      paths({ ...obj({ x: { $ref: ref, properties: { a: {} } } }), $defs, def: obj({ b: {} }) }, { x: { a: 1, zz: 1 } })
    expect(at('#/$defs/a~0b', { 'a~b': obj({ a: {} }) })).toEqual(['x.zz'])
    expect(at('#/$defs/a~1b', { 'a/b': obj({ a: {} }) })).toEqual(['x.zz'])
    expect(at('#/$defs/a%20b', { 'a b': obj({ a: {} }) })).toEqual(['x.zz'])
    // not a pointer ('#def' is an anchor), a pointer through a string or null, a bad escape
    expect(at('#xdef', {})).toEqual([])
    expect(at('#/$defs/s/length', { s: 'abc' })).toEqual([])
    expect(at('#/$defs/n/k', { n: null })).toEqual([])
    expect(at('#/$defs/%E0%A4%A', { undefined: obj({ a: {} }) })).toEqual([])
  })

  it('reads a pattern with the u flag, and without it when only that is valid', () => {
    expect(paths(obj({ a: {} }, { patternProperties: { '^\\u{1F600}$': {} } }), { a: 1, '\u{1F600}': 1 })).toEqual([])
    expect(paths(obj({ a: {} }, { patternProperties: { '^x\\_': {} } }), { a: 1, x_1: 1, y: 1 })).toEqual(['y'])
  })

  it('walks a tuple by position and the rest by items', () => {
    const tuple = obj({ t: { type: 'array', prefixItems: [obj({ a: {} })], items: obj({ b: {} }) } })
    expect(
      paths(tuple, {
        t: [
          { a: 1, b: 1 },
          { a: 1, b: 1 },
          { b: 1, c: 1 },
        ],
      }),
    ).toEqual(['t[].a', 't[].b', 't[].c'])
    const draft4 = obj({ t: { type: 'array', items: [obj({ a: {} }), obj({ b: {} })] } })
    expect(paths(draft4, { t: [{ a: 1, zz: 1 }, { b: 1, yy: 1 }, { free: 1 }] })).toEqual(['t[].yy', 't[].zz'])
    const ofUnion = obj({
      t: {
        anyOf: [
          { type: 'array', items: obj({ a: {} }) },
          { type: 'array', items: obj({ b: {} }) },
        ],
      },
    })
    expect(paths(ofUnion, { t: [{ a: 1, b: 1, zz: 1 }] })).toEqual(['t[].zz'])
    // a branch that takes any array leaves its elements free; one that takes no array counts for nothing
    const arrays = (other: unknown) => ({
      ...obj({ t: { anyOf: [{ type: 'array', items: obj({ a: {} }) }, other] } }),
      $defs: { no: false },
    })
    for (const any of [{ type: 'array' }, {}, { type: ['array', 'null'] }])
      expect(paths(arrays(any), { t: [{ a: 1, zz: 1 }] }), JSON.stringify(any)).toEqual([])
    for (const none of [{ type: 'string' }, { type: ['object', 'null'] }, false, { $ref: '#/$defs/no' }]) {
      expect(paths(arrays(none), { t: [{ a: 1, zz: 1 }] }), JSON.stringify(none)).toEqual(['t[].zz'])
    }
    // a branch with a prefix only constrains its elements too
    expect(paths(arrays({ type: 'array', prefixItems: [obj({ b: {} })] }), { t: [{ a: 1, b: 1, zz: 1 }] })).toEqual([
      't[].zz',
    ])
  })

  it('hears an array element through a place shared by two arrays', () => {
    const element = obj({ a: {} })
    expect(
      paths(obj({ p1: { type: 'array', items: element }, p2: { type: 'array', items: element } }), {
        p1: [{ yy: 1 }],
        p2: [{ zz: 1 }],
      }),
    ).toEqual(['p1[].yy', 'p2[].zz'])
  })

  it('does not read a string, a number or null as an object', () => {
    const schema = obj({
      o: obj({ a: {} }),
      u: { anyOf: [obj({ a: {} }), obj({ b: {} })] },
      l: { type: 'array', items: obj({ a: {} }) },
    })
    for (const v of ['str', 7, null, true]) expect(paths(schema, { o: v, u: v, l: [v] })).toEqual([])
    expect(paths(schema, { o: ['x'], u: ['x'] })).toEqual([])
  })

  it("tolerates reason and the tolerated names at the top of a union too, and offers the place's keys", () => {
    const root = { oneOf: [obj({ kind: { const: 'a' }, x: {} }), obj({ kind: { const: 'b' }, y: {} })] }
    expect(diffKeys(compileSchema(root), new Set(['_meta']))({ kind: 'a', reason: 'r', _meta: 1 })).toEqual([])
    const [found] = diffKeys(compileSchema(obj({ s: root })))({ s: { kind: 'a', reason: 'r' } })
    expect(found?.path).toBe('s.reason')
    expect(found?.at).toBe('s')
    expect(found?.key).toBe('reason')
    expect([...(found?.declared ?? [])].sort()).toEqual(['kind', 'x'])
  })

  it("remembers a clean object's keys without changing what is heard on the next call", () => {
    const diff = diffKeys(compileSchema(obj({ o: obj({ a: {}, b: {} }), p: {} })))
    expect(diff({ reason: 'r', o: { a: 1, b: 2 } })).toEqual([])
    expect(diff({ reason: 'r', o: { a: 1, zz: 2 } }).map((k) => k.path)).toEqual(['o.zz'])
    expect(diff({ o: { a: 1, b: 2 }, p: 1 })).toEqual([])
    expect(diff({ o: { a: 1, b: 2 }, zz: 1 }).map((k) => k.path)).toEqual(['zz'])
    expect(diff({ o: { b: 1, zz: 2 } }).map((k) => k.path)).toEqual(['o.zz'])
    expect(diff({ o: {} })).toEqual([])
  })

  it('answers whether only the top level can speak, and whether it declares by pattern', () => {
    const flat = (s: unknown) => compileSchema(s).flat
    expect(flat(obj({ a: { type: 'string' }, b: obj({}), c: { type: 'array', items: {} } }))).toBe(true)
    expect(flat(obj({ a: obj({ b: {} }) }))).toBe(false)
    expect(flat(obj({ a: { type: 'array', items: obj({ b: {} }) } }))).toBe(false)
    expect(flat(obj({ a: { type: 'array', prefixItems: [obj({ b: {} })] } }))).toBe(false)
    expect(flat(obj({ a: { anyOf: [obj({ b: {} })] } }))).toBe(false)
    expect(flat(obj({ a: { patternProperties: { x: {} } } }))).toBe(false)
    // a key declared twice, below one of them a place that speaks
    expect(flat({ allOf: [obj({ a: {} }), obj({ a: obj({ b: {} }) })] })).toBe(false)
    expect(flat({ allOf: [obj({ a: obj({ b: {} }) }), obj({ a: {} })] })).toBe(false)
    expect(flat({ anyOf: [obj({ a: {} })] })).toBe(false)
    expect(flat(obj({ a: {} }, { patternProperties: { x: {} } }))).toBe(false)
    expect(compileSchema(obj({ a: {} }, { patternProperties: { x: {} } })).patterned).toBe(true)
    expect(compileSchema(obj({ a: {} })).patterned).toBe(false)
  })
})

describe('byPath', () => {
  it('orders by path, equal paths equal', () => {
    const k = (path: string) => ({ path, key: path, at: '', place: [], declared: new Set<string>() })
    expect([byPath(k('a'), k('b')), byPath(k('b'), k('a')), byPath(k('a'), k('a'))]).toEqual([-1, 1, 0])
  })
})

describe('the depth bound', () => {
  // The rule, as docs/audit.md states it: an object in the arguments is read when it sits
  // at most 64 steps below their root (each property and each array element a step), and
  // a schema is read to 64 steps (each property, pattern, item and union branch a step).
  const BOUND = 64
  const LEVELS = 70
  const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties })
  const chain = (wrap: (next: unknown) => unknown): unknown => {
    let s: unknown = obj({ k: {} })
    for (let i = 0; i < LEVELS; i++) s = wrap(s)
    return s
  }
  // LEVELS + 1 objects, each with a stray `zz`, each holding the next under `k`
  const deepArgs = (inArray: boolean): Record<string, unknown> => {
    let v: Record<string, unknown> = { zz: 1 }
    for (let i = 0; i < LEVELS; i++) v = { k: inArray ? [v] : v, zz: 1 }
    return v
  }
  // the strays of the objects at levels 0..last (level L sits L or 2L steps down)
  const heard = (last: number, inArray: boolean) =>
    Array.from({ length: last + 1 }, (_, l) => (inArray ? 'k[].' : 'k.').repeat(l) + 'zz').sort()
  const paths = (schema: unknown, args: Record<string, unknown>) =>
    diffKeys(compileSchema(schema))(args).map((k) => k.path)

  it('reads a schema to its bound, whatever construct makes each step', () => {
    // level L's object is L schema steps down through properties or patterns, 2L through
    // an array's items or a union's branch and its property
    expect(
      paths(
        chain((next) => obj({ k: next })),
        deepArgs(false),
      ),
    ).toEqual(heard(BOUND, false))
    expect(
      paths(
        chain((next) => ({ type: 'object', patternProperties: { '^k$': next } })),
        deepArgs(false),
      ),
    ).toEqual(heard(BOUND, false))
    expect(
      paths(
        chain((next) => ({ anyOf: [obj({ k: next })] })),
        deepArgs(false),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 2), false))
    expect(
      paths(
        chain((next) => obj({ k: { type: 'array', items: next } })),
        deepArgs(true),
      ),
    ).toEqual(heard(BOUND / 2, true))
    expect(
      paths(
        chain((next) => obj({ k: { type: 'array', prefixItems: [next] } })),
        deepArgs(true),
      ),
    ).toEqual(heard(BOUND / 2, true))
    // through a union's branch as well, so the schema's bound comes before the arguments':
    // level L's object is decided by a branch 2L + 1 steps down (pattern), or 3L + 1 (items)
    const branched = (place: (next: unknown) => unknown) => chain((next) => ({ anyOf: [place(next)] }))
    expect(
      paths(
        branched((next) => ({ type: 'object', patternProperties: { '^k$': next } })),
        deepArgs(false),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 2), false))
    expect(
      paths(
        branched((next) => obj({ k: { type: 'array', items: next } })),
        deepArgs(true),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 3), true))
    expect(
      paths(
        branched((next) => obj({ k: { type: 'array', prefixItems: [next] } })),
        deepArgs(true),
      ),
    ).toEqual(heard(Math.floor((BOUND - 1) / 3), true))
  })

  it('reads arguments to their bound under a recursive schema, on every path of the walk', () => {
    const simple = { type: 'object', properties: { k: { $ref: '#' } } }
    expect(paths(simple, deepArgs(false))).toEqual(heard(BOUND, false))
    expect(paths({ anyOf: [obj({ k: { $ref: '#' } }), obj({ other: {} })] }, deepArgs(false))).toEqual(
      heard(BOUND, false),
    )
    expect(paths(obj({ k: { type: 'array', items: { $ref: '#' } } }), deepArgs(true))).toEqual(heard(BOUND / 2, true))
    expect(paths(obj({ k: { type: 'array', prefixItems: [{ $ref: '#' }] } }), deepArgs(true))).toEqual(
      heard(BOUND / 2, true),
    )
    // strays from level 63 down, clean objects above them: the second call walks those by
    // the keys it remembers
    let v: Record<string, unknown> = { zz: 1 }
    for (let level = LEVELS - 1; level >= 0; level--) v = level >= 63 ? { k: v, zz: 1 } : { k: v }
    const diff = diffKeys(compileSchema(simple))
    const expected = ['k.'.repeat(63) + 'zz', 'k.'.repeat(64) + 'zz'].sort()
    expect(diff(v).map((k) => k.path)).toEqual(expected)
    expect(diff(v).map((k) => k.path)).toEqual(expected)
  })
})
