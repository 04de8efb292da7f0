/**
 * What can be sent to a host. A result is read from its upstream with `JSON.parse`, which follows any nesting;
 * sending it again needs `JSON.stringify`, which stops at this process's stack (about 5,000 levels here), and a
 * host's own parser often stops sooner (Python's at about 1,000). A result nested deeper than {@link
 * MAX_RESULT_DEPTH} is never sent: the call is answered with an error that says so, and logged as one, rather than
 * left without an answer while the log says `ok`.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import type { Batch, BatchProvider, Provider, ToolResult } from '../kernel/model.js'
import { isRecord, nestsDeeperThan } from '../kernel/guards.js'
import { batchOf, runBatch } from '../steps/Batch.js'

/**
 * The deepest nesting of objects and arrays a result's blocks and structured content may have.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_RESULT_DEPTH = 1_000

const tooDeep = nestsDeeperThan(MAX_RESULT_DEPTH)

/**
 * Why `result` cannot be sent to a host, or `undefined` when it can: what a host receives of it (its MCP blocks
 * and its structured content) nests more than `MAX_RESULT_DEPTH` levels deep.
 *
 * @example
 * import { unsendable } from 'toolstack/mcp'
 * let deep: Record<string, unknown> = {}
 * for (let i = 0; i < 2_000; i++) deep = { a: deep }
 * const result = { role: 'tool' as const, tool_call_id: '1', content: 'x', structured_content: deep }
 * assert.match(unsendable(result) ?? '', /nested more than 1000 levels deep/)
 * assert.strictEqual(unsendable({ ...result, structured_content: { a: [1] } }), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const unsendable = (result: ToolResult): string | undefined => {
  const parts = [result.mcp_content, result.structured_content].filter(
    (p): p is object => typeof p === 'object' && p !== null,
  )
  return parts.some(tooDeep)
    ? `the tool ran, but its result could not be sent to the host: it is nested more than ${MAX_RESULT_DEPTH} levels deep`
    : undefined
}

/**
 * `provider`, answering each result that cannot be sent (`unsendable`) with an `is_error` result that says why, in
 * its place; every other result passes through as it is (the same object).
 *
 * @since 0.1.0
 * @category combinators
 */
export const answerSendable = <E>(provider: Provider<E>): BatchProvider<E> => {
  const send = runBatch(provider)
  const executeBatch = (batch: Batch) => async () => {
    const out = await send(batch)()
    if (isLeft(out)) return out
    let changed = false
    const results = out.right.map((r) => {
      const why = isRecord(r) ? unsendable(r) : undefined
      if (why === undefined) return r
      changed = true
      return { role: 'tool' as const, tool_call_id: r.tool_call_id, content: why, is_error: true }
    })
    return changed ? { ...out, right: results } : out
  }
  return {
    toolsForLlm: provider.toolsForLlm,
    executeToolCalls: (calls) => executeBatch(batchOf(calls)),
    executeBatch,
  }
}
