/**
 * Asking the human about one call: the request `onAsk` receives (copies, so nothing the host does to it
 * changes what runs), and the host's answer however it comes (a Task, a Promise, or a value), decoded with
 * `decodeAnswer`.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left } from 'fp-ts/lib/Either.js'
import type { Task } from 'fp-ts/lib/Task.js'
import type { Args, ToolCall } from '../../kernel/model.js'
import type { DecodedAnswer, PermissionAnswer, PermissionRequest } from './Answer.js'
import { decodeAnswer, showFacts } from './Answer.js'
import type { Refusal } from './Refusal.js'
import type { Question } from './Verdict.js'
import type { DefinitionNotice } from '../pins/Review.js'
import { callIdOf } from '../../kernel/calls.js'
import { describeError } from '../../kernel/describe.js'
import { memberOf, ownCopy } from '../../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How the host asks its human: returns a Task (fp-ts), a Promise, or the answer itself.
 *
 * @since 0.1.0
 * @category model
 */
export type OnAsk = (
  request: PermissionRequest,
) => Task<PermissionAnswer> | Promise<PermissionAnswer> | PermissionAnswer

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const copyOf = <A>(u: A): A => {
  try {
    return structuredClone(u)
  } catch {
    return ownCopy(u as object) as A
  }
}

/**
 * A call to `tool` with `args` in place of its own arguments, keeping only the caller's id and type: what
 * goes down, or is shown, instead of a call whose arguments were read.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const callWithArguments = (call: object, tool: string, args: string | Args): ToolCall => ({
  id: callIdOf(call),
  ...(memberOf(call, 'type') === 'function' ? { type: 'function' as const } : {}),
  function: { name: tool, arguments: args },
})

// the call a human is shown: the arguments string as the model wrote it (read once, by the policy), or a copy
// of the arguments as parsed
const copyCall = (call: object, tool: string, args: Args, text: string | undefined): ToolCall =>
  callWithArguments(call, tool, text ?? copyOf(args))

/**
 * The request for a question whose arguments could be read: everything a human needs to decide, every part a
 * copy, and the facts shown (`showFacts`) from the locations the rules judged. `text` is the call's arguments
 * string, when the policy read one as plain data: the call shown carries it, not a second read. `definition`
 * is what the question says of the tool's definition.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const requestFor = (
  q: Question,
  args: Args,
  remembered: 'session' | 'shared' = 'session',
  text?: string,
  definition?: DefinitionNotice,
): PermissionRequest => {
  const copy = copyOf(args)
  return {
    kind: 'permission',
    tool: q.tool,
    arguments: copy,
    call: copyCall(q.call, q.tool, args, text),
    rule: q.evaluation.rule,
    why: q.evaluation.why,
    paths: q.evaluation.paths,
    suggestedRule: q.evaluation.suggestedRule,
    remembered,
    ...showFacts(q.evaluation.locations, copy, q.evaluation.concerns),
    ...(definition === undefined ? {} : { definition }),
  }
}

// -------------------------------------------------------------------------------------
// effects
// -------------------------------------------------------------------------------------

/**
 * Asks `onAsk` about a question and decodes the answer; whatever goes wrong (a request that cannot be copied,
 * a callback that throws or rejects, an answer that does not decode) becomes a refusal describing it. Never
 * rejects.
 *
 * @since 0.1.0
 * @category effects
 */
export const askHuman =
  (onAsk: OnAsk, remembered: 'session' | 'shared' = 'session') =>
  async (
    q: Question,
    args: Args,
    text?: string,
    definition?: DefinitionNotice,
  ): Promise<Either<Refusal, DecodedAnswer>> => {
    const failed = (error: string): Either<Refusal, DecodedAnswer> => left({ _tag: 'AskFailed', tool: q.tool, error })
    let request: PermissionRequest
    try {
      request = requestFor(q, args, remembered, text, definition)
    } catch (e) {
      return failed(`the call could not be shown to the human (${describeError(e)})`)
    }
    let answer: unknown
    try {
      const asked: unknown = onAsk(request)
      answer = typeof asked === 'function' ? await (asked as () => unknown)() : await asked
    } catch (e) {
      return failed(`onAsk failed: ${describeError(e)}`)
    }
    const decoded = decodeAnswer(answer, q.evaluation.suggestedRule)
    return isLeft(decoded) ? left({ ...decoded.left, tool: q.tool }) : decoded
  }
