import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { lineAudit } from '../../src/cli/lineaudit.js'
import type { QuietCalls } from '../../src/cli/quiet.js'
import { quietCalls } from '../../src/cli/quiet.js'
import type { Direction, SideChannel } from '../../src/cli/sidechannel.js'
import { isAwaitingListing, newSideChannel, observe } from '../../src/cli/sidechannel.js'

// The reference: every line decoded, and parsed when it can concern tools (host) or a
// listing is awaited (server), then observed: what the proxy did on one thread before
// lines were read from bytes and plain calls skimmed.
const reference = (tolerate: ReadonlyArray<string>, lines: ReadonlyArray<readonly [Direction, string]>): ReadonlyArray<UnknownKeyWarning> => {
  let s: SideChannel = newSideChannel(tolerate)
  const out: Array<UnknownKeyWarning> = []
  for (const [from, line] of lines) {
    if (line === '') continue
    if (from === 'host' ? !(line.includes('tools') || line.includes('\\')) : !isAwaitingListing(s)) continue
    let msg: unknown
    try {
      msg = JSON.parse(line)
    } catch {
      continue
    }
    if (typeof msg !== 'object' || msg === null) continue
    const [ws, next] = observe(from, msg)(s)
    s = next
    out.push(...ws)
  }
  return out
}

// Feeds each line in the pieces given by `cuts` (fractions of its length), in order.
const fed = (
  tolerate: ReadonlyArray<string>,
  lines: ReadonlyArray<readonly [Direction, string]>,
  cuts: ReadonlyArray<number>,
  quiet: QuietCalls = quietCalls(),
): ReadonlyArray<UnknownKeyWarning> => {
  const out: Array<UnknownKeyWarning> = []
  const audit = lineAudit(tolerate, (w) => out.push(w), quiet)
  let c = 0
  for (const [from, line] of lines) {
    const bytes = Buffer.from(line + '\n')
    const at = Math.floor((cuts[c++ % Math.max(1, cuts.length)] ?? 0) * bytes.length)
    // a piece is reused once fed: hand over a copy that is scribbled on afterwards
    for (const piece of [bytes.subarray(0, at), bytes.subarray(at)]) {
      if (piece.length === 0) continue
      const copy = Buffer.from(piece)
      audit.feed(from, copy)
      copy.fill(0x20)
    }
  }
  return out
}

// Feeds each run of lines from one side as one stream of bytes, cut where `cuts` say
// (fractions of the run's length): many lines to a piece, as a flood comes.
const fedInRuns = (tolerate: ReadonlyArray<string>, lines: ReadonlyArray<readonly [Direction, string]>, cuts: ReadonlyArray<number>): ReadonlyArray<UnknownKeyWarning> => {
  const out: Array<UnknownKeyWarning> = []
  const audit = lineAudit(tolerate, (w) => out.push(w))
  for (let i = 0; i < lines.length; ) {
    const from = (lines[i] as readonly [Direction, string])[0]
    let j = i
    while (j < lines.length && (lines[j] as readonly [Direction, string])[0] === from) j++
    const run = Buffer.from(lines.slice(i, j).map(([, text]) => text + '\n').join(''))
    const at = [...new Set(cuts.map((c) => Math.floor(c * run.length)))].sort((a, b) => a - b)
    let start = 0
    for (const cut of [...at, run.length]) {
      if (cut <= start) continue
      const copy = Buffer.from(run.subarray(start, cut))
      audit.feed(from, copy)
      copy.fill(0x20)
      start = cut
    }
    i = j
  }
  return out
}

const key = fc.oneof(fc.constantFrom('path', 'offset', 'content', 'ffset', 'reason', '_meta', '__proto__', '0', '17', 'pa\u0074h'), fc.string({ maxLength: 6 }))
const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string())
const args = fc.dictionary(key, value, { maxKeys: 5 })
const id = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }))
const toolName = fc.constantFrom('read', 'write', 'other')
const listing = fc.array(fc.tuple(toolName, fc.uniqueArray(fc.constantFrom('path', 'offset', 'content', '0'), { maxLength: 3 })), { maxLength: 3 })

// Serialisations a host may use: plain, with spaces, with "/" escaped, with the
// method escaped.
const spell = (msg: unknown, how: number): string => {
  const text = JSON.stringify(msg)
  if (how === 1) return ` ${text.replace(/^\{/, '{ ').replace(/\}$/, ' }')}\r`
  if (how === 2) return text.replaceAll('/', '\\/')
  if (how === 3) return text.replace('"tools/call"', '"\\u0074ools/call"')
  return text
}

// Calls written to mislead a reader that does not parse: a second `params` (plain, or
// with its name escaped), an escaped tool name, and a raw control byte in a value,
// which makes the line invalid JSON however familiar its shape.
const tricky = fc.tuple(id, toolName, args, args, fc.nat(3)).map(([i, n, a, b, how]) => {
  const head = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: n, arguments: a } }).slice(0, -1)
  const second = JSON.stringify({ name: n, arguments: b })
  if (how === 0) return `${head},"params":${second}}`
  if (how === 1) return `${head},"p\\u0061rams":${second}}`
  if (how === 2) return head.replace(`"name":"${n}"`, `"name":"\\u00${n.charCodeAt(0).toString(16)}${n.slice(1)}"`) + '}'
  return JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: n, arguments: { ...a, note: 'a\tb' } } }).replace('\\t', '\t')
})

// Calls of a few shapes with ever new values: what the audit learns to pass over by
// template (the shape's bytes repeated, other values in its slots), values of other
// kinds in those slots included.
const sameShape = fc
  .tuple(id, toolName, fc.subarray(['path', 'ffset', 'offset']), fc.array(fc.oneof(value, fc.constant('a\\"b"c'), fc.constant({ ffset: 1 })), { minLength: 3, maxLength: 3 }))
  .map(([i, n, keys, vs]) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: n, arguments: Object.fromEntries(keys.map((k, j) => [k, vs[j]])) } }))

const line: fc.Arbitrary<readonly [Direction, string]> = fc.oneof(
  fc.tuple(fc.constant<Direction>('host'), tricky),
  fc.tuple(fc.constant<Direction>('host'), sameShape),
  fc.tuple(fc.constant<Direction>('host'), fc.tuple(id, toolName, args, fc.nat(3)).map(([i, n, a, how]) => spell({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: n, arguments: a } }, how))),
  fc.tuple(fc.constant<Direction>('host'), fc.tuple(fc.integer({ min: 0, max: 1 }), fc.nat(3)).map(([i, how]) => spell({ jsonrpc: '2.0', id: i, method: 'tools/list' }, how))),
  fc.tuple(
    fc.constant<Direction>('server'),
    fc.tuple(fc.integer({ min: 0, max: 1 }), listing).map(([i, tools]) =>
      JSON.stringify({ jsonrpc: '2.0', id: i, result: { tools: tools.map(([name, keys]) => ({ name, inputSchema: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])) } })) } }),
    ),
  ),
  // damaged and odd lines, from either side
  fc.tuple(fc.constantFrom<Direction>('host', 'server'), fc.tuple(id, args).map(([i, a]) => JSON.stringify({ id: i, method: 'tools/call', params: { name: 'read', arguments: a } }))).map(
    ([from, text]) => [from, text.slice(0, Math.max(0, text.length - 3))] as const,
  ),
  fc.tuple(fc.constantFrom<Direction>('host', 'server'), fc.string({ unit: 'binary', maxLength: 30 }).map((s) => s.replaceAll('\n', ' '))),
  fc.tuple(fc.constant<Direction>('host'), fc.tuple(id, args).map(([i, a]) => JSON.stringify([{ id: i, method: 'tools/call', params: { name: 'read', arguments: a } }]))),
)

// A session: lines, and again some line met before (a model calls the same tool with
// the same keys over and over, which is what the audit learns to skip).
const listed = fc
  .tuple(fc.integer({ min: 0, max: 1 }), listing)
  .map(([i, tools]): ReadonlyArray<readonly [Direction, string]> => [
    ['host', JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' })],
    ['server', JSON.stringify({ jsonrpc: '2.0', id: i, result: { tools: tools.map(([name, keys]) => ({ name, inputSchema: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])) } })) } })],
  ])

// A session: lines, a tool list answered, and again some line met before (a model calls
// the same tool with the same keys over and over, which is what the audit learns to
// skip), or a line after its twin: the same shape, made invalid JSON by a raw tab
// outside it.
const session = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.tuple(line, fc.boolean()).map(([l, twin]) => ({ l, twin })) },
      { weight: 1, arbitrary: listed.map((ls) => ({ ls })) },
      { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([again, twin]) => ({ again, twin })) },
      // a line met before with more after it on the same line: not the line it starts as
      { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.constantFrom(' ', 'x', ','), fc.nat(1)).map(([glue, sep, list]) => ({ glue, sep, list })) },
    ),
    { maxLength: 30 },
  )
  .map((steps) => {
    const out: Array<readonly [Direction, string]> = []
    const push = ([from, text]: readonly [Direction, string], twin: boolean): void => {
      if (twin && text.includes('"jsonrpc":"2.0"')) out.push([from, text.replace('"jsonrpc":"2.0"', '"jsonrpc":"2.0\t"')])
      out.push([from, text])
    }
    for (const step of steps) {
      if ('glue' in step) {
        // the line once more (so it is known), then glued to a tools/list request, then
        // an answer to that request, which only a reader fooled by the glue awaits
        const [from, text] = out[step.glue % Math.max(1, out.length)] ?? ['host', '{}']
        const id = 1000 + step.list
        out.push([from, text], [from, `${text}${step.sep}${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}`])
        out.push(['server', JSON.stringify({ jsonrpc: '2.0', id, result: { tools: ['read', 'write', 'other'].map((name) => ({ name, inputSchema: { type: 'object', properties: { zz: {} } } })) } })])
      } else if ('ls' in step) out.push(...step.ls)
      else if ('l' in step) push(step.l, step.twin)
      else if (out.length > 0) push(out[step.again % out.length] as readonly [Direction, string], step.twin)
    }
    return out
  })

const tolerate = fc.constantFrom<ReadonlyArray<string>>([], ['_meta'])
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 })

describe('lineAudit', () => {
  it('warns exactly as decoding, parsing and observing every line would, however the bytes are cut', () => {
    fc.assert(
      fc.property(tolerate, session, cuts, (t, lines, c) => {
        expect(fed(t, lines, c)).toEqual(reference(t, lines))
      }),
    )
  })

  it('warns the same when many lines come to a piece, cut anywhere', () => {
    fc.assert(
      fc.property(tolerate, session, cuts, (t, lines, c) => {
        expect(fedInRuns(t, lines, c)).toEqual(reference(t, lines))
      }),
    )
  })

  it('the property fails when calls are skipped as quiet without reason', () => {
    const fails = (quiet: () => QuietCalls): boolean =>
      fc.check(
        fc.property(tolerate, session, cuts, (t, lines, c) => {
          expect(fed(t, lines, c, quiet())).toEqual(reference(t, lines))
        }),
        { numRuns: 2000 },
      ).failed
    // shapes kept across a new tool list: a tool listed later, or a key it declares no more
    expect.soft(
      fails(() => {
        const q = quietCalls()
        const one = {}
        return { isQuiet: (b, s, e) => q.isQuiet(b, s, e, one), remember: q.remember, quietLineAt: (b, s, l) => q.quietLineAt(b, s, l, one) }
      }),
    ).toBe(true)
    // a line's shape remembered before it was audited: its first warning is lost
    expect.soft(
      fails(() => {
        const q = quietCalls()
        return {
          isQuiet: (b, s, e, cat) => {
            if (q.isQuiet(b, s, e, cat)) return true
            q.remember(b)
            return false
          },
          remember: () => undefined,
          quietLineAt: q.quietLineAt,
        }
      }),
    ).toBe(true)
  })

  it('reads a last line that has no newline when its side ends, and not before', () => {
    const said: Array<string> = []
    const audit = lineAudit([], (w) => said.push(`${w.tool}:${w.unknownKeys.join(',')}`))
    audit.feed('host', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'))
    expect(audit.awaitingListing()).toBe(true)
    audit.feed('server', Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read","inputSchema":{"type":"object","properties":{"path":{}}}}]}}\n'))
    expect(audit.awaitingListing()).toBe(false)
    audit.feed('host', Buffer.from('{"id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"/","ffset":1}}}'))
    expect(said).toEqual([])
    audit.feed('host', Buffer.alloc(0))
    expect(said).toEqual(['read:ffset'])
  })

  it('joins a line that came in many pieces (a 1 MB call in 64 KiB chunks)', () => {
    const said: Array<string> = []
    const audit = lineAudit([], (w) => said.push(`${w.tool}:${w.unknownKeys.join(',')}`))
    audit.feed('host', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'))
    audit.feed('server', Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"write","inputSchema":{"type":"object","properties":{"path":{},"content":{}}}}]}}\n'))
    const big = Buffer.from(JSON.stringify({ id: 2, method: 'tools/call', params: { name: 'write', arguments: { path: '/x', content: 'y'.repeat(1 << 20), contnet: 1 } } }) + '\n')
    for (let i = 0; i < big.length; i += 65536) audit.feed('host', Buffer.from(big.subarray(i, i + 65536)))
    expect(said).toEqual(['write:contnet'])
  })
})
