import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { SkimmedCall } from '../../src/cli/skim.js'
import { skimCall } from '../../src/cli/skim.js'
import { callIdOf } from '../../src/internal/calls.js'

type Skim = (bytes: Uint8Array, start: number, end: number) => SkimmedCall | undefined

// -------------------------------------------------------------------------------------
// the reference: JSON.parse and the rules the audit reads by
// -------------------------------------------------------------------------------------

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === 'object' && u !== null && !Array.isArray(u)

/** What `skimCall` may answer for `text`, or `undefined` when it must not answer. */
const expected = (text: string): SkimmedCall | undefined => {
  let msg: unknown
  try {
    msg = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isRecord(msg) || !Object.hasOwn(msg, 'method') || msg['method'] !== 'tools/call' || !Object.hasOwn(msg, 'params')) return undefined
  const params = msg['params']
  if (!isRecord(params) || !Object.hasOwn(params, 'name') || !Object.hasOwn(params, 'arguments')) return undefined
  const name = params['name']
  const args = params['arguments']
  if (typeof name !== 'string' || !isRecord(args)) return undefined
  return { id: callIdOf(msg), name, keys: Object.keys(args) }
}

const textOf = (bytes: Uint8Array, start: number, end: number): string => Buffer.from(bytes.subarray(start, end)).toString('utf8')

/** A line in a larger buffer, as the proxy holds it. */
interface Held {
  readonly bytes: Uint8Array
  readonly start: number
  readonly end: number
}

/** The contract, written once: whenever `skim` answers, JSON.parse agrees. */
const honoursContract = (skim: Skim, lines: fc.Arbitrary<Held>) =>
  fc.property(lines, ({ bytes, start, end }) => {
    const got = skim(bytes, start, end)
    if (got !== undefined) expect(got).toEqual(expected(textOf(bytes, start, end)))
  })

// -------------------------------------------------------------------------------------
// arbitraries: JSON text, written every way JSON allows
// -------------------------------------------------------------------------------------

const wsArb = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 2 })

/** Raw value text, or an object's members as [key text, value]. */
type Doc = string | ReadonlyArray<readonly [string, Doc]>

const render = (doc: Doc, gaps: ReadonlyArray<string>): string => {
  let n = 0
  const gap = (): string => gaps[n++ % gaps.length] ?? ''
  const go = (d: Doc): string =>
    typeof d === 'string' ? d : `{${gap()}${d.map(([k, v]) => `${k}${gap()}:${gap()}${go(v)}`).join(`${gap()},${gap()}`)}${gap()}}`
  return go(doc)
}

const renderedArb = (doc: fc.Arbitrary<Doc>): fc.Arbitrary<string> =>
  fc
    .tuple(doc, fc.oneof(fc.constant(['']), fc.array(wsArb, { minLength: 1, maxLength: 16 })), wsArb, wsArb)
    .map(([d, gaps, before, after]) => before + render(d, gaps) + after)

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' }

const hex4 = (u: number, upper: boolean): string => {
  const h = u.toString(16).padStart(4, '0')
  return upper ? h.toUpperCase() : h
}

/** One UTF-16 unit in a JSON string: raw when allowed (0), `\u` (1, 2), or a short escape (3). */
const encodeUnit = (u: number, how: number): string => {
  const ch = String.fromCharCode(u)
  const short = SHORT_ESCAPES[ch]
  const mustEscape = u < 0x20 || ch === '"' || ch === '\\'
  if (how === 1 || how === 2) return `\\u${hex4(u, how === 2)}`
  if (how === 3 && short !== undefined) return short
  return mustEscape ? (short ?? `\\u${hex4(u, false)}`) : ch
}

/** `s` as a JSON string literal: as JSON.stringify writes it, or escaped by hand. */
const quotedArb = (s: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant(JSON.stringify(s)),
    fc
      .array(fc.nat(3), { minLength: s.length, maxLength: s.length })
      .map((hows) => `"${Array.from({ length: s.length }, (_, i) => encodeUnit(s.charCodeAt(i), hows[i] ?? 0)).join('')}"`),
  )

const anyStringArb = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 4 }), // lone surrogates too
)

const keyArb = fc.oneof(
  anyStringArb,
  fc.constantFrom('a', 'b', 'path', '__proto__', 'constructor', 'toString', 'method', 'params', 'id', 'name', 'arguments'),
  fc.constantFrom('0', '1', '42', '4294967294', '4294967295', '01', '00', '-1', '1.0', '1e3', ' 1', '9007199254740993'),
  fc.nat(30).map(String),
  fc.nat().map(String),
)

const keyTextArb = keyArb.chain(quotedArb)

const digitsArb = (min: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: 20 })

/** Every shape the JSON number grammar allows. */
const numberTextArb = fc.oneof(
  fc
    .tuple(
      fc.boolean(),
      fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digitsArb(0)).map(([a, b]) => a + b)),
      fc.option(digitsArb(1), { nil: undefined }),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digitsArb(1)), { nil: undefined }),
    )
    .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exp === undefined ? '' : exp.join('')}`),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.integer().map(String),
  fc.constantFrom('-0', '0', '1E+2', '1e400', '-1e-400', '0.1e1', '9007199254740993', '123456789012345678901234'),
)

const badNumberArb = fc.constantFrom('01', '-01', '00', '1.', '.5', '+1', '-', '1e', '1e+', '1E-', '0x1', '1.e3', '-.5', 'NaN', 'Infinity', '- 1', '1_000')

const jsonTextArb = fc
  .tuple(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom<string | number | undefined>(undefined, 1, '\t', ' \r\n'))
  .map(([v, indent]) => JSON.stringify(v, null, indent))

const longStringArb = fc
  .tuple(fc.integer({ min: 120, max: 700 }), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }))
  .map(([n, unit]) => JSON.stringify(unit.repeat(Math.ceil(n / unit.length))))

const valueTextArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: jsonTextArb, weight: 4 },
  { arbitrary: numberTextArb, weight: 1 },
  { arbitrary: anyStringArb.chain(quotedArb), weight: 2 },
  { arbitrary: longStringArb, weight: 1 },
  { arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '[[[]]]'), weight: 1 },
)

const idTextArb = fc.oneof(
  { arbitrary: numberTextArb, weight: 4 },
  { arbitrary: anyStringArb.chain(quotedArb), weight: 3 },
  { arbitrary: fc.constantFrom('true', 'false', 'null'), weight: 1 },
  { arbitrary: jsonTextArb, weight: 1 },
  { arbitrary: badNumberArb, weight: 1 },
)

const methodTextArb = fc.oneof(
  { arbitrary: fc.constant('"tools/call"'), weight: 6 },
  { arbitrary: quotedArb('tools/call'), weight: 2 },
  { arbitrary: fc.constantFrom('"tools/list"', '"tools/call "', '"Tools/call"', '"tools\\/call"', 'null', '1', '{}', '["tools/call"]'), weight: 1 },
  { arbitrary: anyStringArb.map((s) => JSON.stringify(s)), weight: 1 },
)

type Member = readonly [string, Doc]

const member = (key: string, value: fc.Arbitrary<Doc>, keepPlain = false): fc.Arbitrary<Member> =>
  fc.tuple(keepPlain ? fc.constant(JSON.stringify(key)) : fc.oneof({ arbitrary: fc.constant(JSON.stringify(key)), weight: 4 }, quotedArb(key)), value)

/** Members in a random order, with duplicates of any of them now and then. */
const objectArb = (required: ReadonlyArray<fc.Arbitrary<Member>>, extra: fc.Arbitrary<Member>): fc.Arbitrary<Doc> =>
  fc
    .tuple(fc.tuple(...required.map((m) => fc.option(m, { freq: 8, nil: undefined }))), fc.array(fc.oneof(extra, ...required), { maxLength: 3 }))
    .chain(([req, more]) => {
      const all = [...req.filter((m) => m !== undefined), ...more]
      return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length })
    })

const otherMemberArb: fc.Arbitrary<Member> = fc.tuple(keyTextArb, valueTextArb)

const argumentsArb: fc.Arbitrary<Doc> = fc.oneof(
  { arbitrary: fc.array(otherMemberArb, { maxLength: 8 }), weight: 8 },
  { arbitrary: fc.constantFrom('null', '[]', '"x"', '1', '[{}]', 'true'), weight: 1 },
)

const nameArb: fc.Arbitrary<Doc> = fc.oneof(
  { arbitrary: anyStringArb.chain(quotedArb), weight: 6 },
  { arbitrary: fc.constantFrom('null', '1', '{}', '[]', 'true'), weight: 1 },
)

const paramsArb: fc.Arbitrary<Doc> = fc.oneof(
  { arbitrary: objectArb([member('name', nameArb), member('arguments', argumentsArb)], otherMemberArb), weight: 8 },
  { arbitrary: fc.constantFrom('null', '[]', '"x"', '{}'), weight: 1 },
)

/** A JSON-RPC request, mostly a `tools/call`, written every way JSON allows. */
const callDocArb: fc.Arbitrary<Doc> = fc
  .tuple(
    objectArb([member('method', methodTextArb), member('params', paramsArb)], otherMemberArb),
    fc.option(member('id', idTextArb), { nil: undefined }),
    fc.boolean(),
  )
  .map(([members, id, rpc]) => [
    ...(rpc ? ([['"jsonrpc"', '"2.0"']] as const) : []),
    ...(id === undefined ? [] : [id]),
    ...(typeof members === 'string' ? [] : members),
  ])

const callLineArb = renderedArb(callDocArb)

// -------------------------------------------------------------------------------------
// arbitraries: broken lines and arbitrary bytes
// -------------------------------------------------------------------------------------

const byteArb = fc.oneof(
  fc.integer({ min: 0, max: 0xff }),
  fc.integer({ min: 0, max: 0x1f }),
  fc.integer({ min: 0x80, max: 0xff }),
  fc.constantFrom(0x22, 0x5c, 0x2c, 0x3a, 0x7b, 0x7d, 0x5b, 0x5d, 0x30, 0x31, 0x2e, 0x2d, 0x2b, 0x65, 0x75, 0x20, 0x09, 0xef, 0xbb, 0xbf),
  // the edges of each byte class: controls, hex digits, ASCII
  fc.constantFrom(0x00, 0x0b, 0x0c, 0x1f, 0x21, 0x7f, 0x80, 0xa0, 0xff, 0x2f, 0x39, 0x40, 0x41, 0x46, 0x47, 0x60, 0x61, 0x66, 0x67),
)

type Mutation = readonly ['truncate' | 'insert' | 'delete' | 'replace' | 'intoString' | 'intoEscape' | 'intoValue' | 'append', number, number]

const mutationArb: fc.Arbitrary<Mutation> = fc.tuple(
  fc.constantFrom('truncate', 'insert', 'delete', 'replace', 'intoString', 'intoEscape', 'intoValue', 'append'),
  fc.nat(),
  byteArb,
)

/** The indices of `byte` in `bytes`. */
const indicesOf = (bytes: Uint8Array, byte: number): Array<number> => bytes.reduce<Array<number>>((acc, b, k) => (b === byte ? [...acc, k] : acc), [])

const mutate = (bytes: Uint8Array, [kind, at, byte]: Mutation): Uint8Array => {
  const n = bytes.length
  const i = n === 0 ? 0 : at % (n + 1)
  const splice = (from: number, drop: number, put: ReadonlyArray<number>): Uint8Array =>
    Uint8Array.from([...bytes.subarray(0, from), ...put, ...bytes.subarray(Math.min(n, from + drop))])
  switch (kind) {
    case 'truncate':
      return bytes.subarray(0, i)
    case 'append':
      return splice(n, 0, [byte])
    case 'insert':
      return splice(i, 0, [byte])
    case 'delete':
      return splice(i, 1, [])
    case 'replace':
      return splice(i, 1, [byte])
    case 'intoString': {
      // just inside one of the string literals (after some quote)
      const quotes = indicesOf(bytes, 0x22)
      const q = quotes.length === 0 ? i : (quotes[at % quotes.length] as number) + 1
      return splice(q, 0, [byte])
    }
    case 'intoEscape': {
      // one of the (up to five) bytes after some backslash
      const escapes = indicesOf(bytes, 0x5c)
      const e = escapes.length === 0 ? i : (escapes[at % escapes.length] as number) + 1 + (at % 5)
      return splice(Math.min(e, n), 1, [byte])
    }
    case 'intoValue': {
      // the first byte of some member's value
      const colons = indicesOf(bytes, 0x3a)
      return splice(colons.length === 0 ? i : (colons[at % colons.length] as number) + 1, 1, [byte])
    }
  }
}

const mutatedLineArb: fc.Arbitrary<Uint8Array> = fc
  .tuple(callLineArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }))
  .map(([line, ms]) => ms.reduce(mutate, Uint8Array.from(Buffer.from(line, 'utf8'))))

const TOKENS = ['{', '}', '[', ']', '"', ':', ',', ' ', '\n', '"tools/call"', '"method"', '"params"', '"name"', '"arguments"', '"id"', '"a"', '1', '-0', '0', '.', 'e', '\\', '\\u0074', 'null', 'true', '\u00e9', '\t']
const tokenSoupArb = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => Uint8Array.from(Buffer.from(ts.join(''), 'utf8')))

/** A long argument string with one byte planted in it: the word-at-a-time check's cases. */
const plantedArb: fc.Arbitrary<Uint8Array> = fc
  .tuple(
    fc.integer({ min: 100, max: 600 }),
    fc.nat(),
    fc.oneof(byteArb, fc.constantFrom(0x00, 0x1f, 0x20, 0x22, 0x5c, 0x7f, 0x80)),
    fc.constantFrom('a', '\u00e9', 'ab\\"', '\\n'),
  )
  .map(([n, at, byte, unit]) => {
    const text = `{"method":"tools/call","id":1,"params":{"name":"w","arguments":{"content":"${unit.repeat(n)}"}}}`
    const bytes = Uint8Array.from(Buffer.from(text, 'utf8'))
    const from = text.indexOf('"content":"') + 11
    const i = from + (at % (bytes.length - from - 4))
    return Uint8Array.from([...bytes.subarray(0, i), byte, ...bytes.subarray(i)])
  })

/** `line` in a larger buffer, at any offset, in a view at any offset (so any word alignment), Buffer or not. */
const heldArb = (line: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Held> =>
  fc
    .tuple(line, fc.uint8Array({ maxLength: 7 }), fc.uint8Array({ maxLength: 7 }), fc.nat(3), fc.boolean())
    .map(([l, before, after, shift, plain]) => {
      const all = Buffer.concat([Buffer.alloc(shift), before, l, after])
      const view = plain ? new Uint8Array(all.buffer, all.byteOffset + shift, all.length - shift) : all.subarray(shift)
      return { bytes: view, start: before.length, end: before.length + l.length }
    })

const utf8 = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'utf8'))

const anyLineArb: fc.Arbitrary<Held> = heldArb(
  fc.oneof(
    { arbitrary: callLineArb.map(utf8), weight: 4 },
    { arbitrary: mutatedLineArb, weight: 4 },
    { arbitrary: plantedArb, weight: 1 },
    { arbitrary: tokenSoupArb, weight: 1 },
    { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 },
  ),
)

// -------------------------------------------------------------------------------------
// arbitraries: calls one detail away from valid, where a lax reader would slip
// -------------------------------------------------------------------------------------

const callText = (id: string, name: string, members: ReadonlyArray<readonly [string, string]>): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${name},"arguments":{${members.map(([k, v]) => `${k}:${v}`).join(',')}}}}`

/** Stands for one odd byte, put in after encoding: no JSON text written here holds a raw U+0001. */
const ODD = '\u0001'

const oddByteArb = fc.constantFrom(0x00, 0x01, 0x0b, 0x0c, 0x1f, 0x7f, 0x80, 0xa0, 0xc2, 0xef, 0xff)

const withOdd = (text: fc.Arbitrary<string>): fc.Arbitrary<Uint8Array> =>
  fc.tuple(text, oddByteArb).map(([t, odd]) => Uint8Array.from(Buffer.from(t, 'utf8'), (c) => (c === 0x01 ? odd : c)))

/** Calls laid out with JSON's whitespace, and half the time one odd byte where whitespace may go. */
const whitespaceCaseArb: fc.Arbitrary<Uint8Array> = withOdd(
  fc
    .tuple(callDocArb, fc.array(wsArb, { minLength: 1, maxLength: 16 }), fc.option(fc.nat(), { freq: 2, nil: undefined }))
    .map(([doc, gaps, at]) => render(doc, at === undefined ? gaps : gaps.map((g, k) => (k === at % gaps.length ? ODD : g)))),
)

const someNumberArb = fc.oneof({ arbitrary: numberTextArb, weight: 6 }, { arbitrary: badNumberArb, weight: 2 }, { arbitrary: fc.constant(ODD), weight: 1 })

/** Ids and argument values of every number shape, in the grammar or just outside it. */
const numbersCaseArb: fc.Arbitrary<Uint8Array> = withOdd(
  fc.tuple(someNumberArb, fc.array(someNumberArb, { maxLength: 3 })).map(([id, values]) => callText(id, '"n"', values.map((v, k) => [`"k${k}"`, v]))),
)

const escapeArb = fc.oneof(
  fc.constantFrom(...'"\\/bfnrt').map((c) => `\\${c}`),
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 4, maxLength: 4 }).map((h) => `\\u${h}`),
  fc.string({ unit: fc.constantFrom(...'09afAFgG/:@`'), minLength: 4, maxLength: 4 }).map((h) => `\\u${h}`),
  fc.constantFrom('\\x', '\\U0041', '\\ ', '\\u12', '\\ud800', '\\udc00\\ud800', '\\uD83D\\uDE00', '\\\u00e9'),
)

/** A string literal with escapes, valid or nearly so. */
const escapedArb: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.string({ maxLength: 3 }).map((s) => JSON.stringify(s).slice(1, -1)), escapeArb), { maxLength: 4 })
  .map((parts) => `"${parts.join('')}"`)

/** Mostly escaped the valid way, so that one doubtful escape decides. */
const mostlyValidArb = fc.oneof({ arbitrary: anyStringArb.chain(quotedArb), weight: 3 }, { arbitrary: escapedArb, weight: 1 })

/** Escapes, valid or not, in the id, the name, the keys and the values. */
const escapesCaseArb: fc.Arbitrary<string> = fc
  .tuple(mostlyValidArb, mostlyValidArb, fc.array(fc.tuple(mostlyValidArb, fc.oneof(escapedArb, fc.constant('1'))), { maxLength: 3 }))
  .map(([id, name, members]) => callText(id, name, members))

/** Argument keys drawn from small pools, so they collide, with array indices at the boundary; up to 40 of them. */
const keysCaseArb: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc
        .oneof(
          fc.constantFrom('a', 'b', '0', '1', '2', '10', '01', '-1', '4294967294', '4294967295', '__proto__', 'constructor'),
          fc.nat(30).map((n) => `k${n}`),
          fc.nat(30).map(String),
        )
        .chain(quotedArb),
      fc.constantFrom('1', 'null', '"v"', '{}', '[1]'),
    ),
    { maxLength: 40, size: 'max' },
  )
  .map((members) => callText('1', '"k"', members))

// -------------------------------------------------------------------------------------
// arbitraries: the lines it must accelerate
// -------------------------------------------------------------------------------------

const plainKeyArb = anyStringArb.filter((k) => !JSON.stringify(k).includes('\\'))

/** Well-formed plain `tools/call` lines: object arguments, a string, number or null id (or none). */
const plainCallLineArb: fc.Arbitrary<string> = renderedArb(
  fc
    .tuple(
      fc.option(fc.oneof(numberTextArb, fc.string().map((s) => JSON.stringify(s)), fc.constant('null')), { nil: undefined }),
      fc.string().map((s) => JSON.stringify(s)),
      fc.array(fc.tuple(plainKeyArb.map((k) => JSON.stringify(k)), fc.oneof(jsonTextArb, longStringArb)), { maxLength: 8 }),
      fc.array(fc.tuple(fc.constantFrom('"jsonrpc"', '"_meta"', '"x"'), jsonTextArb), { maxLength: 2 }),
    )
    .chain(([id, name, args, extra]) => {
      const members: Array<Member> = [
        ['"method"', '"tools/call"'],
        ['"params"', [['"name"', name], ['"arguments"', args]]],
        ...(id === undefined ? [] : [['"id"', id] as const]),
        ...extra,
      ]
      return fc.shuffledSubarray(members, { minLength: members.length, maxLength: members.length })
    }),
)

// -------------------------------------------------------------------------------------
// properties
// -------------------------------------------------------------------------------------

describe('skimCall: the contract', () => {
  it('property: whenever it answers, JSON.parse, Object.keys and callIdOf agree (calls, broken calls, bytes)', () => {
    fc.assert(honoursContract(skimCall, anyLineArb))
  })

  it.each([
    ['numbers in and just outside the grammar', numbersCaseArb],
    ['escapes, valid or not, in ids, names, keys and values', escapesCaseArb.map(utf8)],
    ['colliding argument keys, array indices at the boundary', keysCaseArb.map(utf8)],
    ['long strings with one byte planted (the word-at-a-time check)', plantedArb],
    ['calls with one corruption', fc.tuple(callLineArb, mutationArb).map(([line, m]) => mutate(utf8(line), m))],
    ['whitespace: the four JSON allows, and odd bytes', whitespaceCaseArb],
  ] as const)('property: the contract, one detail from valid: %s', (_, lines) => {
    fc.assert(honoursContract(skimCall, heldArb(lines)))
  })

  it('property: it answers for every well-formed plain tools/call line', () => {
    fc.assert(
      fc.property(heldArb(plainCallLineArb.map(utf8)), ({ bytes, start, end }) => {
        const got = skimCall(bytes, start, end)
        expect(got).not.toBe(undefined)
        expect(got).toEqual(expected(textOf(bytes, start, end)))
      }),
    )
  })

  it('property: never throws, whatever the range', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 16 }), fc.integer({ min: -4, max: 24 }), fc.integer({ min: -4, max: 24 }), (bytes, start, end) => {
        expect(() => skimCall(bytes, start, end)).not.toThrow()
      }),
    )
  })

  it('the contract can fail: a skim that lets raw control bytes through strings', () => {
    const laxControl: Skim = (bytes, start, end) => skimCall(bytes.map((c) => (c < 0x20 && c !== 0x0a && c !== 0x0d ? 0x20 : c)), start, end)
    expect(fc.check(honoursContract(laxControl, anyLineArb)).failed).toBe(true)
  })

  it('the contract can fail: a skim that ignores what follows the object', () => {
    const laxEnd: Skim = (bytes, start, end) => {
      const close = bytes.subarray(start, end).lastIndexOf(0x7d)
      return skimCall(bytes, start, close < 0 ? end : start + close + 1)
    }
    expect(fc.check(honoursContract(laxEnd, anyLineArb)).failed).toBe(true)
  })
})

// -------------------------------------------------------------------------------------
// examples
// -------------------------------------------------------------------------------------

const skimText = (text: string): SkimmedCall | undefined => {
  const b = Buffer.from(text, 'utf8')
  return skimCall(b, 0, b.length)
}

const call = (id: string, method = '"tools/call"', args = '{"path":"/"}'): string =>
  `{"jsonrpc":"2.0","id":${id},"method":${method},"params":{"name":"read","arguments":${args}}}`

describe('skimCall: examples', () => {
  it('reads the id, the name and the argument keys of a plain call', () => {
    expect(skimText('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"/srv/42","ffset":42}}}')).toEqual({
      id: '42',
      name: 'fs_read',
      keys: ['path', 'ffset'],
    })
  })

  it('a 1 MB string argument, at every word alignment, in a Buffer or not', () => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: 'r-1', method: 'tools/call', params: { name: 'write', arguments: { content: 'a'.repeat(1 << 20), path: '/x' } } })
    for (let pad = 0; pad < 4; pad++) {
      const b = Buffer.concat([Buffer.alloc(pad, 0x20), Buffer.from(text), Buffer.from('\nnext')])
      for (const bytes of [b, new Uint8Array(b)]) expect(skimCall(bytes, pad, pad + text.length)).toEqual({ id: 'r-1', name: 'write', keys: ['content', 'path'] })
    }
    const at = text.length - 100
    for (const [byte, answers] of [[0x09, false], [0x00, false], [0x1f, false], [0x5c, false], [0xe9, true], [0x7f, true]] as const) {
      const b = Buffer.from(text)
      b[at] = byte
      expect(skimCall(b, 0, b.length) !== undefined).toBe(answers)
    }
    const escaped = text.replace('a'.repeat(1000), 'a\\"\\\\\\u00e9\\/'.repeat(200))
    expect(skimText(escaped)).toEqual({ id: 'r-1', name: 'write', keys: ['content', 'path'] })
  })

  it('an escaped method is still tools/call', () => {
    expect(skimText(call('1', '"\\u0074ools/call"'))).toEqual({ id: '1', name: 'read', keys: ['path'] })
    expect(skimText(call('1', '"tools\\/call"'))).toEqual({ id: '1', name: 'read', keys: ['path'] })
  })

  it('the last of duplicate keys wins, as under JSON.parse', () => {
    expect(skimText('{"method":"tools/call","id":1,"params":{"name":"a","arguments":{}},"method":"tools/list"}')).toBe(undefined)
    expect(skimText('{"method":"tools/list","id":1,"params":{"name":"a","arguments":{}},"method":"tools/call"}')).toEqual({ id: '1', name: 'a', keys: [] })
    expect(skimText('{"method":"tools/call","id":1,"params":{"name":"a","arguments":{}},"params":null}')).toBe(undefined)
    expect(skimText('{"method":"tools/call","id":1,"params":{"name":"a","arguments":{"x":1},"name":"b","arguments":{"y":1}},"id":"2"}')).toEqual({
      id: '2',
      name: 'b',
      keys: ['y'],
    })
  })

  it('argument keys in Object.keys order: indices first, then first insertion; __proto__ is a key', () => {
    expect(skimText(call('1', undefined, '{"b":1,"4294967295":2,"4294967294":3,"1":4,"01":5,"__proto__":6,"b":7,"\\u0030":8}'))?.keys).toEqual([
      '0',
      '1',
      '4294967294',
      'b',
      '4294967295',
      '01',
      '__proto__',
    ])
  })

  it('ids as callIdOf renders them', () => {
    for (const [id, want] of [
      ['-0', '0'],
      ['1E+2', '100'],
      ['1e400', 'Infinity'],
      ['0.1', '0.1'],
      ['12345678901234567890', '12345678901234567000'],
      ['"\\u0031"', '1'],
      ['true', 'true'],
      ['false', 'false'],
      ['null', ''],
    ] as const)
      expect(skimText(call(id))?.id).toBe(want)
    expect(skimText('{"method":"tools/call","params":{"name":"a","arguments":{}}}')?.id).toBe('')
  })

  it('numbers outside the JSON grammar make the line invalid', () => {
    for (const bad of ['01', '1.', '.5', '+1', '-', '1e', '1e+', '-01', '0x1', 'NaN']) {
      expect(skimText(call(bad))).toBe(undefined)
      expect(skimText(call('1', undefined, `{"n":${bad}}`))).toBe(undefined)
    }
  })

  it('trailing garbage, a raw tab in a string, a BOM: invalid', () => {
    expect(skimText(`${call('1')} \n`)).toEqual({ id: '1', name: 'read', keys: ['path'] })
    expect(skimText(`${call('1')}x`)).toBe(undefined)
    expect(skimText(`${call('1')}{}`)).toBe(undefined)
    expect(skimText(call('"a\tb"'))).toBe(undefined)
    expect(skimText(call('1', undefined, '{"p\tq":1}'))).toBe(undefined)
    expect(skimText(`\ufeff${call('1')}`)).toBe(undefined)
    expect(skimText(`${call('1')}\u00a0`)).toBe(undefined)
  })

  it('never throws on an empty or impossible range', () => {
    const b = Buffer.from(call('1'))
    expect(skimCall(b, 0, 0)).toBe(undefined)
    expect(skimCall(new Uint8Array(0), 0, 0)).toBe(undefined)
    expect(skimCall(b, 5, 2)).toBe(undefined)
    expect(skimCall(b, -1, b.length)).toBe(undefined)
    expect(skimCall(b, 0, b.length + 1)).toBe(undefined)
    expect(skimCall(b, Number.NaN, b.length)).toBe(undefined)
    expect(skimCall(b, 0.5, b.length)).toBe(undefined)
  })

  it('leaves to JSON.parse what it does not handle: batches, object ids, deep nesting', () => {
    expect(skimText(`[${call('1')}]`)).toBe(undefined)
    expect(skimText(call('{"a":1}'))).toBe(undefined)
    expect(skimText(call('1', undefined, `{"deep":${'['.repeat(40)}${']'.repeat(40)}}`))).toBe(undefined)
    expect(skimText(call('1', undefined, `{"deep":${'['.repeat(20)}${']'.repeat(20)}}`))).toEqual({ id: '1', name: 'read', keys: ['deep'] })
  })
})
