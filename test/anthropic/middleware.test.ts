// unknownKeyAuditMiddleware in the Anthropic SDK's own client, pointed at a loopback server that answers with
// recorded Messages API responses: a host that keeps its own tools hears every tool_use block against the tools
// of its request, in messages.create and messages.stream alike, each pair once; the request and the response
// go on as they came.
import Anthropic from '@anthropic-ai/sdk'
import type { Middleware } from '@anthropic-ai/sdk'
import type { Message, MessageParam } from '@anthropic-ai/sdk/resources/messages'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { formatWarning } from '../../src/index.js'
import { declarationsOfTools, unknownKeyAuditMiddleware } from '../../src/anthropic/index.js'
import type { Loopback } from '../support/loopback.js'
import { inTurn, loopback } from '../support/loopback.js'
import { asJson, asStream, ownTools, turns } from './support.js'

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

// the host's own loop: it runs its tools itself (here: it answers each call with "ok")
const hostLoop = async (next: (messages: Array<MessageParam>) => Promise<Message>): Promise<ReadonlyArray<Message>> => {
  const messages: Array<MessageParam> = [{ role: 'user', content: 'When is the demo?' }]
  const got: Array<Message> = []
  for (let turn = 0; turn < 6; turn++) {
    const message = await next(messages)
    got.push(message)
    messages.push({ role: 'assistant', content: message.content })
    if (message.stop_reason !== 'tool_use') break
    messages.push({
      role: 'user',
      content: message.content.flatMap((b) =>
        b.type === 'tool_use' ? [{ type: 'tool_result' as const, tool_use_id: b.id, content: 'ok' }] : [],
      ),
    })
  }
  return got
}

const expectedWarnings = [
  'toolstack: read_file call toolu_01 carried undeclared argument key "options.encodng" (declared: "options", "path") (did you mean options.encoding?)',
  'toolstack: write_file call toolu_04 carried undeclared argument key "mode" (declared: "content", "path")',
]

describe('unknownKeyAuditMiddleware in the client (a loopback server answering recorded responses)', () => {
  it('messages.create: each tool_use heard against its request’s tools, each pair once; the server tool’s block not heard; the messages unchanged', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0, middleware: [audit] })
    const got = await hostLoop((messages) =>
      client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools: ownTools }),
    )
    expect(got.map((m) => m.content)).toEqual(turns().map((m) => m.content))
    expect(warnings.map(formatWarning)).toEqual(expectedWarnings)
    expect(warnings[0]?.suggestions).toEqual([{ key: 'options.encodng', didYouMean: 'options.encoding' }])
    // the second read carried the same key: counted, not said again
    expect(audit.stats()).toEqual([
      { tool: 'read_file', key: 'options.encodng', calls: 2, firstId: 'toolu_01' },
      { tool: 'write_file', key: 'mode', calls: 1, firstId: 'toolu_04' },
    ])
    expect(audit.auditedTools()).toEqual(['read_file', 'write_file'])
  })

  it('messages.stream: each block heard from the SDK’s own copy of the stream, when it ends; the same warnings', async () => {
    server = await loopback(inTurn(turns().map(asStream)))
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0, middleware: [audit] })
    const got = await hostLoop((messages) =>
      client.messages
        .stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools: ownTools })
        .finalMessage(),
    )
    expect(got.map((m) => m.content)).toEqual(turns().map((m) => m.content))
    await vi.waitFor(() => expect(warnings.map(formatWarning)).toEqual(expectedWarnings))
    expect(audit.stats().map((s) => s.calls)).toEqual([2, 1])
  })

  it('passes the very request on and returns the very response next gave', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const seen: { outerRequest?: unknown; innerRequest?: unknown; innerResponse?: unknown; outerResponse?: unknown } =
      {}
    const outer: Middleware = async (request, next) => {
      seen.outerRequest = request
      seen.outerResponse = await next(request)
      return seen.outerResponse as Response
    }
    const inner: Middleware = async (request, next) => {
      seen.innerRequest = request
      seen.innerResponse = await next(request)
      return seen.innerResponse as Response
    }
    const audit = unknownKeyAuditMiddleware({ onWarn: () => undefined })
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: server.url,
      maxRetries: 0,
      middleware: [outer, audit, inner],
    })
    await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'hi' }],
      tools: ownTools,
    })
    expect(seen.innerRequest).toBe(seen.outerRequest)
    expect(seen.outerResponse).toBe(seen.innerResponse)
    expect(audit.stats()).toHaveLength(1)
  })

  it('hears only Messages API calls that succeed: an error response goes to the SDK as it came, unheard', async () => {
    server = await loopback(
      inTurn([
        { json: { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } }, status: 400 },
        { json: { input_tokens: 12 } },
      ]),
    )
    const warnings: Array<UnknownKeyWarning> = []
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: server.url,
      maxRetries: 0,
      middleware: [unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })],
    })
    const params = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'hi' }], tools: ownTools }
    await expect(client.messages.create({ ...params, max_tokens: 10 })).rejects.toBeInstanceOf(
      Anthropic.BadRequestError,
    )
    expect((await client.messages.countTokens(params)).input_tokens).toBe(12)
    expect(server.received.map((r) => r.url)).toEqual(['/v1/messages', '/v1/messages/count_tokens'])
    expect(warnings).toEqual([])
  })
})

describe('declarationsOfTools', () => {
  it('reads custom tools only, whatever else the request holds', () => {
    expect(
      declarationsOfTools([
        { name: 'a', input_schema: { type: 'object', properties: { x: {} } } },
        { type: 'custom', name: 'b', input_schema: { type: 'object' } },
        { type: 'bash_20250124', name: 'bash' },
        { type: 'web_search_20250305', name: 'web_search', input_schema: { type: 'object' } },
        { name: 3, input_schema: {} },
        { name: 'no schema' },
        null,
        'text',
      ]).map((d) => d.function.name),
    ).toEqual(['a', 'b'])
    expect(declarationsOfTools(undefined)).toEqual([])
    expect(declarationsOfTools({ length: 1, 0: { name: 'a', input_schema: {} } })).toEqual([])
  })
})
