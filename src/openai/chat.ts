/**
 * Chat Completions: what goes back to the API after a batch. A toolstack result carries more than a
 * tool message may (`is_error`, `structured_content`), and the API rejects unknown members.
 *
 * @since 0.1.0
 */
import type { ChatCompletionToolMessageParam } from 'openai/resources/chat/completions'
import type { ToolResult } from '../kernel/model.js'

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
