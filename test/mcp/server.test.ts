// toMcpServer, served to a real SDK Client: in process, over real upstream servers,
// and over Streamable HTTP with a session each.
import { request } from 'node:http'
import { describe, expect, it } from 'vitest'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { ElicitRequest } from '@modelcontextprotocol/sdk/types.js'
import type { PermissionRequest, Provider, UnknownKeyWarning } from '../../src/index.js'
import type { ContentBlock } from '../../src/kernel/model.js'
import { fromTools, newQuestionQueue, registry, withPolicy, withReasons, withUnknownKeyAudit } from '../../src/index.js'
import type { McpSession } from '../../src/mcp/index.js'
import {
  answerOf,
  elicitationFor,
  fromMcpClient,
  serveHttp,
  toCallToolResult,
  toInputSchema,
  toMcpServer,
  toMcpTool,
} from '../../src/mcp/index.js'
import { EVERYTHING_SERVER, cleanUpAfterEach, linked, spawnServer } from './fixtures.js'

cleanUpAfterEach()

const INFO = { name: 'toolstack-test-gateway', version: '0.0.0' }

const echoTools = (received: Array<unknown>) =>
  fromTools([
    {
      declaration: {
        type: 'function',
        function: {
          name: 'read',
          description: 'reads',
          parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } },
        },
      },
      run: (args) => {
        received.push(args)
        return TE.right(`read ${String(args['path'])}`)
      },
    },
    {
      declaration: {
        type: 'function',
        function: { name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      },
      run: () => TE.left('the disk is full'),
    },
  ])

const stackFor = (received: Array<unknown>, warnings: Array<UnknownKeyWarning>) => (session: McpSession) =>
  pipe(
    registry([{ prefix: 'fs', provider: echoTools(received) }]),
    withReasons(),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w), onDiagnostic: () => undefined }),
    withPolicy({
      rules: [
        { tool: 'fs_read', decision: 'allow' },
        { tool: 'fs_write', decision: 'ask' },
      ],
      onAsk: session.askHuman,
      questions: newQuestionQueue(),
      onDiagnostic: () => undefined,
    }),
  )

const elicitingClient = (answers: Array<unknown>, asked: Array<ElicitRequest['params']>): Client => {
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params)
    return (answers.shift() ?? { action: 'decline' }) as never
  })
  return client
}

describe('toInputSchema and toCallToolResult', () => {
  it('makes every schema one an SDK client accepts', () => {
    expect(toInputSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    })
    expect(toInputSchema({ properties: { a: true, b: false }, required: 'a' })).toEqual({
      type: 'object',
      properties: { a: {}, b: { not: {} } },
    })
    expect(toInputSchema([])).toEqual({ type: 'object' })
  })

  it("keeps an MCP tool's own blocks, says a block the SDK would refuse in words", () => {
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' }
    const r = toCallToolResult({
      role: 'tool',
      tool_call_id: '1',
      content: 'x',
      mcp_content: [image, { type: 'image', data: 'AAAA' }],
      structured_content: { a: 1 },
    })
    expect(r.content[0]).toBe(image)
    expect(r.content[1]).toEqual({ type: 'text', text: '[image: no MIME type, 3 bytes]' })
    expect(r.structuredContent).toEqual({ a: 1 })
  })
})

describe('toMcpTool, toCallToolResult, elicitationFor and answerOf', () => {
  it('toMcpTool: the name, the description when there is one, the parameters as an inputSchema', () => {
    expect(
      toMcpTool({
        type: 'function',
        function: { name: 'read', description: 'reads', parameters: { properties: { p: true } } },
      }),
    ).toEqual({
      name: 'read',
      description: 'reads',
      inputSchema: { type: 'object', properties: { p: {} } },
    })
    expect(toMcpTool({ type: 'function', function: { name: 'x' } })).toEqual({
      name: 'x',
      inputSchema: { type: 'object' },
    })
  })

  it('toInputSchema: keeps required only as a list of names, and its own type is always object', () => {
    expect(toInputSchema({ type: 'string', required: ['a', 1] })).toEqual({ type: 'object' })
    expect(toInputSchema({ properties: 'a' })).toEqual({ type: 'object' })
    expect(toInputSchema({ properties: { a: null, b: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { a: {}, b: { type: 'string' } },
    })
  })

  it('toCallToolResult: the text when there are no blocks; is_error and structured content kept, and only an object as structured content', () => {
    expect(toCallToolResult({ role: 'tool', tool_call_id: '1', content: 'plain' })).toEqual({
      content: [{ type: 'text', text: 'plain' }],
    })
    expect(toCallToolResult({ role: 'tool', tool_call_id: '1', content: 'plain', mcp_content: [] })).toEqual({
      content: [{ type: 'text', text: 'plain' }],
    })
    expect(
      toCallToolResult({ role: 'tool', tool_call_id: '1', content: 'no', is_error: false, structured_content: [1] }),
    ).toEqual({ content: [{ type: 'text', text: 'no' }] })
  })

  it('toCallToolResult: serves each kind of block the SDK accepts as it came, and says any other in words', () => {
    const ok: ReadonlyArray<ContentBlock> = [
      { type: 'text', text: 'a' },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///a', name: 'a' },
      { type: 'resource', resource: { uri: 'file:///a', text: 'hi' } },
      { type: 'resource', resource: { uri: 'file:///b', blob: 'AAAA' } },
    ]
    const served = toCallToolResult({ role: 'tool', tool_call_id: '1', content: 'x', mcp_content: ok }).content
    ok.forEach((b, i) => expect(served[i]).toBe(b))
    const odd: ReadonlyArray<ContentBlock> = [
      { type: 'text', text: 1 },
      { type: 'audio', data: 'AAAA' },
      { type: 'image', mimeType: 'image/png' },
      { type: 'resource_link', uri: 'file:///a' },
      { type: 'resource_link', name: 'a' },
      { type: 'resource', resource: { uri: 'file:///a' } },
      { type: 'resource', resource: { text: 'hi' } },
      { type: 'resource', resource: 'file:///a' },
      { type: 'video', data: 'AAAA' },
    ]
    expect(toCallToolResult({ role: 'tool', tool_call_id: '1', content: 'x', mcp_content: odd }).content).toEqual([
      { type: 'text', text: '[text block without text]' },
      { type: 'text', text: '[audio: no MIME type, 3 bytes]' },
      { type: 'text', text: '[image: image/png, no data]' },
      { type: 'text', text: '[resource_link: no MIME type, file:///a]' },
      { type: 'text', text: '[resource_link: no MIME type, no URI, "a"]' },
      { type: 'text', text: '[resource: no MIME type, file:///a, no contents]' },
      { type: 'text', text: '[resource: no MIME type, no URI, 2 characters]' },
      { type: 'text', text: '[resource: unreadable]' },
      { type: 'text', text: '[video block]' },
    ])
  })

  const request = (args: Record<string, unknown>, paths: ReadonlyArray<string>): PermissionRequest => ({
    kind: 'permission',
    tool: 'fs_write',
    arguments: args,
    call: { id: '1', function: { name: 'fs_write', arguments: JSON.stringify(args) } },
    rule: undefined,
    why: 'no-match',
    paths,
    suggestedRule: { tool: 'fs_write', decision: 'allow', under: '/w' },
  })

  it("elicitationFor: asks about the tool and its paths, shows the arguments, then the model's reason last, and offers the four answers", () => {
    const form = elicitationFor(request({ path: '/w/a', reason: 'to save the notes' }, ['/w/a', '/w/b']))
    expect(form.message).toBe(
      [
        'May the model call fs_write on 2 paths?',
        'Arguments:',
        '  "path": "/w/a"',
        '  "reason": (shown last)',
        '"Always" remembers: allow "fs_write" under /w, for this session.',
        `The model's reason, in its own words (not checked): "to save the notes"`,
      ].join('\n'),
    )
    expect(form.requestedSchema).toEqual({
      type: 'object',
      properties: {
        action: {
          type: 'string',
          title: 'Your answer',
          enum: ['allow-once', 'deny-once', 'always-allow', 'always-deny'],
          enumNames: [
            'Allow once',
            'Deny once',
            'Always allow (allow "fs_write" under /w)',
            'Always deny (deny "fs_write" under /w)',
          ],
        },
      },
      required: ['action'],
    })
  })

  it('elicitationFor: offers only "once" when the request offers no rule to remember', () => {
    const form = elicitationFor({ ...request({ path: 'rel' }, []), suggestedRule: undefined })
    expect(form.message).toContain('"Always" is not offered')
    expect(form.requestedSchema.properties['action']).toMatchObject({
      enum: ['allow-once', 'deny-once'],
      enumNames: ['Allow once', 'Deny once'],
    })
  })

  it('elicitationFor: leaves out the paths when there are none, shows any reason as its JSON, and cuts a long value to 200 characters, saying how many were left out', () => {
    const bare = elicitationFor(request({ reason: '' }, [])).message.split('\n')
    expect(bare).toEqual([
      'May the model call fs_write?',
      'Arguments:',
      '  "reason": (shown last)',
      '"Always" remembers: allow "fs_write" under /w, for this session.',
      `The model's reason, in its own words (not checked): ""`,
    ])
    expect(elicitationFor(request({ reason: 7 }, [])).message).toContain('(not checked): 7')
    expect(elicitationFor(request({}, [])).message).not.toContain('reason')
    const long = elicitationFor(request({ text: 'x'.repeat(5000) }, [])).message.split('\n')[2] ?? ''
    expect(long).toBe(`  "text": "${'x'.repeat(199)}… (4802 more characters not shown)`)
  })

  it("answerOf: an accepted form's action; anything declined, dismissed or unreadable is deny-once", () => {
    for (const action of ['allow-once', 'deny-once', 'always-allow', 'always-deny'] as const) {
      expect(answerOf({ action: 'accept', content: { action } })).toEqual({ action })
    }
    for (const result of [
      { action: 'decline', content: { action: 'allow-once' } },
      { action: 'cancel' },
      { action: 'accept', content: { action: 'allow-twice' } },
      { action: 'accept', content: 'allow-once' },
      { action: 'accept' },
      null,
    ]) {
      expect(answerOf(result)).toEqual({ action: 'deny-once' })
    }
  })
})

describe('toMcpServer, in process', () => {
  it("lists the stack's tools; a call reaches the stack with its keys as sent, and the audit says the misspelled one", async () => {
    const received: Array<unknown> = []
    const warnings: Array<UnknownKeyWarning> = []
    const { client, close } = await linked(toMcpServer(stackFor(received, warnings), INFO))
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toEqual(['fs_read', 'fs_write'])
      expect(Object.keys(tools[0]?.inputSchema.properties ?? {})).toEqual(['path', 'offset', 'reason'])
      const r = await client.callTool({ name: 'fs_read', arguments: { path: '/a', ffset: 3, reason: 'checking' } })
      expect(r.content).toEqual([{ type: 'text', text: 'read /a' }])
      expect(r.isError).toBeUndefined()
      expect(warnings.map((w) => [w.tool, w.unknownKeys, w.suggestions])).toEqual([
        ['fs_read', ['ffset'], [{ key: 'ffset', didYouMean: 'offset' }]],
      ])
      // reason never reaches the tool; the misspelled key does, as the host sent it
      expect(received).toEqual([{ path: '/a', ffset: 3 }])
    } finally {
      await close()
    }
  })

  it('a host without elicitation gets the refusal the policy gives when no one can be asked', async () => {
    const { client, close } = await linked(toMcpServer(stackFor([], []), INFO))
    try {
      const r = await client.callTool({ name: 'fs_write', arguments: { path: '/a' } })
      expect(r.isError).toBe(true)
      expect(JSON.stringify(r.content)).toMatch(/needs the user's permission, and no one is available to give it/)
    } finally {
      await close()
    }
  })

  it("asks the host's human through elicitation: allow-once, then always-allow leaves a grant the next call uses", async () => {
    const asked: Array<ElicitRequest['params']> = []
    const answers: Array<unknown> = [
      { action: 'accept', content: { action: 'allow-once' } },
      { action: 'accept', content: { action: 'always-allow' } },
    ]
    const server = toMcpServer(stackFor([], []), INFO)
    const client = elicitingClient(answers, asked)
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
    const [c, s] = InMemoryTransport.createLinkedPair()
    await server.connect(s)
    await client.connect(c)
    try {
      const call = (path: string) =>
        client.callTool({ name: 'fs_write', arguments: { path, reason: 'save the summary' } })
      expect((await call('/w/a')).content).toEqual([{ type: 'text', text: 'the disk is full' }])
      expect(asked).toHaveLength(1)
      expect(asked[0]?.message).toMatch(
        /^May the model call fs_write on \/w\/a\?\n[^]*\nThe model's reason, in its own words \(not checked\): "save the summary"$/,
      )
      await call('/w/b')
      expect(asked).toHaveLength(2)
      await call('/w/c') // under the grant "always" left: not asked
      expect(asked).toHaveLength(2)
      answers.push({ action: 'decline' })
      const declined = await call('/elsewhere/x')
      expect(declined.isError).toBe(true)
      expect(JSON.stringify(declined.content)).toMatch(/The user declined this call/)
    } finally {
      await client.close()
      await server.close()
    }
  })

  it('a failed listing and a failed batch are JSON-RPC errors the host can show', async () => {
    const failing: Provider<string> = {
      toolsForLlm: TE.left('the upstream is down'),
      executeToolCalls: () => TE.left('the upstream is down'),
    }
    const { client, close } = await linked(toMcpServer(failing, INFO))
    try {
      await expect(client.listTools()).rejects.toThrow(/the tools could not be listed: the upstream is down/)
      await expect(client.callTool({ name: 'x', arguments: {} })).rejects.toThrow(
        /the call to x failed: the upstream is down/,
      )
    } finally {
      await close()
    }
  })

  it("tells the host when an upstream's tools changed, and stops when it closes", async () => {
    const listeners = new Set<() => void>()
    const server = toMcpServer(fromTools([]), INFO, {
      toolsChanged: (l) => {
        listeners.add(l)
        return () => listeners.delete(l)
      },
    })
    const { client, close } = await linked(server)
    const told: Array<string> = []
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void told.push(n.method))
    for (const l of listeners) l()
    await new Promise((r) => setTimeout(r, 50))
    expect(told).toEqual(['notifications/tools/list_changed'])
    await close()
    expect(listeners.size).toBe(0)
  })

  it("serves a real upstream's image as an image block, unchanged", async () => {
    const everything = await spawnServer({ script: EVERYTHING_SERVER, args: ['stdio'] })
    const { client, close } = await linked(
      toMcpServer(registry([{ prefix: 'ev', provider: fromMcpClient(everything.client) }]), INFO),
    )
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toContain('ev_get-tiny-image')
      const r = await client.callTool({ name: 'ev_get-tiny-image', arguments: {} })
      const blocks = r.content as Array<{ type: string; mimeType?: string; data?: string }>
      expect(blocks.map((b) => b.type)).toEqual(['text', 'image', 'text'])
      expect(blocks[1]?.mimeType).toBe('image/png')
      expect(blocks[1]?.data?.length).toBeGreaterThan(1000)
    } finally {
      await close()
    }
  })
})

describe('serveHttp', () => {
  const connect = async (
    url: string,
    headers: Record<string, string> = {},
    client = new Client({ name: 'host', version: '1' }),
  ) => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
    await client.connect(transport)
    return { client, transport }
  }

  it('gives each session its own stack: the same misspelling is said once per session', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const serving = await serveHttp(() => toMcpServer(stackFor([], warnings), INFO), { port: 0, token: 's3cret' })
    try {
      const auth = { Authorization: 'Bearer s3cret' }
      const a = await connect(serving.url, auth)
      const b = await connect(serving.url, auth)
      expect(serving.sessions()).toBe(2)
      for (const { client } of [a, b, a])
        await client.callTool({ name: 'fs_read', arguments: { path: '/x', ffset: 1 } })
      expect(warnings).toHaveLength(2)
      await a.transport.terminateSession()
      await a.client.close()
      await new Promise((r) => setTimeout(r, 50))
      expect(serving.sessions()).toBe(1)
      await b.client.close()
    } finally {
      await serving.close()
    }
  })

  it('asks the human through elicitation over HTTP too', async () => {
    const serving = await serveHttp(() => toMcpServer(stackFor([], []), INFO), { port: 0 })
    const asked: Array<ElicitRequest['params']> = []
    try {
      const { client } = await connect(
        serving.url,
        {},
        elicitingClient([{ action: 'accept', content: { action: 'allow-once' } }], asked),
      )
      const r = await client.callTool({ name: 'fs_write', arguments: { path: '/w/a' } })
      expect(asked).toHaveLength(1)
      expect(r.content).toEqual([{ type: 'text', text: 'the disk is full' }])
      await client.close()
    } finally {
      await serving.close()
    }
  })

  it('refuses a wrong token, a foreign Origin, a foreign Host, an unknown session, with a clear status', async () => {
    const serving = await serveHttp(() => toMcpServer(fromTools([]), INFO), { port: 0, token: 's3cret' })
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    const post = (headers: Record<string, string>) =>
      fetch(serving.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: init,
      })
    try {
      const wrong = await post({ Authorization: 'Bearer nope' })
      expect(wrong.status).toBe(401)
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer')
      expect((await post({ Authorization: 'Bearer s3cret', Origin: 'http://evil.example' })).status).toBe(403)
      // fetch will not send a forged Host; a DNS-rebinding page's request carries one
      const forged = await new Promise<number>((resolve, reject) => {
        const req = request(
          serving.url,
          {
            method: 'POST',
            headers: { host: 'evil.example:80', authorization: 'Bearer s3cret', 'content-type': 'application/json' },
          },
          (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          },
        )
        req.on('error', reject)
        req.end(init)
      })
      expect(forged).toBe(403)
      const unknown = await post({ Authorization: 'Bearer s3cret', 'mcp-session-id': 'no-such-session' })
      expect(unknown.status).toBe(404)
      expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/no such session/)
      expect((await post({ Authorization: 'Bearer s3cret' })).status).toBe(200)
      expect((await fetch(serving.url.replace('/mcp', '/other'))).status).toBe(404)
    } finally {
      await serving.close()
    }
  })

  it('refuses, with a 400 saying how a session starts, a request without a session that is not a POST of initialize', async () => {
    const serving = await serveHttp(() => toMcpServer(fromTools([]), INFO), { port: 0 })
    const post = (body: string) =>
      fetch(serving.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body,
      })
    const messageOf = async (r: Response) => ((await r.json()) as { error: { message: string } }).error.message
    try {
      const get = await fetch(serving.url)
      expect(get.status).toBe(400)
      expect(await messageOf(get)).toBe('Bad Request: no session; a session starts with a POST of initialize')
      const list = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))
      expect(list.status).toBe(400)
      expect(await messageOf(list)).toBe('Bad Request: no session; a session starts with initialize')
      const garbage = await post('{"jsonrpc":')
      expect(garbage.status).toBe(400)
      expect(await messageOf(garbage)).toBe('Bad Request: the request body is not JSON')
      // a body over 4 MiB is read to its end and answered 413: no session opens, and the server goes on serving
      const padded = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'x'.repeat(4 * 1024 * 1024), version: '1' },
        },
      })
      const huge = await post(padded)
      expect(huge.status).toBe(413)
      expect(await messageOf(huge)).toBe('Payload Too Large: the request body is larger than 4 MiB')
      expect(serving.sessions()).toBe(0)
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      })
      expect((await post(init)).status).toBe(200)
      expect(serving.sessions()).toBe(1)
    } finally {
      await serving.close()
    }
  })

  it('serves at the path given, shows an IPv6 host in brackets, and accepts the Hosts and Origins it is told to', async () => {
    const serving = await serveHttp(() => toMcpServer(fromTools([]), INFO), {
      port: 0,
      host: '::1',
      path: '/tools',
      allowedHosts: ['tools.internal:443'],
      allowedOrigins: ['https://app.example'],
    }).catch(() => undefined)
    if (serving === undefined) return // no IPv6 loopback on this machine
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          serving.url,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          },
          (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          },
        )
        req.on('error', reject)
        req.end(init)
      })
    try {
      const port = new URL(serving.url).port
      expect(serving.url).toBe(`http://[::1]:${port}/tools`)
      expect(await status({})).toBe(200)
      expect(await status({ host: 'tools.internal:443' })).toBe(200)
      expect(await status({ host: `localhost:${port}`, origin: 'https://app.example' })).toBe(200)
      expect(await status({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200)
      expect(await status({ host: 'other.internal:443' })).toBe(403)
      expect(await status({ origin: 'https://other.example' })).toBe(403)
    } finally {
      await serving.close()
    }
  })

  it('a port in use is a clear error, and nothing is left listening', async () => {
    const first = await serveHttp(() => toMcpServer(fromTools([]), INFO), { port: 0 })
    const port = Number(new URL(first.url).port)
    try {
      await expect(serveHttp(() => toMcpServer(fromTools([]), INFO), { port })).rejects.toThrow(
        `port ${port} on 127.0.0.1 is already in use`,
      )
    } finally {
      await first.close()
    }
  })

  it('closes a session left idle', async () => {
    const serving = await serveHttp(() => toMcpServer(fromTools([]), INFO), { port: 0, idleMs: 1000 })
    try {
      const { client } = await connect(serving.url)
      expect(serving.sessions()).toBe(1)
      await new Promise((r) => setTimeout(r, 2600))
      expect(serving.sessions()).toBe(0)
      await client.close()
    } finally {
      await serving.close()
    }
  })
})
