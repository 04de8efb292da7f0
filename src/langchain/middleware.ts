/**
 * `unknownKeyAuditMiddleware`: the unknown-key audit as a LangChain v1 agent middleware. `createAgent`
 * hands each tool call to `wrapToolCall` with the tool it resolved from the agent's own tools and the
 * call as the model wrote it (`toolCall.args`, before the tool's zod schema strips what it does not
 * declare), so the audit needs no list of tools and no `callbacks` on each invoke.
 *
 * It returns the configuration `createMiddleware` takes, so toolstack does not load the `langchain`
 * package (only `@langchain/core`, for the schema conversion the handler uses too).
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { ToolCall } from '@langchain/core/messages/tool'
import type { AuditSession } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { argumentsOf, callOf } from '../adapter/adapter.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import { STACK_TOOL, declarationOf } from './declarations.js'
import type { LangChainAuditOptions } from './events.js'
import { eventOptions } from './events.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the middleware reads of the request `createAgent` passes to `wrapToolCall`: the model's tool
 * call and the tool it names (a structured tool with a `name` and a zod or JSON `schema`).
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditedToolCallRequest {
  readonly toolCall: ToolCall
  readonly tool?: unknown
}

/**
 * The configuration of an agent middleware, for `createMiddleware`, plus what it heard.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditMiddleware {
  /** `'toolstack_unknown_key_audit'`: the middleware's name in the agent (LangChain refuses two of one name). */
  readonly name: string
  /** Audits the call, then returns `handler(request)` itself: the same request, the same answer. */
  readonly wrapToolCall: <R extends AuditedToolCallRequest, A>(request: R, handler: (request: R) => A) => A
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// one catalogue per tool object, made on its first call: a tool's schema is converted once, and the
// map holds no tool the agent has dropped
const cataloguesOf = (session: AuditSession): ((tool: object) => Catalogue) => {
  const made = new WeakMap<object, Catalogue>()
  return (tool) => {
    const known = made.get(tool)
    if (known !== undefined) return known
    const catalogue = session.readListing(declarationOf(memberOf(tool, 'name'), memberOf(tool, 'schema')))
    made.set(tool, catalogue)
    return catalogue
  }
}

/**
 * The unknown-key audit for a LangChain v1 agent (`createAgent`), as the configuration of a middleware:
 * `wrapToolCall` audits each call's raw arguments against the schema of the tool the agent resolved
 * for it (every tool of the agent, its middleware's tools included), with the options, warning and
 * once-per-(tool, key) memory of `withUnknownKeyAudit` (a `sharedUnknownKeyAudit` included: its warnings
 * say `via: 'langchain-middleware'`), then hands the very same request to the next
 * handler and returns its answer, or its rejection, unchanged. A tool whose schema declares no property
 * is not audited; nor is a tool made by `toLangChainTools`: its calls go down a toolstack stack, whose
 * own `withUnknownKeyAudit` hears them, so each pair is said once. An `onWarn` that throws changes
 * nothing about the call. Each warning is also a custom event `toolstack.unknown_key` in the run of the
 * tool call (`telemetry`, on by default).
 *
 * ```ts
 * const agent = createAgent({ model, tools, middleware: [createMiddleware(unknownKeyAuditMiddleware({ onWarn }))] })
 * ```
 *
 * @example
 * import { tool } from '@langchain/core/tools'
 * import { z } from 'zod'
 * import { unknownKeyAuditMiddleware } from 'toolstack/langchain'
 * const read = tool(async ({ path }) => `read ${path}`, {
 *   name: 'read',
 *   description: 'Reads',
 *   schema: z.object({ path: z.string(), offset: z.number().optional() }),
 * })
 * const said: Array<string> = []
 * const audit = unknownKeyAuditMiddleware({
 *   onWarn: (w) => {
 *     said.push(`${w.tool}: ${w.unknownKeys.join()} → ${w.suggestions[0]?.didYouMean}`)
 *   },
 * })
 * const toolCall = { id: 'c1', name: 'read', args: { path: 'a', ffset: 3 }, type: 'tool_call' as const }
 * const message = await audit.wrapToolCall({ toolCall, tool: read }, (r) => r.tool.invoke(r.toolCall))
 * assert.strictEqual(message.content, 'read a')
 * assert.deepStrictEqual(said, ['read: ffset → offset'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownKeyAuditMiddleware = (options?: LangChainAuditOptions): UnknownKeyAuditMiddleware => {
  const where = 'unknownKeyAuditMiddleware'
  const session = auditSessions(where, eventOptions(where, options), 'langchain-middleware')()
  const catalogueOf = cataloguesOf(session)

  const audit = (request: unknown): void => {
    try {
      const tool = memberOf(request, 'tool')
      const toolCall = memberOf(request, 'toolCall')
      const name = memberOf(toolCall, 'name')
      if (!isRecord(tool) || typeof name !== 'string') return
      if (memberOf(memberOf(tool, 'metadata'), STACK_TOOL) === true) return
      const id = memberOf(toolCall, 'id')
      session.check(
        catalogueOf(tool),
        callOf(typeof id === 'string' ? id : '', name, argumentsOf(memberOf(toolCall, 'args'))),
      )
    } catch {
      // a request that cannot be read is not audited, and goes on as it came
    }
  }

  return {
    name: 'toolstack_unknown_key_audit',
    wrapToolCall: (request, handler) => {
      audit(request)
      return handler(request)
    },
    stats: session.stats,
  }
}
