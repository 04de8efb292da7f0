/**
 * toolstack/extend: for authors of adapters and layers, not for composing a stack. What the framework
 * adapters (`toolstack/ai-sdk`, `/openai-agents`, `/langchain`, `/anthropic`, `/google`, `/claude-agent`,
 * `/mcp`) and the `toolstack` command build on: the batch that carries one parse of each call down a stack,
 * the construction check every layer makes, an audit session fed with a framework's own calls, the audit's
 * catalogue and one-call check, and the bridge between a policy's rules and a framework's tool approval.
 * Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
// the model, for those who build providers and layers
export type { ContentBlock, JsonSchema } from './kernel/model.js'
export { assertProvider, isProvider } from './kernel/model.js'
export type { CallReads } from './kernel/model.js'
export { batchOf, derive, readsBatches, runBatch } from './steps/Batch.js'
export { argsObject, noneAsEmpty } from './steps/Args.js'
export type { ProviderFailure, ToolOutput } from './combinators/Provider.js'
export { providerFailure } from './combinators/Provider.js'

// the audit, fed by a framework's own calls or by a command
export type { AuditMemory, AuditSession, SharedUnknownKeyAudit } from './combinators/UnknownKeys.js'
export { auditSessions } from './combinators/UnknownKeys.js'
export type { Catalogue } from './steps/audit/Catalogue.js'
export { catalogueOf, emptyCatalogue, toleratedOf } from './steps/audit/Catalogue.js'
export { cleanText } from './steps/audit/Schema.js'
export type { Check, ReportedKey } from './steps/audit/Check.js'
export type { Segment } from './steps/audit/Schema.js'
export { checkCall } from './steps/audit/Check.js'
export type { PairStat, SeenSet } from './steps/audit/SeenSet.js'
export { pairStats } from './steps/audit/SeenSet.js'

// grants held outside one policy layer (a gateway's store)
export type { SharedGrants } from './combinators/Policy.js'

// the policy, as a framework's tool approval
export type { ApprovalBridge, PolicyApprovalOptions } from './steps/policy/approvals.js'
export { approvalBridge } from './steps/policy/approvals.js'
export type { Evaluation } from './steps/policy/evaluate.js'
export { evaluate } from './steps/policy/evaluate.js'

// where a location leads, for a policy that shares the server's filesystem (withPolicy's `resolver`)
export type { LocationResolver, ResolverFs, ResolverOptions } from './kernel/resolve.js'
export { filesystemResolver, lexicalResolver } from './kernel/resolve.js'
export type { Shown } from './steps/policy/Answer.js'
export { showText } from './steps/policy/Answer.js'

// pinned tool definitions (withDefinitionPins, at the root): its options, the provider it makes, what it says,
// where its pins are kept, and the steps a gateway or a page reads them with
export type { DefinitionPinsOptions, PinnedProvider } from './combinators/Pins.js'
export { newPinMemory } from './combinators/Pins.js'
export type { DefinitionEvent } from './steps/pins/Events.js'
export { drawDefinitionEvent, drawDriftRefusal } from './steps/pins/Events.js'
export type { PinBook, PinMemory } from './steps/pins/Book.js'
export { bookEntries } from './steps/pins/Book.js'
export type { Pin, ToolDefinition } from './steps/pins/Definition.js'
export { definitionOf, hashDefinition } from './steps/pins/Definition.js'
export type { DefinitionChange } from './steps/pins/Diff.js'
export { diffDefinitions, drawChange } from './steps/pins/Diff.js'
export type { Flag, FlagRule } from './steps/pins/Flags.js'
export { FLAG_RULES, drawFlag, flagDefinition } from './steps/pins/Flags.js'
export type { DefinitionNotice, DriftAction, ServerOf, Standing } from './steps/pins/Review.js'
