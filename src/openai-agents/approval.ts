/**
 * A policy's `ask` through the OpenAI Agents SDK's own approvals: the static rules say,
 * before a tool runs, which calls need a human (`needsApproval`), the run stops with an
 * interruption, the host approves or rejects it (`result.state.approve(item)`), and a
 * call the human approved goes down the stack marked so: `withPolicy`'s `onAsk`
 * answers `allow-once` for it.
 *
 * @since 0.1.0
 */
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import type { OnAsk, PermissionAnswer, Roots, Rule } from '../index.js'
import { decodeRules, evaluate } from '../index.js'
import { describeValue } from '../internal/describe.js'
import { isRecord } from '../internal/guards.js'
import { modify } from '../internal/ref.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface PolicyApprovalOptions {
  /** The rules given to `withPolicy`: the same ones, so both say `ask` about the same calls. */
  readonly rules: ReadonlyArray<Rule>
  /** The `roots` given to `withPolicy`, if any. */
  readonly roots?: Roots
  /** Asked about a call the policy asks about but the SDK did not have approved. Default: refuse it. */
  readonly onAsk?: OnAsk
}

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
  /** Runs `task` with the call `id` marked approved (what `toAgentsTools` does for an approved call). */
  readonly approvedWhile: <A>(id: string, task: () => Promise<A>) => Promise<A>
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

const DENY: PermissionAnswer = { action: 'deny-once' }
const ALLOW: PermissionAnswer = { action: 'allow-once' }

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
 * const approval = policyApproval({ rules: [{ tool: 'read_*', decision: 'allow' }, { tool: 'write_file', decision: 'ask' }] })
 * assert.strictEqual(approval.needsApproval('read_text_file', {}), false)
 * assert.strictEqual(approval.needsApproval('write_file', { path: '/tmp/a' }), true)
 *
 * @since 0.1.0
 * @category constructors
 */
export const policyApproval = (options: PolicyApprovalOptions): PolicyApproval => {
  const where = 'policyApproval'
  if (!isRecord(options)) throw new TypeError(`${where}: options must be an object { rules, roots?, onAsk? }, got ${describeValue(options)}`)
  const decoded = decodeRules(options.rules, 'rules')
  if (decoded._tag === 'Left') throw new TypeError(`${where}: ${decoded.left}`)
  const rules = decoded.right
  const roots: Roots = options.roots ?? {}
  const fallback = options.onAsk
  if (fallback !== undefined && typeof fallback !== 'function') throw new TypeError(`${where}: option "onAsk" must be a function, got ${describeValue(fallback)}`)
  const approved: IORef<ReadonlySet<string>> = newIORef<ReadonlySet<string>>(new Set())()
  const mark = (id: string, on: boolean): void =>
    modify((s: ReadonlySet<string>): readonly [void, ReadonlySet<string>] => {
      const next = new Set(s)
      if (on) next.add(id)
      else next.delete(id)
      return [undefined, next]
    })(approved)()

  return {
    needsApproval: (tool, input) => {
      try {
        return evaluate(rules, tool, input, roots).decision === 'ask'
      } catch {
        return true
      }
    },
    onAsk: (request) => (approved.read().has(request.call.id) ? ALLOW : fallback === undefined ? DENY : fallback(request)),
    approvedWhile: async (id, task) => {
      mark(id, true)
      try {
        return await task()
      } finally {
        mark(id, false)
      }
    },
  }
}
