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
export type {
  Args,
  ArgsProblem,
  Batch,
  BatchProvider,
  Provider,
  ToolCall,
  ToolDeclaration,
  ToolResult,
} from './kernel/model.js'
export { REASON_PARAM } from './kernel/model.js'
export { drawArgsProblem, parseArgs } from './steps/Args.js'

// providers
export type { AsyncProvider, LocalTool } from './combinators/Provider.js'
export { fromAsync, fromTools, isProviderFailure, toAsync } from './combinators/Provider.js'

// combinators, their options and the providers they make
export type { AuditDiagnostic, AuditedProvider, UnknownKeyAuditOptions } from './combinators/UnknownKeys.js'
export { drawAuditDiagnostic, sharedUnknownKeyAudit, withUnknownKeyAudit } from './combinators/UnknownKeys.js'
export type { ReasonedProvider, ReasonsOptions } from './combinators/Reasons.js'
export { withReasons } from './combinators/Reasons.js'
export type { RegistryEntry, RegistryError } from './combinators/Registry.js'
export { drawRegistryError, registry } from './combinators/Registry.js'
export type { PolicyDecision, PolicyDiagnostic, PolicyOptions, PolicyProvider } from './combinators/Policy.js'
export { defaultRules, drawPolicyDiagnostic, readOnlyRules, withPolicy } from './combinators/Policy.js'
// its options, the provider it makes and what it says are in toolstack/extend (the root holds 60 names at most)
export { withDefinitionPins } from './combinators/Pins.js'

// what the audit reports
export type { UnknownKeyWarning } from './steps/audit/Check.js'
export { formatWarning } from './steps/audit/Check.js'
export type { Suggestion } from './kernel/Suggest.js'

// the audit's named pure steps (parseArgs above)
export { extractDeclarations } from './steps/audit/Catalogue.js'
export { compileSchema, diffKeys, pathOf } from './steps/audit/Schema.js'
export { emptySeenSet, emptySeenSetOf, firstSeen } from './steps/audit/SeenSet.js'

// the policy's rules, questions and refusals
export type { Rule } from './steps/policy/Rule.js'
export { decodeRules, drawRule } from './steps/policy/Rule.js'
export type { Roots } from './kernel/paths.js'
export type { OnAsk } from './steps/policy/ask.js'
export type { PermissionAnswer, PermissionRequest } from './steps/policy/Answer.js'
export { drawPermissionRequest } from './steps/policy/Answer.js'
export type { Refusal } from './steps/policy/Refusal.js'
export { drawRefusal } from './steps/policy/Refusal.js'
export { newQuestionQueue } from './steps/policy/questions.js'
