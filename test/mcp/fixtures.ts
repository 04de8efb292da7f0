// MCP servers for tests: in-process ones over linked in-memory transports, and real
// ones started as child processes, each closed (and killed if need be) after its test.
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach } from 'vitest'
import type { StdioConnection, StdioServerCommand } from '../../src/mcp/index.js'
import { connectStdio } from '../../src/mcp/index.js'

const require = createRequire(import.meta.url)

/** The scripts of the real servers, run with this very Node: no `npx` wrapper to outlive a kill. */
export const FILESYSTEM_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
export const EVERYTHING_SERVER = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
export const FAULTY_SERVER = fileURLToPath(new URL('./fixtures/faulty-server.mjs', import.meta.url))

export interface Linked {
  readonly client: Client
  readonly close: () => Promise<void>
}

/** A v1 `Client` connected in-process to `server`. */
export const linked = async (server: McpServer | Server): Promise<Linked> => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'toolstack-test', version: '0.0.0' })
  await client.connect(clientSide)
  return {
    client,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}

/** A raw tool as a server lists it. */
export interface RawTool {
  readonly name: string
  readonly description?: string
  readonly inputSchema: unknown
  readonly annotations?: Record<string, unknown>
}

/**
 * A low-level `Server` that lists `tools` in pages of `pageSize` (cursor = the index
 * of the page's first tool) and answers every call with the tool's name and arguments.
 */
export const lowLevelServer = (tools: ReadonlyArray<RawTool>, pageSize = tools.length): Server => {
  const server = new Server({ name: 'low-level', version: '0.0.0' }, { capabilities: { tools: { listChanged: true } } })
  server.setRequestHandler(ListToolsRequestSchema, (req) => {
    const start = req.params?.cursor === undefined ? 0 : Number(req.params.cursor)
    const end = start + Math.max(1, pageSize)
    // the handler's return type is the SDK's strict Tool; these fixtures exist to list
    // what that type forbids, as real servers do
    return { tools: tools.slice(start, end) as never, ...(end < tools.length ? { nextCursor: String(end) } : {}) }
  })
  server.setRequestHandler(CallToolRequestSchema, (req) => ({
    content: [{ type: 'text', text: `${req.params.name} ${JSON.stringify(req.params.arguments ?? {})}` }],
  }))
  return server
}

/** Tools whose schemas the SDK client's `ListToolsResultSchema` rejects, next to an ordinary one. */
export const ODD_TOOLS: ReadonlyArray<RawTool> = [
  { name: 'plain', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
  {
    name: 'any_of',
    inputSchema: {
      anyOf: [
        { type: 'object', properties: { a: { type: 'string' } } },
        { type: 'object', properties: { b: { type: 'number' } } },
      ],
    },
  },
  {
    name: 'ref',
    inputSchema: { $ref: '#/$defs/args', $defs: { args: { type: 'object', properties: { q: { type: 'string' } } } } },
  },
  { name: 'boolean_props', inputSchema: { type: 'object', properties: { anything: true, nothing: false } } },
  { name: 'untyped', inputSchema: { properties: { x: { type: 'integer' } } } },
]

// ------------------------------------------------------------------------------------
// real processes
// ------------------------------------------------------------------------------------

const open: Array<StdioConnection> = []
const dirs: Array<string> = []

/** Starts a server process for this test; `afterEach` closes it (and kills it if need be). */
export const spawnServer = async (
  command: Omit<StdioServerCommand, 'command'> & { readonly script: string },
): Promise<StdioConnection> => {
  const { script, args, ...rest } = command
  const conn = await connectStdio({
    command: process.execPath,
    args: [script, ...(args ?? [])],
    stderr: 'ignore',
    graceMs: 1000,
    ...rest,
  })
  open.push(conn)
  return conn
}

/** A fresh temporary directory, removed after the test. */
export const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-mcp-'))
  dirs.push(dir)
  return dir
}

/** Every test file that spawns processes calls this once at top level. */
export const cleanUpAfterEach = (): void => {
  afterEach(async () => {
    const conns = open.splice(0)
    await Promise.all(conns.map((c) => c.close()))
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 5 })
  })
}

export { isAlive } from '../support/processes.js'

/** A result a server answered with one text block: the text, and the block kept as it came. */
export const answered = (id: string, text: string, extra: Readonly<Record<string, unknown>> = {}) => ({
  role: 'tool' as const,
  tool_call_id: id,
  content: text,
  mcp_content: [{ type: 'text', text }],
  ...extra,
})
