// otelAudit in a real AI SDK loop (generateText and streamText over the SDK's own mock model), with the real
// OpenTelemetry SDK registered: the warnings of the middleware and of an audited stack behind toAiSdkTools land
// as events on the span active around the loop, each pair once, each naming its layer.
// AI SDK 7 makes spans of its own only through its `@ai-sdk/otel` integration: with it registered (the last
// describe), each event lands on the SDK's own span.
import { trace } from '@opentelemetry/api'
import { generateText, registerTelemetry, stepCountIs, streamText, wrapLanguageModel } from 'ai'
import { OpenTelemetry } from '@ai-sdk/otel'
import type { ToolSet } from 'ai'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { toAiSdkTools, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { otelAudit } from '../../src/otel/index.js'
import { scriptedModel } from '../ai-sdk/support.js'
import type { Sdk } from './sdk.js'
import { registerSdk } from './sdk.js'

const stackTools = fromTools([
  {
    declaration: {
      type: 'function',
      function: {
        name: 'read',
        parameters: { type: 'object', properties: { path: { type: 'string' }, head: { type: 'number' } } },
      },
    },
    run: () => TE.right('file text'),
  },
])

const script = (_: unknown, turn: number) =>
  turn < 1
    ? [{ id: 'r0', tool: 'read', input: '{"path":"/notes.txt","haed":1}' }]
    : turn < 2
      ? [{ id: 'r1', tool: 'read', input: '{"path":"/notes.txt","tali":1}' }]
      : 'done'

const loops = {
  generateText: async (model: Parameters<typeof generateText>[0]['model'], tools: ToolSet) =>
    (await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(5) })).text,
  streamText: async (model: Parameters<typeof generateText>[0]['model'], tools: ToolSet) =>
    streamText({ model, tools, prompt: 'go', stopWhen: stepCountIs(5) }).text,
}

describe.each(Object.entries(loops))('%s with otelAudit', (_, loop) => {
  let sdk: Sdk
  beforeAll(() => {
    sdk = registerSdk()
  })
  afterAll(() => sdk.unregister())
  beforeEach(() => sdk.reset())

  it('puts each pair once on the active span, naming the layer that heard it', async () => {
    const audit = sharedUnknownKeyAudit(otelAudit())
    const stack = pipe(stackTools, withUnknownKeyAudit(audit))
    const tools = await toAiSdkTools(stack)
    const model = wrapLanguageModel({ model: scriptedModel(script), middleware: unknownKeyAuditMiddleware(audit) })
    const text = await trace.getTracer('host').startActiveSpan('agent turn', async (span) => {
      // the second call goes to the stack directly, not through the model: only the stack hears it
      const out = await loop(model, tools)
      await stack.executeToolCalls([{ id: 'd1', function: { name: 'read', arguments: '{"path":"x","taill":1}' } }])()
      span.end()
      return out
    })
    expect(text).toBe('done')
    const spans = sdk.spans()
    expect(spans.map((s) => s.name)).toEqual(['agent turn'])
    expect(spans[0]?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'toolstack.unknown_key',
        {
          'gen_ai.tool.name': 'read',
          'gen_ai.tool.call.id': 'r0',
          'toolstack.key': 'haed',
          'toolstack.did_you_mean': 'head',
          'toolstack.via': 'ai-sdk-middleware',
        },
      ],
      [
        'toolstack.unknown_key',
        {
          'gen_ai.tool.name': 'read',
          'gen_ai.tool.call.id': 'r1',
          'toolstack.key': 'tali',
          'toolstack.via': 'ai-sdk-middleware',
        },
      ],
      [
        'toolstack.unknown_key',
        { 'gen_ai.tool.name': 'read', 'gen_ai.tool.call.id': 'd1', 'toolstack.key': 'taill', 'toolstack.via': 'stack' },
      ],
    ])
  })
})

// With the AI SDK's own OpenTelemetry integration registered (`@ai-sdk/otel`), the SDK makes a span per model
// call (`chat <model>`) and per tool execution (`execute_tool <tool>`): the middleware's warning lands on the
// model call that produced the tool call, and the stack's on the tool's own span, whose call id is the warning's.
describe("with the AI SDK's own telemetry (@ai-sdk/otel registered)", () => {
  let sdk: Sdk
  beforeAll(() => {
    sdk = registerSdk()
    registerTelemetry(new OpenTelemetry())
  })
  afterAll(async () => {
    // registerTelemetry adds to a global list and has no inverse: empty it, so no other file sees it
    ;(globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: Array<unknown> }).AI_SDK_TELEMETRY_INTEGRATIONS = []
    await sdk.unregister()
  })
  beforeEach(() => sdk.reset())

  const eventsOn = (name: string) =>
    sdk
      .spans()
      .filter((s) => s.name === name)
      .map((s) => ({
        call: s.attributes['gen_ai.tool.call.id'],
        events: s.events.filter((e) => e.name === 'toolstack.unknown_key').map((e) => e.attributes),
      }))

  it.each(Object.entries(loops))(
    "%s: the stack's warning is an event on the SDK's execute_tool span",
    async (_, loop) => {
      const tools = await toAiSdkTools(pipe(stackTools, withUnknownKeyAudit(otelAudit())))
      expect(await loop(scriptedModel(script), tools)).toBe('done')
      expect(eventsOn('execute_tool read')).toEqual([
        {
          call: 'r0',
          events: [
            {
              'gen_ai.tool.name': 'read',
              'gen_ai.tool.call.id': 'r0',
              'toolstack.key': 'haed',
              'toolstack.did_you_mean': 'head',
            },
          ],
        },
        { call: 'r1', events: [{ 'gen_ai.tool.name': 'read', 'gen_ai.tool.call.id': 'r1', 'toolstack.key': 'tali' }] },
      ])
      // no span of toolstack's own: every event is on a span the SDK made
      expect(sdk.spans().filter((s) => s.name.startsWith('toolstack'))).toEqual([])
    },
  )

  it.each(Object.entries(loops))("%s: the middleware's warning is an event on the SDK's chat span", async (_, loop) => {
    const model = wrapLanguageModel({
      model: scriptedModel(script),
      middleware: unknownKeyAuditMiddleware(otelAudit()),
    })
    expect(await loop(model, await toAiSdkTools(stackTools))).toBe('done')
    const chats = eventsOn('chat mock-model-id').map((c) => c.events.map((e) => e?.['toolstack.key']))
    expect(chats).toEqual([['haed'], ['tali'], []])
  })
})
