// unknownKeyAuditFetch called as the SDK calls its fetch, with an inner fetch of the test's answering responses it
// writes: which requests are read, where a call's id and arguments come from, and a streamed response read however
// its bytes are cut. The SDK itself drives it in fetch.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { unknownKeyAuditFetch } from '../../src/google/index.js'

const BASE = 'https://generativelanguage.example/v1beta/models/gemini'
const tools = [
  { functionDeclarations: [{ name: 'read', parametersJsonSchema: { type: 'object', properties: { path: {} } } }] },
]
const body = JSON.stringify({ contents: [], tools })
const call = (args: unknown, id?: string) => ({
  functionCall: { name: 'read', args, ...(id === undefined ? {} : { id }) },
})
const reply = (...parts: ReadonlyArray<unknown>) => ({ candidates: [{ content: { role: 'model', parts } }] })

const said = (warnings: ReadonlyArray<UnknownKeyWarning>) =>
  warnings.map((w) => `${w.tool} ${w.id} ${w.unknownKeys.join()}`)

// an audit whose inner fetch answers `answer()` to every request
const audited = (answer: () => Response) => {
  const warnings: Array<UnknownKeyWarning> = []
  const audit = unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w), fetch: () => Promise.resolve(answer()) })
  return { warnings, audit }
}

const json = (u: unknown, status = 200) => new Response(JSON.stringify(u), { status })

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('unknownKeyAuditFetch, which requests it reads', () => {
  it('a generateContent or streamGenerateContent path, whatever its case, the URL given as a string, a URL or a Request', async () => {
    const { warnings, audit } = audited(() => json(reply(call({ path: 'a', ofset: 1 }, 'c'))))
    await audit(`${BASE}:generateContent`, { method: 'POST', body })
    await audit(new URL(`${BASE}:GENERATECONTENT?key=x`), { method: 'POST', body })
    await audit(new Request(`${BASE}:generateContent`, { method: 'POST' }), { method: 'POST', body })
    expect(warnings).toHaveLength(1)
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'ofset', calls: 3, firstId: 'c' }])
  })

  it('not another path, a URL it cannot read, a body that is not a string or not JSON', async () => {
    const { warnings, audit } = audited(() => json(reply(call({ path: 'a', ofset: 1 }, 'c'))))
    for (const url of [`${BASE}:countTokens`, `${BASE}:generateContents`, `${BASE}/generateContent`, 'not a url'])
      await audit(url, { method: 'POST', body })
    await audit(`${BASE}:generateContent`, { method: 'POST', body: new TextEncoder().encode(body) })
    await audit(`${BASE}:generateContent`, { method: 'POST', body: '{"tools": [' })
    await audit(`${BASE}:generateContent`)
    expect(warnings).toEqual([])
    expect(audit.auditedTools()).toEqual([])
  })

  it('does not read a response that failed, nor one to a request that declares nothing', async () => {
    let clones = 0
    const response = { ok: true, clone: () => (clones++, json(reply(call({ x: 1 })))) } as unknown as Response
    const audit = unknownKeyAuditFetch({ onWarn: () => undefined, fetch: () => Promise.resolve(response) })
    const bare = JSON.stringify({ tools: [{ functionDeclarations: [{ name: 'now' }] }, { googleSearch: {} }] })
    expect(await audit(`${BASE}:generateContent`, { method: 'POST', body: bare })).toBe(response)
    expect(clones).toBe(0)
    const { warnings, audit: failing } = audited(() => json(reply(call({ path: 'a', ofset: 1 })), 500))
    await failing(`${BASE}:generateContent`, { method: 'POST', body })
    expect(warnings).toEqual([])
    await audit(`${BASE}:generateContent`, { method: 'POST', body })
    expect(clones).toBe(1)
  })

  it('without a fetch of its own, sends through the global fetch as it is at each request', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audits = [
      unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w) }),
      unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w), fetch: undefined as never }), // as a JavaScript caller may write it
    ]
    for (const [i, audit] of audits.entries()) {
      const response = json(reply(call({ path: 'a', [`k${i}`]: 1 }, `c${i}`)))
      vi.stubGlobal('fetch', () => Promise.resolve(response))
      expect(await audit(`${BASE}:generateContent`, { method: 'POST', body })).toBe(response)
    }
    expect(said(warnings)).toEqual(['read c0 k0', 'read c1 k1'])
  })
})

describe('unknownKeyAuditFetch, a response', () => {
  it('hears each function call of each candidate; a call without an id named by its place among the parts, without args as {}', async () => {
    const { warnings, audit } = audited(() =>
      json({
        candidates: [
          { content: { parts: [{ text: 'x' }, call({ path: 'a', first: 1 }), call({ path: 'a', second: 1 }, '')] } },
          { content: { role: 'model' } },
          { finishReason: 'STOP' },
          { content: { parts: [{ functionCall: { name: 'read' } }, { functionCall: { name: 5, args: { n: 1 } } }] } },
          { content: { parts: [call({ path: 'a', third: 1 }, 'id3')] } },
        ],
      }),
    )
    await audit(`${BASE}:generateContent`, { method: 'POST', body })
    expect(said(warnings)).toEqual(['read part_2 first', 'read  second', 'read id3 third'])
  })

  it('a response without candidates, or whose body is not JSON, is passed on unheard', async () => {
    for (const answer of [() => json({ candidates: 'none' }), () => new Response('not json')]) {
      const { warnings, audit } = audited(answer)
      await audit(`${BASE}:generateContent`, { method: 'POST', body })
      expect(warnings).toEqual([])
    }
  })
})

// a response whose body is `text` cut into pieces at `cuts` (byte offsets)
const streamedBytes = (text: string, cuts: ReadonlyArray<number>): Response => {
  const bytes = new TextEncoder().encode(text)
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let i = 1; i < at.length; i++) {
        await new Promise((r) => setTimeout(r, 0))
        controller.enqueue(bytes.slice(at[i - 1], at[i]))
      }
      controller.close()
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
}

describe('unknownKeyAuditFetch, a streamed response', () => {
  const url = `${BASE}:streamGenerateContent?alt=sse`
  const events = [
    `data: ${JSON.stringify(reply(call({ path: 'a', ofsé: 1 }, 's1')))}\r\n\r\n`,
    'data: not json\n\n',
    `data: ${JSON.stringify(reply(call({ path: 'b', lé: 2 }, 's2')))}`, // the last, with no blank line after it
  ].join('')

  it('hears each chunk’s calls, however the bytes are cut (a character split between two reads included), the last event too', async () => {
    const bytes = new TextEncoder().encode(events).length
    for (const cuts of [[], [12], [27, 28, 29, 30, 31], Array.from({ length: bytes }, (_, i) => i)]) {
      const { warnings, audit } = audited(() => streamedBytes(events, cuts))
      const response = await audit(url, { method: 'POST', body })
      expect(await response.text()).toBe(events)
      await vi.waitFor(() => expect(said(warnings)).toEqual(['read s1 ofsé', 'read s2 lé']))
    }
  })

  it('reads only `data:` lines: a comment, an `event:` or an `id:` line is passed by, though its text would parse as a response', async () => {
    // from the sixth character on, each of these lines is the JSON of a response with a call
    const other = (id: string) => JSON.stringify(reply(call({ path: 'a', [`not_${id}`]: 1 }, id)))
    const stream = [
      `: ping\n:    ${other('comment')}\n\n`,
      `event ${other('event')}\nid:  ${other('id')}\ndata: ${JSON.stringify(reply(call({ path: 'a', ofs: 1 }, 'd1')))}\n\n`,
      `:    ${other('last')}`,
    ].join('')
    const { warnings, audit } = audited(() => streamedBytes(stream, []))
    expect(await (await audit(url, { method: 'POST', body })).text()).toBe(stream)
    await vi.waitFor(() => expect(said(warnings)).toEqual(['read d1 ofs']))
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0))
    expect(said(warnings)).toEqual(['read d1 ofs'])
  })

  it('a streamed response with no body, or one that fails, costs the SDK nothing', async () => {
    const { warnings, audit } = audited(() => new Response(null))
    expect((await audit(url, { method: 'POST', body })).status).toBe(200)
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('the connection went'))
      },
    })
    const { audit: broken } = audited(() => new Response(failing))
    const unhandled: Array<unknown> = []
    const listener = (reason: unknown): void => void unhandled.push(reason)
    process.on('unhandledRejection', listener)
    try {
      await broken(url, { method: 'POST', body })
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0))
    } finally {
      process.off('unhandledRejection', listener)
    }
    expect(unhandled).toEqual([])
    expect(warnings).toEqual([])
  })
})
