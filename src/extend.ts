/**
 * toolstack/extend: for authors of adapters and layers, not for composing a stack.
 * What the framework adapters (`toolstack/ai-sdk`, `/openai-agents`, `/langchain`,
 * `/mcp`) and the `toolstack` command build on: the batch that carries one parse of
 * each call down a stack, the construction check every layer makes, an audit session
 * fed with a framework's own calls, the audit's catalogue and one-call check, and the
 * bridge between a policy's rules and a framework's tool approval.
 * Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
// the model, for those who build providers and layers
export type { ContentBlock, JsonSchema } from './model.js'
export { assertProvider, isProvider } from './model.js'
export { batchOf, derive, runBatch } from './Batch.js'
export { noneAsEmpty } from './Args.js'
export type { ProviderFailure, ToolOutput } from './Provider.js'
export { providerFailure } from './Provider.js'

// the audit, fed by a framework's own calls or by a command
export type { AuditSession } from './UnknownKeys.js'
export { auditSessions } from './UnknownKeys.js'
export type { Catalogue } from './audit/Catalogue.js'
export { catalogueOf, emptyCatalogue, toleratedOf } from './audit/Catalogue.js'
export type { Check } from './audit/Check.js'
export { checkCall } from './audit/Check.js'
export type { SeenSet } from './audit/SeenSet.js'
export { pairStats } from './audit/SeenSet.js'

// the policy, as a framework's tool approval
export type { ApprovalBridge, PolicyApprovalOptions } from './policy/approvals.js'
export { approvalBridge } from './policy/approvals.js'
export type { Evaluation } from './policy/evaluate.js'
export { evaluate } from './policy/evaluate.js'
export type { Shown } from './policy/Answer.js'
export { showText } from './policy/Answer.js'
