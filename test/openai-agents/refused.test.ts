// Agents SDK 0.20 blanks a call's arguments in `agent_tool_start` when the tool's own schema refuses
// them: the commonest case, a misspelt required key, reaches the hook as ''. auditAgent and auditRunner
// also wrap each function tool's invoke (which still gets the raw string), so that call is heard, once
// per (tool, key), whichever way it arrived. The model is the SDK's ScriptedModel (no network).
import { Agent, Runner, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { auditAgent, auditAgentsTools, auditRunner } from '../../src/openai-agents/index.js'

beforeAll(() => setTracingDisabled(true))

const readTool = (ran: Array<unknown>) =>
  tool({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string(), offset: z.number() }),
    execute: async (input) => {
      ran.push(input)
      return `read ${input.path}`
    },
  })

const refusedThenAccepted = () =>
  new ScriptedModel([
    [functionCall('read', '{"path":"/a","ofset":3}', { callId: 'c1' })],
    [functionCall('read', '{"path":"/a","ofset":4}', { callId: 'c2' })],
    [functionCall('read', '{"path":"/a","offset":1,"pth":"/b"}', { callId: 'c3' })],
    [assistantMessage('done')],
  ])

const said = (ws: ReadonlyArray<UnknownKeyWarning>) => ws.map((w) => [w.tool, w.unknownKeys, w.id])

describe('calls the tool’s own schema refuses', () => {
  it('are heard by auditAgent, once per (tool, key), and the tool and its refusal are unchanged', async () => {
    const ran: Array<unknown> = []
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({ name: 'a', instructions: 'Read.', model: refusedThenAccepted(), tools: [readTool(ran)] })
    const audit = auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    const result = await run(agent, 'go')
    expect(result.finalOutput).toBe('done')
    expect(said(warnings)).toEqual([
      ['read', ['ofset'], 'c1'],
      ['read', ['pth'], 'c3'],
    ])
    expect(audit.stats()).toEqual([
      { tool: 'read', key: 'ofset', calls: 2, firstId: 'c1' },
      { tool: 'read', key: 'pth', calls: 1, firstId: 'c3' },
    ])
    // the refused calls never ran; the accepted one ran without its stray key
    expect(ran).toEqual([{ path: '/a', offset: 1 }])
    audit.stop()
    expect(Object.prototype.hasOwnProperty.call(agent, 'getAllTools')).toBe(false)
  })

  it('are heard by auditRunner, for every agent its runs reach', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({ name: 'a', instructions: 'Read.', model: refusedThenAccepted(), tools: [readTool([])] })
    const runner = new Runner()
    const audit = auditRunner(runner, { onWarn: (w) => void warnings.push(w) })
    await runner.run(agent, 'go')
    expect(said(warnings)).toEqual([
      ['read', ['ofset'], 'c1'],
      ['read', ['pth'], 'c3'],
    ])
    expect(audit.stats().map((s) => [s.key, s.calls])).toEqual([
      ['ofset', 2],
      ['pth', 1],
    ])
    audit.stop()
  })

  it('are said once when auditAgent and auditAgentsTools both hear the tool', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const own = auditAgentsTools([readTool([])], { onWarn: (w) => void warnings.push(w) })
    const agent = new Agent({ name: 'a', instructions: 'Read.', model: refusedThenAccepted(), tools: own.tools })
    const audit = auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    await run(agent, 'go')
    expect(said(warnings)).toEqual([
      ['read', ['ofset'], 'c1'],
      ['read', ['pth'], 'c3'],
    ])
    expect(audit.stats()).toEqual([])
  })
})
