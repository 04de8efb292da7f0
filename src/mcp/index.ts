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
export * from './sendable.js'
export * from './page.js'
export type { Heard, HeardPair, RecentDecision } from './heard.js'
export { MAX_HEARD_PAIRS, MAX_RECENT } from './heard.js'
export type { CallOutcome, ObservedCall } from './observed.js'
export * from './reload.js'
export * from './relay.js'
export type { McpCallContext, McpHostRequest, McpProgress } from '../kernel/model.js'
export type { Curation } from './listed.js'
export * from './catalog.js'
export type { GatewayStore, PairCount, StoreOptions } from './store.js'
export { grantId, grantText, shownStoreUrl } from './store.js'
export * from './memoryStore.js'
export * from './fileStore.js'
export * from './openStore.js'
// the read-only rules, for the gateway's configurations (`toolstack init` writes them)
export { readOnlyRules } from '../combinators/Policy.js'
