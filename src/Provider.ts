/**
 * The provider model: a record of two functions, in the OpenAI
 * chat-completions shapes that MCP hosts already speak.
 *
 * @since 0.1.0
 */
import * as t from 'io-ts/lib/index.js'
import type { TaskEither } from 'fp-ts/lib/TaskEither.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A JSON Schema object. Its `properties` keys are the argument names a tool declares.
 *
 * @since 0.1.0
 * @category model
 */
export type JsonSchema = Readonly<Record<string, unknown>>

/**
 * @since 0.1.0
 * @category model
 */
export interface FunctionDeclaration {
  readonly name: string
  readonly description?: string
  readonly parameters?: JsonSchema
}

/**
 * What the model is shown for one tool.
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolDeclaration {
  readonly type: 'function'
  readonly function: FunctionDeclaration
}

/**
 * A model's tool call. `arguments` is the JSON string the call travels as, or an
 * object a caller already parsed; the empty string means "no arguments".
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolCall {
  readonly id: string
  readonly type?: 'function'
  readonly function: {
    readonly name: string
    readonly arguments: string | Readonly<Record<string, unknown>>
  }
}

/**
 * One result per call, in the caller's order.
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolResult {
  readonly role: 'tool'
  readonly tool_call_id: string
  readonly content: string
  readonly is_error?: boolean
  /** An MCP tool's `structuredContent`, kept as it came. */
  readonly structured_content?: unknown
}

/**
 * A record of two functions; nothing else. Combinators are
 * `(options) => (provider) => provider`.
 *
 * @since 0.1.0
 * @category model
 */
export interface Provider<E> {
  readonly toolsForLlm: TaskEither<E, ReadonlyArray<ToolDeclaration>>
  readonly executeToolCalls: (calls: ReadonlyArray<ToolCall>) => TaskEither<E, ReadonlyArray<ToolResult>>
}

/**
 * The error type of a provider.
 *
 * @since 0.1.0
 * @category model
 */
export type ErrorOf<P> = P extends Provider<infer E> ? E : never

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

/**
 * A non-array object. Decoding never strips keys: the audit must see them all.
 *
 * @since 0.1.0
 * @category codecs
 */
export const UnknownObject: t.Type<Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, unknown> =
  t.UnknownRecord

/**
 * A declaration whose argument names can be read: a `function` object with a string
 * `name`, a `parameters` object and, if present, an object `properties`.
 *
 * @since 0.1.0
 * @category codecs
 */
export const ReadableDeclaration = t.type({
  function: t.type({
    name: t.string,
    parameters: t.intersection([t.UnknownRecord, t.partial({ properties: t.UnknownRecord })]),
  }),
})

/**
 * @since 0.1.0
 * @category codecs
 */
export type ReadableDeclaration = t.TypeOf<typeof ReadableDeclaration>

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * Whether a value has the shape of a provider (both functions present).
 *
 * @example
 * import { isProvider } from 'toolstack'
 * assert.strictEqual(isProvider({ toolsForLlm: () => Promise.resolve(), executeToolCalls: () => () => Promise.resolve() }), true)
 * assert.strictEqual(isProvider({ toolsForLlm: () => Promise.resolve() }), false)
 *
 * @since 0.1.0
 * @category guards
 */
export const isProvider = (u: unknown): u is Provider<unknown> => {
  try {
    return (
      typeof u === 'object' &&
      u !== null &&
      typeof (u as Record<string, unknown>)['toolsForLlm'] === 'function' &&
      typeof (u as Record<string, unknown>)['executeToolCalls'] === 'function'
    )
  } catch {
    return false
  }
}

/**
 * Throws a `TypeError` naming what is missing when `u` is not a provider. For use
 * at construction time by every combinator.
 *
 * @since 0.1.0
 * @category guards
 */
export const assertProvider: (where: string, u: unknown) => asserts u is Provider<unknown> = (where, u) => {
  if (isProvider(u)) return
  const missing =
    typeof u !== 'object' || u === null
      ? `got ${describe(u)}`
      : ['toolsForLlm', 'executeToolCalls']
          .filter((k) => typeof (u as Record<string, unknown>)[k] !== 'function')
          .map((k) => `\`${k}\` is not a function`)
          .join(' and ')
  throw new TypeError(`${where}: expected a provider ({ toolsForLlm, executeToolCalls }), but ${missing}`)
}

const describe = (u: unknown): string =>
  u === null ? 'null' : Array.isArray(u) ? 'an array' : `a value of type ${typeof u}`
