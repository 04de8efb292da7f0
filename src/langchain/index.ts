/**
 * toolstack/langchain: toolstack stacks as LangChain tools, and the unknown-key audit as a `createAgent`
 * middleware and as a callback handler for a user's own tools. A separate entry point, so the core never
 * loads LangChain. Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './tools.js'
export * from './middleware.js'
export type { LangChainAuditOptions } from './events.js'
