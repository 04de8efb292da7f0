/**
 * A toolstack stack as AI SDK tools, and AI SDK tools as a provider.
 *
 * `toAiSdkTools` lists the stack once and makes each tool a `dynamicTool` over a JSON Schema with no
 * validator: the SDK only parses the model's JSON, so every key the model wrote reaches the stack,
 * where the audit, the policy and the server see it. `fromAiSdkTools` goes the other way: a user's own
 * tools at the bottom of a stack, each validated by its own schema below the audit.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import type { JSONSchema7, Tool, ToolExecutionOptions, ToolSet } from 'ai'
import { asSchema, dynamicTool, jsonSchema } from 'ai'
import type { LocalTool, ToolOutput } from '../combinators/Provider.js'
import type { BatchProvider, Provider, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { batchOf } from '../steps/Batch.js'
import { fromTools } from '../combinators/Provider.js'
import { assertProvider } from '../kernel/model.js'
import { argumentsOf, approvalOption, callOf, listTools, sendApprovable, sendOne } from '../adapter/adapter.js'
import { answerFor } from '../steps/answer.js'
import { describeError, describeValue } from '../kernel/describe.js'
import { isRecord } from '../kernel/guards.js'
import type { PolicyApproval } from './approval.js'
import { approvedInMessages } from './approval.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ToAiSdkToolsOptions {
  /** From `policyApproval`: a call the human approved through the SDK is marked approved for `withPolicy`. */
  readonly approval?: PolicyApproval
}

/**
 * What a `toAiSdkTools` tool throws for an `is_error` result, so the SDK reports a tool error (the
 * model reads `Error: <content>`); the result is kept on the error.
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolResultError extends Error {
  readonly result: ToolResult
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const EMPTY_OBJECT_SCHEMA: JSONSchema7 = Object.freeze({ type: 'object', properties: {} }) as JSONSchema7

const isToolResult = (u: unknown): u is ToolResult =>
  isRecord(u) && u['role'] === 'tool' && typeof u['content'] === 'string'

/**
 * The `toModelOutput` of a `toAiSdkTools` tool: returns the result's text, as a chat-completions tool
 * message would carry it. Accepts the AI SDK 7 argument (`{ toolCallId, input, output }`) and
 * Mastra's (the output alone).
 *
 * @example
 * import { modelOutputOf } from 'toolstack/ai-sdk'
 * const result = { role: 'tool', tool_call_id: 'c1', content: 'hello', structured_content: { n: 1 } } as const
 * assert.deepStrictEqual(modelOutputOf({ toolCallId: 'c1', input: {}, output: result }), {
 *   type: 'text',
 *   value: 'hello',
 * })
 * assert.deepStrictEqual(modelOutputOf(result), { type: 'text', value: 'hello' })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const modelOutputOf = (arg: unknown): { readonly type: 'text'; readonly value: string } => {
  const output: unknown = isToolResult(arg) ? arg : isRecord(arg) ? arg['output'] : arg
  if (isToolResult(output)) return { type: 'text', value: output.content }
  if (typeof output === 'string') return { type: 'text', value: output }
  try {
    return { type: 'text', value: JSON.stringify(output) ?? '' }
  } catch {
    return { type: 'text', value: describeValue(output) }
  }
}

/**
 * The error a `toAiSdkTools` tool throws for an `is_error` result.
 *
 * @example
 * import { toolResultError } from 'toolstack/ai-sdk'
 * const e = toolResultError({ role: 'tool', tool_call_id: 'c1', content: 'no such file', is_error: true })
 * assert.strictEqual(String(e), 'Error: no such file')
 * assert.strictEqual(e.result.tool_call_id, 'c1')
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolResultError = (result: ToolResult): ToolResultError => {
  const e = new Error(result.content)
  Object.defineProperty(e, 'result', { value: result, enumerable: false })
  return e as ToolResultError
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The tools of a provider, listed once, as an AI SDK `ToolSet`: one `dynamicTool` per declaration
 * (its JSON Schema, no validator), whose `execute` sends the call down the stack with the SDK's
 * `toolCallId` as its id. An `is_error` result is thrown as a {@link ToolResultError}, so the model
 * gets the SDK's tool error; any other result is returned as the tool's output, structured content
 * included, and the model reads its text (`toModelOutput`). A failed listing rejects with a
 * `ProviderFailure`.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { toAiSdkTools } from 'toolstack/ai-sdk'
 * const stack = fromTools([
 *   {
 *     declaration: {
 *       type: 'function',
 *       function: { name: 'echo', parameters: { type: 'object', properties: { text: {} } } },
 *     },
 *     run: (a) => String(a.text),
 *   },
 * ])
 * const tools = await toAiSdkTools(stack)
 * const out = await tools.echo?.execute?.(
 *   { text: 'hi', txet: 'hi' },
 *   { toolCallId: 'c1', messages: [], context: undefined },
 * )
 * assert.deepStrictEqual(out, { role: 'tool', tool_call_id: 'c1', content: 'hi' })
 *
 * @since 0.1.0
 * @category constructors
 */
export const toAiSdkTools = <E>(provider: Provider<E>, options?: ToAiSdkToolsOptions): Promise<ToolSet> => {
  assertProvider('toAiSdkTools', provider)
  const approval = approvalOption('toAiSdkTools', options)
  const send = sendApprovable(approval, sendOne(provider))

  const execute =
    (name: string) =>
    async (input: unknown, context: ToolExecutionOptions<unknown>): Promise<ToolResult> => {
      const signal = context.abortSignal
      if (signal?.aborted === true) throw signal.reason
      const id = context.toolCallId
      const result = await send(callOf(id, name, argumentsOf(input)), () => approvedInMessages(context.messages, id))
      if (result.is_error === true) throw toolResultError(result)
      return result
    }

  const toolOf = ({ function: { name, description, parameters } }: ToolDeclaration): readonly [string, Tool] => [
    name,
    dynamicTool({
      ...(description !== undefined ? { description } : {}),
      inputSchema: jsonSchema((parameters ?? EMPTY_OBJECT_SCHEMA) as JSONSchema7),
      execute: execute(name),
      toModelOutput: modelOutputOf,
    }),
  ]

  // fromEntries: a tool named `__proto__` is an own property like any other
  return listTools(provider, approval).then((declarations) => Object.fromEntries(declarations.map(toolOf)) as ToolSet)
}

// -------------------------------------------------------------------------------------

type Output = { readonly type: string; readonly value?: unknown; readonly reason?: unknown }

const json = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return describeValue(u)
  }
}

// what the model would have been shown, in the provider model's terms
const outcomeOfModelOutput = (o: unknown): ToolOutput => {
  if (!isRecord(o)) return json(o)
  const out = o as Output
  switch (out.type) {
    case 'text':
      return String(out.value)
    case 'json':
      return { content: json(out.value), structured_content: out.value }
    case 'error-text':
      return { content: String(out.value), is_error: true }
    case 'error-json':
      return { content: json(out.value), is_error: true }
    case 'execution-denied':
      return { content: typeof out.reason === 'string' ? out.reason : 'the tool execution was denied', is_error: true }
    case 'content':
      return Array.isArray(out.value)
        ? out.value
            .map((p: unknown) =>
              isRecord(p) && p['type'] === 'text'
                ? String(p['text'])
                : `[${isRecord(p) ? String(p['type']) : 'content'}]`,
            )
            .join('\n')
        : json(out.value)
    default:
      return json(o)
  }
}

const outcomeOf = (output: unknown): ToolOutput =>
  typeof output === 'string'
    ? output
    : output === undefined
      ? ''
      : { content: json(output), structured_content: output }

const lastOf = async (output: unknown): Promise<unknown> => {
  const o = await output
  if (
    typeof o === 'object' &&
    o !== null &&
    typeof (o as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  ) {
    let last: unknown
    for await (const chunk of o as AsyncIterable<unknown>) last = chunk
    return last
  }
  return o
}

const isRunnable = (t: unknown): t is Tool & { readonly execute: NonNullable<Tool['execute']> } =>
  isRecord(t) &&
  typeof t['execute'] === 'function' &&
  (t['type'] === undefined || t['type'] === 'function' || t['type'] === 'dynamic')

const localToolOf = async (
  name: string,
  tool: Tool & { readonly execute: NonNullable<Tool['execute']> },
): Promise<LocalTool> => {
  const schema = asSchema(tool.inputSchema)
  const parameters = (await schema.jsonSchema) as ToolDeclaration['function']['parameters']
  const description = typeof tool.description === 'string' ? tool.description : undefined
  return {
    declaration: {
      type: 'function',
      function: {
        name,
        ...(description !== undefined ? { description } : {}),
        ...(parameters !== undefined ? { parameters } : {}),
      },
    },
    run: async (args, call): Promise<Either<string, ToolOutput>> => {
      const checked =
        schema.validate === undefined ? { success: true as const, value: args } : await schema.validate(args)
      if (!checked.success)
        return left(
          `the arguments do not match the schema of tool ${JSON.stringify(name)}: ${describeError(checked.error)}`,
        )
      const options = { toolCallId: call.id, messages: [], context: undefined } as ToolExecutionOptions<unknown>
      const output = await lastOf(tool.execute(checked.value as never, options as never))
      if (tool.toModelOutput === undefined) return right(outcomeOf(output))
      return right(
        outcomeOfModelOutput(
          await tool.toModelOutput({ toolCallId: call.id, input: checked.value as never, output: output as never }),
        ),
      )
    },
  }
}

/**
 * A provider over a user's AI SDK tools, so they can sit at the bottom of a toolstack stack. Each tool
 * is listed with the JSON Schema the SDK makes of its `inputSchema`; a call is validated by that schema
 * (a zod `z.object` strips undeclared keys here, below the audit) and run by the tool's own `execute`.
 * Its output becomes the result's text (through the tool's `toModelOutput` when it has one; otherwise
 * a string as is, anything else as JSON, kept as `structured_content`). Provider-defined tools and
 * tools without `execute` are left out. Never fails a batch; a listing fails only when a schema cannot
 * be read.
 *
 * @example
 * import { tool } from 'ai'
 * import { z } from 'zod'
 * import { fromAiSdkTools } from 'toolstack/ai-sdk'
 * const provider = fromAiSdkTools({
 *   shout: tool({ inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => text.toUpperCase() }),
 * })
 * const out = await provider.executeToolCalls([
 *   { id: 'c1', function: { name: 'shout', arguments: '{"text":"hi","txet":1}' } },
 * ])()
 * assert.deepStrictEqual(out, { _tag: 'Right', right: [{ role: 'tool', tool_call_id: 'c1', content: 'HI' }] })
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromAiSdkTools = (tools: ToolSet): BatchProvider<Error> => {
  if (!isRecord(tools))
    throw new TypeError(`fromAiSdkTools: expected a ToolSet (an object of tools), got ${describeValue(tools)}`)
  const runnable = Object.entries(tools).filter(
    (e): e is [string, Tool & { readonly execute: NonNullable<Tool['execute']> }] => isRunnable(e[1]),
  )
  let built: Promise<BatchProvider<never>> | undefined
  const build = (): Promise<BatchProvider<never>> => {
    if (built !== undefined) return built
    const b = Promise.all(runnable.map(([name, tool]) => localToolOf(name, tool))).then(fromTools)
    // on failure, drop the cached promise so the next call reads the schemas again
    b.catch(() => {
      built = undefined
    })
    built = b
    return b
  }
  const executeBatch =
    (batch: Parameters<BatchProvider<never>['executeBatch']>[0]) =>
    async (): Promise<Either<Error, ReadonlyArray<ToolResult>>> => {
      try {
        return await (await build()).executeBatch(batch)()
      } catch (e) {
        return right(await answerFor(batch.calls, () => Promise.reject(e), 'reading the tools’ schemas'))
      }
    }
  return {
    toolsForLlm: () =>
      build().then(
        (p) => p.toolsForLlm(),
        (e: unknown) => left(e instanceof Error ? e : new Error(describeError(e))),
      ),
    executeToolCalls: (calls) => executeBatch(batchOf(calls)),
    executeBatch,
  }
}
