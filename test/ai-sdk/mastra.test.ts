// Mastra runs on the AI SDK: the same middleware wraps the model an Agent is given,
// and toAiSdkTools' ToolSet is an Agent's tools as it is. Mastra calls toModelOutput
// with the output alone (AI SDK 7 with { toolCallId, input, output }); both are read.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent } from '@mastra/core/agent'
import { createTool } from '@mastra/core/tools'
import { wrapLanguageModel } from 'ai'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { readOnlyRules, withPolicy, withUnknownKeyAudit } from '../../src/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { toAiSdkTools, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { FILESYSTEM_SERVER, cleanUpAfterEach, spawnServer, tempDir } from '../mcp/fixtures.js'
import { scriptedModel, toolOutputs } from './support.js'

cleanUpAfterEach()

describe('Mastra Agent.generate', () => {
  it('over a toolstack-wrapped MCP tool set and an audited model: warnings, the server’s text to the model, a refusal as a tool error', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes.txt'), 'one\ntwo\n')
    const conn = await spawnServer({ script: FILESYSTEM_SERVER, args: [dir] })
    const stackWarnings: Array<UnknownKeyWarning> = []
    const modelWarnings: Array<UnknownKeyWarning> = []
    const executed: Array<unknown> = []
    const stack = pipe(
      fromMcpClient(conn.client),
      withUnknownKeyAudit({ onWarn: (w) => void stackWarnings.push(w) }),
      withPolicy({
        rules: [...readOnlyRules(''), { tool: 'write_file', decision: 'deny', under: dir, note: 'read-only agent' }],
      }),
    )
    const mcpTools = await toAiSdkTools(stack)
    const mastraTool = createTool({
      id: 'count',
      description: 'Counts words',
      inputSchema: z.object({ text: z.string() }),
      execute: async (input) => {
        executed.push(input)
        return { words: 2 }
      },
    })
    const inner = scriptedModel((_, turn) =>
      turn === 0
        ? [
            { id: 'c1', tool: 'read_text_file', input: JSON.stringify({ path: join(dir, 'notes.txt'), haed: 1 }) },
            { id: 'c2', tool: 'write_file', input: JSON.stringify({ path: join(dir, 'x'), content: 'x' }) },
            { id: 'c3', tool: 'count', input: '{"text":"one two","lang":"en"}' },
          ]
        : 'done',
    )
    const model = wrapLanguageModel({
      model: inner,
      middleware: unknownKeyAuditMiddleware({ onWarn: (w) => void modelWarnings.push(w) }),
    })
    // Mastra types a V4 model with its own copy of @ai-sdk/provider, which does not match
    // ai 7.0.173's structurally (doGenerate's result); at run time it takes it as it is
    const agent = new Agent({
      id: 'notes',
      name: 'notes',
      instructions: 'be brief',
      model: model as never,
      tools: { ...mcpTools, count: mastraTool },
    })
    const r = await agent.generate('read my notes', { maxSteps: 3 })
    expect(r.text).toBe('done')

    expect(stackWarnings.map((w) => [w.tool, w.unknownKeys, w.suggestions])).toEqual([
      ['read_text_file', ['haed'], [{ key: 'haed', didYouMean: 'head' }]],
    ])
    // the middleware sees Mastra's own tool too, whose zod schema then strips the key
    expect(modelWarnings.map((w) => [w.tool, w.unknownKeys])).toEqual([
      ['read_text_file', ['haed']],
      ['count', ['lang']],
    ])
    expect(executed).toEqual([{ text: 'one two' }])
    const sent = toolOutputs(inner.prompts.at(-1) ?? [])
    expect(sent.get('c1')).toEqual({ type: 'text', value: 'one\ntwo\n' })
    expect(sent.get('c2')).toMatchObject({ type: 'error-text', value: expect.stringContaining('read-only agent') })
  })
})
