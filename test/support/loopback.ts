// A loopback HTTP server standing in for a hosted model API: an SDK's own client is pointed at it (`baseURL`,
// `httpOptions.baseUrl`, `ANTHROPIC_BASE_URL`), so the SDK's real request and response code runs, and it answers
// each request with the next recorded response shape of the test's script. Every request is kept, its body parsed.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  readonly method: string
  /** The path with its query, as the SDK sent it. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: unknown
}

/** One server-sent event: `event:` when named, `data:` its JSON. */
export interface Event {
  readonly event?: string
  readonly data: unknown
}

export type Answer =
  | { readonly json: unknown; readonly status?: number }
  | { readonly sse: ReadonlyArray<Event>; readonly separator?: '\n\n' | '\r\n\r\n' }

export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly received: ReadonlyArray<Received>
  readonly close: () => Promise<void>
}

/**
 * Starts a server on 127.0.0.1 and a free port; `answer` gives the response to each request (the requests so
 * far included). An answer that throws is a 500 whose body names the problem, so a test sees it.
 */
export const loopback = async (answer: (request: Received, index: number) => Answer): Promise<Loopback> => {
  const received: Array<Received> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = text === '' ? undefined : (JSON.parse(text) as unknown)
      } catch {
        // kept as text
      }
      const request: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      received.push(request)
      let a: Answer
      try {
        a = answer(request, received.length - 1)
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { type: 'test_script', message: String(e) } }))
        return
      }
      if ('json' in a) {
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(a.json))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const sep = a.separator ?? '\n\n'
      for (const e of a.sse)
        res.write(`${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${JSON.stringify(e.data)}${sep}`)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A script that answers each request with the next of `answers`, and fails the request once they run out. */
export const inTurn =
  (answers: ReadonlyArray<Answer>) =>
  (_: Received, index: number): Answer => {
    const a = answers[index]
    if (a === undefined) throw new Error(`no recorded answer for request ${index + 1}`)
    return a
  }
