// Nested keys heard by path through the openai SDK's own client (issue 22, item 6), its
// fetch answered with recorded responses (no network). toolstack/openai does not audit:
// its mappings carry the model's calls to a stack, whose withUnknownKeyAudit hears them.
// These loops prove the mappings hand the stack the nested arguments untouched, in the
// Responses API and in Chat Completions. The declarations are the JSON Schemas zod writes
// for `read` ({ path, opts: { encoding } }) and `draw` ({ shape: circle | square, told
// apart by kind }); see test/support/nested.ts.
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import { describe, expect, it } from 'vitest'
import { fromResponsesCalls, toFunctionCallOutputs, toResponsesTools, toToolMessages } from '../../src/openai/index.js'
import {
  DRAW_INPUT,
  READ_INPUT,
  drawWarning,
  nestedDeclarations,
  nestedStack,
  nestedStats,
  readWarning,
  strayCalls,
} from '../support/nested.js'
import type { RecordedCall } from './support.js'
import { chatCalls, chatText, clientAnswering, listedTools, respCalls, respText } from './support.js'

/** The calls to read and draw, under the call ids `readId` and `drawId`. */
const nestedCalls = (readId: string, drawId: string): ReadonlyArray<RecordedCall> =>
  strayCalls(readId, drawId).map((c) => ({ id: c.id, name: c.tool, arguments: c.input }))

/** read and draw behind the audit, each answering the arguments it ran with, as JSON; what the stack lists for the model. */
const setUp = async () => {
  const { stack, warnings } = nestedStack(nestedDeclarations, (_, args) => JSON.stringify(args))
  return { stack, warnings, listed: await listedTools(stack) }
}

describe('a Responses API loop through the SDK client: nested keys by path', () => {
  it('the calls go to the stack as the model wrote them; its audit hears opts.encodng and shape.side once each; the tools run', async () => {
    const { stack, warnings, listed } = await setUp()
    const { client, requests } = clientAnswering({
      '/responses': [
        respCalls('resp_c1', nestedCalls('c1', 'c2')),
        respText('resp_text'),
        respCalls('resp_c3', nestedCalls('c3', 'c4')),
        respText('resp_text'),
      ],
    })

    const round = async () => {
      const first = await client.responses.create({
        model: 'gpt-test',
        input: 'draw',
        tools: toResponsesTools(listed, { strict: false }),
      })
      const calls = fromResponsesCalls(first.output)
      expect(calls.map((c) => c.function.arguments)).toStrictEqual([READ_INPUT, DRAW_INPUT])
      const results = await stack.executeToolCalls(calls)()
      if (results._tag === 'Left') throw new Error('unreachable')
      // each tool ran with the very keys the model wrote, the stray one included
      expect(results.right.map((r) => [r.content, r.is_error])).toStrictEqual([
        [JSON.stringify(JSON.parse(READ_INPUT)), undefined],
        [JSON.stringify(JSON.parse(DRAW_INPUT)), undefined],
      ])
      const second = await client.responses.create({
        model: 'gpt-test',
        // the SDK's output items go back as input; its own types disagree under exactOptionalPropertyTypes
        input: [
          { role: 'user', content: 'draw' },
          ...(first.output as Array<ResponseInputItem>),
          ...toFunctionCallOutputs(results.right),
        ],
      })
      expect(second.output_text).toBe('done')
    }

    await round()
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    // the API was sent the declarations zod wrote, nested schemas and all
    expect(
      (requests[0]?.body['tools'] as ReadonlyArray<Record<string, unknown>>).map((t) => t['parameters']),
    ).toStrictEqual(nestedDeclarations.map((d) => d.function.parameters))

    // the same calls again: nothing new is said, and they are counted
    await round()
    expect(warnings).toHaveLength(2)
    expect(stack.stats()).toStrictEqual(nestedStats(2))
  })
})

describe('a Chat Completions loop through the SDK client: nested keys by path', () => {
  it('the assistant’s calls go to the stack as they are; its audit hears opts.encodng and shape.side once each; the tools run', async () => {
    const { stack, warnings, listed } = await setUp()
    const { client, requests } = clientAnswering({
      '/chat/completions': [chatCalls(nestedCalls('c1', 'c2')), chatText, chatCalls(nestedCalls('c3', 'c4')), chatText],
    })

    const round = async () => {
      const first = await client.chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'draw' }],
        tools: [...listed],
      })
      const message = first.choices[0]?.message
      if (message === undefined) throw new Error('no choice')
      const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function')
      const results = await stack.executeToolCalls(calls)()
      if (results._tag === 'Left') throw new Error('unreachable')
      const second = await client.chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'draw' }, message, ...toToolMessages(results.right)],
      })
      expect(second.choices[0]?.message.content).toBe('done')
      return requests.at(-1)
    }

    const sent = await round()
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    // each tool ran with the very keys the model wrote, and the model read what it answered
    expect(
      (sent?.body['messages'] as ReadonlyArray<Record<string, unknown>>).filter((m) => m['role'] === 'tool'),
    ).toStrictEqual([
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(JSON.parse(READ_INPUT)) },
      { role: 'tool', tool_call_id: 'c2', content: JSON.stringify(JSON.parse(DRAW_INPUT)) },
    ])

    await round()
    expect(warnings).toHaveLength(2)
    expect(stack.stats()).toStrictEqual(nestedStats(2))
  })
})
