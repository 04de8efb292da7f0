// With the real OpenTelemetry SDK registered (test/otel/sdk.ts), otelAudit as the options of the createAgent
// middleware: the middleware's and an audited stack's warnings land as events on the span the host made active
// around invoke, each pair once, each naming its layer; the custom event still reaches LangChain's callbacks.
import type { CallbackHandlerMethods } from '@langchain/core/callbacks/base'
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises'
import type { ClientTool } from '@langchain/core/tools'
import { trace } from '@opentelemetry/api'
import { pipe } from 'fp-ts/lib/function.js'
import { FakeToolCallingModel, createAgent, createMiddleware } from 'langchain'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../../src/index.js'
import { toLangChainTools, unknownKeyAuditMiddleware } from '../../src/langchain/index.js'
import { otelAudit } from '../../src/otel/index.js'
import type { Sdk } from '../otel/sdk.js'
import { registerSdk } from '../otel/sdk.js'
import { recordingRead } from './fixtures.js'

let sdk: Sdk
beforeAll(() => {
  sdk = registerSdk()
})
afterAll(() => sdk.unregister())

describe('unknownKeyAuditMiddleware with otelAudit', () => {
  it('puts each pair once on the active span, the middleware’s and the stack’s, each naming its layer', async () => {
    const audit = sharedUnknownKeyAudit(otelAudit())
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
    const agent = createAgent({
      model: new FakeToolCallingModel({ toolCalls: [calls, calls, []] }),
      tools,
      middleware: [createMiddleware(unknownKeyAuditMiddleware(audit))],
    })
    const custom: Array<string> = []
    const handler: CallbackHandlerMethods = { handleCustomEvent: (name) => void custom.push(name) }
    await trace.getTracer('host').startActiveSpan('agent invoke', async (span) => {
      try {
        await agent.invoke({ messages: [{ role: 'user', content: 'read /a' }] }, { callbacks: [handler] })
      } finally {
        span.end()
      }
    })
    await awaitAllCallbacks()
    const [host, ...others] = sdk.spans()
    expect(others).toEqual([])
    expect(host?.name).toBe('agent invoke')
    // the agent runs a turn's calls at once: their order is not the point
    const events = (host?.events ?? []).map((e) => [e.name, e.attributes])
    expect(events).toHaveLength(2)
    expect(events).toEqual(
      expect.arrayContaining([
        [
          'toolstack.unknown_key',
          {
            'gen_ai.tool.name': 'fetch',
            'gen_ai.tool.call.id': 'f1',
            'toolstack.key': 'utl',
            'toolstack.via': 'stack',
          },
        ],
        [
          'toolstack.unknown_key',
          {
            'gen_ai.tool.name': 'read',
            'gen_ai.tool.call.id': 'r1',
            'toolstack.key': 'ffset',
            'toolstack.did_you_mean': 'offset',
            'toolstack.via': 'langchain-middleware',
          },
        ],
      ]),
    )
    expect(custom).toEqual(['toolstack.unknown_key'])
  })
})
