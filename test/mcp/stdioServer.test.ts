// The stdio server transport, over stand-in streams and a small bound: what each kind of line is answered, the id
// read from a line too long to keep (only where it can be read without the rest), blank lines and CRLF, closing
// when the input ends; and, as a property, that how the input is cut into chunks changes nothing.
import { PassThrough, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { decodeLine, stdioServerTransport } from '../../src/mcp/stdioServer.js'

const MAX = 64

/** A stand-in stdin and stdout, what is written to the stdout kept: synchronously, so it is there at once. */
const streams = () => {
  const input = new PassThrough()
  let written = ''
  const output = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      written += chunk.toString('utf8')
      done()
    },
  })
  return { input, output, written: () => written }
}

/** A transport over a stand-in stdin and stdout; what it hands on, reports and answers is kept. */
const harness = async (maxBytes = MAX) => {
  const { input, output, written: writtenNow } = streams()
  const transport = stdioServerTransport(input, output, maxBytes)
  const messages: Array<JSONRPCMessage> = []
  const errors: Array<string> = []
  let closes = 0
  transport.onmessage = (m) => void messages.push(m)
  transport.onerror = (e) => void errors.push(e.message)
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => {
      closes++
      resolve()
    }
  })
  await transport.start()
  const answers = (): Array<unknown> =>
    writtenNow()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown)
  /** Writes the chunks, ends the input, and resolves once the transport has read everything and closed. */
  const feed = async (...chunks: ReadonlyArray<string | Buffer>): Promise<void> => {
    for (const c of chunks) input.write(c)
    input.end()
    await closed
  }
  return { input, transport, messages, errors, answers, feed, closes: () => closes }
}

const refused = (id: unknown, code = -32600) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message: expect.any(String) as string },
})

type Place = 'first' | 'last' | 'middle'

// a request padded with `pad`: its id first (after jsonrpc), last (the SDK client's order) or in the middle
const shaped = (at: Place, id: unknown, pad: string): string =>
  at === 'first'
    ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"m","params":{"p":"${pad}"}}`
    : at === 'last'
      ? `{"method":"m","params":{"p":"${pad}"},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
      : `{"method":"m","id":${JSON.stringify(id)},"params":{"p":"${pad}"},"jsonrpc":"2.0"}`

/** A line of exactly `bytes` bytes. */
const lineOf = (bytes: number, id: unknown, at: Place): string => {
  const line = shaped(at, id, 'z'.repeat(Math.max(0, bytes - Buffer.byteLength(shaped(at, id, '')))))
  expect(Buffer.byteLength(line)).toBe(bytes)
  return line
}

describe('stdioServerTransport: a line over the bound', () => {
  it('a line of exactly the bound is served; one byte more is skipped and answered -32600 under its id, read from its start or its end', async () => {
    const h = await harness()
    await h.feed(
      `${lineOf(MAX, 1, 'first')}\n`,
      `${lineOf(MAX + 1, 2, 'first')}\n`,
      `${lineOf(MAX + 1, 'three', 'last')}\n`,
      `${lineOf(MAX * 3, 4, 'middle')}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' })}\n`,
    )
    expect(h.messages.map((m) => ('id' in m ? m.id : undefined))).toStrictEqual([1, 5])
    expect(h.answers()).toStrictEqual([refused(2), refused('three'), refused(null)])
    expect(h.errors).toHaveLength(3)
    expect(h.errors[0]).toBe(
      `a line of ${MAX + 1} bytes, over the ${MAX} a message may take, was skipped: answered -32600 ` +
        `(Invalid Request: a message is at most ${MAX} bytes), id 2`,
    )
  })

  it('reads an id only where it is the line’s own and the line a request: not a nested one, one in a string, a response’s', async () => {
    const h = await harness()
    const pad = 'z'.repeat(MAX)
    await h.feed(
      // the last member of a nested object
      `{"jsonrpc":"2.0","method":"m","params":{"p":"${pad}","id":7}}\n`,
      // an escaped "id" inside a string that ends the line
      `{"jsonrpc":"2.0","method":"m","params":{"p":"${pad}"},"s":",\\"id\\":8}"}\n`,
      // the first member of a nested object at the start
      `{"params":{"id":9,"p":"${pad}"},"jsonrpc":"2.0","method":"m"}\n`,
      // a fractional id, and an id that is not a string or a number
      `{"jsonrpc":"2.0","id":1.5,"method":"m","params":{"p":"${pad}"}}\n`,
      `{"jsonrpc":"2.0","id":null,"method":"m","params":{"p":"${pad}"}}\n`,
      // a response (its id is one of the server's requests), in either order
      `{"jsonrpc":"2.0","id":10,"result":{"p":"${pad}"}}\n`,
      `{"result":{"p":"${pad}"},"jsonrpc":"2.0","id":11}\n`,
      // an id first but no method after it; a method first but no id last
      `{"jsonrpc":"2.0","id":12,"params":{"p":"${pad}"},"method":"m"}\n`,
      `{"method":"m","id":13,"params":{"p":"${pad}"}}\n`,
    )
    expect(h.answers()).toStrictEqual(Array.from({ length: 9 }, () => refused(null)))
  })

  it('keeps no more than the bound of a line whatever its length, and serves the line after it', async () => {
    const h = await harness(1024)
    const chunk = Buffer.alloc(64 * 1024, 'z')
    const chunks: Array<Buffer | string> = ['{"jsonrpc":"2.0","id":"long","method":"m","params":{"p":"']
    for (let i = 0; i < 256; i++) chunks.push(chunk)
    chunks.push('"}}\n{"jsonrpc":"2.0","id":"next","method":"ping"}\n')
    await h.feed(...chunks)
    expect(h.answers()).toStrictEqual([refused('long')])
    expect(h.messages).toStrictEqual([{ jsonrpc: '2.0', id: 'next', method: 'ping' }])
  })
})

describe('stdioServerTransport: lines that are not JSON-RPC 2.0', () => {
  it('answers each, under its id when it has a valid one and is not a response; a batch member by member', async () => {
    const h = await harness(1024)
    const lines = [
      '{not json',
      '{"jsonrpc":"2.0","id":2.5,"method":"m"}',
      '{"jsonrpc":"1.0","id":3,"method":"m"}',
      '{"jsonrpc":"2.0","id":"s","method":42}',
      '{"jsonrpc":"2.0","id":13,"result":"not an object"}',
      '[{"jsonrpc":"2.0","id":4,"method":"m"},{"id":5,"method":"m"}]',
      '[]',
      JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'm' }))),
      '"just a string"',
    ]
    await h.feed(lines.map((l) => `${l}\n`).join(''))
    expect(h.answers()).toStrictEqual([
      refused(null, -32700),
      refused(null),
      refused(3),
      refused('s'),
      refused(null),
      refused(5),
      refused(null),
      refused(null),
      refused(null),
    ])
    expect(h.messages).toStrictEqual([{ jsonrpc: '2.0', id: 4, method: 'm' }])
    // one report a line
    expect(h.errors).toHaveLength(lines.length)
  })

  it('hands on what is a message: a host’s error response, a notification, a request; a blank line is passed over; CRLF is read', async () => {
    const h = await harness(1024)
    const messages: ReadonlyArray<JSONRPCMessage> = [
      { jsonrpc: '2.0', id: 5, error: { code: -1, message: 'declined' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 6, method: 'ping' },
    ]
    await h.feed(`\n  \r\n${messages.map((m) => JSON.stringify(m)).join('\r\n')}\r\n\n`)
    expect(h.messages).toStrictEqual(messages)
    expect([h.answers(), h.errors]).toStrictEqual([[], []])
  })

  it('decodeLine: the words it reports quote a line that is not JSON cut, never whole', () => {
    const decoded = decodeLine(`{${'x'.repeat(10_000)}`)
    expect(decoded.refusals).toStrictEqual([refused(null, -32700)])
    expect((decoded.why ?? '').length).toBeLessThan(300)
  })
})

describe('stdioServerTransport: its life', () => {
  it('closes itself once when the input ends; close again does nothing; a second start is refused', async () => {
    const h = await harness()
    await expect(h.transport.start()).rejects.toThrow('started already')
    await h.feed()
    await h.transport.close()
    expect(h.closes()).toBe(1)
    expect(h.input.listenerCount('data')).toBe(0)
  })
})

describe('stdioServerTransport: chunks', () => {
  const line = fc.oneof(
    fc.constantFrom(
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{not json',
      '{"jsonrpc":"1.0","id":"é","method":"m"}',
      '[{"jsonrpc":"2.0","id":2,"method":"m"},{"id":3}]',
      '',
      '\r',
    ),
    // around the bound, padded with a character of two bytes, so a chunk may end inside one
    fc
      .tuple(
        fc.constantFrom<Place>('first', 'last', 'middle'),
        fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
        fc.integer({ min: 0, max: MAX }),
      )
      .map(([at, id, pad]) => shaped(at, id, 'é'.repeat(pad))),
  )

  it('however the input is cut into chunks (a character of UTF-8 split included), the same is handed on, answered and reported', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), async (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''))
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
        const chunks = [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length))
        const whole = await harness()
        await whole.feed(bytes)
        const cut = await harness()
        await cut.feed(...chunks.filter((c) => c.length > 0))
        expect([cut.messages, cut.answers(), cut.errors]).toStrictEqual([whole.messages, whole.answers(), whole.errors])
      }),
    )
  })
})

describe('decodeLine: the words of each answer, and which id it goes under', () => {
  const invalid = 'Invalid Request: not a valid JSON-RPC 2.0 message'
  const answer = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } })

  it('says what the line was, how it was answered and under which ids, in the words a host reads', () => {
    expect(decodeLine('{not json')).toStrictEqual({
      messages: [],
      refusals: [answer(null, -32700, 'Parse error: Invalid JSON')],
      why: 'a line that is not JSON ("{not json"): answered -32700 (Parse error: Invalid JSON), id null',
    })
    const batchBound = 'Invalid Request: a batch holds from 1 to 100 messages'
    expect(decodeLine('[]')).toStrictEqual({
      messages: [],
      refusals: [answer(null, -32600, batchBound)],
      why: `a batch of 0 messages: answered -32600 (${batchBound}), id null`,
    })
    expect(decodeLine('{"jsonrpc":"1.0","id":3,"method":"m"}')).toStrictEqual({
      messages: [],
      refusals: [answer(3, -32600, invalid)],
      why: `a message that is not JSON-RPC 2.0: answered -32600 (${invalid}), id 3`,
    })
    expect(decodeLine('[{"id":5},{"jsonrpc":"2.0","id":1,"method":"m"},{"id":"six"}]')).toStrictEqual({
      messages: [{ jsonrpc: '2.0', id: 1, method: 'm' }],
      refusals: [answer(5, -32600, invalid), answer('six', -32600, invalid)],
      why: `a batch of 3 messages, 2 of them not JSON-RPC 2.0: answered -32600 (${invalid}), id 5, "six"`,
    })
  })

  it('serves a batch of exactly 100 messages, and refuses one of 101', () => {
    const batch = (n: number) =>
      JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'm' })))
    expect(decodeLine(batch(100))).toMatchObject({ refusals: [], why: undefined })
    expect(decodeLine(batch(100)).messages).toHaveLength(100)
    expect(decodeLine(batch(101)).messages).toHaveLength(0)
  })

  it.each([
    ['null', null],
    ['7', null],
    ['[[1]]', null],
    // a response's id is in the server's numbering: never answered under it
    ['{"jsonrpc":"2.0","id":14,"error":"not an object"}', null],
    ['{"jsonrpc":"2.0","id":15,"result":"not an object"}', null],
    // a method makes it no response, whatever else it holds; no method, no result and no error: no response either
    ['{"jsonrpc":"2.0","id":16,"method":42,"result":1}', 16],
    ['{"jsonrpc":"2.0","id":17,"method":42,"error":1}', 17],
    ['{"jsonrpc":"2.0","id":18,"resul":1}', 18],
  ])('answers %s under id %j', (line, id) => {
    expect(decodeLine(line).refusals.map((r) => r.id)).toStrictEqual([id])
  })
})

describe('stdioServerTransport: what it sends, and its input', () => {
  it('sends a message as one line of JSON', async () => {
    const { input, output, written } = streams()
    const t = stdioServerTransport(input, output, MAX)
    await t.start()
    await t.send({ jsonrpc: '2.0', id: 1, result: {} })
    expect(written()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n')
  })

  it('reads an input that gives text rather than bytes (setEncoding)', async () => {
    const { input, output } = streams()
    input.setEncoding('utf8')
    const t = stdioServerTransport(input, output, MAX)
    const got: Array<JSONRPCMessage> = []
    t.onmessage = (m) => void got.push(m)
    await t.start()
    input.write('{"jsonrpc":"2.0","id":"é","method":"ping"}\n')
    await new Promise((r) => setImmediate(r))
    expect(got).toStrictEqual([{ jsonrpc: '2.0', id: 'é', method: 'ping' }])
  })

  it("reports its input's error; once closed, holds no listener of its own and pauses an input no one else reads", async () => {
    const { input, output } = streams()
    const t = stdioServerTransport(input, output, MAX)
    const errors: Array<string> = []
    t.onerror = (e) => void errors.push(e.message)
    await t.start()
    input.emit('error', new Error('the pipe broke'))
    expect(errors).toStrictEqual(['the pipe broke'])
    await t.close()
    expect(['data', 'error', 'end'].map((e) => input.listenerCount(e))).toStrictEqual([0, 0, 0])
    expect(input.isPaused()).toBe(true)
    // another reader of the same input keeps it flowing
    const shared = streams()
    const other = stdioServerTransport(shared.input, shared.output, MAX)
    await other.start()
    shared.input.on('data', () => undefined)
    await other.close()
    expect(shared.input.isPaused()).toBe(false)
  })

  it('needs no handler: a message, a refused line and the end of its input with none set', async () => {
    const { input, output, written } = streams()
    const t = stdioServerTransport(input, output, MAX)
    await t.start()
    input.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{not json\n')
    await new Promise((r) => input.once('end', r))
    await new Promise((r) => setImmediate(r))
    expect(written()).toContain('-32700')
  })
})

describe('stdioServerTransport: a handler that throws, a slow host, ids it cannot read', () => {
  it("reports a message handler's throw and hands on the next message", async () => {
    const h = await harness(1024)
    let first = true
    h.transport.onmessage = (m) => {
      if (first) {
        first = false
        throw new Error('the handler broke')
      }
      h.messages.push(m)
    }
    await h.feed('{"jsonrpc":"2.0","id":1,"method":"a"}\n{"jsonrpc":"2.0","id":2,"method":"b"}\n')
    expect(h.errors).toStrictEqual(['the handler broke'])
    expect(h.messages).toStrictEqual([{ jsonrpc: '2.0', id: 2, method: 'b' }])
  })

  it('waits for a host that reads slowly: a send resolves once its line is taken', async () => {
    const taken: Array<string> = []
    const output = new Writable({
      highWaterMark: 1,
      write: (chunk: Buffer, _encoding, done) => {
        setTimeout(() => {
          taken.push(chunk.toString('utf8'))
          done()
        }, 20)
      },
    })
    const t = stdioServerTransport(new PassThrough(), output, MAX)
    await t.start()
    await t.send({ jsonrpc: '2.0', id: 1, result: {} })
    expect(taken).toStrictEqual(['{"jsonrpc":"2.0","id":1,"result":{}}\n'])
  }, 5_000)

  it('answers a line over the bound under id null when its id is cut by the bytes kept, or is no JSON', async () => {
    const h = await harness()
    await h.feed(
      // the id's string runs past the first 256 bytes kept
      `${shaped('first', 'x'.repeat(300), 'pad')}\n`,
      // an escape JSON has not
      `{"jsonrpc":"2.0","id":"\\q","method":"m","params":{"p":"${'z'.repeat(100)}"}}\n`,
    )
    expect(h.answers()).toStrictEqual([refused(null), refused(null)])
  })
})
