// The proxy's audit as it reads the bytes it forwarded: cut into lines however the
// chunks came, lines that cannot matter passed over, the rest parsed and observed.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LineSink, LineSplitter, SplitOptions } from '../../src/cli/lines.js'
import { splitLines } from '../../src/cli/lines.js'
import { auditTap } from '../../src/cli/proxy.js'
import type { LogRecord, ProxyAudit } from '../../src/cli/proxyaudit.js'
import { proxyAudit, recordOf, withoutLongStrings } from '../../src/cli/proxyaudit.js'
import type { Direction, SideChannel } from '../../src/cli/sidechannel.js'
import { newSideChannel, observe } from '../../src/cli/sidechannel.js'

type Line = readonly [Direction, string]

// The model: every line of both sides decoded, parsed and observed, in order, with no
// line passed over.
const reference = (tolerate: ReadonlyArray<string>, lines: ReadonlyArray<Line>): ReadonlyArray<string> => {
  let s: SideChannel = newSideChannel(tolerate)
  const out: Array<string> = []
  for (const [from, line] of lines) {
    let msg: unknown
    try {
      msg = JSON.parse(line)
    } catch {
      continue
    }
    if (typeof msg !== 'object' || msg === null) continue
    const [ws, next] = observe(from, msg)(s)
    s = next
    out.push(...ws.map((e) => JSON.stringify(recordOf(e).fields)))
  }
  return out
}

type Audit = (tolerate: ReadonlyArray<string>, say: (line: string) => void) => ProxyAudit
type MakeTap = typeof auditTap
type Split = (sink: LineSink, options?: SplitOptions) => LineSplitter

const realAudit: Audit = (tolerate, say) => proxyAudit({ tolerate }, (r) => say(JSON.stringify(r.fields)))

// As the proxy wires it: one splitter per side, the server's skipping lines while no
// listing is awaited, the audit loaded on the first host line about tools. Each run of
// lines from one side is one stream of bytes, cut where `cuts` say (fractions of its
// length): one line in many pieces, or many to a piece; after a piece, the event loop
// may turn (`ticks`), and the audit may finish loading.
const fed = async (
  tolerate: ReadonlyArray<string>,
  lines: ReadonlyArray<Line>,
  cuts: ReadonlyArray<number>,
  ticks: ReadonlyArray<boolean>,
  audit: Audit = realAudit,
  split: Split = splitLines,
  makeTap: MakeTap = auditTap,
): Promise<ReadonlyArray<string>> => {
  const out: Array<string> = []
  const tap = makeTap(
    async () => audit(tolerate, (l) => out.push(l)),
    (e) => out.push(`error: ${e}`),
  )
  const sides = { host: split({ line: tap.host }), server: split({ line: tap.server }, { wants: tap.wantsServer }) }
  let k = 0
  for (let i = 0; i < lines.length;) {
    const from = (lines[i] as Line)[0]
    let j = i
    while (j < lines.length && (lines[j] as Line)[0] === from) j++
    const run = Buffer.from(
      lines
        .slice(i, j)
        .map(([, text]) => text + '\n')
        .join(''),
    )
    const at = [...new Set(cuts.map((c) => Math.floor(c * run.length)))].sort((x, y) => x - y)
    let start = 0
    for (const cut of [...at, run.length]) {
      if (cut <= start) continue
      sides[from].push(run.subarray(start, cut))
      start = cut
      if (ticks[k++ % Math.max(1, ticks.length)] === true) await new Promise((r) => setImmediate(r))
    }
    i = j
  }
  await tap.settled()
  return out
}

const key = fc.oneof(
  fc.constantFrom('path', 'offset', 'content', 'ffset', 'reason', '_meta', '__proto__', '0', '17'),
  fc.string({ maxLength: 6 }),
)
const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string())
const args = fc.dictionary(key, value, { maxKeys: 5 })
const id = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('1', 'x'), fc.constant(null))
const toolName = fc.constantFrom('read', 'write', 'other')
const listing = fc.array(
  fc.tuple(toolName, fc.uniqueArray(fc.constantFrom('path', 'offset', 'content', '0'), { maxLength: 3 })),
  { maxLength: 3 },
)
// a listing whose every tool declares something: calls to it are audited
const fullListing = fc.array(
  fc.tuple(toolName, fc.uniqueArray(fc.constantFrom('path', 'offset', 'content', '0'), { minLength: 1, maxLength: 3 })),
  { minLength: 1, maxLength: 3 },
)
const listed = (tools: ReadonlyArray<readonly [string, ReadonlyArray<string>]>): unknown =>
  tools.map(([name, keys]) => ({
    name,
    inputSchema: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])) },
  }))

// Serialisations a host may use: plain, with spaces and a CR, with "/" escaped, with
// the method escaped.
const spell = (msg: unknown, how: number): string => {
  const text = JSON.stringify(msg)
  if (how === 1) return ` ${text.replace(/^\{/, '{ ').replace(/\}$/, ' }')}\r`
  if (how === 2) return text.replaceAll('/', '\\/')
  if (how === 3) return text.replace(/"tools\/(call|list)"/, '"\\u0074ools/$1"')
  return text
}

const line: fc.Arbitrary<Line> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(
      fc.constant<Direction>('host'),
      fc
        .tuple(id, toolName, args, fc.nat(3))
        .map(([i, n, a, how]) =>
          spell({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: n, arguments: a } }, how),
        ),
    ),
  },
  fc.tuple(
    fc.constant<Direction>('host'),
    fc
      .tuple(id, fc.nat(3), fc.option(fc.constant('more')))
      .map(([i, how, cursor]) =>
        spell({ jsonrpc: '2.0', id: i, method: 'tools/list', ...(cursor === null ? {} : { params: { cursor } }) }, how),
      ),
  ),
  fc.tuple(
    fc.constant<Direction>('server'),
    fc.tuple(id, listing, fc.option(fc.constant('more'))).map(([i, tools, next]) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        result: { tools: listed(tools), ...(next === null ? {} : { nextCursor: next }) },
      }),
    ),
  ),
  // a server request with an id the host also uses, and the host's answer to it
  fc.tuple(
    fc.constant<Direction>('server'),
    id.map((i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'roots/list' })),
  ),
  fc.tuple(
    fc.constant<Direction>('host'),
    fc
      .tuple(id, listing)
      .map(([i, tools]) => JSON.stringify({ jsonrpc: '2.0', id: i, result: { tools: listed(tools) } })),
  ),
  // batches, damaged and odd lines, from either side
  fc.tuple(
    fc.constant<Direction>('host'),
    fc
      .tuple(id, args)
      .map(([i, a]) => JSON.stringify([{ id: i, method: 'tools/call', params: { name: 'read', arguments: a } }])),
  ),
  fc.tuple(
    fc.constantFrom<Direction>('host', 'server'),
    fc
      .tuple(id, args)
      .map(([i, a]) =>
        JSON.stringify({ id: i, method: 'tools/call', params: { name: 'read', arguments: a } }).slice(0, -3),
      ),
  ),
  fc.tuple(
    fc.constantFrom<Direction>('host', 'server'),
    fc.string({ unit: 'binary', maxLength: 30 }).map((s) => s.replaceAll('\n', ' ')),
  ),
)

// A session: a listing first (as hosts do, mostly), then lines, tool lists asked for
// and answered, and lines met before again.
const listingPair = fc.tuple(id, fullListing).map(([i, tools]): ReadonlyArray<Line> => [
  ['host', JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' })],
  ['server', JSON.stringify({ jsonrpc: '2.0', id: i, result: { tools: listed(tools) } })],
])
const session = fc
  .tuple(
    fc.option(listingPair, { freq: 3 }),
    fc.array(fc.oneof({ weight: 3, arbitrary: line.map((l) => [l]) }, { weight: 1, arbitrary: listingPair }), {
      maxLength: 30,
    }),
  )
  .chain(([first, groups]) => {
    const lines = [...(first ?? []), ...groups.flat()]
    return fc
      .array(fc.nat(), { maxLength: 5 })
      .map((again) => [
        ...lines,
        ...again.flatMap((k) => (lines.length === 0 ? [] : [lines[k % lines.length] as Line])),
      ])
  })

const tolerate = fc.constantFrom<ReadonlyArray<string>>([], ['_meta'])
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 })
const ticks = fc.array(fc.boolean(), { maxLength: 8 })

describe('the proxy’s audit of what it forwarded', () => {
  it('warns exactly as parsing and observing every line of both sides would, however the bytes are cut and whenever the audit loads', async () => {
    await fc.assert(
      fc.asyncProperty(tolerate, session, cuts, ticks, async (t, lines, c, k) => {
        expect(await fed(t, lines, c, k)).toEqual(reference(t, lines))
      }),
    )
  })

  it('the property can fail: an audit blind to escapes, a splitter that loses a line’s start at a chunk’s end, a tap that skips the server while the audit loads', async () => {
    const fails = async (audit: Audit, split: Split = splitLines, makeTap: MakeTap = auditTap): Promise<boolean> =>
      (
        await fc.check(
          fc.asyncProperty(tolerate, session, cuts, ticks, async (t, lines, c, k) => {
            expect(await fed(t, lines, c, k, audit, split, makeTap)).toEqual(reference(t, lines))
          }),
        )
      ).failed
    const blind: Audit = (t, say) => {
      const a = realAudit(t, say)
      return { ...a, line: (from, b) => (from === 'host' && !b.includes('tools') ? undefined : a.line(from, b)) }
    }
    const forgetful: Split = (sink, options) => {
      const s = splitLines(sink, options)
      return { push: (chunk) => (s.push(chunk), s.push(Buffer.from('\n'))), end: s.end }
    }
    const impatient: MakeTap = (load, err) => {
      let loaded = false
      const tap = auditTap(() => load().then((a) => ((loaded = true), a)), err)
      return { ...tap, wantsServer: () => loaded && tap.wantsServer() }
    }
    expect.soft(await fails(blind)).toBe(true)
    expect.soft(await fails(realAudit, forgetful)).toBe(true)
    expect.soft(await fails(realAudit, splitLines, impatient)).toBe(true)
  })

  it('reads a last line that has no newline when its side ends, and not before', () => {
    const said: Array<string> = []
    const a = proxyAudit({ tolerate: [] }, (r) => said.push(r.text))
    const host = splitLines({ line: (b) => a.line('host', b) })
    const server = splitLines({ line: (b) => a.line('server', b) }, { wants: a.awaitingListing })
    host.push(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'))
    expect(a.awaitingListing()).toBe(true)
    server.push(
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read","inputSchema":{"type":"object","properties":{"path":{}}}}]}}',
      ),
    )
    expect(a.awaitingListing()).toBe(true)
    server.end()
    expect(a.awaitingListing()).toBe(false)
    host.push(Buffer.from('{"id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"/","ffset":1}}}'))
    expect(said).toEqual([])
    host.end()
    expect(said).toEqual(['toolstack: read call 2 carried undeclared argument key "ffset" (declared: "path")'])
  })

  it('joins a line that came in many pieces (a 1 MB call in 64 KiB chunks)', () => {
    const said: Array<string> = []
    const a = proxyAudit({ tolerate: [] }, (r) => said.push(JSON.stringify(r.fields)))
    a.line('host', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
    a.line(
      'server',
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"write","inputSchema":{"type":"object","properties":{"path":{},"content":{}}}}]}}',
      ),
    )
    const host = splitLines({ line: (b) => a.line('host', b) })
    const big = Buffer.from(
      JSON.stringify({
        id: 2,
        method: 'tools/call',
        params: { name: 'write', arguments: { path: '/x', content: 'y'.repeat(1 << 20), contnet: 1 } },
      }) + '\n',
    )
    for (let i = 0; i < big.length; i += 65536) host.push(big.subarray(i, i + 65536))
    expect(said.map((l) => (JSON.parse(l) as { unknownKeys: unknown }).unknownKeys)).toEqual([['contnet']])
  })
})

describe('withoutLongStrings', () => {
  // the model: every string value longer than `longest` bytes (as UTF-8, escapes as
  // written) emptied; member names and everything else as they were
  const emptied = (v: unknown, longest: number, written: (s: string) => string): unknown => {
    if (typeof v === 'string') return Buffer.byteLength(written(v)) - 2 > longest ? '' : v
    if (Array.isArray(v)) return v.map((x) => emptied(x, longest, written))
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, emptied(x, longest, written)]))
    return v
  }
  const text = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('a"b', 'a\\', '\\"', '"', 'é😀', 'x'.repeat(20)),
    fc.string({ unit: 'binary', maxLength: 30 }),
  )
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(text, tie('v'), { maxKeys: 4 }),
    ),
  })).v
  // pretty-printed, and with "/" escaped, as some writers do
  const write = (v: unknown, how: number): string =>
    how === 1 ? JSON.stringify(v, null, '\t') : how === 2 ? JSON.stringify(v).replaceAll('/', '\\/') : JSON.stringify(v)
  const writtenString =
    (how: number) =>
    (s: string): string =>
      write(s, how === 2 ? 2 : 0)

  it('reads as the same value with its long string values emptied, member names kept, whatever the value', () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 16 }), fc.nat(2), (v, longest, how) => {
        expect(JSON.parse(withoutLongStrings(Buffer.from(write(v, how)), longest).toString())).toEqual(
          emptied(v, longest, writtenString(how)),
        )
      }),
    )
  })

  it('the property can fail: a closing quote found without counting the backslashes before it', () => {
    const naive = (b: Buffer, longest: number): Buffer => {
      const t = b.toString()
      return Buffer.from(
        t.replace(/"([^"]*)"(?!\s*:)/g, (m, inner: string) => (Buffer.byteLength(inner) > longest ? '""' : m)),
      )
    }
    const failed = fc.check(
      fc.property(value, fc.integer({ min: 0, max: 16 }), (v, longest) => {
        expect(JSON.parse(naive(Buffer.from(write(v, 0)), longest).toString())).toEqual(
          emptied(v, longest, writtenString(0)),
        )
      }),
    ).failed
    expect(failed).toBe(true)
  })
})

describe('what the proxy says, bounded whatever the traffic', () => {
  // written apart from the code: C0, DEL, C1, line and paragraph separators, bidi marks and overrides
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u
  // a name or an id is cut at 200 characters (201 with its ellipsis), each written as at most 6 (`\u009b`)
  const NAME = 6 * 201

  const said = (lines: ReadonlyArray<unknown>): Array<LogRecord> => {
    const records: Array<LogRecord> = []
    const audit = proxyAudit({ tolerate: [] }, (r) => records.push(r))
    for (const [i, msg] of lines.entries())
      audit.line(i % 2 === 1 && i < 2 ? 'server' : 'host', Buffer.from(JSON.stringify(msg)))
    return records
  }
  const listing = [
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'echo', inputSchema: { properties: { text: {} } } }] } },
  ]
  const call = (id: unknown, name: string, args: unknown): unknown => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  })

  it('a call before any listing, named with 20,000 characters: the notice names it escaped and cut at 200', () => {
    const tool = 'n\u009b31m' + 'A'.repeat(20_000)
    const [notice] = said([call(`i\u009b${'9'.repeat(20_000)}`, tool, {})])
    expect(notice?.text).toBe(
      `toolstack proxy: the host called "n\\u009b31m${'A'.repeat(195)}…" (call i\\u009b${'9'.repeat(198)}…) before any tools/list was answered: ` +
        'calls are audited only against a listing the proxy saw, so none is audited until then; reported once',
    )
    expect(notice?.fields['message']).toBe(notice?.text.replace('toolstack proxy: ', ''))
  })

  it('the notice is at most 2 names and its words long, with no raw control character, whatever the name and the id', () => {
    // a long text made of a short one repeated, so a failure shrinks in a few steps
    const long = fc
      .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }), fc.integer({ min: 250, max: 30_000 }))
      .map(([s, n]) => s.repeat(n).slice(0, n))
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      long,
      fc.constantFrom('\u001b]0;x\u0007', 'c\u009b31m', 'a\u202eb', '\ud800'),
    )
    fc.assert(
      fc.property(text, text, (tool, id) => {
        const { text: line, fields } = recordOf({ _tag: 'Unlisted', tool, id })
        expect(line.length).toBeLessThanOrEqual(2 * NAME + 2 + 250)
        expect(line).not.toMatch(RAW)
        expect(String(fields['message'])).not.toMatch(RAW)
      }),
      { numRuns: 100 },
    )
  })

  it('a call with 20,000 undeclared keys: one short line, and a record of the first 20 that keeps the count', () => {
    const args = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 1]))
    const [warning] = said([...listing, call(2, 'echo', args)])
    // as many keys as the audit records of one call (its walk stops at MAX_FOUND), far more than 20
    const found = warning?.warning?.unknownKeys.length ?? 0
    expect(found).toBeGreaterThan(20)
    expect(warning?.text).toMatch(/^toolstack: echo call 2 carried undeclared argument keys "k0", "k1", /)
    expect(warning?.text).toContain(` and ${found - 20} more (declared: "text")`)
    expect(warning?.text.length).toBeLessThan(1000)
    expect(JSON.stringify(warning?.fields).length).toBeLessThan(3000)
    expect(warning?.fields).toMatchObject({ type: 'warning', tool: 'echo', id: '2', unknownKeyCount: found })
    expect(warning?.fields['unknownKeys']).toHaveLength(20)
    expect(warning?.fields['keys']).toHaveLength(20)
    expect(warning?.fields).not.toHaveProperty('declaredKeyCount')
  })

  it('a call with one 60,000-character key: each string of the record cut at 1,000 characters', () => {
    const key = 'K'.repeat(60_000)
    const [warning] = said([...listing, call(2, 'echo', { [key]: 1 })])
    expect(warning?.text.length).toBeLessThan(1000)
    expect(warning?.fields).toMatchObject({
      unknownKeys: [`${'K'.repeat(1000)}…`],
      keys: [{ path: `${'K'.repeat(1000)}…`, key: `${'K'.repeat(1000)}…`, place: [] }],
    })
  })
})
