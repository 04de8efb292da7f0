// The mappings of toolstack/openai (src/openai/chat.ts, src/openai/responses.ts), value
// by value: each field they write, each member they leave out, each input they refuse or
// pass by, checked exactly; and, whatever the input, what each promises.
import type { ChatCompletionToolMessageParam } from 'openai/resources/chat/completions'
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ToolDeclaration, ToolResult } from '../../src/index.js'
import {
  fromResponsesCalls,
  textForModel,
  toFunctionCallOutputs,
  toResponsesTools,
  toToolMessages,
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
