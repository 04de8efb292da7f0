// toAiSdkTools and fromAiSdkTools against their contracts, call by call: what a stack's
// tools look like to the AI SDK and what their execute sends down and answers (the
// SDK's own dynamicTool, jsonSchema and generateText), and what a user's AI SDK tools
// answer at the bottom of a stack (every toModelOutput shape, streamed outputs, a
// schema that cannot be read). The MCP-backed loops are in mcp.test.ts.
import type { Tool, ToolExecutionOptions, ToolSet } from 'ai'
import { asSchema, dynamicTool, generateText, jsonSchema, stepCountIs, tool } from 'ai'
import fc from 'fast-check'
import { right } from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../../src/index.js'
import { fromTools, isProviderFailure, withPolicy } from '../../src/index.js'
import { fromAiSdkTools, modelOutputOf, policyApproval, toAiSdkTools, toolResultError } from '../../src/ai-sdk/index.js'
import { scriptedModel, toolOutputs } from './support.js'

/** A provider listing `declarations` that records every batch of calls it is sent and answers each call with `answer`. */
const recording = (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer: (call: ToolCall) => ToolResult = (c) => ({ role: 'tool', tool_call_id: c.id, content: 'ok' }),
) => {
  const sent: Array<ReadonlyArray<ToolCall>> = []
  const provider: Provider<string> = {
    toolsForLlm: () => Promise.resolve(right(declarations)),
    executeToolCalls: (calls) => () => {
      sent.push(calls)
      return Promise.resolve(right(calls.map(answer)))
    },
  }
  return { provider, sent }
}

const fn = (name: string, rest: Partial<ToolDeclaration['function']> = {}): ToolDeclaration => ({
  type: 'function',
  function: { name, ...rest },
})

const options = (toolCallId: string, more: Partial<ToolExecutionOptions<unknown>> = {}) =>
  ({ toolCallId, messages: [], context: undefined, ...more }) as ToolExecutionOptions<unknown>

type Runnable = Tool & { readonly execute: NonNullable<Tool['execute']> }

const runnable = (tools: ToolSet, name: string): Runnable => {
  const t = tools[name]
  if (t?.execute === undefined) throw new Error(`no tool ${name} with an execute`)
  return t as Runnable
}

/** What a promise rejected with (fails the test when it resolves). */
const rejection = async (p: unknown): Promise<unknown> => {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection')
}

/** What a function threw (fails the test when it returns). */
const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw')
}

const messageOf = (e: unknown): string =>
  e instanceof Error ? `${e.name}: ${e.message}` : `not an Error: ${String(e)}`

// -------------------------------------------------------------------------------------
// modelOutputOf, toolResultError
// -------------------------------------------------------------------------------------

describe('modelOutputOf: the text the model reads', () => {
  const result: ToolResult = { role: 'tool', tool_call_id: 'c1', content: 'hello', structured_content: { n: 1 } }

  it('whatever the content, a result is read as its content, handed alone (Mastra) or as the AI SDK 7 argument', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.boolean(), (content, id, isError) => {
        const r: ToolResult = { role: 'tool', tool_call_id: id, content, ...(isError ? { is_error: true } : {}) }
        expect(modelOutputOf(r)).toStrictEqual({ type: 'text', value: content })
        expect(modelOutputOf({ toolCallId: id, input: {}, output: r })).toStrictEqual({ type: 'text', value: content })
      }),
    )
  })

  it('a string output is its own text; anything else is its JSON, "" when it has none', () => {
    expect(modelOutputOf(result)).toStrictEqual({ type: 'text', value: 'hello' })
    expect(modelOutputOf('plain')).toStrictEqual({ type: 'text', value: 'plain' })
    expect(modelOutputOf({ toolCallId: 'c1', input: {}, output: 'plain' })).toStrictEqual({
      type: 'text',
      value: 'plain',
    })
    expect(modelOutputOf({ toolCallId: 'c1', input: {}, output: { n: [1, 2] } })).toStrictEqual({
      type: 'text',
      value: '{"n":[1,2]}',
    })
    expect(modelOutputOf(42)).toStrictEqual({ type: 'text', value: '42' })
    expect(modelOutputOf(null)).toStrictEqual({ type: 'text', value: 'null' })
    expect(modelOutputOf(['a'])).toStrictEqual({ type: 'text', value: '["a"]' })
    expect(modelOutputOf(undefined)).toStrictEqual({ type: 'text', value: '' })
    expect(modelOutputOf({ toolCallId: 'c1', input: {} })).toStrictEqual({ type: 'text', value: '' })
  })

  it('something shaped almost like a result is not read as one', () => {
    // a record that is not a result is the AI SDK argument: its `output` is what is read
    expect(modelOutputOf({ role: 'user', content: 'hi' })).toStrictEqual({ type: 'text', value: '' })
    expect(modelOutputOf({ role: 'tool', content: 5 })).toStrictEqual({ type: 'text', value: '' })
    expect(modelOutputOf({ output: { role: 'user', content: 'hi' } })).toStrictEqual({
      type: 'text',
      value: '{"role":"user","content":"hi"}',
    })
  })

  it('an output JSON cannot write is described instead', () => {
    expect(modelOutputOf({ toolCallId: 'c1', input: {}, output: 10n })).toStrictEqual({
      type: 'text',
      value: 'bigint 10',
    })
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expect(modelOutputOf({ output: cyclic })).toStrictEqual({ type: 'text', value: 'an object' })
  })
})

describe('toolResultError', () => {
  it('says the content, as an Error, and keeps the very result, out of sight of a copy', () => {
    const result: ToolResult = { role: 'tool', tool_call_id: 'c1', content: 'no such file', is_error: true }
    const e = toolResultError(result)
    expect(e).toBeInstanceOf(Error)
    expect(String(e)).toBe('Error: no such file')
    expect(e.result).toBe(result)
    expect(Object.keys(e)).toStrictEqual([])
    expect(Object.getOwnPropertyDescriptor(e, 'result')?.enumerable).toBe(false)
  })
})

// -------------------------------------------------------------------------------------
// toAiSdkTools
// -------------------------------------------------------------------------------------

describe('toAiSdkTools: the listing', () => {
  it('one dynamic tool per name (the first declaration wins), its description when it has one, its JSON Schema, no validator', async () => {
    const readSchema = { type: 'object', properties: { path: { type: 'string' } } }
    const { provider } = recording([
      fn('read', { description: 'Reads a file', parameters: readSchema }),
      fn('ping'),
      fn('read', { description: 'a second read', parameters: { type: 'object' } }),
    ])
    const tools = await toAiSdkTools(provider)
    expect(Object.keys(tools)).toStrictEqual(['read', 'ping'])
    const read = runnable(tools, 'read')
    const ping = runnable(tools, 'ping')
    expect(read.type).toBe('dynamic')
    expect(read.description).toBe('Reads a file')
    expect(Object.hasOwn(ping, 'description')).toBe(false)
    expect(await asSchema(read.inputSchema).jsonSchema).toBe(readSchema)
    expect(asSchema(read.inputSchema).validate).toBeUndefined()
    // a declaration without parameters takes no arguments
    expect(await asSchema(ping.inputSchema).jsonSchema).toStrictEqual({ type: 'object', properties: {} })
    expect(read.toModelOutput).toBe(modelOutputOf)
    expect(ping.toModelOutput).toBe(modelOutputOf)
  })

  it('a listing that fails rejects with a ProviderFailure holding the very Left', async () => {
    const offline = { reason: 'offline' }
    const failing: Provider<typeof offline> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Left', left: offline }),
      executeToolCalls: () => () => Promise.resolve(right([])),
    }
    const e = await rejection(toAiSdkTools(failing))
    expect(isProviderFailure(e) && e.left).toBe(offline)
  })

  it('options must be an object', () => {
    const { provider } = recording([])
    expect(messageOf(thrown(() => toAiSdkTools(provider, 5 as never)))).toBe(
      'TypeError: toAiSdkTools: options must be an object, got number 5',
    )
    expect(messageOf(thrown(() => toAiSdkTools(provider, null as never)))).toBe(
      'TypeError: toAiSdkTools: options must be an object, got null',
    )
    expect(messageOf(thrown(() => toAiSdkTools(provider, 'approval' as never)))).toBe(
      'TypeError: toAiSdkTools: options must be an object, got the string "approval"',
    )
  })

  it('takes no options, and empty ones', async () => {
    const { provider } = recording([fn('ping')])
    expect(Object.keys(await toAiSdkTools(provider))).toStrictEqual(['ping'])
    expect(Object.keys(await toAiSdkTools(provider, {}))).toStrictEqual(['ping'])
  })
})

describe('toAiSdkTools: execute', () => {
  it('whatever object the SDK parsed, it goes down as the call’s very arguments, under the SDK’s toolCallId, and the stack’s result comes back', async () => {
    const { provider, sent } = recording([fn('echo')], (c) => ({
      role: 'tool',
      tool_call_id: c.id,
      content: `ran ${c.function.name}`,
    }))
    const echo = runnable(await toAiSdkTools(provider), 'echo')
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue()), fc.string({ minLength: 1 }), async (input, id) => {
        sent.length = 0
        const out: unknown = await echo.execute(input, options(id))
        expect(out).toStrictEqual({ role: 'tool', tool_call_id: id, content: 'ran echo' })
        expect(sent).toStrictEqual([[{ id, type: 'function', function: { name: 'echo', arguments: input } }]])
        expect(sent[0]?.[0]?.function.arguments).toBe(input)
      }),
    )
  })

  it('input that is not an object goes down as its JSON text, or as no arguments when it has none', async () => {
    const { provider, sent } = recording([fn('echo')])
    const echo = runnable(await toAiSdkTools(provider), 'echo')
    const argumentsFor = async (input: unknown): Promise<unknown> => {
      sent.length = 0
      await echo.execute(input, options('c1'))
      return sent[0]?.[0]?.function.arguments
    }
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
        async (input) => {
          expect(await argumentsFor(input)).toBe(JSON.stringify(input))
        },
      ),
    )
    expect(await argumentsFor('hi')).toBe('"hi"')
    expect(await argumentsFor([1, 'a'])).toBe('[1,"a"]')
    expect(await argumentsFor(undefined)).toBe('')
    expect(await argumentsFor(() => 1)).toBe('')
    expect(await argumentsFor(7n)).toBe('')
  })

  it('an is_error result is thrown as a ToolResultError holding it; a result with is_error false is the output', async () => {
    const { provider } = recording([fn('read')], (c) =>
      c.function.arguments === '"fail"'
        ? { role: 'tool', tool_call_id: c.id, content: 'no such file', is_error: true }
        : { role: 'tool', tool_call_id: c.id, content: 'text', is_error: false },
    )
    const read = runnable(await toAiSdkTools(provider), 'read')
    const e = await rejection(read.execute('fail', options('c1')))
    expect(messageOf(e)).toBe('Error: no such file')
    expect((e as { result?: unknown }).result).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'no such file',
      is_error: true,
    })
    expect(await read.execute('ok', options('c2'))).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c2',
      content: 'text',
      is_error: false,
    })
  })

  it('an aborted call rejects with the signal’s reason and never reaches the stack; a live signal changes nothing', async () => {
    const { provider, sent } = recording([fn('read')])
    const read = runnable(await toAiSdkTools(provider), 'read')
    const aborted = new AbortController()
    const reason = new Error('the user stopped it')
    aborted.abort(reason)
    expect(await rejection(read.execute({}, options('c1', { abortSignal: aborted.signal })))).toBe(reason)
    expect(sent).toStrictEqual([])
    const live = new AbortController()
    expect(await read.execute({}, options('c2', { abortSignal: live.signal }))).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c2',
      content: 'ok',
    })
    expect(sent).toHaveLength(1)
  })

  it('in a real generateText loop, the model reads the result’s text and a refusal as the SDK’s tool error', async () => {
    const { provider } = recording([fn('read'), fn('write')], (c) =>
      c.function.name === 'write'
        ? { role: 'tool', tool_call_id: c.id, content: 'refused', is_error: true }
        : { role: 'tool', tool_call_id: c.id, content: 'file text', structured_content: { lines: 1 } },
    )
    const tools = await toAiSdkTools(provider)
    const model = scriptedModel((_, turn) =>
      turn === 0
        ? [
            { id: 'r1', tool: 'read', input: '{"path":"a"}' },
            { id: 'w1', tool: 'write', input: '{"path":"b"}' },
          ]
        : 'done',
    )
    const r = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) })
    expect(r.text).toBe('done')
    const sent = toolOutputs(model.prompts.at(-1) ?? [])
    expect(sent.get('r1')).toStrictEqual({ type: 'text', value: 'file text' })
    expect(sent.get('w1')).toMatchObject({ type: 'error-text', value: 'Error: refused' })
  })
})

describe('toAiSdkTools: the approval option', () => {
  const rules = [{ tool: 'write', decision: 'ask' as const }]
  const approvingMessages = (toolCallId: string) => [
    { role: 'assistant' as const, content: [{ type: 'tool-approval-request' as const, approvalId: 'a1', toolCallId }] },
    { role: 'tool' as const, content: [{ type: 'tool-approval-response' as const, approvalId: 'a1', approved: true }] },
  ]

  const setUp = async (withApproval: boolean) => {
    const ran: Array<unknown> = []
    const approval = policyApproval({ rules })
    const stack = pipe(
      fromTools([
        {
          declaration: fn('write', { parameters: { type: 'object', properties: { path: {} } } }),
          run: (args) => {
            ran.push(args)
            return TE.right('written')
          },
        },
      ]),
      withPolicy({ rules, onAsk: approval.onAsk }),
    )
    const write = runnable(await toAiSdkTools(stack, withApproval ? { approval } : {}), 'write')
    return { ran, write }
  }

  it('a call the messages approve runs marked approved, once', async () => {
    const { ran, write } = await setUp(true)
    expect(await write.execute({ path: 'a' }, options('w1', { messages: approvingMessages('w1') }))).toStrictEqual({
      role: 'tool',
      tool_call_id: 'w1',
      content: 'written',
    })
    expect(ran).toStrictEqual([{ path: 'a' }])
    // the mark lasts the call only
    expect(await rejection(write.execute({ path: 'b' }, options('w1')))).toHaveProperty('result.is_error', true)
    expect(ran).toStrictEqual([{ path: 'a' }])
  })

  it('a call the messages do not approve is asked about, and the policy’s onAsk refuses it', async () => {
    const { ran, write } = await setUp(true)
    const e = await rejection(write.execute({ path: 'a' }, options('w2', { messages: approvingMessages('w1') })))
    expect(e).toHaveProperty('result.is_error', true)
    expect(ran).toStrictEqual([])
  })

  it('without the option, approving messages mark nothing: the policy refuses the call', async () => {
    const { ran, write } = await setUp(false)
    const e = await rejection(write.execute({ path: 'a' }, options('w1', { messages: approvingMessages('w1') })))
    expect(e).toHaveProperty('result', expect.objectContaining({ tool_call_id: 'w1', is_error: true }))
    expect(ran).toStrictEqual([])
  })
})

// -------------------------------------------------------------------------------------
// fromAiSdkTools
// -------------------------------------------------------------------------------------

const OBJECT = { type: 'object', properties: { text: { type: 'string' } } } as const
const call = (id: string, name: string, args: ToolCall['function']['arguments'] = '{}'): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

const run = async (tools: ToolSet, calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
  const out = await fromAiSdkTools(tools).executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error(`a Left: ${String(out.left)}`)
  return out.right
}

describe('fromAiSdkTools: the listing', () => {
  it('lists the tools it can run, each with its description and its JSON Schema; provider tools and tools without execute are left out', async () => {
    const execute = async () => 'ran'
    const tools = {
      plain: tool({ description: 'Plain', inputSchema: jsonSchema(OBJECT), execute }),
      typed: { type: 'function', inputSchema: jsonSchema(OBJECT), execute },
      dynamic: dynamicTool({ description: 'Dynamic', inputSchema: jsonSchema(OBJECT), execute }),
      provider: { type: 'provider', id: 'openai.web_search', args: {}, inputSchema: jsonSchema(OBJECT), execute },
      listed: tool({ inputSchema: jsonSchema(OBJECT) }),
      notAFunction: { inputSchema: jsonSchema(OBJECT), execute: 'ran' },
      nothing: null,
      oddDescription: { description: 5, inputSchema: jsonSchema(undefined as never), execute },
    } as unknown as ToolSet
    const listed = await fromAiSdkTools(tools).toolsForLlm()
    expect(listed).toStrictEqual(
      right([
        { type: 'function', function: { name: 'plain', description: 'Plain', parameters: OBJECT } },
        { type: 'function', function: { name: 'typed', parameters: OBJECT } },
        { type: 'function', function: { name: 'dynamic', description: 'Dynamic', parameters: OBJECT } },
        { type: 'function', function: { name: 'oddDescription' } },
      ]),
    )
  })

  it('a tool without inputSchema takes no arguments, as the SDK says', async () => {
    const listed = await fromAiSdkTools({ ping: { execute: async () => 'pong' } } as unknown as ToolSet).toolsForLlm()
    expect(listed).toStrictEqual(
      right([
        {
          type: 'function',
          function: { name: 'ping', parameters: { type: 'object', properties: {}, additionalProperties: false } },
        },
      ]),
    )
  })

  it('is a ToolSet or nothing', () => {
    expect(messageOf(thrown(() => fromAiSdkTools(null as never)))).toBe(
      'TypeError: fromAiSdkTools: expected a ToolSet (an object of tools), got null',
    )
    expect(messageOf(thrown(() => fromAiSdkTools([] as never)))).toBe(
      'TypeError: fromAiSdkTools: expected a ToolSet (an object of tools), got an array',
    )
  })
})

describe('fromAiSdkTools: a call', () => {
  it('a tool without a validator gets the arguments as they came, with the call’s id and no messages', async () => {
    const seen: Array<unknown> = []
    const tools: ToolSet = {
      echo: tool({
        inputSchema: jsonSchema<Record<string, unknown>>(OBJECT),
        execute: async (input, opts) => {
          seen.push([input, opts])
          return 'echoed'
        },
      }),
    }
    expect(await run(tools, [call('c1', 'echo', '{"text":"hi","txet":1}')])).toStrictEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'echoed' },
    ])
    expect(seen).toStrictEqual([
      [
        { text: 'hi', txet: 1 },
        { toolCallId: 'c1', messages: [], context: undefined },
      ],
    ])
  })

  it('a tool’s validator decides: its value is what execute and toModelOutput get, its failure an is_error result and no run', async () => {
    const seen: Array<unknown> = []
    const validated = jsonSchema<{ text: string }>(OBJECT, {
      validate: (value) =>
        typeof (value as { text?: unknown }).text === 'string'
          ? { success: true, value: { text: (value as { text: string }).text.trim() } }
          : { success: false, error: new Error('text must be a string') },
    })
    const tools: ToolSet = {
      trim: tool({
        inputSchema: validated,
        execute: async (input) => {
          seen.push(input)
          return input.text
        },
        toModelOutput: (arg) => {
          seen.push(arg)
          return { type: 'text', value: `<${arg.output}>` }
        },
      }),
    }
    expect(await run(tools, [call('c1', 'trim', '{"text":"  hi "}'), call('c2', 'trim', '{"text":7}')])).toStrictEqual([
      { role: 'tool', tool_call_id: 'c1', content: '<hi>' },
      {
        role: 'tool',
        tool_call_id: 'c2',
        content: 'the arguments do not match the schema of tool "trim": text must be a string',
        is_error: true,
      },
    ])
    expect(seen).toStrictEqual([{ text: 'hi' }, { toolCallId: 'c1', input: { text: 'hi' }, output: 'hi' }])
  })

  it('a zod tool strips what it does not declare, below the stack', async () => {
    const seen: Array<unknown> = []
    const tools: ToolSet = {
      read: tool({ inputSchema: z.object({ path: z.string() }), execute: async (input) => void seen.push(input) }),
    }
    expect(await run(tools, [call('c1', 'read', '{"path":"a","ffset":2}')])).toStrictEqual([
      { role: 'tool', tool_call_id: 'c1', content: '' },
    ])
    expect(seen).toStrictEqual([{ path: 'a' }])
  })

  it('without toModelOutput, whatever JSON execute answers is the text: a string as it is, anything else its JSON, kept as structured content', async () => {
    let answer: unknown
    const tools: ToolSet = { out: tool({ inputSchema: jsonSchema(OBJECT), execute: async () => answer }) }
    const provider = fromAiSdkTools(tools)
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        answer = value
        const out = await provider.executeToolCalls([call('c1', 'out')])()
        expect(out).toStrictEqual(
          right([
            typeof value === 'string'
              ? { role: 'tool', tool_call_id: 'c1', content: value }
              : { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(value), structured_content: value },
          ]),
        )
      }),
    )
  })

  it('without toModelOutput: no output is an empty text, and null is JSON', async () => {
    const tools: ToolSet = {
      none: tool({ inputSchema: jsonSchema(OBJECT), execute: async () => undefined }),
      nul: tool({ inputSchema: jsonSchema(OBJECT), execute: async () => null }),
    }
    expect(await run(tools, [call('1', 'none'), call('2', 'nul')])).toStrictEqual([
      { role: 'tool', tool_call_id: '1', content: '' },
      { role: 'tool', tool_call_id: '2', content: 'null', structured_content: null },
    ])
  })

  it('a streaming execute (an async generator) answers its last output; one that yields nothing, no output', async () => {
    const tools: ToolSet = {
      stream: tool({
        inputSchema: jsonSchema(OBJECT),
        async *execute() {
          yield 'partial'
          yield { done: true }
        },
      }),
      texts: tool({
        inputSchema: jsonSchema(OBJECT),
        async *execute() {
          yield 'one'
          yield 'two'
        },
      }),
      silent: tool({
        inputSchema: jsonSchema(OBJECT),
        async *execute(): AsyncGenerator<string> {
          // yields nothing
        },
      }),
    }
    expect(await run(tools, [call('1', 'stream'), call('2', 'texts'), call('3', 'silent')])).toStrictEqual([
      { role: 'tool', tool_call_id: '1', content: '{"done":true}', structured_content: { done: true } },
      { role: 'tool', tool_call_id: '2', content: 'two' },
      { role: 'tool', tool_call_id: '3', content: '' },
    ])
  })
})

describe('fromAiSdkTools: what toModelOutput answers is what the model would have read', () => {
  // the call's arguments (an object, not JSON text, so any value fits) carry the model output
  const tools: ToolSet = {
    shown: tool({
      inputSchema: jsonSchema<{ shows: unknown }>({ type: 'object', properties: { shows: {} } }),
      execute: async () => 'the output',
      toModelOutput: ({ input }) => input.shows as never,
    }),
  }
  const shown = async (shows: unknown): Promise<unknown> => {
    const [result] = await run(tools, [call('c1', 'shown', { shows })])
    const { role, tool_call_id, ...rest } = result as ToolResult
    expect([role, tool_call_id]).toStrictEqual(['tool', 'c1'])
    return rest
  }

  it('text, and an error text', async () => {
    expect(await shown({ type: 'text', value: 'hello' })).toStrictEqual({ content: 'hello' })
    expect(await shown({ type: 'text', value: 7 })).toStrictEqual({ content: '7' })
    expect(await shown({ type: 'error-text', value: 'no such file' })).toStrictEqual({
      content: 'no such file',
      is_error: true,
    })
  })

  it('JSON, with the value as structured content, and an error JSON', async () => {
    expect(await shown({ type: 'json', value: { n: [1, 2] } })).toStrictEqual({
      content: '{"n":[1,2]}',
      structured_content: { n: [1, 2] },
    })
    expect(await shown({ type: 'json', value: 3n })).toStrictEqual({ content: 'bigint 3', structured_content: 3n })
    // JSON has no word for undefined
    expect(await shown({ type: 'json', value: undefined })).toStrictEqual({ content: 'undefined' })
    expect(await shown({ type: 'error-json', value: { code: 7 } })).toStrictEqual({
      content: '{"code":7}',
      is_error: true,
    })
  })

  it('a denied execution, with its reason or the usual words', async () => {
    expect(await shown({ type: 'execution-denied', reason: 'not on Fridays' })).toStrictEqual({
      content: 'not on Fridays',
      is_error: true,
    })
    expect(await shown({ type: 'execution-denied' })).toStrictEqual({
      content: 'the tool execution was denied',
      is_error: true,
    })
    expect(await shown({ type: 'execution-denied', reason: 5 })).toStrictEqual({
      content: 'the tool execution was denied',
      is_error: true,
    })
  })

  it('content parts: each text part’s text, anything else named, one per line', async () => {
    const parts = [
      { type: 'text', text: 'first' },
      { type: 'image-data', data: 'AAAA', mediaType: 'image/png' },
      null,
      'loose',
      { type: 'text', text: 'last' },
    ]
    expect(await shown({ type: 'content', value: parts })).toStrictEqual({
      content: 'first\n[image-data]\n[content]\n[content]\nlast',
    })
    expect(await shown({ type: 'content', value: [] })).toStrictEqual({ content: '' })
    expect(await shown({ type: 'content', value: 'not a list' })).toStrictEqual({ content: '"not a list"' })
  })

  it('anything else as JSON', async () => {
    expect(await shown({ type: 'custom', value: 1 })).toStrictEqual({ content: '{"type":"custom","value":1}' })
    expect(await shown('bare text')).toStrictEqual({ content: '"bare text"' })
    expect(await shown(42)).toStrictEqual({ content: '42' })
    expect(await shown(null)).toStrictEqual({ content: 'null' })
    expect(await shown([1, 2])).toStrictEqual({ content: '[1,2]' })
    expect(await shown(undefined)).toStrictEqual({ content: 'undefined' })
    expect(await shown(9n)).toStrictEqual({ content: 'bigint 9' })
  })
})

describe('fromAiSdkTools: a schema that cannot be read', () => {
  /** A tool whose (lazy) schema fails to be made while `failing()` says so, counting how often it is made. */
  const flaky = (failing: () => unknown) => {
    const made = { count: 0 }
    const tools = {
      flaky: {
        inputSchema: () => {
          made.count += 1
          const why = failing()
          if (why !== undefined) throw why
          return jsonSchema(OBJECT)
        },
        execute: async () => 'ran',
      },
    } as unknown as ToolSet
    return { made, provider: fromAiSdkTools(tools) }
  }

  it('fails the listing with what was thrown, answers a batch with is_error results, and is read again until it is read once', async () => {
    const down = new Error('the schema service is down')
    let failures = 2
    const { made, provider } = flaky(() => (failures-- > 0 ? down : undefined))
    const first = await provider.toolsForLlm()
    expect(first._tag === 'Left' && first.left).toBe(down)
    expect(await provider.executeToolCalls([call('c1', 'flaky'), call('c2', 'flaky')])()).toStrictEqual(
      right([
        {
          role: 'tool',
          tool_call_id: 'c1',
          content: 'reading the tools’ schemas failed: the schema service is down',
          is_error: true,
        },
        {
          role: 'tool',
          tool_call_id: 'c2',
          content: 'reading the tools’ schemas failed: the schema service is down',
          is_error: true,
        },
      ]),
    )
    expect(made.count).toBe(2)
    expect(await provider.toolsForLlm()).toStrictEqual(
      right([{ type: 'function', function: { name: 'flaky', parameters: OBJECT } }]),
    )
    expect(await provider.executeToolCalls([call('c3', 'flaky')])()).toStrictEqual(
      right([{ role: 'tool', tool_call_id: 'c3', content: 'ran' }]),
    )
    await provider.toolsForLlm()
    // read once it could be, then never again
    expect(made.count).toBe(3)
  })

  it('a failure that is not an Error is made one', async () => {
    const { provider } = flaky(() => 'offline')
    const listed = await provider.toolsForLlm()
    expect(listed._tag === 'Left' && listed.left).toBeInstanceOf(Error)
    expect(listed._tag === 'Left' && listed.left.message).toBe('offline')
    expect(await provider.executeToolCalls([call('c1', 'flaky')])()).toStrictEqual(
      right([
        { role: 'tool', tool_call_id: 'c1', content: 'reading the tools’ schemas failed: offline', is_error: true },
      ]),
    )
  })

  it('schemas read well are read once, however many listings and batches follow', async () => {
    const { made, provider } = flaky(() => undefined)
    await Promise.all([
      provider.toolsForLlm(),
      provider.executeToolCalls([call('c1', 'flaky')])(),
      provider.toolsForLlm(),
    ])
    await provider.executeToolCalls([call('c2', 'flaky')])()
    expect(made.count).toBe(1)
  })
})
