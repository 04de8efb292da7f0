// toMcpServer's exact answers, to a real SDK Client in process: the handshake, each
// tools/list and tools/call shape, each error message, the session and its askHuman
// (the elicitation sent and each answer), and list_changed; with the pure steps exactly.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { ClientCapabilities, ElicitRequest, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import {
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type {
  PermissionAnswer,
  PermissionRequest,
  Provider,
  ToolCall,
  ToolDeclaration,
  ToolResult,
} from '../../src/index.js'
import { fromTools, registry } from '../../src/index.js'
import type { McpSession } from '../../src/mcp/index.js'
import { toCallToolResult, toInputSchema, toMcpServer, toMcpTool } from '../../src/mcp/index.js'

const INFO = { name: 'exact-server', version: '9.8.7' }

interface Sent {
  readonly message: JSONRPCMessage
  readonly options: TransportSendOptions | undefined
}

/** Records what a transport sends, with the options it sends it with. */
const spied = (t: Transport, sent: Array<Sent>): Transport => {
  const send = t.send.bind(t)
  t.send = (message, options) => {
    sent.push({ message, options })
    return send(message, options)
  }
  return t
}

interface Wired {
  readonly client: Client
  /** What the server sent, and what the client sent. */
  readonly fromServer: Array<Sent>
  readonly fromClient: Array<Sent>
  readonly close: () => Promise<void>
}

const wire = async (
  server: Server,
  capabilities: ClientCapabilities = {},
  client = new Client({ name: 'host', version: '1' }, { capabilities }),
): Promise<Wired> => {
  const [c, s] = InMemoryTransport.createLinkedPair()
  const fromServer: Array<Sent> = []
  const fromClient: Array<Sent> = []
  await server.connect(spied(s, fromServer))
  await client.connect(spied(c, fromClient))
  return {
    client,
    fromServer,
    fromClient,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}

const decl = (name: string, extra: Record<string, unknown> = {}): ToolDeclaration =>
  ({ type: 'function', function: { name, ...extra } }) as ToolDeclaration

/** A provider that records every listing and batch, and answers each call with `answer`. */
const recording = (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer: (call: ToolCall) => ReadonlyArray<ToolResult> = (call) => [
    { role: 'tool', tool_call_id: call.id, content: 'ok' },
  ],
) => {
  const log: Array<string> = []
  const calls: Array<ToolCall> = []
  const provider: Provider<string> = {
    toolsForLlm: () => {
      log.push('list')
      return Promise.resolve({ _tag: 'Right', right: declarations })
    },
    executeToolCalls: (batch) => () => {
      log.push('call')
      calls.push(...batch)
      const first = batch[0]
      return Promise.resolve({ _tag: 'Right', right: first === undefined ? [] : answer(first) })
    },
  }
  return { provider, log, calls }
}

// the SDK's client puts its "MCP error <code>: " before the message the server sent,
// which the server's McpError had already begun with: the host sees it twice
const mcpError = async (p: Promise<unknown>): Promise<{ code: number; message: string }> => {
  const e: unknown = await p.then(
    () => undefined,
    (x: unknown) => x,
  )
  expect(e).toBeInstanceOf(McpError)
  const { code, message } = e as McpError
  return { code, message }
}

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms))

describe('the pure steps, exactly: no key is left holding undefined', () => {
  it('toInputSchema: properties and required appear only when there are some to keep', () => {
    expect(toInputSchema({ type: 'object' })).toStrictEqual({ type: 'object' })
    expect(toInputSchema({ description: 'd', properties: 7, required: [1] })).toStrictEqual({
      description: 'd',
      type: 'object',
    })
    expect(toInputSchema({ properties: { a: false, b: true, c: { type: 'string' } }, required: ['a'] })).toStrictEqual({
      properties: { a: { not: {} }, b: {}, c: { type: 'string' } },
      required: ['a'],
      type: 'object',
    })
    expect(toInputSchema({ required: [] })).toStrictEqual({ required: [], type: 'object' })
    expect(toInputSchema({ properties: {} })).toStrictEqual({ properties: {}, type: 'object' })
  })

  it('toInputSchema: whatever the parameters, an object schema whose properties are objects and whose required is a list of names', () => {
    fc.assert(
      fc.property(fc.anything(), (u) => {
        const s = toInputSchema(u)
        expect(s.type).toBe('object')
        // the keys it adds never hold undefined (the others are the declaration's own)
        if ('properties' in s) expect(typeof s['properties']).toBe('object')
        if ('required' in s) expect(s['required']).not.toBeUndefined()
        const props = s['properties']
        if (props !== undefined)
          for (const p of Object.values(props as object))
            expect(typeof p === 'object' && p !== null && !Array.isArray(p)).toBe(true)
        const req = s['required']
        if (req !== undefined) expect(Array.isArray(req) && req.every((r) => typeof r === 'string')).toBe(true)
      }),
    )
  })

  it('toMcpTool: no description key without a string description', () => {
    expect(toMcpTool(decl('a'))).toStrictEqual({ name: 'a', inputSchema: { type: 'object' } })
    expect(toMcpTool(decl('b', { description: 5, parameters: 'x' }))).toStrictEqual({
      name: 'b',
      inputSchema: { type: 'object' },
    })
    expect(toMcpTool(decl('c', { description: '' }))).toStrictEqual({
      name: 'c',
      description: '',
      inputSchema: { type: 'object' },
    })
  })

  it('toCallToolResult: isError and structuredContent only when they hold; an embedded resource that is null is said in words', () => {
    expect(toCallToolResult({ role: 'tool', tool_call_id: '1', content: 't' })).toStrictEqual({
      content: [{ type: 'text', text: 't' }],
    })
    expect(
      toCallToolResult({ role: 'tool', tool_call_id: '1', content: 't', is_error: true, structured_content: { n: 1 } }),
    ).toStrictEqual({
      content: [{ type: 'text', text: 't' }],
      structuredContent: { n: 1 },
      isError: true,
    })
    expect(
      toCallToolResult({
        role: 'tool',
        tool_call_id: '1',
        content: 't',
        mcp_content: [{ type: 'resource', resource: null }],
      }),
    ).toStrictEqual({
      content: [{ type: 'text', text: '[resource: unreadable]' }],
    })
  })
})

describe('toMcpServer: the handshake', () => {
  it('says its name and version, tools with listChanged, and no instructions unless given', async () => {
    const { client, close } = await wire(toMcpServer(fromTools([]), INFO))
    try {
      expect(client.getServerVersion()).toStrictEqual(INFO)
      expect(client.getServerCapabilities()).toStrictEqual({ tools: { listChanged: true } })
      expect(client.getInstructions()).toBeUndefined()
    } finally {
      await close()
    }
  })

  it('passes the instructions it is given', async () => {
    const { client, close } = await wire(toMcpServer(fromTools([]), INFO, { instructions: 'Use fs_read first.' }))
    try {
      expect(client.getInstructions()).toBe('Use fs_read first.')
    } finally {
      await close()
    }
  })
})

describe('toMcpServer: tools/list', () => {
  it('answers each declaration shape exactly', async () => {
    const { provider } = recording([
      decl('full', {
        description: 'does it',
        parameters: { type: 'object', properties: { p: { type: 'string' }, q: false }, required: ['p'] },
      }),
      decl('bare'),
      decl('odd', { description: 3, parameters: { type: 'string', required: 'p' } }),
      decl('list', { parameters: [1, 2] }),
    ])
    const { client, close } = await wire(toMcpServer(provider, INFO))
    try {
      expect(await client.listTools()).toStrictEqual({
        tools: [
          {
            name: 'full',
            description: 'does it',
            inputSchema: { type: 'object', properties: { p: { type: 'string' }, q: { not: {} } }, required: ['p'] },
          },
          { name: 'bare', inputSchema: { type: 'object' } },
          { name: 'odd', inputSchema: { type: 'object' } },
          { name: 'list', inputSchema: { type: 'object' } },
        ],
      })
    } finally {
      await close()
    }
  })

  it('a failed listing is an InternalError saying why: a string, a message, a registry error, anything else', async () => {
    const failing = (left: unknown): Provider<unknown> => ({
      toolsForLlm: TE.left(left),
      executeToolCalls: () => TE.left(left),
    })
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      ['the upstream is down', 'the upstream is down'],
      [{ message: 'no route' }, 'no route'],
      [{ message: 7 }, '{"message":7}'],
      [42, '42'],
      [
        { _tag: 'ListingUnreadable', prefix: 'fs', problem: 'a tool without a name' },
        'registry: the provider under prefix "fs" listed tools the registry cannot publish: a tool without a name',
      ],
    ]
    for (const [left, said] of cases) {
      const { client, close } = await wire(toMcpServer(failing(left), INFO))
      try {
        expect(await mcpError(client.listTools())).toStrictEqual({
          code: ErrorCode.InternalError,
          message: `MCP error -32603: MCP error -32603: the tools could not be listed: ${said}`,
        })
        expect(await mcpError(client.callTool({ name: 'fs_x', arguments: {} }))).toStrictEqual({
          code: ErrorCode.InternalError,
          message: `MCP error -32603: MCP error -32603: the call to fs_x failed: ${said}`,
        })
      } finally {
        await close()
      }
    }
  })

  it("a registry whose names clash says so, in the registry's own words", async () => {
    const one = fromTools([{ declaration: decl('b_c'), run: () => TE.right('1') }])
    const two = fromTools([{ declaration: decl('c'), run: () => TE.right('2') }])
    const { client, close } = await wire(
      toMcpServer(
        registry([
          { prefix: 'a', provider: one },
          { prefix: 'a_b', provider: two },
        ]),
        INFO,
      ),
    )
    try {
      expect((await mcpError(client.listTools())).message).toBe(
        'MCP error -32603: MCP error -32603: the tools could not be listed: registry: tool "b_c" of the provider under prefix "a" would be published as "a_b_c", but calls to that name route to the provider under prefix "a_b"; rename the tool or choose prefixes whose namespaces do not nest',
      )
    } finally {
      await close()
    }
  })
})

describe('toMcpServer: tools/call', () => {
  it('lists once before the first call when the host has not, and never again', async () => {
    const { provider, log } = recording([decl('t')])
    const { client, close } = await wire(toMcpServer(provider, INFO))
    try {
      await client.callTool({ name: 't', arguments: {} })
      await client.callTool({ name: 't', arguments: {} })
      expect(log).toStrictEqual(['list', 'call', 'call'])
      await client.listTools()
      await client.callTool({ name: 't', arguments: {} })
      expect(log).toStrictEqual(['list', 'call', 'call', 'list', 'call'])
    } finally {
      await close()
    }
  })

  it('two sessions whose clients number their requests alike still give their calls different ids', async () => {
    const { provider, calls } = recording([decl('t')])
    const one = await wire(toMcpServer(provider, INFO))
    const two = await wire(toMcpServer(provider, INFO))
    try {
      await one.client.callTool({ name: 't', arguments: {} })
      await two.client.callTool({ name: 't', arguments: {} })
      const requests = [one, two].map((w) =>
        w.fromClient.flatMap(({ message }) =>
          'method' in message && message.method === 'tools/call' && 'id' in message ? [message.id] : [],
        ),
      )
      expect(requests[0]).toEqual(requests[1])
      expect(new Set(calls.map((c) => c.id)).size).toBe(2)
    } finally {
      await one.close()
      await two.close()
    }
  })

  it('a call after a listing does not list again', async () => {
    const { provider, log } = recording([decl('t')])
    const { client, close } = await wire(toMcpServer(provider, INFO))
    try {
      await client.listTools()
      await client.callTool({ name: 't', arguments: {} })
      expect(log).toStrictEqual(['list', 'call'])
    } finally {
      await close()
    }
  })

  it('a call reaches the provider alone, with the arguments as sent ({} when none), under an id of its own made of the JSON-RPC id, with its host context', async () => {
    const { provider, calls } = recording([decl('t')])
    const { client, fromClient, close } = await wire(toMcpServer(provider, INFO))
    try {
      await client.callTool({ name: 't', arguments: { a: [1, { b: null }], 'odd key': '' } })
      await client.callTool({ name: 't' })
      const ids = fromClient.flatMap(({ message }) =>
        'method' in message && message.method === 'tools/call' && 'id' in message ? [message.id] : [],
      )
      expect(ids).toHaveLength(2)
      // no progress token was sent, so no progress goes back
      const context = {
        signal: expect.any(AbortSignal),
        requestHost: expect.any(Function),
        hostCapabilities: {},
        session: expect.any(Object),
      }
      // ids number the process's calls: the first here is whatever number came next
      const first = Number(String(calls[0]?.id).split('_').at(-1))
      expect(calls).toStrictEqual([
        {
          id: `mcp_${String(ids[0])}_${first}`,
          type: 'function',
          function: { name: 't', arguments: { a: [1, { b: null }], 'odd key': '' } },
          mcp_context: context,
        },
        {
          id: `mcp_${String(ids[1])}_${first + 1}`,
          type: 'function',
          function: { name: 't', arguments: {} },
          mcp_context: context,
        },
      ])
    } finally {
      await close()
    }
  })

  it('answers each result exactly: text, isError, structured content, the blocks', async () => {
    const results: Record<string, ToolResult> = {
      plain: { role: 'tool', tool_call_id: 'x', content: 'fine' },
      failed: { role: 'tool', tool_call_id: 'x', content: 'no', is_error: true },
      notFailed: { role: 'tool', tool_call_id: 'x', content: 'yes', is_error: false, structured_content: 'str' },
      structured: { role: 'tool', tool_call_id: 'x', content: '{"n":1}', structured_content: { n: 1 } },
      blocks: {
        role: 'tool',
        tool_call_id: 'x',
        content: 'ignored',
        mcp_content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'video' }],
      },
    }
    const { provider } = recording([], (call) => [results[call.function.name] as ToolResult])
    const { client, close } = await wire(toMcpServer(provider, INFO))
    try {
      const call = (name: string) => client.callTool({ name, arguments: {} })
      expect(await call('plain')).toStrictEqual({ content: [{ type: 'text', text: 'fine' }] })
      expect(await call('failed')).toStrictEqual({ content: [{ type: 'text', text: 'no' }], isError: true })
      expect(await call('notFailed')).toStrictEqual({ content: [{ type: 'text', text: 'yes' }] })
      expect(await call('structured')).toStrictEqual({
        content: [{ type: 'text', text: '{"n":1}' }],
        structuredContent: { n: 1 },
      })
      expect(await call('blocks')).toStrictEqual({
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: '[video block]' },
        ],
      })
    } finally {
      await close()
    }
  })

  it('a provider that answers no result is an error result saying so', async () => {
    const { provider } = recording([decl('t')], () => [])
    const { client, close } = await wire(toMcpServer(provider, INFO))
    try {
      expect(await client.callTool({ name: 't', arguments: {} })).toStrictEqual({
        content: [{ type: 'text', text: 'the tool provider returned no result for this call' }],
        isError: true,
      })
    } finally {
      await close()
    }
  })
})

// a stack per session that asks the host's human about every call through askHuman,
// and answers with what it was told
const askingStack =
  (sessions: Array<McpSession>, asked: Array<PermissionRequest>) =>
  (session: McpSession): Provider<string> => {
    sessions.push(session)
    return {
      toolsForLlm: TE.right([decl('fs_write')]),
      executeToolCalls: (batch) => async () => {
        const call = batch[0] as ToolCall
        const request: PermissionRequest = {
          kind: 'permission',
          tool: call.function.name,
          arguments: call.function.arguments as Record<string, unknown>,
          call,
          rule: undefined,
          why: 'no-match',
          paths: ['/w/a'],
          suggestedRule: { tool: 'fs_write', decision: 'allow', under: '/w' },
        }
        asked.push(request)
        if (session.askHuman === undefined)
          return {
            _tag: 'Right',
            right: [{ role: 'tool', tool_call_id: call.id, content: 'no one to ask', is_error: true }],
          }
        try {
          const answer: PermissionAnswer = await Promise.resolve(session.askHuman(request) as Promise<PermissionAnswer>)
          return { _tag: 'Right', right: [{ role: 'tool', tool_call_id: call.id, content: JSON.stringify(answer) }] }
        } catch (e) {
          return {
            _tag: 'Right',
            right: [
              {
                role: 'tool',
                tool_call_id: call.id,
                content: `asking failed: ${(e as Error).message}`,
                is_error: true,
              },
            ],
          }
        }
      },
    }
  }

const host = (answer: (params: ElicitRequest['params']) => unknown, seen: Array<ElicitRequest['params']>): Client => {
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.push(req.params)
    return (await answer(req.params)) as never
  })
  return client
}

describe('toMcpServer: the session and its askHuman', () => {
  it("builds the stack once, after initialize, with the host's capabilities and no askHuman without elicitation", async () => {
    const sessions: Array<McpSession> = []
    const server = toMcpServer(askingStack(sessions, []), INFO)
    expect(sessions).toHaveLength(0)
    const { client, close } = await wire(server, { roots: { listChanged: true } })
    try {
      await client.listTools()
      expect(await client.callTool({ name: 'fs_write', arguments: {} })).toStrictEqual({
        content: [{ type: 'text', text: 'no one to ask' }],
        isError: true,
      })
      await client.callTool({ name: 'fs_write', arguments: {} })
      expect(sessions).toStrictEqual([{ clientCapabilities: { roots: { listChanged: true } }, askHuman: undefined }])
    } finally {
      await close()
    }
  })

  it('a host that lists before it initializes gets the list, from a stack with no capabilities and no askHuman', async () => {
    const sessions: Array<McpSession> = []
    const server = toMcpServer(askingStack(sessions, []), INFO)
    const [c, s] = InMemoryTransport.createLinkedPair()
    const got: Array<JSONRPCMessage> = []
    c.onmessage = (m) => void got.push(m)
    await server.connect(s)
    await c.start()
    try {
      await c.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
      await tick()
      expect(got).toStrictEqual([
        { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'fs_write', inputSchema: { type: 'object' } }] } },
      ])
      expect(sessions).toStrictEqual([{ clientCapabilities: undefined, askHuman: undefined }])
    } finally {
      await server.close()
    }
  })

  it("asks with the form elicitationFor makes, on the call's own request, with the timeout; each accepted action is the answer", async () => {
    const sessions: Array<McpSession> = []
    const seen: Array<ElicitRequest['params']> = []
    const actions = ['allow-once', 'deny-once', 'always-allow', 'always-deny']
    let i = 0
    const client = host(() => ({ action: 'accept', content: { action: actions[i++] } }), seen)
    const { fromServer, fromClient, close } = await wire(
      toMcpServer(askingStack(sessions, []), INFO, { askTimeout: 12_345 }),
      {},
      client,
    )
    try {
      for (const action of actions) {
        expect(await client.callTool({ name: 'fs_write', arguments: { path: '/w/a', reason: 'notes' } })).toStrictEqual(
          { content: [{ type: 'text', text: JSON.stringify({ action }) }] },
        )
      }
      expect(sessions).toHaveLength(1)
      expect(sessions[0]?.clientCapabilities).toStrictEqual({ elicitation: { form: {} } })
      expect(seen).toHaveLength(4)
      expect(seen[0]).toStrictEqual({
        mode: 'form',
        message: [
          'May the model call fs_write on /w/a?',
          'Arguments:',
          '  "path": "/w/a"',
          '  "reason": (shown last)',
          '"Always" remembers: allow "fs_write" under /w, for this session.',
          `The model's reason, in its own words (not checked): "notes"`,
        ].join('\n'),
        requestedSchema: {
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
        },
      })
      const callIds = fromClient.flatMap(({ message }) =>
        'method' in message && message.method === 'tools/call' && 'id' in message ? [message.id] : [],
      )
      const related = fromServer.flatMap(({ message, options }) =>
        'method' in message && message.method === 'elicitation/create' ? [options?.relatedRequestId] : [],
      )
      expect(related).toStrictEqual(callIds)
      expect(related.every((id) => id !== undefined)).toBe(true)
    } finally {
      await close()
    }
  })

  it('a declined, dismissed or unreadable answer is deny-once; a failed question is a failure of askHuman', async () => {
    const seen: Array<ElicitRequest['params']> = []
    const replies: Array<() => unknown> = [
      () => ({ action: 'decline' }),
      () => ({ action: 'cancel' }),
      () => ({ action: 'accept', content: { action: 'allow-twice' } }),
      () => {
        throw new Error('the host crashed')
      },
    ]
    const client = host(() => (replies.shift() as () => unknown)(), seen)
    const { close } = await wire(toMcpServer(askingStack([], []), INFO), {}, client)
    try {
      const call = () => client.callTool({ name: 'fs_write', arguments: {} })
      const denied = { content: [{ type: 'text', text: '{"action":"deny-once"}' }] }
      expect(await call()).toStrictEqual(denied)
      expect(await call()).toStrictEqual(denied)
      expect(await call()).toStrictEqual({
        content: [
          {
            type: 'text',
            text: 'asking failed: MCP error -32602: Elicitation response content does not match requested schema: data/action must be equal to one of the allowed values',
          },
        ],
        isError: true,
      })
      expect(await call()).toStrictEqual({
        content: [{ type: 'text', text: 'asking failed: MCP error -32603: the host crashed' }],
        isError: true,
      })
      expect(seen).toHaveLength(4)
    } finally {
      await close()
    }
  })

  it('a question the human leaves unanswered fails after askTimeout', async () => {
    const client = host(() => new Promise(() => undefined), [])
    const { close } = await wire(toMcpServer(askingStack([], []), INFO, { askTimeout: 40 }), {}, client)
    try {
      expect(await client.callTool({ name: 'fs_write', arguments: {} })).toStrictEqual({
        content: [{ type: 'text', text: 'asking failed: MCP error -32001: Request timed out' }],
        isError: true,
      })
    } finally {
      await close()
    }
  })

  it("a question about no call in flight travels on no request of the host's", async () => {
    const sessions: Array<McpSession> = []
    const asked: Array<PermissionRequest> = []
    const client = host(() => ({ action: 'accept', content: { action: 'always-deny' } }), [])
    const { fromServer, close } = await wire(toMcpServer(askingStack(sessions, asked), INFO), {}, client)
    try {
      await client.callTool({ name: 'fs_write', arguments: {} })
      const request = asked[0] as PermissionRequest
      const answer = await Promise.resolve(
        sessions[0]?.askHuman?.({
          ...request,
          call: { ...request.call, id: 'elsewhere' },
        }) as Promise<PermissionAnswer>,
      )
      expect(answer).toStrictEqual({ action: 'always-deny' })
      const related = fromServer.flatMap(({ message, options }) =>
        'method' in message && message.method === 'elicitation/create' ? [options?.relatedRequestId] : [],
      )
      expect(related).toHaveLength(2)
      expect(related[0]).not.toBeUndefined()
      expect(related[1]).toBeUndefined()
    } finally {
      await close()
    }
  })
})

describe('toMcpServer: list_changed', () => {
  const subscribable = () => {
    const listeners = new Set<() => void>()
    let unsubscribed = 0
    return {
      listeners,
      unsubscribed: () => unsubscribed,
      toolsChanged: (l: () => void) => {
        listeners.add(l)
        return () => {
          unsubscribed++
          listeners.delete(l)
        }
      },
    }
  }

  it('coalesces changes told in one turn into one notification; unsubscribes once, when it closes', async () => {
    const sub = subscribable()
    const server = toMcpServer(fromTools([]), INFO, { toolsChanged: sub.toolsChanged })
    expect(sub.listeners.size).toBe(1)
    const { client, close } = await wire(server)
    const told: Array<unknown> = []
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void told.push(n))
    for (let k = 0; k < 3; k++) for (const l of sub.listeners) l()
    await tick()
    expect(told).toStrictEqual([{ method: 'notifications/tools/list_changed' }])
    for (const l of sub.listeners) l()
    await tick()
    expect(told).toHaveLength(2)
    expect(sub.unsubscribed()).toBe(0)
    await expect(close()).resolves.toBeUndefined()
    expect(sub.unsubscribed()).toBe(1)
    expect(sub.listeners.size).toBe(0)
  })

  it('a change before the host connected is told to no one, and breaks nothing', async () => {
    const sub = subscribable()
    const server = toMcpServer(fromTools([]), INFO, { toolsChanged: sub.toolsChanged })
    const [listener] = [...sub.listeners]
    expect(() => listener?.()).not.toThrow()
    const { client, close } = await wire(server)
    const told: Array<unknown> = []
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void told.push(n))
    await tick()
    expect(told).toStrictEqual([])
    await close()
    expect(() => listener?.()).not.toThrow()
    await tick()
  })

  it('without toolsChanged, a server closes cleanly and tells nothing', async () => {
    const { client, close } = await wire(toMcpServer(fromTools([]), INFO))
    const told: Array<unknown> = []
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void told.push(n))
    await tick()
    await expect(close()).resolves.toBeUndefined()
    expect(told).toStrictEqual([])
  })
})
