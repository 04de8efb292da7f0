/**
 * The policy's judgement of one call before anyone is asked: allowed, refused (and
 * why), or a question for the human. Pure: rules, grants and roots in, a verdict out.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, right } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem } from '../model.js'
import { noneAsEmpty } from '../Args.js'
import type { Rule } from './Rule.js'
import type { Evaluation } from './evaluate.js'
import { decisionByName, evaluate } from './evaluate.js'
import type { Roots } from './paths.js'
import { locate } from './paths.js'
import type { Refusal } from './Refusal.js'

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
  /** How its arguments read. */
  readonly parsed: Either<ArgsProblem, Args>
  /** What the rules saw: `{}` for no arguments, `undefined` for unreadable ones. */
  readonly args: Args | undefined
  readonly evaluation: Evaluation
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

// what a call refused by its name alone is judged with: its arguments play no part
const NOT_READ: Either<ArgsProblem, Args> = right({})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const unevaluable = (args: Args | undefined, tool: string, roots: Roots): ReadonlyArray<string> =>
  locate(args, tool, roots).flatMap((l) =>
    l._tag === 'Unknown' ? [`${l.arg} ${l.problem}`] : l._tag === 'Missing' ? ['it names no path, from or to'] : [],
  )

/**
 * What the static rules say about a call to `tool`. When the rules decide by the
 * tool's name alone, its arguments are not read (`argsOf` is not called): an allowed
 * call is parsed once, by the layer below that needs it, and a refused one never.
 *
 * @example
 * import { judge } from 'toolstack'
 * const call = { id: '1', function: { name: 'rm', arguments: '{}' } }
 * const v = judge([{ tool: 'rm', decision: 'deny', note: 'never' }], {})(call, 'rm', () => ({ _tag: 'Right', right: {} }))
 * assert.strictEqual(v._tag, 'Refuse')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const judge = (rules: ReadonlyArray<Rule>, roots: Roots): ((call: object, tool: string, argsOf: () => Either<ArgsProblem, Args>) => Verdict) => {
  const decideByName = decisionByName(rules)
  return (call, tool, argsOf) => {
    const byName = decideByName(tool)
    if (byName === 'allow') return ALLOW
    const parsed = byName === 'deny' ? NOT_READ : argsOf()
    const readable = noneAsEmpty(parsed)
    const args = isLeft(readable) ? undefined : readable.right
    const evaluation = evaluate(rules, tool, args, roots)
    switch (evaluation.decision) {
      case 'allow':
        return ALLOW
      case 'ask':
        return { _tag: 'Ask', question: { call, tool, parsed, args, evaluation } }
      case 'deny':
        return {
          _tag: 'Refuse',
          refusal: {
            _tag: 'DeniedByRule',
            tool,
            rule: evaluation.rule,
            unevaluable: evaluation.why === 'unevaluable-path' ? unevaluable(args, tool, roots) : [],
          },
        }
    }
  }
}

/**
 * What the session's grants say about a question: allowed, refused by a grant, or
 * `undefined` when no grant decides it and the human must be asked.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const byGrants =
  (grants: ReadonlyArray<Rule>, roots: Roots) =>
  (q: Question): Verdict | undefined => {
    const g = evaluate(grants, q.tool, q.args, roots)
    if (g.decision === 'ask') return undefined
    return g.decision === 'allow' ? ALLOW : { _tag: 'Refuse', refusal: { _tag: 'DeniedByGrant', tool: q.tool, rule: g.rule } }
  }
