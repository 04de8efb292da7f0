// The OpenAI Agents SDK's own run() over an Agent driven by its ScriptedModel
// (@openai/agents/testing): the alarm around a user's zod tool, a toolstack stack over
// the real filesystem MCP server as the SDK's function tools, and a policy ask as the
// SDK's approval interruption.
import { writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FunctionTool } from '@openai/agents'
import { Agent, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { pipe } from 'fp-ts/lib/function.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Rule, UnknownKeyWarning } from '../../src/index.js'
import { readOnlyRules, withPolicy, withReasons, withUnknownKeyAudit } from '../../src/index.js'
import type { McpToolClient } from '../../src/mcp/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { auditAgentsTools, policyApproval, toAgentsTools } from '../../src/openai-agents/index.js'
import { FILESYSTEM_SERVER, cleanUpAfterEach, spawnServer, tempDir } from '../mcp/fixtures.js'
import { outputsSent, text } from './support.js'

cleanUpAfterEach()
beforeAll(() => setTracingDisabled(true))

describe('auditAgentsTools: a user’s own zod tool', () => {
  const readTool = (seen: Array<unknown>) =>
    tool({
      name: 'read',
      description: 'Reads a file',
      parameters: z.object({ path: z.string(), offset: z.number().nullable() }),
      execute: async (input) => {
        seen.push(input)
        return `read ${input.path}`
      },
    })

  it('reports the misspelled key once across runs; the tool runs with the stripped input and its result is unchanged', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const executed: Array<unknown> = []
    const audited = auditAgentsTools([readTool(executed)], { onWarn: (w) => void warnings.push(w) })
    expect(audited.auditedTools()).toEqual(['read'])
    const models = ['c1', 'c2'].map(
      (id) =>
        new ScriptedModel([
          [functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: id })],
          [assistantMessage('done')],
        ]),
    )
    for (const model of models) {
      const r = await run(new Agent({ name: 'reader', instructions: 'read', model, tools: [...audited.tools] }), 'go')
      expect(r.finalOutput).toBe('done')
    }
    expect(warnings).toEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
    expect(audited.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 2, firstId: 'c1' }])
    expect(executed).toEqual([
      { path: '/a', offset: null },
      { path: '/a', offset: null },
    ])
    // the same as without the alarm
    const bare = new ScriptedModel([
      [functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: 'c1' })],
      [assistantMessage('done')],
    ])
    await run(new Agent({ name: 'reader', instructions: 'read', model: bare, tools: [readTool([])] }), 'go')
    expect(outputsSent(models[0] as ScriptedModel).get('c1')).toEqual(outputsSent(bare).get('c1'))
    expect(outputsSent(bare).get('c1')).toEqual(text('read /a'))
  })

  it('wraps function tools only, each a new object over the very same invoke; a tool with nothing declared is passed on as it is', async () => {
    const read = readTool([])
    const ping = tool({ name: 'ping', description: 'Pings', parameters: z.object({}), execute: async () => 'pong' })
    const hosted = { type: 'hosted_tool', name: 'web_search', providerData: {} } as const
    const audited = auditAgentsTools([read, ping, hosted] as const, { onDiagnostic: () => undefined })
    expect(audited.tools[0]).not.toBe(read)
    expect(audited.tools[1]).toBe(ping)
    expect(audited.tools[2]).toBe(hosted)
    expect(() => auditAgentsTools([read], { maxPairs: -1 })).toThrow(/auditAgentsTools: maxPairs must be/)
  })

  it('the tool’s own failure is what the SDK gets, as without the alarm', async () => {
    const failing: FunctionTool = {
      type: 'function',
      name: 'hand',
      description: 'hand-built',
      strict: false,
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
        additionalProperties: true,
      },
      invoke: async () => Promise.reject(new Error('its own failure')),
      needsApproval: async () => false,
      isEnabled: async () => true,
    }
    const [audited] = auditAgentsTools([failing], { onWarn: () => undefined }).tools
    await expect(audited?.invoke({} as never, '{"pth":1}')).rejects.toThrow('its own failure')
  })
})

// -------------------------------------------------------------------------------------

const filesystem = async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'notes.txt'), 'one\ntwo\n')
  const conn = await spawnServer({ script: FILESYSTEM_SERVER, args: [dir] })
  const received: Array<{ name: string; arguments?: Record<string, unknown> }> = []
  const client: McpToolClient = {
    listTools: (p, o) => conn.client.listTools(p, o),
    callTool: (p, s, o) => {
      received.push(p)
      return conn.client.callTool(p, s, o)
    },
  }
  return { dir, client, received }
}

describe('toAgentsTools over server-filesystem', () => {
  it('the stack hears haed (did you mean head), the server gets no reason, a refusal is the model’s text', async () => {
    const { dir, client, received } = await filesystem()
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
    const tools = await toAgentsTools(stack)
    const read = tools.find((t) => t.name === 'read_text_file')
    expect(read?.strict).toBe(false)
    expect(Object.keys((read?.parameters.properties ?? {}) as object)).toEqual(
      expect.arrayContaining(['path', 'head', 'tail', 'reason']),
    )
    const path = join(dir, 'notes.txt')
    const model = new ScriptedModel([
      [
        functionCall('read_text_file', JSON.stringify({ path, haed: 1, reason: 'the user asked' }), {
          callId: 'call_1',
        }),
        functionCall('write_file', JSON.stringify({ path, content: '' }), { callId: 'call_2' }),
      ],
      [assistantMessage('done')],
    ])
    const r = await run(new Agent({ name: 'notes', instructions: 'read', model, tools }), 'read my notes')
    expect(r.finalOutput).toBe('done')
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.id, w.suggestions])).toEqual([
      ['read_text_file', ['haed'], 'call_1', [{ key: 'haed', didYouMean: 'head' }]],
    ])
    expect(received).toEqual([{ name: 'read_text_file', arguments: { path, haed: 1 } }])
    const sent = outputsSent(model)
    expect(sent.get('call_1')).toEqual(text('one\ntwo\n'))
    expect(sent.get('call_2')).toEqual(
      text(
        expect.stringMatching(
          /^Error: The permission policy refused this call to "write_file".*read-only agent/,
        ) as unknown as string,
      ),
    )
    expect(readFileSync(path, 'utf8')).toBe('one\ntwo\n')
  })

  it('never throws into the run: a provider that rejects is the model’s text, and the run ends', async () => {
    const broken = {
      toolsForLlm: () =>
        Promise.resolve({
          _tag: 'Right' as const,
          right: [
            {
              type: 'function' as const,
              function: { name: 'read', parameters: { type: 'object', properties: { path: {} } } },
            },
          ],
        }),
      executeToolCalls: () => () => Promise.reject(new Error('the host fell over')),
    }
    const model = new ScriptedModel([
      [functionCall('read', '{"path":"a"}', { callId: 'c1' })],
      [assistantMessage('done')],
    ])
    const r = await run(new Agent({ name: 'a', instructions: 'x', model, tools: await toAgentsTools(broken) }), 'go')
    expect(r.finalOutput).toBe('done')
    expect(outputsSent(model).get('c1')).toEqual(text('Error: the tool provider failed: the host fell over'))
  })

  it('a policy ask is the SDK’s interruption: approved, the call runs through the policy; rejected, it never reaches the server', async () => {
    for (const approve of [true, false]) {
      const { dir, client, received } = await filesystem()
      const rules: ReadonlyArray<Rule> = [...readOnlyRules(''), { tool: 'write_file', decision: 'ask', under: dir }]
      const approval = policyApproval({ rules })
      const stack = pipe(
        fromMcpClient(client),
        withUnknownKeyAudit({ onWarn: () => undefined }),
        withPolicy({ rules, onAsk: approval.onAsk }),
      )
      const target = join(dir, 'summary.md')
      const model = new ScriptedModel([
        [functionCall('write_file', JSON.stringify({ path: target, content: 'summary' }), { callId: 'w1' })],
        [assistantMessage('done')],
      ])
      const agent = new Agent({
        name: 'writer',
        instructions: 'write',
        model,
        tools: await toAgentsTools(stack, { approval }),
      })
      let r = await run(agent, 'save the summary')
      expect(r.interruptions.map((i) => i.rawItem)).toMatchObject([
        { type: 'function_call', name: 'write_file', callId: 'w1' },
      ])
      expect(received).toEqual([])
      for (const i of r.interruptions) {
        if (approve) r.state.approve(i)
        else r.state.reject(i)
      }
      r = await run(agent, r.state)
      expect(r.finalOutput).toBe('done')
      expect(received.map((c) => c.name)).toEqual(approve ? ['write_file'] : [])
      if (approve) expect(readFileSync(target, 'utf8')).toBe('summary')
      else expect(outputsSent(model).get('w1')).toEqual(text('Tool execution was not approved.'))
    }
  })
})
