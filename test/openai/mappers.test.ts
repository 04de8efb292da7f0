// The mappings of toolstack/openai (src/openai/chat.ts, src/openai/responses.ts), value
// by value: each field they write, each member they leave out, each input they refuse or
// pass by, checked exactly; and, whatever the input, what each promises.
import type { ChatCompletionMessageToolCall, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions'
import type { FunctionTool, ResponseInputItem, ResponseOutputItem } from 'openai/resources/responses/responses'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../../src/index.js'
import {
  executeChatToolCalls,
  fromResponsesCalls,
  textForModel,
  toFunctionCallOutputs,
  toResponsesTools,
  toResponsesInput,
  toToolMessages,
  unservedCustomCall,
  unservedCustomCallOutputs,
} from '../../src/openai/index.js'

const result = (
  over: Partial<ToolResult> & { readonly tool_call_id: string; readonly content: string },
): ToolResult => ({ role: 'tool', ...over })

describe('textForModel', () => {
  it('is the content itself unless is_error is true, then the content after "Error: "', () => {
    expect(textForModel(result({ tool_call_id: 'c', content: 'ok' }))).toBe('ok')
    expect(textForModel(result({ tool_call_id: 'c', content: 'ok', is_error: false }))).toBe('ok')
    expect(textForModel(result({ tool_call_id: 'c', content: 'no such file', is_error: true }))).toBe(
      'Error: no such file',
    )
    expect(textForModel(result({ tool_call_id: 'c', content: '', is_error: true }))).toBe('Error: ')
  })

  it('whatever the content: one prefix exactly when is_error is true', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.boolean(), { nil: undefined }), (content, isError) => {
        const text = textForModel({ content, ...(isError !== undefined ? { is_error: isError } : {}) })
        expect(text).toBe(isError === true ? 'Error: ' + content : content)
      }),
    )
  })
})

describe('toToolMessages', () => {
  it('writes role "tool", the call id and the text, and nothing else', () => {
    const messages: Array<ChatCompletionToolMessageParam> = toToolMessages([
      result({ tool_call_id: 'call_1', content: '42', structured_content: { n: 42 } }),
      result({ tool_call_id: 'call_2', content: 'denied', is_error: true }),
      result({ tool_call_id: '', content: '', is_error: false }),
    ])
    expect(messages).toStrictEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error: denied' },
      { role: 'tool', tool_call_id: '', content: '' },
    ])
    expect(toToolMessages([])).toStrictEqual([])
  })
})

describe('toResponsesTools', () => {
  const read: ToolDeclaration = {
    type: 'function',
    function: {
      name: 'read',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  }

  it('moves name, description and parameters up a level, with the strict chosen', () => {
    for (const strict of [false, true]) {
      const tools: Array<FunctionTool> = toResponsesTools([read], { strict })
      expect(tools).toStrictEqual([
        {
          type: 'function',
          name: 'read',
          description: 'Reads a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          strict,
        },
      ])
      // the very schema, not a copy
      expect(tools[0]?.parameters).toBe(read.function.parameters)
    }
  })

  it('a declaration without a description has no description member; an empty one is kept', () => {
    const [bare, empty] = toResponsesTools(
      [
        { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } },
        {
          type: 'function',
          function: { name: 'pong', description: '', parameters: { type: 'object', properties: {} } },
        },
      ],
      { strict: false },
    )
    expect(bare).toStrictEqual({
      type: 'function',
      name: 'ping',
      parameters: { type: 'object', properties: {} },
      strict: false,
    })
    expect(bare).not.toHaveProperty('description')
    expect(empty).toStrictEqual({
      type: 'function',
      name: 'pong',
      description: '',
      parameters: { type: 'object', properties: {} },
      strict: false,
    })
  })

  it('a declaration without parameters gets the empty object schema', () => {
    expect(
      toResponsesTools([{ type: 'function', function: { name: 'now', description: 'The time' } }], { strict: true }),
    ).toStrictEqual([
      {
        type: 'function',
        name: 'now',
        description: 'The time',
        parameters: { type: 'object', properties: {} },
        strict: true,
      },
    ])
  })

  it('refuses options that are not { strict: boolean }, with the same TypeError, before reading a declaration', () => {
    const refusal = 'toResponsesTools: options must be { strict: boolean }'
    for (const options of [
      undefined,
      null,
      'strict',
      [true],
      {},
      { strict: 'false' },
      { strict: 1 },
      { strict: null },
    ]) {
      expect(() => toResponsesTools([read], options as never)).toThrow(new TypeError(refusal))
    }
    // an array carrying a strict member is still not an options object
    expect(() => toResponsesTools([read], Object.assign([], { strict: true }) as never)).toThrow(new TypeError(refusal))
  })

  it('whatever the declarations: one tool each, in order, with its name and the strict chosen', () => {
    const declaration = fc.record(
      {
        name: fc.string({ maxLength: 8 }),
        description: fc.string({ maxLength: 8 }),
        parameters: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
      },
      { requiredKeys: ['name'] },
    )
    fc.assert(
      fc.property(fc.array(declaration, { maxLength: 5 }), fc.boolean(), (fns, strict) => {
        const tools = toResponsesTools(
          fns.map((f) => ({ type: 'function', function: f })),
          { strict },
        )
        expect(tools).toStrictEqual(
          fns.map((f) => ({
            type: 'function',
            name: f.name,
            ...(f.description !== undefined ? { description: f.description } : {}),
            parameters: f.parameters ?? { type: 'object', properties: {} },
            strict,
          })),
        )
      }),
    )
  })
})

describe('fromResponsesCalls', () => {
  it('takes call_id as the id, the name and the very arguments; keeps nothing else of the item', () => {
    const args = '{"path":"a","ffset":3}'
    expect(
      fromResponsesCalls([
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: args, status: 'completed' },
      ]),
    ).toStrictEqual([{ id: 'call_1', type: 'function', function: { name: 'read', arguments: args } }])
  })

  it('passes by every item that is not a function_call record: other types, no type, null, primitives, an array dressed as a call', () => {
    const call = { type: 'function_call', call_id: 'call_2', name: 'read', arguments: '{}' }
    const items: ReadonlyArray<unknown> = [
      null,
      undefined,
      7,
      'function_call',
      Object.assign([], call),
      { type: 'function_call_output', call_id: 'call_0', output: 'x' },
      { call_id: 'call_9', name: 'read', arguments: '{}' },
      { type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [] },
      call,
    ]
    expect(fromResponsesCalls(items)).toStrictEqual([
      { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{}' } },
    ])
    expect(fromResponsesCalls([])).toStrictEqual([])
  })
})

describe('toFunctionCallOutputs', () => {
  it('one function_call_output per result: its call_id the result’s tool_call_id, its output the text, nothing else', () => {
    const outputs: Array<ResponseInputItem> = toFunctionCallOutputs([
      result({ tool_call_id: 'call_1', content: 'read a', structured_content: { lines: 1 } }),
      result({ tool_call_id: 'call_2', content: 'no such file', is_error: true }),
    ])
    expect(outputs).toStrictEqual([
      { type: 'function_call_output', call_id: 'call_1', output: 'read a' },
      { type: 'function_call_output', call_id: 'call_2', output: 'Error: no such file' },
    ])
  })
})

describe('toResponsesInput', () => {
  it('the very output items, in order, every kind kept', () => {
    const output: Array<ResponseOutputItem> = [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{}' },
      { type: 'custom_tool_call', id: 'ct_1', call_id: 'call_2', name: 'sql', input: 'select 1' },
    ]
    const input = toResponsesInput(output)
    expect(input).toHaveLength(3)
    input.forEach((item, i) => expect(item).toBe(output[i]))
    expect(toResponsesInput([])).toStrictEqual([])
  })
})

describe('unservedCustomCallOutputs', () => {
  it('one custom_tool_call_output per custom_tool_call item, in order, saying it was not run; every other item passed by', () => {
    const output: Array<ResponseOutputItem> = [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'custom_tool_call', id: 'ct_1', call_id: 'call_1', name: 'apply_patch', input: '*** Begin' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'read', arguments: '{}' },
      { type: 'custom_tool_call', call_id: 'call_3', name: 'sql\u001b[2J', input: 'DROP TABLE t' },
    ]
    // the SDK's own input type, no cast: the items go back, then the answers to their calls
    const input: Array<ResponseInputItem> = [
      ...toResponsesInput(output),
      ...toFunctionCallOutputs([result({ tool_call_id: 'call_2', content: 'read' })]),
      ...unservedCustomCallOutputs(output),
    ]
    expect(input.slice(4)).toStrictEqual([
      { type: 'function_call_output', call_id: 'call_2', output: 'read' },
      {
        type: 'custom_tool_call_output',
        call_id: 'call_1',
        output: 'custom tools are not served here: "apply_patch" was not run; call a function tool instead',
      },
      {
        type: 'custom_tool_call_output',
        call_id: 'call_3',
        output: 'custom tools are not served here: "sql\\u001b[2J" was not run; call a function tool instead',
      },
    ])
    expect(unservedCustomCallOutputs([])).toStrictEqual([])
  })

  it('says for each custom call what unservedCustomCall says for Chat Completions', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.string({ maxLength: 8 }), (name, id) => {
        const [answer] = unservedCustomCallOutputs([{ type: 'custom_tool_call', call_id: id, name, input: '' }])
        expect(answer).toStrictEqual({
          type: 'custom_tool_call_output',
          call_id: id,
          output: unservedCustomCall({ id, type: 'custom', custom: { name, input: '' } }).content,
        })
      }),
    )
  })

  it('reads hostile items without throwing: no call_id is the empty id, a name not a string is described', () => {
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap')
        },
      },
    )
    expect(
      unservedCustomCallOutputs([
        null,
        'custom_tool_call',
        trap,
        [{ type: 'custom_tool_call' }],
        { type: 'custom_tool_call', name: { toString: () => 'x' } },
      ]),
    ).toStrictEqual([
      {
        type: 'custom_tool_call_output',
        call_id: '',
        output: 'custom tools are not served here: an object was not run; call a function tool instead',
      },
    ])
  })
})

// -------------------------------------------------------------------------------------
// executeChatToolCalls
// -------------------------------------------------------------------------------------

/** A provider that answers each call with its own id and records every batch it is given. */
const echo = () => {
  const batches: Array<ReadonlyArray<ToolCall>> = []
  const provider: Provider<never> = {
    toolsForLlm: TE.right([]),
    executeToolCalls: (calls) => {
      batches.push(calls)
      return TE.right(calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: `ran ${c.function.name}` })))
    },
  }
  return { provider, batches }
}

const callArb: fc.Arbitrary<ChatCompletionMessageToolCall> = fc.oneof(
  fc
    .record({ id: fc.string({ maxLength: 4 }), name: fc.string({ maxLength: 4 }) })
    .map(({ id, name }) => ({ id, type: 'function' as const, function: { name, arguments: '{}' } })),
  fc
    .record({ id: fc.string({ maxLength: 4 }), name: fc.string({ maxLength: 300 }) })
    .map(({ id, name }) => ({ id, type: 'custom' as const, custom: { name, input: 'x' } })),
)

describe('unservedCustomCall', () => {
  it('an is_error result for the call’s id that names the tool, quoted', () => {
    expect(
      unservedCustomCall({ id: 'c9', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin' } }),
    ).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c9',
      content: 'custom tools are not served here: "apply_patch" was not run; call a function tool instead',
      is_error: true,
    })
  })

  it('whatever the name: cut, no control character, direction mark or line separator left in the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (name) => {
        const r = unservedCustomCall({ id: 'c', type: 'custom', custom: { name, input: '' } })
        expect(r.is_error).toBe(true)
        expect(r.content.length).toBeLessThan(80 * 6 + 100)
        expect(r.content).not.toMatch(
          // eslint-disable-next-line no-control-regex
          /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/,
        )
      }),
    )
  })

  it('a name that is not a string is described, not thrown on', () => {
    const hostile = { id: 'c', type: 'custom', custom: { name: { toString: () => 'x' }, input: '' } }
    expect(unservedCustomCall(hostile as never).content).toBe(
      'custom tools are not served here: an object was not run; call a function tool instead',
    )
  })
})

describe('executeChatToolCalls', () => {
  it('whatever the mix: one result per call, in order; the provider gets the function calls only, the same objects, in one batch', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(callArb, { maxLength: 6 }), async (calls) => {
        const { provider, batches } = echo()
        const results = await executeChatToolCalls(provider)(calls)()
        if (results._tag === 'Left') throw new Error('unreachable')
        expect(results.right.map((r) => r.tool_call_id)).toEqual(calls.map((c) => c.id))
        results.right.forEach((r, i) => {
          const c = calls[i] as ChatCompletionMessageToolCall
          expect(r).toStrictEqual(
            c.type === 'function'
              ? { role: 'tool', tool_call_id: c.id, content: `ran ${c.function.name}` }
              : unservedCustomCall(c),
          )
        })
        const fns = calls.filter((c) => c.type === 'function')
        expect(batches).toEqual(fns.length === 0 ? [] : [fns])
        batches[0]?.forEach((c, i) => expect(c).toBe(fns[i]))
      }),
    )
  })

  it('no tool calls (undefined, null, empty): no results and the provider is not called', async () => {
    for (const none of [undefined, null, []]) {
      const { provider, batches } = echo()
      expect(await executeChatToolCalls(provider)(none)()).toStrictEqual({ _tag: 'Right', right: [] })
      expect(batches).toEqual([])
    }
  })

  it('a Left of the provider passes through as it came; a result the provider left out is an is_error result', async () => {
    const failing: Provider<string> = { toolsForLlm: TE.right([]), executeToolCalls: () => TE.left('down') }
    const call: ChatCompletionMessageToolCall = { id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }
    expect(await executeChatToolCalls(failing)([call])()).toStrictEqual({ _tag: 'Left', left: 'down' })
    const short: Provider<never> = { toolsForLlm: TE.right([]), executeToolCalls: () => TE.right([]) }
    expect(await executeChatToolCalls(short)([call])()).toStrictEqual({
      _tag: 'Right',
      right: [
        {
          role: 'tool',
          tool_call_id: 'c1',
          content: 'the tool provider returned no result for this call',
          is_error: true,
        },
      ],
    })
  })
})
