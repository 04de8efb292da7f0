// The openai SDK's own client, its fetch answered with recorded responses (no network):
// a Responses API loop and a Chat Completions loop over a toolstack stack, with the
// mappings of toolstack/openai; and what the mappings promise whatever the results.
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import type { ResponseInputItem } from 'openai/resources/responses/responses'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import type { ToolResult, UnknownKeyWarning } from '../../src/index.js'
import { fromTools, withPolicy, withUnknownKeyAudit } from '../../src/index.js'
import {
  executeChatToolCalls,
  fromResponsesCalls,
  toFunctionCallOutputs,
  toResponsesInput,
  toResponsesTools,
  toToolMessages,
  unservedCustomCallOutputs,
} from '../../src/openai/index.js'
import type { RecordedCall } from './support.js'
import { chatCalls, chatText, clientAnswering, listedTools, respCalls, respText } from './support.js'

// -------------------------------------------------------------------------------------
// recorded responses
// -------------------------------------------------------------------------------------

const notesCalls: ReadonlyArray<RecordedCall> = [
  { id: 'call_1', name: 'read', arguments: '{"path":"notes.txt","ffset":3}' },
  { id: 'call_2', name: 'remove', arguments: '{"path":"notes.txt"}' },
]

const stack = (warnings: Array<UnknownKeyWarning>) =>
  pipe(
    fromTools([
      {
        declaration: {
          type: 'function',
          function: {
            name: 'read',
            description: 'Reads a file',
            parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } },
          },
        },
        run: (a) => ({ content: `read ${String(a['path'])}`, structured_content: { lines: 3 } }),
      },
      {
        declaration: {
          type: 'function',
          function: { name: 'remove', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
        },
        run: () => 'removed',
      },
    ]),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
    withPolicy({
      rules: [
        { tool: 'read', decision: 'allow' },
        { tool: 'remove', decision: 'deny', under: '/', note: 'nothing is removed' },
      ],
      roots: { '': '/srv' },
    }),
  )

describe('a Responses API loop through the SDK client', () => {
  it('tools, calls and outputs mapped; the audit hears ffset; an is_error result goes back in words', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const tools = stack(warnings)
    const listed = await listedTools(tools)
    const { client, requests } = clientAnswering({
      '/responses': [
        respCalls('resp_1', notesCalls, [{ type: 'reasoning', id: 'rs_1', summary: [] }]),
        respText('resp_2'),
      ],
    })
    const first = await client.responses.create({
      model: 'gpt-test',
      input: 'read my notes',
      tools: toResponsesTools(listed, { strict: false }),
    })
    const calls = fromResponsesCalls(first.output)
    expect(calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt","ffset":3}' } },
      { id: 'call_2', type: 'function', function: { name: 'remove', arguments: '{"path":"notes.txt"}' } },
    ])
    const results = await tools.executeToolCalls(calls)()
    if (results._tag === 'Left') throw new Error('unreachable')
    // the conversation as a host keeps it: the output items back as they came, then their outputs; no cast
    const input: Array<ResponseInputItem> = [{ role: 'user', content: 'read my notes' }]
    input.push(...toResponsesInput(first.output), ...toFunctionCallOutputs(results.right))
    const second = await client.responses.create({ model: 'gpt-test', input })
    expect(second.output_text).toBe('done')
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.id, w.suggestions])).toEqual([
      ['read', ['ffset'], 'call_1', [{ key: 'ffset', didYouMean: 'offset' }]],
    ])

    // what the API was sent
    expect(requests[0]?.body['tools']).toEqual([
      {
        type: 'function',
        name: 'read',
        description: 'Reads a file',
        parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } },
        strict: false,
      },
      {
        type: 'function',
        name: 'remove',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
        strict: false,
      },
    ])
    const sent = requests[1]?.body['input'] as ReadonlyArray<Record<string, unknown>>
    // the reasoning item and the calls go back as the API gave them, before their outputs
    expect(sent.slice(0, 4)).toEqual([
      { role: 'user', content: 'read my notes' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      expect.objectContaining({ type: 'function_call', id: 'fc_call_1', call_id: 'call_1' }),
      expect.objectContaining({ type: 'function_call', id: 'fc_call_2', call_id: 'call_2' }),
    ])
    expect(sent.filter((i) => i['type'] === 'function_call_output')).toEqual([
      { type: 'function_call_output', call_id: 'call_1', output: 'read notes.txt' },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: expect.stringMatching(
          /^Error: The permission policy refused this call to "remove".*nothing is removed/,
        ),
      },
    ])
  })
})

describe('a Responses API loop with a custom tool call', () => {
  it('the custom call is answered, not run: a custom_tool_call_output goes back beside the function call outputs, no cast', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const tools = stack(warnings)
    const { client, requests } = clientAnswering({
      '/responses': [
        respCalls('resp_1', [
          { id: 'call_c', name: 'shell\u001b[2J', arguments: 'rm -rf /', custom: true },
          { id: 'call_1', name: 'read', arguments: '{"path":"notes.txt"}' },
        ]),
        respText('resp_2'),
      ],
    })
    const first = await client.responses.create({
      model: 'gpt-test',
      input: 'read my notes',
      tools: toResponsesTools(await listedTools(tools), { strict: false }),
    })
    const results = await tools.executeToolCalls(fromResponsesCalls(first.output))()
    if (results._tag === 'Left') throw new Error('unreachable')
    const input: Array<ResponseInputItem> = [{ role: 'user', content: 'read my notes' }]
    input.push(
      ...toResponsesInput(first.output),
      ...toFunctionCallOutputs(results.right),
      ...unservedCustomCallOutputs(first.output),
    )
    const second = await client.responses.create({ model: 'gpt-test', input })
    expect(second.output_text).toBe('done')
    // every call the model made has its answer in what the API was sent
    const sent = requests[1]?.body['input'] as ReadonlyArray<Record<string, unknown>>
    expect(sent.slice(1)).toEqual([
      { type: 'custom_tool_call', id: 'ctc_call_c', call_id: 'call_c', name: 'shell\u001b[2J', input: 'rm -rf /' },
      expect.objectContaining({ type: 'function_call', call_id: 'call_1' }),
      { type: 'function_call_output', call_id: 'call_1', output: 'read notes.txt' },
      {
        type: 'custom_tool_call_output',
        call_id: 'call_c',
        output: 'custom tools are not served here: "shell\\u001b[2J" was not run; call a function tool instead',
      },
    ])
  })
})

describe('a Chat Completions loop through the SDK client', () => {
  it('the assistant’s tool_calls go in as they come, a custom call answered in words; tool messages carry role, id and content only', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const tools = stack(warnings)
    const listed = await listedTools(tools)
    const calls: ReadonlyArray<RecordedCall> = [
      notesCalls[0] as RecordedCall,
      { id: 'call_c', name: 'shell\u001b[2J', arguments: 'rm -rf /', custom: true },
      notesCalls[1] as RecordedCall,
    ]
    const { client, requests } = clientAnswering({ '/chat/completions': [chatCalls(calls), chatText] })
    const messages: Array<ChatCompletionMessageParam> = [{ role: 'user', content: 'read my notes' }]
    const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools: [...listed] })
    const message = first.choices[0]?.message
    if (message === undefined) throw new Error('no choice')
    messages.push(message)
    // as the README shows it: the SDK's tool_calls, custom calls and all, with no filter and no cast
    const results = await executeChatToolCalls(tools)(message.tool_calls)()
    if (results._tag === 'Left') throw new Error('unreachable')
    expect(results.right.map((r) => [r.tool_call_id, r.is_error === true])).toEqual([
      ['call_1', false],
      ['call_c', true],
      ['call_2', true],
    ])
    expect(results.right[0]).toMatchObject({ structured_content: { lines: 3 } })
    messages.push(...toToolMessages(results.right))
    const second = await client.chat.completions.create({ model: 'gpt-test', messages })
    expect(second.choices[0]?.message.content).toBe('done')
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['ffset']])
    const sent = (requests[1]?.body['messages'] as ReadonlyArray<Record<string, unknown>>).filter(
      (m) => m['role'] === 'tool',
    )
    expect(sent).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'read notes.txt' },
      {
        role: 'tool',
        tool_call_id: 'call_c',
        content: 'Error: custom tools are not served here: "shell\\u001b[2J" was not run; call a function tool instead',
      },
      { role: 'tool', tool_call_id: 'call_2', content: expect.stringMatching(/^Error: The permission policy refused/) },
    ])
  })
})

// -------------------------------------------------------------------------------------
// whatever the results
// -------------------------------------------------------------------------------------

const resultArb: fc.Arbitrary<ToolResult> = fc
  .record({
    id: fc.string({ maxLength: 6 }),
    content: fc.string({ maxLength: 12 }),
    is_error: fc.option(fc.boolean(), { nil: undefined }),
    structured: fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined }),
  })
  .map(({ id, content, is_error, structured }) => ({
    role: 'tool' as const,
    tool_call_id: id,
    content,
    ...(is_error !== undefined ? { is_error } : {}),
    ...(structured !== undefined ? { structured_content: structured } : {}),
  }))

const messageIsSendable = (r: ToolResult, m: Record<string, unknown>): boolean =>
  Object.keys(m).sort().join() === 'content,role,tool_call_id' &&
  m['role'] === 'tool' &&
  m['tool_call_id'] === r.tool_call_id &&
  m['content'] === (r.is_error === true ? `Error: ${r.content}` : r.content)

describe('toToolMessages and toFunctionCallOutputs, whatever the results', () => {
  it('one message per result, in order, with only the members the API accepts, an error said in words', () => {
    fc.assert(
      fc.property(fc.array(resultArb, { maxLength: 6 }), (results) => {
        const messages = toToolMessages(results)
        expect(messages).toHaveLength(results.length)
        messages.forEach((m, i) =>
          expect(messageIsSendable(results[i] as ToolResult, m as unknown as Record<string, unknown>)).toBe(true),
        )
        const outputs = toFunctionCallOutputs(results)
        outputs.forEach((o, i) =>
          expect(o).toEqual({
            type: 'function_call_output',
            call_id: results[i]?.tool_call_id,
            output: messages[i]?.content,
          }),
        )
      }),
    )
  })

  it('the property can fail: passing results on as they are breaks it', () => {
    const asTheyAre = (results: ReadonlyArray<ToolResult>): ReadonlyArray<Record<string, unknown>> =>
      results.map((r) => ({ ...r }))
    const out = fc.check(
      fc.property(fc.array(resultArb, { maxLength: 6 }), (results) =>
        asTheyAre(results).every((m, i) => messageIsSendable(results[i] as ToolResult, m)),
      ),
    )
    expect(out.failed).toBe(true)
  })

  it('fromResponsesCalls keeps the function calls, in order, each answerable by its call_id', () => {
    const itemArb = fc.oneof(
      fc
        .record({
          call_id: fc.string({ maxLength: 5 }),
          name: fc.string({ maxLength: 5 }),
          arguments: fc.string({ maxLength: 8 }),
        })
        .map((c) => ({ type: 'function_call', id: `fc_${c.call_id}`, ...c })),
      fc.constantFrom<unknown>(
        { type: 'message', id: 'm', role: 'assistant', content: [] },
        { type: 'reasoning', id: 'r', summary: [] },
        null,
        7,
      ),
    )
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 8 }), (items) => {
        const fns = items.filter(
          (i): i is { type: string; call_id: string; name: string; arguments: string } =>
            typeof i === 'object' && i !== null && (i as { type?: unknown }).type === 'function_call',
        )
        expect(fromResponsesCalls(items)).toEqual(
          fns.map((f) => ({ id: f.call_id, type: 'function', function: { name: f.name, arguments: f.arguments } })),
        )
      }),
    )
    expect(() => toResponsesTools([], {} as never)).toThrow(/strict: boolean/)
  })
})
