/**
 * toolstack/mcp: providers over `@modelcontextprotocol/sdk` clients. A separate entry
 * point, so the core never loads the SDK. Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './client.js'
export * from './content.js'
export * from './names.js'
export * from './stdio.js'
export * from './server.js'
export * from './serve.js'
export * from './upstream.js'
export * from './gateway.js'
export * from './metrics.js'
export type { CallOutcome, ObservedCall } from './observed.js'
export * from './reload.js'
export * from './relay.js'
export * from './logging.js'
export type { McpCallContext, McpHostRequest, McpLogMessage, McpProgress } from '../kernel/model.js'
export type { Curation } from './listed.js'
export * from './catalog.js'
export type { GatewayStore, PairCount, StoreOptions } from './store.js'
export { shownStoreUrl } from './store.js'
export * from './memoryStore.js'
export * from './fileStore.js'
export * from './openStore.js'
