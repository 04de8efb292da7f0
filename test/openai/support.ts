// The openai SDK's own client, its fetch answered with recorded responses (no network),
// and the recorded responses the loops of openai.test.ts and nested.test.ts play back.
import OpenAI from 'openai'

/** A client whose fetch answers each path's recorded responses in turn and records every request body. */
export const clientAnswering = (script: Record<string, Array<unknown>>) => {
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
  return {
    client: new OpenAI({ apiKey: 'test', baseURL: 'http://recorded.invalid/v1', maxRetries: 0, fetch }),
    requests,
  }
}

/** A call the model makes in a recorded response: a function call, or with `custom` a custom tool call whose input is `arguments`. */
export interface RecordedCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
  readonly custom?: true
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
  usage: {
    input_tokens: 1,
    output_tokens: 1,
    total_tokens: 2,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  },
}
const chatBase = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-test',
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
}

/**
 * A Responses API response `id` whose output is `before` (a reasoning item, say), then for each of `calls` a
 * function call item `fc_<call id>`, or with `custom` a custom tool call item `ctc_<call id>`.
 */
export const respCalls = (id: string, calls: ReadonlyArray<RecordedCall>, before: ReadonlyArray<unknown> = []) => ({
  ...respBase,
  id,
  output: [
    ...before,
    ...calls.map((c) =>
      c.custom === true
        ? { type: 'custom_tool_call', id: `ctc_${c.id}`, call_id: c.id, name: c.name, input: c.arguments }
        : {
            type: 'function_call',
            id: `fc_${c.id}`,
            call_id: c.id,
            name: c.name,
            arguments: c.arguments,
            status: 'completed',
          },
    ),
  ],
})

/** A Responses API response `id` whose output is the assistant's message `done`. */
export const respText = (id: string) => ({
  ...respBase,
  id,
  output: [
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'done', annotations: [] }],
    },
  ],
})

/** A chat completion whose one choice is the assistant calling `calls`. */
export const chatCalls = (calls: ReadonlyArray<RecordedCall>) => ({
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
        tool_calls: calls.map((c) =>
          c.custom === true
            ? { id: c.id, type: 'custom', custom: { name: c.name, input: c.arguments } }
            : { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } },
        ),
      },
    },
  ],
})

/** A chat completion whose one choice is the assistant saying `done`. */
export const chatText = {
  ...chatBase,
  choices: [
    { index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'done', refusal: null } },
  ],
}

/** What a stack lists for the model; its listing is expected to succeed. */
export const listedTools = async <T>(stack: {
  readonly toolsForLlm: () => Promise<{ readonly _tag: 'Left' } | { readonly _tag: 'Right'; readonly right: T }>
}): Promise<T> => {
  const listed = await stack.toolsForLlm()
  if (listed._tag === 'Left') throw new Error('unreachable')
  return listed.right
}
