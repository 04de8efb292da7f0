// Nested keys heard by path through the AI SDK (issue 22, item 6): the middleware in
// real generateText and streamText loops (the SDK's own mock model) over a user's zod
// tools, toAiSdkTools over a stack whose declarations zod wrote, and a Mastra Agent on
// the same middleware. Each tool is `read` ({ path, opts: { encoding } }) or `draw`
// ({ shape: circle | square, told apart by kind }); see test/support/nested.ts.
import { Agent } from '@mastra/core/agent'
import { createTool } from '@mastra/core/tools'
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai'
import { describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { toAiSdkTools, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import {
  CLEAN_RUN,
  STRIPPED_RUNS,
  cleanCall,
  drawSchema,
  drawWarning,
  expectStackHearsTheIssue,
  nestedStack,
  nestedStats,
  readSchema,
  readWarning,
  strayCalls,
  validCalls,
} from '../support/nested.js'
import type { ScriptedCall } from './support.js'
import { scriptedModel, toolOutputs } from './support.js'

/** The model calls `calls` on its first turn, then says done. */
const once = (calls: ReadonlyArray<ScriptedCall>) => (_: unknown, turn: number) => (turn === 0 ? calls : 'done')

/** `read` and `draw` as the user's own AI SDK tools, each recording the input it ran with. */
const userTools = (executed: Array<readonly [string, unknown]>) => ({
  read: tool({
    description: 'Reads a file',
    inputSchema: readSchema,
    execute: async (input) => (executed.push(['read', input]), 'file text'),
  }),
  draw: tool({
    description: 'Draws a shape',
    inputSchema: drawSchema,
    execute: async (input) => (executed.push(['draw', input]), 'drawn'),
  }),
})

for (const mode of ['generateText', 'streamText'] as const) {
  describe(`unknownKeyAuditMiddleware in a ${mode} loop: nested keys by path`, () => {
    it('hears opts.encodng (did you mean opts.encoding) and shape.side in a circle, once per (tool, path); zod decides whether the tool runs', async () => {
      const warnings: Array<UnknownKeyWarning> = []
      const executed: Array<readonly [string, unknown]> = []
      const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
      const loop = async (calls: ReadonlyArray<ScriptedCall>) => {
        const model = scriptedModel(once(calls))
        const run = {
          model: wrapLanguageModel({ model, middleware: audit }),
          tools: userTools(executed),
          prompt: 'go',
          stopWhen: stepCountIs(3),
        }
        const text = mode === 'generateText' ? (await generateText(run)).text : await streamText(run).text
        expect(text).toBe('done')
        return toolOutputs(model.prompts.at(-1) ?? [])
      }

      const first = await loop(strayCalls('c1', 'c2'))
      expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
      expect(audit.auditedTools()).toStrictEqual(['draw', 'read'])
      // the middleware heard the raw input; the SDK then parsed it with the tool's zod
      // schema, which refuses both calls (no `encoding`, a circle without `radius`): the
      // tools did not run and the model was told so
      expect(executed).toStrictEqual([])
      expect(first.get('c1')).toStrictEqual({
        type: 'error-text',
        value: expect.stringMatching(/^AI_InvalidToolInputError: Invalid input for tool read: /),
      })
      expect(first.get('c2')).toStrictEqual({
        type: 'error-text',
        value: expect.stringMatching(/^AI_InvalidToolInputError: Invalid input for tool draw: /),
      })

      // the same calls again: nothing new is said, and they are counted
      await loop(strayCalls('c3', 'c4'))
      expect(warnings).toHaveLength(2)
      expect(audit.stats()).toStrictEqual(nestedStats(2))

      // calls zod accepts carry the same strays: still nothing new; the tools run with what zod left
      const valid = await loop([...validCalls('c5', 'c6'), cleanCall('c7')])
      expect(warnings).toHaveLength(2)
      expect(executed).toStrictEqual([...STRIPPED_RUNS, CLEAN_RUN])
      expect(valid.get('c5')).toStrictEqual({ type: 'text', value: 'file text' })
      expect(valid.get('c6')).toStrictEqual({ type: 'text', value: 'drawn' })
      expect(audit.stats()).toStrictEqual(nestedStats(3))
    })
  })

  describe(`toAiSdkTools in a ${mode} loop: the stack hears nested keys by path`, () => {
    it('the stack’s audit hears opts.encodng and shape.side once each; its tools run with the model’s own keys', async () => {
      const nested = nestedStack()
      const tools = await toAiSdkTools(nested.stack)
      const loop = async (calls: ReadonlyArray<ScriptedCall>) => {
        const model = scriptedModel(once(calls))
        const run = { model, tools, prompt: 'go', stopWhen: stepCountIs(3) }
        const text = mode === 'generateText' ? (await generateText(run)).text : await streamText(run).text
        expect(text).toBe('done')
        return toolOutputs(model.prompts.at(-1) ?? [])
      }
      // toAiSdkTools hands the SDK no validator: the arguments reach the stack as the model wrote them, and run
      await expectStackHearsTheIssue(nested, loop, (text) => ({ type: 'text', value: text }))
    })
  })
}

describe('Mastra Agent.generate on the audited model: nested keys by path', () => {
  it('hears opts.encodng and shape.side once each across runs; Mastra’s zod validation decides whether the tool runs', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const executed: Array<readonly [string, unknown]> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const tools = {
      read: createTool({
        id: 'read',
        description: 'Reads a file',
        inputSchema: readSchema,
        execute: async (input) => (executed.push(['read', input]), 'file text'),
      }),
      draw: createTool({
        id: 'draw',
        description: 'Draws a shape',
        inputSchema: drawSchema,
        execute: async (input) => (executed.push(['draw', input]), 'drawn'),
      }),
    }
    const generate = async (calls: ReadonlyArray<ScriptedCall>) => {
      const model = wrapLanguageModel({ model: scriptedModel(once(calls)), middleware: audit })
      // Mastra types a V4 model with its own copy of @ai-sdk/provider (see mastra.test.ts)
      const agent = new Agent({ id: 'shapes', name: 'shapes', instructions: 'be brief', model: model as never, tools })
      expect((await agent.generate('go', { maxSteps: 3 })).text).toBe('done')
    }

    await generate(strayCalls('c1', 'c2'))
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    // Mastra validates the input with the tool's zod schema: neither call is valid, neither ran
    expect(executed).toStrictEqual([])

    await generate(strayCalls('c3', 'c4'))
    expect(warnings).toHaveLength(2)

    await generate(validCalls('c5', 'c6'))
    expect(warnings).toHaveLength(2)
    expect(executed).toStrictEqual(STRIPPED_RUNS)
    expect(audit.stats()).toStrictEqual(nestedStats(3))
  })
})
