// listServer, the audit's own listing of a server the CLI starts or reaches: over Streamable HTTP and SSE against
// loopback servers of the test's (an SDK Server listing in pages), and over stdio against a fixture process.
// No Claude CLI is started: the real sessions are in session.test.ts.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
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
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    headers.push(req.headers)
    if (kind === 'http') {
      const transport = new StreamableHTTPServerTransport({})
      await lowLevelServer(TOOLS, 2).connect(transport)
      return transport.handleRequest(req, res)
    }
    if (req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res)
      sse.set(transport.sessionId, transport)
      return lowLevelServer(TOOLS, 2).connect(transport)
    }
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? ''
    return sse.get(id)?.handlePostMessage(req, res)
  }
  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  closers.push(() => (server.closeAllConnections(), server.close()))
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/${kind === 'sse' ? 'sse' : 'mcp'}`
  return { url, headers }
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
    const out = observedServers({ stdio, noInstance } as never, () => undefined)
    expect(out['stdio']).toBe(stdio)
    expect(out['noInstance']).toBe(noInstance)
  })
})
