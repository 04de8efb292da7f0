/**
 * What became of each call a gateway session made, for its log and its metrics. Two layers share one set:
 * `markReached`, right under the policy, marks every result the layers below it gave (the call was allowed and
 * went to its upstream); `observeCalls`, outermost, tells each call's outcome: `ok` or `error` (the upstream's
 * own `is_error`, or its failure) when its result was marked, `refused` when a layer above answered it (the
 * policy, or the listed-tools guard for a tool the session was not listed), and how long the batch took.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import type { Batch, BatchProvider, Provider, ToolResult } from '../kernel/model.js'
import { isRecord } from '../kernel/guards.js'
import { callIdOf, callNameOf } from '../kernel/calls.js'
import { callBack } from '../kernel/options.js'
import { batchOf, runBatch } from '../steps/Batch.js'
import { readPositions } from '../steps/answer.js'
import type { ListedNames } from './listed.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How a call ended: the upstream answered (`ok`), answered with an error or failed (`error`), or the gateway
 * answered it without sending it on (`refused`: by the policy, or a tool the session was not listed).
 *
 * @since 0.1.0
 * @category model
 */
export type CallOutcome = 'ok' | 'error' | 'refused'

/**
 * One call a session made, as the gateway saw it.
 *
 * @since 0.1.0
 * @category model
 */
export interface ObservedCall {
  /** The name as the host called it; `''` when it had none. */
  readonly tool: string
  /** Whether the session's last listing had that name (a model chooses what it calls). */
  readonly listed: boolean
  /** The call's id, `''` when it has none. */
  readonly id: string
  readonly outcome: CallOutcome
  /** Milliseconds its batch took, questions to the human included. */
  readonly ms: number
}

/**
 * The results the layers under the policy gave: held weakly, so a session remembers none of them.
 *
 * @since 0.1.0
 * @category model
 */
export type Reached = WeakSet<ToolResult>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A new, empty set of reached results.
 *
 * @since 0.1.0
 * @category constructors
 */
export const newReached = (): Reached => new WeakSet<ToolResult>()

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * `provider`, marking each result it gives in `reached`; calls and results pass through as they are.
 *
 * @since 0.1.0
 * @category combinators
 */
export const markReached =
  (reached: Reached) =>
  <E>(provider: Provider<E>): BatchProvider<E> => {
    const send = runBatch(provider)
    const executeBatch = (batch: Batch) => async () => {
      const out = await send(batch)()
      // a result that is not an object (a provider's garbage) cannot be marked, and so is never `ok`
      if (!isLeft(out)) for (const r of out.right) if (isRecord(r)) reached.add(r)
      return out
    }
    return {
      toolsForLlm: provider.toolsForLlm,
      executeToolCalls: (calls) => executeBatch(batchOf(calls)),
      executeBatch,
    }
  }

/**
 * `provider`, telling `onCall` what became of each call of a batch, in order, once its results are back (a Left
 * is an `error` for every call). The results pass through as they are; a throwing `onCall` changes nothing.
 *
 * @since 0.1.0
 * @category combinators
 */
export const observeCalls =
  (names: ListedNames, reached: Reached, onCall: (call: ObservedCall) => void) =>
  <E>(provider: Provider<E>): BatchProvider<E> => {
    const send = runBatch(provider)
    const executeBatch = (batch: Batch) => async () => {
      const started = performance.now()
      const out = await send(batch)()
      const ms = Math.round((performance.now() - started) * 1000) / 1000
      const read = readPositions(batch.calls)
      if (isLeft(read)) return out
      const listed = names.read()
      read.right.calls.forEach((call, i) => {
        const tool = callNameOf(call) ?? ''
        const result: unknown = isLeft(out) ? undefined : out.right[i]
        // a WeakSet answers false for a value that is not an object: a provider's garbage is refused
        const outcome: CallOutcome = isLeft(out)
          ? 'error'
          : !reached.has(result as ToolResult)
            ? 'refused'
            : (result as ToolResult).is_error === true
              ? 'error'
              : 'ok'
        callBack(onCall, { tool, listed: listed?.has(tool) === true, id: callIdOf(call), outcome, ms })
      })
      return out
    }
    return {
      toolsForLlm: provider.toolsForLlm,
      executeToolCalls: (calls) => executeBatch(batchOf(calls)),
      executeBatch,
    }
  }
