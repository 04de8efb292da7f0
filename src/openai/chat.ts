/**
 * Chat Completions: an assistant message's tool calls into a provider, and what goes back to the API
 * after a batch. The SDK's calls may be custom (free-text) tool calls, which a provider cannot run; a
 * toolstack result carries more than a tool message may (`is_error`, `structured_content`), and the
 * API rejects unknown members.
 *
 * @since 0.1.0
 */
import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { callIdOf } from '../kernel/calls.js'
import { memberOf } from '../kernel/guards.js'
import type { Provider, ToolCall, ToolResult } from '../kernel/model.js'
import { unservedText } from './unserved.js'

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The text a model reads for a result: its content, prefixed with `Error: ` for an `is_error` result
 * (a tool message has no error flag, so the text states it).
 *
 * @example
 * import { textForModel } from 'toolstack/openai'
 * assert.strictEqual(textForModel({ role: 'tool', tool_call_id: 'c1', content: 'ok' }), 'ok')
 * assert.strictEqual(
 *   textForModel({ role: 'tool', tool_call_id: 'c1', content: 'no such file', is_error: true }),
 *   'Error: no such file',
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const textForModel = (r: Pick<ToolResult, 'content' | 'is_error'>): string =>
  r.is_error === true ? `Error: ${r.content}` : r.content

/**
 * Results as the tool messages the Chat Completions API accepts: `role`, `tool_call_id` and `content`
 * only. `is_error` becomes an `Error: ` prefix ({@link textForModel}); `structured_content` is left
 * out (the model reads the text; the result keeps it).
 *
 * @example
 * import { toToolMessages } from 'toolstack/openai'
 * assert.deepStrictEqual(
 *   toToolMessages([
 *     { role: 'tool', tool_call_id: 'c1', content: '42', structured_content: { n: 42 } },
 *     { role: 'tool', tool_call_id: 'c2', content: 'denied', is_error: true },
 *   ]),
 *   [
 *     { role: 'tool', tool_call_id: 'c1', content: '42' },
 *     { role: 'tool', tool_call_id: 'c2', content: 'Error: denied' },
 *   ],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toToolMessages = (results: ReadonlyArray<ToolResult>): Array<ChatCompletionToolMessageParam> =>
  results.map((r) => ({ role: 'tool', tool_call_id: r.tool_call_id, content: textForModel(r) }))

/**
 * The answer to a custom (free-text) tool call: an `is_error` result naming the tool, since a provider
 * serves function tools only. The name, the model's, is cut and its control characters escaped.
 *
 * @example
 * import { unservedCustomCall } from 'toolstack/openai'
 * assert.deepStrictEqual(unservedCustomCall({ id: 'c1', type: 'custom', custom: { name: 'grammar', input: 'x' } }), {
 *   role: 'tool',
 *   tool_call_id: 'c1',
 *   content: 'custom tools are not served here: "grammar" was not run; call a function tool instead',
 *   is_error: true,
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const unservedCustomCall = (call: ChatCompletionMessageToolCall): ToolResult => {
  return {
    role: 'tool',
    tool_call_id: callIdOf(call),
    content: unservedText(memberOf(memberOf(call, 'custom'), 'name')),
    is_error: true,
  }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

const isCustom = (call: unknown): boolean => memberOf(call, 'type') === 'custom'

/**
 * An assistant message's `tool_calls` as they come (function and custom calls, or none), run by
 * `provider`: one result per call, in order. The function calls go to the provider in one batch, as
 * they are; a custom call never reaches it and is answered with {@link unservedCustomCall}. A Left of
 * the provider passes through. Send the results back with {@link toToolMessages}.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { executeChatToolCalls, toToolMessages } from 'toolstack/openai'
 * const stack = fromTools([{ declaration: { type: 'function', function: { name: 'now' } }, run: () => 'noon' }])
 * const results = await executeChatToolCalls(stack)([
 *   { id: 'c1', type: 'custom', custom: { name: 'sql', input: 'DROP TABLE t' } },
 *   { id: 'c2', type: 'function', function: { name: 'now', arguments: '{}' } },
 * ])()
 * assert.ok(results._tag === 'Right')
 * assert.deepStrictEqual(toToolMessages(results.right), [
 *   { role: 'tool', tool_call_id: 'c1', content: 'Error: custom tools are not served here: "sql" was not run; call a function tool instead' },
 *   { role: 'tool', tool_call_id: 'c2', content: 'noon' },
 * ])
 *
 * @since 0.1.0
 * @category combinators
 */
export const executeChatToolCalls =
  <E>(provider: Provider<E>) =>
  (toolCalls: ReadonlyArray<ChatCompletionMessageToolCall> | null | undefined): TE.TaskEither<E, Array<ToolResult>> => {
    const calls = toolCalls ?? []
    // not an array: the provider says why, as it does for any batch it cannot read
    if (!Array.isArray(calls))
      return pipe(
        provider.executeToolCalls(calls as unknown as ReadonlyArray<ToolCall>),
        TE.map((rs) => [...rs]),
      )
    // a call that is not custom goes down as it came: the provider reads and answers it
    const served = calls.filter((c): c is ChatCompletionMessageFunctionToolCall => !isCustom(c))
    const ran = served.length === 0 ? TE.right<E, ReadonlyArray<ToolResult>>([]) : provider.executeToolCalls(served)
    return pipe(
      ran,
      TE.map((results) => {
        let next = 0
        return calls.map((c): ToolResult => {
          if (isCustom(c)) return unservedCustomCall(c)
          const r = results[next++]
          return (
            r ?? {
              role: 'tool',
              tool_call_id: callIdOf(c),
              content: 'the tool provider returned no result for this call',
              is_error: true,
            }
          )
        })
      }),
    )
  }
