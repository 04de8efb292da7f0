// Nested keys heard by path through the OpenAI Agents SDK (issue 22, item 6): the SDK's
// own run() over an Agent driven by its ScriptedModel, with auditAgentsTools around a
// user's zod tools and with toAgentsTools over a stack whose declarations zod wrote. Each
// tool is `read` ({ path, opts: { encoding } }) or `draw` ({ shape: circle | square, told
// apart by kind }); see test/support/nested.ts.
import type { Tool } from '@openai/agents'
import { Agent, run, setTracingDisabled, tool } from '@openai/agents'
import { ScriptedModel, assistantMessage, functionCall } from '@openai/agents/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { auditAgentsTools, toAgentsTools } from '../../src/openai-agents/index.js'
import type { NestedCall } from '../support/nested.js'
import {
  CLEAN_RUN,
  STRIPPED_RUNS,
  cleanCall,
  drawSchema,
  drawWarning,
  expectStackHearsTheIssue,
  nestedDeclarations,
  nestedStack,
  nestedStats,
  readSchema,
  readWarning,
  strayCalls,
  validCalls,
} from '../support/nested.js'
import { outputsSent, text } from './support.js'

beforeAll(() => setTracingDisabled(true))

// what the SDK's tool() tells the model when its input does not parse (its default errorFunction)
const TOOL_ERROR = 'An error occurred while running the tool. Please try again.'

/** One run of an Agent with `tools` whose model makes `calls`, then says done; what the model was sent back. */
const runWith = async (tools: Array<Tool>, calls: ReadonlyArray<NestedCall>): Promise<Map<string, unknown>> => {
  const model = new ScriptedModel([
    calls.map((c) => functionCall(c.tool, c.input, { callId: c.id })),
    [assistantMessage('done')],
  ])
  const r = await run(new Agent({ name: 'shapes', instructions: 'draw', model, tools }), 'go')
  expect(r.finalOutput).toBe('done')
  return outputsSent(model)
}

describe('auditAgentsTools around a user’s zod tools: nested keys by path', () => {
  it('hears opts.encodng (did you mean opts.encoding) and shape.side in a circle, once per (tool, path); the tool’s zod parse decides whether it runs', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const executed: Array<readonly [string, unknown]> = []
    const read = tool({
      name: 'read',
      description: 'Reads a file',
      parameters: readSchema,
      execute: async (input) => (executed.push(['read', input]), 'file text'),
    })
    const draw = tool({
      name: 'draw',
      description: 'Draws a shape',
      parameters: drawSchema,
      execute: async (input) => (executed.push(['draw', input]), 'drawn'),
    })
    const audited = auditAgentsTools([read, draw], { onWarn: (w) => void warnings.push(w) })
    expect(audited.auditedTools()).toStrictEqual(['draw', 'read'])

    const first = await runWith([...audited.tools], strayCalls('c1', 'c2'))
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    // the wrapper heard the raw string; the SDK's tool() then parsed it with the zod
    // schema, which refuses both calls (no `encoding`, a circle without `radius`): the
    // tools did not run, and the model was told of an error instead
    expect(executed).toStrictEqual([])
    expect(first.get('c1')).toStrictEqual(text(TOOL_ERROR))
    expect(first.get('c2')).toStrictEqual(text(TOOL_ERROR))

    // the same calls again: nothing new is said, and they are counted
    await runWith([...audited.tools], strayCalls('c3', 'c4'))
    expect(warnings).toHaveLength(2)

    // calls zod accepts carry the same strays: still nothing new; the tools run with what zod left
    const valid = await runWith([...audited.tools], [...validCalls('c5', 'c6'), cleanCall('c7')])
    expect(warnings).toHaveLength(2)
    expect(executed).toStrictEqual([...STRIPPED_RUNS, CLEAN_RUN])
    expect(valid.get('c5')).toStrictEqual(text('file text'))
    expect(valid.get('c6')).toStrictEqual(text('drawn'))
    expect(audited.stats()).toStrictEqual(nestedStats(3))
  })
})

describe('toAgentsTools over a stack: nested keys by path', () => {
  it('the stack’s audit hears opts.encodng and shape.side once each; its tools run with the model’s own keys', async () => {
    const nested = nestedStack()
    const tools = await toAgentsTools(nested.stack)
    // the declared schemas go to the SDK as they are, nested additionalProperties: false and
    // all, with strict false: the SDK holds the model to nothing and sends the raw string on
    expect(tools.map((t) => [t.name, t.strict, t.parameters])).toStrictEqual(
      nestedDeclarations.map((d) => [d.function.name, false, d.function.parameters]),
    )

    await expectStackHearsTheIssue(nested, (calls) => runWith(tools, calls), text)
  })
})
