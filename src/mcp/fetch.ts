/**
 * A `fetch` for the SDK's Streamable HTTP client that gives each request an `AbortSignal` of its own.
 *
 * The SDK passes its transport's one signal to every request, and Node's `fetch` adds an `abort` listener to the
 * signal it is given that goes only when the request is garbage-collected: a gateway calling an HTTP upstream warns
 * `MaxListenersExceededWarning` after about 1,500 calls, once per call from then on, and holds a listener per
 * call until a collection (measured with the SDK's own server too). Here the transport's signal holds one listener
 * per request in flight, removed when the response's body ends, fails or is cancelled.
 *
 * @since 0.1.0
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'

/**
 * Wraps `base` (the global `fetch` by default) so that the signal a request is given holds a listener only while
 * the request is in flight: each request gets a signal of its own, aborted with the given one. A response that is
 * not 2xx or has no body releases it at once (the SDK reads such a body whole, or not at all); a 2xx body is passed
 * through a stream that releases it when the body ends, fails or is cancelled (its status and headers are the
 * same).
 *
 * @example
 * import { createServer } from 'node:http'
 * import { getEventListeners } from 'node:events'
 * import { fetchWithOwnSignal } from 'toolstack/mcp'
 * const server = createServer((_req, res) => res.end('ok'))
 * await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
 * const { port } = server.address() as { port: number }
 * const shared = new AbortController()
 * const fetchOwn = fetchWithOwnSignal()
 * for (let i = 0; i < 20; i++) await (await fetchOwn(`http://127.0.0.1:${port}/`, { signal: shared.signal })).text()
 * assert.strictEqual(getEventListeners(shared.signal, 'abort').length, 0)
 * server.close()
 *
 * @since 0.1.0
 * @category constructors
 */
export const fetchWithOwnSignal =
  (base: FetchLike = fetch): FetchLike =>
  async (url, init) => {
    const given = init?.signal
    if (given === undefined || given === null || given.aborted) return base(url, init)
    const own = new AbortController()
    const onAbort = (): void => own.abort(given.reason)
    given.addEventListener('abort', onAbort, { once: true })
    const release = (): void => given.removeEventListener('abort', onAbort)
    let response: Response
    try {
      response = await base(url, { ...init, signal: own.signal })
    } catch (e) {
      release()
      throw e
    }
    if (!response.ok || response.body === null) {
      release()
      return response
    }
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    // the pipe settles when the body ends, fails (an abort included) or the reader cancels it
    void response.body.pipeTo(writable).then(release, release)
    return new Response(readable, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
