/**
 * toolstack: pure, composable combinators for LLM tool calling over MCP.
 * Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
// the provider model
export * from './model.js'
export * from './Args.js'
export { batchOf, derive, runBatch } from './Batch.js'

// the audit's pure steps, shared by the combinator, the adapters and the command
export * from './audit/Schema.js'
export * from './audit/Catalogue.js'
export * from './audit/SeenSet.js'
export * from './audit/Check.js'
export * from './Suggest.js'

// the policy's pieces
export * from './policy/Rule.js'
export * from './policy/evaluate.js'
export * from './policy/paths.js'
export * from './policy/Refusal.js'
export * from './policy/Answer.js'
export * from './policy/Verdict.js'
export * from './policy/questions.js'
export type { OnAsk } from './policy/ask.js'
export { askHuman, requestFor } from './policy/ask.js'
export * from './policy/listing.js'
export * from './policy/approvals.js'

// providers and combinators
export * from './Provider.js'
export * from './UnknownKeys.js'
export * from './Reasons.js'
export * from './Registry.js'
export * from './Policy.js'
