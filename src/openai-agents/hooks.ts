/**
 * Every tool call of an Agents SDK run, heard through the SDK's own lifecycle hooks
 * (`agent_tool_start`, on an agent or on a runner): the tools of `mcpServers`, which the SDK lists and
 * wraps itself, as well as the agent's own `tools`. Each call's raw argument string is audited against
 * the declaration of the very tool the SDK runs (its `parameters`: a zod tool's JSON Schema, an MCP
 * tool's input schema). A hook only listens: the call, the tool and the run are untouched.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Agent, AgentOutputType, FunctionTool, RunContext, Runner, Tool } from '@openai/agents'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { describeValue } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import { isHeard, markHeard } from './heard.js'
import type { AgentsAuditOptions } from './trace.js'
import { tracedOptions } from './trace.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A run audit listening on an agent or a runner.
 *
 * @since 0.1.0
 * @category model
 */
export interface AgentsRunAudit {
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it. */
  readonly stats: IO<ReadonlyArray<PairStat>>
  /** Stops listening (removes the hook). */
  readonly stop: IO<void>
}

type ToolCallDetails = { readonly toolCall: unknown }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// a member of the call the SDK hands with a function tool (`callId`, `arguments`): a string, else ''
const textOf = (toolCall: unknown, key: 'callId' | 'arguments'): string => {
  const v = memberOf(toolCall, key)
  return typeof v === 'string' ? v : ''
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

type AgentLike = { getAllTools: (...args: Array<unknown>) => Promise<ReadonlyArray<Tool>> }

const listen = (
  where: string,
  target: unknown,
  options: AgentsAuditOptions | undefined,
  subscribe: (onTool: (tool: Tool, details: ToolCallDetails) => void, onAgent: (agent: unknown) => void) => IO<void>,
): AgentsRunAudit => {
  if (!isRecord(target) || typeof target['on'] !== 'function' || typeof target['off'] !== 'function')
    throw new TypeError(`${where}: expected an Agent or a Runner of @openai/agents, got ${describeValue(target)}`)
  const session = auditSessions(where, tracedOptions(where, options), 'openai-agents-hook')()
  // one catalogue per tool object: the SDK builds MCP tools again when it lists them again; weak, so none is kept
  const catalogues = new WeakMap<object, Catalogue>()
  const catalogueOf = (tool: Tool & { readonly type: 'function' }): Catalogue => {
    const known = catalogues.get(tool)
    if (known !== undefined) return known
    const made = session.readListing([{ function: { name: tool.name, parameters: tool.parameters } }])
    catalogues.set(tool, made)
    return made
  }
  const onTool = (tool: Tool, details: ToolCallDetails): void => {
    try {
      // a tool the wrapped invoke below already hears is left to it: the hook hears the tools of an agent that
      // cannot be patched (a frozen one)
      if (tool.type !== 'function' || isHeard(tool)) return
      // arguments the tool's schema refused come blank (''), which the audit reads as none
      const call = details.toolCall
      session.check(catalogueOf(tool), {
        id: textOf(call, 'callId'),
        function: { name: tool.name, arguments: textOf(call, 'arguments') },
      })
    } catch {
      // a hook that throws would fail the tool call: the audit adds no failure of its own
    }
  }

  // The SDK blanks a call's arguments in agent_tool_start when the tool's own schema refuses them (a misspelt
  // required key, the commonest case), but still hands the raw string to the tool's invoke. So each agent's
  // getAllTools answers its function tools with invoke audited (the same wrapped object for the same tool,
  // marked heard, so the hook steps aside for it); stop() puts the agent's own getAllTools back.
  const wrapped = new WeakMap<object, Tool>()
  const auditedTool = (tool: Tool): Tool => {
    if (tool.type !== 'function' || isHeard(tool)) return tool
    const had = wrapped.get(tool)
    if (had !== undefined) return had
    const invoke = tool.invoke
    const made = markHeard(
      Object.assign(Object.create(tool) as FunctionTool, {
        invoke: (runContext: RunContext, input: string, details?: Parameters<FunctionTool['invoke']>[2]) => {
          try {
            const id = textOf(details?.toolCall, 'callId')
            session.check(catalogueOf(tool), { id, function: { name: tool.name, arguments: input } })
          } catch {
            // the audit adds no failure of its own
          }
          return invoke.call(tool, runContext, input, details)
        },
      }),
    )
    wrapped.set(tool, made)
    return made
  }
  const patched: Array<AgentLike> = []
  const onAgent = (agent: unknown): void => {
    const own = memberOf(agent, 'getAllTools') as AgentLike['getAllTools'] | undefined
    if (typeof own !== 'function' || patched.includes(agent as AgentLike)) return
    const a = agent as AgentLike
    try {
      a.getAllTools = (...args) => own.apply(a, args).then((tools) => tools.map(auditedTool))
      patched.push(a)
    } catch {
      // an agent that cannot be patched is heard through the hook alone
    }
  }
  const off = subscribe(onTool, onAgent)
  return {
    stats: session.stats,
    stop: () => {
      off()
      for (const a of patched.splice(0)) delete (a as { getAllTools?: unknown }).getAllTools
    },
  }
}

/**
 * Audits every tool call of one agent, wherever it runs (`run(agent, …)`, streamed or not): its
 * `tools` and its `mcpServers`' tools, each call's raw arguments against that tool's own declaration,
 * with the options, warning and once-per-(tool, key) memory of `withUnknownKeyAudit` (a
 * `sharedUnknownKeyAudit` included: its warnings say `via: 'openai-agents-hook'`). Tools already
 * audited by toolstack (from `auditAgentsTools`, or `toAgentsTools` over a stack with its own audit)
 * are left to it, so a call is said once. A handoff's other agent, or a clone (`agent.clone()` is a new
 * agent), needs its own `auditAgent`; or use `auditRunner`. Each warning is also a custom span
 * `toolstack.unknown_key` under the call's function span in the run's trace (`telemetry`, on by default).
 *
 * @example
 * import { Agent, run, setTracingDisabled, tool } from '@openai/agents'
 * import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
 * import { z } from 'zod'
 * import { auditAgent } from 'toolstack/openai-agents'
 * setTracingDisabled(true)
 * const said: Array<string> = []
 * const read = tool({
 *   name: 'read',
 *   description: 'Reads a file',
 *   parameters: z.object({ path: z.string() }),
 *   execute: async ({ path }) => `read ${path}`,
 * })
 * const model = new ScriptedModel([
 *   [functionCall('read', '{"path":"a","pth":"b"}', { callId: 'c1' })],
 *   [assistantMessage('done')],
 * ])
 * const agent = new Agent({ name: 'reader', instructions: 'Read.', model, tools: [read] }) // and mcpServers: [...]
 * const audit = auditAgent(agent, { onWarn: (w) => void said.push(`${w.tool}: ${w.unknownKeys.join()}`) })
 * assert.strictEqual((await run(agent, 'go')).finalOutput, 'done')
 * assert.deepStrictEqual(said, ['read: pth'])
 * assert.deepStrictEqual(audit.stats(), [{ tool: 'read', key: 'pth', calls: 1, firstId: 'c1' }])
 *
 * @since 0.1.0
 * @category constructors
 */
export const auditAgent = <C, O extends AgentOutputType>(
  agent: Agent<C, O>,
  options?: AgentsAuditOptions,
): AgentsRunAudit =>
  listen('auditAgent', agent, options, (onTool, onAgent) => {
    const listener = (_ctx: RunContext<C>, tool: Tool, details: ToolCallDetails): void => onTool(tool, details)
    agent.on('agent_tool_start', listener)
    onAgent(agent)
    return () => void agent.off('agent_tool_start', listener)
  })

/**
 * Audits every tool call of every run of a `Runner`, every agent included (handoffs, agents as
 * tools run by it), as `auditAgent` does for one agent.
 *
 * ```ts
 * const runner = new Runner()
 * auditRunner(runner, { onWarn })
 * await runner.run(agent, input)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const auditRunner = (runner: Runner, options?: AgentsAuditOptions): AgentsRunAudit =>
  listen('auditRunner', runner, options, (onTool, onAgent) => {
    const listener = (_ctx: RunContext<unknown>, _agent: unknown, tool: Tool, details: ToolCallDetails): void =>
      onTool(tool, details)
    // each agent a run reaches, before the SDK lists its tools
    const starting = (_ctx: RunContext<unknown>, agent: unknown): void => onAgent(agent)
    runner.on('agent_tool_start', listener)
    runner.on('agent_start', starting)
    return () => {
      runner.off('agent_tool_start', listener)
      runner.off('agent_start', starting)
    }
  })
