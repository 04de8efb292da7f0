/**
 * Serving an MCP server to hosts: over stdio (one host, one session), or over Streamable HTTP, where
 * each host session gets a server, and so a stack (seen-set, grants, question queue), of its own that
 * is discarded when the session ends.
 *
 * @since 0.1.0
 */
import { randomUUID, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { EventStore, StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { describeError } from '../kernel/describe.js'

// -------------------------------------------------------------------------------------
// stdio
// -------------------------------------------------------------------------------------

/**
 * Serves `server` on this process's stdin and stdout; resolves when the host has gone (stdin closed).
 *
 * @since 0.1.0
 * @category serving
 */
export const serveStdio = async (server: Server): Promise<void> => {
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose
    server.onclose = () => {
      previous?.()
      resolve()
    }
  })
  const transport = new StdioServerTransport()
  await server.connect(transport)
  // the SDK's stdio transport does not close itself when the host closes stdin
  process.stdin.once('end', () => void server.close().catch(() => undefined))
  await closed
}

// -------------------------------------------------------------------------------------
// Streamable HTTP
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ServeHttpOptions {
  /** The address to bind. Default `127.0.0.1`: only this machine. */
  readonly host?: string
  /** The port; `0` picks a free one. */
  readonly port: number
  /** The endpoint's path. Default `/mcp`. */
  readonly path?: string
  /** When given, every request must carry `Authorization: Bearer <token>`. */
  readonly token?: string
  /**
   * `Host` header values accepted besides this server's own (`host:port`, `localhost:port`,
   * `127.0.0.1:port`, `[::1]:port`), e.g. the machine's name when it listens beyond loopback. One without
   * a port (`mcp.example`) is accepted as it is and with this server's port.
   */
  readonly allowedHosts?: ReadonlyArray<string>
  /**
   * Origins accepted besides this server's own (`http://` and each accepted Host); a request without
   * `Origin` (a program, not a page) is accepted.
   */
  readonly allowedOrigins?: ReadonlyArray<string>
  /** Milliseconds a session may stay idle before it is closed. Default 1 800 000 (30 minutes). */
  readonly idleMs?: number
  /**
   * The most sessions open at once; an initialize beyond it is answered 503 with `Retry-After`, and no server is
   * made for it. Default 1 000 (a session that listed 28 tools holds about 120 to 140 KB).
   */
  readonly maxSessions?: number
  /**
   * What `GET /readyz` reports: 200 when `ready`, else 503, with the whole object as JSON. Absent: always
   * ready. `GET /healthz` answers 200 while the process serves. Both are answered before the `Host`,
   * `Origin` and token checks (a probe addresses the machine as it can), and say nothing a model wrote.
   */
  readonly readiness?: () => Readiness
  /**
   * What `GET /metrics` answers (e.g. `gatewayMetrics(…).scrape`); absent: 404. Answered after the `Host`,
   * `Origin` and token checks, as `/mcp` is: it names the tools and keys a model sent.
   */
  readonly metrics?: () => Promise<{ readonly contentType: string; readonly body: string }>
}

/**
 * A running HTTP endpoint.
 *
 * @since 0.1.0
 * @category model
 */
export interface HttpServing {
  /** Where hosts connect, e.g. `http://127.0.0.1:8931/mcp`. */
  readonly url: string
  /** How many sessions are open now. */
  readonly sessions: () => number
  /** Closes every session and stops listening. Idempotent. */
  readonly close: () => Promise<void>
}

/**
 * Whether a server is ready to serve, and why, for `GET /readyz`.
 *
 * @since 0.1.0
 * @category model
 */
export interface Readiness {
  readonly ready: boolean
  readonly [detail: string]: unknown
}

/**
 * How long a host waits before it reconnects to a stream that closed (the SSE `retry` of each stream's first,
 * priming event), and how many events of a session are kept for it to resume from (`Last-Event-ID`).
 *
 * @since 0.1.0
 * @category model
 */
export const RESUMPTION = { retryMs: 1_000, maxEvents: 512, maxBytes: 1024 * 1024 } as const

/**
 * A session's events, kept so a host whose stream was cut can reconnect with `Last-Event-ID` and receive what it
 * missed: the last `maxEvents` events, and no more than `maxBytes` of their JSON (the oldest go first; an event
 * larger than `maxBytes` alone is sent but not kept). An id outside the window is unknown (400), so a host that
 * reconnects too late is told, not sent a stream with a gap in it.
 *
 * @example
 * import { boundedEventStore } from 'toolstack/mcp'
 * const store = boundedEventStore({ maxEvents: 2, maxBytes: 1_000 })
 * const ping = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'ping' })
 * const first = await store.storeEvent('s', ping(1))
 * await store.storeEvent('s', ping(2))
 * await store.storeEvent('t', ping(3))
 * assert.strictEqual(await store.getStreamIdForEventId?.(first), undefined)
 * const sent: Array<unknown> = []
 * const second = 's_2'
 * assert.strictEqual(await store.replayEventsAfter(second, { send: async (_, m) => void sent.push(m) }), 's')
 * assert.deepStrictEqual(sent, [])
 *
 * @since 0.1.0
 * @category serving
 */
export const boundedEventStore = (
  bounds: { readonly maxEvents: number; readonly maxBytes: number } = RESUMPTION,
): EventStore => {
  interface Kept {
    readonly id: string
    readonly streamId: string
    readonly message: JSONRPCMessage
    readonly bytes: number
  }
  // oldest first; `first` indexes the oldest kept, so eviction moves no element
  const events: Array<Kept | undefined> = []
  const byId = new Map<string, number>()
  let first = 0
  let bytes = 0
  let seq = 0
  const evict = (): void => {
    const old = events[first]
    if (old === undefined) return
    events[first] = undefined
    first++
    byId.delete(old.id)
    bytes -= old.bytes
    // compacted now and then, so the array does not grow with the session's life
    if (first > 1024 && first * 2 > events.length) {
      events.splice(0, first)
      for (const [id, at] of byId) byId.set(id, at - first)
      first = 0
    }
  }
  return {
    storeEvent: (streamId, message) => {
      const id = `${streamId}_${++seq}`
      const size = JSON.stringify(message).length
      if (size <= bounds.maxBytes) {
        byId.set(id, events.length)
        events.push({ id, streamId, message, bytes: size })
        bytes += size
        while (byId.size > bounds.maxEvents || bytes > bounds.maxBytes) evict()
      }
      return Promise.resolve(id)
    },
    getStreamIdForEventId: (id) => {
      const at = byId.get(id)
      return Promise.resolve(at === undefined ? undefined : events[at]?.streamId)
    },
    replayEventsAfter: async (lastEventId, { send }) => {
      const at = byId.get(lastEventId)
      const from = at === undefined ? undefined : events[at]
      if (at === undefined || from === undefined) throw new Error('no such event: it was never sent, or is too old')
      for (let i = at + 1; i < events.length; i++) {
        const e = events[i]
        // a priming event carries no message
        if (e !== undefined && e.streamId === from.streamId && Object.keys(e.message).length > 0)
          await send(e.id, e.message)
      }
      return from.streamId
    },
  }
}

interface Session {
  readonly server: Server
  readonly transport: StreamableHTTPServerTransport
  lastSeen: number
}

const MAX_BODY = 4 * 1024 * 1024

const refuse = (
  res: ServerResponse,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }))
}

/** A body, parsed; or why not: too large (read to its end, but not kept past MAX_BODY), or not JSON. */
type Body =
  { readonly _tag: 'Json'; readonly value: unknown } | { readonly _tag: 'TooLarge' } | { readonly _tag: 'NotJson' }

// a body past the bound is drained, not cut: cutting the connection would leave the client an ECONNRESET
// instead of the 413 that says why
const readBody = (req: IncomingMessage): Promise<Body> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size <= MAX_BODY) chunks.push(c)
      else chunks.length = 0
    })
    req.on('end', () => {
      if (size > MAX_BODY) return resolve({ _tag: 'TooLarge' })
      try {
        resolve({ _tag: 'Json', value: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
      } catch {
        resolve({ _tag: 'NotJson' })
      }
    })
    req.on('error', reject)
  })

// RFC 7235: the scheme is case-insensitive; RFC 6750: one token68 after it
const bearerOf = (authorization: string | undefined): string | undefined =>
  /^bearer +([^ ]+) *$/i.exec(authorization ?? '')?.[1]

// `name:port` or `[v6]:port`; a bare IPv6 address has colons but no port
const hasPort = (host: string): boolean => (host.startsWith('[') ? /\]:\d+$/ : /^[^:]+:\d+$/).test(host)

// RFC 9112 §3.2: a request with more than one Host header is a 400
const hostHeaders = (req: IncomingMessage): number =>
  req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'host').length

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

// imported when HTTP serving starts, not with the module: a gateway served over stdio (what a host
// starts) then loads less before it starts its upstreams
const httpTransport = () => import('@modelcontextprotocol/sdk/server/streamableHttp.js')

/**
 * Serves over Streamable HTTP, with a server of its own for each session, made by `newServer` (e.g.
 * `() => toMcpServer(session => stack, info)`). Binds `127.0.0.1` by default; refuses a request whose
 * `Host` or `Origin` is not this server's (403, against DNS rebinding; compared without regard to case),
 * one with two `Host` headers (400), one without the bearer token when one is set (401; the scheme in
 * any case), a body over 4 MiB outside a session (413), and an unknown session (404). Idle sessions are
 * closed. With `metrics`, `GET /metrics` answers them, past the same checks. Rejects, with the reason, when
 * the port cannot be bound.
 *
 * @since 0.1.0
 * @category serving
 */
export const serveHttp = async (newServer: () => Server, options: ServeHttpOptions): Promise<HttpServing> => {
  const { StreamableHTTPServerTransport } = await httpTransport()
  const host = options.host ?? '127.0.0.1'
  const path = options.path ?? '/mcp'
  const idleMs = options.idleMs ?? 1_800_000
  const maxSessions = options.maxSessions ?? 1_000
  // initializes being answered now: they count against maxSessions before their id is known
  let opening = 0
  const sessions = new Map<string, Session>()
  const http = createServer()
  let port = options.port

  const ownHosts = (): ReadonlySet<string> => {
    const hostPart = host.includes(':') ? `[${host}]` : host
    // host names are case-insensitive (RFC 9110 §4.2.3): compared lowercased
    return new Set(
      [
        `${hostPart}:${port}`,
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `[::1]:${port}`,
        ...(options.allowedHosts ?? []).flatMap((h) => (hasPort(h) ? [h] : [h, `${h}:${port}`])),
      ].map((h) => h.toLowerCase()),
    )
  }
  const ownOrigins = (): ReadonlySet<string> =>
    new Set([
      ...[...ownHosts()].map((h) => `http://${h}`),
      ...(options.allowedOrigins ?? []).map((o) => o.toLowerCase()),
    ])

  // a session is removed from `sessions` only in its transport's onclose (in `open`), however it ends:
  // here, by a host DELETE (the SDK then closes the transport), or by its server closing itself
  const endSession = (s: Session): void => {
    void s.transport.close().catch(() => undefined)
    void s.server.close().catch(() => undefined)
  }

  const open = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST')
      return refuse(res, 400, 'Bad Request: no session; a session starts with a POST of initialize')
    const read = await readBody(req)
    if (read._tag === 'TooLarge') return refuse(res, 413, 'Payload Too Large: the request body is larger than 4 MiB')
    if (read._tag === 'NotJson') return refuse(res, 400, 'Bad Request: the request body is not JSON')
    const body = read.value
    if (!isInitializeRequest(body)) return refuse(res, 400, 'Bad Request: no session; a session starts with initialize')
    if (sessions.size + opening >= maxSessions) {
      return refuse(res, 503, `Service Unavailable: ${maxSessions} sessions are open, the most this server keeps`, {
        'retry-after': '5',
      })
    }
    opening++
    try {
      await openSession(req, res, body)
    } finally {
      opening--
    }
  }

  const openSession = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const server = newServer()
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // resumable streams: each starts with a priming event (its id, and `retry`), and a host that lost one
      // reconnects with Last-Event-ID and is sent what it missed, within a bounded window
      eventStore: boundedEventStore(),
      retryInterval: RESUMPTION.retryMs,
      onsessioninitialized: (id) => {
        sessions.set(id, { server, transport, lastSeen: Date.now() })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    await server.connect(transport)
    await transport.handleRequest(req, res, body)
  }

  const probe = (req: IncomingMessage, res: ServerResponse, which: string): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return refuse(res, 405, `Method Not Allowed: ${which} answers GET`, { allow: 'GET, HEAD' })
    const readiness: Readiness = which === '/healthz' ? { ready: true } : (options.readiness?.() ?? { ready: true })
    const body = which === '/healthz' ? { status: 'alive' } : readiness
    res.writeHead(readiness.ready ? 200 : 503, { 'content-type': 'application/json' })
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body))
  }

  const scrape = async (
    req: IncomingMessage,
    res: ServerResponse,
    metrics: NonNullable<ServeHttpOptions['metrics']>,
  ) => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return refuse(res, 405, 'Method Not Allowed: /metrics answers GET', { allow: 'GET, HEAD' })
    const { contentType, body } = await metrics()
    res.writeHead(200, { 'content-type': contentType })
    res.end(req.method === 'HEAD' ? undefined : body)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname === '/healthz' || url.pathname === '/readyz') return probe(req, res, url.pathname)
    const metrics = url.pathname === '/metrics' && url.pathname !== path ? options.metrics : undefined
    if (url.pathname !== path && metrics === undefined)
      return refuse(res, 404, `Not Found: the MCP endpoint is ${path}`)
    if (hostHeaders(req) > 1) return refuse(res, 400, 'Bad Request: more than one Host header')
    const hostHeader = req.headers.host ?? ''
    if (!ownHosts().has(hostHeader.toLowerCase()))
      return refuse(res, 403, `Forbidden: Host ${JSON.stringify(hostHeader)} is not this server`)
    const origin = req.headers.origin
    if (origin !== undefined && !ownOrigins().has(origin.toLowerCase()))
      return refuse(res, 403, `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`)
    if (options.token !== undefined && !sameSecret(bearerOf(req.headers.authorization) ?? '', options.token)) {
      return refuse(res, 401, 'Unauthorized: a bearer token is required', { 'www-authenticate': 'Bearer' })
    }
    if (metrics !== undefined) return scrape(req, res, metrics)
    const id = req.headers['mcp-session-id']
    if (typeof id !== 'string') return open(req, res)
    const s = sessions.get(id)
    if (s === undefined)
      return refuse(res, 404, 'Not Found: no such session (it ended or never began); start a new one with initialize')
    s.lastSeen = Date.now()
    await s.transport.handleRequest(req, res)
  }

  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) refuse(res, 500, `Internal error: ${describeError(e)}`)
      else res.end()
    })
  })

  const reaper = setInterval(
    () => {
      const now = Date.now()
      for (const s of sessions.values()) if (now - s.lastSeen > idleMs) endSession(s)
    },
    Math.max(1000, Math.min(60_000, idleMs / 4)),
  )
  reaper.unref()

  let closing: Promise<void> | undefined
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      clearInterval(reaper)
      for (const s of [...sessions.values()]) endSession(s)
      http.closeAllConnections()
      http.close(() => resolve())
    }))

  return new Promise((resolve, reject) => {
    http.once('error', (e: NodeJS.ErrnoException) => {
      clearInterval(reaper)
      reject(
        new Error(
          e.code === 'EADDRINUSE'
            ? `port ${options.port} on ${host} is already in use`
            : `cannot listen on ${host}:${options.port}: ${describeError(e)}`,
        ),
      )
    })
    http.listen(options.port, host, () => {
      // address() is a string only for a pipe; on a host and port it is an AddressInfo
      port = (http.address() as AddressInfo).port
      const shown = host.includes(':') ? `[${host}]` : host
      resolve({ url: `http://${shown}:${port}${path}`, sessions: () => sessions.size, close })
    })
  })
}
