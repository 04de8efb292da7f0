/**
 * A policy's `ask` through the OpenAI Agents SDK's own approvals: the static rules decide, before a
 * tool runs, which calls need a human (`needsApproval`); the run stops with an interruption; the host
 * approves or rejects it (`result.state.approve(item)`); and an approved call goes down the stack
 * marked as approved, so `withPolicy`'s `onAsk` returns `allow-once` for it.
 *
 * @since 0.1.0
 */
import type { ToolCall } from '../kernel/model.js'
import type { PolicyApprovalOptions } from '../steps/policy/approvals.js'
import type { OnAsk } from '../steps/policy/ask.js'
import { approvalBridge } from '../steps/policy/approvals.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

export type { PolicyApprovalOptions }

/**
 * The two ends of the bridge.
 *
 * @since 0.1.0
 * @category model
 */
export interface PolicyApproval {
  /** Whether the rules ask a human about this call of `tool` (its parsed arguments). */
  readonly needsApproval: (tool: string, input: unknown) => boolean
  /** For `withPolicy({ rules, onAsk })`: `allow-once` for a call the human approved through the SDK. */
  readonly onAsk: OnAsk
  /** Runs `task` with `call` marked approved: its id, tool and arguments (what `toAgentsTools` does for an approved call). */
  readonly approvedWhile: <A>(call: ToolCall, task: () => Promise<A>) => Promise<A>
  /**
   * Tells the bridge the stack's listing (`toAgentsTools` does), so `needsApproval` reads only the locations each
   * tool declares, as `withPolicy` does; before it, every location is unknown and an `under` rule fails closed.
   */
  readonly listed: (declarations: ReadonlyArray<unknown>) => void
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * The bridge between `withPolicy` and the Agents SDK's approvals.
 *
 * ```ts
 * const approval = policyApproval({ rules })
 * const stack = pipe(fromMcpClient(client), withUnknownKeyAudit(), withPolicy({ rules, onAsk: approval.onAsk }))
 * const agent = new Agent({ name, instructions, tools: await toAgentsTools(stack, { approval }) })
 * let result = await run(agent, input)
 * for (const item of result.interruptions) result.state.approve(item)   // or reject, as the human says
 * result = await run(agent, result.state)
 * ```
 *
 * @example
 * import { policyApproval } from 'toolstack/openai-agents'
 * const approval = policyApproval({
 *   rules: [
 *     { tool: 'read_*', decision: 'allow' },
 *     { tool: 'write_file', decision: 'ask' },
 *   ],
 * })
 * assert.strictEqual(approval.needsApproval('read_text_file', {}), false)
 * assert.strictEqual(approval.needsApproval('write_file', { path: '/tmp/a' }), true)
 *
 * @since 0.1.0
 * @category constructors
 */
export const policyApproval = (options: PolicyApprovalOptions): PolicyApproval => {
  const bridge = approvalBridge(options, 'policyApproval')
  return {
    needsApproval: (tool, input) => {
      try {
        return bridge.evaluate(tool, input).decision === 'ask'
      } catch {
        return true
      }
    },
    onAsk: bridge.onAsk,
    approvedWhile: bridge.approvedWhile,
    listed: bridge.listed,
  }
}
