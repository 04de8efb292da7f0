/**
 * The OpenAI Agents SDK: a toolstack stack as the SDK's function tools, and the audit around a user's
 * own tools. A function tool's `invoke` receives the model's arguments as the raw JSON string, before
 * a zod schema parses (and strips) them: `toAgentsTools` and `auditAgentsTools` both read them there.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { FunctionTool, RunContext, Tool } from '@openai/agents'
import type { PairStat } from '../steps/audit/SeenSet.js'
import type { Provider, ToolDeclaration } from '../kernel/model.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { assertProvider } from '../kernel/model.js'
import {
  abortedText,
  approvalOption,
  callOf,
  listTools,
  listedCatalogue,
  sendApprovable,
  sendOne,
} from '../adapter/adapter.js'
import { describeError, describeValue } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import type { PolicyApproval } from './approval.js'
import { markHeard } from './heard.js'
import type { AgentsAuditOptions } from './trace.js'
import { tracedOptions } from './trace.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ToAgentsToolsOptions {
  /** From `policyApproval`: the rules' `ask` becomes `needsApproval`; an approved call is marked for `withPolicy`. */
  readonly approval?: PolicyApproval
}

/**
 * A user's tools, each function tool's `invoke` audited, plus what the audit knows.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditedAgentsTools<T extends Tool<never>> {
  /**
   * The tools in their order: function tools wrapped, every other tool the same object (same reference).
   * A mutable array, as the SDK's `new Agent({ tools })` takes it.
   */
  readonly tools: Array<T>
  /** Sorted names of the audited tools (function tools declaring a property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

type Details = Parameters<FunctionTool['invoke']>[2]
type Parameters_ = FunctionTool['parameters']

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const NO_PARAMETERS = Object.freeze({
  type: 'object',
  properties: {},
  required: [],
  additionalProperties: true,
}) as unknown as Parameters_

/**
 * What the model reads for a result: its text, prefixed with `Error: ` for an `is_error` result (a
 * function call's output has no error flag).
 *
 * @example
 * import { outputOf } from 'toolstack/openai-agents'
 * assert.strictEqual(outputOf({ role: 'tool', tool_call_id: 'c1', content: 'nope', is_error: true }), 'Error: nope')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const outputOf = (result: { readonly content: string; readonly is_error?: boolean }): string =>
  result.is_error === true ? `Error: ${result.content}` : result.content

// read defensively: missing details, or a member whose getter throws, give no id ('')
const callIdOfDetails = (details: Details): string => {
  const id = memberOf(memberOf(details, 'toolCall'), 'callId')
  return typeof id === 'string' ? id : ''
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The tools of a provider, listed once, as the Agents SDK's function tools: each with the
 * declaration's JSON Schema, `strict: false` (so the model is not held to the schema and no key is
 * rejected before the stack), and an `invoke` that sends the raw argument string down the stack with
 * the SDK's call id as its id. `invoke` never throws (a throw from a hand-built `invoke` would end the
 * whole run): it returns any failure as the text the model reads, an `is_error` result as
 * `Error: <content>`. A failed listing rejects with a `ProviderFailure`.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import { toAgentsTools } from 'toolstack/openai-agents'
 * const stack = fromTools([
 *   {
 *     declaration: {
 *       type: 'function',
 *       function: { name: 'echo', parameters: { type: 'object', properties: { text: {} } } },
 *     },
 *     run: (a) => String(a.text),
 *   },
 * ])
 * const [echo] = await toAgentsTools(stack)
 * assert.strictEqual(echo?.strict, false)
 * assert.strictEqual(await echo?.invoke({} as never, '{"text":"hi"}'), 'hi')
 * assert.strictEqual(
 *   await echo?.invoke({} as never, '{"text":'),
 *   'Error: tool "echo" was not run: the arguments are not valid JSON (Unexpected end of JSON input)',
 * )
 *
 * @since 0.1.0
 * @category constructors
 */
export const toAgentsTools = <E>(
  provider: Provider<E>,
  options?: ToAgentsToolsOptions,
): Promise<Array<FunctionTool>> => {
  assertProvider('toAgentsTools', provider)
  const approval = approvalOption('toAgentsTools', options)
  const send = sendApprovable(approval, sendOne(provider))

  const invoke =
    (name: string) =>
    async (runContext: RunContext<unknown>, input: string, details?: Details): Promise<string> => {
      try {
        if (details?.signal?.aborted === true) return `Error: ${abortedText(details.signal.reason)}`
        const id = callIdOfDetails(details)
        return outputOf(
          await send(
            callOf(id, name, input),
            () => id !== '' && runContext.isToolApproved({ toolName: name, callId: id }) === true,
          ),
        )
      } catch (e) {
        return `Error: the tool call failed: ${describeError(e)}`
      }
    }

  const toolOf = ({ function: { name, description, parameters } }: ToolDeclaration): FunctionTool =>
    markHeard({
      type: 'function',
      name,
      description: description ?? '',
      parameters: (parameters ?? NO_PARAMETERS) as Parameters_,
      strict: false,
      invoke: invoke(name),
      needsApproval: async (_ctx: RunContext, input: unknown) =>
        approval !== undefined && approval.needsApproval(name, input),
      isEnabled: async () => true,
    })

  return listTools(provider, approval).then((declarations) => declarations.map(toolOf))
}

/**
 * A user's own Agents SDK tools with the audit around each function tool's `invoke`: the raw argument
 * string is audited against the tool's own `parameters` (the JSON Schema the SDK made of its zod
 * schema) before the tool parses it, with the options, warning and once-per-(tool, key) memory of
 * `withUnknownKeyAudit` (a `sharedUnknownKeyAudit` included: its warnings say `via: 'openai-agents-tools'`),
 * each also a custom span in the run's trace, as `auditAgent`'s (`telemetry`).
 * The tool itself is untouched: the same `invoke` runs with the same arguments,
 * and whatever it returns or throws reaches the SDK unchanged; every other tool is passed on as is.
 *
 * @example
 * import { auditAgentsTools } from 'toolstack/openai-agents'
 * const said: Array<string> = []
 * const read = {
 *   type: 'function',
 *   name: 'read',
 *   description: 'Reads',
 *   strict: true,
 *   parameters: {
 *     type: 'object',
 *     properties: { path: { type: 'string' }, offset: { type: 'number' } },
 *     required: ['path', 'offset'],
 *     additionalProperties: false,
 *   },
 *   invoke: async () => 'text',
 *   needsApproval: async () => false,
 *   isEnabled: async () => true,
 * } as const
 * const audited = auditAgentsTools([read], {
 *   onWarn: (w) => {
 *     said.push(`${w.tool}: ${w.unknownKeys.join()}`)
 *   },
 * })
 * assert.strictEqual(
 *   await audited.tools[0]?.invoke({} as never, '{"path":"a","ffset":1}', {
 *     toolCall: { type: 'function_call', callId: 'c1', name: 'read', arguments: '' },
 *   }),
 *   'text',
 * )
 * assert.deepStrictEqual(said, ['read: ffset'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const auditAgentsTools = <T extends Tool<never>>(
  tools: ReadonlyArray<T>,
  options?: AgentsAuditOptions,
): AuditedAgentsTools<T> => {
  const where = 'auditAgentsTools'
  if (!Array.isArray(tools)) throw new TypeError(`${where}: expected an array of tools, got ${describeValue(tools)}`)
  const session = auditSessions(where, tracedOptions(where, options), 'openai-agents-tools')()
  const isFunctionTool = (t: unknown): t is FunctionTool<never> =>
    isRecord(t) && t['type'] === 'function' && typeof t['name'] === 'string' && typeof t['invoke'] === 'function'
  const functionTools = tools.filter(isFunctionTool)
  // the audit reads a declaration's function (name, parameters) and a call's id and function only
  const declarations = functionTools.map((t) => ({ function: { name: t.name, parameters: t.parameters } }))
  const catalogue = listedCatalogue(session, declarations)
  const wrapped = tools.map((t): T => {
    if (!isFunctionTool(t) || !catalogue.has(t.name)) return t
    const name = t.name
    const audited: FunctionTool<never> = {
      ...t,
      invoke: (runContext, input, details) => {
        session.check(catalogue, { id: callIdOfDetails(details), function: { name, arguments: input } })
        return t.invoke(runContext, input, details)
      },
    }
    return markHeard(audited) as T
  })
  return { tools: wrapped, auditedTools: session.auditedTools, stats: session.stats }
}
