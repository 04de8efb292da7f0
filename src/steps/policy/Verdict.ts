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
import type { Evaluation, Located, ProtectedFile } from './evaluate.js'
import { decide, decisionByName, guardFiles, locateCall } from './evaluate.js'
import type { LocationScope, PathLocation, Roots } from '../../kernel/paths.js'
import type { LocationResolver } from '../../kernel/resolve.js'
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
  /** Its locations, read once: the grants judge the same ones. */
  readonly located: Located
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

/**
 * Why each location that is not a known path could not be judged, one phrase each (`path is relative and this
 * tool has no root`).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const unevaluable = (locations: ReadonlyArray<PathLocation>): ReadonlyArray<string> =>
  locations.flatMap((l) => {
    switch (l._tag) {
      case 'Known':
        return []
      case 'Missing':
        return ['it gives no location argument the tool declares']
      case 'Unread':
        return [
          `${l.arg} looks like a location and is not read as one (a locationArgs entry ${JSON.stringify(l.arg)} reads it)`,
        ]
      default:
        return [`${l.arg} ${l.problem}`]
    }
  })

/**
 * What a policy judges a call with: its rules and roots, the resolver that puts locations in the form the
 * server will touch, and the files no call may touch.
 *
 * @since 0.1.0
 * @category model
 */
export interface Judging {
  readonly rules: ReadonlyArray<Rule>
  readonly roots: Roots
  readonly resolverFor?: (tool: string) => LocationResolver
  readonly protect?: ReadonlyArray<ProtectedFile>
}

/**
 * What the static rules decide about a call to `tool`. When the rules decide by the tool's name alone (and no
 * file is protected), its arguments are not read (`argsOf` is not called): an allowed call is parsed once, by
 * the layer below that needs it, and a refused one never. Otherwise its locations are read once with `scope`
 * (see `locate`) and the tool's resolver; a call touching a protected file, or whose location cannot be
 * checked against them, is refused whatever the rules say.
 *
 * @example
 * import { judge } from './Verdict.js'
 * const call = { id: '1', function: { name: 'rm', arguments: '{}' } }
 * const v = judge({ rules: [{ tool: 'rm', decision: 'deny', note: 'never' }], roots: {} })(call, 'rm', () => ({
 *   _tag: 'Right',
 *   right: {},
 * }))
 * assert.strictEqual(v._tag, 'Refuse')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const judge = (
  judging: Judging,
): ((call: object, tool: string, argsOf: () => Either<ArgsProblem, Args>, scope?: LocationScope) => Verdict) => {
  const { rules, roots } = judging
  const decideByName = decisionByName(rules)
  const files = judging.protect ?? []
  const guard = guardFiles(files)
  return (call, tool, argsOf, scope) => {
    const byName = decideByName(tool)
    if (byName === 'allow' && files.length === 0) return ALLOW
    const parsed = byName === 'deny' ? NOT_READ : argsOf()
    const readable = noneAsEmpty(parsed)
    const args = isLeft(readable) ? undefined : readable.right
    const located = locateCall(tool, args, roots, scope, judging.resolverFor?.(tool))
    if (byName !== 'deny' && files.length > 0) {
      const guarded = guard(located)
      if (guarded !== undefined)
        return {
          _tag: 'Refuse',
          refusal:
            guarded._tag === 'Touches'
              ? { _tag: 'ProtectedFile', tool, arg: guarded.arg, file: guarded.file }
              : { _tag: 'ProtectedUnchecked', tool, unevaluable: guarded.unevaluable },
        }
    }
    const evaluation = decide(rules, located, roots)
    switch (evaluation.decision) {
      case 'allow':
        return ALLOW
      case 'ask':
        return { _tag: 'Ask', question: { call, tool, parsed, args, evaluation, located } }
      case 'deny':
        return {
          _tag: 'Refuse',
          refusal: {
            _tag: 'DeniedByRule',
            tool,
            rule: evaluation.rule,
            unevaluable: evaluation.why === 'unevaluable-path' ? unevaluable(evaluation.locations) : [],
          },
        }
    }
  }
}

/**
 * What the session's grants decide about a question, on the locations the rules judged: allowed, refused by a
 * grant, or `undefined` when no grant decides it and the human must be asked.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const byGrants =
  (grants: ReadonlyArray<Rule>, roots: Roots) =>
  (q: Question): Verdict | undefined => {
    const g = decide(grants, q.located, roots)
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
