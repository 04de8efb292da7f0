// executeToolUses and toRunnableTools at their edges, over a provider of the test's that records what it is sent:
// blocks whose id, name or toolset is not a string, content that is not a list, a runnable tool's context, its
// schema and description.
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import type { ToolCall, ToolDeclaration, ToolResult } from '../../src/index.js'
import { executeToolUses, toRunnableTools } from '../../src/anthropic/index.js'

const recording = (declarations: ReadonlyArray<ToolDeclaration> = []) => {
  const sent: Array<unknown> = []
  const provider = {
    toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: declarations }),
    executeToolCalls: (calls: ReadonlyArray<ToolCall>) => {
      sent.push(calls)
      const list = Array.isArray(calls) ? calls : []
      return TE.right(
        list.map((c: ToolCall): ToolResult => ({
          role: 'tool',
          tool_call_id: c.id,
          content: c.function.name === 'bad' ? 'it broke' : `${c.function.name} ran`,
          ...(c.function.name === 'bad' ? { is_error: true as const } : {}),
        })),
      )
    },
  }
  return { sent, provider }
}

describe('executeToolUses, blocks it cannot read in full', () => {
  it('an id or name that is not a string is sent as "", a toolset name that is not a string is not echoed', async () => {
    const { sent, provider } = recording()
    const out = await executeToolUses(provider)([
      { type: 'tool_use', id: 5, name: null, input: {}, toolset_name: 7 },
      { type: 'tool_use', id: 't', name: 'n', input: {}, toolset_name: 'kit' },
    ] as never)()
    expect((sent[0] as ReadonlyArray<ToolCall>).map((c) => [c.id, c.function.name])).toEqual([
      ['', ''],
      ['t', 'n'],
    ])
    expect(out).toEqual({
      _tag: 'Right',
      right: [
        { type: 'tool_result', tool_use_id: '', content: ' ran' },
        { type: 'tool_result', tool_use_id: 't', content: 'n ran', toolset_name: 'kit' },
      ],
    })
  })

  it('content that is not a list goes to the provider as it is, each of its results answered', async () => {
    const answering = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: [] }),
      executeToolCalls: () =>
        TE.right([{ role: 'tool' as const, tool_call_id: 'x', content: 'not a batch', is_error: true as const }]),
    }
    const odd = { length: 0 }
    expect(await executeToolUses(answering)(odd as never)()).toEqual({
      _tag: 'Right',
      right: [{ type: 'tool_result', tool_use_id: 'x', content: 'not a batch', is_error: true }],
    })
    const { sent, provider } = recording()
    await executeToolUses(provider)(odd as never)()
    expect(sent[0]).toBe(odd)
  })
})

describe('toRunnableTools, each tool', () => {
  const schema = { type: 'object', properties: { p: {} } }
  const declarations: ReadonlyArray<ToolDeclaration> = [
    { type: 'function', function: { name: 'described', description: 'Does it', parameters: schema } },
    { type: 'function', function: { name: 'bad' } },
  ]

  it('is a custom tool with the declaration’s name, description and schema (the empty object schema for none)', async () => {
    const { provider } = recording(declarations)
    const [described, bad] = await toRunnableTools(provider)
    expect(described).toMatchObject({ type: 'custom', name: 'described', description: 'Does it', input_schema: schema })
    expect((described as { input_schema?: unknown } | undefined)?.input_schema).toBe(schema)
    expect(bad).toMatchObject({ type: 'custom', name: 'bad', input_schema: { type: 'object', properties: {} } })
    expect(bad).not.toHaveProperty('description')
  })

  it('runs with the tool_use block’s id ("" without one), returns the text, and throws an is_error result’s text', async () => {
    const { sent, provider } = recording(declarations)
    const [described, bad] = await toRunnableTools(provider)
    const input = { p: 1 }
    expect(await described?.run(input, { toolUse: { id: 'toolu_9' } } as never)).toBe('described ran')
    expect(await described?.run(input)).toBe('described ran')
    expect(await described?.run(input, { toolUse: 'x' } as never)).toBe('described ran')
    expect(await described?.run(input, { toolUse: { id: 3 } } as never)).toBe('described ran')
    await expect(bad?.run({}, { toolUse: { id: 'toolu_b' } } as never)).rejects.toThrow(new Error('it broke'))
    const calls = sent.flatMap((s) => s as ReadonlyArray<ToolCall>)
    expect(calls.map((c) => c.id)).toEqual(['toolu_9', '', '', '', 'toolu_b'])
    expect(calls[0]?.function.arguments).toBe(input)
  })
})
