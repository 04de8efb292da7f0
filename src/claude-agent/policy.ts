/**
 * `claudeAgentPolicy`: a `withPolicy` rule set as a Claude Agent SDK session's permission decisions. Its
 * `PreToolUse` hook answers each call with the rules' `permissionDecision` (allow, deny with a reason the model
 * can act on, or ask); its `canUseTool` answers the SDK's permission requests with the same rules, and hands
 * what they ask about to the host's own prompt.
 *
 * @since 0.1.0
 */
import type {
  CanUseTool,
  HookCallback,
  HookCallbackMatcher,
  HookJSONOutput,
  PermissionResult,
} from '@anthropic-ai/claude-agent-sdk'
import type { Rule } from '../steps/policy/Rule.js'
import type { Verdict } from '../steps/policy/Verdict.js'
import { decodeRules } from '../steps/policy/Rule.js'
import { judge } from '../steps/policy/Verdict.js'
import { drawRefusal } from '../steps/policy/Refusal.js'
import { parseArgs } from '../steps/Args.js'
import { LOCATION_ARGS } from '../kernel/paths.js'
import type { LocationScope, Roots } from '../kernel/paths.js'
import { describeError, describeValue } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import { argumentsOf, askReason } from '../adapter/adapter.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ClaudeAgentPolicyOptions {
  /** The rules, as `withPolicy` takes them: tool names as the session calls them (`Write`, `mcp__fs__write_file`). */
  readonly rules: ReadonlyArray<Rule>
  /** Tool-name prefix → directory that relative locations are resolved against. */
  readonly roots?: Roots
  /**
   * The host's own prompt: asked about each call the rules ask about, its answer the SDK's. Without it, such a
   * call is refused, in words that say no one could be asked.
   */
  readonly canUseTool?: CanUseTool
}

/**
 * The two ends a session takes.
 *
 * @since 0.1.0
 * @category model
 */
export interface ClaudeAgentPolicy {
  /** The `PreToolUse` hook matcher (every tool): the rules' `permissionDecision` for each call. */
  readonly preToolUse: HookCallbackMatcher
  /** For `query()`'s `canUseTool`: the rules' answer, or the host's prompt for what they ask about. */
  readonly canUseTool: CanUseTool
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// Claude Code's file tools name their location `file_path` (Read, Write, Edit) or `notebook_path`
const CLAUDE_LOCATION_ARGS: ReadonlyArray<string> = [...LOCATION_ARGS, 'file_path', 'notebook_path']

// the session publishes no schema to the host, so every location name a call gives is read, as withPolicy reads a
// call without a listing: a scope whose declared names are the location names themselves
const SCOPE: LocationScope = { names: CLAUDE_LOCATION_ARGS, declared: new Set(CLAUDE_LOCATION_ARGS) }

/**
 * The `PreToolUse` output for a verdict: allow, deny with the refusal a model can act on, or ask with the
 * reason the human is shown.
 *
 * @example
 * import { decisionOf } from './policy.js'
 * assert.deepStrictEqual(decisionOf({ _tag: 'Allow' }), {
 *   hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'the permission policy allows this call' },
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decisionOf = (verdict: Verdict): HookJSONOutput => {
  const out = (permissionDecision: 'allow' | 'deny' | 'ask', permissionDecisionReason: string): HookJSONOutput => ({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason },
  })
  switch (verdict._tag) {
    case 'Allow':
      return out('allow', 'the permission policy allows this call')
    case 'Refuse':
      return out('deny', drawRefusal(verdict.refusal))
    case 'Ask':
      return out('ask', `the permission policy asks: ${askReason(verdict.question.evaluation.rule)}`)
  }
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * A `withPolicy` rule set as a session's permission decisions, for `query({ options: { hooks: { PreToolUse:
 * [policy.preToolUse] }, canUseTool: policy.canUseTool } })`. The same rules (and `roots`) as `withPolicy`,
 * checked at once (a `TypeError` names a bad rule), decide by each call's `tool_name` and `tool_input`, its
 * locations read from the location arguments (`path`, …, and Claude Code's `file_path` and `notebook_path`):
 *
 * - the hook answers `allow` (the call runs, unprompted), `deny` (the call is not run; the model reads
 *   `permissionDecisionReason`, the policy's refusal: who refused, why, what to do instead) or `ask` (the SDK
 *   asks through its own prompt, `canUseTool`, showing the rule that asks);
 * - `canUseTool` answers each permission request with the same rules: an allow with the very input, a deny
 *   with the refusal, and a call they ask about goes to the host's `canUseTool`, whose answer is the SDK's
 *   (without one, it is refused, saying no one could be asked).
 *
 * A hook that fails answers `ask`, never `allow`. An "always" answer of the host's prompt is the SDK's to
 * keep (`updatedPermissions`); toolstack records no grant.
 *
 * @example
 * import { claudeAgentPolicy } from 'toolstack/claude-agent'
 * const policy = claudeAgentPolicy({ rules: [{ tool: 'Read', decision: 'allow' }, { tool: 'Bash', decision: 'deny', note: 'no shell here' }] })
 * const options = { signal: new AbortController().signal, toolUseID: 'toolu_1', requestId: 'r1' }
 * const input = { file_path: '/a' }
 * const allowed = await policy.canUseTool('Read', input, options)
 * assert.deepStrictEqual(allowed, { behavior: 'allow', updatedInput: input, toolUseID: 'toolu_1' })
 * const denied = await policy.canUseTool('Bash', { command: 'ls' }, options)
 * assert.strictEqual(denied?.behavior, 'deny')
 * const refusal = /^The permission policy refused this call to "Bash" \(rule: deny "Bash"\)\. Reason: no shell here\./
 * assert.match(denied?.behavior === 'deny' ? denied.message : '', refusal)
 *
 * @since 0.1.0
 * @category constructors
 */
export const claudeAgentPolicy = (options: ClaudeAgentPolicyOptions): ClaudeAgentPolicy => {
  const where = 'claudeAgentPolicy'
  if (!isRecord(options))
    throw new TypeError(
      `${where}: options must be an object { rules, roots?, canUseTool? }, got ${describeValue(options)}`,
    )
  const decoded = decodeRules(options.rules, 'rules')
  if (decoded._tag === 'Left') throw new TypeError(`${where}: ${decoded.left}`)
  const rules = decoded.right
  const roots = options.roots ?? {}
  const host = options.canUseTool
  if (host !== undefined && typeof host !== 'function')
    throw new TypeError(`${where}: option "canUseTool" must be a function, got ${describeValue(host)}`)
  const ask = host as CanUseTool | undefined
  const judgeCall = judge({ rules, roots })
  const verdictOf = (tool: string, input: unknown): Verdict =>
    judgeCall(Object(input) as object, tool, () => parseArgs(argumentsOf(input)), SCOPE)

  const hook: HookCallback = (input) => {
    try {
      if (memberOf(input, 'hook_event_name') !== 'PreToolUse') return Promise.resolve({})
      const tool = memberOf(input, 'tool_name')
      return Promise.resolve(decisionOf(verdictOf(typeof tool === 'string' ? tool : '', memberOf(input, 'tool_input'))))
    } catch (e) {
      // fails closed: the SDK asks the human, never runs the call unasked
      return Promise.resolve({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'ask',
          permissionDecisionReason: `the permission policy could not judge this call (${describeError(e)})`,
        },
      })
    }
  }

  const canUseTool: CanUseTool = async (toolName, input, opts) => {
    const toolUseID = memberOf(opts, 'toolUseID')
    const id = typeof toolUseID === 'string' ? { toolUseID } : {}
    let verdict: Verdict
    try {
      verdict = verdictOf(toolName, input)
    } catch (e) {
      return {
        behavior: 'deny',
        message: `The permission policy could not judge this call (${describeError(e)}); it was not run.`,
        ...id,
      }
    }
    if (verdict._tag === 'Allow') return { behavior: 'allow', updatedInput: input, ...id }
    if (verdict._tag === 'Refuse') return { behavior: 'deny', message: drawRefusal(verdict.refusal), ...id }
    if (ask === undefined)
      return { behavior: 'deny', message: drawRefusal({ _tag: 'NoOneToAsk', tool: toolName }), ...id }
    try {
      return await ask(toolName, input, opts)
    } catch (e) {
      const refused: PermissionResult = {
        behavior: 'deny',
        message: drawRefusal({ _tag: 'AskFailed', tool: toolName, error: describeError(e) }),
        ...id,
      }
      return refused
    }
  }

  return { preToolUse: { hooks: [hook] }, canUseTool }
}
