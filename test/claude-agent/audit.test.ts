// claudeAgentAudit's listing and claudeAgentPolicy's reading of a call, without a CLI: an in-process server whose
// transport the test drives (the pages a server sends on their way to the CLI), a server reached over HTTP, and
// the policy over Claude Code's location names, roots, and inputs it cannot read.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { HookInput } from '@anthropic-ai/claude-agent-sdk'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { sharedUnknownKeyAudit } from '../../src/index.js'
import { claudeAgentAudit, claudeAgentPolicy } from '../../src/claude-agent/index.js'
import { declarationsOfServers } from '../../src/claude-agent/audit.js'
import { lowLevelServer } from '../mcp/fixtures.js'
import { pre, run, signal } from './hook.js'

const closers: Array<() => void> = []
afterEach(() => {
  for (const c of closers.splice(0)) c()
})

// an in-process server as the SDK holds it, whose transport the test is handed when the SDK connects it
const inProcess = () => {
  const transports: Array<Transport> = []
  const instance = {
    connect: (t: Transport) => {
      transports.push(t)
      return Promise.resolve()
    },
    name: 'fake',
  }
  return { config: { type: 'sdk' as const, name: 'fake', instance: instance as never }, transports }
}

// the observed entry, as the SDK reads it
type Connectable = { readonly instance: { readonly connect: (t: Transport) => Promise<void> } }

// a transport of the SDK's that records what the server sends through it
const recording = () => {
  const sent: Array<JSONRPCMessage> = []
  const transport: Transport = {
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    send: (m) => {
      sent.push(m)
      return Promise.resolve()
    },
  }
  return { sent, transport }
}

const page = (id: number, tools: ReadonlyArray<unknown>): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id, result: { tools } }) as JSONRPCMessage

describe('claudeAgentAudit, an in-process server’s listing', () => {
  it('hears each page the server sends: a page adds to the tools before it, a tool listed again is replaced', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const { config, transports } = inProcess()
    const audit = await claudeAgentAudit({ mcpServers: { notes: config }, onWarn: (w) => void warnings.push(w) })
    const { sent, transport } = recording()
    await (audit.mcpServers['notes'] as unknown as Connectable).instance.connect(transport)
    const observed = transports[0]
    if (observed === undefined) throw new Error('not connected')
    const first = page(1, [{ name: 'a', inputSchema: { type: 'object', properties: { x: {} } } }])
    await observed.send(first)
    await observed.send(page(2, [{ name: 'b', inputSchema: { type: 'object', properties: { y: {} } } }]))
    await observed.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
    expect(sent[0]).toBe(first)
    expect(sent).toHaveLength(3)
    expect(audit.auditedTools()).toEqual(['mcp__notes__a', 'mcp__notes__b'])
    await run(audit.preToolUse.hooks[0], pre('mcp__notes__a', { x: 1, xx: 1 }))
    await observed.send(page(3, [{ name: 'a', inputSchema: { type: 'object', properties: { xx: {} } } }]))
    await run(audit.preToolUse.hooks[0], pre('mcp__notes__a', { x: 1, xx: 1 }, 'toolu_2'))
    await run(audit.preToolUse.hooks[0], pre('mcp__notes__b', { y: 1, z: 1 }, 7))
    expect(warnings.map((w) => `${w.tool} ${w.id} ${w.unknownKeys.join()}`)).toEqual([
      'mcp__notes__a toolu_1 xx',
      'mcp__notes__a toolu_2 x',
      'mcp__notes__b  z',
    ])
  })

  it('a hook input that is not a PreToolUse, or names no tool, is not heard', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const { config, transports } = inProcess()
    const audit = await claudeAgentAudit({ mcpServers: { notes: config }, onWarn: (w) => void warnings.push(w) })
    await (audit.mcpServers['notes'] as unknown as Connectable).instance.connect(recording().transport)
    await transports[0]?.send(page(1, [{ name: 'a', inputSchema: { type: 'object', properties: { x: {} } } }]))
    const hook = audit.preToolUse.hooks[0]
    expect(await run(hook, { ...pre('mcp__notes__a', { k: 1 }), hook_event_name: 'PostToolUse' } as HookInput)).toEqual(
      {},
    )
    expect(await run(hook, pre(5, { k: 1 }))).toEqual({})
    expect(warnings).toEqual([])
  })
})

describe('claudeAgentAudit, shared', () => {
  it('with a sharedUnknownKeyAudit as its options, its warnings say they came from the hook', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const { config, transports } = inProcess()
    const shared = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const audit = await claudeAgentAudit({ ...shared, mcpServers: { notes: config } })
    await (audit.mcpServers['notes'] as unknown as Connectable).instance.connect(recording().transport)
    await transports[0]?.send(page(1, [{ name: 'a', inputSchema: { type: 'object', properties: { x: {} } } }]))
    await run(audit.preToolUse.hooks[0], pre('mcp__notes__a', { x: 1, k: 1 }))
    expect(warnings.map((w) => [w.tool, w.via])).toEqual([['mcp__notes__a', 'claude-agent-hook']])
  })
})

describe('claudeAgentAudit, a server the CLI reaches', () => {
  it('is listed when the audit is made, its tools named as the CLI names them', async () => {
    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const transport = new StreamableHTTPServerTransport({})
      await lowLevelServer([
        { name: 'find', inputSchema: { type: 'object', properties: { q: {} } } },
        { name: 'bare', inputSchema: { type: 'object' } },
      ]).connect(transport)
      return transport.handleRequest(req, res)
    }
    const server = createServer((req, res) => void handle(req, res))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    closers.push(() => (server.closeAllConnections(), server.close()))
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`
    const warnings: Array<UnknownKeyWarning> = []
    const audit = await claudeAgentAudit({
      mcpServers: { 'web.x': { type: 'http', url } },
      onWarn: (w) => void warnings.push(w),
    })
    expect(audit.auditedTools()).toEqual(['mcp__web_x__find'])
    await run(audit.preToolUse.hooks[0], pre('mcp__web_x__find', { q: 1, r: 2 }))
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['r']])
  })
})

describe('declarationsOfServers', () => {
  it('each server’s tools, pages as a map or a list; a schema that is not an object declares nothing', () => {
    const schema = { type: 'object', properties: { q: {} } }
    expect(
      declarationsOfServers(
        new Map<
          string,
          | ReadonlyMap<string, { name: string; inputSchema: unknown }>
          | ReadonlyArray<{ name: string; inputSchema: unknown }>
        >([
          ['a b', new Map([['t', { name: 't', inputSchema: schema }]])],
          ['c', [{ name: 'u.v', inputSchema: 'x' }]],
        ]),
      ),
    ).toEqual([
      { type: 'function', function: { name: 'mcp__a_b__t', parameters: schema } },
      { type: 'function', function: { name: 'mcp__c__u_v' } },
    ])
  })
})

describe('claudeAgentPolicy, reading a call', () => {
  const rules = [
    { tool: 'Write', decision: 'allow' as const, under: '/srv' },
    { tool: 'Write', decision: 'deny' as const, under: '/srv/secret', note: 'secret' },
    { tool: 'NotebookEdit', decision: 'deny' as const, under: '/etc' },
    { tool: 'NotebookEdit', decision: 'allow' as const, under: '/srv' },
  ]

  it('reads Claude Code’s notebook_path, and resolves a relative location against the roots', async () => {
    const policy = claudeAgentPolicy({ rules, roots: { '': '/srv' } })
    const hook = policy.preToolUse.hooks[0]
    const decision = async (tool: string, input: unknown) =>
      ((await run(hook, pre(tool, input))) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput
        .permissionDecision
    expect(await decision('NotebookEdit', { notebook_path: '/etc/x.ipynb' })).toBe('deny')
    expect(await decision('NotebookEdit', { notebook_path: '/srv/x.ipynb' })).toBe('allow')
    expect(await decision('Write', { file_path: 'secret/key' })).toBe('deny')
    expect(await decision('Write', { file_path: 'notes.md' })).toBe('allow')
    // a hook input without a tool name is judged as the tool ""
    expect(await decision('', {})).toBe('ask')
    expect(await run(hook, pre(undefined, {}))).toEqual(await run(hook, pre('', {})))
  })

  it('canUseTool without a toolUseID answers without one', async () => {
    const policy = claudeAgentPolicy({ rules: [{ tool: 'Read', decision: 'allow' }] })
    const input = { file_path: '/a' }
    expect(await policy.canUseTool('Read', input, { signal } as never)).toStrictEqual({
      behavior: 'allow',
      updatedInput: input,
    })
    expect(await policy.canUseTool('Read', input, { signal, toolUseID: 5 } as never)).toStrictEqual({
      behavior: 'allow',
      updatedInput: input,
    })
  })
})
