/**
 * A batch on its way down a stack, with each call's arguments parsed at most once for all layers: how
 * toolstack's layers share one parse. A provider without `executeBatch` is called with the calls.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { left } from 'fp-ts/lib/Either.js'
import type { TaskEither } from 'fp-ts/lib/TaskEither.js'
import { parseArgs } from './Args.js'
import type { Args, ArgsProblem, Batch, Provider, ToolCall, ToolResult } from '../kernel/model.js'
import { argumentsIn, functionOf } from '../kernel/calls.js'
import { describeError, describeValue } from '../kernel/describe.js'

type Parsed = Either<ArgsProblem, Args>

const parsedArgumentsAt = (calls: ReadonlyArray<unknown>, i: number): Parsed => {
  let raw: unknown
  try {
    const call: unknown = calls[i]
    if (typeof call !== 'object' || call === null)
      return left({ _tag: 'Unreadable', message: `the call is ${describeValue(call)}` })
    raw = argumentsIn(functionOf(call))
    // a Proxy's traps run here too (a revoked one throws): inside the guard, as the read above
    return parseArgs(raw)
  } catch (e) {
    return left({ _tag: 'Unreadable', message: describeError(e) })
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The batch of a caller's calls. Nothing is read until a layer asks: `argsAt(i)` parses the arguments of
 * `calls[i]` on its first call and returns the same result (same reference) on every later one, so a stack
 * parses each call once and every layer sees the arguments as the first did.
 *
 * @example
 * import { batchOf } from 'toolstack/extend'
 * const batch = batchOf([{ id: '1', function: { name: 'echo', arguments: '{"text":"hi"}' } }])
 * assert.strictEqual(batch.argsAt(0), batch.argsAt(0))
 * assert.deepStrictEqual(batch.argsAt(0), { _tag: 'Right', right: { text: 'hi' } })
 *
 * @since 0.1.0
 * @category constructors
 */
export const batchOf = (calls: ReadonlyArray<ToolCall>): Batch => {
  const parsed: Array<Parsed | undefined> = []
  return { calls, argsAt: (i) => (parsed[i] ??= parsedArgumentsAt(calls, i)) }
}

/**
 * A batch a layer built from `from`: `calls[j]` carries the arguments of `from`'s position `origin[j]` (the
 * same call, or a copy with the same arguments), unless `own[j]` gives its own parse (arguments the layer
 * wrote itself).
 *
 * @since 0.1.0
 * @category constructors
 */
export const derive = (
  from: Batch,
  calls: ReadonlyArray<ToolCall>,
  origin: ReadonlyArray<number>,
  own: ReadonlyArray<Parsed | undefined> = [],
): Batch => ({
  calls,
  argsAt: (j) => own[j] ?? from.argsAt(origin[j] ?? -1),
})

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * Whether `provider` reads batches (it has `executeBatch`), so the parses of the calls sent to it are reused
 * below; else it is handed the calls alone.
 *
 * @since 0.1.0
 * @category utils
 */
export const readsBatches = <E>(provider: Provider<E>): boolean => typeof provider.executeBatch === 'function'

/**
 * Runs a batch through `provider`: through its `executeBatch` when it has one, so the parses travel with the
 * calls, else through `executeToolCalls` with the calls alone. Which one is decided once, when
 * `runBatch(provider)` is made.
 *
 * @since 0.1.0
 * @category combinators
 */
export const runBatch = <E>(provider: Provider<E>): ((batch: Batch) => TaskEither<E, ReadonlyArray<ToolResult>>) => {
  // called as methods, so a provider that is a class instance keeps its `this`
  const run: (batch: Batch) => unknown = readsBatches(provider)
    ? (batch) => (provider.executeBatch as NonNullable<Provider<E>['executeBatch']>).call(provider, batch)
    : (batch) => provider.executeToolCalls(batch.calls)
  return (batch) => {
    const task = run(batch)
    if (typeof task === 'function') return task as TaskEither<E, ReadonlyArray<ToolResult>>
    // a Promise-based provider passed without fromAsync: name the fix, not "… is not a function"
    const got = typeof (task as { then?: unknown } | null)?.then === 'function' ? 'a Promise' : describeValue(task)
    const why = new TypeError(
      `the provider's executeToolCalls returned ${got}, not a task (a function returning a Promise); ` +
        'a Promise-based provider is adapted with fromAsync(provider)',
    )
    return () => Promise.reject(why)
  }
}
