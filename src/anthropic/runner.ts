/**
 * A stack's tools for the SDK's tool runner (`client.beta.messages.toolRunner`): each a runnable tool whose
 * `parse` hands the model's `input` on as it is (the same object) and whose `run` sends the call down the
 * stack with the `tool_use` block's id.
 *
 * @since 0.1.0
 */
import type { BetaRunnableTool, BetaToolRunContext } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import type { BetaTool } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import type { Provider } from '../kernel/model.js'
import { assertProvider } from '../kernel/model.js'
import { argumentsOf, callOf, listTools, sendOne } from '../adapter/adapter.js'
import { isRecord } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A stack's tool as the tool runner takes it: its input is whatever the model sent, unparsed.
 *
 * @since 0.1.0
 * @category model
 */
export type StackRunnableTool = BetaRunnableTool<unknown>

const EMPTY_SCHEMA: BetaTool.InputSchema = { type: 'object', properties: {} }

// the tool_use block's id, which the stack's result and its warnings carry
const toolUseIdOf = (context: BetaToolRunContext | undefined): string => {
  const id = isRecord(context) && isRecord(context.toolUse) ? context.toolUse['id'] : undefined
  return typeof id === 'string' ? id : ''
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The provider's tools, listed once (the first declaration of each name), as runnable tools for
 * `client.beta.messages.toolRunner({ tools })`. `parse` returns the model's `input` itself, so the stack's
 * audit hears the keys the model wrote and the tool receives exactly what it would without toolstack. `run`
 * sends one call down the stack, its id the `tool_use` block's, and returns the result's text; an `is_error`
 * result is thrown as an `Error` holding that text, which the runner sends back as `Error: <text>` with
 * `is_error: true`. A Left or a rejection of the stack is such an error too. A listing that fails rejects
 * with a `ProviderFailure`.
 *
 * Run inside the runner, the stack's calls happen inside the SDK's own tool span, so an `otelAudit()`
 * given to the stack's `withUnknownKeyAudit` puts each warning on it.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { toRunnableTools } from 'toolstack/anthropic'
 * const stack = fromTools([
 *   { declaration: { type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: {} } } } }, run: (a) => String(a.text) },
 * ])
 * const [echo] = await toRunnableTools(stack)
 * assert.strictEqual(echo?.name, 'echo')
 * const input = { text: 'hi' }
 * assert.strictEqual(echo?.parse(input), input)
 *
 * @since 0.1.0
 * @category constructors
 */
export const toRunnableTools = <E>(provider: Provider<E>): Promise<Array<StackRunnableTool>> => {
  // checked before the listing starts: a construction mistake throws, not rejects
  assertProvider('toRunnableTools', provider)
  const send = sendOne(provider)
  return listTools(provider).then((listed) =>
    listed.map((d): StackRunnableTool => {
      const name = d.function.name
      return {
        type: 'custom',
        name,
        ...(d.function.description !== undefined ? { description: d.function.description } : {}),
        input_schema: (d.function.parameters ?? EMPTY_SCHEMA) as BetaTool.InputSchema,
        parse: (input: unknown): unknown => input,
        run: async (input: unknown, context?: BetaToolRunContext): Promise<string> => {
          const result = await send(callOf(toolUseIdOf(context), name, argumentsOf(input)))
          // the runner marks a tool_result is_error only for a run that throws
          if (result.is_error === true) throw new Error(result.content)
          return result.content
        },
      }
    }),
  )
}
