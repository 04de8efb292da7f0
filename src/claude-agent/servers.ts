/**
 * Where the audit learns the schemas of the MCP tools a Claude Agent SDK session can call. The CLI the SDK
 * starts lists the servers itself, so their listings never pass through the host: an in-process server
 * (`createSdkMcpServer`, `type: 'sdk'`) is connected by the SDK to a transport of its own, whose `tools/list`
 * results are read on their way to the CLI (the very listing the model is shown); a server the CLI starts or
 * reaches (stdio, HTTP, SSE) is listed once more, by an MCP client of this module's, when the audit is made.
 *
 * @since 0.1.0
 */
import type { McpServerConfig } from '@anthropic-ai/claude-agent-sdk'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { cut, describeError, escapeControls, missingPackageError } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A tool as an MCP server lists it: its name and its input schema, as they came.
 *
 * @since 0.1.0
 * @category model
 */
export interface ListedTool {
  readonly name: string
  readonly inputSchema: unknown
}

/** Called with each page of tools a server lists. */
export type OnListing = (server: string, tools: ReadonlyArray<ListedTool>) => void

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The name the CLI gives an MCP server's tool: `mcp__<server>__<tool>`, each part with every character but
 * letters, digits, `_` and `-` replaced by `_`.
 *
 * @example
 * import { mcpToolName } from './servers.js'
 * assert.strictEqual(mcpToolName('my notes', 'search.v2'), 'mcp__my_notes__search_v2')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const mcpToolName = (server: string, tool: string): string =>
  `mcp__${server.replace(/[^a-zA-Z0-9_-]/g, '_')}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`

/** The tools of a `tools/list` result, or `undefined` for any other message. */
export const listedTools = (message: unknown): ReadonlyArray<ListedTool> | undefined => {
  const tools = memberOf(memberOf(message, 'result'), 'tools')
  if (!Array.isArray(tools)) return undefined
  const out: Array<ListedTool> = []
  for (const t of tools as ReadonlyArray<unknown>) {
    const name = memberOf(t, 'name')
    if (typeof name === 'string') out.push({ name, inputSchema: memberOf(t, 'inputSchema') })
  }
  return out
}

// -------------------------------------------------------------------------------------
// in-process servers
// -------------------------------------------------------------------------------------

// a member of a wrapped object as its own code would see it: a method bound to the object itself (its private
// fields are the object's, not the Proxy's), any other value as it is
const bound = (target: object, value: unknown): unknown =>
  typeof value === 'function' ? (value as (...a: Array<unknown>) => unknown).bind(target) : value

// the transport the SDK connects a server to, its messages to the CLI read on their way (the same objects)
const observedTransport = (transport: Transport, heard: (message: JSONRPCMessage) => void): Transport => {
  const send: Transport['send'] = (message, options) => {
    try {
      heard(message)
    } catch {
      // the audit adds no failure of its own
    }
    return transport.send(message, options)
  }
  return new Proxy(transport, {
    get: (target, key) => (key === 'send' ? send : bound(target, Reflect.get(target, key, target))),
    set: (target, key, value) => Reflect.set(target, key, value, target),
  })
}

const isSdkServer = (config: unknown): config is Extract<McpServerConfig, { readonly type: 'sdk' }> =>
  memberOf(config, 'type') === 'sdk' && isRecord(memberOf(config, 'instance'))

/**
 * The servers as the SDK takes them: each in-process server a new entry whose `instance` reports every
 * `tools/list` result it sends to the CLI; every other entry the same object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const observedServers = (
  servers: Readonly<Record<string, McpServerConfig>>,
  onListing: OnListing,
): Record<string, McpServerConfig> => {
  const out: Record<string, McpServerConfig> = {}
  for (const [name, config] of Object.entries(servers)) {
    if (!isSdkServer(config)) {
      out[name] = config
      continue
    }
    const heard = (message: JSONRPCMessage): void => {
      const tools = listedTools(message)
      if (tools !== undefined) onListing(name, tools)
    }
    const server = config.instance
    const connect = (transport: Transport) => server.connect(observedTransport(transport, heard))
    const instance = new Proxy(server, {
      get: (target, key) => (key === 'connect' ? connect : bound(target, Reflect.get(target, key, target))),
    })
    out[name] = { ...config, instance }
  }
  return out
}

// -------------------------------------------------------------------------------------
// servers the CLI starts
// -------------------------------------------------------------------------------------

const MCP_SDK = '@modelcontextprotocol/sdk'
// a server's name as an error shows it: quoted, cut, its control characters escaped
const shown = (name: string): string => escapeControls(JSON.stringify(cut(name, 80)))
// a server that does not answer does not hold the host's start-up for ever
const LIST_TIMEOUT_MS = 30_000

const loadClient = async () => {
  try {
    const [client, stdio, http, sse] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/sse.js'),
    ])
    return { client, stdio, http, sse }
  } catch (e) {
    throw missingPackageError('toolstack/claude-agent: listing an MCP server', MCP_SDK, [MCP_SDK], e)
  }
}

/**
 * Lists a server the CLI starts or reaches (stdio, HTTP, SSE) with an MCP client of its own: connects, lists
 * every page of its tools, and closes (a stdio server is started for it, and ended). `undefined` for an
 * in-process server, which is heard instead. Rejects, naming the server, when it cannot be listed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listServer = async (
  name: string,
  config: McpServerConfig,
): Promise<ReadonlyArray<ListedTool> | undefined> => {
  if (memberOf(config, 'type') === 'sdk') return undefined
  const { client, stdio, http, sse } = await loadClient()
  const c = config as Exclude<McpServerConfig, { readonly type: 'sdk' }>
  const transport =
    c.type === 'http'
      ? new http.StreamableHTTPClientTransport(new URL(c.url), { requestInit: { headers: c.headers ?? {} } })
      : c.type === 'sse'
        ? new sse.SSEClientTransport(new URL(c.url), { requestInit: { headers: c.headers ?? {} } })
        : new stdio.StdioClientTransport({
            command: c.command,
            args: c.args ?? [],
            ...(c.env === undefined ? {} : { env: c.env }),
            stderr: 'ignore',
          })
  const mcp = new client.Client({ name: 'toolstack-claude-agent', version: '0.1.0' })
  try {
    await mcp.connect(transport, { timeout: LIST_TIMEOUT_MS })
    const tools: Array<ListedTool> = []
    let cursor: string | undefined
    do {
      const page = await mcp.listTools(cursor === undefined ? {} : { cursor }, { timeout: LIST_TIMEOUT_MS })
      tools.push(...(listedTools({ result: page }) ?? []))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return tools
  } catch (e) {
    throw new Error(`toolstack/claude-agent: the MCP server ${shown(name)} could not be listed: ${describeError(e)}`)
  } finally {
    await mcp.close().catch(() => undefined)
  }
}
