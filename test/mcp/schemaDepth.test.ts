// How deep a listed schema may nest: measured without recursion, whatever the value (far deeper than the stack,
// sharing its parts, a cycle); a tool nested deeper than MAX_SCHEMA_DEPTH is left out of a listing read from a
// server and of one served to a host, and the others stay. And what a schema error says: where, and what.
// In process: fakes of the SDK's client, and toMcpServer over the SDK's own stdio framing on in-memory streams,
// so the listing is written as JSON, as it is to a real host.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { fc } from '@fast-check/vitest'
import { right } from 'fp-ts/lib/Either.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Provider } from '../../src/index.js'
import type { McpToolClient } from '../../src/mcp/index.js'
import { MAX_SCHEMA_DEPTH, fromMcpClient, toMcpServer } from '../../src/mcp/index.js'
import { nestsDeeperThan } from '../../src/kernel/guards.js'

// a value `depth` levels deep (objects and arrays, as `shape` says at each level), with a leaf at the bottom
const nestedOf = (depth: number, shape: ReadonlyArray<boolean> = [false]): unknown => {
  let v: unknown = 'leaf'
  for (let i = depth; i > 0; i--) v = shape[i % shape.length] === true ? [0, v] : { k: 'x', v }
  return v
}

// a schema `depth` levels of JSON deep: `properties.a` nested, as a server that means harm lists it
const schemaOf = (depth: number): Record<string, unknown> => {
  // each level of `properties` is two of JSON: an odd depth ends in `{}`, an even one in `{ a: {} }`
  let s: Record<string, unknown> = depth % 2 === 1 ? {} : { a: {} }
  for (let d = depth % 2 === 1 ? 1 : 2; d < depth; d += 2) s = { type: 'object', properties: { a: s } }
  return s
}

const fakeClient = (tools: ReadonlyArray<unknown>, callTool: McpToolClient['callTool'] = () => Promise.resolve({})) =>
  ({ listTools: () => Promise.resolve({ tools }), callTool }) satisfies McpToolClient

describe('nestsDeeperThan', () => {
  it('whatever the nesting of objects and arrays, a value is too deep exactly when it is deeper than the bound', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 * MAX_SCHEMA_DEPTH }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        (depth, shape) => {
          expect(nestsDeeperThan(MAX_SCHEMA_DEPTH)(nestedOf(depth, shape))).toBe(depth > MAX_SCHEMA_DEPTH)
        },
      ),
    )
    expect(nestsDeeperThan(MAX_SCHEMA_DEPTH)(schemaOf(MAX_SCHEMA_DEPTH))).toBe(false)
    expect(nestsDeeperThan(MAX_SCHEMA_DEPTH)(schemaOf(MAX_SCHEMA_DEPTH + 1))).toBe(true)
    for (const primitive of [undefined, null, true, 0, 'text']) expect(nestsDeeperThan(0)(primitive)).toBe(false)
  })

  it("measures a value far deeper than the process's stack without overflowing it", () => {
    expect(nestsDeeperThan(MAX_SCHEMA_DEPTH)(nestedOf(200_000))).toBe(true)
    expect(nestsDeeperThan(MAX_SCHEMA_DEPTH)(nestedOf(200_000, [true]))).toBe(true)
  })

  it('bounded work for a value built in process: one that shares each level twice, and one that holds itself', () => {
    // 2^1,000 paths to the bottom, 1,000 objects: read once per path, this would never end
    let shared: Record<string, unknown> = {}
    for (let i = 0; i < 1_000; i++) shared = { left: shared, right: shared }
    const t0 = Date.now()
    expect(nestsDeeperThan(2_000)(shared)).toBe(false)
    expect(nestsDeeperThan(999)(shared)).toBe(true)
    expect(Date.now() - t0).toBeLessThan(5_000)
    const cycle: Record<string, unknown> = { type: 'object' }
    cycle['properties'] = { a: cycle }
    expect(nestsDeeperThan(MAX_SCHEMA_DEPTH)(cycle)).toBe(true)
  })
})

describe('fromMcpClient: a listed tool nested too deep', () => {
  it('is left out, as a tool without a name is; the others are listed in order and called', async () => {
    const calls: Array<string> = []
    const provider = fromMcpClient(
      fakeClient(
        [
          { name: 'first', inputSchema: { type: 'object' } },
          { name: 'deep', inputSchema: schemaOf(MAX_SCHEMA_DEPTH + 1) },
          { name: 'edge', inputSchema: schemaOf(MAX_SCHEMA_DEPTH) },
          { inputSchema: { type: 'object' } },
          { name: 'annotated', inputSchema: { type: 'object' }, annotations: nestedOf(MAX_SCHEMA_DEPTH + 1) },
          { name: 'last', inputSchema: { type: 'object' } },
        ],
        (p) => {
          calls.push(p.name)
          return Promise.resolve({ content: [{ type: 'text', text: p.name }] })
        },
      ),
    )
    const listed = await provider.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right.map((d) => d.function.name)).toStrictEqual(['first', 'edge', 'last'])
    expect(listed._tag === 'Right' && listed.right[1]?.function.parameters).toStrictEqual(schemaOf(MAX_SCHEMA_DEPTH))
    const out = await provider.executeToolCalls([
      { id: '1', function: { name: 'deep', arguments: '{}' } },
      { id: '2', function: { name: 'last', arguments: '{}' } },
    ])()
    const tooDeep = `its input schema or annotations nest deeper than ${MAX_SCHEMA_DEPTH} levels`
    expect(out._tag === 'Right' && out.right.map((r) => [r.content, r.is_error === true])).toStrictEqual([
      [
        `the MCP server lists a tool named "deep", but the listing left it out: ${tooDeep}; the tool was not called`,
        true,
      ],
      ['last', false],
    ])
    expect(calls).toStrictEqual(['last'])
    // what was left out, in listing order, and why; a tool without a name is no tool at all
    expect(provider.leftOut()).toStrictEqual([
      { name: 'deep', why: tooDeep },
      { name: 'annotated', why: tooDeep },
    ])
  })

  it('says what the last successful listing left out: nothing before one, a name once, a name also listed routed', async () => {
    let tools: ReadonlyArray<unknown> = [
      { name: 'twice', inputSchema: schemaOf(MAX_SCHEMA_DEPTH + 1) },
      { name: 'twice', inputSchema: { type: 'object' } },
      { name: 'deep', inputSchema: schemaOf(MAX_SCHEMA_DEPTH + 1) },
      { name: 'deep', annotations: nestedOf(MAX_SCHEMA_DEPTH + 1), inputSchema: { type: 'object' } },
    ]
    let fail = false
    const client: McpToolClient = {
      listTools: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve({ tools })),
      callTool: (p) => Promise.resolve({ content: [{ type: 'text', text: p.name }] }),
    }
    const provider = fromMcpClient(client)
    expect(provider.leftOut()).toStrictEqual([])
    await provider.toolsForLlm()
    expect(provider.leftOut().map((t) => t.name)).toStrictEqual(['twice', 'deep'])
    const out = await provider.executeToolCalls([{ id: '1', function: { name: 'twice', arguments: '{}' } }])()
    expect(out._tag === 'Right' && out.right.map((r) => r.content)).toStrictEqual(['twice'])
    // a failed listing keeps the last one's; a successful one replaces it
    fail = true
    await provider.toolsForLlm()
    expect(provider.leftOut().map((t) => t.name)).toStrictEqual(['twice', 'deep'])
    fail = false
    tools = [{ name: 'ok', inputSchema: { type: 'object' } }]
    await provider.toolsForLlm()
    expect(provider.leftOut()).toStrictEqual([])
    const gone = await provider.executeToolCalls([{ id: '2', function: { name: 'deep', arguments: '{}' } }])()
    expect(gone._tag === 'Right' && gone.right[0]?.content).toBe(
      'there is no tool named "deep" on this MCP server; the tool was not called',
    )
  })
})

/** A host's client for `server` over the SDK's stdio framing: every message is written as JSON and read back. */
const overStdioFraming = async (
  server: Server,
): Promise<{ readonly client: Client; readonly close: () => Promise<void> }> => {
  const toServer = new PassThrough()
  const fromServer = new PassThrough()
  await server.connect(new StdioServerTransport(toServer, fromServer))
  const buffer = new ReadBuffer()
  const transport: Transport = {
    start: () => {
      fromServer.on('data', (chunk: Buffer) => {
        buffer.append(chunk)
        for (let m = buffer.readMessage(); m !== null; m = buffer.readMessage()) transport.onmessage?.(m)
      })
      return Promise.resolve()
    },
    send: (message) => {
      toServer.write(serializeMessage(message))
      return Promise.resolve()
    },
    close: () => {
      toServer.end()
      transport.onclose?.()
      return Promise.resolve()
    },
  }
  const client = new Client({ name: 'host', version: '0.0.0' })
  await client.connect(transport)
  return {
    client,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}

describe('toMcpServer: a declaration nested too deep', () => {
  it("is left out of the host's tools/list, which is answered with the others (2,600 levels: more than JSON.stringify can write here)", async () => {
    const declaration = (name: string, parameters: Record<string, unknown>) => ({
      type: 'function' as const,
      function: { name, parameters },
    })
    const provider: Provider<never> = {
      toolsForLlm: () =>
        Promise.resolve(
          right([
            declaration('ok', { type: 'object' }),
            declaration('deep', schemaOf(5_200)),
            declaration('edge', schemaOf(MAX_SCHEMA_DEPTH)),
          ]),
        ),
      executeToolCalls: () => () => Promise.resolve(right([])),
    }
    const host = await overStdioFraming(toMcpServer(provider, { name: 'deep', version: '0.0.0' }))
    try {
      // the old answer never came: the host waited for its timeout
      const { tools } = await host.client.listTools(undefined, { timeout: 5_000 })
      expect(tools.map((t) => t.name)).toStrictEqual(['ok', 'edge'])
      expect(tools[1]?.inputSchema).toStrictEqual(schemaOf(MAX_SCHEMA_DEPTH))
    } finally {
      await host.close()
    }
  })
})

describe("fromMcpClient: a schema error's words", () => {
  // what the SDK throws when an answer fails its schema: every issue, pretty-printed as JSON, in its message
  const schemaError = (issues: ReadonlyArray<unknown>) =>
    Object.assign(new Error(JSON.stringify(issues, null, 2)), { name: 'ZodError', issues })

  const said = async (error: unknown): Promise<string> => {
    const provider = fromMcpClient(
      fakeClient([{ name: 't', inputSchema: { type: 'object' } }], () => Promise.reject(error)),
    )
    const out = await provider.executeToolCalls([{ id: '1', function: { name: 't', arguments: '{}' } }])()
    return out._tag === 'Right' ? (out.right[0]?.content ?? '') : ''
  }

  it('the first issue: its path as a reader writes it, then its message, escaped and cut', async () => {
    const prefix = "the MCP server's answer is not a valid tool result ("
    expect(
      await said(
        schemaError([
          { path: ['content', 0, 'type'], message: 'Invalid input' },
          { path: ['other'], message: 'not shown' },
        ]),
      ),
    ).toBe(`${prefix}content[0].type: Invalid input)`)
    // a key that is not a plain name is quoted; what the server wrote is escaped
    expect(await said(schemaError([{ path: ['a.b', 'c\u001b]0;x\u0007'], message: 'bad\u001b[2J' }]))).toBe(
      `${prefix}["a.b"]["c\\u001b]0;x\\u0007"]: bad\\u001b[2J)`,
    )
    // a key that is neither a name nor a number (only a hand-made error has one) is quoted as text
    expect(await said(schemaError([{ path: ['content', true], message: 'odd' }]))).toBe(
      `${prefix}content["true"]: odd)`,
    )
    expect(await said(schemaError([{ path: [], message: 'Invalid input: expected object' }]))).toBe(
      `${prefix}Invalid input: expected object)`,
    )
    expect(await said(schemaError([{ path: ['content'], message: 'y'.repeat(1_000) }]))).toBe(
      `${prefix}content: ${'y'.repeat(291)}…)`,
    )
    // with no issue to read, the first line of its message, as before
    expect(await said(Object.assign(new Error('not read\nsecond'), { name: 'ZodError' }))).toBe(`${prefix}not read)`)
  })
})
