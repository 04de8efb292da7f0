/**
 * The policy's judgement of one call before anyone is asked: allowed, refused (and why), or a question for
 * the human. Pure: rules, grants and roots in, a verdict out.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem } from '../../kernel/model.js'
import { noneAsEmpty } from '../Args.js'
import type { Rule } from './Rule.js'
import type { Evaluation } from './evaluate.js'
import { decisionByName, evaluate } from './evaluate.js'
import type { LocationScope, Roots } from '../../kernel/paths.js'
import type { Refusal } from './Refusal.js'
import { describeError } from '../../kernel/describe.js'
import { isRecord } from '../../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A call the rules leave to the human.
 *
 * @since 0.1.0
 * @category model
 */
export interface Question {
  /** The caller's call. */
  readonly call: object
  readonly tool: string
  /** Its arguments, as parsed. */
  readonly parsed: Either<ArgsProblem, Args>
  /** What the rules saw: `{}` for no arguments, `undefined` for unreadable ones. */
  readonly args: Args | undefined
  readonly evaluation: Evaluation
  /** How its locations were read: the grants read them the same way. */
  readonly scope: LocationScope | undefined
}

/**
 * @since 0.1.0
 * @category model
 */
export type Verdict =
  | { readonly _tag: 'Allow' }
  | { readonly _tag: 'Refuse'; readonly refusal: Refusal }
  | { readonly _tag: 'Ask'; readonly question: Question }

const ALLOW: Verdict = { _tag: 'Allow' }

// stands in for the arguments of a call denied by name alone: they play no part
const NOT_READ: Either<ArgsProblem, Args> = right({})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const unevaluable = (evaluation: Evaluation): ReadonlyArray<string> =>
  evaluation.locations.flatMap((l) =>
    l._tag === 'Unknown'
      ? [`${l.arg} ${l.problem}`]
      : l._tag === 'Missing'
        ? ['it gives no location argument the tool declares']
        : [],
  )

/**
 * What the static rules decide about a call to `tool`. When the rules decide by the tool's name alone, its
 * arguments are not read (`argsOf` is not called): an allowed call is parsed once, by the layer below that
 * needs it, and a refused one never. Its locations are read with `scope` (see `locate`).
 *
 * @example
 * import { judge } from './Verdict.js'
 * const call = { id: '1', function: { name: 'rm', arguments: '{}' } }
 * const v = judge([{ tool: 'rm', decision: 'deny', note: 'never' }], {})(call, 'rm', () => ({
 *   _tag: 'Right',
 *   right: {},
 * }))
 * assert.strictEqual(v._tag, 'Refuse')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const judge = (
  rules: ReadonlyArray<Rule>,
  roots: Roots,
): ((call: object, tool: string, argsOf: () => Either<ArgsProblem, Args>, scope?: LocationScope) => Verdict) => {
  const decideByName = decisionByName(rules)
  return (call, tool, argsOf, scope) => {
    const byName = decideByName(tool)
    if (byName === 'allow') return ALLOW
    const parsed = byName === 'deny' ? NOT_READ : argsOf()
    const readable = noneAsEmpty(parsed)
    const args = isLeft(readable) ? undefined : readable.right
    const evaluation = evaluate(rules, tool, args, roots, scope)
    switch (evaluation.decision) {
      case 'allow':
        return ALLOW
      case 'ask':
        return { _tag: 'Ask', question: { call, tool, parsed, args, evaluation, scope } }
      case 'deny':
        return {
          _tag: 'Refuse',
          refusal: {
            _tag: 'DeniedByRule',
            tool,
            rule: evaluation.rule,
            unevaluable: evaluation.why === 'unevaluable-path' ? unevaluable(evaluation) : [],
          },
        }
    }
  }
}

/**
 * What the session's grants decide about a question: allowed, refused by a grant, or `undefined` when no
 * grant decides it and the human must be asked.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const byGrants =
  (grants: ReadonlyArray<Rule>, roots: Roots) =>
  (q: Question): Verdict | undefined => {
    const g = evaluate(grants, q.tool, q.args, roots, q.scope)
    if (g.decision === 'ask') return undefined
    return g.decision === 'allow'
      ? ALLOW
      : { _tag: 'Refuse', refusal: { _tag: 'DeniedByGrant', tool: q.tool, rule: g.rule } }
  }

/**
 * Object arguments as plain data, read once: each getter and Proxy trap runs once, and the result is plain
 * JSON data, so nothing can return a different value later. A Left gives the reason they could not be read (a
 * getter that throws, a cycle, a BigInt).
 *
 * @example
 * import { plainArguments } from './Verdict.js'
 * let reads = 0
 * const args = {
 *   get path() {
 *     return reads++ === 0 ? '/srv/a' : '/etc/cron.d/evil'
 *   },
 * }
 * const copy = plainArguments(args)
 * assert.deepStrictEqual(copy, { _tag: 'Right', right: { path: '/srv/a' } })
 * assert.deepStrictEqual(copy, { _tag: 'Right', right: { path: '/srv/a' } })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const plainArguments = (args: Args): Either<string, Args> => {
  try {
    const back: unknown = JSON.parse(JSON.stringify(args) ?? 'null')
    return isRecord(back) ? right(back) : left('they do not read as a JSON object')
  } catch (e) {
    return left(describeError(e))
  }
}
