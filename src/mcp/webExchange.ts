/**
 * Node's HTTP request and response, as the SDK's web-standard Streamable HTTP transport takes and gives them
 * (`Request`, `Response`). The SDK's own Node transport does this through `@hono/node-server`, which holds a
 * streamed answer whose first event is ready (a resumable stream's priming event) for one timer turn, about a
 * millisecond, before it writes anything: most of what a call through the gateway took beyond its peers (the
 * latency figure of docs/performance.md). Here nothing waits: what the stream has is written as it comes.
 *
 * @since 0.1.0
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The web `Request` of a Node request, without its body (read, and handed to the SDK parsed, by the caller).
 * `origin` is the server's own (its Host, once checked). Throws a `TypeError` when a header cannot be carried.
 *
 * @since 0.1.0
 * @category constructors
 */
export const webRequestOf = (req: IncomingMessage, origin: string): Request => {
  const headers = new Headers()
  // rawHeaders: each header as sent, repeated ones included, as name, value, name, value, …
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string)
  // a server's request always has its method and URL (IncomingMessage types them for a client's too)
  return new Request(new URL(req.url as string, origin), { method: req.method as string, headers })
}

// -------------------------------------------------------------------------------------
// destructors
// -------------------------------------------------------------------------------------

const NOT_YET: unique symbol = Symbol('not yet')

// a read that has its chunk already (queued before the response was handed over) settles within two turns
// of the microtask queue; one that waits for the upstream does not
const readNow = <T>(pending: Promise<T>): Promise<T | typeof NOT_YET> =>
  Promise.race([pending, Promise.resolve().then((): typeof NOT_YET => NOT_YET)])

// until the client took what was written, or went away: a slow reader holds at most the socket's buffer
const drained = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.once('drain', done)
    res.once('close', done)
  })

/**
 * Writes `response` to `res`: its status and headers, then its body as it comes. The headers go out with the
 * first chunk when that chunk is ready now, and alone, at once, when it is not (so a host learns the stream
 * is open while it waits). When the client goes away, the body is cancelled. Resolves when the body ended or
 * was cancelled; never rejects.
 *
 * @since 0.1.0
 * @category destructors
 */
export const sendWebResponse = async (res: ServerResponse, response: Response): Promise<void> => {
  const headers: Record<string, string | Array<string>> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  // fetch joins a repeated header into one value but Set-Cookie, which it names once per value: each kept (none
  // written for an empty list)
  headers['set-cookie'] = response.headers.getSetCookie()
  res.writeHead(response.status, headers)
  if (response.body === null) return void res.end()
  const reader = response.body.getReader()
  const cancel = (): void => void reader.cancel().catch(() => undefined)
  res.once('close', cancel)
  // a client gone before the response was handed over: its close has been and gone
  if (res.destroyed) cancel()
  try {
    const pending = reader.read()
    if ((await readNow(pending)) === NOT_YET) res.flushHeaders()
    let next = await pending
    while (!next.done) {
      if (!res.write(next.value) && !res.destroyed) await drained(res)
      next = await reader.read()
    }
    res.end()
  } catch {
    // the stream failed: the answer ends as it stands, rather than staying open
    res.end()
  } finally {
    res.off('close', cancel)
  }
}
