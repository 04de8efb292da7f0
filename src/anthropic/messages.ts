/**
 * The Messages API: a stack's declarations as the API's tools (`input_schema`), and an assistant message's
 * `tool_use` blocks run by a provider, each answered with a `tool_result` block for the next user turn. The
 * model's `input` is an object the tool receives whole; it goes down the stack as that very object, so the
 * stack's audit hears the keys the model wrote.
 *
 * @since 0.1.0
 */
import type { ContentBlock, Tool } from '@anthropic-ai/sdk/resources/messages'
import type { BetaContentBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { isRecord } from '../kernel/guards.js'
import { argumentsOf, callOf } from '../adapter/adapter.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One `tool_result` block, as the Messages API (and its beta) takes it back in a user turn: `content` is the
 * result's text, `is_error` set where the result is an error.
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolResultBlock {
  readonly type: 'tool_result'
  readonly tool_use_id: string
  readonly content: string
  readonly is_error?: true
  /** Echoed from a toolset member's `tool_use`, which the API pairs with its result by it. */
  readonly toolset_name?: string
}

/**
 * The content of an assistant message, of the Messages API or of its beta.
 *
 * @since 0.1.0
 * @category model
 */
export type AssistantContent = ReadonlyArray<ContentBlock> | ReadonlyArray<BetaContentBlock>

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const EMPTY_SCHEMA: Tool.InputSchema = { type: 'object', properties: {} }

/**
 * Declarations as Messages API tools: `name`, `description`, and `parameters` as `input_schema` (the
 * empty object schema when a declaration has none). A schema whose `type` is not `"object"` is sent as it
 * is; the API says why it refuses it.
 *
 * @example
 * import { toAnthropicTools } from 'toolstack/anthropic'
 * assert.deepStrictEqual(
 *   toAnthropicTools([
 *     { type: 'function', function: { name: 'read', description: 'Reads', parameters: { type: 'object', properties: { path: {} } } } },
 *     { type: 'function', function: { name: 'now' } },
 *   ]),
 *   [
 *     { name: 'read', description: 'Reads', input_schema: { type: 'object', properties: { path: {} } } },
 *     { name: 'now', input_schema: { type: 'object', properties: {} } },
 *   ],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toAnthropicTools = (declarations: ReadonlyArray<ToolDeclaration>): Array<Tool> =>
  declarations.map((d) => ({
    name: d.function.name,
    ...(d.function.description !== undefined ? { description: d.function.description } : {}),
    // the declaration's schema as it is: the model sees what the stack declared
    input_schema: (d.function.parameters ?? EMPTY_SCHEMA) as Tool.InputSchema,
  }))

interface ToolUse {
  readonly call: ToolCall
  readonly toolset: string | undefined
}

/**
 * The `tool_use` blocks of a message's content, in order, as calls: the block's `id`, `name`, and its
 * `input` object as the arguments (the same object). Every other block is left out: text, thinking, and
 * the server tools' blocks (`server_tool_use`, `mcp_tool_use`, their results), which the API ran itself.
 */
const toolUsesOf = (content: ReadonlyArray<unknown>): ReadonlyArray<ToolUse> => {
  const uses: Array<ToolUse> = []
  for (const block of content) {
    if (!isRecord(block) || block['type'] !== 'tool_use') continue
    const id = block['id']
    const name = block['name']
    const toolset = block['toolset_name']
    uses.push({
      call: callOf(typeof id === 'string' ? id : '', typeof name === 'string' ? name : '', argumentsOf(block['input'])),
      toolset: typeof toolset === 'string' ? toolset : undefined,
    })
  }
  return uses
}

/**
 * A result as a `tool_result` block: the text the model reads, `is_error` where the result is an error;
 * `structured_content` is left out (the model reads the text; the result keeps it).
 *
 * @example
 * import { toToolResultBlock } from 'toolstack/anthropic'
 * assert.deepStrictEqual(toToolResultBlock({ role: 'tool', tool_call_id: 'toolu_1', content: 'denied', is_error: true }), {
 *   type: 'tool_result',
 *   tool_use_id: 'toolu_1',
 *   content: 'denied',
 *   is_error: true,
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toToolResultBlock = (r: ToolResult): ToolResultBlock => ({
  type: 'tool_result',
  tool_use_id: r.tool_call_id,
  content: r.content,
  ...(r.is_error === true ? { is_error: true } : {}),
})

const MISSING = 'the tool provider returned no result for this call'

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * An assistant message's `content` as it comes (`message.content`, of `messages.create` or of the beta), its
 * `tool_use` blocks run by `provider` in one batch: one `tool_result` block per `tool_use` block, in order,
 * ready to send as the next user turn (`{ role: 'user', content: results }`). Each call's arguments are the
 * block's `input` object itself, so the tool receives exactly what it would without toolstack. Every other
 * block is left alone: server tools (`server_tool_use`, `mcp_tool_use`) were run by the API, which sent their
 * results in the same message. A Left of the provider passes through.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { executeToolUses } from 'toolstack/anthropic'
 * const stack = fromTools([{ declaration: { type: 'function', function: { name: 'now' } }, run: () => 'noon' }])
 * const results = await executeToolUses(stack)([
 *   { type: 'text', text: 'Let me check.', citations: null },
 *   { type: 'tool_use', id: 'toolu_1', name: 'now', input: {}, caller: { type: 'direct' } },
 * ])()
 * assert.deepStrictEqual(results, {
 *   _tag: 'Right',
 *   right: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'noon' }],
 * })
 *
 * @since 0.1.0
 * @category combinators
 */
export const executeToolUses =
  <E>(provider: Provider<E>) =>
  (content: AssistantContent): TE.TaskEither<E, Array<ToolResultBlock>> => {
    // not an array: the provider says why, as it does for any batch it cannot read
    if (!Array.isArray(content))
      return pipe(
        provider.executeToolCalls(content as unknown as ReadonlyArray<ToolCall>),
        TE.map((rs) => rs.map(toToolResultBlock)),
      )
    const uses = toolUsesOf(content)
    if (uses.length === 0) return TE.right([])
    return pipe(
      provider.executeToolCalls(uses.map((u) => u.call)),
      TE.map((results) =>
        uses.map((u, i) => {
          const r = results[i] ?? { role: 'tool', tool_call_id: u.call.id, content: MISSING, is_error: true }
          const block = toToolResultBlock(r)
          return u.toolset === undefined ? block : { ...block, toolset_name: u.toolset }
        }),
      ),
    )
  }
