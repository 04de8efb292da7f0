// With the real OpenTelemetry SDK registered (test/otel/sdk.ts), otelAudit as the options of an Agents run
// audit: the warnings of auditAgent and of an audited stack behind toAgentsTools land as events on the span the
// host made active around run(), each pair once, each naming its layer. The model is the SDK's ScriptedModel.
import { trace } from '@opentelemetry/api'
import { Agent, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { pipe } from 'fp-ts/lib/function.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { auditAgent, toAgentsTools } from '../../src/openai-agents/index.js'
import { otelAudit } from '../../src/otel/index.js'
import type { Sdk } from '../otel/sdk.js'
import { registerSdk } from '../otel/sdk.js'

let sdk: Sdk
beforeAll(() => {
  setTracingDisabled(true)
  sdk = registerSdk()
})
afterAll(() => sdk.unregister())

describe('auditAgent with otelAudit', () => {
  it('puts each pair once on the active span, the hook’s and the stack’s, each naming its layer', async () => {
    const audit = sharedUnknownKeyAudit(otelAudit())
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
    const read = tool({
      name: 'read',
      description: 'Reads a file',
      parameters: z.object({ path: z.string(), offset: z.number().nullable() }),
      execute: async (input) => `read ${input.path}`,
    })
    const turn = (n: number) => [
      functionCall('echo', '{"text":"hi","txet":1}', { callId: `e${n}` }),
      functionCall('read', '{"path":"/a","offset":null,"ffset":3}', { callId: `r${n}` }),
    ]
    const model = new ScriptedModel([turn(1), turn(2), [assistantMessage('done')]])
    const agent = new Agent({
      name: 'notes',
      instructions: 'read',
      model,
      tools: [...(await toAgentsTools(stack)), read],
    })
    auditAgent(agent, audit)
    const output = await trace.getTracer('host').startActiveSpan('agent run', async (span) => {
      try {
        return (await run(agent, 'go')).finalOutput
      } finally {
        span.end()
      }
    })
    expect(output).toBe('done')
    const [host, ...others] = sdk.spans()
    expect(others).toEqual([])
    expect(host?.name).toBe('agent run')
    const events = (host?.events ?? []).map((e) => [e.name, e.attributes])
    // the agent runs a turn's calls at once: their order is not the point
    expect(events).toHaveLength(2)
    expect(events).toEqual(
      expect.arrayContaining([
        [
          'toolstack.unknown_key',
          {
            'gen_ai.tool.name': 'echo',
            'gen_ai.tool.call.id': 'e1',
            'toolstack.key': 'txet',
            'toolstack.did_you_mean': 'text',
            'toolstack.via': 'stack',
          },
        ],
        [
          'toolstack.unknown_key',
          {
            'gen_ai.tool.name': 'read',
            'gen_ai.tool.call.id': 'r1',
            'toolstack.key': 'ffset',
            'toolstack.did_you_mean': 'offset',
            'toolstack.via': 'openai-agents-hook',
          },
        ],
      ]),
    )
  })
})
