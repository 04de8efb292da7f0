// The Anthropic SDK's own client, pointed at a loopback server of the test's that answers with recorded
// Messages API responses (no network): a tool loop over a toolstack stack with toAnthropicTools and
// executeToolUses; and what executeToolUses promises whatever the content.
import Anthropic from '@anthropic-ai/sdk'
import type { ContentBlock, MessageParam } from '@anthropic-ai/sdk/resources/messages'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { Args, ToolResult, UnknownKeyWarning } from '../../src/index.js'
import { formatWarning, fromTools, withPolicy, withUnknownKeyAudit } from '../../src/index.js'
import { executeToolUses, toAnthropicTools } from '../../src/anthropic/index.js'
import type { Loopback } from '../support/loopback.js'
import { inTurn, loopback } from '../support/loopback.js'
import { asJson, declarations, ownTools, turns } from './support.js'

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const stackOver = (received: Array<{ tool: string; args: Args }>, warnings: Array<UnknownKeyWarning>) =>
  pipe(
    fromTools(
      declarations.map((declaration) => ({
        declaration,
        run: (args: Args) => {
          received.push({ tool: declaration.function.name, args })
          return `${declaration.function.name} ran`
        },
      })),
    ),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
    withPolicy({
      rules: [
        { tool: 'read_file', decision: 'allow' },
        { tool: 'write_file', decision: 'deny', under: '/', note: 'this agent only reads' },
      ],
      roots: { '': '/srv' },
    }),
  )

describe('a Messages API tool loop over a stack (the real client against a loopback server)', () => {
  it('answers every tool_use block in order, the tool receiving the very input object; each pair said once, with its path and did-you-mean', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 })
    const received: Array<{ tool: string; args: Args }> = []
    const warnings: Array<UnknownKeyWarning> = []
    const stack = stackOver(received, warnings)
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error('unreachable')
    const tools = toAnthropicTools(listed.right)

    const messages: Array<MessageParam> = [{ role: 'user', content: 'When is the demo?' }]
    const inputs: Array<unknown> = []
    const answered: Array<ReadonlyArray<unknown>> = []
    let text = ''
    for (let turn = 0; turn < 6; turn++) {
      const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools })
      messages.push({ role: 'assistant', content: message.content })
      if (message.stop_reason !== 'tool_use') {
        text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
        break
      }
      for (const b of message.content) if (b.type === 'tool_use') inputs.push(b.input)
      const results = await executeToolUses(stack)(message.content)()
      if (results._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')
      answered.push(results.right)
      messages.push({ role: 'user', content: results.right })
    }

    expect(text).toBe('The demo is on 2 December.')
    // the tools as the API received them
    expect((server.received[0]?.body as { tools: unknown }).tools).toEqual(ownTools)
    // one tool_result per tool_use, in order; the server tool's blocks left alone; the refusal an is_error
    expect(answered).toEqual([
      [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'read_file ran' }],
      [{ type: 'tool_result', tool_use_id: 'toolu_02', content: 'read_file ran' }],
      [
        { type: 'tool_result', tool_use_id: 'toolu_03', content: 'read_file ran' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_04',
          content: expect.stringMatching(/^The permission policy refused this call to "write_file"/) as unknown,
          is_error: true,
        },
      ],
    ])
    // the next request carries them as the user turn, as the API takes it
    const lastBody = server.received[3]?.body as { messages: ReadonlyArray<{ role: string; content: unknown }> }
    expect(lastBody.messages.at(-1)).toEqual({ role: 'user', content: answered[2] })
    // the tools received the input objects the SDK parsed, the same objects
    expect(received.map((r) => r.tool)).toEqual(['read_file', 'read_file', 'read_file'])
    expect(received[0]?.args).toBe(inputs[0])
    expect(received[1]?.args).toBe(inputs[1])
    expect(received[2]?.args).toBe(inputs[2])
    expect(received[0]?.args).toEqual({ path: 'notes.md', options: { encodng: 'utf8', offset: 0 } })
    // said once per pair: options.encodng on the first call only (the refused write never reached the audit,
    // which sits under the policy)
    expect(warnings.map(formatWarning)).toEqual([
      'toolstack: read_file call toolu_01 carried undeclared argument key "options.encodng" (declared: "options", "path") (did you mean options.encoding?)',
    ])
    expect(warnings[0]?.unknownKeys).toEqual(['options.encodng'])
  })

  it('streams: the same loop over messages.stream(), its final message answered the same way', async () => {
    const { asStream } = await import('./support.js')
    server = await loopback(inTurn(turns().map(asStream)))
    const client = new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 })
    const warnings: Array<UnknownKeyWarning> = []
    const stack = stackOver([], warnings)
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error('unreachable')
    const messages: Array<MessageParam> = [{ role: 'user', content: 'When is the demo?' }]
    const ids: Array<string> = []
    for (let turn = 0; turn < 6; turn++) {
      const message = await client.messages
        .stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools: toAnthropicTools(listed.right) })
        .finalMessage()
      messages.push({ role: 'assistant', content: message.content })
      if (message.stop_reason !== 'tool_use') break
      const results = await executeToolUses(stack)(message.content)()
      if (results._tag === 'Left') throw new Error('unreachable')
      ids.push(...results.right.map((r) => r.tool_use_id))
      messages.push({ role: 'user', content: results.right })
    }
    expect(ids).toEqual(['toolu_01', 'toolu_02', 'toolu_03', 'toolu_04'])
    expect(warnings.map((w) => [w.tool, w.id, w.unknownKeys])).toEqual([['read_file', 'toolu_01', ['options.encodng']]])
  })
})

// -------------------------------------------------------------------------------------
// whatever the content
// -------------------------------------------------------------------------------------

const otherBlock: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string(), citations: fc.constant(null) }),
  fc.record({ type: fc.constant('thinking'), thinking: fc.string(), signature: fc.string() }),
  fc.record({
    type: fc.constant('server_tool_use'),
    id: fc.string(),
    name: fc.constant('web_search'),
    input: fc.dictionary(fc.string(), fc.jsonValue()),
  }),
  fc.record({ type: fc.constant('web_search_tool_result'), tool_use_id: fc.string(), content: fc.constant([]) }),
  fc.record({ type: fc.constant('mcp_tool_use'), id: fc.string(), name: fc.string(), input: fc.object() }),
)

const toolUse = fc.record({
  type: fc.constant('tool_use'),
  id: fc.string({ minLength: 1 }),
  name: fc.constantFrom('ok', 'fails', 'missing'),
  input: fc.dictionary(fc.string(), fc.jsonValue()),
})

describe('executeToolUses, whatever the content', () => {
  const stack = fromTools([
    { declaration: { type: 'function', function: { name: 'ok' } }, run: () => 'fine' },
    {
      declaration: { type: 'function', function: { name: 'fails' } },
      run: () => {
        throw new Error('broken')
      },
    },
  ])

  it('one tool_result per tool_use block, in order, its id the block’s, is_error exactly where the provider said so; every other block left out', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(otherBlock, toolUse), { maxLength: 12 }), async (content) => {
        const out = await executeToolUses(stack)(content as Array<ContentBlock>)()
        if (out._tag === 'Left') return false
        // the oracle: the tool_use blocks, read directly
        const uses = content.filter(
          (b): b is typeof toolUse extends fc.Arbitrary<infer T> ? T : never =>
            (b as { type: string }).type === 'tool_use',
        )
        expect(out.right.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id))
        expect(out.right.map((r) => r.is_error === true)).toEqual(uses.map((u) => u.name !== 'ok'))
        expect(out.right.filter((r) => r.is_error !== true).every((r) => r.content === 'fine')).toBe(true)
        return true
      }),
    )
  })

  it('sends the block’s input object down the stack as it is, the same object', async () => {
    const seen: Array<unknown> = []
    const spy = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: [] }),
      executeToolCalls: (calls: ReadonlyArray<{ readonly function: { readonly arguments: unknown } }>) => {
        seen.push(...calls.map((c) => c.function.arguments))
        return TE.right(calls.map((): ToolResult => ({ role: 'tool', tool_call_id: 'x', content: '' })))
      },
    }
    const input = { path: 'a', nested: { __proto__: 1 } }
    await executeToolUses(spy)([{ type: 'tool_use', id: 't', name: 'n', input, caller: { type: 'direct' } }])()
    expect(seen[0]).toBe(input)
  })

  it('a Left of the provider passes through; a missing result is an is_error of its own; a toolset member keeps its toolset_name', async () => {
    const failing = { toolsForLlm: () => Promise.resolve(TE.left('down')()), executeToolCalls: () => TE.left('down') }
    expect(
      await executeToolUses(failing)([
        { type: 'tool_use', id: 't', name: 'n', input: {}, caller: { type: 'direct' } },
      ])(),
    ).toEqual({ _tag: 'Left', left: 'down' })
    const short = { toolsForLlm: failing.toolsForLlm, executeToolCalls: () => TE.right([]) }
    expect(
      await executeToolUses(short)([
        { type: 'tool_use', id: 't1', name: 'n', input: {}, caller: { type: 'direct' }, toolset_name: 'browser' },
      ])(),
    ).toEqual({
      _tag: 'Right',
      right: [
        {
          type: 'tool_result',
          tool_use_id: 't1',
          content: 'the tool provider returned no result for this call',
          is_error: true,
          toolset_name: 'browser',
        },
      ],
    })
    // no tool_use block: nothing is sent down the stack
    expect(await executeToolUses(failing)([{ type: 'text', text: 'done', citations: null }])()).toEqual({
      _tag: 'Right',
      right: [],
    })
  })
})
