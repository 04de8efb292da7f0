// unknownKeyAuditMiddleware called as the client calls it (request, next, ctx), with requests and responses the
// test writes: which calls are heard, where a request's tools are read from, a thread's tools remembered (and
// forgotten past the bound), and a streamed response heard block by block. The client itself drives it in
// middleware.test.ts and runner.test.ts.
import { describe, expect, it, vi } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import type { UnknownKeyAuditMiddleware } from '../../src/anthropic/index.js'
import { unknownKeyAuditMiddleware } from '../../src/anthropic/index.js'

const tools = [{ name: 'read', input_schema: { type: 'object', properties: { path: {} } } }]
const use = (id: unknown, input: unknown = { path: 'a', ofset: 1 }) => ({ type: 'tool_use', id, name: 'read', input })
const message = (id: string, content: ReadonlyArray<unknown> = [use('toolu_1')]) => ({ id, content })

interface Sent {
  readonly body?: unknown
  /** the body as the request's encoded text rather than the SDK's object */
  readonly encoded?: string
  readonly parsed?: unknown
  readonly path?: string
  readonly method?: string
  readonly stream?: boolean
  readonly status?: number
  readonly options?: 'none'
}

const audited = () => {
  const warnings: Array<UnknownKeyWarning> = []
  const mw = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
  let parses = 0
  const send = async (s: Sent): Promise<void> => {
    const response = new Response('{}', { status: s.status ?? 200 })
    const request = {
      url: `https://api.example/${s.path ?? '/v1/messages'}`,
      method: 'POST',
      headers: new Headers(),
      ...(s.encoded === undefined ? {} : { body: s.encoded }),
    }
    const options = { method: s.method ?? 'post', path: s.path ?? '/v1/messages', body: s.body, stream: s.stream }
    const ctx = {
      options: s.options === 'none' ? undefined : options,
      logger: console,
      parse: () => {
        parses++
        return Promise.resolve(s.parsed)
      },
    }
    expect(await mw(request, () => Promise.resolve(response), ctx as never)).toBe(response)
  }
  return { warnings, mw, send, parses: () => parses }
}

const said = (warnings: ReadonlyArray<UnknownKeyWarning>) =>
  warnings.map((w) => `${w.tool} ${w.id} ${w.unknownKeys.join()}`)

describe('unknownKeyAuditMiddleware, which calls it hears', () => {
  it('a POST to /v1/messages, the beta’s ?beta=true too; not count_tokens, another method, or a request without options', async () => {
    const a = audited()
    await a.send({ body: { tools }, parsed: message('m1', [use('t1')]), path: '/v1/messages?beta=true' })
    await a.send({ body: { tools }, parsed: message('m2', [use('t2', { path: 'a', other: 1 })]) })
    await a.send({ body: { tools }, parsed: message('m3', [use('t3', { x: 1 })]), path: '/v1/messages/count_tokens' })
    await a.send({ body: { tools }, parsed: message('m4', [use('t4', { y: 1 })]), method: 'get' })
    await a.send({ body: { tools }, parsed: message('m5', [use('t5', { z: 1 })]), options: 'none' })
    expect(said(a.warnings)).toEqual(['read t1 ofset', 'read t2 other'])
  })

  it('reads the tools from the SDK’s body object, or else from the encoded body; a body it cannot read is not heard', async () => {
    const a = audited()
    await a.send({ encoded: JSON.stringify({ tools }), parsed: message('m1', [use('t1')]) })
    await a.send({ encoded: '{"tools": [', parsed: message('m2', [use('t2', { q: 1 })]) })
    await a.send({ parsed: message('m3', [use('t3', { r: 1 })]) })
    expect(said(a.warnings)).toEqual(['read t1 ofset'])
  })

  it('hears a custom tool whatever its type says (none, null or "custom"); a server or versioned tool is left out', async () => {
    const a = audited()
    const schema = { type: 'object', properties: { path: {} } }
    const typed = [
      { name: 'none', input_schema: schema },
      { type: null, name: 'nil', input_schema: schema },
      { type: 'custom', name: 'custom', input_schema: schema },
      { type: 'bash_20250124', name: 'bash', input_schema: schema },
    ]
    const calls = typed.map((t, i) => ({ type: 'tool_use', id: `t${i}`, name: t.name, input: { path: 'a', k: i } }))
    await a.send({ body: { tools: typed }, parsed: { id: 'm', content: calls } })
    expect(a.mw.auditedTools()).toEqual(['custom', 'nil', 'none'])
    expect(said(a.warnings)).toEqual(['none t0 k', 'nil t1 k', 'custom t2 k'])
  })

  it('a body whose JSON is not an object is not heard, and leaves what the last request listed', async () => {
    const a = audited()
    await a.send({ body: { tools }, parsed: message('m1', []) })
    for (const encoded of ['5', '"text"', 'null', '[]'])
      await a.send({ encoded, parsed: message('m2', [use('t2', { q: 1 })]) })
    expect(a.mw.auditedTools()).toEqual(['read'])
    expect(a.parses()).toBe(1)
    expect(a.warnings).toEqual([])
  })

  it('options it cannot use throw a TypeError naming it', () => {
    expect(() => unknownKeyAuditMiddleware({ onWarn: 5 } as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/^unknownKeyAuditMiddleware: /) }),
    )
  })

  it('does not read a response that failed, or one to a request whose tools declare nothing', async () => {
    const a = audited()
    await a.send({ body: { tools }, parsed: message('m1'), status: 400 })
    await a.send({ body: { tools: [{ name: 'now', input_schema: { type: 'object' } }] }, parsed: message('m2') })
    expect(a.parses()).toBe(0)
    expect(a.warnings).toEqual([])
  })

  it('hears each tool_use block of the message, a block of another kind or without a name passed by, an id that is not a string as ""', async () => {
    const a = audited()
    const content = [
      { type: 'text', text: 'x' },
      { type: 'server_tool_use', id: 's', name: 'read', input: { s: 1 } },
      { type: 'tool_use', id: 'n', name: 7, input: { n: 1 } },
      use(42, { path: 'a', first: 1 }),
      use('t2', { path: 'a', second: 1 }),
    ]
    await a.send({ body: { tools }, parsed: { id: 'm', content } })
    await a.send({ body: { tools }, parsed: { id: 'm', content: 'not a list' } })
    await a.send({ body: { tools }, parsed: 'not a message' })
    expect(said(a.warnings)).toEqual(['read  first', 'read t2 second'])
  })
})

describe('unknownKeyAuditMiddleware, a thread', () => {
  const continuing = (previous: unknown, extra: Record<string, unknown> = {}) => ({
    thread: { type: 'continue', previous_message_id: previous },
    ...extra,
  })

  it('a request that continues a thread without tools is heard against the tools the thread began with, and so on', async () => {
    const a = audited()
    await a.send({ body: { tools, thread: { type: 'new' } }, parsed: message('m1', []) })
    await a.send({ body: { tools: [] }, parsed: message('other', []) })
    expect(a.mw.auditedTools()).toEqual([])
    await a.send({ body: continuing('m1'), parsed: message('m2', [use('t1')]) })
    expect(a.mw.auditedTools()).toEqual(['read'])
    await a.send({ body: continuing('m2'), parsed: message('m3', [use('t2', { path: 'a', later: 1 })]) })
    expect(said(a.warnings)).toEqual(['read t1 ofset', 'read t2 later'])
  })

  it('a response outside a thread, an unknown or non-string id, another thread type: nothing remembered to hear against', async () => {
    const a = audited()
    await a.send({ body: { tools }, parsed: message('plain', []) })
    await a.send({ body: { tools, thread: {} }, parsed: { id: 5, content: [] } })
    await a.send({ body: { tools, thread: {} }, parsed: message('threaded', []) })
    for (const body of [
      continuing('plain'),
      continuing('unknown'),
      continuing(5),
      { thread: { type: 'fork', previous_message_id: 'threaded' } },
      { thread: 'continue' },
    ])
      await a.send({ body, parsed: message('x', [use('t', { k: 1 })]) })
    expect(a.warnings).toEqual([])
  })

  it('a continuing request that sends tools is heard against its own', async () => {
    const a = audited()
    await a.send({ body: { tools, thread: {} }, parsed: message('m1', []) })
    const own = [{ name: 'read', input_schema: { type: 'object', properties: { path: {}, ofset: {} } } }]
    await a.send({
      body: continuing('m1', { tools: own }),
      parsed: message('m2', [use('t1', { path: 'a', ofset: 1 })]),
    })
    expect(a.warnings).toEqual([])
  })

  it('remembers the most recent 1,024 threads, a thread heard again counting as recent', async () => {
    const a = audited()
    const start = (id: string) => a.send({ body: { tools, thread: {} }, parsed: message(id, []) })
    await start('m0')
    await start('m1')
    for (let i = 2; i < 1_024; i++) await start(`m${i}`)
    await start('m0') // again: now the most recent
    await start('m1024') // the 1,025th: m1 goes
    // (each continuation heard is a thread of its own, remembered in turn: the oldest after m1 go next)
    for (const [i, previous] of ['m1', 'm2', 'm0', 'm1024'].entries())
      await a.send({ body: continuing(previous), parsed: message(`c${i}`, [use(`t${i}`, { [`k${i}`]: 1 })]) })
    expect(said(a.warnings)).toEqual(['read t1 k1', 'read t2 k2', 'read t3 k3'])
  })
})

describe('unknownKeyAuditMiddleware, a thread’s bound', () => {
  it('a response whose id is not a string takes no place among the 1,024 threads remembered', async () => {
    const a = audited()
    await a.send({ body: { tools, thread: {} }, parsed: message('m0', []) })
    for (let i = 0; i < 1_024; i++) await a.send({ body: { tools, thread: {} }, parsed: { id: i, content: [] } })
    await a.send({
      body: { thread: { type: 'continue', previous_message_id: 'm0' } },
      parsed: message('c', [use('t')]),
    })
    expect(said(a.warnings)).toEqual(['read t ofset'])
  })
})

// the events of a streamed message, as the SDK's parse hands them over
async function* events(list: ReadonlyArray<unknown>): AsyncGenerator<unknown> {
  for (const e of list) {
    await Promise.resolve()
    yield e
  }
}

describe('unknownKeyAuditMiddleware, a streamed response', () => {
  const streamed = (list: ReadonlyArray<unknown>): Sent => ({
    body: { tools, thread: {} },
    stream: true,
    parsed: events(list),
  })

  it('hears each tool_use block at its stop, its input the JSON its deltas built; other blocks (a server tool’s too) and stray events passed by', async () => {
    const a = audited()
    await a.send(
      streamed([
        null,
        { type: 'message_start', message: { id: 'ms' } },
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 't0', name: 'read', input: {} },
        },
        { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"path":"a",' } },
        { type: 'content_block_checkpoint', index: 0 }, // a kind of event it does not know: the block goes on
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'hello' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', partial_json: '"wrong":1,' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 7 } },
        { type: 'content_block_delta', index: 0, delta: 'x' },
        { type: 'content_block_delta', index: 9, delta: { type: 'input_json_delta', partial_json: '{"z":1}' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"ofset":1}' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 5,
          content_block: { type: 'server_tool_use', id: 's5', name: 'read', input: { server: 1 } },
        },
        { type: 'content_block_stop', index: 5 },
        { type: 'content_block_start', index: 6, content_block: null },
        { type: 'content_block_stop', index: 6 },
        {
          type: 'content_block_start',
          index: 2,
          content_block: { type: 'tool_use', id: 't2', name: 'read', input: { whole: 1 } },
        },
        { type: 'content_block_stop', index: 2 },
        {
          type: 'content_block_start',
          index: 3,
          content_block: { type: 'tool_use', id: 't3', name: 3, input: { n: 1 } },
        },
        { type: 'content_block_stop', index: 3 },
        { type: 'content_block_start', index: 4, content_block: 'x' },
        { type: 'content_block_stop', index: 4 },
      ]),
    )
    await vi.waitFor(() => expect(said(a.warnings)).toEqual(['read t0 ofset', 'read t2 whole']))
    // the stream's message id was remembered for its thread
    await a.send({
      body: { thread: { type: 'continue', previous_message_id: 'ms' } },
      parsed: message('n', [use('t', { more: 1 })]),
    })
    expect(said(a.warnings)).toEqual(['read t0 ofset', 'read t2 whole', 'read t more'])
  })

  it('a stream that fails, or a parse that is not a stream, costs the host nothing', async () => {
    const a = audited()
    async function* failing(): AsyncGenerator<unknown> {
      await Promise.resolve()
      yield { type: 'message_start', message: { id: 'f' } }
      throw new Error('the connection went')
    }
    const unhandled: Array<unknown> = []
    const listener = (reason: unknown): void => void unhandled.push(reason)
    process.on('unhandledRejection', listener)
    try {
      await a.send({ body: { tools }, stream: true, parsed: failing() })
      await a.send({ body: { tools }, stream: true, parsed: message('m', [use('t')]) })
      await a.send({ body: { tools }, stream: true, parsed: { [Symbol.asyncIterator]: 1 } })
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0))
    } finally {
      process.off('unhandledRejection', listener)
    }
    expect(unhandled).toEqual([])
    expect(a.warnings).toEqual([])
  })
})

describe('unknownKeyAuditMiddleware, what it exposes', () => {
  it('auditedTools and stats are the session’s', async () => {
    const a: { mw: UnknownKeyAuditMiddleware; send: (s: Sent) => Promise<void> } = audited()
    await a.send({ body: { tools }, parsed: message('m', [use('t1'), use('t2')]) })
    expect(a.mw.auditedTools()).toEqual(['read'])
    expect(a.mw.stats()).toEqual([{ tool: 'read', key: 'ofset', calls: 2, firstId: 't1' }])
  })
})
