/**
 * toolstack/mcp: the MCP adapters — providers over `@modelcontextprotocol/sdk` clients (a process over stdio or a
 * URL), a provider served as an MCP server (stdio or Streamable HTTP), and the content and names they translate.
 * A separate entry point, so the core never loads the SDK. The gateway built from them is `toolstack/gateway`.
 * Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './client.js'
export * from './content.js'
export * from './names.js'
export * from './stdio.js'
export * from './watchdog.js'
export * from './server.js'
export * from './served.js'
export * from './serve.js'
export * from './relay.js'
export * from './logging.js'
export * from './sendable.js'
export * from './fetch.js'
export type { McpCallContext, McpHostRequest, McpLogMessage, McpProgress } from '../kernel/model.js'
