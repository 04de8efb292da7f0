// claudeAgentAudit and claudeAgentPolicy as the SDK types them, called with the inputs the SDK documents (no
// process: the real sessions are in session.test.ts): what the hooks answer, how they fail, and how an
// in-process server's listing is heard on the transport the SDK connects it to.
import type { CanUseTool, HookCallback, HookInput } from '@anthropic-ai/claude-agent-sdk'
import { createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import fc from 'fast-check'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { claudeAgentAudit, claudeAgentPolicy } from '../../src/claude-agent/index.js'
import { mcpToolName } from '../../src/claude-agent/servers.js'
import { pre, run, signal } from './hook.js'

const permission = { signal, toolUseID: 'toolu_9', requestId: 'req_1' }

// an in-process server, connected as the SDK connects it: to a transport of the SDK's, here one end of a pair
const connectAsTheSdkDoes = async (config: unknown): Promise<Client> => {
  const [serverEnd, clientEnd] = InMemoryTransport.createLinkedPair()
  await (config as { instance: { connect: (t: unknown) => Promise<void> } }).instance.connect(serverEnd)
  const client = new Client({ name: 'cli', version: '1' })
  await client.connect(clientEnd)
  return client
}

describe('claudeAgentAudit', () => {
  it('hears an in-process server’s listing on its way to the CLI, then each call against it; it only listens', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const notes = createSdkMcpServer({
      name: 'my notes',
      tools: [
        tool(
          'search.v2',
          'Searches',
          { query: z.string(), opts: z.object({ limit: z.number() }).optional() },
          async () => ({
            content: [],
          }),
        ),
      ],
    })
    const audit = await claudeAgentAudit({ mcpServers: { 'my notes': notes }, onWarn: (w) => void warnings.push(w) })
    const hook = audit.preToolUse.hooks[0]
    // before the CLI lists it, the server's tools are unknown: nothing is said
    expect(await run(hook, pre('mcp__my_notes__search_v2', { query: 'a', opts: { limmit: 1 } }))).toEqual({})
    expect(warnings).toEqual([])
    const client = await connectAsTheSdkDoes(audit.mcpServers['my notes'])
    const listed = await client.listTools()
    expect(listed.tools.map((t) => t.name)).toEqual(['search.v2'])
    expect(audit.auditedTools()).toEqual(['mcp__my_notes__search_v2'])
    const input = { query: 'a', opts: { limmit: 1 } }
    expect(await run(hook, pre('mcp__my_notes__search_v2', input, 'toolu_2'))).toEqual({})
    expect(await run(hook, pre('mcp__my_notes__search_v2', input, 'toolu_3'))).toEqual({})
    expect(input).toEqual({ query: 'a', opts: { limmit: 1 } })
    expect(warnings.map((w) => [w.tool, w.id, w.unknownKeys, w.suggestions])).toEqual([
      ['mcp__my_notes__search_v2', 'toolu_2', ['opts.limmit'], [{ key: 'opts.limmit', didYouMean: 'opts.limit' }]],
    ])
    expect(audit.stats()).toEqual([
      { tool: 'mcp__my_notes__search_v2', key: 'opts.limmit', calls: 2, firstId: 'toolu_2' },
    ])
    // the server still answers through the observed transport
    expect((await client.callTool({ name: 'search.v2', arguments: { query: 'a' } })).content).toEqual([])
    await client.close()
  })

  it('passes every other server config on as the same object, and spreads into query()’s options', async () => {
    const remote = { type: 'http' as const, url: 'http://127.0.0.1:9/mcp' }
    const notes = createSdkMcpServer({ name: 'notes' })
    // the http server cannot be reached: the audit cannot be made, and says which server
    await expect(claudeAgentAudit({ mcpServers: { remote } })).rejects.toThrow(
      /^toolstack\/claude-agent: the MCP server "remote" could not be listed: /,
    )
    const audit = await claudeAgentAudit({ mcpServers: { notes }, onWarn: () => undefined })
    expect(audit.options.mcpServers).toBe(audit.mcpServers)
    expect(audit.options.hooks).toEqual({ PreToolUse: [audit.preToolUse] })
    expect(audit.mcpServers['notes']).not.toBe(notes)
    expect(audit.mcpServers['notes']?.type).toBe('sdk')
  })

  it('never throws into the session, whatever the hook is handed', async () => {
    const audit = await claudeAgentAudit({ onWarn: () => undefined })
    const hook = audit.preToolUse.hooks[0]
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap')
        },
      },
    )
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.anything(), fc.constant(hostile)), async (input) => {
        expect(await run(hook, input as HookInput)).toEqual({})
      }),
    )
  })

  it('refuses options it cannot use at once: a TypeError, not a rejection', async () => {
    expect(() => claudeAgentAudit('x' as never)).toThrow('claudeAgentAudit: options must be an object')
    expect(() => claudeAgentAudit({ mcpServers: [] as never })).toThrow(
      'claudeAgentAudit: option "mcpServers" must be a record of server configs',
    )
    expect(() => claudeAgentAudit({ onWran: 1 } as never)).toThrow(/unknown option "onWran"/)
    await expect(claudeAgentAudit()).resolves.toMatchObject({ mcpServers: {} })
  })
})

describe('claudeAgentPolicy', () => {
  const rules = [
    { tool: 'Read', decision: 'allow' as const },
    { tool: 'Write', decision: 'deny' as const, under: '/etc', note: 'system files are not ours' },
    { tool: 'mcp__fs__*', decision: 'ask' as const, note: 'a human reads first' },
  ]

  it('the hook answers the rules’ permissionDecision, with a reason the model can act on', async () => {
    const hook = claudeAgentPolicy({ rules }).preToolUse.hooks[0]
    expect(await run(hook, pre('Read', { file_path: '/srv/a' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'the permission policy allows this call',
      },
    })
    expect(await run(hook, pre('Write', { file_path: '/etc/hosts', content: '' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason:
          'The permission policy refused this call to "Write" (rule: deny "Write" under /etc). Reason: system files are not ours. It was not run; do not retry it as is.',
      },
    })
    expect(await run(hook, pre('mcp__fs__read_text_file', { path: '/srv/a' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: 'the permission policy asks: ask "mcp__fs__*": a human reads first',
      },
    })
    // no rule: ask, as withPolicy asks
    expect(await run(hook, pre('Bash', { command: 'ls' }))).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'ask',
        permissionDecisionReason: 'the permission policy asks: no rule allows this call',
      },
    })
    // a write whose location cannot be read is refused, not allowed
    expect(await run(hook, pre('Write', { file_path: 42 }))).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny' },
    })
    // another event: no decision
    expect(
      await run(hook, { ...pre('Read', {}), hook_event_name: 'PostToolUse', tool_response: {} } as HookInput),
    ).toEqual({})
  })

  it('canUseTool: the rules answer, the very input allowed; what they ask about goes to the host’s prompt, its answer the SDK’s', async () => {
    const host: Array<string> = []
    const answer = { behavior: 'allow' as const, updatedInput: { path: '/srv/b' } }
    const policy = claudeAgentPolicy({
      rules,
      canUseTool: async (tool) => {
        host.push(tool)
        return answer
      },
    })
    const input = { file_path: '/srv/a' }
    const allowed = await policy.canUseTool('Read', input, permission)
    expect(allowed).toEqual({ behavior: 'allow', updatedInput: input, toolUseID: 'toolu_9' })
    expect(allowed?.behavior === 'allow' ? allowed.updatedInput : undefined).toBe(input)
    expect(await policy.canUseTool('Write', { file_path: '/etc/passwd', content: '' }, permission)).toMatchObject({
      behavior: 'deny',
      message: expect.stringMatching(/^The permission policy refused this call to "Write"/) as unknown,
      toolUseID: 'toolu_9',
    })
    expect(await policy.canUseTool('mcp__fs__read_text_file', { path: '/srv/a' }, permission)).toBe(answer)
    expect(host).toEqual(['mcp__fs__read_text_file'])
  })

  it('canUseTool without a host, or with one that fails: refused, saying why', async () => {
    expect(await claudeAgentPolicy({ rules }).canUseTool('Bash', { command: 'ls' }, permission)).toEqual({
      behavior: 'deny',
      message:
        'This call to "Bash" needs the user\'s permission, and no one is available to give it, so it was not run. Use a tool the policy allows, or ask the user to allow "Bash".',
      toolUseID: 'toolu_9',
    })
    const failing = claudeAgentPolicy({
      rules,
      canUseTool: () => Promise.reject(new Error('the prompt closed')),
    })
    expect(await failing.canUseTool('Bash', {}, permission)).toMatchObject({
      behavior: 'deny',
      message: expect.stringContaining('asking failed (the prompt closed)') as unknown,
    })
  })

  it('fails closed when the rules cannot judge a call: the hook asks, canUseTool refuses, each saying why', async () => {
    // an input that throws whatever is asked of it (a revoked Proxy), and a tool name that is not a string, as a
    // hostile or newer CLI may send them
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    const policy = claudeAgentPolicy({ rules: [{ tool: '*', decision: 'allow', under: '/srv' }] })
    expect(await run(policy.preToolUse.hooks[0], pre('Read', proxy))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: expect.stringMatching(
          /^the permission policy could not judge this call \(.*revoked\)$/,
        ),
      },
    })
    expect(await policy.canUseTool('Read', proxy as Record<string, unknown>, permission)).toEqual({
      behavior: 'deny',
      message: expect.stringMatching(
        /^The permission policy could not judge this call \(.*revoked\); it was not run\.$/,
      ),
      toolUseID: 'toolu_9',
    })
    expect(await policy.canUseTool(7 as never, { file_path: '/srv/a' }, { signal, requestId: 'r' } as never)).toEqual({
      behavior: 'deny',
      message: expect.stringMatching(/^The permission policy could not judge this call \(.+\); it was not run\.$/),
    })
  })

  it('the hook judges a call whose tool name is not a string as a call to the tool named ""', async () => {
    // "" matches only the rule for every tool; any name beginning with S would be denied
    const hook = claudeAgentPolicy({
      rules: [
        { tool: '*', decision: 'ask', note: 'every tool' },
        { tool: 'S*', decision: 'deny' },
      ],
    }).preToolUse.hooks[0]
    expect(await run(hook, pre(7, { path: '/srv/a' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: 'the permission policy asks: ask "*": every tool',
      },
    })
    expect(await run(hook, pre('Some', {}))).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } })
  })

  it('refuses a bad rule or a prompt that is not a function, at once', () => {
    expect(() => claudeAgentPolicy({ rules: [{ tool: '', decision: 'allow' }] })).toThrow(
      /^claudeAgentPolicy: rules\[0\]/,
    )
    expect(() => claudeAgentPolicy({ rules, canUseTool: 'yes' as never })).toThrow(
      'claudeAgentPolicy: option "canUseTool" must be a function, got the string "yes"',
    )
    expect(() => claudeAgentPolicy(null as never)).toThrow(
      new TypeError('claudeAgentPolicy: options must be an object { rules, roots?, canUseTool? }, got null'),
    )
  })

  it('fits the SDK’s own types, without a cast', () => {
    expectTypeOf(claudeAgentPolicy({ rules }).canUseTool).toExtend<CanUseTool>()
    expectTypeOf(claudeAgentPolicy({ rules }).preToolUse.hooks).toExtend<ReadonlyArray<HookCallback>>()
  })
})

describe('mcpToolName', () => {
  it('keeps letters, digits, _ and -, and replaces every other character of each part with _', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (server, name) => {
        const out = mcpToolName(server, name)
        const clean = (s: string) => [...s].map((c) => (/^[a-zA-Z0-9_-]$/.test(c) ? c : '_')).join('')
        expect(out).toBe(`mcp__${clean(server)}__${clean(name)}`)
      }),
    )
  })
})
