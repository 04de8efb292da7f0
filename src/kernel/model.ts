/**
 * The provider model: a record of functions, in the OpenAI chat-completions shapes that MCP hosts already
 * use. Every other module builds on these types.
 *
 * @since 0.1.0
 */
import * as t from 'io-ts/lib/index.js'
import type { Either } from 'fp-ts/lib/Either.js'
import type { TaskEither } from 'fp-ts/lib/TaskEither.js'
import { describeValue } from './describe.js'
import { memberOf } from './guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The argument name every layer tolerates, declared or not: `withReasons` adds it.
 *
 * @since 0.1.0
 * @category model
 */
export const REASON_PARAM = 'reason'

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
 * A progress update of a call in flight, as MCP's `notifications/progress` carries it.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpProgress {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/**
 * A request an upstream MCP server sends its client (`sampling/createMessage`, `elicitation/create`,
 * `roots/list`), to be answered by the host whose call it serves.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpHostRequest {
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>>
}

/**
 * What the MCP host that sent a call offers the layers below while the call runs, so an MCP upstream can
 * reach that host: set by `toMcpServer`, carried down unchanged by every layer (a layer that rebuilds a
 * call copies it), read by `fromMcpClient`.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpCallContext {
  /** Aborted when the host cancels the call (`notifications/cancelled`) or its session closes. */
  readonly signal?: AbortSignal
  /** Sends the host a progress update under the host's own token; absent when the host asked for none. */
  readonly onProgress?: (progress: McpProgress) => void
  /** The capabilities the host declared when it initialized. */
  readonly hostCapabilities?: Readonly<Record<string, unknown>>
  /** The same object for every call of one host session, so calls of different hosts can be told apart. */
  readonly session?: object
  /**
   * Sends the host a request and resolves with its answer; rejects with a JSON-RPC error that says why when
   * the host did not declare the capability the method needs. The request is related to this call (over
   * HTTP, sent on the call's own stream) unless `afterCall` says the call is over.
   */
  readonly requestHost?: (
    request: McpHostRequest,
    options?: { readonly signal?: AbortSignal; readonly afterCall?: boolean },
  ) => Promise<unknown>
  /**
   * Sends the host a server's log message (`notifications/message` params, already escaped and bounded) when
   * the host's log level takes it: related to this call (over HTTP, on the call's own stream), or on the
   * session's own stream when `afterCall` says the call is over. Absent when the host is not served logs.
   */
  readonly onLog?: (message: McpLogMessage, options?: { readonly afterCall?: boolean }) => void
}

/**
 * A server's log message, the params of `notifications/message`.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpLogMessage {
  readonly level: string
  readonly logger?: string
  readonly data: unknown
}

/**
 * A model's tool call. `arguments` is the JSON string the call travels as, or an object a caller already
 * parsed; the empty string means "no arguments".
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
  /** Set on calls an MCP host sent (`toMcpServer`): the way back to that host. */
  readonly mcp_context?: McpCallContext
}

/**
 * An MCP content block (text, image, audio, resource link, embedded resource), as a server sent it.
 *
 * @since 0.1.0
 * @category model
 */
export type ContentBlock = Readonly<Record<string, unknown>> & { readonly type: string }

/**
 * One result per call, in the caller's order. `content` is the text a chat model reads; an MCP tool's own
 * blocks and structured content travel beside it, unchanged, for whoever serves the result to an MCP host
 * again.
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
  /** An MCP tool's content blocks, kept as they came (images, audio and resources included). */
  readonly mcp_content?: ReadonlyArray<ContentBlock>
  /**
   * Set on the answer to a call that names no tool the provider serves (`content` says so), so a layer that
   * serves MCP can answer it as the specification has it: a JSON-RPC error, not a tool's result.
   */
  readonly unknown_tool?: true
}

/**
 * Parsed arguments. Shared between layers, so treat them as read-only.
 *
 * @since 0.1.0
 * @category model
 */
export type Args = Readonly<Record<string, unknown>>

/**
 * Why a call's arguments do not read as a JSON object.
 *
 * @since 0.1.0
 * @category model
 */
export type ArgsProblem =
  | { readonly _tag: 'Absent' }
  | { readonly _tag: 'Empty' }
  | { readonly _tag: 'Unparsable'; readonly message: string }
  | { readonly _tag: 'NotAnObject'; readonly got: string }
  /** The call, or its `function`, threw when read. */
  | { readonly _tag: 'Unreadable'; readonly message: string }

/**
 * Calls for a layer that reads each call's arguments once: a {@link Batch}, whose parses the layers below
 * share, or the calls alone (`{ calls }`), whose arguments the layer reads itself and keeps no parse of.
 *
 * @since 0.1.0
 * @category model
 */
export interface CallReads {
  readonly calls: ReadonlyArray<ToolCall>
  /** `parseArgs` of the arguments of `calls[i]`, shared down the stack; absent for calls alone. */
  readonly argsAt?: (i: number) => Either<ArgsProblem, Args>
}

/**
 * A batch on its way down a stack: the calls, and each call's arguments parsed at most once for all layers.
 * Layers that change nothing pass the same batch object down; a layer that builds a new batch supplies each
 * call's parse (the one from above, or the arguments it wrote itself).
 *
 * @since 0.1.0
 * @category model
 */
export interface Batch extends CallReads {
  /**
   * The calls, as a provider without `executeBatch` receives them: the caller's array itself (same reference)
   * while no layer has changed the batch.
   */
  readonly calls: ReadonlyArray<ToolCall>
  /** `parseArgs` of the arguments of `calls[i]` as first read; returns the same result on every call. */
  readonly argsAt: (i: number) => Either<ArgsProblem, Args>
}

/**
 * A record of functions; nothing else. Combinators are `(options) => (provider) => provider`.
 *
 * `executeBatch` is optional: toolstack's own layers offer it, and call it on the provider below when it has
 * one, so a call's arguments are parsed once for the whole stack. Any other provider is called through
 * `executeToolCalls`, with the calls alone.
 *
 * @since 0.1.0
 * @category model
 */
export interface Provider<E> {
  readonly toolsForLlm: TaskEither<E, ReadonlyArray<ToolDeclaration>>
  readonly executeToolCalls: (calls: ReadonlyArray<ToolCall>) => TaskEither<E, ReadonlyArray<ToolResult>>
  /** The same as `executeToolCalls(batch.calls)`, with the arguments' parses shared. */
  readonly executeBatch?: (batch: Batch) => TaskEither<E, ReadonlyArray<ToolResult>>
}

/**
 * A provider that offers `executeBatch`: every provider toolstack makes is one.
 *
 * @since 0.1.0
 * @category model
 */
export interface BatchProvider<E> extends Provider<E> {
  readonly executeBatch: (batch: Batch) => TaskEither<E, ReadonlyArray<ToolResult>>
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
 * A declaration whose argument names can be read: a `function` object with a string `name`, a `parameters`
 * object and, if present, an object `properties`.
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
 * import { isProvider } from 'toolstack/extend'
 * assert.strictEqual(
 *   isProvider({ toolsForLlm: () => Promise.resolve(), executeToolCalls: () => () => Promise.resolve() }),
 *   true,
 * )
 * assert.strictEqual(isProvider({ toolsForLlm: () => Promise.resolve() }), false)
 *
 * @since 0.1.0
 * @category guards
 */
export const isProvider = (u: unknown): u is Provider<unknown> =>
  typeof memberOf(u, 'toolsForLlm') === 'function' && typeof memberOf(u, 'executeToolCalls') === 'function'

// an `async` executeToolCalls returns a Promise where a task (a function) belongs: the sign of a
// Promise-based provider passed in without `fromAsync`
const isAsyncFunction = (f: unknown): boolean => typeof f === 'function' && f.constructor?.name === 'AsyncFunction'

/**
 * Throws a `TypeError` naming what is wrong when `u` is not a provider: a member that is missing, or an
 * `async` `executeToolCalls` (the shape of a Promise-based provider, which `fromAsync` adapts). For use at
 * construction time by every combinator.
 *
 * @since 0.1.0
 * @category guards
 */
export const assertProvider: (where: string, u: unknown) => asserts u is Provider<unknown> = (where, u) => {
  if (isProvider(u)) {
    if (isAsyncFunction(memberOf(u, 'executeToolCalls'))) {
      throw new TypeError(
        `${where}: this provider's executeToolCalls is an async function, so it returns a Promise; ` +
          "a provider's executeToolCalls returns a task (calls => () => Promise<Either>). " +
          'For a Promise-based provider, wrap it: fromAsync(provider)',
      )
    }
    return
  }
  const missing =
    typeof u !== 'object' || u === null
      ? `got ${describeValue(u)}`
      : ['toolsForLlm', 'executeToolCalls']
          .filter((k) => typeof memberOf(u, k) !== 'function')
          .map((k) => `\`${k}\` is not a function`)
          .join(' and ')
  throw new TypeError(`${where}: expected a provider ({ toolsForLlm, executeToolCalls }), but ${missing}`)
}
