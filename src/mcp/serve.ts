/**
 * Serving an MCP server to hosts: over stdio (one host, one session), or over Streamable HTTP, where
 * each host session gets a server, and so a stack (seen-set, grants, question queue), of its own that
 * is discarded when the session ends.
 *
 * One file: over 500 lines because every request over HTTP passes the same checks in one order (connections,
 * headers' deadline, Host, Origin, token, body size, session), whichever route it takes; split, a route could
 * miss one.
 *
 * @since 0.1.0
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type {
  EventStore,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { describeError, showText } from '../kernel/describe.js'
import { stdioServerTransport } from './stdioServer.js'
import { sendWebResponse, webRequestOf } from './webExchange.js'

// -------------------------------------------------------------------------------------
// stdio
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ServeStdioOptions {
  /**
   * Told what went wrong on the connection, in one line, escaped (control characters as `\uXXXX`) and cut at
   * 1,000 characters: a line from the host that could not be served (and how it was answered), or an error the
   * server reports. Default: written to this process's stderr. A throw is ignored.
   */
  readonly onNotice?: (message: string) => void
}

// what the host or a server wrote reaches a notice escaped, and cut here
const MAX_NOTICE = 1000

/** `text` as one line a terminal shows as it is: cut first (it may be megabytes), then escaped, then bounded. */
const noticeText = (text: string): string => {
  const shown = showText(text.slice(0, MAX_NOTICE), MAX_NOTICE)
  return shown.cut > 0 || text.length > MAX_NOTICE ? `${shown.text}…` : shown.text
}

const toStderr = (message: string): void => void process.stderr.write(`${message}\n`)

/**
 * Serves `server` on this process's stdin and stdout; resolves when the host has gone (stdin closed). A line over
 * 10 MiB is skipped, not the connection; every line that cannot be served (over the bound, not JSON, not a
 * JSON-RPC 2.0 message) is answered with a JSON-RPC error, under its id when it can be read, and told to
 * `onNotice`; the next line is served.
 *
 * @since 0.1.0
 * @category serving
 */
export const serveStdio = async (server: Server, options: ServeStdioOptions = {}): Promise<void> => {
  const notice = options.onNotice ?? toStderr
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose
    server.onclose = () => {
      previous?.()
      resolve()
    }
  })
  const previousError = server.onerror
  server.onerror = (e) => {
    previousError?.(e)
    try {
      notice(noticeText(describeError(e)))
    } catch {
      // a notice that cannot be told changes nothing
    }
  }
  // closes itself when the host closes stdin
  await server.connect(stdioServerTransport(process.stdin, process.stdout))
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
  /**
   * The most connections open at once; one more is closed as soon as it is accepted, so that a client holding
   * connections open cannot take every file the process may open (its upstreams' pipes, its log, its store). Default
   * `defaultMaxConnections()`, sized to the process's limit on open files.
   */
  readonly maxConnections?: number
  /**
   * Milliseconds a client may take to send a request's headers before its connection is closed (408). Default 10 000.
   */
  readonly headersTimeoutMs?: number
  /** Told, at most once a minute, that connections are being refused (plain text). */
  readonly onNotice?: (message: string) => void
  /**
   * Whether a host whose stream was cut can resume it (`Last-Event-ID`, see {@link RESUMPTION}). Default `true`.
   * `false` is for hosts that only ask and wait: no priming event opens each stream and no event is kept (the
   * event store's work saved); a host cut off mid-call calls again.
   */
  readonly resumable?: boolean
  /**
   * A page for people, at `GET /` (e.g. `gatewayPage(gateway, …)`), with its actions (`POST /NAME`); absent: 404.
   * Behind the `Host`, `Origin` and token checks, as `/mcp` is; a browser gives the token as the password of HTTP
   * Basic authentication (any user name), which a 401 for the page asks for. An action also needs the page's CSRF
   * token among its form's fields, and is refused from another site (`Origin`, `Sec-Fetch-Site`).
   */
  readonly page?: HttpPage
}

/**
 * A page `serveHttp` serves at `/`, and the actions its forms post to.
 *
 * @since 0.1.0
 * @category model
 */
export interface HttpPage {
  /** The page's HTML for `GET /`, given the query and the CSRF token its forms must send back (field `csrf`). */
  readonly render: (query: URLSearchParams, csrf: string) => string
  /**
   * For each action (`POST /NAME`, a form of `application/x-www-form-urlencoded`), what it does with the form's fields;
   * it returns (or resolves to) where the browser goes next (a 303), e.g. `/?done=1`.
   */
  readonly actions: Readonly<Record<string, (form: URLSearchParams) => string | Promise<string>>>
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
  readonly transport: WebStandardStreamableHTTPServerTransport
  lastSeen: number
}

const MAX_BODY = 4 * 1024 * 1024

// the process's limit on open files (the soft one): Linux says it in /proc; elsewhere the shell's `ulimit -n`
const fileLimit = (): number | undefined => {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    if (line !== undefined) return line === 'unlimited' ? Infinity : Number(line)
  } catch {
    // not Linux
  }
  try {
    const text = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2_000 }).trim()
    return text === 'unlimited' ? Infinity : Number(text)
  } catch {
    return undefined
  }
}

/**
 * The connections `serveHttp` keeps open at most when not told: three quarters of the process's limit on open
 * files, and at least {@link RESERVED_FILES} fewer than it (at least 16, at most 100 000; 768 when the limit cannot
 * be read), the rest left to the process itself, its upstreams, its log and its store.
 *
 * @example
 * import { defaultMaxConnections } from 'toolstack/mcp'
 * assert.ok(defaultMaxConnections() >= 16)
 *
 * @since 0.1.0
 * @category serving
 */
/**
 * The files `defaultMaxConnections` leaves at least: a Node process holds about 20 of its own (30 under a loader
 * such as tsx), each upstream three pipes, the servers' shared watchdog one, and a restart a few more while the old
 * server's pipes close (test/cli/serve-start.test.ts restarts one under a limit of 128 files).
 *
 * @since 0.1.0
 * @category serving
 */
export const RESERVED_FILES = 48

export const defaultMaxConnections = (): number => maxConnectionsFor(fileLimit())

/**
 * {@link defaultMaxConnections} for a limit on open files (`undefined` when it cannot be read).
 *
 * @example
 * import { maxConnectionsFor } from 'toolstack/mcp'
 * assert.deepStrictEqual([128, 256, 1024, Infinity, undefined].map(maxConnectionsFor), [80, 192, 768, 100_000, 768])
 *
 * @since 0.1.0
 * @category serving
 */
export const maxConnectionsFor = (limit: number | undefined): number =>
  limit === undefined || !(limit > 0)
    ? 768
    : Math.max(16, Math.min(100_000, Math.floor(limit * 0.75), limit - RESERVED_FILES))

// a request's own origin, for its URL: its Host, which every request that reaches a session has (one without
// is refused as not this server's)
const originOf = (req: IncomingMessage): string => `http://${req.headers.host as string}`

const refuse = (
  res: ServerResponse,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }))
}

/** A body, parsed; or why not: too large (read to its end, but not kept past MAX_BODY), or not JSON (no value). */
type Body =
  | { readonly _tag: 'Json'; readonly value: unknown }
  | { readonly _tag: 'TooLarge' }
  | { readonly _tag: 'NotJson'; readonly value: undefined }

// a body past the bound is drained, not cut: cutting the connection would leave the client an ECONNRESET
// instead of the 413 that says why
const readBytes = (req: IncomingMessage, max: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size <= max) chunks.push(c)
      else chunks.length = 0
    })
    req.on('end', () => resolve(size > max ? undefined : Buffer.concat(chunks)))
    req.on('error', reject)
  })

const readText = async (req: IncomingMessage, max: number): Promise<string | undefined> =>
  (await readBytes(req, max))?.toString('utf8')

const readBody = async (req: IncomingMessage): Promise<Body> => {
  const bytes = await readBytes(req, MAX_BODY)
  if (bytes === undefined) return { _tag: 'TooLarge' }
  try {
    return { _tag: 'Json', value: JSON.parse(bytes.toString('utf8')) }
  } catch {
    return { _tag: 'NotJson', value: undefined }
  }
}

// RFC 7235: the scheme is case-insensitive; RFC 6750: one token68 after it
const bearerOf = (authorization: string | undefined): string | undefined =>
  /^bearer +([^ ]+) *$/i.exec(authorization ?? '')?.[1]

// RFC 7617: a browser sends the token as Basic's password; the user name is anything
const basicPasswordOf = (authorization: string | undefined): string | undefined => {
  const encoded = /^basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization ?? '')?.[1]
  if (encoded === undefined) return undefined
  const text = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = text.indexOf(':')
  return colon < 0 ? undefined : text.slice(colon + 1)
}

// what the page's responses say about themselves: nothing loads from anywhere, no script runs, no site frames it
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // not no-referrer: with it, a browser sends its own page's form posts with Origin: null
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}
// a form is a few fields
const MAX_FORM = 16 * 1024

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
const httpTransport = () => import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')

/**
 * Serves over Streamable HTTP, with a server of its own for each session, made by `newServer` (e.g.
 * `() => toMcpServer(session => stack, info)`). Binds `127.0.0.1` by default; refuses a request whose
 * `Host` or `Origin` is not this server's (403, against DNS rebinding; compared without regard to case),
 * one with two `Host` headers (400), one without the bearer token when one is set (401; the scheme in
 * any case), a body over 4 MiB outside a session (413), and an unknown session (404). Idle sessions are
 * closed. With `metrics`, `GET /metrics` answers them, past the same checks. With `page`, `GET /` answers it and
 * `POST /NAME` its actions, past the same checks (a browser gives the token as Basic's password); an action also
 * needs the page's CSRF token and is refused from another site. Rejects, with the reason, when the port cannot be
 * bound.
 *
 * @since 0.1.0
 * @category serving
 */
export const serveHttp = async (
  newServer: () => Server | Promise<Server>,
  options: ServeHttpOptions,
): Promise<HttpServing> => {
  const { WebStandardStreamableHTTPServerTransport } = await httpTransport()
  const host = options.host ?? '127.0.0.1'
  const path = options.path ?? '/mcp'
  const idleMs = options.idleMs ?? 1_800_000
  const maxSessions = options.maxSessions ?? 1_000
  const resumable = options.resumable !== false
  // initializes being answered now: they count against maxSessions before their id is known
  let opening = 0
  const sessions = new Map<string, Session>()
  const headersTimeout = options.headersTimeoutMs ?? 10_000
  // a client that sends its headers slowly, or never, holds a connection for headersTimeout at most (Node checks
  // every connectionsCheckingInterval); a body, 4 MiB at most, gets a minute
  const http = createServer({
    headersTimeout,
    requestTimeout: Math.max(headersTimeout, 60_000),
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
  })
  http.maxConnections = options.maxConnections ?? defaultMaxConnections()
  let saidRefused = 0
  http.on('drop', () => {
    const now = Date.now()
    if (now - saidRefused < 60_000) return
    saidRefused = now
    try {
      options.onNotice?.(
        `${http.maxConnections} connections are open, the most this server keeps; refusing more (said at most once a minute)`,
      )
    } catch {
      // a notice that cannot be told changes nothing
    }
  })
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
  const endSession = (s: Pick<Session, 'server' | 'transport'>): void => {
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
    const server = await newServer()
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // resumable streams: each starts with a priming event (its id, and `retry`), and a host that lost one
      // reconnects with Last-Event-ID and is sent what it missed, within a bounded window
      ...(resumable ? { eventStore: boundedEventStore(), retryInterval: RESUMPTION.retryMs } : {}),
      onsessioninitialized: (id) => {
        sessions.set(id, { server, transport, lastSeen: Date.now() })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
    }
    try {
      await server.connect(transport)
      await sendWebResponse(res, await transport.handleRequest(webRequestOf(req, originOf(req)), { parsedBody: body }))
    } finally {
      // an initialize the SDK refused (406, 415, …), or one that failed, began no session: nothing else would ever
      // close its server, which holds what it subscribed to when it was made (a gateway's upstreams, its log)
      if (transport.sessionId === undefined) endSession({ server, transport })
    }
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

  // the page's forms carry this process's token: another site's page cannot know it
  const csrf = randomBytes(32).toString('hex')
  // what a path of the page is: the page itself, one of its actions, or neither
  type PageRoute =
    | { readonly _tag: 'Page' }
    | { readonly _tag: 'Action'; readonly run: (form: URLSearchParams) => string | Promise<string> }
  const pageRouteOf = (pathname: string): PageRoute | undefined => {
    const page = options.page
    if (page === undefined || pathname === path) return undefined
    if (pathname === '/') return { _tag: 'Page' }
    const name = pathname.slice(1)
    const run = Object.hasOwn(page.actions, name) ? page.actions[name] : undefined
    return run === undefined ? undefined : { _tag: 'Action', run }
  }
  const servePage = async (req: IncomingMessage, res: ServerResponse, url: URL, route: PageRoute): Promise<void> => {
    if (route._tag === 'Page') {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return refuse(res, 405, 'Method Not Allowed: the page answers GET', { allow: 'GET, HEAD' })
      const html = (options.page as HttpPage).render(url.searchParams, csrf)
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...PAGE_HEADERS })
      return void res.end(req.method === 'HEAD' ? undefined : html)
    }
    if (req.method !== 'POST') return refuse(res, 405, 'Method Not Allowed: an action answers POST', { allow: 'POST' })
    // a browser says where a request comes from: a page of another site never acts here, whatever it sends
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      return refuse(res, 403, `Forbidden: a request from another site (Sec-Fetch-Site: ${JSON.stringify(site)})`)
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? ''))
      return refuse(res, 415, 'Unsupported Media Type: an action takes a form (application/x-www-form-urlencoded)')
    const text = await readText(req, MAX_FORM)
    if (text === undefined) return refuse(res, 413, 'Payload Too Large: a form is at most 16 KiB')
    const form = new URLSearchParams(text)
    if (!sameSecret(form.get('csrf') ?? '', csrf))
      return refuse(
        res,
        403,
        'Forbidden: the form does not carry this page’s CSRF token; reload the page and try again',
      )
    res.writeHead(303, { location: await route.run(form), ...PAGE_HEADERS })
    res.end()
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname === '/healthz' || url.pathname === '/readyz') return probe(req, res, url.pathname)
    const metrics = url.pathname === '/metrics' && url.pathname !== path ? options.metrics : undefined
    const page = metrics === undefined ? pageRouteOf(url.pathname) : undefined
    if (url.pathname !== path && metrics === undefined && page === undefined)
      return refuse(res, 404, `Not Found: the MCP endpoint is ${path}`)
    if (hostHeaders(req) > 1) return refuse(res, 400, 'Bad Request: more than one Host header')
    const hostHeader = req.headers.host ?? ''
    if (!ownHosts().has(hostHeader.toLowerCase()))
      return refuse(res, 403, `Forbidden: Host ${JSON.stringify(hostHeader)} is not this server`)
    const origin = req.headers.origin
    if (origin !== undefined && !ownOrigins().has(origin.toLowerCase()))
      return refuse(res, 403, `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`)
    if (options.token !== undefined) {
      const given =
        bearerOf(req.headers.authorization) ??
        (page === undefined ? undefined : basicPasswordOf(req.headers.authorization))
      if (!sameSecret(given ?? '', options.token))
        return page === undefined
          ? refuse(res, 401, 'Unauthorized: a bearer token is required', { 'www-authenticate': 'Bearer' })
          : // a browser asks its user for the token, as a password, when the page says Basic
            refuse(res, 401, 'Unauthorized: the token is required (any user name, the token as the password)', {
              'www-authenticate': 'Basic realm="toolstack serve", charset="UTF-8"',
              ...PAGE_HEADERS,
            })
    }
    if (metrics !== undefined) return scrape(req, res, metrics)
    if (page !== undefined) return servePage(req, res, url, page)
    const id = req.headers['mcp-session-id']
    if (typeof id !== 'string') return open(req, res)
    const s = sessions.get(id)
    if (s === undefined)
      return refuse(res, 404, 'Not Found: no such session (it ended or never began); start a new one with initialize')
    s.lastSeen = Date.now()
    // a message's body is read here, within the same bound as a session's first, and handed over parsed (no
    // stream is made of it); one that is not JSON (a GET's or a DELETE's none included) is handed over as none:
    // the SDK answers a POST's with its parse error
    const read = await readBody(req)
    if (read._tag === 'TooLarge') return refuse(res, 413, 'Payload Too Large: the request body is larger than 4 MiB')
    const answer = s.transport.handleRequest(webRequestOf(req, originOf(req)), { parsedBody: read.value })
    await sendWebResponse(res, await answer)
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
