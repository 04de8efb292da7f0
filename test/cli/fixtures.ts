import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions'
import type { ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses'
// Chat-completion request bodies as hosts record them: each request repeats the
// conversation so far.

export const fsRead = {
  type: 'function',
  function: {
    name: 'fs_read',
    parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } },
  },
}
export const webGet = {
  type: 'function',
  function: { name: 'web_get', parameters: { type: 'object', properties: { url: { type: 'string' } } } },
}
export const noProps = { type: 'function', function: { name: 'now', parameters: { type: 'object' } } }

export const toolCall = (id: string, name: string, args: unknown): unknown => ({
  id,
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
})

export const assistant = (...calls: ReadonlyArray<unknown>): unknown => ({
  role: 'assistant',
  content: null,
  tool_calls: calls,
})
export const toolMsg = (id: string): unknown => ({ role: 'tool', tool_call_id: id, content: 'ok' })

/** The requests of one session: request i holds the first i turns. */
export const session = (
  tools: ReadonlyArray<unknown>,
  turns: ReadonlyArray<ReadonlyArray<unknown>>,
): Array<unknown> => {
  const out: Array<unknown> = []
  const messages: Array<unknown> = [{ role: 'user', content: 'go' }]
  out.push({ model: 'm', tools, messages: [...messages] })
  for (const calls of turns) {
    messages.push(assistant(...calls))
    for (const c of calls) messages.push(toolMsg((c as { id: string }).id))
    out.push({ model: 'm', tools, messages: [...messages] })
  }
  return out
}

export const jsonl = (records: ReadonlyArray<unknown>): string =>
  records.map((r) => JSON.stringify(r)).join('\n') + '\n'

// -------------------------------------------------------------------------------------
// one request of each API, shaped as its documentation shows it (the OpenAI ones are
// checked against the OpenAI SDK's own request types by the compiler)
// -------------------------------------------------------------------------------------

export const chatRequest = {
  model: 'gpt-4.1',
  messages: [
    { role: 'user', content: 'What is the weather like in Paris today?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_abc123',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"Paris, France","unit":"celsius","detail":true}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_abc123', content: '{"temperature": 14}' },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get current temperature for a given location.',
        parameters: {
          type: 'object',
          properties: {
            location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' },
            unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          },
          required: ['location'],
          additionalProperties: false,
        },
        strict: true,
      },
    },
  ],
} satisfies ChatCompletionCreateParamsNonStreaming

export const responsesRequest = {
  model: 'gpt-4.1',
  tools: [
    {
      type: 'function',
      name: 'get_weather',
      description: 'Get current temperature for a given location.',
      parameters: {
        type: 'object',
        properties: {
          location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['location', 'unit'],
        additionalProperties: false,
      },
      strict: true,
    },
    { type: 'web_search_preview' },
  ],
  input: [
    { role: 'user', content: 'What is the weather like in Paris today?' },
    {
      type: 'function_call',
      id: 'fc_12345xyz',
      call_id: 'call_12345xyz',
      name: 'get_weather',
      arguments: '{"location":"Paris, France","units":"celsius"}',
    },
    { type: 'function_call_output', call_id: 'call_12345xyz', output: '{"temperature": 14}' },
  ],
} satisfies ResponseCreateParamsNonStreaming

export const anthropicRequest = {
  model: 'claude-opus-4-1-20250805',
  max_tokens: 1024,
  tools: [
    {
      name: 'get_weather',
      description: 'Get the current weather in a given location',
      input_schema: {
        type: 'object',
        properties: {
          location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
          unit: {
            type: 'string',
            enum: ['celsius', 'fahrenheit'],
            description: "The unit of temperature, either 'celsius' or 'fahrenheit'",
          },
        },
        required: ['location'],
      },
    },
  ],
  messages: [
    { role: 'user', content: 'What is the weather like in San Francisco?' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'I need to use get_weather, and the user wants SF, which is likely San Francisco, CA.' },
        {
          type: 'tool_use',
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'get_weather',
          input: { location: 'San Francisco, CA', unit: 'celsius', city: 'SF' },
        },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '15 degrees' }],
    },
  ],
}
