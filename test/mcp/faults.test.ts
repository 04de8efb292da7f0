// Bad input and faults, against a real process: a server that dies mid-batch, hangs
// past the timeout, answers garbage, and lists a tool the SDK rejects, one nested far
// too deep, or a page no schema reads. Each affected call is an is_error result saying
// what happened; nothing else is lost.
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { fromMcpClient } from '../../src/mcp/index.js'
import { call } from '../support/fakes.js'
import { FAULTY_SERVER, answered, cleanUpAfterEach, isAlive, spawnServer } from './fixtures.js'

cleanUpAfterEach()

const HOSTILE_LISTING = fileURLToPath(new URL('./fixtures/hostile-listing-server.mjs', import.meta.url))

const rightOf = <A>(
  e: { readonly _tag: 'Left'; readonly left: unknown } | { readonly _tag: 'Right'; readonly right: A },
): A => {
  if (e._tag === 'Left') throw new Error(`expected a Right, got Left ${JSON.stringify(e.left)}`)
  return e.right
}

const faulty = async (timeout = 60_000) => {
  const conn = await spawnServer({ script: FAULTY_SERVER })
  const tools = fromMcpClient(conn.client, { timeout })
  return { conn, tools, declarations: rightOf(await tools.toolsForLlm()) }
}

describe('faults', () => {
  it('lists a tool whose schema the SDK rejects, as it came, next to the others', async () => {
    const { conn, tools, declarations } = await faulty()
    await expect(conn.client.listTools()).rejects.toThrow()
    expect(declarations.map((d) => d.function.name)).toEqual([
      'echo',
      'die',
      'hang',
      'babble',
      'wrong_shape',
      'rpc_error',
      'stubborn',
      'odd',
    ])
    expect(declarations.find((d) => d.function.name === 'odd')?.function.parameters).toHaveProperty('anyOf')
    const out = rightOf(
      await tools.executeToolCalls([call('1', 'odd', { a: 'x' }), call('2', 'echo', { text: 'hi' })])(),
    )
    expect(out).toEqual([answered('1', 'odd got {"a":"x"}'), answered('2', 'hi')])
  })

  it('a server that dies mid-batch: the calls before it keep their results, the rest say the connection closed', async () => {
    const { conn, tools } = await faulty()
    const pid = conn.pid as number
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'echo', { text: 'before' }),
        call('2', 'die'),
        call('3', 'echo', { text: 'after' }),
        call('4', 'nope'),
      ])(),
    )
    expect(out).toEqual([
      answered('1', 'before'),
      {
        role: 'tool',
        tool_call_id: '2',
        content: 'the connection to the MCP server is closed; the tool may or may not have run',
        is_error: true,
      },
      {
        role: 'tool',
        tool_call_id: '3',
        content: 'the connection to the MCP server is closed; the tool may or may not have run',
        is_error: true,
      },
      {
        role: 'tool',
        tool_call_id: '4',
        content: 'there is no tool named "nope" on this MCP server; the tool was not called',
        is_error: true,
      },
    ])
    expect(isAlive(pid)).toBe(false)
    // and the listing now fails, rather than coming back shorter
    const listed = await tools.toolsForLlm()
    expect(listed._tag === 'Left' && listed.left.message).toBe(
      'tools/list failed on page 1: the connection to the MCP server is closed',
    )
  })

  it('a server that hangs past the timeout: that call times out, the next one is answered', async () => {
    const { tools } = await faulty(300)
    const started = Date.now()
    const out = rightOf(await tools.executeToolCalls([call('1', 'hang'), call('2', 'echo', { text: 'still here' })])())
    expect(Date.now() - started).toBeLessThan(3000)
    expect(out).toEqual([
      {
        role: 'tool',
        tool_call_id: '1',
        content:
          'the MCP server did not answer within 300 ms, so the call was cancelled; the tool may or may not have run',
        is_error: true,
      },
      answered('2', 'still here'),
    ])
  })

  it('a server that answers garbage: a result that is not a tool result, a line that is not JSON, a JSON-RPC error', async () => {
    const { tools } = await faulty(300)
    const out = rightOf(
      await tools.executeToolCalls([
        call('1', 'wrong_shape'),
        call('2', 'babble'),
        call('3', 'rpc_error'),
        call('4', 'echo', { text: 'fine' }),
      ])(),
    )
    expect(out.map((r) => r.tool_call_id)).toEqual(['1', '2', '3', '4'])
    // the first problem the SDK's schema found, where and what: its message is pretty-printed JSON, whose first line is `[`
    expect(out[0]).toEqual({
      role: 'tool',
      tool_call_id: '1',
      content:
        "the MCP server's answer is not a valid tool result (content: Invalid input: expected array, received string)",
      is_error: true,
    })
    // the SDK drops a line it cannot parse, so the call is never answered
    expect(out[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/did not answer within 300 ms/) })
    expect(out[2]).toEqual({
      role: 'tool',
      tool_call_id: '3',
      content: 'the MCP server answered with an error: MCP error -32603: the tool broke inside',
      is_error: true,
    })
    expect(out[3]).toEqual(answered('4', 'fine'))
  })

  it("a JSON-RPC error's text reaches the model escaped and cut: its first line, no control character, bounded", async () => {
    const { tools } = await faulty(2_000)
    const message = `\u001b]0;owned\u0007\u001b[2Jred\rover\u202egnp.exe ${'x'.repeat(100_000)}\nsecond line`
    const [out] = rightOf(await tools.executeToolCalls([call('1', 'rpc_error', { message })])())
    const content = String(out?.content)
    expect(content.startsWith('the MCP server answered with an error: MCP error -32603: ')).toBe(true)
    expect(content).toContain('\\u001b]0;owned\\u0007\\u001b[2Jred\\u000dover\\u202egnp.exe xxx')
    expect([...content].filter((c) => c < ' ' || c === '\u007f' || c === '\u202e')).toEqual([])
    expect(content).not.toContain('second line')
    expect(content.length).toBeLessThan(500)
  })

  it("a tool whose schema nests 3,000 levels deep is left out; the server's other tools are listed and called", async () => {
    const conn = await spawnServer({ script: HOSTILE_LISTING, args: ['deep', '3000'] })
    const tools = fromMcpClient(conn.client)
    const declarations = rightOf(await tools.toolsForLlm())
    expect(declarations.map((d) => d.function.name)).toEqual(['echo'])
    // what the listing holds can be written as JSON again (a change of tools is compared that way, a host sent it)
    expect(() => JSON.stringify(declarations)).not.toThrow()
    expect(tools.tools().map((t) => t.name)).toEqual(['echo'])
    expect(tools.leftOut().map((t) => t.name)).toEqual(['deep'])
    const out = rightOf(await tools.executeToolCalls([call('1', 'echo', { text: 'hi' }), call('2', 'deep')])())
    expect(out).toEqual([
      answered('1', 'hi'),
      {
        role: 'tool',
        tool_call_id: '2',
        content:
          'the MCP server lists a tool named "deep", but the listing left it out: its input schema or annotations nest deeper than 100 levels; the tool was not called',
        is_error: true,
      },
    ])
  })

  it('a page of tools no schema reads: the listing fails saying where and what, not the first line of a JSON dump', async () => {
    const conn = await spawnServer({ script: HOSTILE_LISTING, args: ['bad-cursor'] })
    const listed = await fromMcpClient(conn.client).toolsForLlm()
    expect(listed._tag === 'Left' && listed.left.message).toBe(
      'tools/list failed on page 1: the answer could not be read (nextCursor: Invalid input: expected string, received number)',
    )
  })

  it('close ends a server that ignores the end of its input and SIGTERM', async () => {
    const { conn, tools } = await faulty(100)
    const pid = conn.pid as number
    const out = rightOf(await tools.executeToolCalls([call('1', 'hang'), call('2', 'stubborn')])())
    expect(out[1]?.content).toBe('you cannot stop me')
    const started = Date.now()
    await conn.close()
    expect(isAlive(pid)).toBe(false)
    // the grace the fixture gives (1 s), then SIGKILL
    expect(Date.now() - started).toBeLessThan(3000)
  })
})
