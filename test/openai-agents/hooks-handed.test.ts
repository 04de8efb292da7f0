// What auditAgent and auditRunner are handed besides a run's ordinary calls: an agent that cannot be
// patched (frozen), heard through the SDK's agent_tool_start hook alone; whatever that hook's details hold;
// what getAllTools answers (the same wrapped object per tool, other tools as they are); the call id the
// wrapped invoke reads; a runner's agents patched once, and left alone after stop(); and what is not an
// Agent or a Runner. The model is the SDK's ScriptedModel (no network).
import { Agent, RunContext, Runner, run, setTracingDisabled, webSearchTool } from '@openai/agents'
import type { FunctionTool, Tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { auditAgent, auditAgentsTools, auditRunner } from '../../src/openai-agents/index.js'
import { readTool } from './support.js'

beforeAll(() => setTracingDisabled(true))

const DECLARED = ['offset', 'path']

const scripted = (args: string, callId: string) =>
  new ScriptedModel([[functionCall('read', args, { callId })], [assistantMessage('done')]])

const said = (ws: ReadonlyArray<UnknownKeyWarning>) => ws.map((w) => [w.tool, w.unknownKeys, w.id])

// frozen, an agent's getAllTools cannot be replaced: the audit hears it through the hook alone
const frozen = <A extends object>(a: A): A => {
  Object.freeze(a)
  return a
}

const hasOwnGetAllTools = (agent: object): boolean => Object.prototype.hasOwnProperty.call(agent, 'getAllTools')

describe('an agent that cannot be patched (frozen)', () => {
  it('is heard through agent_tool_start by auditAgent, and left as it was', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = frozen(
      new Agent({
        name: 'reader',
        instructions: 'read',
        model: scripted('{"path":"/a","offset":null,"pth":1}', 'f1'),
        tools: [readTool()],
      }),
    )
    const audit = auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    expect((await run(agent, 'go')).finalOutput).toBe('done')
    expect(said(warnings)).toEqual([['read', ['pth'], 'f1']])
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'pth', calls: 1, firstId: 'f1' }])
    expect(hasOwnGetAllTools(agent)).toBe(false)
  })

  it('is heard through agent_tool_start by auditRunner; after stop(), nothing is', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = frozen(
      new Agent({
        name: 'reader',
        instructions: 'read',
        model: new ScriptedModel([
          [functionCall('read', '{"path":"/a","offset":null,"pth":1}', { callId: 'r1' })],
          [assistantMessage('one')],
          [functionCall('read', '{"path":"/a","offset":null,"ffset":1}', { callId: 'r2' })],
          [assistantMessage('two')],
        ]),
        tools: [readTool()],
      }),
    )
    const runner = new Runner()
    const audit = auditRunner(runner, { onWarn: (w) => void warnings.push(w) })
    expect((await runner.run(agent, 'go')).finalOutput).toBe('one')
    expect(said(warnings)).toEqual([['read', ['pth'], 'r1']])
    audit.stop()
    expect((await runner.run(agent, 'again')).finalOutput).toBe('two')
    expect(warnings).toHaveLength(1)
  })

  it('whatever agent_tool_start hands the hook, it never throws, and warns exactly for the keys of a JSON object string the tool does not declare, with the call id when it is a string', () => {
    const agent = frozen(new Agent({ name: 'reader', instructions: 'read' }))
    const read = readTool()
    const key = fc.constantFrom('path', 'offset', 'pth', 'ffset', 'x')
    const jsonArgs = fc.dictionary(key, fc.integer()).map((o) => JSON.stringify(o))
    const toolCall = fc.oneof(
      fc.anything(),
      fc.record(
        { callId: fc.oneof(fc.string(), fc.anything()), arguments: fc.oneof(jsonArgs, fc.string(), fc.anything()) },
        { requiredKeys: [] },
      ),
    )
    const details = fc.oneof(fc.anything(), fc.record({ toolCall }))
    // the oracle: the undeclared top-level keys of a JSON object, when the arguments are a string holding one
    const expected = (d: unknown): { keys: ReadonlyArray<string>; id: string } => {
      const call = typeof d === 'object' && d !== null ? (d as { toolCall?: unknown }).toolCall : undefined
      const member = (k: string): unknown =>
        typeof call === 'object' && call !== null ? (call as Record<string, unknown>)[k] : undefined
      const args = member('arguments')
      const callId = member('callId')
      let parsed: unknown
      try {
        parsed = typeof args === 'string' ? JSON.parse(args) : undefined
      } catch {
        parsed = undefined
      }
      const keys =
        typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
          ? Object.keys(parsed).filter((k) => !DECLARED.includes(k))
          : []
      return { keys: [...keys].sort(), id: typeof callId === 'string' ? callId : '' }
    }
    fc.assert(
      fc.property(details, (d) => {
        const warnings: Array<UnknownKeyWarning> = []
        const audit = auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
        try {
          expect(() => agent.emit('agent_tool_start', new RunContext(), read, d as never)).not.toThrow()
        } finally {
          audit.stop()
        }
        const { keys, id } = expected(d)
        expect(said(warnings)).toEqual(keys.length === 0 ? [] : [['read', keys, id]])
      }),
    )
  })
})

describe('what getAllTools answers an audited agent', () => {
  it('the same wrapped object for the same function tool, call after call; other tools, and tools already heard, as they are', async () => {
    const read = readTool()
    const search = webSearchTool()
    const [heard] = auditAgentsTools([readTool()], { onWarn: () => {} }).tools
    if (heard === undefined) throw new Error('no tool')
    const agent = new Agent({ name: 'a', instructions: 'x', tools: [read, search, heard] })
    const audit = auditAgent(agent, { onWarn: () => {} })
    const first = await agent.getAllTools(new RunContext())
    const second = await agent.getAllTools(new RunContext())
    expect(first).toHaveLength(3)
    expect(first[0]).not.toBe(read)
    expect(second[0]).toBe(first[0])
    expect(first[1]).toBe(search)
    expect(first[2]).toBe(heard)
    audit.stop()
    expect((await agent.getAllTools(new RunContext()))[0]).toBe(read)
  })

  it('the wrapped invoke reads the call id from the SDK’s details: a string as it is, anything else (or no details) as ""', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({ name: 'a', instructions: 'x', tools: [readTool()] })
    auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    const [wrapped] = (await agent.getAllTools(new RunContext())) as ReadonlyArray<Tool>
    const invoke = (input: string, details?: unknown): Promise<unknown> =>
      (wrapped as FunctionTool).invoke(new RunContext(), input, details as never)
    await invoke('{"path":"/a","offset":null,"k1":1}')
    await invoke('{"path":"/a","offset":null,"k2":1}', { toolCall: { callId: 7 } })
    await invoke('{"path":"/a","offset":null,"k3":1}', { toolCall: { callId: 'c3' } })
    expect(said(warnings)).toEqual([
      ['read', ['k1'], ''],
      ['read', ['k2'], ''],
      ['read', ['k3'], 'c3'],
    ])
  })
  it('reads a tool’s declaration (its parameters) once, on its first call, however many calls it gets', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const read = readTool()
    const parameters = read.parameters
    let reads = 0
    Object.defineProperty(read, 'parameters', {
      get: () => {
        reads += 1
        return parameters
      },
    })
    const agent = new Agent({ name: 'a', instructions: 'x', tools: [read] })
    auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    const [wrapped] = (await agent.getAllTools(new RunContext())) as ReadonlyArray<Tool>
    const before = reads
    for (const key of ['k1', 'k2', 'k1'])
      await (wrapped as FunctionTool).invoke(new RunContext(), JSON.stringify({ path: '/a', offset: null, [key]: 1 }))
    expect(reads - before).toBe(1)
    expect(warnings.map((w) => w.unknownKeys.join())).toEqual(['k1', 'k2'])
  })
})

describe('auditRunner and the agents its runs reach', () => {
  it('patches an agent once however many runs reach it, and after stop() patches none and hears nothing', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({
      name: 'reader',
      instructions: 'read',
      model: new ScriptedModel([
        [assistantMessage('one')],
        [assistantMessage('two')],
        [functionCall('read', '{"path":"/a","offset":null,"pth":1}', { callId: 'p1' })],
        [assistantMessage('three')],
      ]),
      tools: [readTool()],
    })
    const runner = new Runner()
    const audit = auditRunner(runner, { onWarn: (w) => void warnings.push(w) })
    await runner.run(agent, 'go')
    const patched = agent.getAllTools
    await runner.run(agent, 'again')
    expect(agent.getAllTools).toBe(patched)
    audit.stop()
    expect(hasOwnGetAllTools(agent)).toBe(false)
    expect((await runner.run(agent, 'more')).finalOutput).toBe('three')
    expect(hasOwnGetAllTools(agent)).toBe(false)
    expect(warnings).toEqual([])
  })

  it('leaves an agent_start for something without getAllTools as it is', () => {
    const runner = new Runner()
    const audit = auditRunner(runner, { onWarn: () => {} })
    const odd = { name: 'odd' }
    runner.emit('agent_start', new RunContext(), odd as never)
    expect(odd).toEqual({ name: 'odd' })
    audit.stop()
  })
})

describe('what is not an Agent or a Runner', () => {
  it('is a TypeError naming the function and what it got: no on, no off, not an object', () => {
    const noop = (): void => {}
    for (const target of [{ on: noop }, { off: noop }, { on: 1, off: noop }, null, 'agent', undefined])
      expect(() => auditRunner(target as never)).toThrow(
        /^auditRunner: expected an Agent or a Runner of @openai\/agents, got /,
      )
  })
})
