/**
 * `unknownKeyAuditMiddleware`: the unknown-key audit inside the Vercel AI SDK. A language model
 * middleware sees each tool call as the model wrote it (`input`, a JSON string) together with the
 * tools of the same request, before the SDK parses the input with the tool's schema (a zod `z.object`
 * strips every key it does not declare). It audits those keys and passes the result, or the stream,
 * through unchanged.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { LanguageModelMiddleware } from 'ai'
import type { AuditSession, UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import type { ToolDeclaration } from '../kernel/model.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import { listedCatalogue } from '../adapter/adapter.js'
import { isRecord } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>
type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>

/**
 * The parameters of one model request, as a middleware is handed them.
 *
 * @since 0.1.0
 * @category model
 */
export type LanguageModelCallParams = Parameters<WrapGenerate>[0]['params']

/**
 * A middleware plus what it audits.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditMiddleware extends LanguageModelMiddleware {
  readonly specificationVersion: 'v4'
  readonly wrapGenerate: WrapGenerate
  readonly wrapStream: WrapStream
  /** Sorted names of the tools audited in the most recent request (function tools declaring a property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The function tools of a request as declarations in the provider model: `inputSchema`
 * is the JSON Schema the SDK made of the tool's schema (a zod `z.object` included), so
 * its `properties` are the declared keys. Provider-defined tools are left out: their
 * calls are the provider's.
 *
 * @example
 * import { declarationsOfRequest } from 'toolstack/ai-sdk'
 * const ds = declarationsOfRequest([
 *   { type: 'function', name: 'read', inputSchema: { type: 'object', properties: { path: {} } } },
 * ])
 * assert.deepStrictEqual(ds, [
 *   { type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: {} } } } },
 * ])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const declarationsOfRequest = (tools: unknown): ReadonlyArray<ToolDeclaration> => {
  if (!Array.isArray(tools)) return []
  const out: Array<ToolDeclaration> = []
  for (const t of tools as ReadonlyArray<unknown>) {
    try {
      if (!isRecord(t) || t['type'] !== 'function' || typeof t['name'] !== 'string' || !isRecord(t['inputSchema']))
        continue
      out.push({ type: 'function', function: { name: t['name'], parameters: t['inputSchema'] } })
    } catch {
      // a tool that cannot be read is not audited
    }
  }
  return out
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

const catalogueOfRequest = (session: AuditSession, params: LanguageModelCallParams): Catalogue =>
  listedCatalogue(session, declarationsOfRequest(params.tools))

// audits a tool call the SDK will run (not provider-executed): its raw input against the request's tools
const checkPart = (session: AuditSession, catalogue: Catalogue, part: unknown): void => {
  try {
    if (!isRecord(part) || part['type'] !== 'tool-call' || part['providerExecuted'] === true) return
    const name = part['toolName']
    if (typeof name !== 'string') return
    const id = part['toolCallId']
    session.check(catalogue, {
      id: typeof id === 'string' ? id : '',
      function: { name, arguments: part['input'] as string },
    })
  } catch {
    // a part that cannot be read is not audited, and goes on as it came
  }
}

/**
 * A language model middleware that audits each tool call's raw input against the tools of its own
 * request, in `generateText` and `streamText` alike, and warns once per (tool, key), with the options,
 * warning and once-per-pair memory of `withUnknownKeyAudit`. It changes nothing: `wrapGenerate` returns
 * the same result object the model returned, and `wrapStream` passes on the model's parts in order,
 * each the same object (same reference). Given the same `sharedUnknownKeyAudit` as the stack behind
 * `toAiSdkTools`, the two keep one memory and say each pair once, each warning naming its layer (`via`).
 *
 * ```ts
 * const model = wrapLanguageModel({ model: openai('gpt-5'), middleware: unknownKeyAuditMiddleware({ onWarn }) })
 * ```
 *
 * @example
 * import { unknownKeyAuditMiddleware } from 'toolstack/ai-sdk'
 * const said: Array<string> = []
 * const mw = unknownKeyAuditMiddleware({
 *   onWarn: (w) => {
 *     said.push(`${w.tool}: ${w.unknownKeys.join()} → ${w.suggestions[0]?.didYouMean}`)
 *   },
 * })
 * const result = {
 *   content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: '{"path":"a","ffset":3}' }],
 *   finishReason: { unified: 'tool-calls', raw: undefined },
 *   usage: {
 *     inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
 *     outputTokens: { total: 1, text: 1, reasoning: undefined },
 *   },
 *   warnings: [],
 * } as const
 * const params = {
 *   prompt: [],
 *   tools: [{ type: 'function', name: 'read', inputSchema: { type: 'object', properties: { path: {}, offset: {} } } }],
 * } as const
 * const out = await mw.wrapGenerate({
 *   doGenerate: async () => result,
 *   doStream: async () => {
 *     throw new Error('not streamed')
 *   },
 *   params,
 *   model: {} as never,
 * } as never)
 * assert.strictEqual(out, result)
 * assert.deepStrictEqual(said, ['read: ffset → offset'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownKeyAuditMiddleware = (options?: UnknownKeyAuditOptions): UnknownKeyAuditMiddleware => {
  const session = auditSessions('unknownKeyAuditMiddleware', options, 'ai-sdk-middleware')()

  const wrapGenerate: WrapGenerate = async ({ doGenerate, params }) => {
    const catalogue = catalogueOfRequest(session, params)
    const result = await doGenerate()
    // with no tools audited, each part's check finds no declaration and emits nothing
    try {
      for (const part of result.content) checkPart(session, catalogue, part)
    } catch {
      // a result that cannot be read is not audited
    }
    return result
  }

  const wrapStream: WrapStream = async ({ doStream, params }) => {
    const catalogue = catalogueOfRequest(session, params)
    const result = await doStream()
    if (catalogue.size === 0) return result
    type Part = typeof result.stream extends ReadableStream<infer P> ? P : never
    const audit = new TransformStream<Part, Part>({
      transform: (part, controller) => {
        checkPart(session, catalogue, part)
        controller.enqueue(part)
      },
    })
    return { ...result, stream: result.stream.pipeThrough(audit) }
  }

  return {
    specificationVersion: 'v4',
    wrapGenerate,
    wrapStream,
    auditedTools: session.auditedTools,
    stats: session.stats,
  }
}
