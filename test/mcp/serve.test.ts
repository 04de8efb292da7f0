// serveStdio and serveHttp, in this process: stdio over stand-in stdin/stdout streams; HTTP
// with real SDK clients and raw requests: who gets which session, each refusal's exact
// status, headers and body, the hosts and origins accepted, idle sessions reaped on time
// (fake clock), failures while answering, and closing.
import { request } from 'node:http'
import { readFileSync } from 'node:fs'
import { connect as tcpConnect } from 'node:net'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { HttpPage, HttpServing } from '../../src/mcp/index.js'
import {
  RESERVED_FILES,
  boundedEventStore,
  defaultMaxConnections,
  maxConnectionsFor,
  serveHttp,
  serveStdio,
} from '../../src/mcp/index.js'
import { until } from '../support/until.js'

const MAX_BODY = 4 * 1024 * 1024

const servings: Array<HttpServing> = []
const clients: Array<Client> = []
afterEach(async () => {
  vi.useRealTimers()
  vi.restoreAllMocks()
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)))
  await Promise.all(servings.splice(0).map((s) => s.close()))
})

/** A plain server with one tool, `hello`; `made` collects every server made. */
const factory =
  (made: Array<Server> = []) =>
  (): Server => {
    const server = new Server({ name: 'serve-under-test', version: '0.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'hello', inputSchema: { type: 'object' } }],
    }))
    made.push(server)
    return server
  }

const serve = async (
  options: Parameters<typeof serveHttp>[1],
  newServer: () => Server = factory(),
): Promise<HttpServing> => {
  const serving = await serveHttp(newServer, options)
  servings.push(serving)
  return serving
}

const connectClient = async (url: string, name = 'host', headers: Record<string, string> = {}) => {
  const client = new Client({ name, version: '1' })
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  await client.connect(transport)
  clients.push(client)
  return { client, transport }
}

const initBody = (name = 'x'): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
  })

const refusal = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null })

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
}

/** A request through node:http, which (unlike fetch) sends the Host header it is given. */
const send = (
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; connectTo?: string } = {},
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const u = new URL(url)
    const req = request(
      {
        host: options.connectTo ?? u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: options.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(options.body ?? (options.method === 'GET' || options.method === 'DELETE' ? undefined : initBody()))
  })

const expectRefused = (answer: Answer, status: number, message: string): void => {
  expect(answer.status).toBe(status)
  expect(answer.headers['content-type']).toBe('application/json')
  expect(JSON.parse(answer.body)).toStrictEqual(refusal(message))
}

describe('serveStdio', () => {
  const withStdio = () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    vi.spyOn(process, 'stdin', 'get').mockReturnValue(stdin as unknown as typeof process.stdin)
    vi.spyOn(process, 'stdout', 'get').mockReturnValue(stdout as unknown as typeof process.stdout)
    const lines: Array<unknown> = []
    let rest = ''
    stdout.on('data', (b: Buffer) => {
      const parts = (rest + b.toString('utf8')).split('\n')
      rest = parts.pop() ?? ''
      for (const p of parts) lines.push(JSON.parse(p))
    })
    return { stdin, lines }
  }

  it(
    'answers over stdin and stdout, and resolves once stdin ends, the server closed (no onclose of its own)',
    { timeout: 5000 },
    async () => {
      const { stdin, lines } = withStdio()
      const server = factory()()
      let resolved = false
      const serving = serveStdio(server).then(() => {
        resolved = true
      })
      stdin.write(initBody('stdio-host') + '\n')
      await until(() => lines.length === 1)
      expect(lines[0]).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        result: { serverInfo: { name: 'serve-under-test', version: '0.0.0' } },
      })
      expect(server.getClientVersion()).toStrictEqual({ name: 'stdio-host', version: '1' })
      stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
      stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) + '\n')
      await until(() => lines.length === 2)
      expect(lines[1]).toStrictEqual({
        jsonrpc: '2.0',
        id: 2,
        result: { tools: [{ name: 'hello', inputSchema: { type: 'object' } }] },
      })
      expect(resolved).toBe(false)
      stdin.end()
      await serving
      expect(resolved).toBe(true)
    },
  )

  it("keeps the server's own onclose, calling it once when the host goes", { timeout: 5000 }, async () => {
    const { stdin } = withStdio()
    const server = factory()()
    let calls = 0
    server.onclose = () => {
      calls++
    }
    const serving = serveStdio(server)
    await new Promise((r) => setImmediate(r))
    expect(calls).toBe(0)
    stdin.end()
    await serving
    expect(calls).toBe(1)
  })
})

describe('serveHttp: where it listens', () => {
  it('binds 127.0.0.1 at /mcp by default, on the port picked, and counts its sessions', async () => {
    const serving = await serve({ port: 0 })
    const port = Number(new URL(serving.url).port)
    expect(port).toBeGreaterThan(0)
    expect(serving.url).toBe(`http://127.0.0.1:${port}/mcp`)
    expect(serving.sessions()).toBe(0)
    await connectClient(serving.url)
    expect(serving.sessions()).toBe(1)
  })

  it('serves at the path given; any other path is a 404 naming the endpoint; a query string is no other path', async () => {
    const serving = await serve({ port: 0, path: '/tools' })
    const port = new URL(serving.url).port
    expect(serving.url).toBe(`http://127.0.0.1:${port}/tools`)
    expectRefused(await send(`http://127.0.0.1:${port}/mcp`), 404, 'Not Found: the MCP endpoint is /tools')
    expectRefused(await send(`http://127.0.0.1:${port}/tools/more`), 404, 'Not Found: the MCP endpoint is /tools')
    expect((await send(`${serving.url}?from=test`)).status).toBe(200)
  })

  it('on another IPv4 address: its own address, localhost, 127.0.0.1 and [::1] are its Hosts and (over http) its Origins; nothing else is', async () => {
    const serving = await serve({ port: 0, host: '127.0.0.2' })
    const port = new URL(serving.url).port
    expect(serving.url).toBe(`http://127.0.0.2:${port}/mcp`)
    for (const host of [`127.0.0.2:${port}`, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect([host, (await send(serving.url, { headers: { host } })).status]).toStrictEqual([host, 200])
      expect([host, (await send(serving.url, { headers: { origin: `http://${host}` } })).status]).toStrictEqual([
        host,
        200,
      ])
    }
    for (const host of [
      `[127.0.0.2]:${port}`,
      `127.0.0.2:${Number(port) + 1}`,
      '127.0.0.2',
      'Stryker was here',
      'evil.example',
    ]) {
      expectRefused(
        await send(serving.url, { headers: { host } }),
        403,
        `Forbidden: Host ${JSON.stringify(host)} is not this server`,
      )
    }
    for (const origin of [
      `https://127.0.0.2:${port}`,
      `http://[127.0.0.2]:${port}`,
      `127.0.0.2:${port}`,
      'Stryker was here',
      'null',
    ]) {
      expectRefused(
        await send(serving.url, { headers: { origin } }),
        403,
        `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`,
      )
    }
    expect(serving.sessions()).toBe(8)
  })

  it('on an IPv6 address: shows it in brackets, and takes it in brackets as a Host', async () => {
    const serving = await serve({ port: 0, host: '::ffff:127.0.0.1' })
    const port = new URL(serving.url).port
    expect(serving.url).toBe(`http://[::ffff:127.0.0.1]:${port}/mcp`)
    // a GET without a session passes the Host check and is refused further on, saying how a session starts
    expectRefused(
      await send(serving.url, {
        method: 'GET',
        connectTo: '127.0.0.1',
        headers: { host: `[::ffff:127.0.0.1]:${port}` },
      }),
      400,
      'Bad Request: no session; a session starts with a POST of initialize',
    )
    expect(
      (await send(serving.url, { connectTo: '127.0.0.1', headers: { origin: `http://[::ffff:127.0.0.1]:${port}` } }))
        .status,
    ).toBe(200)
    const bare = `::ffff:127.0.0.1:${port}`
    expectRefused(
      await send(serving.url, { connectTo: '127.0.0.1', headers: { host: bare } }),
      403,
      `Forbidden: Host ${JSON.stringify(bare)} is not this server`,
    )
  })

  it('accepts the Hosts and Origins it is told to, besides its own', async () => {
    const serving = await serve({
      port: 0,
      allowedHosts: ['tools.internal:443'],
      allowedOrigins: ['https://app.example'],
    })
    const port = new URL(serving.url).port
    expect((await send(serving.url, { headers: { host: 'tools.internal:443' } })).status).toBe(200)
    expect((await send(serving.url, { headers: { origin: 'https://app.example' } })).status).toBe(200)
    expect(
      (await send(serving.url, { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` } })).status,
    ).toBe(200)
    expectRefused(
      await send(serving.url, { headers: { host: 'tools.internal:80' } }),
      403,
      'Forbidden: Host "tools.internal:80" is not this server',
    )
    expectRefused(
      await send(serving.url, { headers: { origin: 'https://app.example.evil' } }),
      403,
      'Forbidden: Origin "https://app.example.evil" is not allowed',
    )
    // an allowed Host is an allowed Origin over http, as its own are
    expect((await send(serving.url, { headers: { origin: 'http://tools.internal:443' } })).status).toBe(200)
    expectRefused(
      await send(serving.url, { headers: { origin: 'https://tools.internal:443' } }),
      403,
      'Forbidden: Origin "https://tools.internal:443" is not allowed',
    )
  })

  it('whatever Host, Origin or token comes, one that is not its own is refused, saying which', async () => {
    const serving = await serve({ port: 0, token: 't0k3n' })
    const port = new URL(serving.url).port
    const own = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
    const headerValue = fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/)
    await fc.assert(
      fc.asyncProperty(headerValue, headerValue, headerValue, async (host, origin, token) => {
        fc.pre(!own.has(host) && !own.has(origin.replace(/^http:\/\//, '')) && token !== 't0k3n')
        const auth = { authorization: 'Bearer t0k3n' }
        expectRefused(
          await send(serving.url, { headers: { ...auth, host } }),
          403,
          `Forbidden: Host ${JSON.stringify(host)} is not this server`,
        )
        expectRefused(
          await send(serving.url, { headers: { ...auth, origin } }),
          403,
          `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`,
        )
        expectRefused(
          await send(serving.url, { headers: { authorization: `Bearer ${token}` } }),
          401,
          'Unauthorized: a bearer token is required',
        )
      }),
      { numRuns: 25 },
    )
    expect(serving.sessions()).toBe(0)
  })

  it('refuses a request without a Host (HTTP/1.0) as not this server', async () => {
    const serving = await serve({ port: 0 })
    const port = Number(new URL(serving.url).port)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tcpConnect(port, '127.0.0.1', () => socket.end('GET /mcp HTTP/1.0\r\n\r\n'))
      const chunks: Array<Buffer> = []
      socket.on('data', (c: Buffer) => chunks.push(c))
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
      socket.on('error', reject)
    })
    const [head, body] = answer.split('\r\n\r\n')
    expect(head?.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden')
    expect(JSON.parse(body ?? '')).toStrictEqual(refusal('Forbidden: Host "" is not this server'))
  })

  it('compares Host and Origin without regard to case (host names are case-insensitive)', async () => {
    const serving = await serve({ port: 0, allowedHosts: ['MCP.Example:443'], allowedOrigins: ['https://App.Example'] })
    const port = new URL(serving.url).port
    for (const host of [`LOCALHOST:${port}`, `LocalHost:${port}`, 'mcp.example:443', 'MCP.EXAMPLE:443']) {
      expect((await send(serving.url, { headers: { host } })).status, host).toBe(200)
    }
    for (const origin of [`HTTP://LOCALHOST:${port}`, 'https://app.example', 'HTTPS://APP.EXAMPLE']) {
      expect((await send(serving.url, { headers: { origin } })).status, origin).toBe(200)
    }
    expectRefused(
      await send(serving.url, { headers: { host: `LOCALHOST:${Number(port) + 1}` } }),
      403,
      `Forbidden: Host "LOCALHOST:${Number(port) + 1}" is not this server`,
    )
  })

  it('an allowed Host without a port is accepted as it is and with its own port, not with another', async () => {
    const serving = await serve({ port: 0, allowedHosts: ['mcp.example', '[fd00::5]'] })
    const port = Number(new URL(serving.url).port)
    for (const host of ['mcp.example', `mcp.example:${port}`, '[fd00::5]', `[fd00::5]:${port}`]) {
      expect((await send(serving.url, { headers: { host } })).status, host).toBe(200)
    }
    for (const host of [`mcp.example:${port + 1}`, `[fd00::5]:${port + 1}`, 'mcp.example.evil']) {
      expect((await send(serving.url, { headers: { host } })).status, host).toBe(403)
    }
  })

  it('refuses a request with two Host headers, even when both are its own (RFC 9112: 400)', async () => {
    const serving = await serve({ port: 0 })
    const port = Number(new URL(serving.url).port)
    const body = initBody()
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tcpConnect(port, '127.0.0.1', () =>
        socket.end(
          `POST /mcp HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\nHost: 127.0.0.1:${port}\r\n` +
            'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        ),
      )
      const chunks: Array<Buffer> = []
      socket.on('data', (c: Buffer) => chunks.push(c))
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
      socket.on('error', reject)
    })
    const [head, rest] = answer.split('\r\n\r\n')
    expect(head?.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
    expect(JSON.parse(rest ?? '')).toStrictEqual(refusal('Bad Request: more than one Host header'))
    expect(serving.sessions()).toBe(0)
  })

  it('a port in use is a clear error', async () => {
    const first = await serve({ port: 0 })
    const port = Number(new URL(first.url).port)
    await expect(serveHttp(factory(), { port })).rejects.toThrow(
      new Error(`port ${port} on 127.0.0.1 is already in use`),
    )
    // the first goes on serving
    expect((await send(first.url)).status).toBe(200)
  })

  it('an address it cannot bind is a clear error, saying why', async () => {
    await expect(serveHttp(factory(), { port: 0, host: '192.0.2.1' })).rejects.toThrow(
      new Error('cannot listen on 192.0.2.1:0: listen EADDRNOTAVAIL: address not available 192.0.2.1'),
    )
  })
})

describe('serveHttp: probes', () => {
  it('GET /healthz: 200 while it serves, whatever the Host or token; GET /readyz: 200 or 503 as readiness says, with it as JSON', async () => {
    let state: { ready: boolean; upstreams: Array<string> } = { ready: false, upstreams: ['fs: down'] }
    const serving = await serve({ port: 0, token: 't0k3n', readiness: () => state })
    const base = serving.url.replace('/mcp', '')
    const alive = await send(`${base}/healthz`, { method: 'GET', headers: { host: 'probe.internal:1' } })
    expect([alive.status, JSON.parse(alive.body)]).toStrictEqual([200, { status: 'alive' }])
    const notReady = await send(`${base}/readyz`, { method: 'GET' })
    expect([notReady.status, notReady.headers['content-type'], JSON.parse(notReady.body)]).toStrictEqual([
      503,
      'application/json',
      { ready: false, upstreams: ['fs: down'] },
    ])
    state = { ready: true, upstreams: ['fs: up'] }
    const ready = await send(`${base}/readyz`, { method: 'GET' })
    expect([ready.status, JSON.parse(ready.body)]).toStrictEqual([200, { ready: true, upstreams: ['fs: up'] }])
    const head = await send(`${base}/readyz`, { method: 'HEAD' })
    expect([head.status, head.body]).toStrictEqual([200, ''])
    const post = await send(`${base}/healthz`, { method: 'POST', body: '{}' })
    expectRefused(post, 405, 'Method Not Allowed: /healthz answers GET')
    expect(post.headers['allow']).toBe('GET, HEAD')
    // the MCP endpoint still wants its token
    expect((await send(serving.url)).status).toBe(401)
  })

  it('without readiness, /readyz is always ready', async () => {
    const serving = await serve({ port: 0 })
    const r = await send(serving.url.replace('/mcp', '/readyz'), { method: 'GET' })
    expect([r.status, JSON.parse(r.body)]).toStrictEqual([200, { ready: true }])
  })
})

describe('serveHttp: metrics', () => {
  it('GET /metrics answers what metrics gives, with its content type, only past the Host, Origin and token checks; HEAD has no body; POST is a 405', async () => {
    const metrics = () => Promise.resolve({ contentType: 'text/plain; version=0.0.4', body: 'toolstack_x 1\n' })
    const serving = await serve({ port: 0, token: 't0k3n', metrics })
    const at = serving.url.replace('/mcp', '/metrics')
    const auth = { authorization: 'Bearer t0k3n' }
    const ok = await send(at, { method: 'GET', headers: auth })
    expect([ok.status, ok.headers['content-type'], ok.body]).toStrictEqual([
      200,
      'text/plain; version=0.0.4',
      'toolstack_x 1\n',
    ])
    expect((await send(at, { method: 'HEAD', headers: auth })).body).toBe('')
    expect((await send(at, { method: 'GET' })).status).toBe(401)
    expect((await send(at, { method: 'GET', headers: { ...auth, host: 'evil.example:80' } })).status).toBe(403)
    expect((await send(at, { method: 'GET', headers: { ...auth, origin: 'http://evil.example' } })).status).toBe(403)
    const post = await send(at, { headers: auth })
    expectRefused(post, 405, 'Method Not Allowed: /metrics answers GET')
  })

  it('without metrics, /metrics is a 404 like any other path', async () => {
    const serving = await serve({ port: 0 })
    const r = await send(serving.url.replace('/mcp', '/metrics'), { method: 'GET' })
    expectRefused(r, 404, 'Not Found: the MCP endpoint is /mcp')
  })

  it('metrics that fail are a 500 saying why', async () => {
    const serving = await serve({ port: 0, metrics: () => Promise.reject(new Error('no registry')) })
    const r = await send(serving.url.replace('/mcp', '/metrics'), { method: 'GET' })
    expectRefused(r, 500, 'Internal error: no registry')
  })
})

describe('serveHttp: the bearer token', () => {
  it('without one, 401 with WWW-Authenticate: Bearer; a wrong one, of any length, too; the right one opens a session', async () => {
    const serving = await serve({ port: 0, token: 's3cret' })
    const refusedWith = async (headers: Record<string, string>) => {
      const answer = await send(serving.url, { headers })
      expectRefused(answer, 401, 'Unauthorized: a bearer token is required')
      expect(answer.headers['www-authenticate']).toBe('Bearer')
    }
    await refusedWith({})
    await refusedWith({ authorization: 'Bearer s3creT' })
    await refusedWith({ authorization: 'Bearer s3cret!' })
    await refusedWith({ authorization: 'Bearer ' })
    await refusedWith({ authorization: 's3cret' })
    await refusedWith({ authorization: 'Basic s3cret' })
    await refusedWith({ authorization: 'Bearer s3cret extra' })
    await refusedWith({ authorization: 'Bearers3cret' })
    expect(serving.sessions()).toBe(0)
    const { client } = await connectClient(serving.url, 'host', { Authorization: 'Bearer s3cret' })
    expect((await client.listTools()).tools.map((t) => t.name)).toStrictEqual(['hello'])
    expect(serving.sessions()).toBe(1)
  })

  it('reads the scheme without regard to case, as RFC 7235 says; the token itself is compared exactly', async () => {
    const serving = await serve({ port: 0, token: 's3cret' })
    for (const authorization of ['bearer s3cret', 'BEARER s3cret', 'BeArEr  s3cret']) {
      expect((await send(serving.url, { headers: { authorization } })).status, authorization).toBe(200)
    }
    expectRefused(
      await send(serving.url, { headers: { authorization: 'bearer S3CRET' } }),
      401,
      'Unauthorized: a bearer token is required',
    )
  })

  it('without a token set, a request needs no Authorization, and one that carries any is served', async () => {
    const serving = await serve({ port: 0 })
    expect((await send(serving.url)).status).toBe(200)
    expect((await send(serving.url, { headers: { authorization: 'Bearer whatever' } })).status).toBe(200)
  })
})

describe('serveHttp: the page', () => {
  const CSP =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
  const basic = (password: string, user = 'me') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
  /** A page that shows the query's `n` and records each action's `what`; `csrf` is the token it was drawn with. */
  const pageServing = async (token?: string) => {
    const acted: Array<string> = []
    let csrf = ''
    const page: HttpPage = {
      render: (query, token) => {
        csrf = token
        return `<p>page ${query.get('n') ?? ''}</p>`
      },
      actions: {
        'things/do': (form) => {
          acted.push(form.get('what') ?? '')
          return '/?done=1'
        },
        // an action that waits (an acceptance written to a store): it is done only once it resolves
        'things/later': async (form) => {
          await new Promise((r) => setTimeout(r, 50))
          acted.push(`later ${form.get('what') ?? ''}`)
          return `/?later=${acted.length}`
        },
      },
    }
    const serving = await serve({ port: 0, page, ...(token === undefined ? {} : { token }) })
    const root = new URL('/', serving.url).href
    const auth = token === undefined ? {} : { authorization: basic(token) }
    // the page drawn once, so its CSRF token is known
    await send(root, { method: 'GET', headers: auth })
    const form = (fields: Record<string, string>, headers: Record<string, string> = {}, action = 'things/do') =>
      send(`${root}${action}`, {
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      })
    return { serving, root, auth, acted, csrf: () => csrf, form }
  }

  it('GET / answers the page with headers that let nothing load, run or frame it, and nothing be kept; HEAD has no body; POST is a 405', async () => {
    const { root, auth } = await pageServing('s3cret')
    const ok = await send(`${root}?n=7`, { method: 'GET', headers: auth })
    expect([ok.status, ok.body]).toStrictEqual([200, '<p>page 7</p>'])
    expect(ok.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CSP,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    })
    expect((await send(root, { method: 'HEAD', headers: auth })).body).toBe('')
    expectRefused(await send(root, { headers: auth }), 405, 'Method Not Allowed: the page answers GET')
  })

  it('takes the token as the password of Basic (any user name) or as a bearer token; without it, 401 asking a browser for it', async () => {
    const { root, serving } = await pageServing('s3cret')
    expect((await send(root, { method: 'GET', headers: { authorization: basic('s3cret', '') } })).status).toBe(200)
    expect((await send(root, { method: 'GET', headers: { authorization: 'Bearer s3cret' } })).status).toBe(200)
    for (const authorization of [undefined, basic('s3creT'), basic('s3cret!'), basic('me'), 'Basic s3cret', 'Basic']) {
      const r = await send(root, { method: 'GET', headers: authorization === undefined ? {} : { authorization } })
      expectRefused(r, 401, 'Unauthorized: the token is required (any user name, the token as the password)')
      expect(r.headers['www-authenticate']).toBe('Basic realm="toolstack serve", charset="UTF-8"')
      expect(r.headers['cache-control']).toBe('no-store')
    }
    // Basic is the page's only: the MCP endpoint still wants the bearer token
    const mcp = await send(serving.url, { headers: { authorization: basic('s3cret') } })
    expectRefused(mcp, 401, 'Unauthorized: a bearer token is required')
  })

  it('is behind the Host and Origin checks as the endpoint is', async () => {
    const { root, auth } = await pageServing('s3cret')
    expect((await send(root, { method: 'GET', headers: { ...auth, host: 'evil.example:80' } })).status).toBe(403)
    expect((await send(root, { method: 'GET', headers: { ...auth, origin: 'http://evil.example' } })).status).toBe(403)
  })

  it("an action runs with the page's CSRF token among its fields, and answers 303 to where it says", async () => {
    const { form, csrf, acted } = await pageServing('s3cret')
    const done = await form({ csrf: csrf(), what: 'it' })
    expect([done.status, done.headers.location, done.headers['cache-control']]).toStrictEqual([
      303,
      '/?done=1',
      'no-store',
    ])
    expect(acted).toStrictEqual(['it'])
  })

  it('an action that resolves answers 303 to where it resolves, once it has; without the token or from another site it never starts', async () => {
    const { form, csrf, acted, root } = await pageServing('s3cret')
    const own = new URL(root).origin
    expectRefused(
      await form({ what: 'it' }, {}, 'things/later'),
      403,
      'Forbidden: the form does not carry this page’s CSRF token; reload the page and try again',
    )
    expectRefused(
      await form({ csrf: csrf(), what: 'it' }, { origin: 'http://evil.example' }, 'things/later'),
      403,
      'Forbidden: Origin "http://evil.example" is not allowed',
    )
    expectRefused(
      await form({ csrf: csrf(), what: 'it' }, { origin: own, 'sec-fetch-site': 'cross-site' }, 'things/later'),
      403,
      'Forbidden: a request from another site (Sec-Fetch-Site: "cross-site")',
    )
    await new Promise((r) => setTimeout(r, 100))
    expect(acted).toStrictEqual([])
    const done = await form({ csrf: csrf(), what: 'it' }, {}, 'things/later')
    expect([done.status, done.headers.location]).toStrictEqual([303, '/?later=1'])
    expect(acted).toStrictEqual(['later it'])
  })

  it('an action without the CSRF token, or with another, is refused (403) and does nothing', async () => {
    const { form, csrf, acted } = await pageServing('s3cret')
    const message = 'Forbidden: the form does not carry this page’s CSRF token; reload the page and try again'
    expectRefused(await form({ what: 'it' }), 403, message)
    expectRefused(await form({ csrf: `${csrf()}0`, what: 'it' }), 403, message)
    expectRefused(await form({ csrf: csrf().toUpperCase(), what: 'it' }), 403, message)
    expect(acted).toStrictEqual([])
  })

  it('an action from another origin or another site is refused (403), even with the CSRF token; from its own page it runs', async () => {
    const { form, csrf, acted, root } = await pageServing('s3cret')
    const own = new URL(root).origin
    expectRefused(
      await form({ csrf: csrf() }, { origin: 'http://127.0.0.1:1' }),
      403,
      'Forbidden: Origin "http://127.0.0.1:1" is not allowed',
    )
    expectRefused(await form({ csrf: csrf() }, { origin: 'null' }), 403, 'Forbidden: Origin "null" is not allowed')
    for (const site of ['cross-site', 'same-site'])
      expectRefused(
        await form({ csrf: csrf() }, { origin: own, 'sec-fetch-site': site }),
        403,
        `Forbidden: a request from another site (Sec-Fetch-Site: "${site}")`,
      )
    expect(acted).toStrictEqual([])
    expect((await form({ csrf: csrf(), what: 'own' }, { origin: own, 'sec-fetch-site': 'same-origin' })).status).toBe(
      303,
    )
    expect(acted).toStrictEqual(['own'])
  })

  it('an action takes a form of at most 16 KiB, by POST; an unknown action, and any path without a page, is a 404', async () => {
    const { form, csrf, acted, root, auth } = await pageServing()
    expectRefused(
      await form({ csrf: csrf() }, { 'content-type': 'application/json' }),
      415,
      'Unsupported Media Type: an action takes a form (application/x-www-form-urlencoded)',
    )
    expectRefused(
      await form({ csrf: csrf(), what: 'x'.repeat(16 * 1024) }),
      413,
      'Payload Too Large: a form is at most 16 KiB',
    )
    expectRefused(
      await send(`${root}things/do`, { method: 'GET', headers: auth }),
      405,
      'Method Not Allowed: an action answers POST',
    )
    for (const path of ['things/undo', '__proto__', 'constructor', 'things'])
      expectRefused(await send(`${root}${path}`, { headers: auth }), 404, 'Not Found: the MCP endpoint is /mcp')
    expect(acted).toStrictEqual([])
    const bare = await serve({ port: 0 })
    expectRefused(
      await send(new URL('/', bare.url).href, { method: 'GET' }),
      404,
      'Not Found: the MCP endpoint is /mcp',
    )
  })
})

describe('serveHttp: sessions', () => {
  it("gives each host session a server of its own, and a request goes to its own session's server", async () => {
    const made: Array<Server> = []
    const serving = await serve({ port: 0 }, factory(made))
    const a = await connectClient(serving.url, 'host-a')
    const b = await connectClient(serving.url, 'host-b')
    expect(made).toHaveLength(2)
    expect(made.map((s) => s.getClientVersion()?.name)).toStrictEqual(['host-a', 'host-b'])
    expect(serving.sessions()).toBe(2)
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
    // a request with b's session id goes to b's server: no third server is made
    expect((await b.client.listTools()).tools).toHaveLength(1)
    expect(made).toHaveLength(2)
    let aClosed = 0
    let bClosed = 0
    ;(made[0] as Server).onclose = () => void aClosed++
    ;(made[1] as Server).onclose = () => void bClosed++
    await a.transport.terminateSession()
    expect(serving.sessions()).toBe(1)
    expect([aClosed > 0, bClosed]).toStrictEqual([true, 0])
    // the ended session is gone: its id is now unknown
    expectRefused(
      await send(serving.url, {
        headers: { 'mcp-session-id': a.transport.sessionId ?? 'none' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      }),
      404,
      'Not Found: no such session (it ended or never began); start a new one with initialize',
    )
    expect((await b.client.listTools()).tools).toHaveLength(1)
  })

  it('refuses, with a 400 saying how a session starts, what comes without a session and is not a POST of initialize', async () => {
    const serving = await serve({ port: 0 })
    expectRefused(
      await send(serving.url, { method: 'GET' }),
      400,
      'Bad Request: no session; a session starts with a POST of initialize',
    )
    expectRefused(
      await send(serving.url, { method: 'DELETE' }),
      400,
      'Bad Request: no session; a session starts with a POST of initialize',
    )
    expectRefused(
      await send(serving.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }),
      400,
      'Bad Request: no session; a session starts with initialize',
    )
    expectRefused(await send(serving.url, { body: '{"jsonrpc":' }), 400, 'Bad Request: the request body is not JSON')
    expectRefused(await send(serving.url, { body: '' }), 400, 'Bad Request: the request body is not JSON')
    expect(serving.sessions()).toBe(0)
    const opened = await send(serving.url, { body: initBody('é-host') })
    expect(opened.status).toBe(200)
    expect(typeof opened.headers['mcp-session-id']).toBe('string')
    expect(serving.sessions()).toBe(1)
  })

  it('takes a body of exactly 4 MiB, and answers one a byte longer with a 413, opening no session', async () => {
    const made: Array<Server> = []
    const serving = await serve({ port: 0 }, factory(made))
    const base = initBody('')
    const exact = initBody('x'.repeat(MAX_BODY - Buffer.byteLength(base)))
    expect(Buffer.byteLength(exact)).toBe(MAX_BODY)
    expect((await send(serving.url, { body: exact })).status).toBe(200)
    expect(serving.sessions()).toBe(1)
    const over = initBody('x'.repeat(MAX_BODY - Buffer.byteLength(base) + 1))
    expectRefused(
      await send(serving.url, { body: over }),
      413,
      'Payload Too Large: the request body is larger than 4 MiB',
    )
    // far over, and sent in chunks without a length: drained, not kept, and the same answer
    expectRefused(
      await send(serving.url, { body: 'x'.repeat(3 * MAX_BODY), headers: { 'transfer-encoding': 'chunked' } }),
      413,
      'Payload Too Large: the request body is larger than 4 MiB',
    )
    expect(serving.sessions()).toBe(1)
    expect(made).toHaveLength(1)
    // it goes on serving
    expect((await send(serving.url)).status).toBe(200)
  })

  it("within a session: a message is answered; one that is not JSON gets the SDK's parse error; one over 4 MiB a 413", async () => {
    const serving = await serve({ port: 0 })
    const opened = await send(serving.url, { body: initBody() })
    const inSession = {
      'mcp-session-id': opened.headers['mcp-session-id'] as string,
      'mcp-protocol-version': '2025-11-25',
    }
    const listed = await send(serving.url, {
      headers: inSession,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    })
    expect([listed.status, /"name":"hello"/.test(listed.body)]).toStrictEqual([200, true])
    const garbled = await send(serving.url, { headers: inSession, body: '{"jsonrpc":' })
    expect([garbled.status, (JSON.parse(garbled.body) as { error: { code: number } }).error.code]).toStrictEqual([
      400, -32700,
    ])
    expectRefused(
      await send(serving.url, { headers: inSession, body: 'x'.repeat(MAX_BODY + 1) }),
      413,
      'Payload Too Large: the request body is larger than 4 MiB',
    )
    expect(serving.sessions()).toBe(1)
  })

  it('keeps maxSessions open at most: one more initialize is a 503 with Retry-After, even in a burst; one that ends makes room', async () => {
    const made: Array<Server> = []
    const serving = await serve({ port: 0, maxSessions: 3 }, factory(made))
    const burst = await Promise.all(Array.from({ length: 10 }, () => send(serving.url)))
    expect(burst.filter((a) => a.status === 200)).toHaveLength(3)
    const refused = burst.filter((a) => a.status !== 200)
    expect(refused).toHaveLength(7)
    for (const a of refused) {
      expectRefused(a, 503, 'Service Unavailable: 3 sessions are open, the most this server keeps')
      expect(a.headers['retry-after']).toBe('5')
    }
    expect(serving.sessions()).toBe(3)
    expect(made).toHaveLength(3)
    const id = burst.find((a) => a.status === 200)?.headers['mcp-session-id'] as string
    expect((await send(serving.url, { method: 'DELETE', headers: { 'mcp-session-id': id } })).status).toBe(200)
    await until(() => serving.sessions() === 2)
    expect((await send(serving.url)).status).toBe(200)
    expect(serving.sessions()).toBe(3)
  })

  it('forgets a session whose server closed itself', async () => {
    const serving = await serve({ port: 0 }, () => {
      const server = factory()()
      server.oninitialized = () => void server.close()
      return server
    })
    await connectClient(serving.url)
    await until(() => serving.sessions() === 0)
    expect(serving.sessions()).toBe(0)
  })
})

describe('serveHttp: failures while answering', () => {
  it('a server that cannot be made is a 500 saying why', async () => {
    const serving = await serve({ port: 0 }, () => {
      throw new Error('no server today')
    })
    expectRefused(await send(serving.url), 500, 'Internal error: no server today')
    expect(serving.sessions()).toBe(0)
  })

  it('a failure after the answer began ends the answer as it stands, rather than leaving it open', async () => {
    const serving = await serve({ port: 0 }, () => {
      const server = factory()()
      const connect = server.connect.bind(server)
      server.connect = async (transport) => {
        await connect(transport)
        ;(transport as unknown as { handleRequest: () => Promise<Response> }).handleRequest = () => {
          let sent = false
          const body = new ReadableStream<Uint8Array>({
            pull: (controller) => {
              if (sent) return controller.error(new Error('broke mid-answer'))
              sent = true
              controller.enqueue(new TextEncoder().encode('partial'))
            },
          })
          return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/plain' } }))
        }
      }
      return server
    })
    const answer = await send(serving.url)
    expect([answer.status, answer.headers['content-type'], answer.body]).toStrictEqual([200, 'text/plain', 'partial'])
  })
})

describe('serveHttp: idle sessions (a fake clock)', () => {
  const idleFor = async (idleMs: number | undefined) => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const serving = await serve(idleMs === undefined ? { port: 0 } : { port: 0, idleMs })
    const { client } = await connectClient(serving.url)
    expect(serving.sessions()).toBe(1)
    return { serving, client }
  }

  it('idleMs 1000: checked every second; closed at the first check after more than 1000 ms idle', async () => {
    const { serving } = await idleFor(1000)
    vi.advanceTimersByTime(1000)
    expect(serving.sessions()).toBe(1)
    vi.advanceTimersByTime(999)
    expect(serving.sessions()).toBe(1)
    vi.advanceTimersByTime(1)
    expect(serving.sessions()).toBe(0)
  })

  it('a request keeps a session alive: idleness counts from its last request', async () => {
    const { serving, client } = await idleFor(1000)
    vi.advanceTimersByTime(1500)
    await client.listTools()
    vi.advanceTimersByTime(1499)
    expect(serving.sessions()).toBe(1)
    vi.advanceTimersByTime(1)
    expect(serving.sessions()).toBe(0)
  })

  it('idleMs 8000: checked every quarter of it', async () => {
    const { serving } = await idleFor(8000)
    vi.advanceTimersByTime(9999)
    expect(serving.sessions()).toBe(1)
    vi.advanceTimersByTime(1)
    expect(serving.sessions()).toBe(0)
  })

  it('by default: 30 minutes, checked every minute at most', async () => {
    const { serving } = await idleFor(undefined)
    vi.advanceTimersByTime(1_800_000)
    expect(serving.sessions()).toBe(1)
    vi.advanceTimersByTime(59_999)
    expect(serving.sessions()).toBe(1)
    vi.advanceTimersByTime(1)
    expect(serving.sessions()).toBe(0)
  })
})

describe('serveHttp: close', () => {
  it('closes every session and stops listening; twice is the same close', async () => {
    const made: Array<Server> = []
    const serving = await serveHttp(factory(made), { port: 0 })
    await connectClient(serving.url, 'a')
    await connectClient(serving.url, 'b')
    expect(serving.sessions()).toBe(2)
    const closedServers: Array<number> = []
    made.forEach((s, i) => {
      s.onclose = () => void closedServers.push(i)
    })
    const first = serving.close()
    expect(first).toBeInstanceOf(Promise)
    expect(serving.close()).toBe(first)
    await first
    expect(serving.sessions()).toBe(0)
    expect(closedServers.sort()).toStrictEqual([0, 1])
    await expect(send(serving.url)).rejects.toThrow(/ECONNREFUSED/)
  })

  it('does not wait for a client in the middle of a request: it cuts the connection', async () => {
    const serving = await serve({ port: 0 })
    const port = Number(new URL(serving.url).port)
    const socket = tcpConnect(port, '127.0.0.1')
    const received: Array<string> = []
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.on('error', () => undefined)
    socket.on('data', (c: Buffer) => received.push(c.toString('utf8')))
    // the server answers 100 Continue once it has taken the request; the rest of the body never comes
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n`,
    )
    await until(() => received.join('').includes('100 Continue'))
    socket.write('{"jsonrpc":')
    await serving.close()
    await ended
    expect(received.join('')).toBe('HTTP/1.1 100 Continue\r\n\r\n')
  })

  it('leaves no timer behind, once closed or when it cannot listen', async () => {
    const first = await serve({ port: 0 })
    const port = Number(new URL(first.url).port)
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    const serving = await serve({ port: 0 })
    await connectClient(serving.url)
    // the fake clock sees what this serving keeps running
    expect(vi.getTimerCount()).toBeGreaterThan(0)
    await serving.close()
    expect(vi.getTimerCount()).toBe(0)
    await expect(serveHttp(factory(), { port })).rejects.toThrow(
      new Error(`port ${port} on 127.0.0.1 is already in use`),
    )
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('serveHttp: resumable streams', () => {
  // one SSE event's fields, as a client reads them
  interface SseEvent {
    readonly id?: string
    readonly retry?: string
    readonly data: string
  }
  const readEvents = async (
    body: ReadableStream<Uint8Array>,
    enough: (events: ReadonlyArray<SseEvent>) => boolean,
  ): Promise<ReadonlyArray<SseEvent>> => {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader()
    const events: Array<SseEvent> = []
    let buffer = ''
    while (!enough(events)) {
      const { value, done } = await reader.read()
      if (done) break
      buffer += value
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const fields = new Map<string, string>()
        for (const line of buffer.slice(0, end).split('\n')) {
          const at = line.indexOf(':')
          if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).replace(/^ /, ''))
        }
        buffer = buffer.slice(end + 2)
        if (fields.size > 0)
          events.push({
            ...(fields.has('id') ? { id: fields.get('id') as string } : {}),
            ...(fields.has('retry') ? { retry: fields.get('retry') as string } : {}),
            data: fields.get('data') ?? '',
          })
      }
    }
    await reader.cancel().catch(() => undefined)
    return events
  }

  // a host of protocol version 2025-11-25, the first that resumes streams, opening a session
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  }
  const initialize = (url: string): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    })

  it('each stream opens with a priming event (an id, retry, no data); a host cut off mid-call reconnects with Last-Event-ID and gets the result; an unknown id is refused', async () => {
    const slow = (): Server => {
      const server = factory()()
      server.setRequestHandler(CallToolRequestSchema, async () => {
        await new Promise((r) => setTimeout(r, 300))
        return { content: [{ type: 'text', text: 'done' }] }
      })
      return server
    }
    const serving = await serve({ port: 0 }, slow)
    const init = await initialize(serving.url)
    const session = init.headers.get('mcp-session-id') ?? ''
    await init.body?.cancel()
    const inSession = { ...headers, 'mcp-session-id': session }
    await fetch(serving.url, {
      method: 'POST',
      headers: inSession,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    const cut = new AbortController()
    const call = await fetch(serving.url, {
      method: 'POST',
      headers: inSession,
      signal: cut.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hello', arguments: {} } }),
    })
    expect(call.headers.get('content-type')).toContain('text/event-stream')
    const [priming] = await readEvents(call.body as ReadableStream<Uint8Array>, (es) => es.length >= 1)
    expect(priming?.data).toBe('')
    expect(priming?.retry).toBe('1000')
    expect(priming?.id).toMatch(/.+/)
    // the host loses the stream before the result
    cut.abort()
    await new Promise((r) => setTimeout(r, 400))
    const resumed = await fetch(serving.url, {
      method: 'GET',
      headers: { ...inSession, accept: 'text/event-stream', 'last-event-id': priming?.id ?? '' },
    })
    expect(resumed.status).toBe(200)
    const replayed = await readEvents(resumed.body as ReadableStream<Uint8Array>, (es) => es.some((e) => e.data !== ''))
    const result = replayed.find((e) => e.data !== '')
    expect(JSON.parse(result?.data ?? '{}')).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'done' }] },
    })
    const unknown = await fetch(serving.url, {
      method: 'GET',
      headers: { ...inSession, accept: 'text/event-stream', 'last-event-id': 'nope_1' },
    })
    expect(unknown.status).toBe(400)
    await unknown.body?.cancel()
  })

  it('resumable: false: a stream opens with the answer itself, no priming event and no id, and nothing can be resumed', async () => {
    const serving = await serve({ port: 0, resumable: false })
    const init = await initialize(serving.url)
    const inSession = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') ?? '' }
    const initEvents = await readEvents(init.body as ReadableStream<Uint8Array>, () => false)
    expect(initEvents.map((e) => [e.id, e.retry, (JSON.parse(e.data) as { id?: unknown }).id])).toEqual([
      [undefined, undefined, 0],
    ])
    const list = await fetch(serving.url, {
      method: 'POST',
      headers: inSession,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    const events = await readEvents(list.body as ReadableStream<Uint8Array>, () => false)
    expect(events).toEqual([
      {
        data: JSON.stringify({
          result: { tools: [{ name: 'hello', inputSchema: { type: 'object' } }] },
          jsonrpc: '2.0',
          id: 1,
        }),
      },
    ])
  })
})

describe('boundedEventStore', () => {
  const message = (n: number, pad = 0) => ({ jsonrpc: '2.0' as const, id: n, method: 'x'.repeat(1 + pad) })
  const size = (n: number, pad: number): number => JSON.stringify(message(n, pad)).length

  it('replays the events of the same stream after an id in the window, in order; an id outside it is unknown', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ stream: fc.constantFrom('a', 'b'), pad: fc.nat(60) }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 40, max: 400 }),
        fc.nat(),
        async (sent, maxEvents, maxBytes, pick) => {
          const store = boundedEventStore({ maxEvents, maxBytes })
          const ids: Array<string> = []
          for (const [i, e] of sent.entries()) ids.push(await store.storeEvent(e.stream, message(i, e.pad)))
          // the oracle: of the events small enough to keep, the longest suffix within both bounds
          const kept = sent.map((e, i) => ({ ...e, i, bytes: size(i, e.pad) })).filter((e) => e.bytes <= maxBytes)
          const window: typeof kept = []
          let bytes = 0
          for (const e of [...kept].reverse()) {
            if (window.length === maxEvents || bytes + e.bytes > maxBytes) break
            window.unshift(e)
            bytes += e.bytes
          }
          if (sent.length === 0) return
          const k = pick % sent.length
          const inWindow = window.find((e) => e.i === k)
          const got: Array<unknown> = []
          const replay = store.replayEventsAfter(ids[k] as string, { send: async (_, m) => void got.push(m) })
          if (inWindow === undefined) {
            await expect(replay).rejects.toThrow(/no such event/)
            expect(await store.getStreamIdForEventId?.(ids[k] as string)).toBe(undefined)
            return
          }
          expect(await replay).toBe(inWindow.stream)
          expect(got).toEqual(
            window.filter((e) => e.i > k && e.stream === inWindow.stream).map((e) => message(e.i, e.pad)),
          )
        },
      ),
    )
  })
})

describe('serveHttp: connections', () => {
  // a raw connection: resolves once the server has taken it (a request answered on it), with a way to see it closed
  const socketTo = (url: string) => {
    const { hostname, port } = new URL(url)
    const socket = tcpConnect(Number(port), hostname)
    let data = ''
    socket.setEncoding('utf8').on('data', (s: string) => (data += s))
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => undefined)
    return { socket, closed, data: () => data }
  }
  const healthz = async (s: ReturnType<typeof socketTo>, host: string): Promise<void> => {
    s.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
    const until = Date.now() + 5000
    while (!s.data().includes('alive') && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
  }

  it('keeps maxConnections open at most: one more is closed at once, said once; a connection let go makes room', async () => {
    const notices: Array<string> = []
    const serving = await serve({ port: 0, maxConnections: 3, onNotice: (m) => void notices.push(m) })
    const host = new URL(serving.url).host
    const held = [socketTo(serving.url), socketTo(serving.url), socketTo(serving.url)]
    for (const s of held) await healthz(s, host)
    expect(held.every((s) => s.data().includes('200 OK'))).toBe(true)
    const extra = [socketTo(serving.url), socketTo(serving.url)]
    await Promise.all(extra.map((s) => s.closed))
    expect(extra.map((s) => s.data())).toEqual(['', ''])
    expect(notices).toEqual([
      '3 connections are open, the most this server keeps; refusing more (said at most once a minute)',
    ])
    held[0]?.socket.destroy()
    await held[0]?.closed
    await new Promise((r) => setTimeout(r, 50))
    const again = socketTo(serving.url)
    await healthz(again, host)
    expect(again.data()).toContain('200 OK')
    for (const s of [...held, again]) s.socket.destroy()
  })

  it('closes a connection whose headers do not come within headersTimeoutMs (408)', async () => {
    const serving = await serve({ port: 0, headersTimeoutMs: 300 })
    const slow = socketTo(serving.url)
    slow.socket.write(`POST /mcp HTTP/1.1\r\nHost: ${new URL(serving.url).host}\r\nX-Half: `)
    const t0 = Date.now()
    await slow.closed
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(slow.data()).toMatch(/^HTTP\/1\.1 408/)
  })

  it('by default, keeps as many connections as the file limit allows, less a quarter (and at least RESERVED_FILES) for the rest of the process', () => {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    const n = Number(limit)
    const expected =
      limit === undefined ? 768 : Math.max(16, Math.min(100_000, Math.floor(n * 0.75), n - RESERVED_FILES))
    expect(defaultMaxConnections()).toBe(expected)
  })

  it('whatever the limit, leaves a quarter of it and at least RESERVED_FILES files, keeping 16 to 100,000 connections', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (limit) => {
        const n = maxConnectionsFor(limit)
        expect(n >= 16 && n <= 100_000).toBe(true)
        // a limit that leaves room for 16 connections leaves the rest its quarter and its reserve
        if (n > 16) expect(limit - n).toBeGreaterThanOrEqual(Math.max(RESERVED_FILES, limit / 4))
        // and no fewer connections than that allows
        if (n < 100_000) expect(n + 1 > Math.min(limit * 0.75, limit - RESERVED_FILES)).toBe(true)
      }),
    )
    for (const unread of [undefined, 0, -1, Number.NaN]) expect(maxConnectionsFor(unread)).toBe(768)
    expect(maxConnectionsFor(Infinity)).toBe(100_000)
  })
})
