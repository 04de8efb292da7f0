// LangGraph's own ToolNode, invoked with an AIMessage carrying tool_calls: over a
// toolstack stack on the real filesystem MCP server, and over a user's own zod tool
// with UnknownKeyAuditHandler listening.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ToolMessage } from '@langchain/core/messages'
import { AIMessage } from '@langchain/core/messages'
import { DynamicStructuredTool, tool } from '@langchain/core/tools'
import { ToolNode } from '@langchain/langgraph/prebuilt'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Rule, UnknownKeyWarning } from '../../src/index.js'
import { fromTools, readOnlyRules, withPolicy, withReasons, withUnknownKeyAudit } from '../../src/index.js'
import type { McpToolClient } from '../../src/mcp/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { UnknownKeyAuditHandler, toLangChainTools } from '../../src/langchain/index.js'
import { FILESYSTEM_SERVER, cleanUpAfterEach, spawnServer, tempDir } from '../mcp/fixtures.js'

cleanUpAfterEach()

const ask = (calls: ReadonlyArray<{ id: string; name: string; args: Record<string, unknown> }>) =>
  new AIMessage({ content: '', tool_calls: calls.map((c) => ({ ...c, type: 'tool_call' as const })) })

const messagesOf = (out: unknown): Array<ToolMessage> => (out as { messages: Array<ToolMessage> }).messages

describe('toLangChainTools in a ToolNode over server-filesystem', () => {
  it('keys pass LangChain’s validation to the stack: haed is heard, the server gets no reason, a refusal is an error ToolMessage', async () => {
    const dir = tempDir()
    const path = join(dir, 'notes.txt')
    writeFileSync(path, 'one\ntwo\n')
    const conn = await spawnServer({ script: FILESYSTEM_SERVER, args: [dir] })
    const received: Array<unknown> = []
    const client: McpToolClient = {
      listTools: (p, o) => conn.client.listTools(p, o),
      callTool: (p, s, o) => {
        received.push(p)
        return conn.client.callTool(p, s, o)
      },
    }
    const warnings: Array<UnknownKeyWarning> = []
    const rules: ReadonlyArray<Rule> = [
      ...readOnlyRules(''),
      { tool: 'write_file', decision: 'deny', under: dir, note: 'read-only agent' },
    ]
    const stack = pipe(
      fromMcpClient(client),
      withReasons(),
      withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
      withPolicy({ rules }),
    )
    const tools = await toLangChainTools(stack)
    const listed = (await stack.toolsForLlm())._tag
    expect(listed).toBe('Right')
    const read = tools.find((t) => t.name === 'read_text_file')
    expect(read?.schema).not.toHaveProperty('additionalProperties')

    const out = await new ToolNode(tools).invoke({
      messages: [
        ask([
          { id: 'call_1', name: 'read_text_file', args: { path, haed: 1, reason: 'the user asked' } },
          { id: 'call_2', name: 'write_file', args: { path, content: '' } },
        ]),
      ],
    })
    const [first, second] = messagesOf(out)
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.id, w.suggestions])).toEqual([
      ['read_text_file', ['haed'], 'call_1', [{ key: 'haed', didYouMean: 'head' }]],
    ])
    expect(received).toEqual([{ name: 'read_text_file', arguments: { path, haed: 1 } }])
    expect(first).toMatchObject({ tool_call_id: 'call_1', status: 'success', content: 'one\ntwo\n' })
    // the whole result is the artifact: the structured content survives, unseen by the model
    expect(first?.artifact).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'one\ntwo\n',
      structured_content: { content: 'one\ntwo\n' },
      mcp_content: [{ type: 'text', text: 'one\ntwo\n' }],
    })
    expect(second).toMatchObject({
      tool_call_id: 'call_2',
      status: 'error',
      content: expect.stringMatching(/^The permission policy refused this call to "write_file".*read-only agent/),
    })
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\n')
  })

  it('a declared additionalProperties: false would have LangChain refuse the key; the stack’s tool lets it through to the audit', async () => {
    const parameters: Record<string, unknown> = {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    }
    const warnings: Array<UnknownKeyWarning> = []
    const stack = pipe(
      fromTools([
        {
          declaration: { type: 'function', function: { name: 'read', parameters } },
          run: (a) => `read ${String(a['path'])}`,
        },
      ]),
      withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
    )
    await stack.toolsForLlm()
    const calls = [{ id: 'c1', name: 'read', args: { path: '/a', pth: 1 } }]
    const asDeclared = new DynamicStructuredTool({
      name: 'read',
      description: 'Reads',
      schema: parameters,
      func: async () => 'ran',
    })
    const refused = messagesOf(await new ToolNode([asDeclared]).invoke({ messages: [ask(calls)] }))[0]
    expect(refused).toMatchObject({
      status: 'error',
      content: expect.stringContaining('did not match expected schema'),
    })
    const passed = messagesOf(await new ToolNode(await toLangChainTools(stack)).invoke({ messages: [ask(calls)] }))[0]
    expect(passed).toMatchObject({ status: 'success', content: 'read /a' })
    expect(warnings.map((w) => [w.tool, w.unknownKeys])).toEqual([['read', ['pth']]])
  })

  it('invoked directly, without a tool call, an is_error result is thrown; a listing that fails rejects', async () => {
    const provider = {
      toolsForLlm: () =>
        Promise.resolve({
          _tag: 'Right' as const,
          right: [
            {
              type: 'function' as const,
              function: { name: 'nope', parameters: { type: 'object', properties: { a: {} } } },
            },
          ],
        }),
      executeToolCalls: (calls: ReadonlyArray<{ id: string }>) => () =>
        Promise.resolve({
          _tag: 'Right' as const,
          right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'refused', is_error: true })),
        }),
    }
    const [t] = await toLangChainTools(provider)
    await expect(t?.invoke({ a: 1 })).rejects.toThrow('refused')
    await expect(
      toLangChainTools({
        toolsForLlm: () => Promise.resolve({ _tag: 'Left' as const, left: 'down' }),
        executeToolCalls: provider.executeToolCalls,
      }),
    ).rejects.toMatchObject({ name: 'ProviderFailure', left: 'down' })
  })
})

describe('UnknownKeyAuditHandler over a user’s own zod tool', () => {
  it('hears the key zod strips, once per (tool, key); the tool’s answer is unchanged', async () => {
    const executed: Array<unknown> = []
    const read = tool(
      async (input) => {
        executed.push(input)
        return `read ${input.path}`
      },
      {
        name: 'read',
        description: 'Reads a file',
        schema: z.object({ path: z.string(), offset: z.number().optional() }),
      },
    )
    const warnings: Array<UnknownKeyWarning> = []
    const audit = new UnknownKeyAuditHandler([read], { onWarn: (w) => void warnings.push(w) })
    expect(audit.auditedTools()).toEqual(['read'])
    const node = new ToolNode([read])
    const withAudit = await node.invoke(
      { messages: [ask([{ id: 'c1', name: 'read', args: { path: '/a', ffset: 3 } }])] },
      { callbacks: [audit] },
    )
    await node.invoke(
      { messages: [ask([{ id: 'c2', name: 'read', args: { path: '/a', ffset: 3 } }])] },
      { callbacks: [audit] },
    )
    const without = await node.invoke({ messages: [ask([{ id: 'c1', name: 'read', args: { path: '/a', ffset: 3 } }])] })

    expect(warnings).toEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        keys: [{ key: 'ffset', place: [], path: 'ffset' }],
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 2, firstId: 'c1' }])
    expect(executed).toEqual([{ path: '/a' }, { path: '/a' }, { path: '/a' }])
    const pick = (m: ToolMessage | undefined) => ({
      content: m?.content,
      status: m?.status,
      tool_call_id: m?.tool_call_id,
    })
    expect(pick(messagesOf(withAudit)[0])).toEqual(pick(messagesOf(without)[0]))
    expect(pick(messagesOf(withAudit)[0])).toEqual({ content: 'read /a', status: 'success', tool_call_id: 'c1' })
  })

  it('a call the schema rejects fires no callback: the handler cannot hear it (LangChain validates first)', async () => {
    const strict = tool(async () => 'ran', {
      name: 'strict_read',
      description: 'Reads',
      schema: z.strictObject({ path: z.string() }),
    })
    const warnings: Array<UnknownKeyWarning> = []
    const audit = new UnknownKeyAuditHandler([strict], { onWarn: (w) => void warnings.push(w) })
    const out = await new ToolNode([strict]).invoke(
      { messages: [ask([{ id: 'c1', name: 'strict_read', args: { path: '/a', ffset: 3 } }])] },
      { callbacks: [audit] },
    )
    expect(messagesOf(out)[0]).toMatchObject({
      status: 'error',
      content: expect.stringContaining('Unrecognized key: "ffset"'),
    })
    expect(warnings).toEqual([])
    expect(() => new UnknownKeyAuditHandler([strict], { tolerate: 'x' } as never)).toThrow(
      /UnknownKeyAuditHandler: tolerate must be/,
    )
  })
})
