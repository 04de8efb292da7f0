import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { quietCalls } from '../../src/cli/quiet.js'

const call = (name: string, args: Record<string, unknown>, id: unknown = 1): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

// Asks, then remembers the line as audited: what the audit does with a line it had to read.
const learn = (q: ReturnType<typeof quietCalls>, line: string, catalogue: object): boolean => {
  const b = Buffer.from(line)
  const was = q.isQuiet(b, 0, b.length, catalogue)
  if (!was) q.remember(b)
  return was
}

const ask = (q: ReturnType<typeof quietCalls>, line: string, catalogue: object): boolean => {
  const b = Buffer.from(line)
  return q.isQuiet(b, 0, b.length, catalogue)
}

describe('quietCalls', () => {
  const tools = {}

  it('knows a shape once a call of it was audited, whatever its id and values', () => {
    const q = quietCalls()
    expect(learn(q, call('read', { path: '/a', ffset: 1 }), tools)).toBe(false)
    expect(ask(q, call('read', { path: '/b/c', ffset: 99 }, 'x-7'), tools)).toBe(true)
    expect(ask(q, ` {"params":{"arguments":{"path":[1,{"a":"}"}],"ffset":null},"name":"read"},"method":"tools/call","id":3}\t`, tools)).toBe(true)
  })

  it('does not know another tool, another key, or a new tool list', () => {
    const q = quietCalls()
    learn(q, call('read', { path: '/a', ffset: 1 }), tools)
    expect(ask(q, call('write', { path: '/a', ffset: 1 }), tools)).toBe(false)
    expect(ask(q, call('read', { path: '/a', offset: 1 }), tools)).toBe(false)
    expect(ask(q, call('read', { path: '/a', ffset: 1, more: 2 }), tools)).toBe(false)
    expect(ask(q, call('read', { path: '/a' }), tools)).toBe(false)
    expect(ask(q, call('read', { path: '/a', ffset: 1 }), {})).toBe(false)
    // the new list forgot the old one's shapes
    expect(ask(q, call('read', { path: '/a', ffset: 1 }), tools)).toBe(false)
  })

  it('declines lines it cannot read without parsing: escaped member names, other methods, batches, no arguments', () => {
    const q = quietCalls()
    const known = call('read', { path: '/a' })
    learn(q, known, tools)
    expect(ask(q, known.replace('"params"', '"p\\u0061rams"'), tools)).toBe(false)
    expect(ask(q, known.replace('"method"', '"m\\u0065thod"'), tools)).toBe(false)
    expect(ask(q, known.replace('"tools/call"', '"tools\\/call"'), tools)).toBe(false)
    expect(ask(q, known.replace('"tools/call"', '"tools/list"'), tools)).toBe(false)
    expect(ask(q, `[${known}]`, tools)).toBe(false)
    expect(ask(q, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: 'path' } }), tools)).toBe(false)
    // a later params replaces the earlier one, as under JSON.parse
    expect(ask(q, known.slice(0, -1) + ',"params":{"name":"read","arguments":{"path":1,"new":2}}}', tools)).toBe(false)
    expect(ask(q, known.slice(0, -1) + ',"params":{"name":"read","arguments":{"path":2}}}', tools)).toBe(true)
  })

  it('finds the end of long strings with escaped quotes and backslashes in them', () => {
    const q = quietCalls()
    learn(q, call('write', { path: '/x', content: 'y' }), tools)
    const content = `${'a'.repeat(100)}\\"${'b'.repeat(50)}\\\\${'"'.repeat(3)}\\\\\\"c`
    expect(ask(q, call('write', { path: '/x', content }), tools)).toBe(true)
    // the key after such a string is read as a key
    expect(ask(q, call('write', { path: '/x', content, sneaky: 1 }), tools)).toBe(false)
    expect(ask(q, call('write', { path: '/x', content: `${'a'.repeat(100)}\\`, sneaky: 1 }), tools)).toBe(false)
  })

  it('answers a line of a kind it met from that line: other values, even of other kinds, with the same keys', () => {
    const q = quietCalls()
    const first = call('read', { path: '/a', ffset: 1, flag: true })
    learn(q, first, tools)
    // the first quiet one becomes a template; the next ones fit it or are scanned
    expect(ask(q, first, tools)).toBe(true)
    expect(ask(q, call('read', { path: 'x","evil":"y', ffset: -2.5e3, flag: null }, 'id-9'), tools)).toBe(true)
    expect(ask(q, call('read', { path: { deep: ['"'] }, ffset: '1', flag: [] }), tools)).toBe(true)
    expect(ask(q, call('read', { path: '/a', ffset: 1, flag: true, evil: 1 }), tools)).toBe(false)
    expect(ask(q, call('read', { path: '/a', ffset: 1, flg: true }), tools)).toBe(false)
    expect(ask(q, call('write', { path: '/a', ffset: 1, flag: true }), tools)).toBe(false)
    // cut short inside a value: not a call the scan can read
    expect(ask(q, first.slice(0, first.indexOf('/a') + 1), tools)).toBe(false)
    // a new tool list forgets the templates with the shapes
    expect(ask(q, first, {})).toBe(false)
  })

  it('forgets its shapes when it has too many, and keeps answering', () => {
    const q = quietCalls()
    for (let i = 0; i < 5000; i++) learn(q, call('read', { [`k${i}`]: i }), tools)
    expect(ask(q, call('read', { k4999: 0 }), tools)).toBe(true)
    expect(learn(q, call('read', { k0: 0 }), tools)).toBe(false)
    expect(ask(q, call('read', { k0: 1 }), tools)).toBe(true)
  })

  it('never throws, never reads outside the range it is given, and never takes a line past its newline, whatever the bytes', () => {
    // call-like lines with a byte changed or cut short, and arbitrary bytes
    const callLike = fc
      .tuple(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), fc.nat(), fc.integer({ min: -1, max: 255 }), fc.nat())
      .map(([args, at, byte, cut]) => {
        const b = Buffer.from(call('read', args))
        if (byte >= 0) b[at % b.length] = byte
        return b.subarray(0, b.length - (cut % 4))
      })
    const inner = fc.oneof(callLike, fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)))
    const garbage = fc.array(fc.constantFrom(0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a), { maxLength: 8 }).map((a) => Buffer.from(a))
    fc.assert(
      fc.property(inner, garbage, garbage, (line, before, after) => {
        const s = before.length
        const e = s + line.length
        // the same line, between bytes that could only mislead, and between spaces
        const spoilt = Buffer.concat([before, line, after])
        const pristine = Buffer.concat([Buffer.alloc(s, 0x20), line, Buffer.alloc(after.length, 0x20)])
        const q = quietCalls()
        const r = quietCalls()
        expect(q.isQuiet(spoilt, s, e, tools)).toBe(false)
        expect(r.isQuiet(pristine, s, e, tools)).toBe(false)
        q.remember(spoilt)
        r.remember(pristine)
        const known = q.isQuiet(pristine, s, e, tools)
        expect(r.isQuiet(spoilt, s, e, tools)).toBe(known)
        // a line found again from its template ends at the first newline after it,
        // never past one
        const followed = Buffer.concat([spoilt.subarray(0, e), Buffer.from('\n'), after, Buffer.from('\n')])
        const lineEnd = q.quietLineAt(followed, s, followed.length, tools)
        const firstNewline = followed.indexOf(0x0a, s)
        expect(lineEnd === -1 || lineEnd === firstNewline).toBe(true)
        if (known && firstNewline === e) expect(lineEnd).toBe(e)
        // known exactly when the line reads as a call: then a parse of it agrees
        if (known) {
          let msg: unknown
          try {
            msg = JSON.parse(line.toString('utf8'))
          } catch {
            return
          }
          expect(msg).toMatchObject({ method: 'tools/call', params: { name: expect.any(String) as unknown, arguments: expect.any(Object) as unknown } })
        }
      }),
    )
  })
})
