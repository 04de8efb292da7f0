/**
 * `unknownKeyAuditMiddleware`: the unknown-key audit inside the Anthropic SDK, for code that keeps its own
 * tools. The client's `middleware` sees every Messages API request with its `tools` and the response to it;
 * each `tool_use` block of the response is heard against the `input_schema` of its tool in that very request,
 * before any code of the host's parses the `input`. It passes the request and the response through unchanged.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Middleware, MiddlewareContext } from '@anthropic-ai/sdk'
import type { AuditSession, UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import type { ToolDeclaration } from '../kernel/model.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { argumentsOf, callOf } from '../adapter/adapter.js'
import { isRecord, memberOf } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A client middleware plus what it audits.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditMiddleware extends Middleware {
  /** Sorted names of the tools audited in the most recent request (custom tools declaring a property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The custom tools of a Messages API request (`tools`, of `messages.create` or of the beta) as declarations:
 * each tool's `input_schema` as its `parameters`. Server tools (`web_search`, `code_execution`, an MCP
 * toolset, …) and the versioned client tools (`bash`, `text_editor`, …) are left out: they carry a `type`,
 * and their inputs are the API's to define.
 *
 * @example
 * import { declarationsOfTools } from 'toolstack/anthropic'
 * assert.deepStrictEqual(
 *   declarationsOfTools([
 *     { name: 'read', input_schema: { type: 'object', properties: { path: {} } } },
 *     { type: 'web_search_20250305', name: 'web_search' },
 *   ]),
 *   [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: {} } } } }],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const declarationsOfTools = (tools: unknown): ReadonlyArray<ToolDeclaration> => {
  if (!Array.isArray(tools)) return []
  const out: Array<ToolDeclaration> = []
  for (const t of tools as ReadonlyArray<unknown>) {
    try {
      if (!isRecord(t) || typeof t['name'] !== 'string' || !isRecord(t['input_schema'])) continue
      const type = t['type']
      if (type !== undefined && type !== null && type !== 'custom') continue
      out.push({ type: 'function', function: { name: t['name'], parameters: t['input_schema'] } })
    } catch {
      // a tool that cannot be read is not audited
    }
  }
  return out
}

/** The most threads whose tools the middleware remembers (see `unknownKeyAuditMiddleware`). */
const MAX_THREADS = 1024

type Options = NonNullable<MiddlewareContext['options']>

// a Messages API call: POST /v1/messages (the beta adds ?beta=true), not count_tokens nor batches
const isMessagesCall = (o: Options | undefined): o is Options =>
  o !== undefined && o.method === 'post' && o.path.split('?')[0] === '/v1/messages'

/** What a request is heard against: its tools' catalogue, how many tools it listed, whether it is in a thread. */
interface Heard {
  readonly catalogue: Catalogue
  readonly tools: number
  readonly threaded: boolean
}

interface Use {
  readonly id: unknown
  readonly name: unknown
  /** The block's own `input`: what a streamed block starts with. */
  readonly input: unknown
  /** The streamed input's JSON text, in the order its deltas came. */
  readonly json: string
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

// audits one tool_use block against the tools of its request: its input object, or the JSON text it was streamed as
const hear = (session: AuditSession, catalogue: Catalogue, use: Use): void => {
  if (typeof use.name !== 'string') return
  const args = use.json === '' ? argumentsOf(use.input) : use.json
  session.check(catalogue, callOf(typeof use.id === 'string' ? use.id : '', use.name, args))
}

// each tool_use block of a message (content that is not a list throws, which the caller's catch answers, or
// holds no block)
const hearMessage = (session: AuditSession, catalogue: Catalogue, message: unknown): void => {
  for (const block of memberOf(message, 'content') as Iterable<unknown>) {
    if (isRecord(block) && block['type'] === 'tool_use')
      hear(session, catalogue, { id: block['id'], name: block['name'], input: block['input'], json: '' })
  }
}

// a streamed message: each tool_use block is heard at its content_block_stop, its input the JSON its deltas built
// (a parse that is not a stream, never the SDK's, rejects at once, which the caller ignores)
const hearStream = async (
  session: AuditSession,
  catalogue: Catalogue,
  events: unknown,
  onMessage: (id: unknown) => void,
) => {
  const open = new Map<unknown, Use>()
  for await (const e of events as AsyncIterable<unknown>) {
    if (!isRecord(e)) continue
    const index = e['index']
    if (e['type'] === 'message_start') onMessage(memberOf(e['message'], 'id'))
    else if (e['type'] === 'content_block_start') {
      const b = e['content_block']
      if (isRecord(b) && b['type'] === 'tool_use')
        open.set(index, { id: b['id'], name: b['name'], input: b['input'], json: '' })
    } else if (e['type'] === 'content_block_delta') {
      const use = open.get(index)
      const d = e['delta']
      if (use !== undefined && isRecord(d) && d['type'] === 'input_json_delta' && typeof d['partial_json'] === 'string')
        open.set(index, { ...use, json: use.json + d['partial_json'] })
    } else if (e['type'] === 'content_block_stop') {
      const use = open.get(index)
      open.delete(index)
      if (use !== undefined) hear(session, catalogue, use)
    }
  }
}

/**
 * A client middleware (`new Anthropic({ middleware: [unknownKeyAuditMiddleware({ onWarn })] })`) that audits
 * each `tool_use` block of every Messages API response — `messages.create`, `messages.stream`, the beta's and
 * its tool runner's alike — against the `tools` of its own request, and warns once per (tool, key), with the
 * options, warning and once-per-pair memory of `withUnknownKeyAudit` (a `sharedUnknownKeyAudit` included:
 * its warnings say `via: 'anthropic-middleware'`). It changes nothing: the request goes on as it came and
 * the response the client gets is the very object `next` returned. A streamed response is heard from the
 * SDK's own copy of it (`ctx.parse`), each block when it ends. A request that continues a thread (`thread:
 * { type: 'continue' }`, as the tool runner sends) without tools is heard against the tools its thread began
 * with. Server tools' blocks are not audited: the API ran them. Under the SDK's OpenTelemetry tracing, a
 * warning is said inside the call's own span, so an `otelAudit()` as the options puts it there.
 *
 * @example
 * import { unknownKeyAuditMiddleware } from 'toolstack/anthropic'
 * const said: Array<string> = []
 * const mw = unknownKeyAuditMiddleware({ onWarn: (w) => void said.push(`${w.tool}: ${w.unknownKeys.join()}`) })
 * const message = { content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a', opts: { encodng: 'utf8' } } }] }
 * const response = new Response(JSON.stringify(message), { headers: { 'content-type': 'application/json' } })
 * const opts = { type: 'object', properties: { encoding: {} } }
 * const body = { tools: [{ name: 'read', input_schema: { type: 'object', properties: { path: {}, opts } } }] }
 * const ctx = { options: { method: 'post', path: '/v1/messages', body }, logger: console, parse: async () => message } as const
 * const request = { url: 'https://api.anthropic.com/v1/messages', method: 'POST', headers: new Headers(), body: JSON.stringify(body) }
 * assert.strictEqual(await mw(request, async () => response, ctx as never), response)
 * assert.deepStrictEqual(said, ['read: opts.encodng'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownKeyAuditMiddleware = (options?: UnknownKeyAuditOptions): UnknownKeyAuditMiddleware => {
  const session = auditSessions('unknownKeyAuditMiddleware', options, 'anthropic-middleware')()
  // A thread's tools are sent in its first request only (the tool runner's default): each response of a thread
  // remembers what its request was heard against, by the response's id, for the request that continues from it.
  // Bounded: the most recent MAX_THREADS, the oldest dropped first. Changed in one synchronous step, never across
  // an await. Keyed by message ids: `remember` takes no other key.
  const threads = new Map<unknown, Heard>()
  const remember = (id: unknown, heard: Heard): void => {
    if (typeof id !== 'string') return
    threads.delete(id)
    threads.set(id, heard)
    if (threads.size > MAX_THREADS) threads.delete(threads.keys().next().value)
  }

  // what a Messages API request is heard against: its own tools, or those of the thread it continues (undefined
  // for a thread not remembered); undefined for a body it cannot read
  const requestOf = (held: unknown, encoded: unknown): Heard | undefined => {
    try {
      // the body as the SDK holds it (an object), or as it was encoded
      const body = isRecord(held) ? held : typeof encoded === 'string' ? (JSON.parse(encoded) as unknown) : undefined
      if (!isRecord(body)) return undefined
      const tools = body['tools']
      const thread = body['thread']
      if (tools === undefined && isRecord(thread) && thread['type'] === 'continue')
        return threads.get(thread['previous_message_id'])
      const declarations = declarationsOfTools(tools)
      return { catalogue: session.readListing(declarations), tools: declarations.length, threaded: isRecord(thread) }
    } catch {
      // a request that cannot be read is not audited
    }
    return undefined
  }

  const middleware: Middleware = async (request, next, ctx) => {
    // the SDK's own options, read outside any catch: a call that is not a Messages API call is not heard
    const options = ctx.options
    if (!isMessagesCall(options)) return next(request)
    const heard = requestOf(options.body, request.body)
    if (heard !== undefined) session.recordListing(heard.catalogue, heard.tools)
    const response = await next(request)
    if (heard === undefined || heard.catalogue.size === 0 || !response.ok) return response
    const onMessage = (id: unknown): void => {
      if (heard.threaded) remember(id, heard)
    }
    try {
      const parsed: unknown = await ctx.parse(response)
      // heard as the client reads its own copy: the response is not held back for it
      if (options.stream === true) hearStream(session, heard.catalogue, parsed, onMessage).catch(() => undefined)
      else {
        onMessage(memberOf(parsed, 'id'))
        hearMessage(session, heard.catalogue, parsed)
      }
    } catch {
      // a response that cannot be read is not audited, and goes on as it came
    }
    return response
  }

  return Object.assign(middleware, { auditedTools: session.auditedTools, stats: session.stats })
}
