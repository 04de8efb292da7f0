/**
 * toolstack: pure, composable combinators for LLM tool calling over MCP.
 * Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './Provider.js'
export * from './Args.js'
export * from './UnknownKeys.js'
export * from './Reasons.js'
export * from './Registry.js'
export * from './Policy.js'
export * from './Suggest.js'
