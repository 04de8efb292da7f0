/**
 * toolstack: pure, composable combinators for LLM tool calling over MCP.
 * Re-exports only; nothing runs at import.
 *
 * The root holds what a user composes with. What adapter authors need besides
 * (batches, audit sessions, the approval bridge) is in `toolstack/extend`.
 *
 * @since 0.1.0
 */
// the provider model
export type { Args, ArgsProblem, Batch, BatchProvider, Provider, ToolCall, ToolDeclaration, ToolResult } from './model.js'
export { REASON_PARAM } from './model.js'
export { drawArgsProblem, parseArgs } from './Args.js'

// providers
export type { AsyncProvider, LocalTool } from './Provider.js'
export { fromAsync, fromTools, isProviderFailure, toAsync } from './Provider.js'

// combinators, their options and the providers they make
export type { AuditDiagnostic, AuditedProvider, UnknownKeyAuditOptions } from './UnknownKeys.js'
export { drawAuditDiagnostic, withUnknownKeyAudit } from './UnknownKeys.js'
export type { ReasonedProvider, ReasonsOptions } from './Reasons.js'
export { withReasons } from './Reasons.js'
export type { RegistryEntry, RegistryError } from './Registry.js'
export { drawRegistryError, registry } from './Registry.js'
export type { PolicyDecision, PolicyDiagnostic, PolicyOptions, PolicyProvider } from './Policy.js'
export { defaultRules, drawPolicyDiagnostic, readOnlyRules, withPolicy } from './Policy.js'

// what the audit says
export type { UnknownKeyWarning } from './audit/Check.js'
export { formatWarning } from './audit/Check.js'
export type { Suggestion } from './Suggest.js'
export type { PairStat } from './audit/SeenSet.js'

// the audit's named pure steps (parseArgs above)
export { extractDeclarations } from './audit/Catalogue.js'
export { compileSchema, diffKeys, pathOf } from './audit/Schema.js'
export { emptySeenSet, emptySeenSetOf, firstSeen } from './audit/SeenSet.js'

// the policy's rules, questions and refusals
export type { Rule } from './policy/Rule.js'
export { decodeRules, drawRule } from './policy/Rule.js'
export type { Roots } from './policy/paths.js'
export type { OnAsk } from './policy/ask.js'
export type { PermissionAnswer, PermissionRequest } from './policy/Answer.js'
export { drawPermissionRequest } from './policy/Answer.js'
export type { Refusal } from './policy/Refusal.js'
export { drawRefusal } from './policy/Refusal.js'
export { newQuestionQueue } from './policy/questions.js'
