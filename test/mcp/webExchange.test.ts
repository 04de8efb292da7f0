// webRequestOf and sendWebResponse over a real Node HTTP server on loopback, read by raw sockets and by
// http.request: what the request carries, when the headers leave (with a ready first chunk, or alone at
// once), a slow reader, a reader that goes away, a stream that fails.
import { createHash } from 'node:crypto'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { sendWebResponse, webRequestOf } from '../../src/mcp/webExchange.js'
import { until } from '../support/until.js'

const servers: Array<Server> = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections()
          s.close(() => resolve())
        }),
    ),
  )
})

const listening = async (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> => {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)

/** A body whose chunks the test pushes, and which says when it was cancelled. */
const pushed = () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const state = { cancelled: false }
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c
    },
    cancel: () => {
      state.cancelled = true
    },
  })
  return { body, push: (s: string) => controller.enqueue(bytes(s)), close: () => controller.close(), state }
}

/** The first bytes a raw client reads after sending a GET. */
const firstData = (port: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))
    socket.once('data', (b) => {
      resolve(b.toString('latin1'))
      socket.destroy()
    })
    socket.once('error', reject)
  })

describe('webRequestOf', () => {
  it('carries the method, the path under the given origin, and every header as sent (repeated ones too), not the body', async () => {
    const seen: Array<Request> = []
    const sent: Array<string> = []
    const port = await listening((req, res) => {
      req.resume()
      req.on('end', () => {
        seen.push(webRequestOf(req, 'http://own.example:1234'))
        sent.push(...req.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()))
        res.end()
      })
    })
    await new Promise<void>((resolve, reject) => {
      const r = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/mcp?x=1',
          headers: { 'x-twice': ['a', 'b'], 'content-type': 'application/json' },
        },
        (res) => res.resume().on('end', resolve),
      )
      r.on('error', reject)
      r.end('{"n":1}')
    })
    const got = seen[0] as Request
    expect([got.method, got.url, got.headers.get('x-twice'), got.headers.get('content-type')]).toStrictEqual([
      'POST',
      'http://own.example:1234/mcp?x=1',
      'a, b',
      'application/json',
    ])
    // the names Node parsed, each once: nothing more, nothing less
    expect([...got.headers.keys()]).toStrictEqual([...new Set(sent)].sort())
    // the body is the caller's to read and hand over
    expect(got.body).toBe(null)
  })
})

describe('sendWebResponse', () => {
  it('writes the headers with a first chunk that is ready, together and before any timer turn', async () => {
    const seen: Array<readonly [boolean, number]> = []
    const port = await listening((_req, res) => {
      const { body, push } = pushed()
      push('id: 1\ndata: \n\n')
      const flushed = vi.spyOn(res, 'flushHeaders')
      void sendWebResponse(res, new Response(body, { headers: { 'content-type': 'text/event-stream' } }))
      // after this turn's microtasks, before the next turn's timers
      setImmediate(() => seen.push([flushed.mock.calls.length > 0, res.socket?.bytesWritten ?? 0]))
    })
    const first = await firstData(port)
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(first).toContain('content-type: text/event-stream')
    expect(first.toLowerCase()).not.toContain('set-cookie')
    expect(first).toContain('id: 1\ndata: \n\n')
    await until(() => seen.length === 1)
    const [flushedAlone, written] = seen[0] as readonly [boolean, number]
    expect(flushedAlone).toBe(false)
    expect(written).toBe(first.length)
  })

  it('sends the headers alone, at once, when the first chunk is not ready, then each chunk as it comes', async () => {
    let feed: ReturnType<typeof pushed> | undefined
    const port = await listening((_req, res) => {
      feed = pushed()
      void sendWebResponse(res, new Response(feed.body, { status: 201, headers: { 'x-kind': 'slow' } }))
    })
    const chunks: Array<string> = []
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const r = request({ host: '127.0.0.1', port, path: '/' }, resolve)
      r.on('error', reject)
      r.end()
    })
    // the headers came while the body had nothing yet
    expect([response.statusCode, response.headers['x-kind'], chunks]).toStrictEqual([201, 'slow', []])
    response.on('data', (b: Buffer) => chunks.push(b.toString()))
    const ended = new Promise((resolve) => response.on('end', resolve))
    feed?.push('one')
    await until(() => chunks.join('') === 'one')
    feed?.push('two')
    feed?.close()
    await ended
    expect(chunks.join('')).toBe('onetwo')
  })

  it('keeps a header sent more than once: each Set-Cookie its own line, other repeats joined as fetch joins them', async () => {
    const port = await listening((_req, res) => {
      const headers = new Headers()
      headers.append('set-cookie', 'a=1')
      headers.append('set-cookie', 'b=2')
      headers.append('x-twice', 'p')
      headers.append('x-twice', 'q')
      void sendWebResponse(res, new Response(null, { status: 204, headers }))
    })
    const first = await firstData(port)
    const lines = first.split('\r\n')
    expect(lines.filter((l) => l.toLowerCase().startsWith('set-cookie:'))).toEqual([
      'set-cookie: a=1',
      'set-cookie: b=2',
    ])
    expect(lines).toContain('x-twice: p, q')
  })

  it('ends a response with no body at once', async () => {
    const port = await listening((_req, res) => void sendWebResponse(res, new Response(null, { status: 202 })))
    const first = await firstData(port)
    expect(first).toMatch(/^HTTP\/1\.1 202 Accepted\r\n/)
    expect(first).toMatch(/\r\n\r\n(0\r\n\r\n)?$/)
  })

  it('gives a slow reader the whole body, waiting for it rather than buffering: 32 MiB in 1 MiB chunks', async () => {
    const MiB = 1024 * 1024
    let pulled = 0
    const left: Array<readonly [number, number]> = []
    const port = await listening((_req, res) => {
      const body = new ReadableStream<Uint8Array>(
        {
          pull: (c) => {
            if (pulled === 32) return c.close()
            c.enqueue(new Uint8Array(MiB).fill(pulled % 251))
            pulled++
          },
        },
        { highWaterMark: 0 },
      )
      const closeBefore = res.listenerCount('close')
      // what it leaves on the response once done: every listener of its own taken off
      void sendWebResponse(res, new Response(body)).then(() =>
        left.push([res.listenerCount('close') - closeBefore, res.listenerCount('drain')]),
      )
    })
    const response = await new Promise<IncomingMessage>((resolve) =>
      request({ host: '127.0.0.1', port }, resolve).end(),
    )
    response.pause()
    // the reader takes nothing for a while: the sender stops pulling long before the end
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(pulled).toBeLessThan(16)
    const digest = createHash('sha256')
    let total = 0
    response.on('data', (b: Buffer) => {
      total += b.length
      digest.update(b)
    })
    response.resume()
    await new Promise((resolve) => response.on('end', resolve))
    expect([total, pulled]).toStrictEqual([32 * MiB, 32])
    const expected = createHash('sha256')
    for (let i = 0; i < 32; i++) expected.update(new Uint8Array(MiB).fill(i % 251))
    expect(digest.digest('hex')).toBe(expected.digest('hex'))
    await until(() => left.length === 1)
    expect(left[0]).toStrictEqual([0, 0])
  })

  it('stops waiting for a slow reader that goes away, cancels the body, and leaves no listener behind', async () => {
    let res: ServerResponse | undefined
    let sent: Promise<void> | undefined
    const state = { cancelled: false }
    const port = await listening((_req, r) => {
      res = r
      const body = new ReadableStream<Uint8Array>(
        {
          pull: (c) => c.enqueue(new Uint8Array(1024 * 1024)),
          cancel: () => {
            state.cancelled = true
          },
        },
        { highWaterMark: 0 },
      )
      sent = sendWebResponse(r, new Response(body))
    })
    const client = connect(port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))
    client.pause()
    // the sender waits for the reader
    await until(() => (res?.listenerCount('drain') ?? 0) > 0)
    client.destroy()
    await expect(sent).resolves.toBeUndefined()
    expect([state.cancelled, res?.listenerCount('drain')]).toStrictEqual([true, 0])
  })

  it('cancels the body when the client goes away, and then resolves', async () => {
    let feed: ReturnType<typeof pushed> | undefined
    let sent: Promise<void> | undefined
    const port = await listening((_req, res) => {
      feed = pushed()
      feed.push('id: 1\ndata: \n\n')
      sent = sendWebResponse(res, new Response(feed.body))
    })
    await firstData(port)
    await until(() => feed?.state.cancelled === true)
    await expect(sent).resolves.toBeUndefined()
  })

  it('cancels the body of a response handed over after the client went away', async () => {
    let feed: ReturnType<typeof pushed> | undefined
    let sent: Promise<void> | undefined
    const port = await listening((_req, res) => {
      res.once('close', () => {
        feed = pushed()
        sent = sendWebResponse(res, new Response(feed.body))
      })
    })
    const socket = connect(port, '127.0.0.1', () =>
      socket.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n', () => socket.destroy()),
    )
    await until(() => feed?.state.cancelled === true)
    await expect(sent).resolves.toBeUndefined()
  })

  it('ends the response as it stands when the body fails', async () => {
    const port = await listening((_req, res) => {
      let n = 0
      const body = new ReadableStream<Uint8Array>({
        pull: (c) => (n++ === 0 ? c.enqueue(bytes('partial')) : c.error(new Error('broke'))),
      })
      void sendWebResponse(res, new Response(body))
    })
    const got = await new Promise<string>((resolve, reject) => {
      const r = request({ host: '127.0.0.1', port }, (res) => {
        let text = ''
        res.on('data', (b: Buffer) => (text += b.toString()))
        res.on('end', () => resolve(text))
      })
      r.on('error', reject)
      r.end()
    })
    expect(got).toBe('partial')
  })
})
