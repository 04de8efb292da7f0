// The contract of layers that answer calls themselves (withReasons, registry, withPolicy): a batch never
// fails. Every problem becomes an `is_error` result for exactly the calls concerned, one result per position,
// in the caller's order. Each layer decides per position whether to answer a call itself or send it on; this
// module does the rest (splits the batch by destination, runs each part, and puts the results back in order).
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem, Batch, ToolCall, ToolResult } from '../kernel/model.js'
import { derive } from './Batch.js'
import { batchSize, callIdOf } from '../kernel/calls.js'
import { describeError } from '../kernel/describe.js'

// -------------------------------------------------------------------------------------
// results
// -------------------------------------------------------------------------------------

/** An `is_error` result for `call`. */
export const errorResult = (call: unknown, content: string): ToolResult => ({
  role: 'tool',
  tool_call_id: callIdOf(call),
  content,
  is_error: true,
})

// reads of its own rather than memberOf's: a read site shared by every caller sees every shape and goes
// megamorphic, while these see only results, once per result in each layer that answers (the stack figures of
// docs/performance.md). A result's id is read as a call's is (`callIdOf`), so a provider that echoes a call's id
// 7 as the number 7 answers that call; `undefined` for no result (not one, or a read that throws)
const resultIdOf = (u: unknown): string | undefined => {
  // null is read under the guard below
  if (typeof u !== 'object') return undefined
  try {
    const r = u as { readonly role?: unknown; readonly content?: unknown; readonly tool_call_id?: unknown }
    if (r.role !== 'tool' || typeof r.content !== 'string') return undefined
    const id = r.tool_call_id
    return id === undefined || id === null ? '' : String(id)
  } catch {
    return undefined
  }
}

// a slot of a provider's array, read once; a slot that throws holds no result
const slotOf = (list: ReadonlyArray<unknown>, i: number): unknown => {
  try {
    return list[i]
  } catch {
    return undefined
  }
}

const answersInOrder = (calls: ReadonlyArray<unknown>, list: ReadonlyArray<unknown>): boolean => {
  for (let i = 0; i < list.length; i++) if (resultIdOf(slotOf(list, i)) !== callIdOf(calls[i])) return false
  return true
}

const MISSING = 'the tool provider returned no result for this call'

/**
 * Returns one result per call, in the caller's order. A result goes to a call its `tool_call_id` names that has
 * none yet: the one in the result's own place when that one does, else the first (calls that share an id, or have
 * none, are told apart by place); a later result for a call already answered is dropped. Results that name no call
 * fill the calls left without one, in order, when they are exactly as many (a provider that makes up its own ids,
 * or gives none); any other call gets an `is_error` result saying none came. Results are the provider's own
 * objects, and in the usual case (one per call, in order) the provider's array is returned itself (same reference).
 */
export const completeResults = (calls: ReadonlyArray<unknown>, results: unknown): ReadonlyArray<ToolResult> => {
  const list: ReadonlyArray<unknown> = Array.isArray(results) ? results : []
  if (list.length === calls.length && answersInOrder(calls, list)) return list as ReadonlyArray<ToolResult>
  const ids = calls.map(callIdOf)
  // each id's calls still without a result, in order
  const waiting = new Map<string, Array<number>>()
  ids.forEach((id, i) => {
    const places = waiting.get(id)
    if (places === undefined) waiting.set(id, [i])
    else places.push(i)
  })
  const out: Array<ToolResult | undefined> = ids.map(() => undefined)
  const strays: Array<ToolResult> = []
  for (const i of list.keys()) {
    const r = slotOf(list, i)
    const id = resultIdOf(r)
    if (id === undefined) continue
    const places = waiting.get(id)
    if (places === undefined) {
      strays.push(r as ToolResult)
      continue
    }
    const own = places.indexOf(i)
    const at = places.splice(own === -1 ? 0 : own, 1)[0]
    // Stryker disable next-line ConditionalExpression: equivalent: no place left sets out["undefined"], never read
    if (at !== undefined) out[at] = r as ToolResult
  }
  const gaps = out.filter((r) => r === undefined).length
  if (strays.length === gaps) for (let i = 0, k = 0; i < out.length; i++) out[i] ??= strays[k++]
  return out.map((r, i) => r ?? errorResult(calls[i], MISSING))
}

/** One `is_error` result per call, each with `content`. */
export const failAll = (calls: ReadonlyArray<unknown>, content: string): ReadonlyArray<ToolResult> =>
  calls.map((c) => errorResult(c, content))

/**
 * Runs an inner batch and returns its results: a Left, a rejection or a throw becomes one `is_error` result
 * per call naming who failed and why; missing results are filled in (see `completeResults`). `calls` is this
 * layer's own reading of the batch. Never rejects.
 */
export const answerFor = async (
  calls: ReadonlyArray<unknown>,
  run: () => Promise<Either<unknown, ReadonlyArray<ToolResult>>>,
  who = 'the tool provider',
): Promise<ReadonlyArray<ToolResult>> => {
  try {
    const out = await run()
    if (out._tag === 'Left') return failAll(calls, `${who} failed: ${describeError(out.left)}`)
    return completeResults(calls, out.right)
  } catch (e) {
    return failAll(calls, `${who} failed: ${describeError(e)}`)
  }
}

// -------------------------------------------------------------------------------------
// positions
// -------------------------------------------------------------------------------------

/** A position the layer answers itself, with its own result. */
export interface Answered {
  readonly _tag: 'Answer'
  readonly result: ToolResult
}

/** What a layer does with one position of a batch: answer it itself, or send it on. */
export type Step<K> =
  | Answered
  /**
   * Send the call on to `to`: the call as read when `call` is absent, else `call` (a copy the layer made);
   * `args` when the layer wrote the call's arguments itself.
   */
  | { readonly _tag: 'Send'; readonly to: K; readonly call?: ToolCall; readonly args?: Either<ArgsProblem, Args> }

/** Send the call on, as it came, to a layer's one destination. */
export const FORWARD: Step<'inner'> = { _tag: 'Send', to: 'inner' }

/** Answers the call here with an `is_error` result carrying `content`. */
export const answerHere = (call: unknown, content: string): Answered => ({
  _tag: 'Answer',
  result: errorResult(call, content),
})

/** A batch read once: the call at each position, and an error result for each one that could not be read. */
export interface Read {
  readonly calls: ReadonlyArray<unknown>
  readonly unreadable: ReadonlyArray<Answered | undefined>
}

/**
 * Reads every position of a batch once. A batch whose size cannot be read returns a Left holding a single
 * `is_error` result giving the reason, never a rejection; a position whose call cannot be read (a throwing
 * getter, a Proxy) gets an error result naming the position.
 */
export const readPositions = (calls: unknown): Either<ReadonlyArray<ToolResult>, Read> => {
  const size = batchSize(calls)
  if (isLeft(size))
    return left([errorResult(undefined, `this batch of tool calls could not be read: ${size.left}; no call was run`)])
  const list = calls as ReadonlyArray<unknown>
  const read: Array<unknown> = []
  const unreadable: Array<Answered | undefined> = []
  for (let i = 0; i < size.right; i++) {
    let call: unknown
    let problem: Answered | undefined
    try {
      call = list[i]
    } catch (e) {
      problem = answerHere(
        undefined,
        `the tool call at position ${i} of the batch could not be read (${describeError(e)}), so it was not run`,
      )
    }
    read.push(call)
    unreadable.push(problem)
  }
  return right({ calls: read, unreadable })
}

interface Group {
  readonly positions: Array<number>
  readonly calls: Array<ToolCall>
  readonly own: Array<Either<ArgsProblem, Args> | undefined>
}

const sendsUnchanged = <K>(steps: ReadonlyArray<Step<K>>, to: K): boolean => {
  for (const s of steps) {
    if (s._tag !== 'Send') return false
    if (s.to !== to || s.call !== undefined || s.args !== undefined) return false
  }
  return true
}

/**
 * Sends each destination's calls on as one batch (`run`), all destinations concurrently, and puts every
 * result back at its position. When every position goes on unchanged to one destination, the same batch
 * object goes down; so does an empty batch, to the layer's one destination when it has one (`only`). `who`
 * names a destination in a failure message.
 */
export const sendInOrder = async <K>(
  batch: Batch,
  read: ReadonlyArray<unknown>,
  steps: ReadonlyArray<Step<K>>,
  run: (to: K, batch: Batch) => Promise<Either<unknown, ReadonlyArray<ToolResult>>>,
  who: (to: K) => string,
  only?: K,
): Promise<ReadonlyArray<ToolResult>> => {
  if (steps.length === 0) return only === undefined ? [] : answerFor(read, () => run(only, batch), who(only))
  const first = steps[0] as Step<K>
  if (first._tag === 'Send' && sendsUnchanged(steps, first.to))
    return answerFor(read, () => run(first.to, batch), who(first.to))
  const groups = new Map<K, Group>()
  steps.forEach((s, i) => {
    if (s._tag === 'Answer') return
    let g = groups.get(s.to)
    if (g === undefined) {
      g = { positions: [], calls: [], own: [] }
      groups.set(s.to, g)
    }
    g.positions.push(i)
    g.calls.push(s.call ?? (read[i] as ToolCall))
    g.own.push(s.args)
  })
  const answered = await Promise.all(
    [...groups].map(
      async ([to, g]) =>
        [g, await answerFor(g.calls, () => run(to, derive(batch, g.calls, g.positions, g.own)), who(to))] as const,
    ),
  )
  // one destination got the whole batch, in order: return its results as they are
  if (
    answered.length === 1 &&
    (answered[0] as readonly [Group, ReadonlyArray<ToolResult>])[0].positions.length === steps.length
  ) {
    return (answered[0] as readonly [Group, ReadonlyArray<ToolResult>])[1]
  }
  const results: Array<ToolResult | undefined> = steps.map((s) => (s._tag === 'Answer' ? s.result : undefined))
  for (const [g, answers] of answered) {
    // the provider's own array in the usual case: each slot read once more, under guard
    g.positions.forEach((pos, k) => {
      const r = slotOf(answers, k)
      results[pos] = resultIdOf(r) === undefined ? undefined : (r as ToolResult)
    })
  }
  return results.map((r, i) => r ?? errorResult(read[i], MISSING))
}

/**
 * {@link sendInOrder} for a layer whose one destination is the provider below it (`send`, from `runBatch`): the
 * calls it forwards go down as one batch, the others are answered where they stand. With `only`, an empty batch
 * goes down too.
 */
export const sendBelow =
  (send: (batch: Batch) => () => Promise<Either<unknown, ReadonlyArray<ToolResult>>>) =>
  (
    batch: Batch,
    read: ReadonlyArray<unknown>,
    steps: ReadonlyArray<Step<'inner'>>,
    only?: 'inner',
  ): Promise<ReadonlyArray<ToolResult>> =>
    sendInOrder(
      batch,
      read,
      steps,
      (_, b) => send(b)(),
      () => 'the tool provider',
      only,
    )
