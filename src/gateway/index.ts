/**
 * toolstack/gateway: what `toolstack serve` is made of, for code that runs a gateway itself — upstreams
 * supervised, their tools, resources and prompts served as one namespace, configuration read and reloaded,
 * metrics, and the stores replicas share. Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './upstream.js'
export * from './config.js'
export * from './gateway.js'
export * from './metrics.js'
export * from './page.js'
export type { Heard, HeardPair, Pending, PendingQuestion, RecentDecision } from './heard.js'
export { MAX_HEARD_PAIRS, MAX_PENDING, MAX_RECENT } from './heard.js'
export type { CallOutcome, ObservedCall } from './observed.js'
export * from './reload.js'
export type { Curation } from './listed.js'
export * from './catalog.js'
export type { GatewayStore, PairCount, StoreOptions } from './stores/store.js'
export { grantId, grantText, shownStoreUrl } from './stores/store.js'
export * from './stores/memoryStore.js'
export type { StoreFile } from './stores/fileStore.js'
export { MAX_REVOKED, STORE_FILE_VERSION, decodeStoreFile, encodeStoreFile, fileStore } from './stores/fileStore.js'
export * from './stores/openStore.js'
// the read-only rules, for the gateway's configurations (`toolstack init` writes them)
export { readOnlyRules } from '../combinators/Policy.js'
