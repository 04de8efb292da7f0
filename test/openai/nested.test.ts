// Nested keys heard by path through the openai SDK's own client (issue 22, item 6), its
// fetch answered with recorded responses (no network). toolstack/openai does not audit:
// its mappings carry the model's calls to a stack, whose withUnknownKeyAudit hears them.
// These loops prove the mappings hand the stack the nested arguments untouched, in the
// Responses API and in Chat Completions. The declarations are the JSON Schemas zod writes
// for `read` ({ path, opts: { encoding } }) and `draw` ({ shape: circle | square, told
// apart by kind }); see test/support/nested.ts.
import OpenAI from 'openai'
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { fromTools, withUnknownKeyAudit } from '../../src/index.js'
import { fromResponsesCalls, toFunctionCallOutputs, toResponsesTools, toToolMessages } from '../../src/openai/index.js'
import { DRAW_INPUT, READ_INPUT, drawWarning, nestedDeclarations, readWarning } from '../support/nested.js'

/** A client whose fetch answers each path's recorded responses in turn and records every request body. */
const clientAnswering = (script: Record<string, Array<unknown>>) => {
  const requests: Array<{ path: string; body: Record<string, unknown> }> = []
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const path = new URL(String(url)).pathname.replace(/^\/v1/, '')
    requests.push({ path, body: JSON.parse(String(init?.body)) as Record<string, unknown> })
    const next = script[path]?.shift()
    return new Response(JSON.stringify(next ?? { error: { message: `no recorded response for ${path}` } }), {
      status: next === undefined ? 500 : 200,
      headers: { 'content-type': 'application/json' },
    })
  }
  return { client: new OpenAI({ apiKey: 'test', baseURL: 'http://recorded.invalid/v1', maxRetries: 0, fetch }), requests }
}

const respBase = {
  object: 'response',
  created_at: 0,
  model: 'gpt-test',
  status: 'completed',
  error: null,
  incomplete_details: null,
  instructions: null,
  metadata: {},
  parallel_tool_calls: true,
  temperature: 1,
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
}
const chatBase = { id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'gpt-test', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }

/** A response calling read and draw with the inputs, under the call ids `readId` and `drawId`. */
const respCalls = (readId: string, drawId: string) => ({
  ...respBase,
  id: `resp_${readId}`,
  output: [
    { type: 'function_call', id: `fc_${readId}`, call_id: readId, name: 'read', arguments: READ_INPUT, status: 'completed' },
    { type: 'function_call', id: `fc_${drawId}`, call_id: drawId, name: 'draw', arguments: DRAW_INPUT, status: 'completed' },
  ],
})
const respText = { ...respBase, id: 'resp_text', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }] }

const chatCalls = (readId: string, drawId: string) => ({
  ...chatBase,
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      logprobs: null,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          { id: readId, type: 'function', function: { name: 'read', arguments: READ_INPUT } },
          { id: drawId, type: 'function', function: { name: 'draw', arguments: DRAW_INPUT } },
        ],
      },
    },
  ],
})
const chatText = { ...chatBase, choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'done', refusal: null } }] }

/** read and draw behind the audit, each answering the arguments it ran with, as JSON. */
const stackOf = (warnings: Array<UnknownKeyWarning>) =>
  pipe(
    fromTools(nestedDeclarations.map((declaration) => ({ declaration, run: (args: Record<string, unknown>) => JSON.stringify(args) }))),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
  )

describe('a Responses API loop through the SDK client: nested keys by path', () => {
  it('the calls go to the stack as the model wrote them; its audit hears opts.encodng and shape.side once each; the tools run', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const stack = stackOf(warnings)
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error('unreachable')
    const { client, requests } = clientAnswering({ '/responses': [respCalls('c1', 'c2'), respText, respCalls('c3', 'c4'), respText] })

    const round = async () => {
      const first = await client.responses.create({ model: 'gpt-test', input: 'draw', tools: toResponsesTools(listed.right, { strict: false }) })
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
        input: [{ role: 'user', content: 'draw' }, ...(first.output as Array<ResponseInputItem>), ...toFunctionCallOutputs(results.right)],
      })
      expect(second.output_text).toBe('done')
    }

    await round()
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    // the API was sent the declarations zod wrote, nested schemas and all
    expect((requests[0]?.body['tools'] as ReadonlyArray<Record<string, unknown>>).map((t) => t['parameters'])).toStrictEqual(nestedDeclarations.map((d) => d.function.parameters))

    // the same calls again: nothing new is said, and they are counted
    await round()
    expect(warnings).toHaveLength(2)
    expect(stack.stats()).toStrictEqual([
      { tool: 'draw', key: 'shape.side', calls: 2, firstId: 'c2' },
      { tool: 'read', key: 'opts.encodng', calls: 2, firstId: 'c1' },
    ])
  })
})

describe('a Chat Completions loop through the SDK client: nested keys by path', () => {
  it('the assistant’s calls go to the stack as they are; its audit hears opts.encodng and shape.side once each; the tools run', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const stack = stackOf(warnings)
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error('unreachable')
    const { client, requests } = clientAnswering({ '/chat/completions': [chatCalls('c1', 'c2'), chatText, chatCalls('c3', 'c4'), chatText] })

    const round = async () => {
      const first = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'draw' }], tools: [...listed.right] })
      const message = first.choices[0]?.message
      if (message === undefined) throw new Error('no choice')
      const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function')
      const results = await stack.executeToolCalls(calls)()
      if (results._tag === 'Left') throw new Error('unreachable')
      const second = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'draw' }, message, ...toToolMessages(results.right)] })
      expect(second.choices[0]?.message.content).toBe('done')
      return requests.at(-1)
    }

    const sent = await round()
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    // each tool ran with the very keys the model wrote, and the model read what it answered
    expect((sent?.body['messages'] as ReadonlyArray<Record<string, unknown>>).filter((m) => m['role'] === 'tool')).toStrictEqual([
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(JSON.parse(READ_INPUT)) },
      { role: 'tool', tool_call_id: 'c2', content: JSON.stringify(JSON.parse(DRAW_INPUT)) },
    ])

    await round()
    expect(warnings).toHaveLength(2)
    expect(stack.stats()).toStrictEqual([
      { tool: 'draw', key: 'shape.side', calls: 2, firstId: 'c2' },
      { tool: 'read', key: 'opts.encodng', calls: 2, firstId: 'c1' },
    ])
  })
})
