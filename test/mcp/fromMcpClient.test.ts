import fc from 'fast-check'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import type { ToolCall, ToolDeclaration } from '../../src/index.js'
import type { McpToolClient, McpToolsPage } from '../../src/mcp/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { batchOf } from '../../src/steps/Batch.js'
import { expectOnePerPosition } from '../laws.js'
import { batchArb } from '../support/arbitraries.js'
import { call } from '../support/fakes.js'
import type { Linked } from './fixtures.js'
import { ODD_TOOLS, answered, linked, lowLevelServer } from './fixtures.js'

// ------------------------------------------------------------------------------------
// fixtures
// ------------------------------------------------------------------------------------

const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

const opened: Array<Linked> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.close()))
})

/** An in-process McpServer with the blocks and behaviours the adapter must render. */
const kitchenSink = async (
  received: Array<{ readonly tool: string; readonly args: unknown }> = [],
): Promise<Linked & { readonly server: McpServer }> => {
  const server = new McpServer({ name: 'kitchen-sink', version: '0.0.0' })
  server.registerTool(
    'files.read',
    {
      description: 'reads a file',
      inputSchema: { path: z.string(), offset: z.number().optional() },
      annotations: { readOnlyHint: true },
    },
    (args) => {
      received.push({ tool: 'files.read', args })
      return { content: [{ type: 'text', text: `contents of ${args.path}` }] }
    },
  )
  server.registerTool(
    'files.write',
    { description: 'writes a file', inputSchema: { path: z.string(), text: z.string() } },
    (args) => {
      received.push({ tool: 'files.write', args })
      return { content: [{ type: 'text', text: `wrote ${args.text.length} characters` }] }
    },
  )
  server.registerTool('no_args', { description: 'takes nothing' }, () => {
    received.push({ tool: 'no_args', args: {} })
    return { content: [{ type: 'text', text: 'nothing taken' }] }
  })
  server.registerTool('fails', { inputSchema: { why: z.string() } }, (args) => ({
    content: [{ type: 'text', text: `failed: ${args.why}` }],
    isError: true,
  }))
  server.registerTool(
    'weather',
    { inputSchema: { city: z.string() }, outputSchema: { temperature: z.number(), city: z.string() } },
    (args) => ({
      content: [{ type: 'text', text: JSON.stringify({ temperature: 21, city: args.city }) }],
      structuredContent: { temperature: 21, city: args.city },
    }),
  )
  server.registerTool('media', { description: 'every kind of block' }, () => ({
    content: [
      { type: 'text', text: 'here:' },
      { type: 'image', data: TINY_PNG, mimeType: 'image/png' },
      { type: 'audio', data: 'AAAAAAAA', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'twelve chars' } },
      { type: 'resource', resource: { uri: 'file:///blob.bin', mimeType: 'application/octet-stream', blob: 'AAAA' } },
      { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv', mimeType: 'text/csv' },
    ],
  }))
  server.registerTool('hangs', { annotations: { readOnlyHint: true } }, () => new Promise<never>(() => undefined))
  server.registerTool('throws', {}, () => {
    throw new Error('the handler threw')
  })
  const l = await linked(server)
  opened.push(l)
  return { ...l, server }
}

const rightOf = <A>(
  e: { readonly _tag: 'Left'; readonly left: unknown } | { readonly _tag: 'Right'; readonly right: A },
): A => {
  if (e._tag === 'Left') throw new Error(`expected a Right, got Left ${JSON.stringify(e.left)}`)
  return e.right
}

const nameOf = (declarations: ReadonlyArray<ToolDeclaration>, prefix: string): string => {
  const d = declarations.find((x) => x.function.name.startsWith(prefix))
  if (d === undefined) throw new Error(`no tool named ${prefix}…`)
  return d.function.name
}

/** A fake client: fixed tools, answers by `answer`, records what it was asked. */
const fakeClient = (
  tools: ReadonlyArray<unknown>,
  answer: (name: string, args: unknown) => Promise<unknown> = (name, args) =>
    Promise.resolve({ content: [{ type: 'text', text: `${name} ${JSON.stringify(args)}` }] }),
): McpToolClient & { readonly calls: Array<{ name: string; args: unknown }>; listings: number } => {
  const self = {
    calls: [] as Array<{ name: string; args: unknown }>,
    listings: 0,
    listTools: (): Promise<McpToolsPage> => {
      self.listings++
      return Promise.resolve({ tools })
    },
    callTool: (params: { name: string; arguments?: Record<string, unknown> }) => {
      self.calls.push({ name: params.name, args: params.arguments })
      return answer(params.name, params.arguments)
    },
  }
  return self
}

const tool = (name: string, readOnly = false): unknown => ({
  name,
  inputSchema: { type: 'object', properties: { x: { type: 'string' } } },
  ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
})

// ------------------------------------------------------------------------------------
// listing
// ------------------------------------------------------------------------------------

describe('fromMcpClient: listing', () => {
  it('lists an McpServer as chat-completion declarations under legal names', async () => {
    const { client } = await kitchenSink()
    const declarations = rightOf(await fromMcpClient(client).toolsForLlm())
    const names = declarations.map((d) => d.function.name)
    expect(names).toContain('no_args')
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true)
    const read = declarations.find((d) => d.function.name === nameOf(declarations, 'files_read'))
    expect(read?.type).toBe('function')
    expect(read?.function.description).toBe('reads a file')
    expect(Object.keys((read?.function.parameters?.['properties'] ?? {}) as object)).toEqual(['path', 'offset'])
    // the server's schema, as it came
    const listed = await client.listTools()
    expect(read?.function.parameters).toEqual(listed.tools.find((t) => t.name === 'files.read')?.inputSchema)
  })

  it('reads every page, in order, looping on nextCursor', async () => {
    const tools = Array.from({ length: 7 }, (_, i) => ({
      name: `t${i}`,
      inputSchema: { type: 'object', properties: { [`p${i}`]: { type: 'string' } } },
    }))
    const l = await linked(lowLevelServer(tools, 2))
    opened.push(l)
    // the SDK itself returns one page
    expect((await l.client.listTools()).tools).toHaveLength(2)
    const declarations = rightOf(await fromMcpClient(l.client).toolsForLlm())
    expect(declarations.map((d) => d.function.name)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6'])
    const out = rightOf(await fromMcpClient(l.client).executeToolCalls([call('a', 't6', { p6: 'x' })])())
    expect(out).toEqual([answered('a', 't6 {"p6":"x"}')])
  })

  it('publishes tools with odd schemas as they came, though the SDK rejects the page', async () => {
    const l = await linked(lowLevelServer(ODD_TOOLS))
    opened.push(l)
    await expect(l.client.listTools()).rejects.toThrow()
    const tools = fromMcpClient(l.client)
    const declarations = rightOf(await tools.toolsForLlm())
    expect(declarations).toEqual(
      ODD_TOOLS.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.inputSchema } })),
    )
    const out = rightOf(
      await tools.executeToolCalls([call('1', 'any_of', { a: 'x' }), call('2', 'plain', { path: '/p' })])(),
    )
    expect(out.map((r) => [r.content, r.is_error])).toEqual([
      ['any_of {"a":"x"}', undefined],
      ['plain {"path":"/p"}', undefined],
    ])
  })

  it('a listing that fails is a Left and keeps the last good routes', async () => {
    const { client } = await kitchenSink()
    const tools = fromMcpClient(client)
    rightOf(await tools.toolsForLlm())
    const before = tools.tools()
    await client.close()
    const listed = await tools.toolsForLlm()
    expect(listed._tag).toBe('Left')
    if (listed._tag === 'Left') {
      expect(listed.left._tag).toBe('McpListingError')
      expect(listed.left.message).toMatch(/page 1: the connection to the MCP server is closed/)
    }
    expect(tools.tools()).toBe(before)
  })

  it('a JSON-RPC error is a Left; a cursor that repeats is a Left, not a loop', async () => {
    const rpc = fromMcpClient({
      listTools: () => Promise.reject(Object.assign(new Error('MCP error -32601: Method not found'), { code: -32601 })),
      callTool: () => Promise.resolve({}),
    })
    const a = await rpc.toolsForLlm()
    expect(a._tag === 'Left' && a.left.message).toBe('tools/list failed on page 1: MCP error -32601: Method not found')
    const looping = fromMcpClient({
      listTools: () => Promise.resolve({ tools: [tool('t')], nextCursor: 'again' }),
      callTool: () => Promise.resolve({}),
    })
    const b = await looping.toolsForLlm()
    expect(b._tag === 'Left' && b.left.message).toMatch(/repeated the cursor "again"/)
  })

  it('words each way a listing can fail, in one line', async () => {
    const failing = (e: unknown) =>
      fromMcpClient({ listTools: () => Promise.reject(e), callTool: () => Promise.resolve({}) })
    const messageOf = async (e: unknown) => {
      const out = await failing(e).toolsForLlm()
      return out._tag === 'Left' ? out.left.message : 'listed'
    }
    const schemaError = Object.assign(new Error('\n  bad page\nmore detail'), { name: 'ZodError', issues: [] })
    expect(await messageOf(Object.assign(new Error('gone'), { code: -32000 }))).toBe(
      'tools/list failed on page 1: the connection to the MCP server is closed',
    )
    expect(await messageOf(new Error('Not connected'))).toBe(
      'tools/list failed on page 1: the connection to the MCP server is closed',
    )
    expect(await messageOf(Object.assign(new Error('slow'), { code: -32001 }))).toBe(
      'tools/list failed on page 1: the MCP server did not answer in time',
    )
    expect(await messageOf(schemaError)).toBe('tools/list failed on page 1: the answer could not be read (  bad page)')
    expect(await messageOf(new Error('first line\nsecond line'))).toBe('tools/list failed on page 1: first line')
    expect(await messageOf(new Error('x'.repeat(400)))).toBe(`tools/list failed on page 1: ${'x'.repeat(300)}…`)
    expect(await messageOf(new Error('x'.repeat(300)))).toBe(`tools/list failed on page 1: ${'x'.repeat(300)}`)
  })

  it('a page that is not a page of tools fails the listing, naming what came', async () => {
    const answering = (page: unknown) =>
      fromMcpClient({ listTools: () => Promise.resolve(page as McpToolsPage), callTool: () => Promise.resolve({}) })
    for (const [page, got] of [
      [{ tools: 'a' }, 'an object'],
      [null, 'null'],
      [{ tools: [], nextCursor: 7 }, 'an object'],
    ] as const) {
      const out = await answering(page).toolsForLlm()
      expect(out._tag === 'Left' && out.left.message).toBe(
        `tools/list failed on page 1: the answer is not a page of tools (got ${got})`,
      )
    }
    const nullCursor = await answering({ tools: [tool('a')], nextCursor: null }).toolsForLlm()
    expect(nullCursor._tag === 'Right' && nullCursor.right.map((d) => d.function.name)).toEqual(['a'])
  })

  it('asks again with a plain request only when the SDK refused the page itself, not when the server said no', async () => {
    const requests: Array<unknown> = []
    const refusedPage = Object.assign(new Error('invalid page'), { name: 'ZodError', issues: [] })
    const client = (e: unknown): McpToolClient => ({
      listTools: () => Promise.reject(e),
      callTool: () => Promise.resolve({}),
      request: (r) => {
        requests.push(r)
        return Promise.resolve({ tools: [tool('odd')] })
      },
    })
    const again = await fromMcpClient(client(refusedPage)).toolsForLlm()
    expect(again._tag === 'Right' && again.right.map((d) => d.function.name)).toEqual(['odd'])
    expect(requests).toEqual([{ method: 'tools/list', params: {} }])
    const rpc = await fromMcpClient(
      client(Object.assign(new Error('MCP error -32603: boom'), { code: -32603 })),
    ).toolsForLlm()
    expect(rpc._tag === 'Left' && rpc.left.message).toBe('tools/list failed on page 1: MCP error -32603: boom')
    expect(requests).toHaveLength(1)
  })

  it('leaves out listed things that are not tools, and a repeated name after its first listing', async () => {
    const fake = fakeClient([
      null,
      7,
      { description: 'no name' },
      tool('a'),
      { ...(tool('a') as object), description: 'second a' },
      { name: 'b', inputSchema: true },
    ])
    const declarations = rightOf(await fromMcpClient(fake).toolsForLlm())
    expect(declarations).toEqual([
      {
        type: 'function',
        function: { name: 'a', parameters: { type: 'object', properties: { x: { type: 'string' } } } },
      },
      { type: 'function', function: { name: 'b' } },
    ])
  })

  it('does nothing until a task runs', async () => {
    const fake = fakeClient([tool('a')])
    const tools = fromMcpClient(fake)
    const listing = tools.toolsForLlm
    const batch = tools.executeToolCalls([call('1', 'a')])
    expect(fake.listings + fake.calls.length).toBe(0)
    await listing()
    await batch()
    expect(fake.listings).toBeGreaterThan(0)
    expect(fake.calls).toHaveLength(1)
  })
})

// ------------------------------------------------------------------------------------
// calling
// ------------------------------------------------------------------------------------

describe('fromMcpClient: calls', () => {
  it('routes model-facing names back to MCP names and sends the arguments as parsed', async () => {
    const received: Array<{ tool: string; args: unknown }> = []
    const { client } = await kitchenSink(received)
    const tools = fromMcpClient(client)
    const declarations = rightOf(await tools.toolsForLlm())
    const read = nameOf(declarations, 'files_read')
    const write = nameOf(declarations, 'files_write')
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', read, { path: '/a' }),
        call('2', write, { path: '/b', text: 'hello' }),
        call('3', 'no_args', ''),
      ])(),
    )
    expect(out).toEqual([
      answered('1', 'contents of /a'),
      answered('2', 'wrote 5 characters'),
      answered('3', 'nothing taken'),
    ])
    expect(received.map((r) => r.tool)).toEqual(['files.read', 'files.write', 'no_args'])
  })

  it('reads arguments an upper layer already parsed without parsing them again, and sends that very object', async () => {
    const fake = fakeClient([tool('a')])
    const tools = fromMcpClient(fake)
    await tools.toolsForLlm()
    const batch = batchOf([call('1', 'a', { x: 'y' })])
    const above = batch.argsAt(0)
    const spy = vi.spyOn(JSON, 'parse')
    try {
      await tools.executeBatch?.(batch)()
      expect(spy).not.toHaveBeenCalled()
    } finally {
      spy.mockRestore()
    }
    expect(fake.calls[0]?.args).toBe(above._tag === 'Right' ? above.right : undefined)
  })

  it('empty or absent arguments mean {}; arguments that are not an object are refused before the server', async () => {
    const fake = fakeClient([tool('a')])
    const tools = fromMcpClient(fake)
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'a', ''),
        call('2', 'a', '   '),
        { id: '3', function: { name: 'a' } } as unknown as ToolCall,
        call('4', 'a', '[1,2]'),
        call('5', 'a', '{"x":'),
        call('6', 'a', 'null'),
      ])(),
    )
    expect(fake.calls).toEqual([
      { name: 'a', args: {} },
      { name: 'a', args: {} },
      { name: 'a', args: {} },
    ])
    expect(out.slice(3).map((r) => [r.tool_call_id, r.is_error])).toEqual([
      ['4', true],
      ['5', true],
      ['6', true],
    ])
    expect(out[3]?.content).toBe('the arguments must be a JSON object, but they are an array; the tool was not called')
    expect(out[4]?.content).toMatch(/^the arguments are not valid JSON \(.+\); the tool was not called$/)
  })

  it('forwards an object the caller already parsed as that very object', async () => {
    const fake = fakeClient([tool('a')])
    const args = { x: 'y', extra: 1 }
    await fromMcpClient(fake).executeToolCalls([call('1', 'a', args, true)])()
    expect(fake.calls[0]?.args).toBe(args)
  })

  it('a call to a name it does not list is an is_error result, and the server is not called', async () => {
    const fake = fakeClient([tool('a.b')])
    const tools = fromMcpClient(fake)
    await tools.toolsForLlm()
    // the MCP name itself is not a model-facing name
    const out = rightOf(
      await tools.executeToolCalls([call('1', 'a.b'), call('2', '__proto__'), null as unknown as ToolCall])(),
    )
    expect(out).toEqual([
      {
        role: 'tool',
        tool_call_id: '1',
        content: 'there is no tool named "a.b" on this MCP server; the tool was not called',
        is_error: true,
      },
      {
        role: 'tool',
        tool_call_id: '2',
        content: 'there is no tool named "__proto__" on this MCP server; the tool was not called',
        is_error: true,
      },
      {
        role: 'tool',
        tool_call_id: '',
        content: 'the call has no function name; the tool was not called',
        is_error: true,
      },
    ])
    expect(fake.calls).toEqual([])
  })

  it('renders isError, structuredContent and every kind of block', async () => {
    const { client } = await kitchenSink()
    const tools = fromMcpClient(client)
    await tools.toolsForLlm()
    const out = rightOf(
      await tools.executeToolCalls([
        call('e', 'fails', { why: 'no disk' }),
        call('w', 'weather', { city: 'Oslo' }),
        call('m', 'media'),
      ])(),
    )
    expect(out[0]).toEqual(answered('e', 'failed: no disk', { is_error: true }))
    expect(out[1]).toEqual(
      answered('w', '{"temperature":21,"city":"Oslo"}', { structured_content: { temperature: 21, city: 'Oslo' } }),
    )
    // every block is kept, as the server sent it, for whoever serves the result again
    expect(out[2]?.mcp_content?.map((b) => b.type)).toEqual([
      'text',
      'image',
      'audio',
      'resource',
      'resource',
      'resource_link',
    ])
    expect(out[2]?.mcp_content?.[1]).toMatchObject({ type: 'image', mimeType: 'image/png' })
    expect(out[2]?.content.split('\n')).toEqual([
      'here:',
      '[image: image/png, 70 bytes]',
      '[audio: audio/wav, 6 bytes]',
      '[resource: text/plain, file:///notes.txt, 12 characters]',
      '[resource: application/octet-stream, file:///blob.bin, 3 bytes]',
      '[resource_link: text/csv, file:///big.csv, "big.csv"]',
    ])
  })

  it('a handler that throws, a server error and a hang are is_error results for those calls only', async () => {
    const { client } = await kitchenSink()
    const tools = fromMcpClient(client, { timeout: 200 })
    await tools.toolsForLlm()
    const started = Date.now()
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'no_args'),
        call('2', 'throws'),
        call('3', 'hangs'),
        call('4', 'weather', { city: 1 }),
        call('5', 'no_args'),
      ])(),
    )
    expect(Date.now() - started).toBeLessThan(2000)
    expect(out.map((r) => r.tool_call_id)).toEqual(['1', '2', '3', '4', '5'])
    expect(out[0]).toEqual(answered('1', 'nothing taken'))
    // McpServer turns a throwing handler into an isError result
    expect(out[1]).toMatchObject({ is_error: true, content: expect.stringContaining('the handler threw') })
    expect(out[2]).toMatchObject({ is_error: true, content: expect.stringMatching(/did not answer within 200 ms/) })
    expect(out[3]).toMatchObject({ is_error: true })
    expect(out[4]).toEqual(answered('5', 'nothing taken'))
  })

  it('a closed connection is an is_error result for each call', async () => {
    const { client } = await kitchenSink()
    const tools = fromMcpClient(client)
    await tools.toolsForLlm()
    await client.close()
    const out = rightOf(await tools.executeToolCalls([call('1', 'no_args'), call('2', 'no_args')])())
    expect(out).toEqual([
      {
        role: 'tool',
        tool_call_id: '1',
        content: 'the connection to the MCP server is closed; the tool may or may not have run',
        is_error: true,
      },
      {
        role: 'tool',
        tool_call_id: '2',
        content: 'the connection to the MCP server is closed; the tool may or may not have run',
        is_error: true,
      },
    ])
  })

  it('lists first when no listing has run, and answers every call when that listing fails', async () => {
    const fake = fakeClient([tool('a')])
    expect(rightOf(await fromMcpClient(fake).executeToolCalls([call('1', 'a', { x: 'y' })])())[0]?.content).toBe(
      'a {"x":"y"}',
    )
    const broken = fromMcpClient({
      listTools: () => Promise.reject(new Error('no way')),
      callTool: () => Promise.resolve({}),
    })
    const out = rightOf(await broken.executeToolCalls([call('1', 'a'), call('2', 'b')])())
    expect(out.map((r) => [r.tool_call_id, r.is_error, r.content])).toEqual([
      [
        '1',
        true,
        "the MCP server's tools could not be listed to route this call (tools/list failed on page 1: no way); the tool was not called",
      ],
      [
        '2',
        true,
        "the MCP server's tools could not be listed to route this call (tools/list failed on page 1: no way); the tool was not called",
      ],
    ])
  })

  it('a timeout holds even when the client ignores its options', async () => {
    const fake = fakeClient([tool('slow'), tool('a')], (name) =>
      name === 'slow' ? new Promise(() => undefined) : Promise.resolve({ content: [] }),
    )
    const out = rightOf(
      await fromMcpClient(fake, { timeout: 50 }).executeToolCalls([call('1', 'slow'), call('2', 'a')])(),
    )
    expect(out).toEqual([
      {
        role: 'tool',
        tool_call_id: '1',
        content:
          'the MCP server did not answer within 50 ms, so the call was cancelled; the tool may or may not have run',
        is_error: true,
      },
      { role: 'tool', tool_call_id: '2', content: '' },
    ])
  })

  it('the signal option aborts the call in flight and every call after it', async () => {
    const controller = new AbortController()
    const fake = fakeClient([tool('slow'), tool('a')], (name) => {
      if (name === 'slow') {
        setTimeout(() => controller.abort(new Error('the user pressed stop')), 20)
        return new Promise(() => undefined)
      }
      return Promise.resolve({ content: [{ type: 'text', text: 'ok' }] })
    })
    const tools = fromMcpClient(fake, { signal: controller.signal })
    const out = rightOf(await tools.executeToolCalls([call('0', 'a'), call('1', 'slow'), call('2', 'a')])())
    expect(out.map((r) => [r.content, r.is_error])).toEqual([
      ['ok', undefined],
      ['the call was aborted (the user pressed stop); the tool may or may not have run', true],
      ['the call was aborted (the user pressed stop); the tool may or may not have run', true],
    ])
    expect(fake.calls.map((c) => c.name)).toEqual(['a', 'slow'])
  })

  it('words each way a call can fail, in one line, for that call only', async () => {
    const errors: Record<string, unknown> = {
      closed: Object.assign(new Error('gone'), { code: -32000 }),
      timeout: Object.assign(new Error('Request timed out'), { code: -32001 }),
      rpc: Object.assign(new Error('MCP error -32602: bad params\nstack'), { code: -32602 }),
      schema: Object.assign(new Error('invalid result\ndetail'), { name: 'ZodError', issues: [] }),
      other: new Error('\nsocket hang up'),
    }
    const fake = fakeClient(
      Object.keys(errors).map((n) => tool(n)),
      (name) => Promise.reject(errors[name]),
    )
    const out = rightOf(
      await fromMcpClient(fake, { timeout: 5000 }).executeToolCalls(
        Object.keys(errors).map((n, i) => call(String(i), n)),
      )(),
    )
    expect(out.map((r) => [r.is_error, r.content])).toEqual([
      [true, 'the connection to the MCP server is closed; the tool may or may not have run'],
      [
        true,
        'the MCP server did not answer within 5000 ms, so the call was cancelled; the tool may or may not have run',
      ],
      [true, 'the MCP server answered with an error: MCP error -32602: bad params'],
      [true, "the MCP server's answer is not a valid tool result (invalid result)"],
      [true, 'the tool call failed: socket hang up'],
    ])
  })

  it('a result that is not a tool result is an is_error result', async () => {
    const fake = fakeClient([tool('a')], () => Promise.resolve('garbage'))
    const out = rightOf(await fromMcpClient(fake).executeToolCalls([call('1', 'a')])())
    expect(out[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^the MCP server's answer is not a tool result/),
    })
  })

  it('is lazy: building a listing or a batch asks the server nothing; running it does', async () => {
    const fake = fakeClient([tool('a')])
    const tools = fromMcpClient(fake)
    const listing = tools.toolsForLlm
    const batch = tools.executeToolCalls([call('1', 'a', { x: 'y' })])
    expect([fake.listings, fake.calls.length]).toEqual([0, 0])
    await batch()
    expect([fake.listings, fake.calls.length]).toEqual([1, 1])
    await listing()
    expect(fake.listings).toBe(2)
  })

  it('one result per call, in order, whatever the batch; the batch never fails', async () => {
    const names = ['a', 'b.c', 'slow']
    await fc.assert(
      fc.asyncProperty(batchArb(fc.constantFrom('a', 'b_c', 'b.c', 'nope', 'slow')), async (calls) => {
        const fake = fakeClient(
          names.map((n) => tool(n, n !== 'a')),
          (name) =>
            name === 'slow'
              ? Promise.reject(Object.assign(new Error('boom'), { code: -32603 }))
              : Promise.resolve({ content: [{ type: 'text', text: name }] }),
        )
        const out = await fromMcpClient(fake, { readOnlyConcurrency: 2 }).executeToolCalls(calls)()
        expect(out._tag).toBe('Right')
        expectOnePerPosition(calls, rightOf(out))
      }),
      { numRuns: 100 },
    )
  })
})

// ------------------------------------------------------------------------------------
// concurrency
// ------------------------------------------------------------------------------------

describe('fromMcpClient: concurrency', () => {
  const tracking = () => {
    let inFlight = 0
    const log: Array<string> = []
    let max = 0
    const fake = fakeClient([tool('r1', true), tool('r2', true), tool('r3', true), tool('w')], async (name) => {
      inFlight++
      max = Math.max(max, inFlight)
      log.push(`start ${name}`)
      await new Promise((r) => setTimeout(r, 20))
      log.push(`end ${name}`)
      inFlight--
      return { content: [{ type: 'text', text: name }] }
    })
    return { fake, log, max: () => max }
  }
  const batch = [call('1', 'r1'), call('2', 'r2'), call('3', 'w'), call('4', 'r3'), call('5', 'r1')]

  it('runs one call at a time by default', async () => {
    const t = tracking()
    const out = rightOf(await fromMcpClient(t.fake).executeToolCalls(batch)())
    expect(out.map((r) => r.content)).toEqual(['r1', 'r2', 'w', 'r3', 'r1'])
    expect(t.max()).toBe(1)
  })

  it('runs consecutive read-only calls together; a write runs alone and keeps its place', async () => {
    const t = tracking()
    const out = rightOf(await fromMcpClient(t.fake, { readOnlyConcurrency: 4 }).executeToolCalls(batch)())
    expect(out.map((r) => r.content)).toEqual(['r1', 'r2', 'w', 'r3', 'r1'])
    expect(t.max()).toBe(2)
    const w = t.log.indexOf('start w')
    expect(t.log.slice(0, w).filter((l) => l.startsWith('end'))).toHaveLength(2)
    expect(t.log[w + 1]).toBe('end w')
  })
})

// ------------------------------------------------------------------------------------
// notifications
// ------------------------------------------------------------------------------------

describe('fromMcpClient: onToolsChanged', () => {
  it('tells each subscriber when the server says its tool list changed, until unsubscribed', async () => {
    const { client, server } = await kitchenSink()
    const tools = fromMcpClient(client)
    await tools.toolsForLlm()
    const said: Array<string> = []
    const stopA = tools.onToolsChanged(() => said.push('a'))
    tools.onToolsChanged(() => {
      throw new Error('a listener that throws')
    })
    tools.onToolsChanged(() => said.push('b'))
    server.registerTool('late', {}, () => ({ content: [{ type: 'text', text: 'late' }] }))
    await new Promise((r) => setTimeout(r, 20))
    expect(said).toEqual(['a', 'b'])
    const relisted = rightOf(await tools.toolsForLlm())
    expect(relisted.map((d) => d.function.name)).toContain('late')
    stopA()
    server.registerTool('later', {}, () => ({ content: [] }))
    await new Promise((r) => setTimeout(r, 20))
    expect(said).toEqual(['a', 'b', 'b'])
  })

  it('installs nothing until someone subscribes', () => {
    let installed = 0
    const fake = { ...fakeClient([]), setNotificationHandler: () => void installed++ }
    const tools = fromMcpClient(fake)
    expect(installed).toBe(0)
    tools.onToolsChanged(() => undefined)
    tools.onToolsChanged(() => undefined)
    expect(installed).toBe(1)
  })
})

// ------------------------------------------------------------------------------------
// construction
// ------------------------------------------------------------------------------------

describe('fromMcpClient: construction', () => {
  const fake = fakeClient([])
  it.each([
    [{ timeot: 5 }, /unknown option "timeot"/],
    [{ timeout: 0 }, /timeout must be/],
    [{ timeout: 1.5 }, /timeout must be/],
    [{ timeout: 2 ** 31 }, /timeout must be/],
    [{ readOnlyConcurrency: -1 }, /readOnlyConcurrency must be/],
    [{ signal: {} }, /signal must be an AbortSignal/],
    ['fast', /options must be an object/],
  ])('refuses options %j', (options, message) => {
    expect(() => fromMcpClient(fake, options as never)).toThrow(TypeError)
    expect(() => fromMcpClient(fake, options as never)).toThrow(message)
  })

  it('refuses something that is not a client, naming what is missing', () => {
    expect(() => fromMcpClient(null as never)).toThrow(
      'fromMcpClient: expected an MCP client (with listTools and callTool), got null',
    )
    expect(() => fromMcpClient({ listTools: () => Promise.resolve({ tools: [] }) } as never)).toThrow(
      'fromMcpClient: expected an MCP client, but `callTool` is not a function',
    )
  })

  it('refuses a connection (what connectStdio returns) in place of its client, saying to pass connection.client', () => {
    const connection = { client: fake, pid: 1, close: () => Promise.resolve() }
    expect(() => fromMcpClient(connection as never)).toThrow(
      new TypeError(
        'fromMcpClient: expected an MCP client, got an object that holds one in `.client` (what connectStdio returns): pass connection.client',
      ),
    )
  })

  it('gives no such hint when `.client` is no client, or cannot be read', () => {
    const plain =
      'fromMcpClient: expected an MCP client, but `listTools` is not a function and `callTool` is not a function'
    expect(() => fromMcpClient({ client: { listTools: () => undefined } } as never)).toThrow(new TypeError(plain))
    const hostile = {
      get client(): never {
        throw new Error('boom')
      },
    }
    expect(() => fromMcpClient(hostile as never)).toThrow(new TypeError(plain))
  })
})
