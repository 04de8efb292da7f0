// The answering layers' error contract: a batch never fails. Every problem becomes
// an `is_error` result for exactly the calls concerned, in the caller's order.
import type { Either } from 'fp-ts/lib/Either.js'
import type { ToolCall, ToolResult } from '../Provider.js'

/** The call's id as a string, `''` when it has none or cannot be read. */
export const callIdOf = (call: unknown): string => {
  try {
    if (typeof call !== 'object' || call === null) return ''
    const id = (call as { readonly id?: unknown }).id
    return id === undefined || id === null ? '' : String(id)
  } catch {
    return ''
  }
}

/** The call's function name, when it is a readable string. */
export const callNameOf = (call: unknown): string | undefined => {
  try {
    if (typeof call !== 'object' || call === null) return undefined
    const fn = (call as { readonly function?: unknown }).function
    if (typeof fn !== 'object' || fn === null) return undefined
    const name = (fn as { readonly name?: unknown }).name
    return typeof name === 'string' ? name : undefined
  } catch {
    return undefined
  }
}

/** An `is_error` result answering `call`. */
export const errorResult = (call: unknown, content: string): ToolResult => ({
  role: 'tool',
  tool_call_id: callIdOf(call),
  content,
  is_error: true,
})

/** A failure of any kind, in one line a model (and a human) can read. */
export const describeError = (e: unknown): string => {
  if (e instanceof Error) return e.message === '' ? e.name : e.message
  if (typeof e === 'string') return e
  try {
    const s = JSON.stringify(e)
    return s === undefined ? String(e) : s
  } catch {
    return String(e)
  }
}

const isResult = (u: unknown): u is ToolResult =>
  typeof u === 'object' && u !== null && (u as { role?: unknown }).role === 'tool' && typeof (u as { content?: unknown }).content === 'string'

const answersInOrder = (calls: ReadonlyArray<unknown>, list: ReadonlyArray<unknown>): boolean => {
  for (let i = 0; i < list.length; i++) {
    const r = list[i]
    if (!isResult(r) || r.tool_call_id !== callIdOf(calls[i])) return false
  }
  return true
}

/**
 * One result per call, in the caller's order. Results are matched to calls by
 * `tool_call_id` when every call has its own id, by position otherwise; a call left
 * without a result gets an `is_error` one saying so. Results are kept as the very
 * objects the provider returned.
 */
export const completeResults = (
  calls: ReadonlyArray<unknown>,
  results: ReadonlyArray<unknown>,
): ReadonlyArray<ToolResult> => {
  const missing = 'the tool provider returned no result for this call'
  const list = Array.isArray(results) ? results : []
  // the usual answer, one result per call in order: kept as the very array it came in
  if (list.length === calls.length && answersInOrder(calls, list)) return list as ReadonlyArray<ToolResult>
  const ids = calls.map(callIdOf)
  const distinct = ids.every((id) => id !== '') && new Set(ids).size === ids.length
  if (distinct) {
    const byId = new Map<string, ToolResult>()
    for (const r of list) if (isResult(r) && !byId.has(r.tool_call_id)) byId.set(r.tool_call_id, r)
    // a provider that answered in order, with the ids it was given, keeps its order
    // even when some results are missing
    return calls.map((c, i) => byId.get(ids[i] as string) ?? errorResult(c, missing))
  }
  return calls.map((c, i) => {
    const r: unknown = list[i]
    return isResult(r) ? r : errorResult(c, missing)
  })
}

/** One `is_error` result per call, each saying `content`. */
export const failAll = (calls: ReadonlyArray<unknown>, content: string): ReadonlyArray<ToolResult> =>
  calls.map((c) => errorResult(c, content))

/**
 * Runs an inner batch and answers for it: a Left, a rejection or a throw becomes one
 * `is_error` result per call saying the provider failed and why; a short answer has
 * its gaps filled. Never rejects.
 */
export const answerFor = async <E>(
  calls: ReadonlyArray<ToolCall>,
  run: () => Promise<Either<E, ReadonlyArray<ToolResult>>>,
  who = 'the tool provider',
): Promise<ReadonlyArray<ToolResult>> => {
  if (calls.length === 0) {
    try {
      await run()
    } catch {
      // nothing to answer for
    }
    return []
  }
  try {
    const out = await run()
    if (out._tag === 'Left') return failAll(calls, `${who} failed: ${describeError(out.left)}`)
    return completeResults(calls, out.right)
  } catch (e) {
    return failAll(calls, `${who} failed: ${describeError(e)}`)
  }
}
