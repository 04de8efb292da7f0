// listServer, the audit's own listing of a server the CLI starts or reaches: over Streamable HTTP and SSE against
// loopback servers of the test's (an SDK Server listing in pages), and over stdio against a fixture process.
// No Claude CLI is started: the real sessions are in session.test.ts.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { listServer, listedTools, observedServers } from '../../src/claude-agent/servers.js'
import type { RawTool } from '../mcp/fixtures.js'
import { lowLevelServer } from '../mcp/fixtures.js'

const WHOAMI = fileURLToPath(new URL('../mcp/fixtures/whoami-server.mjs', import.meta.url))

const closers: Array<() => void> = []
afterEach(() => {
  for (const c of closers.splice(0)) c()
})

const TOOLS: ReadonlyArray<RawTool> = [
  { name: 'a', inputSchema: { type: 'object', properties: { x: {} } } },
  { name: 'b', inputSchema: { type: 'object' } },
  { name: 'c', inputSchema: { type: 'object', properties: { y: {} } } },
]

// a loopback HTTP server answering MCP over Streamable HTTP (stateless) or SSE, listing TOOLS two a page; it keeps
// the headers of each request
const serving = async (kind: 'http' | 'sse') => {
  const headers: Array<IncomingMessage['headers']> = []
  const sse = new Map<string, SSEServerTransport>()
  const servers: Array<Server> = []
  let streams = 0 // SSE streams open
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    headers.push(req.headers)
    const server = lowLevelServer(TOOLS, 2)
    servers.push(server)
    if (kind === 'http') {
      const transport = new StreamableHTTPServerTransport({})
      await server.connect(transport)
      return transport.handleRequest(req, res)
    }
    if (req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res)
      sse.set(transport.sessionId, transport)
      streams++
      res.on('close', () => streams--)
      return server.connect(transport)
    }
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? ''
    return sse.get(id)?.handlePostMessage(req, res)
  }
  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  closers.push(() => (server.closeAllConnections(), server.close()))
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/${kind === 'sse' ? 'sse' : 'mcp'}`
  // the clientInfo of each initialize the servers answered
  const clients = () => servers.map((s) => s.getClientVersion()).filter((v) => v !== undefined)
  return { url, headers, clients, streams: () => streams }
}

describe('listServer', () => {
  it.each(['http', 'sse'] as const)('lists every page of a %s server, sending its headers', async (type) => {
    const { url, headers } = await serving(type)
    const tools = await listServer('remote', { type, url, headers: { 'x-token': 'secret' } })
    expect(tools).toEqual(TOOLS.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))
    expect(headers.length).toBeGreaterThan(0)
    expect(headers.every((h) => h['x-token'] === 'secret')).toBe(true)
    // without headers of its own
    expect(await listServer('remote', { type, url })).toHaveLength(3)
  })

  it.each(['http', 'sse'] as const)(
    'introduces itself to a %s server, and closes its connection once listed',
    async (type) => {
      const { url, clients, streams } = await serving(type)
      await listServer('remote', { type, url })
      expect(clients()).toEqual([{ name: 'toolstack-claude-agent', version: '0.1.0' }])
      await vi.waitFor(() => expect(streams()).toBe(0))
    },
  )

  it('starts a stdio server with its args and env and lists it; one that cannot be listed rejects, naming it', async () => {
    expect(await listServer('who', { type: 'stdio', command: process.execPath, args: [WHOAMI] })).toEqual([
      { name: 'whoami', inputSchema: { type: 'object' } },
    ])
    expect(await listServer('who', { command: process.execPath, args: [WHOAMI] })).toHaveLength(1)
    const refusing = { command: process.execPath, args: [WHOAMI], env: { WHOAMI_REFUSE: '1' } }
    await expect(listServer('who\u001b[2J', refusing)).rejects.toThrow(
      /^toolstack\/claude-agent: the MCP server "who\\u001b\[2J" could not be listed: .*no thanks/,
    )
  })

  it('answers undefined for an in-process server, which is heard instead', async () => {
    expect(await listServer('notes', { type: 'sdk', name: 'notes', instance: {} as never })).toBe(undefined)
  })

  it('cuts a long server name in its error at 80 characters', async () => {
    const name = 'n'.repeat(100)
    await expect(
      listServer(name, { command: process.execPath, args: [WHOAMI], env: { WHOAMI_REFUSE: '1' } }),
    ).rejects.toThrow(`the MCP server "${'n'.repeat(80)}…" could not be listed`)
  })
})

describe('listedTools', () => {
  it('reads the named tools of a tools/list result, as they came; anything else is no listing', () => {
    const schema = { type: 'object' }
    expect(
      listedTools({ result: { tools: [{ name: 'a', inputSchema: schema }, { name: 3 }, null, { name: 'b' }] } }),
    ).toEqual([
      { name: 'a', inputSchema: schema },
      { name: 'b', inputSchema: undefined },
    ])
    expect(listedTools({ result: { tools: [{ name: 'a', inputSchema: schema }] } })?.[0]?.inputSchema).toBe(schema)
    for (const m of [{ result: {} }, { result: { tools: 'x' } }, { method: 'tools/list' }, null])
      expect(listedTools(m)).toBe(undefined)
  })
})

describe('observedServers', () => {
  it('an entry that is not an in-process server with an instance is the same object', () => {
    const stdio = { command: 'x' }
    const noInstance = { type: 'sdk', name: 'n' }
    const notSdk = { type: 'http', url: 'http://127.0.0.1:1/mcp', instance: {} }
    const out = observedServers({ stdio, noInstance, notSdk } as never, () => undefined)
    expect(out['stdio']).toBe(stdio)
    expect(out['noInstance']).toBe(noInstance)
    expect(out['notSdk']).toBe(notSdk)
  })

  it('an in-process server and the transport it is connected to work as they did; only a listing it sends is reported', async () => {
    // a server and a transport whose methods read private fields (a method called on a Proxy of them would throw)
    class Transporter {
      readonly #sent: Array<unknown> = []
      readonly sessionId = 'session-1'
      start(): Promise<void> {
        return Promise.resolve()
      }
      send(message: unknown): Promise<void> {
        this.#sent.push(message)
        return Promise.resolve()
      }
      sent(): ReadonlyArray<unknown> {
        return this.#sent
      }
    }
    class InProcess {
      readonly #connected: Array<Transporter> = []
      readonly label = 'notes'
      connect(t: Transporter): Promise<void> {
        this.#connected.push(t)
        return Promise.resolve()
      }
      connected(): ReadonlyArray<Transporter> {
        return this.#connected
      }
    }
    const server = new InProcess()
    const listings: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const out = observedServers({ notes: { type: 'sdk', name: 'notes', instance: server as never } }, (name, tools) =>
      listings.push([name, tools]),
    )
    const instance = (out['notes'] as unknown as { instance: InProcess }).instance
    expect(instance.label).toBe('notes')
    const transport = new Transporter()
    await instance.connect(transport)
    expect(instance.connected()).toHaveLength(1)
    const observed = instance.connected()[0] as Transporter
    expect(observed.sessionId).toBe('session-1')
    await observed.start()
    const listing = { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'a', inputSchema: { type: 'object' } }] } }
    const other = { jsonrpc: '2.0', id: 2, result: { content: [] } }
    await observed.send(listing)
    await observed.send(other)
    expect(transport.sent()).toEqual([listing, other])
    expect(transport.sent()[0]).toBe(listing)
    expect(listings).toEqual([['notes', [{ name: 'a', inputSchema: { type: 'object' } }]]])
  })
})
