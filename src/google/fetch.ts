/**
 * `unknownKeyAuditFetch`: the unknown-key audit inside `@google/genai`, for code that keeps its own tools (its
 * function declarations, a `CallableTool`, the SDK's `mcpToTool`). The SDK sends every request through the
 * `fetch` of its `httpOptions`; there each `generateContent` request is read with its `tools`, and each function
 * call of the response (or of each chunk of a streamed one) is heard against the declaration of its tool in that
 * very request, before the SDK hands the call to any code. The request and the response go on unchanged.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { AuditSession, UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import type { ToolDeclaration } from '../kernel/model.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { argumentsOf, callOf, listedCatalogue } from '../adapter/adapter.js'
import { describeValue } from '../kernel/describe.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import { splitEvents } from './events.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A `fetch` as the SDK's `httpOptions.fetch` takes it.
 *
 * @since 0.1.0
 * @category model
 */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/**
 * The audit's options, and the `fetch` it sends the requests through.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditFetchOptions extends UnknownKeyAuditOptions {
  /** The `fetch` the requests go through. Default: the global `fetch`, read at each request. */
  readonly fetch?: Fetch
}

/**
 * A `fetch` plus what it audits.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditFetch extends Fetch {
  /** Sorted names of the tools audited in the most recent request (function declarations declaring a property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The function declarations of a `generateContent` request's `tools`, as the SDK sends them, as declarations:
 * `parametersJsonSchema` (a JSON Schema) or else `parameters` (the API's OpenAPI subset, whose `properties`
 * read the same) as each one's `parameters`. Every other tool (Google Search, code execution, URL context, a
 * server-side MCP server) is left out: the API runs it.
 *
 * @example
 * import { declarationsOfRequest } from 'toolstack/google'
 * assert.deepStrictEqual(
 *   declarationsOfRequest([
 *     { functionDeclarations: [{ name: 'read', parametersJsonSchema: { type: 'object', properties: { path: {} } } }] },
 *     { googleSearch: {} },
 *   ]),
 *   [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: {} } } } }],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const declarationsOfRequest = (tools: unknown): ReadonlyArray<ToolDeclaration> => {
  if (!Array.isArray(tools)) return []
  const out: Array<ToolDeclaration> = []
  for (const tool of tools as ReadonlyArray<unknown>) {
    const declared = memberOf(tool, 'functionDeclarations')
    if (!Array.isArray(declared)) continue
    for (const d of declared as ReadonlyArray<unknown>) {
      try {
        if (!isRecord(d) || typeof d['name'] !== 'string') continue
        const schema = d['parametersJsonSchema'] ?? d['parameters']
        if (isRecord(schema)) out.push({ type: 'function', function: { name: d['name'], parameters: schema } })
      } catch {
        // a declaration that cannot be read is not audited
      }
    }
  }
  return out
}

// a generateContent call (streamed or not), of the Gemini API or of Vertex AI
const GENERATE = /:(?:stream)?generateContent$/i

const urlOf = (input: string | URL | Request): URL | undefined => {
  try {
    return new URL(typeof input === 'string' || input instanceof URL ? input : input.url)
  } catch {
    return undefined
  }
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

// every function call of every candidate of one response (or one chunk of a stream)
const hearResponse = (session: AuditSession, catalogue: Catalogue, response: unknown): void => {
  const candidates = memberOf(response, 'candidates')
  if (!Array.isArray(candidates)) return
  for (const candidate of candidates as ReadonlyArray<unknown>) {
    const parts = memberOf(memberOf(candidate, 'content'), 'parts')
    if (!Array.isArray(parts)) continue
    parts.forEach((part: unknown, i) => {
      const call = memberOf(part, 'functionCall')
      const name = memberOf(call, 'name')
      if (typeof name !== 'string') return
      const id = memberOf(call, 'id')
      const args = memberOf(call, 'args')
      session.check(catalogue, callOf(typeof id === 'string' ? id : `part_${i + 1}`, name, argumentsOf(args ?? {})))
    })
  }
}

const hearStream = async (session: AuditSession, catalogue: Catalogue, body: ReadableStream<Uint8Array>) => {
  const decoder = new TextDecoder()
  let buffer = ''
  const reader = body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    buffer = done ? `${buffer}${decoder.decode()}\n\n` : buffer + decoder.decode(value, { stream: true })
    const [data, rest] = splitEvents(buffer)
    buffer = rest
    for (const d of data) {
      try {
        hearResponse(session, catalogue, JSON.parse(d))
      } catch {
        // a chunk that is not JSON is the SDK's to report
      }
    }
    if (done) return
  }
}

const splitOptions = (
  options: AuditFetchOptions | undefined,
): readonly [Fetch | undefined, UnknownKeyAuditOptions | undefined] => {
  if (!isRecord(options) || !Object.prototype.hasOwnProperty.call(options, 'fetch')) return [undefined, options]
  const { fetch: inner, ...audit } = options
  if (inner !== undefined && typeof inner !== 'function')
    throw new TypeError(`unknownKeyAuditFetch: option "fetch" must be a function, got ${describeValue(inner)}`)
  return [inner as Fetch | undefined, audit]
}

/**
 * A `fetch` for the SDK's `httpOptions` (`new GoogleGenAI({ httpOptions: { fetch: unknownKeyAuditFetch({ onWarn
 * }) } })`) that audits each function call of every `generateContent` response — `generateContent`,
 * `generateContentStream`, chats, and the SDK's automatic function calling (a `CallableTool`, `mcpToTool`'s
 * MCP clients) alike — against the function declarations of its own request, and warns once per (tool, key),
 * with the options, warning and once-per-pair memory of `withUnknownKeyAudit` (a `sharedUnknownKeyAudit`
 * included: its warnings say `via: 'google-fetch'`). It changes nothing: the request goes to `fetch` as it came,
 * and the SDK gets the very response `fetch` returned; a streamed response is heard from a copy of it
 * (`response.clone()`), each chunk as it arrives. A call without an `id` is named by its position
 * (`part_<n>`) in warnings.
 *
 * @example
 * import { unknownKeyAuditFetch } from 'toolstack/google'
 * const said: Array<string> = []
 * const reply = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'fc_1', name: 'read', args: { path: 'a', ofset: 1 } } }] } }] }
 * const response = new Response(JSON.stringify(reply), { headers: { 'content-type': 'application/json' } })
 * const fetch = unknownKeyAuditFetch({ onWarn: (w) => void said.push(`${w.tool}: ${w.unknownKeys.join()}`), fetch: async () => response })
 * const tools = [{ functionDeclarations: [{ name: 'read', parametersJsonSchema: { type: 'object', properties: { path: {}, offset: {} } } }] }]
 * const url = 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent'
 * assert.strictEqual(await fetch(url, { method: 'POST', body: JSON.stringify({ contents: [], tools }) }), response)
 * assert.deepStrictEqual(said, ['read: ofset'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownKeyAuditFetch = (options?: AuditFetchOptions): UnknownKeyAuditFetch => {
  const [inner, auditOptions] = splitOptions(options)
  const session = auditSessions('unknownKeyAuditFetch', auditOptions, 'google-fetch')()

  const audited: Fetch = async (input, init) => {
    let catalogue: Catalogue | undefined
    let streamed = false
    try {
      const url = urlOf(input)
      const body = init?.body
      if (url !== undefined && GENERATE.test(url.pathname) && typeof body === 'string') {
        streamed = /stream/i.test(url.pathname)
        catalogue = listedCatalogue(session, declarationsOfRequest(memberOf(JSON.parse(body), 'tools')))
      }
    } catch {
      // a request that cannot be read is not audited
    }
    const response = await (inner ?? fetch)(input, init)
    if (catalogue === undefined || catalogue.size === 0 || !response.ok) return response
    try {
      const copy = response.clone()
      if (streamed) {
        // heard as its chunks arrive: the response is not held back for it
        if (copy.body !== null) hearStream(session, catalogue, copy.body).catch(() => undefined)
      } else hearResponse(session, catalogue, await copy.json())
    } catch {
      // a response that cannot be read is not audited, and goes on as it came
    }
    return response
  }

  return Object.assign(audited, { auditedTools: session.auditedTools, stats: session.stats })
}
