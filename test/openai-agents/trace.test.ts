// A warning in the Agents SDK's own trace: a real run of a real Agent (the SDK's
// ScriptedModel, no network), its tracing on, and a trace processor of our own in place
// of the SDK's exporter, recording every span that ends. The warning is a custom span
// under the tool call's function span; with tracing off, or telemetry: false, none.
import type { Span, SpanData, TracingProcessor } from '@openai/agents'
import {
  Agent,
  RunContext,
  Runner,
  run,
  setTraceProcessors,
  setTracingDisabled,
  withCustomSpan,
  withTrace,
} from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { sharedUnknownKeyAudit } from '../../src/index.js'
import { auditAgent, auditAgentsTools, auditRunner } from '../../src/openai-agents/index.js'
import { readTool } from './support.js'

const ended: Array<Span<SpanData>> = []
const recorder: TracingProcessor = {
  onTraceStart: async () => {},
  onTraceEnd: async () => {},
  onSpanStart: async () => {},
  onSpanEnd: async (span) => void ended.push(span),
  shutdown: async () => {},
  forceFlush: async () => {},
}

beforeEach(() => {
  ended.length = 0
  setTraceProcessors([recorder])
  setTracingDisabled(false)
})
afterAll(() => {
  setTraceProcessors([])
  setTracingDisabled(true)
})

const scripted = (args: string, callId = 't1') =>
  new ScriptedModel([[functionCall('read', args, { callId })], [assistantMessage('done')]])

const customSpans = () => ended.filter((s) => s.spanData.type === 'custom')

const dataOf = (span: Span<SpanData> | undefined): Record<string, unknown> | undefined => {
  const d = span?.spanData
  return d?.type === 'custom' ? d.data : undefined
}

describe('auditAgent: a warning is a custom span in the run’s trace', () => {
  it('under the tool call’s function span, naming the tool, the call id and the key; onWarn still runs', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({
      name: 'reader',
      instructions: 'read',
      model: scripted('{"path":"/a","offset":null,"ffset":3}'),
      tools: [readTool()],
    })
    auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    expect((await run(agent, 'go')).finalOutput).toBe('done')
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['ffset']])
    const [custom, ...more] = customSpans()
    expect(more).toEqual([])
    expect(custom?.spanData).toEqual({
      type: 'custom',
      name: 'toolstack.unknown_key',
      data: {
        tool: 'read',
        call_id: 't1',
        unknown_keys: ['ffset'],
        unknown_key_count: 1,
        suggestions: [{ key: 'ffset', did_you_mean: 'offset' }],
      },
    })
    const parent = ended.find((s) => s.spanId === custom?.parentId)
    expect(parent?.spanData).toMatchObject({ type: 'function', name: 'read' })
    expect(custom?.traceId).toBe(parent?.traceId)
  })

  it('a hostile call records a bounded span: at most 16 keys of at most 256 characters, escaped, and the count', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => `\u001b]0;${'k'.repeat(5_000)}${i}`)
    const args = JSON.stringify({ path: '/a', offset: null, ...Object.fromEntries(keys.map((k) => [k, 1])) })
    const agent = new Agent({ name: 'reader', instructions: 'read', model: scripted(args), tools: [readTool()] })
    auditAgent(agent, { onWarn: () => {} })
    await run(agent, 'go')
    const [custom] = customSpans()
    const data = dataOf(custom)
    expect(data?.['unknown_key_count']).toBe(100)
    const recorded = data?.['unknown_keys'] as ReadonlyArray<string>
    expect(recorded).toHaveLength(16)
    for (const k of recorded) {
      // the audit writes such a key as a quoted path; no control character reaches the trace
      expect(k.startsWith('["\\u001b]0;kkk')).toBe(true)
      expect(k).not.toMatch(/\p{Cc}/u)
      expect(k.length).toBeLessThan(280)
    }
    expect(JSON.stringify(custom?.spanData).length).toBeLessThan(10_000)
  })

  it('auditRunner and auditAgentsTools trace their warnings too; the span is made once per pair, as the warning', async () => {
    const audited = auditAgentsTools([readTool()], { onWarn: () => {} })
    const model = new ScriptedModel([
      [functionCall('read', '{"path":"/a","offset":null,"pth":1}', { callId: 'a1' })],
      [functionCall('read', '{"path":"/a","offset":null,"pth":1}', { callId: 'a2' })],
      [assistantMessage('done')],
    ])
    await run(new Agent({ name: 'reader', instructions: 'read', model, tools: audited.tools }), 'go')
    expect(customSpans().map(dataOf)).toMatchObject([{ tool: 'read', call_id: 'a1', unknown_keys: ['pth'] }])

    ended.length = 0
    const runner = new Runner()
    auditRunner(runner, { onWarn: () => {} })
    await runner.run(
      new Agent({
        name: 'reader',
        instructions: 'read',
        model: scripted('{"path":"/a","offset":null,"x":1}', 'r1'),
        tools: [readTool()],
      }),
      'go',
    )
    expect(customSpans().map(dataOf)).toMatchObject([{ tool: 'read', call_id: 'r1', unknown_keys: ['x'] }])
  })

  it('a run that keeps sensitive data out of its trace (traceIncludeSensitiveData: false) gets no keys in the span', async () => {
    const agent = new Agent({
      name: 'reader',
      instructions: 'read',
      model: scripted('{"path":"/a","offset":null,"secret_token_here":3}', 's1'),
      tools: [readTool()],
    })
    auditAgent(agent, { onWarn: () => {} })
    await new Runner({ traceIncludeSensitiveData: false }).run(agent, 'go')
    expect(customSpans().map(dataOf)).toEqual([{ tool: 'read', call_id: 's1', unknown_key_count: 1 }])
    expect(JSON.stringify(ended.map((s) => s.spanData))).not.toContain('secret_token_here')
  })

  it('without sensitive data, the span still names the layer that heard the call (via), and only when the warning does', async () => {
    const agentWith = (callId: string) =>
      new Agent({
        name: 'reader',
        instructions: 'read',
        model: scripted('{"path":"/a","offset":null,"pth":3}', callId),
        tools: [readTool()],
      })
    const runner = new Runner({ traceIncludeSensitiveData: false })
    const shared = agentWith('v1')
    auditAgent(shared, sharedUnknownKeyAudit({ onWarn: () => {} }))
    await runner.run(shared, 'go')
    const alone = agentWith('v2')
    auditAgent(alone, { onWarn: () => {} })
    await runner.run(alone, 'go')
    expect(customSpans().map(dataOf)).toStrictEqual([
      { tool: 'read', call_id: 'v1', unknown_key_count: 1, via: 'openai-agents-hook' },
      { tool: 'read', call_id: 'v2', unknown_key_count: 1 },
    ])
  })

  it('a warning heard outside a function span (the host invoking a tool in a span of its own) records no span', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const [wrapped] = auditAgentsTools([readTool()], { onWarn: (w) => void warnings.push(w) }).tools
    if (wrapped === undefined) throw new Error('no tool')
    const invoke = (input: string): Promise<unknown> =>
      wrapped.invoke(new RunContext(), input, { toolCall: { callId: 'h1' } } as never)
    await withTrace('host', () =>
      withCustomSpan(() => invoke('{"path":"/a","offset":null,"pth":1}'), { data: { name: 'host step' } }),
    )
    await invoke('{"path":"/a","offset":null,"ffset":1}')
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['pth'], ['ffset']])
    expect(customSpans().map((s) => s.spanData)).toEqual([{ type: 'custom', name: 'host step', data: {} }])
  })

  it('with the SDK’s tracing off, the run and the warning are as ever and nothing is recorded', async () => {
    setTracingDisabled(true)
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({
      name: 'reader',
      instructions: 'read',
      model: scripted('{"path":"/a","offset":null,"ffset":3}'),
      tools: [readTool()],
    })
    auditAgent(agent, { onWarn: (w) => void warnings.push(w) })
    expect((await run(agent, 'go')).finalOutput).toBe('done')
    expect(warnings).toHaveLength(1)
    expect(ended).toEqual([])

    // a run whose own config turns tracing off
    setTracingDisabled(false)
    const other = new Agent({
      name: 'reader',
      instructions: 'read',
      model: scripted('{"path":"/a","offset":null,"pth":3}'),
      tools: [readTool()],
    })
    auditAgent(other, { onWarn: (w) => void warnings.push(w) })
    expect((await new Runner({ tracingDisabled: true }).run(other, 'go')).finalOutput).toBe('done')
    expect(warnings).toHaveLength(2)
    expect(ended).toEqual([])
  })

  it('telemetry: false records no span; the option is checked at the door', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const agent = new Agent({
      name: 'reader',
      instructions: 'read',
      model: scripted('{"path":"/a","offset":null,"ffset":3}'),
      tools: [readTool()],
    })
    auditAgent(agent, { telemetry: false, onWarn: (w) => void warnings.push(w) })
    await run(agent, 'go')
    expect(warnings).toHaveLength(1)
    expect(customSpans()).toEqual([])
    expect(ended.some((s) => s.spanData.type === 'function')).toBe(true)
    expect(() => auditAgent(agent, { telemetry: 'yes' } as never)).toThrow(
      'auditAgent: option "telemetry" must be a boolean, got the string "yes"',
    )
    expect(() => auditAgent(agent, { onWarn: 1 } as never)).toThrow('auditAgent: option "onWarn" must be a function')
  })
})
