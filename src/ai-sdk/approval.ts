/**
 * A policy's `ask` through the AI SDK's own tool approval: the static rules decide, before a tool
 * runs, which calls need a human (`toolApproval` returns `'user-approval'` for them); the SDK asks in
 * its own way (a `tool-approval-request`, answered by a `tool-approval-response`); and an approved call
 * goes down the stack marked as approved, so `withPolicy`'s `onAsk` returns `allow-once` for it.
 *
 * @since 0.1.0
 */
import type { ToolCall } from '../kernel/model.js'
import type { PolicyApprovalOptions } from '../steps/policy/approvals.js'
import type { OnAsk } from '../steps/policy/ask.js'
import { askReason } from '../adapter/adapter.js'
import { approvalBridge } from '../steps/policy/approvals.js'
import { isRecord } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

export type { PolicyApprovalOptions }

/**
 * An AI SDK tool approval: the status a `toolApproval` function returns.
 *
 * @since 0.1.0
 * @category model
 */
export type ApprovalStatus = 'not-applicable' | { readonly type: 'user-approval'; readonly reason: string }

/**
 * The two ends of the bridge.
 *
 * @since 0.1.0
 * @category model
 */
export interface PolicyApproval {
  /** For `generateText` / `streamText`'s `toolApproval`: asks the human about the calls the rules ask about. */
  readonly toolApproval: (options: {
    readonly toolCall: { readonly toolName: string; readonly input: unknown }
  }) => ApprovalStatus
  /** For `withPolicy({ rules, onAsk })`: `allow-once` for a call the human approved through the SDK. */
  readonly onAsk: OnAsk
  /** Runs `task` with `call` marked approved: its id, tool and arguments (what `toAiSdkTools` does for an approved call). */
  readonly approvedWhile: <A>(call: ToolCall, task: () => Promise<A>) => Promise<A>
  /**
   * Tells the bridge the stack's listing (`toAiSdkTools` does), so `toolApproval` reads only the locations each
   * tool declares, as `withPolicy` does; before it, every location is unknown and an `under` rule fails closed.
   */
  readonly listed: (declarations: ReadonlyArray<unknown>) => void
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const partsOf = (message: unknown, role: string): ReadonlyArray<unknown> =>
  isRecord(message) && message['role'] === role && Array.isArray(message['content'])
    ? (message['content'] as ReadonlyArray<unknown>)
    : []

/**
 * Whether the messages a tool runs with hold the human's approval of the call
 * `toolCallId`: an assistant's `tool-approval-request` for it, answered by a
 * `tool-approval-response` with `approved: true`.
 *
 * @example
 * import { approvedInMessages } from 'toolstack/ai-sdk'
 * const messages = [
 *   { role: 'assistant', content: [{ type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' }] },
 *   { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] },
 * ]
 * assert.strictEqual(approvedInMessages(messages, 'c1'), true)
 * assert.strictEqual(approvedInMessages(messages, 'c2'), false)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const approvedInMessages = (messages: unknown, toolCallId: string): boolean => {
  try {
    if (!Array.isArray(messages)) return false
    const requests = new Set<unknown>()
    for (const m of messages as ReadonlyArray<unknown>) {
      for (const p of partsOf(m, 'assistant')) {
        if (isRecord(p) && p['type'] === 'tool-approval-request' && p['toolCallId'] === toolCallId)
          requests.add(p['approvalId'])
      }
    }
    for (const m of messages as ReadonlyArray<unknown>) {
      for (const p of partsOf(m, 'tool')) {
        if (
          isRecord(p) &&
          p['type'] === 'tool-approval-response' &&
          p['approved'] === true &&
          requests.has(p['approvalId'])
        )
          return true
      }
    }
    return false
  } catch {
    return false
  }
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * The bridge between `withPolicy` and the AI SDK's tool approval.
 *
 * ```ts
 * const approval = policyApproval({ rules })
 * const stack = pipe(fromMcpClient(client), withUnknownKeyAudit(), withPolicy({ rules, onAsk: approval.onAsk }))
 * const tools = await toAiSdkTools(stack, { approval })
 * const r = await generateText({ model, tools, toolApproval: approval.toolApproval, prompt })
 * ```
 *
 * @example
 * import { policyApproval } from 'toolstack/ai-sdk'
 * const approval = policyApproval({
 *   rules: [
 *     { tool: 'read_*', decision: 'allow' },
 *     { tool: 'write_file', decision: 'ask', note: 'writes need a human' },
 *   ],
 * })
 * assert.strictEqual(approval.toolApproval({ toolCall: { toolName: 'read_text_file', input: {} } }), 'not-applicable')
 * assert.deepStrictEqual(approval.toolApproval({ toolCall: { toolName: 'write_file', input: {} } }), {
 *   type: 'user-approval',
 *   reason: 'ask "write_file": writes need a human',
 * })
 *
 * @since 0.1.0
 * @category constructors
 */
export const policyApproval = (options: PolicyApprovalOptions): PolicyApproval => {
  const bridge = approvalBridge(options, 'policyApproval')
  return {
    toolApproval: ({ toolCall }) => {
      try {
        const e = bridge.evaluate(toolCall.toolName, toolCall.input)
        if (e.decision !== 'ask') return 'not-applicable'
        return { type: 'user-approval', reason: askReason(e.rule) }
      } catch {
        return { type: 'user-approval', reason: 'the call could not be evaluated' }
      }
    },
    onAsk: bridge.onAsk,
    approvedWhile: bridge.approvedWhile,
    listed: bridge.listed,
  }
}
