/**
 * `fromMcpClient`: a provider over a connected MCP client. It lists every page of tools under legal,
 * stable names and returns exactly one result for every call: whatever a server, a transport or a
 * model does wrong becomes an `is_error` result for that call, never a failed batch.
 *
 * One file: over 500 lines because every fault of a server or transport is turned into a result in one place
 * (pages, names, timeouts, cancellation, the host's requests relayed), so no call can slip between two files.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { PaginatedResultSchema as PaginatedResultSchemaType } from '@modelcontextprotocol/sdk/types.js'
import { PaginatedResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Args, Batch, BatchProvider, McpCallContext, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { drawArgsProblem, noneAsEmpty } from '../steps/Args.js'
import { batchOf } from '../steps/Batch.js'
import { MAX_TIMER_MS, decodeOptions, refined, wholeNumber } from '../kernel/options.js'
import { cut, describeError, describeValue, escapeControls } from '../kernel/describe.js'
import type { Read } from '../steps/answer.js'
import { errorResult, failAll, readPositions } from '../steps/answer.js'
import { callContextOf, callIdOf, callNameOf } from '../kernel/calls.js'
import { renderCallResult } from './content.js'
import { progressOf } from './relay.js'
import { toolNameMapping } from './names.js'
import { isRecord, memberOf, nestsDeeperThan } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Per-request options, the subset of the SDK's `RequestOptions` this module sets.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpRequestOptions {
  readonly timeout?: number
  readonly signal?: AbortSignal
  /** Set on a call whose host asked for progress (its `mcp_context`); each update resets the timeout. */
  readonly onprogress?: (progress: {
    readonly progress: number
    readonly total?: number | undefined
    readonly message?: string | undefined
  }) => void
  readonly resetTimeoutOnProgress?: boolean
}

/**
 * One page of `tools/list`, as the SDK's `listTools` returns it.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpToolsPage {
  readonly tools: ReadonlyArray<unknown>
  readonly nextCursor?: string | undefined
}

/**
 * The raw `tools/list` request, for the fallback path.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpListToolsRequest {
  method: 'tools/list'
  params?: { cursor?: string }
}

/**
 * The part of an MCP client `fromMcpClient` needs. A v1 `Client` from
 * `@modelcontextprotocol/sdk/client/index.js` fits as it is; so does a fake with just `listTools` and
 * `callTool`.
 *
 * - `request` (optional): a page the SDK's own schema rejects (a tool with a top-level `anyOf`, a
 *   boolean property schema, no `type: "object"`) is fetched again unvalidated and published unchanged.
 * - `setNotificationHandler` (optional) is used only by `onToolsChanged`.
 *
 * `callTool` is called with the v1 signature `callTool(params, undefined, { timeout, signal })`; the
 * timeout and abort are also enforced here, so a client that ignores the third argument is still bounded.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpToolClient {
  listTools(params?: { cursor?: string }, options?: McpRequestOptions): Promise<McpToolsPage>
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<unknown>
  request?(
    request: McpListToolsRequest,
    resultSchema: typeof PaginatedResultSchemaType,
    options?: McpRequestOptions,
  ): Promise<unknown>
  setNotificationHandler?(
    schema: typeof ToolListChangedNotificationSchema,
    handler: (notification: unknown) => void | Promise<void>,
  ): void
}

/**
 * Why a listing failed: the page it failed on and the error.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpListingError {
  readonly _tag: 'McpListingError'
  /** One line a human can read. */
  readonly message: string
  /** What the client threw, unchanged. */
  readonly cause: unknown
}

/**
 * @since 0.1.0
 * @category model
 */
export interface FromMcpClientOptions {
  /** Milliseconds each request (a call, a page of the listing) may take. Default 60 000. */
  readonly timeout?: number
  /**
   * How many calls to tools annotated `readOnlyHint: true` may run at once. Default 1: every call runs
   * alone, in the caller's order. Above 1, consecutive read-only calls run together; any other call
   * waits for them and runs alone.
   */
  readonly readOnlyConcurrency?: number
  /** Aborts every call in flight or not yet started; each becomes an `is_error` result. */
  readonly signal?: AbortSignal
  /**
   * Called when a call that carries its host's context (`mcp_context`) is sent to the server, with the
   * context to route the server's requests to that host through: its `requestHost` holds the call's
   * timeout while the host answers (a human may take minutes). The returned effect runs when the call ends.
   */
  readonly onCallContext?: (context: McpCallContext) => IO<void>
}

/**
 * A listed tool: the name the model sees, the name the server knows.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpTool {
  readonly name: string
  readonly mcpName: string
  /** The tool is annotated `readOnlyHint: true`. */
  readonly readOnly: boolean
  /** Its annotations as the server listed them (an object), when it listed any: what pins keep with its definition. */
  readonly annotations?: Readonly<Record<string, unknown>>
}

/**
 * A provider over an MCP client, plus what it routes now and the server's
 * `notifications/tools/list_changed`.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpProvider extends BatchProvider<McpListingError> {
  /** The tools of the last successful listing, in listing order. */
  readonly tools: IO<ReadonlyArray<McpTool>>
  /**
   * Calls `listener` each time the server sends `notifications/tools/list_changed` (then re-list with
   * `toolsForLlm`); returns the unsubscribe function. The first subscription installs a handler with
   * the client's `setNotificationHandler`, which in the v1 SDK holds one handler per method: it
   * replaces a handler the host set for that notification (and the SDK's own `listChanged.tools`
   * option). A host that already handles the notification should re-list from its own handler
   * instead. Nothing is installed before the first subscription; a client without
   * `setNotificationHandler` never calls the listener.
   */
  readonly onToolsChanged: (listener: IO<void>) => IO<void>
  /** The tools the last successful listing left out (see {@link MAX_SCHEMA_DEPTH}), in listing order, each with why. */
  readonly leftOut: IO<ReadonlyArray<McpLeftOut>>
}

/**
 * A tool the server lists that the listing left out: its name as the server wrote it, and why.
 *
 * @since 0.1.0
 * @category model
 */
export interface McpLeftOut {
  readonly name: string
  readonly why: string
}

/**
 * How deep a listed tool's input schema, and its annotations, may nest objects and arrays (the schema itself is
 * level 1); a tool nested deeper is left out of the listing. A server chooses the nesting, and what reads it
 * again stops at a bound of its own: `JSON.stringify` (a change of tools is compared as JSON, a listing is sent
 * to a host as JSON) at this process's stack, about 5,000 levels here and fewer on a smaller stack; a tool's pin at
 * 128 levels counted from the definition around the schema, beyond which the tool would be served unpinned. 100
 * stays under the lowest of them with room for the definition around the schema. It is 50 levels of nested
 * `properties` (each is two levels of JSON), far more than the schemas servers publish; the audit's own bound
 * (`MAX_DEPTH`, 64 levels of schema) guards its stack, and is not reached.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_SCHEMA_DEPTH = 100

const isTooDeep = nestsDeeperThan(MAX_SCHEMA_DEPTH)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const listingError = (message: string, cause: unknown): McpListingError => ({ _tag: 'McpListingError', message, cause })

// -------------------------------------------------------------------------------------
// listing
// -------------------------------------------------------------------------------------

interface Listed {
  readonly mcpName: string
  readonly description: string | undefined
  readonly parameters: Readonly<Record<string, unknown>> | undefined
  readonly readOnly: boolean
  readonly annotations: Readonly<Record<string, unknown>> | undefined
}

interface Routes {
  readonly declarations: ReadonlyArray<ToolDeclaration>
  readonly tools: ReadonlyArray<McpTool>
  /** Model-facing name → tool. A Map: tool names are data (`__proto__` is a name). */
  readonly byName: ReadonlyMap<string, McpTool>
  /** The server's name → why the listing left the tool out: a call to it is told so. */
  readonly leftOut: ReadonlyMap<string, string>
}

const TOO_DEEP = `its input schema or annotations nest deeper than ${MAX_SCHEMA_DEPTH} levels`

// A tool without a string name is left out: a model cannot call a function without a name. So is one whose schema
// or annotations nest deeper than MAX_SCHEMA_DEPTH: they could not be compared, pinned or sent on, and failing the
// whole listing for it would take the server's other tools away too.
const readTool = (u: unknown): Listed | McpLeftOut | undefined => {
  if (!isRecord(u) || typeof u['name'] !== 'string') return undefined
  const schema = u['inputSchema']
  const annotations = u['annotations']
  if (isTooDeep(schema) || isTooDeep(annotations)) return { name: u['name'], why: TOO_DEEP }
  return {
    mcpName: u['name'],
    description: typeof u['description'] === 'string' ? u['description'] : undefined,
    // published unchanged; a non-object schema (`true`) cannot be a function's parameters, so it is omitted
    parameters: isRecord(schema) ? schema : undefined,
    readOnly: isRecord(annotations) && annotations['readOnlyHint'] === true,
    annotations: isRecord(annotations) ? annotations : undefined,
  }
}

const toRoutes = (listed: ReadonlyArray<Listed>, leftOut: ReadonlyMap<string, string>): Routes => {
  const names = toolNameMapping(listed.map((l) => l.mcpName))
  const declarations: Array<ToolDeclaration> = []
  const tools: Array<McpTool> = []
  const byName = new Map<string, McpTool>()
  for (const l of listed) {
    const name = names.get(l.mcpName) as string
    // a name listed twice routes to its first listing
    if (byName.has(name)) continue
    const tool: McpTool = {
      name,
      mcpName: l.mcpName,
      readOnly: l.readOnly,
      ...(l.annotations === undefined ? {} : { annotations: l.annotations }),
    }
    byName.set(name, tool)
    tools.push(tool)
    declarations.push({
      type: 'function',
      function: {
        name,
        ...(l.description !== undefined ? { description: l.description } : {}),
        ...(l.parameters !== undefined ? { parameters: l.parameters } : {}),
      },
    })
  }
  return { declarations, tools, byName, leftOut }
}

// A JSON-RPC error or a closed connection has a numeric `code`; a page the SDK's schema rejected (a
// ZodError) has none, and only that case is worth fetching again unvalidated.
const hasCode = (e: unknown): boolean => isRecord(e) && typeof e['code'] === 'number'

const readPage = (u: unknown): McpToolsPage | undefined => {
  if (!isRecord(u) || !Array.isArray(u['tools'])) return undefined
  const cursor = u['nextCursor']
  return cursor === undefined || cursor === null
    ? { tools: u['tools'] }
    : typeof cursor === 'string'
      ? { tools: u['tools'], nextCursor: cursor }
      : undefined
}

const MAX_PAGES = 10_000

const fetchPage = async (
  client: McpToolClient,
  cursor: string | undefined,
  options: McpRequestOptions,
): Promise<McpToolsPage> => {
  const params = cursor === undefined ? {} : { cursor }
  let raw: unknown
  try {
    raw = await client.listTools(params, options)
  } catch (e) {
    if (hasCode(e) || typeof client.request !== 'function') throw e
    raw = await client.request({ method: 'tools/list', params }, PaginatedResultSchema, options)
  }
  const page = readPage(raw)
  if (page === undefined) throw new Error(`the answer is not a page of tools (got ${describeValue(raw)})`)
  return page
}

const listAll = async (client: McpToolClient, options: McpRequestOptions): Promise<Either<McpListingError, Routes>> => {
  const listed: Array<Listed> = []
  // a name listed and also left out is routed to its listing
  const leftOut = new Map<string, string>()
  const cursors = new Set<string>()
  let cursor: string | undefined
  for (let page = 1; page <= MAX_PAGES; page++) {
    let got: McpToolsPage
    try {
      got = await fetchPage(client, cursor, options)
    } catch (e) {
      return left(listingError(`tools/list failed on page ${page}: ${describeListingFailure(e)}`, e))
    }
    for (const tool of got.tools) {
      const l = readTool(tool)
      if (l === undefined) continue
      if ('why' in l) leftOut.set(l.name, l.why)
      else listed.push(l)
    }
    if (got.nextCursor === undefined) return right(toRoutes(listed, leftOut))
    // a repeated cursor would make the listing loop forever
    if (cursors.has(got.nextCursor)) {
      return left(
        listingError(
          `tools/list failed on page ${page}: the server repeated the cursor ${JSON.stringify(got.nextCursor)}`,
          undefined,
        ),
      )
    }
    cursors.add(got.nextCursor)
    cursor = got.nextCursor
  }
  return left(listingError(`tools/list failed: more than ${MAX_PAGES} pages`, undefined))
}

// -------------------------------------------------------------------------------------
// calling
// -------------------------------------------------------------------------------------

/** How one call request ended, before it becomes a message for the model. */
type Outcome =
  | { readonly _tag: 'Answered'; readonly result: unknown }
  | { readonly _tag: 'Failed'; readonly error: unknown }
  | { readonly _tag: 'TimedOut' }
  | { readonly _tag: 'Aborted'; readonly reason: unknown }

const CONNECTION_CLOSED = -32000
const REQUEST_TIMEOUT = -32001

const isSchemaError = (e: unknown): boolean =>
  e instanceof Error && (e.name === 'ZodError' || Array.isArray((e as { issues?: unknown }).issues))

const MAX_SHOWN = 300

// A server's error text goes to the model, and from there to logs and screens: its first line, with controls escaped,
// cut. Only the text's start is split, whatever its length.
const firstLine = (s: string): string => {
  const start = s.slice(0, 8 * MAX_SHOWN)
  const line = start.split('\n').find((l) => l.trim() !== '') ?? start
  return cut(escapeControls(cut(line, MAX_SHOWN)), MAX_SHOWN)
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

// `content[0].type`: a key that is not a plain name is quoted, so a key with a dot or a bracket reads as one key
const drawIssuePath = (path: ReadonlyArray<unknown>): string =>
  path
    .map((k, i) =>
      typeof k === 'number'
        ? `[${k}]`
        : typeof k === 'string' && IDENTIFIER.test(k)
          ? `${i === 0 ? '' : '.'}${k}`
          : `[${JSON.stringify(String(k))}]`,
    )
    .join('')

// A schema error (the SDK's ZodError) as its first issue: where in the answer, and what is wrong there. Its message
// is every issue as pretty-printed JSON, whose first line is `[`. The keys of the path come from the server, so the
// text is escaped, and cut; `undefined` when the error has no readable issue.
const firstIssue = (e: unknown): string | undefined => {
  const issues = memberOf(e, 'issues')
  const first: unknown = Array.isArray(issues) ? issues[0] : undefined
  const message = memberOf(first, 'message')
  if (typeof message !== 'string') return undefined
  const path = memberOf(first, 'path')
  const where = Array.isArray(path) && path.length > 0 ? `${drawIssuePath(path)}: ` : ''
  return cut(escapeControls(where + message), MAX_SHOWN)
}

const describeUnreadable = (e: unknown): string => firstIssue(e) ?? firstLine(describeError(e))

// How a request to the server failed; shared by the listing and the calls.
type Failure = 'closed' | 'timeout' | 'rpc' | 'unreadable' | 'other'

const failureOf = (e: unknown): Failure => {
  const code = isRecord(e) ? e['code'] : undefined
  if (code === CONNECTION_CLOSED || (e instanceof Error && e.message === 'Not connected')) return 'closed'
  if (code === REQUEST_TIMEOUT) return 'timeout'
  if (typeof code === 'number') return 'rpc'
  return isSchemaError(e) ? 'unreadable' : 'other'
}

const describeListingFailure = (e: unknown): string => {
  switch (failureOf(e)) {
    case 'closed':
      return 'the connection to the MCP server is closed'
    case 'timeout':
      return 'the MCP server did not answer in time'
    case 'unreadable':
      return `the answer could not be read (${describeUnreadable(e)})`
    default:
      return firstLine(describeError(e))
  }
}

const MAY_HAVE_RUN = 'the tool may or may not have run'

const describeOutcome = (outcome: Exclude<Outcome, { _tag: 'Answered' }>, timeout: number): string => {
  const timedOut = `the MCP server did not answer within ${timeout} ms, so the call was cancelled; ${MAY_HAVE_RUN}`
  switch (outcome._tag) {
    case 'TimedOut':
      return timedOut
    case 'Aborted':
      return `the call was aborted (${firstLine(describeError(outcome.reason))}); ${MAY_HAVE_RUN}`
    case 'Failed': {
      const e = outcome.error
      switch (failureOf(e)) {
        case 'closed':
          return `the connection to the MCP server is closed; ${MAY_HAVE_RUN}`
        case 'timeout':
          return timedOut
        case 'rpc':
          return `the MCP server answered with an error: ${firstLine(describeError(e))}`
        case 'unreadable':
          return `the MCP server's answer is not a valid tool result (${describeUnreadable(e)})`
        case 'other':
          return `the tool call failed: ${firstLine(describeError(e))}`
      }
    }
  }
}

// The SDK gets the timeout and a signal (so it sends `notifications/cancelled`); both are also enforced
// here, so a client that ignores its options (or a v2 client's other signature) cannot hold a batch forever.
// `outer` is the provider's signal; `context` the host's, when an MCP host sent the call: its cancellation
// aborts the call, and the upstream's progress goes to the host and resets the timeout, as in the SDK.
const invoke = (
  client: McpToolClient,
  params: { name: string; arguments: Record<string, unknown> },
  timeout: number,
  outer: AbortSignal | undefined,
  context: McpCallContext | undefined,
  onCallContext: ((context: McpCallContext) => IO<void>) | undefined,
): Promise<Outcome> =>
  new Promise<Outcome>((resolve) => {
    const signals = [outer, context?.signal].filter((s): s is AbortSignal => s !== undefined)
    const aborted = signals.find((s) => s.aborted)
    if (aborted !== undefined) {
      resolve({ _tag: 'Aborted', reason: aborted.reason })
      return
    }
    const controller = new AbortController()
    // `finish` is idempotent: a second ending (a response after the timeout) changes nothing
    let leave: IO<void> | undefined
    let finished = false
    const finish = (o: Outcome): void => {
      clearTimeout(timer)
      finished = true
      for (const s of signals) s.removeEventListener('abort', onAbort)
      leave?.()
      leave = undefined
      resolve(o)
    }
    const onAbort = (event: Event): void => {
      const reason: unknown = (event.target as AbortSignal).reason
      finish({ _tag: 'Aborted', reason })
      controller.abort(reason)
    }
    const onTimeout = (): void => {
      finish({ _tag: 'TimedOut' })
      controller.abort(new Error(`timed out after ${timeout} ms`))
    }
    let timer = setTimeout(onTimeout, timeout)
    const restart = (): void => {
      clearTimeout(timer)
      if (!finished && waiting === 0) timer = setTimeout(onTimeout, timeout)
    }
    // finish removes the listeners, so one runs at most once
    for (const s of signals) s.addEventListener('abort', onAbort)
    // while the host answers a request of the server's, the call's timeout waits (the request has its own)
    let waiting = 0
    const requestHost = context?.requestHost
    if (context !== undefined && onCallContext !== undefined) {
      const routed: McpCallContext =
        requestHost === undefined
          ? context
          : {
              ...context,
              requestHost: (request, options) => {
                waiting++
                clearTimeout(timer)
                return requestHost(request, options).finally(() => {
                  waiting--
                  restart()
                })
              },
            }
      try {
        leave = onCallContext(routed)
      } catch {
        // a router that throws routes nothing; the call goes on
      }
    }
    const onProgress = context?.onProgress
    // with a host that may be asked, this timer alone bounds the call: the SDK's would not wait for the host
    const sdkTimeout = requestHost === undefined || onCallContext === undefined ? timeout : MAX_TIMER_MS
    const options: McpRequestOptions =
      onProgress === undefined
        ? { timeout: sdkTimeout, signal: controller.signal }
        : {
            timeout: sdkTimeout,
            signal: controller.signal,
            resetTimeoutOnProgress: true,
            onprogress: (p) => {
              restart()
              try {
                onProgress(progressOf(p))
              } catch {
                // the host's side of progress is its own; the call goes on
              }
            },
          }
    let pending: Promise<unknown>
    try {
      pending = Promise.resolve(client.callTool(params, undefined, options))
    } catch (e) {
      pending = Promise.reject(e)
    }
    pending.then(
      (result) => finish({ _tag: 'Answered', result }),
      (error: unknown) => finish({ _tag: 'Failed', error }),
    )
  })

/** A call read and routed: its (error) result already known, or ready to send. */
type Prepared =
  | { readonly _tag: 'Answered'; readonly result: ToolResult }
  | { readonly _tag: 'Ready'; readonly call: unknown; readonly tool: McpTool; readonly args: Args }

// a name the listing does not route, told apart from a tool the server lists that the listing left out
const whyUnrouted = (routes: Routes, name: string): string => {
  const why = routes.leftOut.get(name)
  return why === undefined
    ? `there is no tool named ${JSON.stringify(name)} on this MCP server; the tool was not called`
    : `the MCP server lists a tool named ${JSON.stringify(name)}, but the listing left it out: ${why}; the tool was not called`
}

const prepare = (routes: Routes, batch: Batch, i: number, call: unknown): Prepared => {
  try {
    const name = callNameOf(call)
    if (name === undefined) {
      return { _tag: 'Answered', result: errorResult(call, 'the call has no function name; the tool was not called') }
    }
    const tool = routes.byName.get(name)
    if (tool === undefined) {
      return {
        _tag: 'Answered',
        result: errorResult(call, whyUnrouted(routes, name)),
      }
    }
    // through the batch: a layer above (the audit) has usually parsed them already
    const args = noneAsEmpty(batch.argsAt(i))
    if (isLeft(args))
      return { _tag: 'Answered', result: errorResult(call, `${drawArgsProblem(args.left)}; the tool was not called`) }
    return { _tag: 'Ready', call, tool, args: args.right }
  } catch (e) {
    return {
      _tag: 'Answered',
      result: errorResult(call, `the call could not be read (${describeError(e)}); the tool was not called`),
    }
  }
}

/** Runs `tasks` with at most `limit` at once; results in order. */
const pool = async <A>(tasks: ReadonlyArray<() => Promise<A>>, limit: number): Promise<ReadonlyArray<A>> => {
  const out: Array<A> = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++
      out[i] = await (tasks[i] as () => Promise<A>)()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return out
}

// -------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------

const DEFAULT_TIMEOUT = 60_000

// The codec's name is the text a TypeError gives for what a value "must be".
// setTimeout treats anything above 2^31 - 1 ms as 1 ms: refused, rather than time out every call at once
const Milliseconds = wholeNumber(`a whole number of milliseconds between 1 and ${MAX_TIMER_MS}`, 1, MAX_TIMER_MS)
const PositiveInteger = wholeNumber('a whole number of at least 1', 1, Number.MAX_SAFE_INTEGER)

const AbortSignalCodec = refined('an AbortSignal', (u): u is AbortSignal => u instanceof AbortSignal)

const OptionsProps = {
  timeout: Milliseconds,
  readOnlyConcurrency: PositiveInteger,
  signal: AbortSignalCodec,
  onCallContext: refined('a function', (u): u is (context: McpCallContext) => IO<void> => typeof u === 'function'),
}

const CLIENT_METHODS = ['listTools', 'callTool'] as const

const missingMethods = (u: unknown): ReadonlyArray<string> =>
  CLIENT_METHODS.filter((m) => typeof memberOf(u, m) !== 'function')

const assertClient = (where: string, u: unknown): void => {
  if (typeof u !== 'object' || u === null) {
    throw new TypeError(`${where}: expected an MCP client (with listTools and callTool), got ${describeValue(u)}`)
  }
  const missing = missingMethods(u)
  if (missing.length > 0) {
    // a `{ client }` record (such as connectStdio's connection) passed in place of its client
    if (missingMethods(memberOf(u, 'client')).length === 0) {
      throw new TypeError(
        `${where}: expected an MCP client, got an object that holds one in \`.client\` (what connectStdio returns): pass connection.client`,
      )
    }
    throw new TypeError(
      `${where}: expected an MCP client, but ${missing.map((m) => `\`${m}\` is not a function`).join(' and ')}`,
    )
  }
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * A provider over a connected MCP client.
 *
 * - `toolsForLlm` lists every page of `tools/list` (following `nextCursor`), each tool as
 *   `{ type: 'function', function: { name, description, parameters: inputSchema } }` under a legal,
 *   stable name (`toolNameMapping`). A page the SDK's schema rejects is fetched again raw and
 *   published unchanged. A tool without a name, or whose schema or annotations nest deeper than
 *   `MAX_SCHEMA_DEPTH`, is left out, and the others are listed. A failed listing is a Left; only a
 *   successful listing replaces the routing table.
 * - `executeToolCalls` routes each call through the names of the last listing (listing first if there
 *   is none), reads its arguments with `parseArgs` (empty or absent means `{}`), calls `callTool` and
 *   renders the response. Every problem is an `is_error` result for that call only, in the caller's
 *   order; the batch never fails.
 *
 * @example
 * import { fromMcpClient } from 'toolstack/mcp'
 * const fake = {
 *   listTools: () =>
 *     Promise.resolve({
 *       tools: [{ name: 'files.read', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }],
 *     }),
 *   callTool: (p: { name: string; arguments?: Record<string, unknown> }) =>
 *     Promise.resolve({ content: [{ type: 'text', text: `${p.name} ${String(p.arguments?.path)}` }] }),
 * }
 * const tools = fromMcpClient(fake)
 * const listed = await tools.toolsForLlm()
 * assert.ok(listed._tag === 'Right')
 * const name = listed.right[0]?.function.name ?? ''
 * const out = await tools.executeToolCalls([{ id: '1', function: { name, arguments: '{"path":"a.txt"}' } }])()
 * assert.deepStrictEqual(out._tag === 'Right' && out.right.map((r) => r.content), ['files.read a.txt'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromMcpClient = (client: McpToolClient, options?: FromMcpClientOptions): McpProvider => {
  const where = 'fromMcpClient'
  assertClient(where, client)
  const opts = decodeOptions(where, OptionsProps, options)
  const timeout: number = opts.timeout ?? DEFAULT_TIMEOUT
  const concurrency: number = opts.readOnlyConcurrency ?? 1
  const signal: AbortSignal | undefined = opts.signal
  const onCallContext: ((context: McpCallContext) => IO<void>) | undefined = opts.onCallContext
  const requestOptions: McpRequestOptions = signal === undefined ? { timeout } : { timeout, signal }

  const lastRoutes: IORef<Routes | undefined> = newIORef<Routes | undefined>(undefined)()
  const listeners: IORef<ReadonlyArray<{ readonly run: IO<void> }>> = newIORef<
    ReadonlyArray<{ readonly run: IO<void> }>
  >([])()
  let installed = false

  const list = async (): Promise<Either<McpListingError, Routes>> => {
    const listed = await listAll(client, requestOptions)
    if (listed._tag === 'Right') lastRoutes.write(listed.right)()
    return listed
  }

  const callOne = async (p: Prepared): Promise<ToolResult> => {
    if (p._tag === 'Answered') return p.result
    const outcome = await invoke(
      client,
      { name: p.tool.mcpName, arguments: p.args as Record<string, unknown> },
      timeout,
      signal,
      callContextOf(p.call),
      onCallContext,
    )
    const id = callIdOf(p.call)
    try {
      return outcome._tag === 'Answered'
        ? renderCallResult(id, outcome.result)
        : errorResult(p.call, describeOutcome(outcome, timeout))
    } catch (e) {
      return errorResult(p.call, `the MCP server's answer could not be read (${describeError(e)})`)
    }
  }

  const run = async (batch: Batch, { calls, unreadable }: Read): Promise<ReadonlyArray<ToolResult>> => {
    if (calls.length === 0) return []
    let table = lastRoutes.read()
    if (table === undefined) {
      const listed = await list()
      if (listed._tag === 'Left') {
        const why = `the MCP server's tools could not be listed to route this call (${listed.left.message}); the tool was not called`
        return calls.map((c, i) => {
          const answered = unreadable[i]
          return answered?._tag === 'Answer' ? answered.result : errorResult(c, why)
        })
      }
      table = listed.right
    }
    const routes = table
    const prepared = calls.map((c, i): Prepared => {
      const answered = unreadable[i]
      return answered?._tag === 'Answer' ? { _tag: 'Answered', result: answered.result } : prepare(routes, batch, i, c)
    })
    // consecutive read-only calls (and calls with a result already) form one group, run at most
    // `concurrency` at once; any other call is a group of its own, so a write never overlaps anything
    // and keeps its place in the caller's order. A group may be empty.
    let current: Array<Prepared> = []
    const groups: Array<Array<Prepared>> = [current]
    for (const p of prepared) {
      if (p._tag === 'Answered' || p.tool.readOnly) {
        current.push(p)
      } else {
        current = []
        groups.push([p], current)
      }
    }
    const out: Array<ToolResult> = []
    for (const g of groups)
      out.push(
        ...(await pool(
          g.map((p) => () => callOne(p)),
          concurrency,
        )),
      )
    return out
  }

  const executeBatch = (batch: Batch) => async (): Promise<Either<never, ReadonlyArray<ToolResult>>> => {
    const read = readPositions(batch.calls)
    if (read._tag === 'Left') return right(read.left)
    return run(batch, read.right).then(
      (results) => right(results),
      // e.g. a listed tool whose getters throw: even then the batch does not fail
      (e: unknown) => right(failAll(read.right.calls, `the MCP provider failed: ${describeError(e)}`)),
    )
  }

  const notify = (): void => {
    for (const l of listeners.read()) {
      try {
        l.run()
      } catch {
        // a listener that throws does not stop the others
      }
    }
  }

  return {
    toolsForLlm: () =>
      list().then(
        (listed) => (listed._tag === 'Right' ? right(listed.right.declarations) : listed),
        (e: unknown) => left(listingError(`tools/list failed: ${describeListingFailure(e)}`, e)),
      ),
    executeToolCalls: (calls) => executeBatch(batchOf(calls)),
    executeBatch,
    tools: () => lastRoutes.read()?.tools ?? [],
    leftOut: () => Array.from(lastRoutes.read()?.leftOut ?? [], ([name, why]) => ({ name, why })),
    onToolsChanged: (listener) => {
      // one wrapper per subscription: a function subscribed twice needs two unsubscribes
      const entry = { run: listener }
      listeners.write([...listeners.read(), entry])()
      if (!installed && typeof client.setNotificationHandler === 'function') {
        installed = true
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => notify())
      }
      return () => {
        listeners.write(listeners.read().filter((e) => e !== entry))()
      }
    },
  }
}
