/**
 * LangChain: a toolstack stack as LangChain tools, and the audit as a callback handler for a user's
 * own tools.
 *
 * A LangChain tool validates its input before it runs: a zod `z.object` strips the keys it does not
 * declare, and a JSON Schema with `additionalProperties: false` rejects the call (LangChain validates
 * JSON Schemas too, with `@cfworker/json-schema`). So the stack's tools carry their declared schema
 * with `additionalProperties` removed at every depth (`permissiveSchema`): a key the schema does not
 * name passes LangChain's validation untouched and reaches the stack.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Serialized } from '@langchain/core/load/serializable'
import { BaseCallbackHandler } from '@langchain/core/callbacks/base'
import { ToolMessage } from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'
import { DynamicStructuredTool } from '@langchain/core/tools'
import type { AuditSession, UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import type { JsonSchema, Provider, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { assertProvider } from '../kernel/model.js'
import { abortedText, argumentsOf, callOf, listTools, listedCatalogue, sendOne } from '../adapter/adapter.js'
import { describeValue } from '../kernel/describe.js'
import { STACK_TOOL, declarationOf } from './declarations.js'
import { hasOwn, isRecord, memberOf } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// members whose value is a schema, or an array of schemas
const SCHEMA_MEMBERS = new Set([
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'anyOf',
  'oneOf',
  'allOf',
  'prefixItems',
])
// members whose value maps names (which are data, never rewritten) to schemas
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])
// members that turn an undeclared key away
const CLOSING = new Set(['additionalProperties', 'unevaluatedProperties'])
// below this depth a schema is copied unchanged (bounds recursion; no real tool schema is that deep)
const MAX_DEPTH = 64

const ownCopyOf = (
  o: Readonly<Record<string, unknown>>,
  f: (k: string, v: unknown) => unknown,
  skip: (k: string) => boolean = () => false,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(o))
    if (!skip(k))
      Object.defineProperty(out, k, { value: f(k, o[k]), enumerable: true, writable: true, configurable: true })
  return out
}

const opened = (schema: unknown, depth: number): unknown => {
  if (Array.isArray(schema)) return schema.map((s) => opened(s, depth))
  if (!isRecord(schema) || depth > MAX_DEPTH) return schema
  return ownCopyOf(
    schema,
    (k, v) =>
      SCHEMA_MEMBERS.has(k)
        ? opened(v, depth + 1)
        : SCHEMA_MAPS.has(k) && isRecord(v)
          ? ownCopyOf(v, (_, s) => opened(s, depth + 1))
          : v,
    (k) => CLOSING.has(k),
  )
}

/**
 * Returns a copy of a declared JSON Schema that lets every key through LangChain's validation: the
 * same schema without `additionalProperties` and `unevaluatedProperties` at every depth (the
 * declaration is not changed). zod writes `additionalProperties: false` on every object, so a key
 * misspelled one level down would otherwise be rejected before the audit sees it. Types, `required`
 * and property names are kept and still validated by LangChain; the model is shown the same properties.
 *
 * @example
 * import { permissiveSchema } from 'toolstack/langchain'
 * assert.deepStrictEqual(
 *   permissiveSchema({
 *     type: 'object',
 *     properties: {
 *       path: { type: 'string' },
 *       opts: { type: 'object', properties: { additionalProperties: {} }, additionalProperties: false },
 *     },
 *     required: ['path'],
 *     additionalProperties: false,
 *   }),
 *   {
 *     type: 'object',
 *     properties: { path: { type: 'string' }, opts: { type: 'object', properties: { additionalProperties: {} } } },
 *     required: ['path'],
 *   },
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const permissiveSchema = (parameters: JsonSchema | undefined): Record<string, unknown> => {
  if (!isRecord(parameters)) return { type: 'object', properties: {} }
  const out = opened(parameters, 0) as Record<string, unknown>
  if (!hasOwn(out, 'type')) out['type'] = 'object'
  return out
}

// read defensively: no config, no tool call, or a member whose getter throws, give no id
const toolCallIdOf = (config: RunnableConfig | undefined): string | undefined => {
  const call = memberOf(config, 'toolCall')
  const id = isRecord(call) ? memberOf(call, 'id') : undefined
  return typeof id === 'string' && id !== '' ? id : undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The tools of a provider, listed once, as LangChain `DynamicStructuredTool`s over the
 * {@link permissiveSchema} of each declaration, so every key the model wrote reaches the stack. A call
 * goes down the stack with LangChain's tool-call id as its id; the response format is
 * `content_and_artifact`: the model reads the result's text, and the `ToolMessage`'s `artifact` is the
 * whole result (`structured_content` included); `metadata` marks the tool as the stack's, so
 * `unknownKeyAuditMiddleware` leaves its calls to the stack's own audit. An `is_error` result becomes a
 * `ToolMessage` with `status: 'error'` (invoked without a tool call, it is thrown as an `Error`). A failed
 * listing rejects with a `ProviderFailure`.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { toLangChainTools } from 'toolstack/langchain'
 * const stack = fromTools([
 *   {
 *     declaration: {
 *       type: 'function',
 *       function: {
 *         name: 'echo',
 *         parameters: { type: 'object', properties: { text: {} }, additionalProperties: false },
 *       },
 *     },
 *     run: (a) => String(a.text),
 *   },
 * ])
 * const [echo] = await toLangChainTools(stack)
 * const message = await echo?.invoke({ id: 'c1', name: 'echo', args: { text: 'hi', txet: 'hi' }, type: 'tool_call' })
 * assert.strictEqual(message?.content, 'hi')
 *
 * @since 0.1.0
 * @category constructors
 */
export const toLangChainTools = <E>(provider: Provider<E>): Promise<Array<DynamicStructuredTool>> => {
  assertProvider('toLangChainTools', provider)
  const send = sendOne(provider)

  const func =
    (name: string) =>
    async (
      input: unknown,
      _runManager?: unknown,
      config?: RunnableConfig,
    ): Promise<[string | ToolMessage, ToolResult | undefined]> => {
      if (config?.signal?.aborted === true) throw new Error(abortedText(config.signal.reason))
      const id = toolCallIdOf(config)
      const result = await send(callOf(id ?? '', name, argumentsOf(input)))
      if (result.is_error !== true) return [result.content, result]
      if (id === undefined) throw new Error(result.content)
      return [
        new ToolMessage({ status: 'error', content: result.content, tool_call_id: id, name, artifact: result }),
        undefined,
      ]
    }

  const toolOf = ({ function: { name, description, parameters } }: ToolDeclaration): DynamicStructuredTool =>
    new DynamicStructuredTool({
      name,
      description: description ?? '',
      schema: permissiveSchema(parameters),
      responseFormat: 'content_and_artifact',
      metadata: { [STACK_TOOL]: true },
      func: func(name),
    })

  return listTools(provider).then((declarations) => declarations.map(toolOf))
}

// -------------------------------------------------------------------------------------

/**
 * A tool the handler can audit: its name and its schema (zod or JSON Schema), as every
 * LangChain structured tool has them.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditableTool {
  readonly name: string
  readonly schema: unknown
}

// one declaration per tool whose schema converts to JSON Schema
const declarationsOf = (tools: ReadonlyArray<AuditableTool>): ReadonlyArray<unknown> =>
  tools.flatMap((t) => declarationOf(t.name, t.schema))

/**
 * The unknown-key audit for a user's own LangChain tools, as a callback handler: `handleToolStart`
 * receives the call's arguments as the model wrote them (a JSON string, before the tool's zod schema
 * strips them) and the tool's name (`runName`); they are audited against that tool's own schema, with
 * the options, warning and once-per-(tool, key) memory of `withUnknownKeyAudit` (a `sharedUnknownKeyAudit`
 * included: its warnings say `via: 'langchain-callbacks'`). It only listens.
 *
 * LangChain validates a call before any callback fires: a call its schema rejects (a
 * `z.strictObject`, a JSON Schema with `additionalProperties: false`) never reaches this handler. It
 * is a class because LangChain checks handlers with `instanceof BaseCallbackHandler`.
 *
 * ```ts
 * const audit = new UnknownKeyAuditHandler(tools, { onWarn })
 * await new ToolNode(tools).invoke({ messages }, { callbacks: [audit] })
 * ```
 *
 * @example
 * import { tool } from '@langchain/core/tools'
 * import { z } from 'zod'
 * import { UnknownKeyAuditHandler } from 'toolstack/langchain'
 * const read = tool(async ({ path }) => `read ${path}`, {
 *   name: 'read',
 *   description: 'Reads',
 *   schema: z.object({ path: z.string(), offset: z.number().optional() }),
 * })
 * const said: Array<string> = []
 * const audit = new UnknownKeyAuditHandler([read], {
 *   onWarn: (w) => {
 *     said.push(`${w.unknownKeys.join()} → ${w.suggestions[0]?.didYouMean}`)
 *   },
 * })
 * const message = await read.invoke(
 *   { id: 'c1', name: 'read', args: { path: 'a', ffset: 3 }, type: 'tool_call' },
 *   { callbacks: [audit] },
 * )
 * assert.strictEqual(message.content, 'read a')
 * assert.deepStrictEqual(said, ['ffset → offset'])
 *
 * @since 0.1.0
 * @category constructors
 */
export class UnknownKeyAuditHandler extends BaseCallbackHandler {
  override name = 'toolstack_unknown_key_audit'
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it. */
  readonly stats: IO<ReadonlyArray<PairStat>>
  /** Sorted names of the audited tools (those whose schema declares a property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  readonly #session: AuditSession
  readonly #catalogue: Catalogue

  constructor(tools: ReadonlyArray<AuditableTool>, options?: UnknownKeyAuditOptions) {
    super()
    const where = 'UnknownKeyAuditHandler'
    if (!Array.isArray(tools))
      throw new TypeError(`${where}: expected an array of tools (with name and schema), got ${describeValue(tools)}`)
    this.#session = auditSessions(where, options, 'langchain-callbacks')()
    this.#catalogue = listedCatalogue(this.#session, declarationsOf(tools))
    this.stats = this.#session.stats
    this.auditedTools = this.#session.auditedTools
  }

  override handleToolStart(
    _tool: Serialized,
    input: string,
    _runId: string,
    _parentRunId?: string,
    _tags?: ReadonlyArray<string>,
    _metadata?: Readonly<Record<string, unknown>>,
    runName?: string,
    toolCallId?: string,
  ): void {
    if (typeof runName !== 'string') return
    this.#session.check(this.#catalogue, { id: toolCallId ?? '', function: { name: runName, arguments: input } })
  }
}
