// auditAgent and auditRunner: every tool call of a run heard through the SDK's own
// agent_tool_start hook, the tools of mcpServers included (a real filesystem MCP server
// through the SDK's own MCPServerStdio), a user's zod tool, streamed runs and handoffs;
// each (tool, key) said once, also next to auditAgentsTools. The model is the SDK's
// ScriptedModel (no network).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, MCPServerStdio, Runner, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { pipe } from 'fp-ts/lib/function.js'
import { afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { auditAgent, auditAgentsTools, auditRunner, toAgentsTools } from '../../src/openai-agents/index.js'
import { FILESYSTEM_SERVER, tempDir } from '../mcp/fixtures.js'
import { outputsSent, text } from './support.js'
import { readTool } from './support.js'

beforeAll(() => setTracingDisabled(true))

const servers: Array<MCPServerStdio> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const filesystem = async () => {
  const dir = tempDir()
  const path = join(dir, 'notes.txt')
  writeFileSync(path, 'one\ntwo\n')
  const fs = new MCPServerStdio({ command: process.execPath, args: [FILESYSTEM_SERVER, dir], cacheToolsList: true })
  servers.push(fs)
  await fs.connect()
  return { fs, path }
}

const said = (warnings: ReadonlyArray<UnknownKeyWarning>) =>
  warnings.map((w) => [w.tool, w.unknownKeys, w.id, w.suggestions])

describe('auditAgent: an agent’s mcpServers tools and its own tools', () => {
  it('hears haed on an MCP server tool once over two runs, and a zod tool’s ffset; the tool outputs are unchanged', async () => {
    const { fs, path } = await filesystem()
    const warnings: Array<UnknownKeyWarning> = []
    const turn = (id: string) => [
      functionCall('read_text_file', JSON.stringify({ path, haed: 1 }), { callId: `${id}_mcp` }),
      functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: `${id}_own` }),
    ]
    const model = new ScriptedModel([
      turn('c1'),
      [assistantMessage('one')],
      turn('c2'),
      [assistantMessage('two')],
      [functionCall('read', '{"path":"/a","offset":null,"ofset":3}', { callId: 'c3' })],
      [assistantMessage('three')],
    ])
    const agent = new Agent({ name: 'notes', instructions: 'read', model, tools: [readTool()], mcpServers: [fs] })
    const audit = auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    expect((await run(agent, 'go')).finalOutput).toBe('one')
    expect((await run(agent, 'again')).finalOutput).toBe('two')
    expect(said(warnings)).toEqual([
      ['read_text_file', ['haed'], 'c1_mcp', [{ key: 'haed', didYouMean: 'head' }]],
      ['read', ['ffset'], 'c1_own', [{ key: 'ffset', didYouMean: 'offset' }]],
    ])
    expect(audit.stats()).toEqual([
      { tool: 'read', key: 'ffset', calls: 2, firstId: 'c1_own' },
      { tool: 'read_text_file', key: 'haed', calls: 2, firstId: 'c1_mcp' },
    ])
    const sent = outputsSent(model)
    expect(sent.get('c1_mcp')).toEqual([{ type: 'input_text', text: 'one\ntwo\n' }])
    expect(sent.get('c1_own')).toEqual(text('read /a'))
    // stopped, it hears nothing more
    audit.stop()
    expect((await run(agent, 'more')).finalOutput).toBe('three')
    expect(warnings).toHaveLength(2)
  })

  it('hears a streamed run', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const model = new ScriptedModel([
      [functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: 's1' })],
      [assistantMessage('done')],
    ])
    const agent = new Agent({ name: 'reader', instructions: 'read', model, tools: [readTool()] })
    auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    const stream = await run(agent, 'go', { stream: true })
    await stream.completed
    expect(stream.finalOutput).toBe('done')
    expect(said(warnings)).toEqual([['read', ['ffset'], 's1', [{ key: 'ffset', didYouMean: 'offset' }]]])
  })

  it('next to auditAgentsTools, a pair is said once; new Agent({ tools: audited.tools }) takes the array as it is', async () => {
    const fromTools: Array<UnknownKeyWarning> = []
    const fromHook: Array<UnknownKeyWarning> = []
    const audited = auditAgentsTools([readTool()] as const, { onWarn: (w) => void fromTools.push(w) })
    expectTypeOf(audited.tools).toMatchTypeOf<Array<unknown>>()
    const model = new ScriptedModel([
      [functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: 'd1' })],
      [assistantMessage('done')],
    ])
    const agent = new Agent({ name: 'reader', instructions: 'read', model, tools: audited.tools })
    auditAgent(agent, { onWarn: (w) => void fromHook.push(w) })
    await run(agent, 'go')
    expect(said(fromTools)).toEqual([['read', ['ffset'], 'd1', [{ key: 'ffset', didYouMean: 'offset' }]]])
    expect(fromHook).toEqual([])
  })

  it('next to toAgentsTools over a stack with its own audit, the stack says the pair, once', async () => {
    const fromStack: Array<UnknownKeyWarning> = []
    const fromHook: Array<UnknownKeyWarning> = []
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
          },
          run: (a) => String(a.text),
        },
      ]),
      withUnknownKeyAudit({ onWarn: (w) => () => void fromStack.push(w) }),
    )
    const model = new ScriptedModel([
      [functionCall('echo', '{"text":"hi","txet":1}', { callId: 'e1' })],
      [assistantMessage('done')],
    ])
    const agent = new Agent({ name: 'echo', instructions: 'echo', model, tools: await toAgentsTools(stack) })
    auditAgent(agent, { onWarn: (w) => void fromHook.push(w) })
    await run(agent, 'go')
    expect(said(fromStack)).toEqual([['echo', ['txet'], 'e1', [{ key: 'txet', didYouMean: 'text' }]]])
    expect(fromHook).toEqual([])
  })

  it('given one sharedUnknownKeyAudit with the stack and auditAgentsTools, each warning names its layer (via)', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
          },
          run: (a) => String(a.text),
        },
      ]),
      withUnknownKeyAudit(audit),
    )
    const wrapped = auditAgentsTools(
      [
        tool({
          name: 'write',
          description: 'Writes a file',
          parameters: z.object({ path: z.string() }),
          execute: async (input) => `wrote ${input.path}`,
        }),
      ],
      audit,
    )
    const model = new ScriptedModel([
      [
        functionCall('echo', '{"text":"hi","txet":1}', { callId: 'v1' }),
        functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: 'v2' }),
        functionCall('write', '{"path":"/a","pth":"/b"}', { callId: 'v3' }),
      ],
      [assistantMessage('done')],
    ])
    const tools = [...(await toAgentsTools(stack)), readTool(), ...wrapped.tools]
    const agent = new Agent({ name: 'notes', instructions: 'read', model, tools })
    auditAgent(agent, audit)
    await run(agent, 'go')
    // the SDK runs the three calls at once: sorted by tool
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.via]).sort()).toEqual([
      ['echo', ['txet'], 'stack'],
      ['read', ['ffset'], 'openai-agents-hook'],
      ['write', ['pth'], 'openai-agents-tools'],
    ])
  })

  it('refuses what is not an agent or a runner, and checks the options up front', () => {
    expect(() => auditAgent({} as never)).toThrow(/auditAgent: expected an Agent or a Runner/)
    const agent = new Agent({ name: 'a', instructions: 'x' })
    expect(() => auditAgent(agent, { maxPairs: 0 })).toThrow(/auditAgent: maxPairs must be/)
  })
})

describe('auditRunner: every agent of a run', () => {
  it('hears the agent handed off to, over an MCP server', async () => {
    const { fs, path } = await filesystem()
    const warnings: Array<UnknownKeyWarning> = []
    const model = new ScriptedModel([
      [functionCall('transfer_to_notes', '{}', { callId: 'h1' })],
      [functionCall('read_text_file', JSON.stringify({ path, tial: 1 }), { callId: 'r1' })],
      [assistantMessage('done')],
    ])
    const notes = new Agent({ name: 'notes', instructions: 'read', model, mcpServers: [fs] })
    const triage = new Agent({ name: 'triage', instructions: 'route', model, handoffs: [notes] })
    const runner = new Runner()
    auditRunner(runner, { onWarn: (w) => void warnings.push(w) })
    expect((await runner.run(triage, 'go')).finalOutput).toBe('done')
    expect(said(warnings)).toEqual([['read_text_file', ['tial'], 'r1', [{ key: 'tial', didYouMean: 'tail' }]]])
  })
})
