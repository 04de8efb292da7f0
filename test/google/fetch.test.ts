// unknownKeyAuditFetch as @google/genai's own httpOptions.fetch, the client pointed at a loopback server that
// answers with recorded generateContent responses: a host that keeps its own function declarations hears every
// function call against its request's tools, in generateContent and generateContentStream alike, and in the
// SDK's automatic calling of MCP clients (mcpToTool); the request and the response go on as they came.
import type { Content, FunctionDeclaration, GenerateContentResponse } from '@google/genai'
import { GoogleGenAI, mcpToTool } from '@google/genai'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { formatWarning, fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { declarationsOfRequest, toCallableTool, unknownKeyAuditFetch } from '../../src/google/index.js'
import { splitEvents } from '../../src/google/events.js'
import type { Loopback } from '../support/loopback.js'
import { inTurn, loopback } from '../support/loopback.js'
import { asJson, asStream, declarations, ownDeclarations, turns } from './support.js'

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const model = 'gemini-2.5-flash'

// the host's own loop: it runs its functions itself (here: each answers "ok")
const hostLoop = async (
  next: (contents: Array<Content>) => Promise<Pick<GenerateContentResponse, 'candidates' | 'functionCalls'>>,
): Promise<ReadonlyArray<unknown>> => {
  const contents: Array<Content> = [{ role: 'user', parts: [{ text: 'When is the demo?' }] }]
  const got: Array<unknown> = []
  for (let turn = 0; turn < 6; turn++) {
    const response = await next(contents)
    const said = response.candidates?.[0]?.content
    got.push(said)
    const calls = response.functionCalls
    if (said === undefined || calls === undefined) break
    contents.push(said, {
      role: 'user',
      parts: calls.map((c) => ({
        functionResponse: {
          ...(c.id === undefined ? {} : { id: c.id }),
          name: c.name ?? '',
          response: { output: 'ok' },
        },
      })),
    })
  }
  return got
}

const expectedWarnings = [
  'toolstack: read_file call fc_01 carried undeclared argument key "options.encodng" (declared: "options", "path") (did you mean options.encoding?)',
  'toolstack: write_file call fc_04 carried undeclared argument key "mode" (declared: "content", "path")',
]

const clientWith = (url: string, fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>) =>
  new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: url, fetch } })

describe('unknownKeyAuditFetch as the client’s fetch (a loopback server answering recorded responses)', () => {
  it('generateContent: each function call heard against its request’s declarations, each pair once; the server tools’ parts not heard; the responses unchanged', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w) })
    const ai = clientWith(server.url, audit)
    const got = await hostLoop((contents) =>
      ai.models.generateContent({ model, contents, config: { tools: [{ functionDeclarations: ownDeclarations }] } }),
    )
    expect(got).toEqual(turns().map((t) => t.candidates?.[0]?.content))
    expect(warnings.map(formatWarning)).toEqual(expectedWarnings)
    expect(audit.stats()).toEqual([
      { tool: 'read_file', key: 'options.encodng', calls: 2, firstId: 'fc_01' },
      { tool: 'write_file', key: 'mode', calls: 1, firstId: 'fc_04' },
    ])
    expect(audit.auditedTools()).toEqual(['read_file', 'write_file'])
  })

  it('generateContentStream: each chunk heard from a copy of the stream as it arrives; the same warnings', async () => {
    server = await loopback(inTurn(turns().map(asStream)))
    const warnings: Array<UnknownKeyWarning> = []
    const ai = clientWith(server.url, unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w) }))
    const got = await hostLoop(async (contents) => {
      const parts: Array<NonNullable<Content['parts']>[number]> = []
      for await (const chunk of await ai.models.generateContentStream({
        model,
        contents,
        config: { tools: [{ functionDeclarations: ownDeclarations }] },
      }))
        parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
      const calls = parts.flatMap((p) => (p.functionCall === undefined ? [] : [p.functionCall]))
      return {
        candidates: [{ content: { role: 'model', parts } }],
        functionCalls: calls.length === 0 ? undefined : calls,
      }
    })
    expect(got).toEqual(turns().map((t) => t.candidates?.[0]?.content))
    await vi.waitFor(() => expect(warnings.map(formatWarning)).toEqual(expectedWarnings))
  })

  it('sends the very input and init to fetch, and returns the very response it gave', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const seen: Array<{ input: unknown; init: unknown; response: Response }> = []
    const inner = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const response = await fetch(input, init)
      seen.push({ input, init, response })
      return response
    }
    const audit = unknownKeyAuditFetch({ fetch: inner, onWarn: () => undefined })
    const input = `${server.url}/v1beta/models/${model}:generateContent`
    const init = {
      method: 'POST',
      body: JSON.stringify({ contents: [], tools: [{ functionDeclarations: ownDeclarations }] }),
    }
    const response = await audit(input, init)
    expect(seen[0]?.input).toBe(input)
    expect(seen[0]?.init).toBe(init)
    expect(response).toBe(seen[0]?.response)
    expect(((await response.json()) as { responseId: string }).responseId).toBe('resp-01')
    expect(audit.stats()).toHaveLength(1)
  })

  it('hears only generateContent calls that succeed; an option that is not a function is refused at once', async () => {
    server = await loopback(
      inTurn([
        { json: { error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT' } }, status: 400 },
        { json: { totalTokens: 3 } },
      ]),
    )
    const warnings: Array<UnknownKeyWarning> = []
    const ai = clientWith(server.url, unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w) }))
    const config = { tools: [{ functionDeclarations: ownDeclarations }] }
    await expect(ai.models.generateContent({ model, contents: 'hi', config })).rejects.toThrow(/bad/)
    expect((await ai.models.countTokens({ model, contents: 'hi' })).totalTokens).toBe(3)
    expect(warnings).toEqual([])
    expect(() => unknownKeyAuditFetch({ fetch: 'fetch' as never })).toThrow(
      'unknownKeyAuditFetch: option "fetch" must be a function, got the string "fetch"',
    )
    expect(() => unknownKeyAuditFetch({ onWran: () => undefined } as never)).toThrow(TypeError)
  })
})

describe('the SDK’s automatic function calling', () => {
  // a real MCP server in process, whose zod schema strips the keys it does not declare before the tool runs
  const mcpClient = async (received: Array<unknown>): Promise<Client> => {
    const server = new McpServer({ name: 'files', version: '1.0.0' })
    server.registerTool(
      'read_file',
      {
        description: 'Reads a file',
        inputSchema: {
          path: z.string(),
          options: z.object({ encoding: z.string(), offset: z.number() }).partial().optional(),
        },
      },
      async (args) => {
        received.push(args)
        return { content: [{ type: 'text', text: 'read_file ran' }] }
      },
    )
    server.registerTool(
      'write_file',
      { description: 'Writes a file', inputSchema: { path: z.string(), content: z.string() } },
      async (args) => {
        received.push(args)
        return { content: [{ type: 'text', text: 'write_file ran' }] }
      },
    )
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(a)
    const client = new Client({ name: 'host', version: '1.0.0' })
    await client.connect(b)
    return client
  }

  it('mcpToTool: the SDK calls the MCP tools itself; the fetch hears each call against the declarations mcpToTool made; the tools receive what they would without it', async () => {
    const run = async (audited: boolean) => {
      server = await loopback(inTurn(turns().map(asJson)))
      const warnings: Array<UnknownKeyWarning> = []
      const received: Array<unknown> = []
      const client = await mcpClient(received)
      const ai = audited
        ? clientWith(server.url, unknownKeyAuditFetch({ onWarn: (w) => void warnings.push(w) }))
        : new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: server.url } })
      const response = await ai.models.generateContent({
        model,
        contents: 'When is the demo?',
        config: { tools: [mcpToTool(client)] },
      })
      await client.close()
      const declared = (server.received[0]?.body as { tools: unknown }).tools
      await server.close()
      server = undefined
      return { text: response.text, warnings, received, declared }
    }
    const plain = await run(false)
    const audited = await run(true)
    expect(audited.text).toBe('The demo is on 2 December.')
    expect(audited.received).toEqual(plain.received)
    // the MCP server's zod schema stripped the keys: only the audit heard them
    expect(audited.received[0]).toEqual({ path: 'notes.md', options: { offset: 0 } })
    expect(JSON.stringify(audited.received[0])).not.toContain('encodng')
    expect(audited.warnings.map(formatWarning)).toEqual(expectedWarnings)
    expect(declarationsOfRequest(audited.declared).map((d) => d.function.name)).toEqual(['read_file', 'write_file'])
  })

  it('a stack as a CallableTool beside the audited fetch: one memory, each pair said once by the layer that heard it first', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const stack = pipe(
      fromTools(declarations.map((declaration) => ({ declaration, run: () => 'ran' }))),
      withUnknownKeyAudit(audit),
    )
    const ai = clientWith(server.url, unknownKeyAuditFetch(audit))
    const response = await ai.models.generateContent({
      model,
      contents: 'When is the demo?',
      config: { tools: [toCallableTool(stack)] },
    })
    expect(response.text).toBe('The demo is on 2 December.')
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.via])).toEqual([
      ['read_file', ['options.encodng'], 'google-fetch'],
      ['write_file', ['mode'], 'google-fetch'],
    ])
    // both layers heard each call: the fetch first, then the stack
    expect(stack.stats()).toEqual([
      { tool: 'read_file', key: 'options.encodng', calls: 4, firstId: 'fc_01' },
      { tool: 'write_file', key: 'mode', calls: 2, firstId: 'fc_04' },
    ])
  })
})

describe('declarationsOfRequest', () => {
  it('reads function declarations only: parametersJsonSchema first, then parameters', () => {
    const schema = { type: 'object', properties: { a: {} } }
    const ds: Array<FunctionDeclaration | Record<string, unknown>> = [
      { name: 'both', parametersJsonSchema: schema, parameters: { type: 'OBJECT', properties: { b: {} } } },
      { name: 'openapi', parameters: { type: 'OBJECT', properties: { b: {} } } },
      { name: 'none' },
      { name: 7, parametersJsonSchema: schema },
    ]
    expect(
      declarationsOfRequest([
        { functionDeclarations: ds },
        { googleSearch: {} },
        null,
        { functionDeclarations: 'x' },
      ]).map((d) => [d.function.name, d.function.parameters]),
    ).toEqual([
      ['both', schema],
      ['openapi', { type: 'OBJECT', properties: { b: {} } }],
    ])
    expect(declarationsOfRequest('tools')).toEqual([])
  })
})

describe('splitEvents, however the stream is cut', () => {
  it('gives every event’s data once, in order, whatever the separators and wherever the chunks end', () => {
    const payload = fc.json().filter((j) => !/[\r\n]/.test(j))
    fc.assert(
      fc.property(
        fc.array(fc.tuple(payload, fc.constantFrom('\n\n', '\r\n\r\n', '\r\r')), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (events, cuts) => {
          const text = events.map(([d, sep]) => `data: ${d}${sep}`).join('')
          const points = [...new Set(cuts.map((c) => (text.length === 0 ? 0 : c % text.length)))].sort((a, b) => a - b)
          const chunks = [0, ...points].map((p, i, all) => text.slice(p, all[i + 1] ?? text.length))
          const out: Array<string> = []
          let buffer = ''
          for (const chunk of chunks) {
            const [data, rest] = splitEvents(buffer + chunk)
            out.push(...data)
            buffer = rest
          }
          expect(out).toEqual(events.map(([d]) => d.trim()))
          expect(buffer).toBe('')
        },
      ),
    )
  })
})
