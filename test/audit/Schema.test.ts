// The audit over whole schemas: nested objects, arrays, unions, references and
// patterns, against an oracle that knows the undeclared keys because it built the
// arguments that carry them.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { z } from 'zod'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { AuditDiagnostic, ToolCall, UnknownKeyWarning } from '../../src/index.js'
import { catalogueOf, compileSchema, diffKeys, fromTools, pathOf, toleratedOf, withUnknownKeyAudit } from '../../src/index.js'

// -------------------------------------------------------------------------------------
// the oracle: a schema and a value built together, with the paths of the keys the value
// carries that the schema does not declare
// -------------------------------------------------------------------------------------

type Segment = string | typeof ELEMENT
const ELEMENT = Symbol('element')

interface Built {
  readonly schema: unknown
  readonly value: unknown
  /** Undeclared keys, each as the segments from this value down to it. */
  readonly unknown: ReadonlyArray<ReadonlyArray<Segment>>
}

// written apart from pathOf: top-level keys bare unless empty or holding . [ ] ",
// deeper names bare unless empty or holding . [ ] " or a space
const render = (segments: ReadonlyArray<Segment>): string => {
  let out = ''
  segments.forEach((s, i) => {
    if (s === ELEMENT) out += '[]'
    else if (s === '' || (i === 0 ? /[.[\]"]/ : /[.[\]" ]/).test(s)) out += `[${JSON.stringify(s)}]`
    else out += i === 0 ? s : `.${s}`
  })
  return out
}

// declared names are lower-case words; undeclared ones come from another alphabet, so
// they are never declared anywhere, and some need quoting
const declaredName = fc.constantFrom('path', 'mode', 'text', 'items', 'opts', 'name', 'kind', 'size', 'tags', 'meta')
const strayName = fc.constantFrom('Stray', 'ZZ', 'a.b', 'two words', 'x[0]', '"q"', '', '__proto__', 'constructor')

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
const objectOf = (child: fc.Arbitrary<Built>): fc.Arbitrary<{ props: Map<string, Built>; schema: Record<string, unknown>; value: Record<string, unknown>; strays: ReadonlyArray<string> }> =>
  fc
    .tuple(fc.uniqueArray(fc.tuple(declaredName, child), { minLength: 1, maxLength: 4, selector: ([k]) => k }), fc.uniqueArray(strayName, { maxLength: 2 }), fc.nat())
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

const unknownOf = (o: { props: Map<string, Built>; value: Record<string, unknown>; strays: ReadonlyArray<string> }): Array<ReadonlyArray<Segment>> => [
  ...o.strays.map((s) => [s]),
  ...[...o.props].filter(([k]) => Object.prototype.hasOwnProperty.call(o.value, k)).flatMap(([k, b]) => b.unknown.map((u) => [k, ...u])),
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
    const bSchema = { type: 'object', properties: { onlyb: {}, ...Object.fromEntries([...b.props].map(([k, x]) => [k, x.schema])) } }
    const chosen = second && b.props.size > 0 ? { ...b, value: Object.fromEntries([...b.props].map(([k, x]) => [k, x.value])), strays: [] } : a
    return { schema: { anyOf: [a.schema, bSchema, { type: 'null' }] }, value: chosen.value, unknown: unknownOf(chosen) }
  })
  // a discriminated union: the tag picks the branch, which alone decides, so a key only
  // the other branch declares is undeclared
  const tagged = fc.tuple(objectOf(child), objectOf(child)).map(([a, b]): Built => {
    a.props.delete('kind')
    b.props.delete('kind')
    const branch = (tag: string, o: typeof a) => ({ type: 'object', properties: { kind: { const: tag }, ...Object.fromEntries([...o.props].map(([k, x]) => [k, x.schema])) } })
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
      schema: { allOf: [a.schema, { type: 'object', properties: Object.fromEntries([...b.props].map(([k, x]) => [k, x.schema])) }] },
      value,
      unknown: [...unknownOf(a), ...[...b.props].flatMap(([k, x]) => x.unknown.map((u) => [k, ...u]))],
    }
  })
  // a reference into $defs (collected by the root)
  const ref = object.map((b): Built => ({ schema: { $ref: `#/$defs/d${defs}`, [DEF]: b.schema, [DEF_NAME]: `d${defs++}` }, value: b.value, unknown: b.unknown }))
  // patternProperties: a key matching a pattern is declared
  const patterned = child.map((b): Built => ({
    schema: { type: 'object', properties: { name: { type: 'string' } }, patternProperties: { '^x_': b.schema, '(': {} } },
    value: { name: 'n', x_1: b.value, x_2: b.value, Stray: 1 },
    unknown: [['Stray'], ...b.unknown.map((u) => ['x_1', ...u]), ...b.unknown.map((u) => ['x_2', ...u])],
  }))
  return fc.oneof({ weight: 3, arbitrary: object }, array, tuple, anyOf, tagged, allOf, ref, patterned)
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

const toolArb = fc
  .tuple(objectOf(builtArb(3)), fc.boolean())
  .map(([o, reason]) => {
    const value = { ...o.value }
    if (reason) withOwn(value, 'reason', 'why')
    return { parameters: hoistDefs(o.schema), value, expected: [...new Set(unknownOf(o).map(render))].sort() }
  })

// -------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------

describe('pathOf', () => {
  it('names top-level keys as they are, unless they could be taken for a path', () => {
    expect(['haed', 'the rest', '', 'a.b', 'x[0]', '"q"', '__proto__'].map((k) => pathOf('', k))).toEqual(['haed', 'the rest', '[""]', '["a.b"]', '["x[0]"]', '["\\"q\\""]', '__proto__'])
  })

  it('quotes deeper names that are not plain words, and marks array elements', () => {
    expect(['encodng', 'a.b', 'two words', '', 'x]'].map((k) => pathOf('opts', k))).toEqual(['opts.encodng', 'opts["a.b"]', 'opts["two words"]', 'opts[""]', 'opts["x]"]'])
    expect(pathOf('edits[]', 'oldtext')).toBe('edits[].oldtext')
  })

  it('gives no two places the same path, whatever the names (model: the segments themselves)', () => {
    const seg = fc.oneof(fc.constant<Segment>(ELEMENT), fc.string({ maxLength: 4 }), strayName)
    const pathArb = fc.tuple(fc.string({ maxLength: 4 }), fc.array(seg, { maxLength: 3 })).map(([first, rest]) => [first, ...rest] as Array<Segment>)
    fc.assert(
      fc.property(pathArb, pathArb, (a, b) => {
        const build = (ss: ReadonlyArray<Segment>) => ss.reduce<string>((at, s, i) => (s === ELEMENT ? `${at}[]` : pathOf(i === 0 ? '' : at, s)), '')
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
          fromTools([{ declaration: { type: 'function', function: { name: 't', parameters } }, run: (a) => (got.push(a), TE.right('ok')) }]),
          withUnknownKeyAudit({ onWarn: (w) => () => void said.push(w), onDiagnostic: () => undefined }),
        )
        await tools.toolsForLlm()
        const call: ToolCall = { id: 'c1', function: { name: 't', arguments: JSON.stringify(value) } }
        const batch = [call, { ...call, id: 'c2' }]
        const results = await tools.executeToolCalls(batch)()
        expect(results).toEqual({ _tag: 'Right', right: [{ role: 'tool', tool_call_id: 'c1', content: 'ok' }, { role: 'tool', tool_call_id: 'c2', content: 'ok' }] })
        expect(said.flatMap((w) => w.unknownKeys)).toEqual(expected)
        expect(said.every((w) => w.id === 'c1')).toBe(true)
        expect(tools.stats().map((s) => [s.key, s.calls])).toEqual(expected.map((p) => [p, 2]))
      }),
      { numRuns: 60 },
    )
  })

  it('is the flat diff for a schema only its top level can speak of (model: the top-level keys)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 3 })), fc.uniqueArray(fc.string({ maxLength: 3 })), (declared, keys) => {
        const parameters = { type: 'object', properties: Object.fromEntries(declared.map((k) => [k, { type: 'string' }])) }
        const args: Record<string, unknown> = {}
        for (const k of keys) withOwn(args, k, { Nested: 1 })
        // a place that declares nothing is silent
        const expected = declared.length === 0 ? [] : keys.filter((k) => !declared.includes(k) && k !== 'reason').map((k) => render([k])).sort()
        const shape = compileSchema(parameters)
        expect(shape.flat).toBe(true)
        expect(diffKeys(shape)(args).map((k) => k.path)).toEqual(expected)
        const c = catalogueOf(toleratedOf())([{ type: 'function', function: { name: 't', parameters } }]).get('t')
        expect((c?.diff(args) ?? []).map((k) => k.path)).toEqual(declared.some((k) => k !== 'reason') ? expected : [])
      }),
    )
  })
})

describe('compileSchema: the constructs one by one', () => {
  const paths = (parameters: unknown, args: Record<string, unknown>) => diffKeys(compileSchema(parameters))(args).map((k) => k.path)
  const obj = (properties: Record<string, unknown>, more: Record<string, unknown> = {}) => ({ type: 'object', properties, ...more })

  it('hears the filesystem server edit_file typo, once for every element', () => {
    const editFile = obj({ path: { type: 'string' }, edits: { type: 'array', items: obj({ oldText: {}, newText: {} }, { required: ['oldText', 'newText'], additionalProperties: false }) }, dryRun: {} })
    const edits = Array.from({ length: 100 }, () => ({ oldtext: 'a', newText: 'b' }))
    expect(paths(editFile, { path: 'f', edits })).toEqual(['edits[].oldtext'])
  })

  it('resolves $ref to $defs and definitions, recursive ones included, and leaves an unresolved one schema-free', () => {
    const tree = { type: 'object', properties: { root: { $ref: '#/$defs/node' } }, $defs: { node: obj({ name: {}, children: { type: 'array', items: { $ref: '#/$defs/node' } } }) } }
    expect(paths(tree, { root: { name: 'a', children: [{ name: 'b', children: [{ nmae: 'c' }] }] } })).toEqual(['root.children[].children[].nmae'])
    expect(paths({ ...obj({ a: { $ref: '#/definitions/x~1y' } }), definitions: { 'x/y': obj({ b: {} }) } }, { a: { c: 1 } })).toEqual(['a.c'])
    expect(paths(obj({ a: { $ref: '#/$defs/missing' }, b: { $ref: 'https://example.com/s.json' } }), { a: { c: 1 }, b: { d: 2 } })).toEqual([])
    expect(paths(obj({ self: { $ref: '#' }, x: {} }), { self: { self: { y: 1 } } })).toEqual(['self.self.y'])
  })

  it('takes a pattern that is not a regular expression as declaring nothing, without throwing', () => {
    expect(paths(obj({ a: {} }, { patternProperties: { '(': {}, '^b': {} } }), { a: 1, b1: 2, c: 3 })).toEqual(['c'])
  })

  it('stays silent at a union with a branch that takes any object, and where nothing is declared', () => {
    expect(paths(obj({ o: { anyOf: [obj({ a: {} }), { type: 'object' }] } }), { o: { zz: 1 } })).toEqual([])
    expect(paths(obj({ o: { type: 'object', additionalProperties: { type: 'string' } } }), { o: { zz: 'a' } })).toEqual([])
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
    expect(diffKeys(shape, new Set(['_meta']))({ reason: 1, _meta: 1, opts: { reason: 1, _meta: 1 } }).map((k) => k.path)).toEqual(['opts._meta', 'opts.reason'])
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
  const unionTool = { type: 'function' as const, function: { name: 'draw', parameters: z.toJSONSchema(z.discriminatedUnion('kind', [z.object({ kind: z.literal('circle'), radius: z.number() }), z.object({ kind: z.literal('square'), side: z.number() })])) } }
  const refTool = { type: 'function' as const, function: { name: 'tree', parameters: { $ref: '#/$defs/node', $defs: { node: { type: 'object', properties: { name: {}, kids: { type: 'array', items: { $ref: '#/$defs/node' } } } } } } } }

  it('are audited, and never said to declare nothing', async () => {
    const said: Array<UnknownKeyWarning> = []
    const diagnostics: Array<AuditDiagnostic> = []
    const tools = pipe(
      fromTools([unionTool, refTool].map((declaration) => ({ declaration, run: () => TE.right('ok') }))),
      withUnknownKeyAudit({ onWarn: (w) => () => void said.push(w), onDiagnostic: (d) => () => void diagnostics.push(d) }),
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
