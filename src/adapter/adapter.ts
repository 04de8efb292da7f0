// What the framework adapters share. `toXTools` lists a provider's tools once (the first declaration
// of each name), makes each a framework tool, and sends each call down the stack alone; `auditX` lists
// a framework's own tools once for its audit. An adapter keeps only its framework's tool and failure shapes.
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../kernel/model.js'
import type { AuditSession } from '../combinators/UnknownKeys.js'
import { batchOf, runBatch } from '../steps/Batch.js'
import { providerFailure } from '../combinators/Provider.js'
import { answerFor } from '../steps/answer.js'
import { describeError, describeValue } from '../kernel/describe.js'
import { isRecord } from '../kernel/guards.js'
import type { Rule } from '../steps/policy/Rule.js'
import { drawRule } from '../steps/policy/Rule.js'

// -------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------

/** The bridge a human's approval in the framework crosses to reach `withPolicy`. */
export interface Approval {
  /** Runs `task` with `call` marked approved for the policy: that very call (its id, tool and arguments), no other. */
  readonly approvedWhile: <A>(call: ToolCall, task: () => Promise<A>) => Promise<A>
  /** Told the stack's listing, so the framework's own check reads each tool's declared locations as `withPolicy` does. */
  readonly listed?: (declarations: ReadonlyArray<unknown>) => void
}

/** The `approval` option; throws a `TypeError` naming `where` when the options are not an object. */
export const approvalOption = <A>(where: string, options: { readonly approval?: A } | undefined): A | undefined => {
  if (options !== undefined && !isRecord(options))
    throw new TypeError(`${where}: options must be an object, got ${describeValue(options)}`)
  return options?.approval
}

// -------------------------------------------------------------------------------------
// listing
// -------------------------------------------------------------------------------------

/** The first declaration of each name, in order: a framework holds one tool per name. */
export const firstOfEachName = (declarations: Iterable<ToolDeclaration>): ReadonlyArray<ToolDeclaration> => {
  const seen = new Set<string>()
  const out: Array<ToolDeclaration> = []
  for (const d of declarations) {
    if (seen.has(d.function.name)) continue
    seen.add(d.function.name)
    out.push(d)
  }
  return out
}

/**
 * Lists the provider's tools once, the first declaration of each name. A listing that returns a Left
 * rejects with a `ProviderFailure` holding it; a rejection passes through. An approval bridge is told the
 * whole listing, as `withPolicy` below hears it (a name listed twice is declared by neither).
 */
export const listTools = <E>(provider: Provider<E>, approval?: Approval): Promise<ReadonlyArray<ToolDeclaration>> =>
  Promise.resolve(provider.toolsForLlm()).then((listed) => {
    if (listed._tag === 'Left') throw providerFailure(listed.left)
    // a bridge of a host's own making may lack it
    if (typeof approval?.listed === 'function') approval.listed(listed.right)
    return firstOfEachName(listed.right)
  })

/** The catalogue of a framework's own tools, recorded in the session: its calls are audited against it. */
export const listedCatalogue = (session: AuditSession, declarations: ReadonlyArray<unknown>): Catalogue => {
  const catalogue = session.readListing(declarations)
  session.recordListing(catalogue, declarations.length)
  return catalogue
}

// -------------------------------------------------------------------------------------
// calls
// -------------------------------------------------------------------------------------

/**
 * The arguments of an input the framework already parsed: an object as is (same reference), anything
 * else as its JSON text; `''` (no arguments) when there is no JSON text (`undefined`, a function) or
 * `JSON.stringify` throws (a BigInt, a cycle).
 */
export const argumentsOf = (input: unknown): ToolCall['function']['arguments'] => {
  if (isRecord(input)) return input
  try {
    return JSON.stringify(input) ?? ''
  } catch {
    return ''
  }
}

/** The call a framework's tool sends down the stack. */
export const callOf = (id: string, name: string, args: ToolCall['function']['arguments']): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

/** The result text for a call whose signal was aborted before it ran. */
export const abortedText = (reason: unknown): string => `the call was aborted before it ran (${describeError(reason)})`

/**
 * Sends one call down the stack and returns its one result. A Left or a rejection of the task becomes
 * an `is_error` result reporting it, so an adapter maps only results to its framework's failure shape.
 */
export const sendOne = <E>(provider: Provider<E>): ((call: ToolCall) => Promise<ToolResult>) => {
  const send = runBatch(provider)
  return async (call) => (await answerFor([call], send(batchOf([call]))))[0] as ToolResult
}

/**
 * `send`, with the call marked approved while it runs when there is a bridge and the framework reports
 * that a human approved it (`approved`, called only when there is a bridge).
 */
export const sendApprovable =
  (approval: Approval | undefined, send: (call: ToolCall) => Promise<ToolResult>) =>
  (call: ToolCall, approved: () => boolean): Promise<ToolResult> =>
    approval !== undefined && approved() ? approval.approvedWhile(call, () => send(call)) : send(call)

// -------------------------------------------------------------------------------------
// approvals
// -------------------------------------------------------------------------------------

/**
 * Why the rules ask a human about a call, in the words a framework's prompt shows them: the rule and its
 * note, or that no rule allows the call.
 */
export const askReason = (rule: Rule | undefined): string =>
  rule === undefined
    ? 'no rule allows this call'
    : `${drawRule(rule)}${rule.note === undefined ? '' : `: ${rule.note}`}`
