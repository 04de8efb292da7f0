/**
 * `toMcpServer`: a provider served as an MCP server, so any MCP host gets a whole stack (the audit,
 * reasons, the human's permission, many upstream servers) with no code. It uses the SDK's low-level
 * `Server`, so a call's arguments reach the stack exactly as the host sent them (the SDK's `McpServer`
 * with zod shapes would strip undeclared keys before any layer could see them).
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type {
  CallToolResult,
  ClientCapabilities,
  ElicitRequestFormParams,
  Implementation,
  RequestId,
} from '@modelcontextprotocol/sdk/types.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { ContentBlock, Provider, ToolCall, ToolDeclaration, ToolResult } from '../kernel/model.js'
import type { PermissionAnswer, PermissionRequest } from '../steps/policy/Answer.js'
import type { Rule } from '../steps/policy/Rule.js'
import type { OnAsk } from '../steps/policy/ask.js'
import { drawRegistryError } from '../combinators/Registry.js'
import { drawPermissionRequest, showText } from '../steps/policy/Answer.js'
import { drawRule } from '../steps/policy/Rule.js'
import { describeError } from '../kernel/describe.js'
import { isRecord, nestsDeeperThan } from '../kernel/guards.js'
import { renderBlock } from './content.js'
import type { ServedCompletions, ServedPrompts, ServedResources } from './served.js'
import { catalogCapabilities, serveCatalog } from './served.js'
import { tryNotify } from './notify.js'
import { hostContext } from './relay.js'
import type { LogHub } from './logging.js'
import { unsendable } from './sendable.js'
import { MAX_SCHEMA_DEPTH } from './client.js'

// the calls every server of this process has taken, numbering their ids (see the tools/call handler)
let nextCall = 0

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a stack served to one host session knows of that host.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpSession {
  /** The host's capabilities, as it declared them when it initialized. */
  readonly clientCapabilities: ClientCapabilities | undefined
  /**
   * Asks the host's human about a call through MCP elicitation (`elicitation/create`), for
   * `withPolicy`'s `onAsk`; `undefined` when the host did not declare elicitation, so the policy is
   * headless and refuses what it would ask.
   */
  readonly askHuman: OnAsk | undefined
}

/**
 * The stack a session serves: one provider for every session, or one built per session (its own
 * seen-set, grants and question queue) once the host has initialized, so it can ask the host's human.
 *
 * @since 0.1.0
 * @category model
 */
export type Served = Provider<unknown> | ((session: McpSession) => Provider<unknown>)

/**
 * @since 0.1.0
 * @category model
 */
export interface ToMcpServerOptions {
  /**
   * Subscribes to changes of the upstream tool lists (for instance each upstream
   * `fromMcpClient(…).onToolsChanged`); the server sends the host `notifications/tools/list_changed`
   * (debounced), and unsubscribes when it closes.
   */
  readonly toolsChanged?: (listener: IO<void>) => IO<void>
  /**
   * Milliseconds a question to the host's human may take: the policy's, and an upstream's sampling,
   * elicitation or roots request relayed to the host. Default 600 000 (ten minutes).
   */
  readonly askTimeout?: number
  /** Instructions sent to the host when it initializes (MCP `instructions`). */
  readonly instructions?: string
  /** Resources served besides the tools (see `newCatalog`); none when absent. */
  readonly resources?: ServedResources
  /** Prompts served besides the tools (see `newCatalog`); none when absent. */
  readonly prompts?: ServedPrompts
  /** Completion of prompt and resource template arguments (see `newCatalog`); not offered when absent. */
  readonly completions?: ServedCompletions
  /** Called when the host sends `notifications/roots/list_changed` (the gateway tells its upstreams). */
  readonly rootsChanged?: IO<void>
  /**
   * Logs passed through (see `newLogHub`): the server declares `logging`, answers `logging/setLevel` for its
   * session, and sends its host the messages the hub and its calls' upstreams have for it, at the level it set.
   */
  readonly logging?: LogHub
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

type Schema = Readonly<Record<string, unknown>>

/**
 * A declaration's parameters as an MCP `inputSchema` every SDK client accepts: an object schema
 * (`type: "object"` added when missing), boolean property schemas as objects, and a `required` that is
 * not a list of names left out. One odd schema makes the SDK client reject the host's whole
 * `tools/list`, so the served list never contains one.
 *
 * @example
 * import { toInputSchema } from 'toolstack/mcp'
 * assert.deepStrictEqual(toInputSchema({ anyOf: [{ required: ['a'] }], properties: { a: true } }), {
 *   anyOf: [{ required: ['a'] }],
 *   properties: { a: {} },
 *   type: 'object',
 * })
 * assert.deepStrictEqual(toInputSchema(undefined), { type: 'object' })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toInputSchema = (parameters: unknown): Schema & { readonly type: 'object' } => {
  if (!isRecord(parameters)) return { type: 'object' }
  const { properties, required, ...rest } = parameters
  const props = isRecord(properties)
    ? Object.fromEntries(
        Object.entries(properties).map(([k, v]) => [k, isRecord(v) ? v : v === false ? { not: {} } : {}]),
      )
    : undefined
  const names = Array.isArray(required) && required.every((r) => typeof r === 'string') ? required : undefined
  return {
    ...rest,
    ...(props === undefined ? {} : { properties: props }),
    ...(names === undefined ? {} : { required: names }),
    type: 'object',
  }
}

/**
 * A declaration as an MCP tool.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toMcpTool = (
  d: ToolDeclaration,
): { readonly name: string; readonly description?: string; readonly inputSchema: Schema } => ({
  name: d.function.name,
  ...(typeof d.function.description === 'string' ? { description: d.function.description } : {}),
  inputSchema: toInputSchema(d.function.parameters),
})

const isString = (u: unknown): u is string => typeof u === 'string'

// A block the SDK's schema rejects would fail the host's whole call, so it is sent as `renderBlock` text.
const servable = (b: ContentBlock): boolean => {
  switch (b.type) {
    case 'text':
      return isString(b['text'])
    case 'image':
    case 'audio':
      return isString(b['data']) && isString(b['mimeType'])
    case 'resource_link':
      return isString(b['uri']) && isString(b['name'])
    case 'resource': {
      const r = b['resource']
      return isRecord(r) && isString(r['uri']) && (isString(r['text']) || isString(r['blob']))
    }
    default:
      return false
  }
}

/**
 * A result as an MCP `tools/call` result: the MCP tool's own blocks when it came from one (an image
 * stays an image), else the text; `structuredContent` and `isError` kept.
 *
 * @example
 * import { toCallToolResult } from 'toolstack/mcp'
 * assert.deepStrictEqual(toCallToolResult({ role: 'tool', tool_call_id: '1', content: 'no', is_error: true }), {
 *   content: [{ type: 'text', text: 'no' }],
 *   isError: true,
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toCallToolResult = (
  r: ToolResult,
): {
  readonly content: ReadonlyArray<ContentBlock>
  readonly structuredContent?: Schema
  readonly isError?: boolean
} => {
  const blocks = r.mcp_content
  const content =
    blocks === undefined || blocks.length === 0
      ? [{ type: 'text', text: r.content }]
      : blocks.map((b) => (servable(b) ? b : { type: 'text', text: renderBlock(b) }))
  return {
    content,
    ...(isRecord(r.structured_content) ? { structuredContent: r.structured_content } : {}),
    ...(r.is_error === true ? { isError: true } : {}),
  }
}

const ACTIONS = ['allow-once', 'deny-once', 'always-allow', 'always-deny'] as const

// a suggested rule's directory comes from model-written paths, so it is escaped like them
const ruleShown = (r: Rule): string => showText(drawRule(r), 2000).text

/**
 * The `elicitation/create` form that asks the host's human about one call: the question, facts first
 * (`drawPermissionRequest`: the tool, every location with its argument, every argument, what "always"
 * remembers, and last the model's `reason`, escaped on one line), and the possible answers: "always" only
 * when the request offers a rule.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const elicitationFor = (request: PermissionRequest): ElicitRequestFormParams => {
  const lines = drawPermissionRequest(request)
  const rule = request.suggestedRule
  // "always" only when the request offers a rule: one it does not offer would cover more than was shown
  const choices: ReadonlyArray<readonly [PermissionAnswer['action'], string]> = [
    ['allow-once', 'Allow once'],
    ['deny-once', 'Deny once'],
    ...(rule === undefined
      ? []
      : ([
          ['always-allow', `Always allow (${ruleShown(rule)})`],
          ['always-deny', `Always deny (${ruleShown({ ...rule, decision: 'deny' })})`],
        ] as const)),
  ]
  return {
    message: lines.join('\n'),
    requestedSchema: {
      type: 'object',
      properties: {
        action: {
          type: 'string',
          title: 'Your answer',
          enum: choices.map(([a]) => a),
          enumNames: choices.map(([, name]) => name),
        },
      },
      required: ['action'],
    },
  }
}

/**
 * The host's elicitation response as a permission answer: an accepted form gives its action; a declined,
 * dismissed or unreadable one is `deny-once`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const answerOf = (result: unknown): PermissionAnswer => {
  const action =
    isRecord(result) && result['action'] === 'accept' && isRecord(result['content'])
      ? result['content']['action']
      : undefined
  return { action: ACTIONS.find((a) => a === action) ?? 'deny-once' }
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

const REGISTRY_TAGS: ReadonlySet<unknown> = new Set(['ListingFailed', 'ListingUnreadable', 'ToolShadowed'])

const describeLeft = (e: unknown): string => {
  if (isRecord(e) && REGISTRY_TAGS.has(e['_tag']))
    return drawRegistryError(e as unknown as Parameters<typeof drawRegistryError>[0])
  if (isRecord(e) && isString(e['message'])) return e['message']
  return describeError(e)
}

const failed = (what: string, e: unknown): McpError =>
  new McpError(ErrorCode.InternalError, `${what}: ${describeLeft(e)}`)

const isTooDeep = nestsDeeperThan(MAX_SCHEMA_DEPTH)

// A declaration whose parameters nest deeper than MAX_SCHEMA_DEPTH could not be written to the host (the SDK's
// JSON.stringify overflows this process's stack, and the whole tools/list goes unanswered): it is left out, as
// fromMcpClient leaves out such a tool a server lists, so the host gets the others.
const isServable = (d: ToolDeclaration): boolean => !isTooDeep(d.function.parameters)

/**
 * A provider served as an MCP server (the SDK's low-level `Server`, not yet connected: pass it to
 * `serveStdio`, `serveHttp`, or `server.connect(transport)`).
 *
 * - `tools/list` returns the provider's listing, each declaration as an MCP tool with a schema every
 *   SDK client accepts (one whose parameters nest deeper than `MAX_SCHEMA_DEPTH` is left out, as it could
 *   not be sent); a failed listing is a JSON-RPC error with the reason.
 * - `tools/call` runs the call through the provider with its arguments exactly as the host sent them;
 *   the result keeps an MCP tool's blocks (`toCallToolResult`); an `is_error` result is
 *   `isError: true`; a Left is a JSON-RPC error the host can show.
 * - With a function, the stack is built per session once the host has initialized, with `askHuman`
 *   when the host declared elicitation.
 * - Each call carries the host's way back (`mcp_context`, `hostContext`): its cancellation, its progress
 *   token, and requests to the host related to the call, for an MCP upstream below.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toMcpServer = (served: Served, info: Implementation, options: ToMcpServerOptions = {}): Server => {
  const server = new Server(info, {
    capabilities: {
      tools: { listChanged: true },
      ...catalogCapabilities(options),
      ...(options.logging === undefined ? {} : { logging: {} }),
    },
    debouncedNotificationMethods: [
      'notifications/tools/list_changed',
      'notifications/resources/list_changed',
      'notifications/prompts/list_changed',
    ],
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
  })
  const askTimeout = options.askTimeout ?? 600_000
  // this session's side of the logs: messages outside any call come on the session's own stream
  const logs = options.logging?.open((params) =>
    tryNotify(() => server.notification({ method: 'notifications/message', params })),
  )
  if (logs !== undefined) {
    // replaces the SDK's own handler, which would filter by a level of its own
    server.setRequestHandler(SetLevelRequestSchema, (request) => {
      logs.setLevel(request.params.level)
      return {}
    })
  }
  // the host's JSON-RPC id of each call in flight, so a question about the call is sent on that call's
  // own stream (over HTTP, the only stream sure to reach the host)
  const inFlight = new Map<string, RequestId>()

  const askHuman: OnAsk = async (request) => {
    const relatedRequestId = inFlight.get(request.call.id)
    const result = await server.elicitInput(elicitationFor(request), {
      timeout: askTimeout,
      ...(relatedRequestId === undefined ? {} : { relatedRequestId }),
    })
    return answerOf(result)
  }

  let provider: Provider<unknown> | undefined = typeof served === 'function' ? undefined : served
  // a host that calls before listing (e.g. after a reconnect) still gets an audited call: the stack
  // lists once first
  let listed: Promise<void> | undefined
  const providerNow = (): Provider<unknown> => {
    if (provider !== undefined) return provider
    const clientCapabilities = server.getClientCapabilities()
    const built = (served as (session: McpSession) => Provider<unknown>)({
      clientCapabilities,
      askHuman: clientCapabilities?.elicitation === undefined ? undefined : askHuman,
    })
    provider = built
    return built
  }

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const listing = providerNow().toolsForLlm()
    // only the fact that a listing ran is kept; a session holds no copy of the listing
    listed = listing.then(() => undefined)
    const out = await listing
    if (out._tag === 'Left') throw failed('the tools could not be listed', out.left)
    return { tools: out.right.filter(isServable).map(toMcpTool) }
  })

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    // an id unique in the process, not only in the session: every session's client numbers its requests from 0,
    // and the log, the metrics and the OTLP spans of many sessions tell calls apart by it
    const id = `mcp_${String(extra.requestId)}_${nextCall++}`
    const call: ToolCall = {
      id,
      type: 'function',
      function: { name: request.params.name, arguments: request.params.arguments ?? {} },
      // the way back to this host for the upstream that runs the call: progress, cancellation, requests
      mcp_context: hostContext(extra, server, askTimeout, logs?.wants),
    }
    inFlight.set(id, extra.requestId)
    try {
      await (listed ??= providerNow()
        .toolsForLlm()
        .then(() => undefined))
      const out = await providerNow().executeToolCalls([call])()
      if (out._tag === 'Left') throw failed(`the call to ${request.params.name} failed`, out.left)
      const result = out.right[0]
      if (result === undefined)
        return {
          content: [{ type: 'text', text: 'the tool provider returned no result for this call' }],
          isError: true,
        }
      // a tool that does not exist is a protocol error (MCP: "Unknown tool"), with the words the model got before
      if (result.unknown_tool === true)
        throw Object.assign(new Error(result.content), { code: ErrorCode.InvalidParams })
      // a result nested too deep could never be written: the host gets an error instead of no answer at all
      const why = unsendable(result)
      if (why !== undefined) return { content: [{ type: 'text', text: why }], isError: true }
      // the blocks are the upstream's own, checked by `servable`; the SDK's type is stricter than the wire
      return toCallToolResult(result) as CallToolResult
    } finally {
      inFlight.delete(id)
    }
  })

  if (options.resources !== undefined || options.prompts !== undefined || options.completions !== undefined)
    serveCatalog(server, options)
  const rootsChanged = options.rootsChanged
  if (rootsChanged !== undefined)
    server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      try {
        rootsChanged()
      } catch {
        // a listener that throws changes nothing for the session
      }
    })

  if (logs !== undefined) {
    const previous = server.onclose
    server.onclose = () => {
      logs.close()
      previous?.()
    }
  }

  if (options.toolsChanged !== undefined) {
    const unsubscribe = options.toolsChanged(() => tryNotify(() => server.sendToolListChanged()))
    const previous = server.onclose
    server.onclose = () => {
      unsubscribe()
      previous?.()
    }
  }
  return server
}
