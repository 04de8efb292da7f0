/**
 * `@google/genai`: a stack's declarations as the SDK's function declarations (`parametersJsonSchema`, the JSON
 * Schema form), a response's function calls run by a provider, each answered with a `functionResponse` part,
 * and a stack as a `CallableTool` for the SDK's automatic function calling. The model's `args` is an object
 * the tool receives whole; it goes down the stack as that very object, so the stack's audit hears the keys
 * the model wrote.
 *
 * @since 0.1.0
 */
import type { CallableTool, FunctionCall, FunctionDeclaration, Part, Tool } from '@google/genai'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { assertProvider } from '../kernel/model.js'
import { memberOf } from '../kernel/guards.js'
import { describeError } from '../kernel/describe.js'
import { argumentsOf, callOf, listTools } from '../adapter/adapter.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One `functionResponse` part, as `generateContent` takes it back in a user turn: the call's `id` (when the
 * call had one) and `name`, and the result's text as `response.output`, or as `response.error` where the
 * result is an error (the keys the API documents for the two).
 *
 * @since 0.1.0
 * @category model
 */
export interface FunctionResponsePart extends Part {
  readonly functionResponse: {
    readonly id?: string
    readonly name: string
    readonly response: { readonly output: string } | { readonly error: string }
  }
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Declarations as the SDK's function declarations: `name`, `description`, and `parameters` as
 * `parametersJsonSchema` (a JSON Schema, as the stack declared it; the SDK's `parameters` takes its own
 * OpenAPI subset instead). A declaration without parameters has none. Give them as
 * `config: { tools: [{ functionDeclarations }] }`.
 *
 * @example
 * import { toFunctionDeclarations } from 'toolstack/google'
 * assert.deepStrictEqual(
 *   toFunctionDeclarations([
 *     { type: 'function', function: { name: 'read', description: 'Reads', parameters: { type: 'object', properties: { path: {} } } } },
 *     { type: 'function', function: { name: 'now' } },
 *   ]),
 *   [
 *     { name: 'read', description: 'Reads', parametersJsonSchema: { type: 'object', properties: { path: {} } } },
 *     { name: 'now' },
 *   ],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toFunctionDeclarations = (declarations: ReadonlyArray<ToolDeclaration>): Array<FunctionDeclaration> =>
  declarations.map((d) => ({
    name: d.function.name,
    ...(d.function.description !== undefined ? { description: d.function.description } : {}),
    ...(d.function.parameters !== undefined ? { parametersJsonSchema: d.function.parameters } : {}),
  }))

/**
 * A function call as a call for a provider: its `id` (or, for a call without one, `call_<position>` so the
 * stack's warnings and its policy can tell calls apart), its `name`, and its `args` object itself.
 */
const callAt = (fc: unknown, i: number): ToolCall => {
  const id = memberOf(fc, 'id')
  const name = memberOf(fc, 'name')
  return callOf(
    typeof id === 'string' && id !== '' ? id : `call_${i + 1}`,
    typeof name === 'string' ? name : '',
    argumentsOf(memberOf(fc, 'args')),
  )
}

/**
 * A result as the `functionResponse` part that answers `call`: the call's own `id` (none when it had none)
 * and `name`; `response.output` the result's text, or `response.error` for an `is_error` result.
 * `structured_content` is left out (the model reads the text; the result keeps it).
 *
 * @example
 * import { toFunctionResponsePart } from 'toolstack/google'
 * assert.deepStrictEqual(
 *   toFunctionResponsePart({ id: 'fc_1', name: 'read' }, { role: 'tool', tool_call_id: 'fc_1', content: 'no such file', is_error: true }),
 *   { functionResponse: { id: 'fc_1', name: 'read', response: { error: 'no such file' } } },
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toFunctionResponsePart = (call: FunctionCall, result: ToolResult): FunctionResponsePart => {
  const id = memberOf(call, 'id')
  const name = memberOf(call, 'name')
  return {
    functionResponse: {
      ...(typeof id === 'string' && id !== '' ? { id } : {}),
      name: typeof name === 'string' ? name : '',
      response: result.is_error === true ? { error: result.content } : { output: result.content },
    },
  }
}

const MISSING = 'the tool provider returned no result for this call'

const answer = (calls: ReadonlyArray<FunctionCall>, results: ReadonlyArray<ToolResult>): Array<FunctionResponsePart> =>
  calls.map((c, i) =>
    toFunctionResponsePart(
      c,
      results[i] ?? { role: 'tool', tool_call_id: callAt(c, i).id, content: MISSING, is_error: true },
    ),
  )

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

/**
 * A response's function calls as they come (`response.functionCalls`, or none), run by `provider` in one
 * batch: one `functionResponse` part per call, in order, each carrying the call's `id` and name, ready to send
 * as the next user turn (`{ role: 'user', parts }`). Each call's arguments are its `args` object itself, so the
 * tool receives exactly what it would without toolstack. A Left of the provider passes through.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { executeFunctionCalls } from 'toolstack/google'
 * const stack = fromTools([{ declaration: { type: 'function', function: { name: 'now' } }, run: () => 'noon' }])
 * const parts = await executeFunctionCalls(stack)([{ id: 'fc_1', name: 'now', args: {} }])()
 * assert.deepStrictEqual(parts, {
 *   _tag: 'Right',
 *   right: [{ functionResponse: { id: 'fc_1', name: 'now', response: { output: 'noon' } } }],
 * })
 *
 * @since 0.1.0
 * @category combinators
 */
export const executeFunctionCalls =
  <E>(provider: Provider<E>) =>
  (functionCalls: ReadonlyArray<FunctionCall> | null | undefined): TE.TaskEither<E, Array<FunctionResponsePart>> => {
    const calls = functionCalls ?? []
    // not an array: the provider says why, as it does for any batch it cannot read
    if (!Array.isArray(calls))
      return pipe(
        provider.executeToolCalls(calls as unknown as ReadonlyArray<ToolCall>),
        TE.map((rs) => rs.map((r) => toFunctionResponsePart({}, r))),
      )
    if (calls.length === 0) return TE.right([])
    return pipe(
      provider.executeToolCalls(calls.map(callAt)),
      TE.map((results) => answer(calls, results)),
    )
  }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A stack as a `CallableTool`, for the SDK's automatic function calling (`config: { tools: [callable] }`): its
 * `tool()` lists the stack (the first declaration of each name) as function declarations, and its `callTool`
 * runs the calls of the stack's own tools in one batch, answering each with a `functionResponse` part (the SDK
 * hands every callable tool every call, and each answers its own). `callTool` never rejects: a Left or a
 * rejection of the stack becomes an error response for each call, and a stack that cannot be listed answers
 * none. A listing through `tool()` that fails rejects with a `ProviderFailure`.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { toCallableTool } from 'toolstack/google'
 * const callable = toCallableTool(fromTools([{ declaration: { type: 'function', function: { name: 'now' } }, run: () => 'noon' }]))
 * assert.deepStrictEqual(await callable.tool(), { functionDeclarations: [{ name: 'now' }] })
 * assert.deepStrictEqual(await callable.callTool([{ name: 'now', args: {} }, { name: 'elsewhere', args: {} }]), [
 *   { functionResponse: { name: 'now', response: { output: 'noon' } } },
 * ])
 *
 * @since 0.1.0
 * @category constructors
 */
export const toCallableTool = <E>(provider: Provider<E>): CallableTool => {
  assertProvider('toCallableTool', provider)
  // the names of the last successful listing: the calls this tool answers
  let names: ReadonlySet<string> | undefined
  const tool = async (): Promise<Tool> => {
    const listed = await listTools(provider)
    names = new Set(listed.map((d) => d.function.name))
    return { functionDeclarations: toFunctionDeclarations(listed) }
  }
  // the SDK lists every callable tool before its first call; a call before any listing lists first
  const known = async (): Promise<ReadonlySet<string>> => {
    if (names === undefined) await tool()
    return names ?? new Set()
  }
  const callTool = async (functionCalls: Array<FunctionCall>): Promise<Array<Part>> => {
    let own: ReadonlySet<string>
    try {
      own = await known()
    } catch {
      // a stack that cannot list owns no call: another tool may answer them
      return []
    }
    const mine = functionCalls.filter((c) => {
      const name = memberOf(c, 'name')
      return typeof name === 'string' && own.has(name)
    })
    if (mine.length === 0) return []
    try {
      const out = await executeFunctionCalls(provider)(mine)()
      if (out._tag === 'Right') return out.right
      return answer(mine, failed(mine, out.left))
    } catch (e) {
      return answer(mine, failed(mine, e))
    }
  }
  return { tool, callTool }
}

const failed = (calls: ReadonlyArray<FunctionCall>, why: unknown): ReadonlyArray<ToolResult> =>
  calls.map((c, i) => ({
    role: 'tool',
    tool_call_id: callAt(c, i).id,
    content: `the tool provider failed: ${describeError(why)}`,
    is_error: true,
  }))
