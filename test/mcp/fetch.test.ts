// fetchWithOwnSignal over Node's own fetch and a loopback HTTP server of the test's: the signal a request is given
// holds a listener only while that request is in flight, and aborting it still aborts the request.
import { getEventListeners } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { fetchWithOwnSignal } from '../../src/mcp/index.js'

const servers: Array<{ close: () => void }> = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

const listening = async (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> => {
  const server = createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  servers.push({ close: () => (server.closeAllConnections(), server.close()) })
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`
}

const listeners = (s: AbortSignal): number => getEventListeners(s, 'abort').length

describe('fetchWithOwnSignal', () => {
  it("leaves no listener on the given signal once each body is read: JSON, a stream, an error, no body (Node's fetch alone leaves one per request)", async () => {
    const url = await listening((req, res) => {
      if (req.url === '/json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}')
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-kept': 'yes' })
        res.write('data: 1\n\n')
        return void setTimeout(() => res.end('data: 2\n\n'), 5)
      }
      if (req.url === '/error') return void res.writeHead(404, 'Gone').end('not here')
      res.writeHead(202).end()
    })
    const shared = new AbortController()
    const own = fetchWithOwnSignal()
    const seen: Array<string> = []
    for (let i = 0; i < 10; i++)
      for (const path of ['json', 'stream', 'error', 'none']) {
        const r = await own(`${url}${path}`, { signal: shared.signal })
        seen.push(`${r.status} ${r.headers.get('x-kept') ?? '-'} ${await r.text()}`)
      }
    expect(listeners(shared.signal)).toBe(0)
    // the responses are the server's, status, headers and body
    expect(seen.slice(0, 4)).toEqual(['200 - {"a":1}', '200 yes data: 1\n\ndata: 2\n\n', '404 - not here', '202 - '])

    // the control: the same requests through Node's fetch leave a listener each until they are collected
    const control = new AbortController()
    for (let i = 0; i < 10; i++) await (await fetch(`${url}json`, { signal: control.signal })).text()
    expect(listeners(control.signal)).toBeGreaterThan(0)
  })

  it('aborting the given signal aborts a body being read, and then the listener is gone', async () => {
    const url = await listening((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: first\n\n') // and never ends
    })
    const shared = new AbortController()
    const r = await fetchWithOwnSignal()(url, { signal: shared.signal })
    const reader = (r.body as ReadableStream<Uint8Array>).getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n')
    expect(listeners(shared.signal)).toBe(1)
    shared.abort(new Error('closing'))
    await expect(reader.read()).rejects.toThrow()
    expect(listeners(shared.signal)).toBe(0)
  })

  it('a body cancelled by its reader, or a request that fails, releases the signal too', async () => {
    const url = await listening((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: first\n\n')
    })
    const shared = new AbortController()
    const own = fetchWithOwnSignal()
    const r = await own(url, { signal: shared.signal })
    await (r.body as ReadableStream<Uint8Array>).cancel()
    await new Promise((done) => setTimeout(done, 0))
    expect(listeners(shared.signal)).toBe(0)
    const refused = own('http://127.0.0.1:1/', { signal: shared.signal })
    await expect(refused).rejects.toThrow()
    expect(listeners(shared.signal)).toBe(0)
  })

  it('a request with no signal, or one already aborted, goes to the base fetch as it was given', async () => {
    const given: Array<RequestInit | undefined> = []
    const base = (_url: string | URL, init?: RequestInit) => {
      given.push(init)
      return Promise.resolve(new Response('x'))
    }
    const gone = AbortSignal.abort()
    const init = { signal: gone }
    await fetchWithOwnSignal(base)('http://x/', init)
    await fetchWithOwnSignal(base)('http://x/')
    expect(given[0]).toBe(init)
    expect(given[1]).toBeUndefined()
  })
})

describe('fetchWithOwnSignal, over a base fetch of the test’s', () => {
  it('gives the base the rest of init as it was and a signal of its own, aborted with the given one’s reason', async () => {
    const given: Array<RequestInit | undefined> = []
    let answer = (): Response => new Response('x', { status: 201, statusText: 'Made', headers: { 'x-a': 'b' } })
    const base = (_url: string | URL, init?: RequestInit) => {
      given.push(init)
      return Promise.resolve(answer())
    }
    const shared = new AbortController()
    const headers = { 'x-h': '1' }
    const r = await fetchWithOwnSignal(base)('http://x/', { method: 'POST', headers, signal: shared.signal })
    expect([r.status, r.statusText, r.headers.get('x-a'), await r.text()]).toEqual([201, 'Made', 'b', 'x'])
    const own = given[0]?.signal
    expect(given[0]?.method).toBe('POST')
    expect(given[0]?.headers).toBe(headers)
    expect(own).not.toBe(shared.signal)
    expect(own?.aborted).toBe(false)

    // a request in flight: aborting the given signal aborts the request's own, with the same reason
    answer = () => new Response(new ReadableStream({ start: () => undefined }))
    const pending = await fetchWithOwnSignal(base)('http://x/', { signal: shared.signal })
    const reason = new Error('closing')
    shared.abort(reason)
    expect(given[1]?.signal?.aborted).toBe(true)
    expect(given[1]?.signal?.reason).toBe(reason)
    await pending.body?.cancel()
  })

  it('a response that is not 2xx, or has no body, is the base’s own object, the signal released at once', async () => {
    const shared = new AbortController()
    for (const made of [() => new Response('gone', { status: 404 }), () => new Response(null, { status: 200 })]) {
      const response = made()
      const got = await fetchWithOwnSignal(() => Promise.resolve(response))('http://x/', { signal: shared.signal })
      expect(got).toBe(response)
      expect(listeners(shared.signal)).toBe(0)
    }
  })

  it('a null signal is no signal: the base gets init as it was', async () => {
    const given: Array<RequestInit | undefined> = []
    const init = { signal: null }
    await fetchWithOwnSignal((_url, i) => (given.push(i), Promise.resolve(new Response('x'))))('http://x/', init)
    expect(given[0]).toBe(init)
  })
})
