// unknownKeyAuditMiddleware inside LangChain's own createAgent: the agent's model is
// LangChain's FakeToolCallingModel (it answers each turn with the tool calls scripted for
// it, then with none), the tools are LangChain tools, and the middleware is made by
// langchain's createMiddleware, as a user writes it.
import type { CallbackHandlerMethods } from '@langchain/core/callbacks/base'
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises'
import type { ClientTool } from '@langchain/core/tools'
import { pipe } from 'fp-ts/lib/function.js'
import type { ToolMessage, WrapToolCallHook } from 'langchain'
import { FakeToolCallingModel, createAgent, createMiddleware } from 'langchain'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { UnknownKeyAuditHandler, toLangChainTools, unknownKeyAuditMiddleware } from '../../src/langchain/index.js'
import { recordingRead } from './fixtures.js'

interface Call {
  readonly id: string
  readonly name: string
  readonly args: Record<string, unknown>
}

// the model calls these tools on its first turn, then answers with no call: the agent ends
const modelCalling = (calls: ReadonlyArray<Call>) => new FakeToolCallingModel({ toolCalls: [[...calls], []] })

const toolMessagesOf = (result: { readonly messages: ReadonlyArray<unknown> }) =>
  result.messages
    .filter((m): m is ToolMessage => (m as { type?: unknown }).type === 'tool')
    .map((m) => ({ content: m.content, status: m.status, tool_call_id: m.tool_call_id, name: m.name }))

const ask = { messages: [{ role: 'user', content: 'read /a' }] }

describe('unknownKeyAuditMiddleware in createAgent', () => {
  it('warns a misspelt key once, not again on the next invoke, not for a declared call; the tool gets what it gets without it', async () => {
    const calls = [
      { id: 'c1', name: 'read', args: { path: '/a', ffset: 3 } },
      { id: 'c2', name: 'read', args: { path: '/b', offset: 1 } },
    ]
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const audited = recordingRead()
    const agent = createAgent({
      model: modelCalling(calls),
      tools: [audited.read],
      middleware: [createMiddleware(audit)],
    })
    const first = await agent.invoke(ask)
    const second = await agent.invoke(ask)

    expect(warnings).toEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 2, firstId: 'c1' }])

    const bare = recordingRead()
    const plain = createAgent({ model: modelCalling(calls), tools: [bare.read] })
    const without = [await plain.invoke(ask), await plain.invoke(ask)]
    expect(audited.received).toEqual([
      { path: '/a' },
      { path: '/b', offset: 1 },
      { path: '/a' },
      { path: '/b', offset: 1 },
    ])
    expect(audited.received).toEqual(bare.received)
    expect([first, second].map(toolMessagesOf)).toEqual(without.map(toolMessagesOf))
    expect(toolMessagesOf(first)).toEqual([
      { content: 'read /a', status: 'success', tool_call_id: 'c1', name: 'read' },
      { content: 'read /b', status: 'success', tool_call_id: 'c2', name: 'read' },
    ])
  })

  it('over a toolstack stack’s tools and an own tool, each pair is said once: the stack’s by the stack, the own tool’s by the middleware', async () => {
    const said: Array<string> = []
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'fetch', parameters: { type: 'object', properties: { url: { type: 'string' } } } },
          },
          run: (a) => `fetched ${String(a['url'])}`,
        },
      ]),
      withUnknownKeyAudit({ onWarn: (w) => void said.push(`stack: ${w.tool} ${w.unknownKeys.join()}`) }),
    )
    const { read } = recordingRead()
    const tools: Array<ClientTool> = [...(await toLangChainTools(stack)), read]
    const agent = createAgent({
      model: modelCalling([
        { id: 'f1', name: 'fetch', args: { url: 'x', utl: 'x' } },
        { id: 'r1', name: 'read', args: { path: '/a', ffset: 3 } },
      ]),
      tools,
      middleware: [
        createMiddleware(
          unknownKeyAuditMiddleware({ onWarn: (w) => void said.push(`middleware: ${w.tool} ${w.unknownKeys.join()}`) }),
        ),
      ],
    })
    const first = await agent.invoke(ask)
    await agent.invoke(ask)
    // the agent runs the two calls at once: their order is not the point
    expect([...said].sort()).toEqual(['middleware: read ffset', 'stack: fetch utl'])
    expect(toolMessagesOf(first).map((m) => m.content)).toEqual(['fetched x', 'read /a'])
  })

  it('given one sharedUnknownKeyAudit, each pair is said once, by the first layer that heard it, and its warning names that layer (via)', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'fetch', parameters: { type: 'object', properties: { url: { type: 'string' } } } },
          },
          run: (a) => `fetched ${String(a['url'])}`,
        },
      ]),
      withUnknownKeyAudit(audit),
    )
    const { read } = recordingRead()
    const tools: Array<ClientTool> = [...(await toLangChainTools(stack)), read]
    const calls = [
      { id: 'f1', name: 'fetch', args: { url: 'x', utl: 'x' } },
      { id: 'r1', name: 'read', args: { path: '/a', ffset: 3 } },
    ]
    // the handler hears read too, after the middleware: the pair is the middleware's, said once
    const handler = new UnknownKeyAuditHandler([read], audit)
    const agent = createAgent({
      model: modelCalling(calls),
      tools,
      middleware: [createMiddleware(unknownKeyAuditMiddleware(audit))],
    })
    await agent.invoke(ask, { callbacks: [handler] })
    // the agent runs the two calls at once: sorted by tool
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.via]).sort()).toEqual([
      ['fetch', ['utl'], 'stack'],
      ['read', ['ffset'], 'langchain-middleware'],
    ])

    // the callback handler alone names itself
    const alone: Array<UnknownKeyWarning> = []
    const own = sharedUnknownKeyAudit({ onWarn: (w) => void alone.push(w) })
    const plain = createAgent({ model: modelCalling(calls.slice(1)), tools: [read] })
    await plain.invoke(ask, { callbacks: [new UnknownKeyAuditHandler([read], own)] })
    expect(alone.map((w) => [w.tool, w.unknownKeys, w.via])).toEqual([['read', ['ffset'], 'langchain-callbacks']])
  })

  it('its wrapToolCall is langchain’s WrapToolCallHook, and createMiddleware takes it as it is', () => {
    const audit = unknownKeyAuditMiddleware()
    expectTypeOf(audit.wrapToolCall).toExtend<WrapToolCallHook>()
    expectTypeOf(createMiddleware(audit).name).toEqualTypeOf<string>()
  })
})

// what a callback handler of the user's hears: every tool run (its id, its parent's, its call id) and every
// custom event (its run)
const listener = () => {
  const tools: Array<{
    readonly runId: string
    readonly parentRunId: string | undefined
    readonly id: string | undefined
  }> = []
  const events: Array<{ readonly name: string; readonly data: unknown; readonly runId: string }> = []
  const handler: CallbackHandlerMethods = {
    handleToolStart: (_tool, _input, runId, parentRunId, _tags, _metadata, _runName, toolCallId) =>
      void tools.push({ runId, parentRunId, id: toolCallId }),
    handleCustomEvent: (name, data, runId) => void events.push({ name, data, runId }),
  }
  return { tools, events, handler }
}

describe('unknownKeyAuditMiddleware: a warning is a custom event in LangChain’s callbacks', () => {
  it('toolstack.unknown_key, in the run of the tool call that carried the key (the tool’s run is its child)', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const { read } = recordingRead()
    const agent = createAgent({
      model: modelCalling([
        { id: 'c1', name: 'read', args: { path: '/a', ffset: 3 } },
        { id: 'c2', name: 'read', args: { path: '/b', offset: 1 } },
      ]),
      tools: [read],
      middleware: [createMiddleware(unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) }))],
    })
    const heard = listener()
    await agent.invoke(ask, { callbacks: [heard.handler] })
    await awaitAllCallbacks()
    expect(warnings).toHaveLength(1)
    expect(heard.events).toEqual([
      {
        name: 'toolstack.unknown_key',
        data: {
          tool: 'read',
          call_id: 'c1',
          unknown_keys: ['ffset'],
          unknown_key_count: 1,
          suggestions: [{ key: 'ffset', did_you_mean: 'offset' }],
        },
        runId: expect.any(String),
      },
    ])
    const run = heard.tools.find((t) => t.id === 'c1')
    expect(run?.parentRunId).toBe(heard.events[0]?.runId)
    // the other call ran in a run of its own
    expect(heard.tools.find((t) => t.id === 'c2')?.parentRunId).not.toBe(run?.parentRunId)
  })

  it('streamEvents shows it as an on_custom_event', async () => {
    const { read } = recordingRead()
    const agent = createAgent({
      model: modelCalling([{ id: 's1', name: 'read', args: { path: '/a', ffset: 3 } }]),
      tools: [read],
      middleware: [createMiddleware(unknownKeyAuditMiddleware({ onWarn: () => {} }))],
    })
    const custom: Array<unknown> = []
    for await (const e of agent.streamEvents(ask, { version: 'v2' }))
      if (e.event === 'on_custom_event') custom.push([e.name, (e.data as { call_id?: unknown }).call_id])
    expect(custom).toEqual([['toolstack.unknown_key', 's1']])
  })

  it('a hostile key is cut and escaped, at most 16 keys; telemetry: false sends no event and still warns', async () => {
    const keys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`\u001b[2J${'k'.repeat(1000)}${i}`, i]))
    const { read } = recordingRead()
    const agent = createAgent({
      model: modelCalling([{ id: 'h1', name: 'read', args: { path: '/a', ...keys } }]),
      tools: [read],
      middleware: [createMiddleware(unknownKeyAuditMiddleware({ onWarn: () => {} }))],
    })
    const heard = listener()
    await agent.invoke(ask, { callbacks: [heard.handler] })
    await awaitAllCallbacks()
    const data = heard.events[0]?.data as { unknown_keys: ReadonlyArray<string>; unknown_key_count: number }
    expect(data.unknown_key_count).toBe(50)
    expect(data.unknown_keys).toHaveLength(16)
    for (const k of data.unknown_keys) {
      expect(k).not.toMatch(/\p{Cc}/u)
      expect(k.length).toBeLessThan(280)
    }

    const warnings: Array<UnknownKeyWarning> = []
    const quiet = createAgent({
      model: modelCalling([{ id: 'q1', name: 'read', args: { path: '/a', ffset: 3 } }]),
      tools: [read],
      middleware: [
        createMiddleware(unknownKeyAuditMiddleware({ telemetry: false, onWarn: (w) => void warnings.push(w) })),
      ],
    })
    const none = listener()
    await quiet.invoke(ask, { callbacks: [none.handler] })
    await awaitAllCallbacks()
    expect(warnings).toHaveLength(1)
    expect(none.tools).toHaveLength(1)
    expect(none.events).toEqual([])
    expect(() => unknownKeyAuditMiddleware({ telemetry: 1 } as never)).toThrow(
      'unknownKeyAuditMiddleware: option "telemetry" must be a boolean, got number 1',
    )
  })
})
