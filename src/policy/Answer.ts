/**
 * Asking the human: what `onAsk` is handed, what it may answer, and how an answer is
 * read (`decodeAnswer`) and remembered (`recordGrant`). Pure: the asking itself is
 * `withPolicy`'s.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import * as t from 'io-ts/lib/index.js'
import type { Args, ToolCall } from '../model.js'
import type { Decision, Rule } from './Rule.js'
import { decodeRule } from './Rule.js'
import type { Why } from './evaluate.js'
import { describeError, describeValue } from '../internal/describe.js'
import { hasOwn, own, ownCopy } from '../internal/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How the human answered.
 *
 * @since 0.1.0
 * @category model
 */
export type PermissionAction = 'allow-once' | 'deny-once' | 'always-allow' | 'always-deny'

/**
 * A rule to remember, as an answer may give it: `decision` may be left out, and is
 * then taken from the action.
 *
 * @since 0.1.0
 * @category model
 */
export type GrantRule = Omit<Rule, 'decision'> & { readonly decision?: Decision }

/**
 * What `onAsk` resolves to. `rule` matters only for `always-*` and defaults to the
 * request's `suggestion`; it is ignored for `*-once`.
 *
 * @since 0.1.0
 * @category model
 */
export interface PermissionAnswer {
  readonly action: PermissionAction
  readonly rule?: GrantRule
}

/**
 * What `onAsk` is handed: everything a human needs to decide one call.
 *
 * @since 0.1.0
 * @category model
 */
export interface PermissionRequest {
  readonly kind: 'permission'
  readonly tool: string
  /** The parsed arguments, `reason` included; `{}` when the call carried none. */
  readonly arguments: Args
  /** A copy of the call: changing it changes nothing about what runs. */
  readonly call: ToolCall
  /** The static rule that asked, when one did. */
  readonly rule: Rule | undefined
  readonly why: Why
  readonly paths: ReadonlyArray<string>
  /** The rule an "always" answer records when it gives none. */
  readonly suggestion: Rule
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const quote = (s: string): string => JSON.stringify(s)

/**
 * What a valid answer means: the action and, for `always-*`, the rule to record.
 *
 * @since 0.1.0
 * @category model
 */
export interface DecodedAnswer {
  readonly action: PermissionAction
  readonly grant: Rule | undefined
}

const ANSWER_MEMBERS: ReadonlyArray<string> = ['action', 'rule']
const Action = t.keyof({ 'allow-once': null, 'deny-once': null, 'always-allow': null, 'always-deny': null })

/**
 * Reads `onAsk`'s answer. Unknown members, an unknown action, a rule that is not a
 * valid rule or whose decision contradicts the action: each is a Left saying which.
 *
 * @example
 * import { decodeAnswer } from 'toolstack'
 * const suggestion = { tool: 'fs_write', decision: 'allow', under: '/p' } as const
 * assert.deepStrictEqual(decodeAnswer({ action: 'always-deny' }, suggestion), {
 *   _tag: 'Right',
 *   right: { action: 'always-deny', grant: { tool: 'fs_write', decision: 'deny', under: '/p' } },
 * })
 * assert.strictEqual(decodeAnswer({ action: 'yes' }, suggestion)._tag, 'Left')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decodeAnswer = (
  u: unknown,
  suggestion: Rule,
): Either<{ readonly _tag: 'UnclearAnswer' | 'InvalidRule'; readonly problem: string }, DecodedAnswer> => {
  const unclear = (problem: string) => left({ _tag: 'UnclearAnswer' as const, problem })
  const invalid = (problem: string) => left({ _tag: 'InvalidRule' as const, problem })
  try {
    if (typeof u !== 'object' || u === null || Array.isArray(u)) return unclear(`expected { action, rule? }, got ${describeValue(u)}`)
    const extra = Object.keys(u).filter((k) => !ANSWER_MEMBERS.includes(k))
    if (extra.length > 0) return unclear(`unknown member ${extra.map(quote).join(', ')}; an answer has: action, rule`)
    const action: unknown = own(u, 'action')
    if (!Action.is(action)) return unclear(`action must be "allow-once", "deny-once", "always-allow" or "always-deny", got ${describeValue(action)}`)
    if (action === 'allow-once' || action === 'deny-once') return right({ action, grant: undefined })
    const decision: Decision = action === 'always-allow' ? 'allow' : 'deny'
    const given: unknown = own(u, 'rule')
    const source: unknown = given === undefined ? suggestion : given
    if (typeof source !== 'object' || source === null || Array.isArray(source)) return invalid(`rule must be a rule, got ${describeValue(source)}`)
    const candidate = ownCopy(source)
    // the suggestion is phrased for "always allow"; for "always deny" it is the same
    // scope, refused
    if (given === undefined || !hasOwn(candidate, 'decision')) candidate['decision'] = decision
    else if (candidate['decision'] !== decision) {
      return invalid(`its decision ${describeValue(candidate['decision'])} contradicts the answer ${quote(action)}`)
    }
    const rule = decodeRule(candidate)
    return isLeft(rule) ? invalid(rule.left) : right({ action, grant: rule.right })
  } catch (e) {
    return unclear(`it could not be read: ${describeError(e)}`)
  }
}

const sameRule = (a: Rule, b: Rule): boolean => a.tool === b.tool && a.decision === b.decision && a.under === b.under && a.note === b.note

/**
 * The grant list with `rule` remembered; the very same list when an equal rule is
 * already there.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const recordGrant =
  (rule: Rule) =>
  (grants: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
    grants.some((g) => sameRule(g, rule)) ? grants : Object.freeze([...grants, rule])
