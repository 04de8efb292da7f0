/**
 * Pass-through between an MCP host and the upstream servers its calls reach: an upstream's requests to its
 * client (sampling, elicitation, roots) go to the host whose call is in flight there (refused while calls
 * of several hosts are), and are refused with a JSON-RPC error that says why when that host did not declare
 * the capability; progress and cancellation travel with the call. The channel is the call's typed `mcp_context` (`McpCallContext`), set by
 * `toMcpServer` and read by `fromMcpClient`.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type {
  ClientCapabilities,
  CreateMessageResult,
  ElicitResult,
  ListRootsResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListRootsRequestSchema,
  ListRootsResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import type { McpCallContext, McpHostRequest, McpLogMessage, McpProgress } from '../kernel/model.js'
import { cut } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The part of a `tools/call` handler's `extra` (the SDK's `RequestHandlerExtra`) a call's context uses.
 *
 * @since 0.1.0
 * @category model
 */
export type HostCallExtra = Pick<
  RequestHandlerExtra<ServerRequest, ServerNotification>,
  'signal' | '_meta' | 'sendNotification' | 'sendRequest'
>

/**
 * The part of the SDK's `Server` serving the host a call's context uses: its capabilities, and requests
 * to it outside the call (over HTTP, on the session's own stream).
 *
 * @since 0.1.0
 * @category model
 */
export type HostSession = Pick<Server, 'getClientCapabilities' | 'request'> & Partial<Pick<Server, 'notification'>>

/**
 * The host a request goes to, and whether a call of that host is in flight at the upstream now.
 *
 * @since 0.1.0
 * @category model
 */
export interface HostRoute {
  readonly context: McpCallContext
  readonly inFlight: boolean
}

/**
 * Which host an upstream's request goes to: the calls in flight at one upstream, and the last host that
 * declared roots.
 *
 * @since 0.1.0
 * @category model
 */
export interface HostRouter {
  /** Marks a call of the host of `context` in flight at the upstream; the returned effect marks it done. */
  readonly enter: (context: McpCallContext) => IO<void>
  /** The host a request with `method` goes to, or why there is none. */
  readonly route: (method: string) => Either<string, HostRoute>
  /** The most recent call in flight of each host session, in the order they entered; none when idle. */
  readonly hosts: IO<ReadonlyArray<McpCallContext>>
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * What the gateway's client declares to every upstream: it relays sampling (with tools), both elicitation
 * modes and roots, each refused per request when the host of the call does not support it.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const UPSTREAM_CAPABILITIES: ClientCapabilities = {
  sampling: { tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
}

/**
 * How many requests from one upstream may wait for a host's answer at once.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const MAX_WAITING = 16

// a host that declares `elicitation: {}` supports the form mode only (the SDK's reading too)
const elicitationModes = (declared: unknown): { readonly form: boolean; readonly url: boolean } => {
  const form = memberOf(declared, 'form') !== undefined
  const url = memberOf(declared, 'url') !== undefined
  return { form: form || !url, url }
}

/**
 * Why the host with `capabilities` cannot answer an upstream's `method` request with `params`, in words
 * (the method name cut and quoted: it is the upstream's text); `undefined` when it can.
 *
 * @example
 * import { hostRefusal } from 'toolstack/mcp'
 * assert.strictEqual(hostRefusal('roots/list', undefined, { roots: {} }), undefined)
 * assert.strictEqual(
 *   hostRefusal('sampling/createMessage', {}, {}),
 *   'the host of this session does not support sampling (sampling/createMessage)',
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const hostRefusal = (method: string, params: unknown, capabilities: unknown): string | undefined => {
  const not = (what: string): string => `the host of this session does not support ${what} (${method})`
  switch (method) {
    case 'sampling/createMessage': {
      const sampling = memberOf(capabilities, 'sampling')
      if (sampling === undefined) return not('sampling')
      const tools = memberOf(params, 'tools') !== undefined || memberOf(params, 'toolChoice') !== undefined
      return tools && memberOf(sampling, 'tools') === undefined ? not('sampling with tools') : undefined
    }
    case 'elicitation/create': {
      const declared = memberOf(capabilities, 'elicitation')
      if (declared === undefined) return not('elicitation')
      const mode = memberOf(params, 'mode') === 'url' ? 'url' : 'form'
      return elicitationModes(declared)[mode] ? undefined : not(`${mode === 'url' ? 'URL' : 'form'}-mode elicitation`)
    }
    case 'roots/list':
      return memberOf(capabilities, 'roots') === undefined ? not('roots') : undefined
    default:
      return `the gateway does not relay ${JSON.stringify(cut(method, 100))} requests to the host`
  }
}

// the result schema the host's answer is read with
const resultSchemaOf = (request: McpHostRequest) =>
  request.method === 'roots/list'
    ? ListRootsResultSchema
    : request.method === 'elicitation/create'
      ? ElicitResultSchema
      : memberOf(request.params, 'tools') !== undefined || memberOf(request.params, 'toolChoice') !== undefined
        ? CreateMessageResultWithToolsSchema
        : CreateMessageResultSchema

/**
 * A progress update as the SDK hands it over (its optional members may be `undefined`), as `McpProgress`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const progressOf = (p: {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}): McpProgress => ({
  progress: p.progress,
  ...(p.total === undefined ? {} : { total: p.total }),
  ...(p.message === undefined ? {} : { message: p.message }),
})

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The context of a call a host sent (`tools/call`): the host's cancellation, its progress token (updates
 * are sent under the host's own token, related to the call), and requests to the host related to the call,
 * refused at once with `MethodNotFound` and a plain reason when the host did not declare the capability.
 * `timeout` bounds each request to the host (its progress resets it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const hostContext = (
  extra: HostCallExtra,
  session: HostSession,
  timeout: number,
  wantsLog?: (level: string) => boolean,
): McpCallContext => {
  const capabilities = session.getClientCapabilities()
  const token = extra._meta?.progressToken
  const onProgress =
    token === undefined
      ? undefined
      : (p: McpProgress): void => {
          extra
            .sendNotification({ method: 'notifications/progress', params: { ...progressOf(p), progressToken: token } })
            .catch(() => undefined)
        }
  const requestHost = async (
    request: McpHostRequest,
    options?: { readonly signal?: AbortSignal; readonly afterCall?: boolean },
  ): Promise<unknown> => {
    const why = hostRefusal(request.method, request.params, capabilities)
    if (why !== undefined) throw new McpError(ErrorCode.MethodNotFound, why)
    // the upstream's SDK client already read the request with its schema; the host reads it again
    const wire = request as ServerRequest
    const schema = resultSchemaOf(request)
    // after the call, its stream is closed: the request goes on the session's own
    if (options?.afterCall === true)
      return session.request(wire, schema, {
        timeout,
        resetTimeoutOnProgress: true,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      })
    const signal = options?.signal === undefined ? extra.signal : AbortSignal.any([extra.signal, options.signal])
    return extra.sendRequest(wire, schema, { timeout, signal, resetTimeoutOnProgress: true })
  }
  const onLog =
    wantsLog === undefined
      ? undefined
      : (message: McpLogMessage, options?: { readonly afterCall?: boolean }): void => {
          if (!wantsLog(message.level)) return
          const notification = { method: 'notifications/message', params: { ...message } } as ServerNotification
          // after the call, its stream is closed: the message goes on the session's own
          const sent =
            options?.afterCall === true ? session.notification?.(notification) : extra.sendNotification(notification)
          sent?.catch(() => undefined)
        }
  return {
    signal: extra.signal,
    ...(onProgress === undefined ? {} : { onProgress }),
    ...(onLog === undefined ? {} : { onLog }),
    ...(capabilities === undefined ? {} : { hostCapabilities: capabilities }),
    session,
    requestHost,
  }
}

/**
 * A router for one upstream: a request goes to the host whose calls are in flight there (to the most
 * recent of them, for the stream it is sent on). MCP does not say which call a request serves, so while
 * calls of several host sessions are in flight, a request is refused rather than sent to a host it may
 * not concern (another user's prompt shown to the wrong human). With no call in flight, `roots/list` goes
 * to the last host that declared roots and sent a call there, and anything else is refused. It remembers
 * one host besides the calls in flight.
 *
 * @since 0.1.0
 * @category constructors
 */
export const newHostRouter = (): HostRouter => {
  // insertion order: the last entry is the most recent call
  const inFlight = new Set<{ readonly context: McpCallContext }>()
  let rootsHost: McpCallContext | undefined
  return {
    enter: (context) => {
      const entry = { context }
      inFlight.add(entry)
      if (memberOf(context.hostCapabilities, 'roots') !== undefined) rootsHost = context
      return () => {
        inFlight.delete(entry)
      }
    },
    route: (method) => {
      let latest: McpCallContext | undefined
      const sessions = new Set<unknown>()
      for (const e of inFlight) {
        latest = e.context
        sessions.add(e.context.session ?? e.context)
      }
      if (sessions.size > 1)
        return left(
          `calls of ${sessions.size} host sessions are in flight at this server, and MCP does not say which call ` +
            `a request serves, so it is refused rather than sent to a host it may not concern (${cut(method, 100)})`,
        )
      if (latest !== undefined) return right({ context: latest, inFlight: true })
      if (method === 'roots/list' && rootsHost !== undefined) return right({ context: rootsHost, inFlight: false })
      return left(
        method === 'roots/list'
          ? 'no host that supports roots has sent a call to this server yet'
          : `no call from a host is in flight at this server, so there is no host to ask (${cut(method, 100)})`,
      )
    },
    hosts: () => {
      const bySession = new Map<unknown, McpCallContext>()
      for (const e of inFlight) bySession.set(e.context.session ?? e.context, e.context)
      return [...bySession.values()]
    },
  }
}

/**
 * Installs on an upstream's `client` (which declared `UPSTREAM_CAPABILITIES`) the handlers that send its
 * sampling, elicitation and roots requests to the host `router` picks, and the host's answer back; a
 * refusal is a JSON-RPC error (`MethodNotFound`) with its reason; beyond `MAX_WAITING` requests waiting
 * for the host, a request is refused (`InvalidRequest`) at once. The upstream's text reaches the host as
 * data, unchanged; nothing here shows or logs it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const relayHostRequests = (client: Client, router: HostRouter): void => {
  let waiting = 0
  const relay = async (
    request: { readonly method: string; readonly params?: unknown },
    extra: { readonly signal: AbortSignal },
  ): Promise<unknown> => {
    // an upstream that floods its client holds at most MAX_WAITING requests open at the host
    if (waiting >= MAX_WAITING)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${MAX_WAITING} requests from this server already wait for the host's answer; send this one when one is answered`,
      )
    waiting++
    try {
      return await relayed(request, extra)
    } finally {
      waiting--
    }
  }
  const relayed = async (
    request: { readonly method: string; readonly params?: unknown },
    extra: { readonly signal: AbortSignal },
  ): Promise<unknown> => {
    const host = router.route(request.method)
    if (host._tag === 'Left') throw new McpError(ErrorCode.MethodNotFound, host.left)
    const { context, inFlight } = host.right
    if (context.requestHost === undefined)
      throw new McpError(ErrorCode.MethodNotFound, 'the host of this call cannot be asked anything')
    const params = isRecord(request.params) ? request.params : undefined
    return context.requestHost(
      { method: request.method, ...(params === undefined ? {} : { params }) },
      { signal: extra.signal, afterCall: !inFlight },
    )
  }
  // the host's answer was read with the method's result schema (`hostContext`); the SDK reads it again
  client.setRequestHandler(
    CreateMessageRequestSchema,
    async (r, extra) => (await relay(r, extra)) as CreateMessageResult,
  )
  client.setRequestHandler(ElicitRequestSchema, async (r, extra) => (await relay(r, extra)) as ElicitResult)
  client.setRequestHandler(ListRootsRequestSchema, async (r, extra) => (await relay(r, extra)) as ListRootsResult)
}
