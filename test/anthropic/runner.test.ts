// The SDK's tool runner (client.beta.messages.toolRunner) over a toolstack stack, with the real client pointed
// at a loopback server of recorded responses: the runner runs each tool_use through the stack, the middleware
// and the stack keep one memory, and a thread's later requests (which carry no tools) are heard against the
// tools it began with. With OpenTelemetry registered, each warning is an event on the SDK's own span.
import Anthropic from '@anthropic-ai/sdk'
import { pipe } from 'fp-ts/lib/function.js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Args, UnknownKeyWarning } from '../../src/index.js'
import { fromTools, sharedUnknownKeyAudit, withPolicy, withUnknownKeyAudit } from '../../src/index.js'
import type { UnknownKeyAuditOptions } from '../../src/index.js'
import { toRunnableTools, unknownKeyAuditMiddleware } from '../../src/anthropic/index.js'
import { otelAudit } from '../../src/otel/index.js'
import type { Loopback } from '../support/loopback.js'
import { inTurn, loopback } from '../support/loopback.js'
import type { Sdk } from '../otel/sdk.js'
import { registerSdk } from '../otel/sdk.js'
import { asJson, asStream, declarations, turns } from './support.js'

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const stackOver = (audit: UnknownKeyAuditOptions, received: Array<Args> = []) =>
  pipe(
    fromTools(
      declarations.map((declaration) => ({
        declaration,
        run: (args: Args) => {
          received.push(args)
          return `${declaration.function.name} ran`
        },
      })),
    ),
    withUnknownKeyAudit(audit),
    withPolicy({
      rules: [
        { tool: 'read_file', decision: 'allow' },
        { tool: 'write_file', decision: 'deny', under: '/', note: 'this agent only reads' },
      ],
      roots: { '': '/srv' },
    }),
  )

const params = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] }

describe.each([
  ['not streamed', asJson, false],
  ['streamed', asStream, true],
] as const)('client.beta.messages.toolRunner over toRunnableTools (%s)', (_, answer, stream) => {
  it('runs each tool_use through the stack with its block’s input; the refusal goes back as an is_error; middleware and stack say each pair once', async () => {
    server = await loopback(inTurn(turns().map(answer)))
    const warnings: Array<UnknownKeyWarning> = []
    const audit = sharedUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) })
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: server.url,
      maxRetries: 0,
      middleware: [unknownKeyAuditMiddleware(audit)],
    })
    const received: Array<Args> = []
    const tools = await toRunnableTools(stackOver(audit, received))
    const runner = client.beta.messages.toolRunner({ ...params, tools, stream })
    const final = await runner.runUntilDone()
    expect(final.content).toEqual(turns()[3]?.content)
    // the thread's later requests carry no tools: the middleware heard them against the first request's
    expect(server.received.map((r) => (r.body as { tools?: unknown }).tools !== undefined)).toEqual([
      true,
      false,
      false,
      false,
    ])
    expect(warnings.map((w) => [w.tool, w.id, w.unknownKeys, w.via])).toEqual([
      ['read_file', 'toolu_01', ['options.encodng'], 'anthropic-middleware'],
      ['write_file', 'toolu_04', ['mode'], 'anthropic-middleware'],
    ])
    // the runner sent the stack's answers back, the refusal marked is_error
    const last = server.received[3]?.body as { messages: ReadonlyArray<{ content: unknown }> }
    expect(last.messages.at(-1)?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_03', content: 'read_file ran' },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_04',
        content: expect.stringMatching(/^Error: The permission policy refused this call to "write_file"/) as unknown,
        is_error: true,
      },
    ])
    expect(received).toEqual([
      { path: 'notes.md', options: { encodng: 'utf8', offset: 0 } },
      { path: 'todo.md', options: { encodng: 'latin1' } },
      { path: 'notes.md', options: { offset: 2 } },
    ])
  })
})

describe('toRunnableTools alone', () => {
  it('the stack’s own audit hears the runner’s calls, with the tool_use ids', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const warnings: Array<UnknownKeyWarning> = []
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 })
    const tools = await toRunnableTools(stackOver({ onWarn: (w) => void warnings.push(w) }))
    await client.beta.messages.toolRunner({ ...params, tools })
    expect(warnings.map((w) => [w.tool, w.id, w.unknownKeys])).toEqual([['read_file', 'toolu_01', ['options.encodng']]])
  })

  it('a listing that fails rejects; a stack that fails a call is an error the runner sends back', async () => {
    const down = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Left' as const, left: 'down' }),
      executeToolCalls: () => () => Promise.resolve({ _tag: 'Left' as const, left: 'down' }),
    }
    await expect(toRunnableTools(down)).rejects.toMatchObject({ left: 'down' })
    const listsOnly = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: declarations }),
      executeToolCalls: down.executeToolCalls,
    }
    const [read] = await toRunnableTools(listsOnly)
    await expect(read?.run({ path: 'a' })).rejects.toThrow('the tool provider failed: down')
    expect(() => toRunnableTools({} as never)).toThrow(TypeError)
  })
})

describe('with OpenTelemetry registered, a warning is an event on the SDK’s own span', () => {
  let sdk: Sdk
  beforeAll(() => {
    sdk = registerSdk()
  })
  afterAll(() => sdk.unregister())
  beforeEach(() => sdk.reset())

  it('the middleware’s on the API call’s span; the stack’s on the runner’s span of the tool it runs', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: server.url,
      maxRetries: 0,
      middleware: [unknownKeyAuditMiddleware(otelAudit())],
    })
    const tools = await toRunnableTools(stackOver(otelAudit()))
    await client.beta.messages.toolRunner({ ...params, tools })
    const withEvents = sdk
      .spans()
      .filter((s) => s.events.length > 0)
      .map((s) => [
        s.name,
        s.events.map((e) => [e.name, e.attributes?.['toolstack.key'], e.attributes?.['toolstack.via']]),
      ])
    expect(withEvents).toEqual([
      ['anthropic.messages.create', [['toolstack.unknown_key', 'options.encodng', undefined]]],
      ['anthropic.custom_tool_use read_file', [['toolstack.unknown_key', 'options.encodng', undefined]]],
      ['anthropic.messages.create', [['toolstack.unknown_key', 'mode', undefined]]],
    ])
  })
})
