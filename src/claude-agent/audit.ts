/**
 * `claudeAgentAudit`: the unknown-key audit in a Claude Agent SDK session. Every tool call passes the SDK's
 * `PreToolUse` hook with the raw `tool_input` before the tool runs (an MCP server's zod schema then strips the
 * keys it does not declare, without a word); the hook compares that input with the schema the tool was listed
 * with, and warns once per (tool, key). It only listens: it returns no decision and changes no input.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { HookCallback, HookCallbackMatcher, HookEvent, McpServerConfig } from '@anthropic-ai/claude-agent-sdk'
import type { UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import type { ToolDeclaration } from '../kernel/model.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { emptyCatalogue } from '../steps/audit/Catalogue.js'
import { argumentsOf, callOf } from '../adapter/adapter.js'
import { describeValue } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import type { ListedTool } from './servers.js'
import { listServer, mcpToolName, observedServers } from './servers.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The audit's options, and the MCP servers whose tools it audits.
 *
 * @since 0.1.0
 * @category model
 */
export interface ClaudeAgentAuditOptions extends UnknownKeyAuditOptions {
  /** The `mcpServers` the session will be given: pass the audit's own `mcpServers` to `query()` instead. */
  readonly mcpServers?: Readonly<Record<string, McpServerConfig>>
}

/**
 * What `query()` takes from the audit: its `mcpServers` and its `PreToolUse` hook.
 *
 * @since 0.1.0
 * @category model
 */
export interface ClaudeAgentAuditSettings {
  readonly mcpServers: Record<string, McpServerConfig>
  readonly hooks: Partial<Record<HookEvent, Array<HookCallbackMatcher>>>
}

/**
 * A session's audit.
 *
 * @since 0.1.0
 * @category model
 */
export interface ClaudeAgentAudit {
  /**
   * The servers to give `query()`: each in-process server (`createSdkMcpServer`) a new entry whose listing the
   * audit hears as the CLI reads it; every other entry the same object.
   */
  readonly mcpServers: Record<string, McpServerConfig>
  /** The `PreToolUse` hook matcher (every tool): it listens and returns no decision. */
  readonly preToolUse: HookCallbackMatcher
  /** Both, to spread into `query()`'s options: `{ ...audit.options }`. */
  readonly options: ClaudeAgentAuditSettings
  /** Sorted names of the tools audited now (`mcp__<server>__<tool>`, declaring a property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Each server's listed tools as declarations, named as the CLI names them (`mcp__<server>__<tool>`).
 *
 * @example
 * import { declarationsOfServers } from './audit.js'
 * assert.deepStrictEqual(
 *   declarationsOfServers(new Map([['notes', [{ name: 'search', inputSchema: { type: 'object', properties: { query: {} } } }]]])),
 *   [{ type: 'function', function: { name: 'mcp__notes__search', parameters: { type: 'object', properties: { query: {} } } } }],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const declarationsOfServers = (
  servers: ReadonlyMap<string, ReadonlyMap<string, ListedTool> | ReadonlyArray<ListedTool>>,
): ReadonlyArray<ToolDeclaration> =>
  [...servers].flatMap(([server, tools]) =>
    [...tools.values()].map((t): ToolDeclaration => ({
      type: 'function',
      function: {
        name: mcpToolName(server, t.name),
        // as the server listed it: the audit reads an unreadable schema as declaring nothing
        ...(isRecord(t.inputSchema) ? { parameters: t.inputSchema } : {}),
      },
    })),
  )

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * The audit of a Claude Agent SDK session: lists the tools of the MCP servers the session will be given (a
 * server the CLI starts or reaches — stdio, HTTP, SSE — is started or reached once more here, listed and
 * closed; an in-process server is heard as the CLI lists it), and returns the servers and the `PreToolUse`
 * hook to give `query()`. The hook compares each call's `tool_input` with the schema its tool was listed with,
 * and warns once per (tool, key), with the options, warning and once-per-pair memory of `withUnknownKeyAudit`
 * (a `sharedUnknownKeyAudit` included: its warnings say `via: 'claude-agent-hook'`). It only listens: it
 * returns no decision and changes no input, and nothing it does throws into the session. Claude Code's own
 * tools (Read, Bash, …) are not audited: their schemas are not published to the host. Options it cannot use
 * throw a `TypeError` at once; a server that cannot be listed rejects, naming the server.
 *
 * ```ts
 * const audit = await claudeAgentAudit({ mcpServers, onWarn })
 * for await (const message of query({ prompt, options: { ...audit.options } })) …
 * ```
 *
 * @example
 * import { claudeAgentAudit } from 'toolstack/claude-agent'
 * const said: Array<string> = []
 * const audit = await claudeAgentAudit({ onWarn: (w) => void said.push(`${w.tool}: ${w.unknownKeys.join()}`) })
 * const hook = audit.preToolUse.hooks[0]
 * const input = {
 *   hook_event_name: 'PreToolUse', session_id: 's', transcript_path: '/t', cwd: '/', tool_name: 'Read',
 *   tool_input: { file_path: '/a', ofset: 1 }, tool_use_id: 'toolu_1',
 * } as const
 * assert.deepStrictEqual(await hook?.(input, 'toolu_1', { signal: new AbortController().signal }), {})
 * assert.deepStrictEqual(said, []) // Read's schema is Claude Code's own: not audited
 *
 * @since 0.1.0
 * @category constructors
 */
export const claudeAgentAudit = (options?: ClaudeAgentAuditOptions): Promise<ClaudeAgentAudit> => {
  const where = 'claudeAgentAudit'
  if (options !== undefined && !isRecord(options))
    throw new TypeError(`${where}: options must be an object, got ${describeValue(options)}`)
  const { mcpServers = {}, ...auditOptions } = options ?? {}
  if (!isRecord(mcpServers))
    throw new TypeError(
      `${where}: option "mcpServers" must be a record of server configs, got ${describeValue(mcpServers)}`,
    )
  const session = auditSessions(where, auditOptions, 'claude-agent-hook')()

  // every server's tools by name; a listing replaces the tools it names, so a page adds to the ones before
  const listed = new Map<string, ReadonlyMap<string, ListedTool>>()
  let catalogue: Catalogue = emptyCatalogue
  const onListing = (server: string, tools: ReadonlyArray<ListedTool>): void => {
    const before = listed.get(server) ?? new Map<string, ListedTool>()
    listed.set(server, new Map([...before, ...tools.map((t) => [t.name, t] as const)]))
    const declarations = declarationsOfServers(listed)
    catalogue = session.readListing(declarations)
    session.recordListing(catalogue, declarations.length)
  }

  const hook: HookCallback = (input) => {
    try {
      if (memberOf(input, 'hook_event_name') === 'PreToolUse') {
        const tool = memberOf(input, 'tool_name')
        const id = memberOf(input, 'tool_use_id')
        if (typeof tool === 'string')
          session.check(
            catalogue,
            callOf(typeof id === 'string' ? id : '', tool, argumentsOf(memberOf(input, 'tool_input'))),
          )
      }
    } catch {
      // a hook that throws would hold the call up: the audit adds no failure of its own
    }
    return Promise.resolve({})
  }
  const preToolUse: HookCallbackMatcher = { hooks: [hook] }
  const observed = observedServers(mcpServers as Readonly<Record<string, McpServerConfig>>, onListing)
  const audit: ClaudeAgentAudit = {
    mcpServers: observed,
    preToolUse,
    options: { mcpServers: observed, hooks: { PreToolUse: [preToolUse] } },
    auditedTools: session.auditedTools,
    stats: session.stats,
  }
  // the options were checked above, at once; only the listing is awaited
  const servers = Object.entries(mcpServers as Readonly<Record<string, McpServerConfig>>)
  return Promise.all(servers.map(([name, config]) => listServer(name, config))).then((lists) => {
    servers.forEach(([name], i) => {
      const tools = lists[i]
      if (tools !== undefined) onListing(name, tools)
    })
    return audit
  })
}
