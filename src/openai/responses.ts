/**
 * The Responses API: its function tools are one level flatter than the Chat Completions ones, its
 * calls carry `call_id` (the id their output must reference) beside an item `id`, and their outputs
 * are input items of their own. The three mappings a host would write by hand, in the provider
 * model's terms.
 *
 * @since 0.1.0
 */
import type {
  FunctionTool,
  ResponseCustomToolCallOutput,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputItem,
} from 'openai/resources/responses/responses'
import type { ToolCall, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import { textForModel } from './chat.js'
import { unservedText } from './unserved.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ResponsesToolsOptions {
  /**
   * The tools' `strict`. With `false` the model is not held to the schema, so a key it invents reaches
   * the stack, where the audit sees it. With `true` the API constrains the arguments to the schema
   * (which must then be strict: every property required, `additionalProperties: false`), so there are
   * no undeclared keys to detect.
   */
  readonly strict: boolean
}

/**
 * One function call output, as the Responses API takes it back.
 *
 * @since 0.1.0
 * @category model
 */
export type FunctionCallOutput = ResponseInputItem.FunctionCallOutput & {
  readonly call_id: string
  readonly output: string
}

/**
 * The answer to a custom tool call, as the Responses API takes it back.
 *
 * @since 0.1.0
 * @category model
 */
export type CustomToolCallOutput = ResponseCustomToolCallOutput & {
  readonly call_id: string
  readonly output: string
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Declarations as Responses API function tools: `name`, `description` and `parameters` moved up a
 * level, with the chosen `strict`. A declaration without parameters gets the empty object schema.
 *
 * @example
 * import { toResponsesTools } from 'toolstack/openai'
 * assert.deepStrictEqual(
 *   toResponsesTools(
 *     [
 *       {
 *         type: 'function',
 *         function: { name: 'read', description: 'Reads', parameters: { type: 'object', properties: { path: {} } } },
 *       },
 *     ],
 *     { strict: false },
 *   ),
 *   [
 *     {
 *       type: 'function',
 *       name: 'read',
 *       description: 'Reads',
 *       parameters: { type: 'object', properties: { path: {} } },
 *       strict: false,
 *     },
 *   ],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toResponsesTools = (
  declarations: ReadonlyArray<ToolDeclaration>,
  options: ResponsesToolsOptions,
): Array<FunctionTool> => {
  if (!isRecord(options) || typeof options.strict !== 'boolean')
    throw new TypeError('toResponsesTools: options must be { strict: boolean }')
  return declarations.map((d) => ({
    type: 'function',
    name: d.function.name,
    ...(d.function.description !== undefined ? { description: d.function.description } : {}),
    parameters: (d.function.parameters ?? { type: 'object', properties: {} }) as FunctionTool['parameters'],
    strict: options.strict,
  }))
}

/**
 * The function calls of a response's `output`, in order, as calls for a provider: the call's
 * `call_id` becomes the `ToolCall.id` (so each result refers back to it), `arguments` the string the
 * model wrote. Every other output item is left out.
 *
 * @example
 * import { fromResponsesCalls } from 'toolstack/openai'
 * assert.deepStrictEqual(
 *   fromResponsesCalls([
 *     { type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [] },
 *     { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{"path":"a"}' },
 *   ]),
 *   [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const fromResponsesCalls = (output: ReadonlyArray<unknown>): Array<ToolCall> => {
  const calls: Array<ToolCall> = []
  for (const item of output) {
    if (!isRecord(item) || item['type'] !== 'function_call') continue
    const c = item as unknown as ResponseFunctionToolCall
    calls.push({ id: c.call_id, type: 'function', function: { name: c.name, arguments: c.arguments } })
  }
  return calls
}

/**
 * Results as Responses API input items: one `function_call_output` per result, its `call_id` the
 * result's `tool_call_id`, its `output` the text ({@link textForModel}: an `is_error` result prefixed
 * with `Error: `; `structured_content` left out).
 *
 * @example
 * import { toFunctionCallOutputs } from 'toolstack/openai'
 * assert.deepStrictEqual(
 *   toFunctionCallOutputs([{ role: 'tool', tool_call_id: 'call_1', content: 'no such file', is_error: true }]),
 *   [{ type: 'function_call_output', call_id: 'call_1', output: 'Error: no such file' }],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toFunctionCallOutputs = (results: ReadonlyArray<ToolResult>): Array<FunctionCallOutput> =>
  results.map((r) => ({ type: 'function_call_output', call_id: r.tool_call_id, output: textForModel(r) }))

/**
 * A response's `output` as input items for the next request, each item the same object, in order: the
 * API takes its output back as it gave it (reasoning items included, which a reasoning model needs to
 * see again). Push them before the {@link toFunctionCallOutputs} that answer their calls.
 *
 * @example
 * import { toResponsesInput } from 'toolstack/openai'
 * const call = { type: 'function_call' as const, id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{}' }
 * assert.deepStrictEqual(toResponsesInput([call]), [call])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toResponsesInput = (output: ReadonlyArray<ResponseOutputItem>): Array<ResponseInputItem> =>
  // the SDK's output and input types differ only where the API echoes more than it documents as input (a
  // computer call output's status "failed", an additional_tools item's roles): the items go back as they came
  output.map((item) => item as ResponseInputItem)

/**
 * The answers to a response's custom (free-text) tool calls, which a provider cannot run: one
 * `custom_tool_call_output` per `custom_tool_call` item of `output`, in order, its `call_id` the call's,
 * its `output` saying the tool was not run because only function tools are served here (the name cut
 * and escaped, as `unservedCustomCall` says it for Chat Completions). The API wants an answer for
 * every call; push them with the {@link toFunctionCallOutputs}. Every other item is left out.
 *
 * @example
 * import { unservedCustomCallOutputs } from 'toolstack/openai'
 * assert.deepStrictEqual(
 *   unservedCustomCallOutputs([
 *     { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_1', name: 'shell', input: 'rm -rf /' },
 *     { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'read', arguments: '{}' },
 *   ]),
 *   [
 *     {
 *       type: 'custom_tool_call_output',
 *       call_id: 'call_1',
 *       output: 'custom tools are not served here: "shell" was not run; call a function tool instead',
 *     },
 *   ],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const unservedCustomCallOutputs = (output: ReadonlyArray<unknown>): Array<CustomToolCallOutput> => {
  const outputs: Array<CustomToolCallOutput> = []
  for (const item of output) {
    if (memberOf(item, 'type') !== 'custom_tool_call') continue
    const id = memberOf(item, 'call_id')
    outputs.push({
      type: 'custom_tool_call_output',
      call_id: typeof id === 'string' ? id : '',
      output: unservedText(memberOf(item, 'name')),
    })
  }
  return outputs
}
