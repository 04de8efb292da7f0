// toAiSdkTools over a whole stack on the REAL filesystem MCP server, driven by the AI
// SDK's own generateText and streamText loops and its mock model; fromAiSdkTools and
// policyApproval in the same loops.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ModelMessage, ToolSet } from 'ai'
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Rule, UnknownKeyWarning } from '../../src/index.js'
import { isProviderFailure, readOnlyRules, withPolicy, withReasons, withUnknownKeyAudit } from '../../src/index.js'
import type { McpToolClient } from '../../src/mcp/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { fromAiSdkTools, policyApproval, toAiSdkTools, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { FILESYSTEM_SERVER, cleanUpAfterEach, spawnServer, tempDir } from '../mcp/fixtures.js'
import { scriptedModel, toolOutputs } from './support.js'

cleanUpAfterEach()

const TEXT = 'one\ntwo\nthree\nfour\n'

/** The filesystem server on a fresh folder, behind a client that records what the server was sent. */
const filesystem = async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'notes.txt'), TEXT)
  const conn = await spawnServer({ script: FILESYSTEM_SERVER, args: [dir] })
  const received: Array<{ name: string; arguments?: Record<string, unknown> }> = []
  const client: McpToolClient = {
    listTools: (p, o) => conn.client.listTools(p, o),
    callTool: (p, s, o) => {
      received.push(p)
      return conn.client.callTool(p, s, o)
    },
  }
  return { dir, client, received }
}

const stackOver = (
  client: McpToolClient,
  rules: ReadonlyArray<Rule>,
  warnings: Array<UnknownKeyWarning>,
  onAsk?: Parameters<typeof withPolicy>[0]['onAsk'],
) =>
  pipe(
    fromMcpClient(client),
    withReasons(),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
    withPolicy({ rules, ...(onAsk !== undefined ? { onAsk } : {}) }),
  )

// `head` is a key read_text_file declares; the model swapped two of its letters
const turnOf = (dir: string) => [
  {
    id: 'call_1',
    tool: 'read_text_file',
    input: JSON.stringify({ path: join(dir, 'notes.txt'), haed: 2, reason: 'the user asked for the top of the notes' }),
  },
  {
    id: 'call_2',
    tool: 'write_file',
    input: JSON.stringify({ path: '/etc/hosts', content: 'x', reason: 'point a name at this machine' }),
  },
]

const rules: ReadonlyArray<Rule> = [
  ...readOnlyRules(''),
  { tool: 'write_file', decision: 'deny', under: '/etc', note: 'system files are never written' },
]

for (const mode of ['generateText', 'streamText'] as const) {
  describe(`toAiSdkTools in a ${mode} loop over server-filesystem`, () => {
    it('warns of haed (did you mean head), sends the server the call without reason, and a refused call is a tool error', async () => {
      const { dir, client, received } = await filesystem()
      const warnings: Array<UnknownKeyWarning> = []
      const tools = await toAiSdkTools(stackOver(client, rules, warnings))
      expect(Object.keys(tools)).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']))
      const model = scriptedModel((_, turn) => (turn === 0 ? turnOf(dir) : 'done'))
      const run = { model, tools, prompt: 'what is in my notes?', stopWhen: stepCountIs(3) }
      const text = mode === 'generateText' ? (await generateText(run)).text : await streamText(run).text
      expect(text).toBe('done')

      expect(warnings).toEqual([
        {
          tool: 'read_text_file',
          unknownKeys: ['haed'],
          declaredKeys: ['head', 'path', 'reason', 'tail'],
          id: 'call_1',
          keys: [{ key: 'haed', place: [], path: 'haed' }],
          suggestions: [{ key: 'haed', didYouMean: 'head' }],
        },
      ])
      // the server got the model's own keys, haed included, without the reason; the write never reached it
      expect(received).toEqual([{ name: 'read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: 2 } }])
      const sent = toolOutputs(model.prompts.at(-1) ?? [])
      expect(sent.get('call_1')).toEqual({ type: 'text', value: TEXT })
      expect(sent.get('call_2')).toMatchObject({
        type: 'error-text',
        value: expect.stringMatching(
          /^Error: The permission policy refused this call to "write_file".*system files are never written/,
        ),
      })
    })
  })
}

describe('toAiSdkTools: what the SDK keeps', () => {
  it('the tool output is the stack result, structured content included; the call id is the SDK’s', async () => {
    const { dir, client } = await filesystem()
    const tools = await toAiSdkTools(stackOver(client, rules, []))
    const model = scriptedModel((_, turn) =>
      turn === 0
        ? [{ id: 'call_9', tool: 'read_text_file', input: JSON.stringify({ path: join(dir, 'notes.txt') }) }]
        : 'done',
    )
    const r = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) })
    const result = r.steps[0]?.toolResults[0]
    expect(result?.output).toEqual({
      role: 'tool',
      tool_call_id: 'call_9',
      content: TEXT,
      structured_content: { content: TEXT },
      mcp_content: [{ type: 'text', text: TEXT }],
    })
  })

  it('a listing that fails rejects with a ProviderFailure holding the Left', async () => {
    const failing = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Left' as const, left: 'offline' }),
      executeToolCalls: () => () => Promise.resolve({ _tag: 'Right' as const, right: [] }),
    }
    const e: unknown = await toAiSdkTools(failing).catch((x: unknown) => x)
    expect(isProviderFailure(e) && e.left).toBe('offline')
    expect(() => toAiSdkTools({} as never)).toThrow(/toAiSdkTools: expected a provider/)
  })
})

describe('the middleware and a user’s own zod tool, next to a stack', () => {
  it('the middleware catches the undeclared key on the zod tool while its execute receives the stripped input', async () => {
    const { dir, client } = await filesystem()
    const stackWarnings: Array<UnknownKeyWarning> = []
    const mwWarnings: Array<UnknownKeyWarning> = []
    const executed: Array<unknown> = []
    const tools: ToolSet = {
      ...(await toAiSdkTools(stackOver(client, rules, stackWarnings))),
      summarise: tool({
        description: 'Summarises a text',
        inputSchema: z.object({ text: z.string(), offset: z.number().optional() }),
        execute: async (input) => {
          executed.push(input)
          return 'a summary'
        },
      }),
    }
    const model = wrapLanguageModel({
      model: scriptedModel((_, turn) =>
        turn === 0
          ? [
              { id: 'c1', tool: 'summarise', input: '{"text":"one two","ffset":3}' },
              { id: 'c2', tool: 'read_text_file', input: JSON.stringify({ path: join(dir, 'notes.txt'), tial: 1 }) },
            ]
          : 'done',
      ),
      middleware: unknownKeyAuditMiddleware({ onWarn: (w) => void mwWarnings.push(w) }),
    })
    await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) })
    expect(executed).toEqual([{ text: 'one two' }])
    expect(mwWarnings.map((w) => [w.tool, w.unknownKeys, w.suggestions])).toEqual([
      ['summarise', ['ffset'], [{ key: 'ffset', didYouMean: 'offset' }]],
      ['read_text_file', ['tial'], [{ key: 'tial', didYouMean: 'tail' }]],
    ])
    // the stack's own audit says the same of the stack's tool
    expect(stackWarnings.map((w) => [w.tool, w.unknownKeys])).toEqual([['read_text_file', ['tial']]])
  })
})

describe('fromAiSdkTools: a user’s AI SDK tools at the bottom of a stack', () => {
  it('the audit above sees the key, the tool’s own schema strips it below, and a bad call is an is_error result', async () => {
    const executed: Array<unknown> = []
    const warnings: Array<UnknownKeyWarning> = []
    const provider = fromAiSdkTools({
      read: tool({
        description: 'Reads',
        inputSchema: z.object({ path: z.string(), offset: z.number().optional() }),
        execute: async (input, options) => {
          executed.push([input, options.toolCallId])
          return { lines: ['a', 'b'] }
        },
      }),
      shout: tool({
        inputSchema: z.object({ text: z.string() }),
        execute: async ({ text }) => text.toUpperCase(),
        toModelOutput: ({ output }) => ({ type: 'text', value: `${output}!` }),
      }),
      broken: tool({
        inputSchema: z.object({}),
        execute: async (): Promise<string> => {
          throw new Error('disk on fire')
        },
      }),
    })
    const stack = pipe(provider, withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }))
    const listed = await stack.toolsForLlm()
    expect(
      listed._tag === 'Right' &&
        listed.right.map((d) => [
          d.function.name,
          Object.keys((d.function.parameters?.['properties'] ?? {}) as object),
        ]),
    ).toEqual([
      ['read', ['path', 'offset']],
      ['shout', ['text']],
      ['broken', []],
    ])
    const out = await stack.executeToolCalls([
      { id: '1', function: { name: 'read', arguments: '{"path":"a","ffset":2}' } },
      { id: '2', function: { name: 'read', arguments: '{"path":7}' } },
      { id: '3', function: { name: 'shout', arguments: '{"text":"hi"}' } },
      { id: '4', function: { name: 'broken', arguments: '{}' } },
    ])()
    expect(warnings.map((w) => [w.tool, w.unknownKeys])).toEqual([['read', ['ffset']]])
    expect(executed).toEqual([[{ path: 'a' }, '1']])
    expect(out._tag === 'Right' && out.right).toEqual([
      { role: 'tool', tool_call_id: '1', content: '{"lines":["a","b"]}', structured_content: { lines: ['a', 'b'] } },
      {
        role: 'tool',
        tool_call_id: '2',
        content: expect.stringMatching(/^the arguments do not match the schema of tool "read": /),
        is_error: true,
      },
      { role: 'tool', tool_call_id: '3', content: 'HI!' },
      { role: 'tool', tool_call_id: '4', content: 'tool "broken" failed: disk on fire', is_error: true },
    ])
  })
})

describe('policyApproval: a policy ask through the AI SDK’s tool approval', () => {
  const askRules = (dir: string): ReadonlyArray<Rule> => [
    ...readOnlyRules(''),
    { tool: 'write_file', decision: 'ask', under: dir },
  ]

  it('the SDK asks; an approved call runs through the policy, a denied one never reaches the server', async () => {
    for (const approved of [true, false]) {
      const { dir, client, received } = await filesystem()
      const approval = policyApproval({ rules: askRules(dir) })
      const tools = await toAiSdkTools(stackOver(client, askRules(dir), [], approval.onAsk), { approval })
      const target = join(dir, 'summary.md')
      const model = scriptedModel((_, turn) =>
        turn === 0
          ? [{ id: 'w1', tool: 'write_file', input: JSON.stringify({ path: target, content: 'summary' }) }]
          : 'done',
      )
      const first = await generateText({
        model,
        tools,
        prompt: 'save it',
        stopWhen: stepCountIs(3),
        toolApproval: approval.toolApproval,
      })
      const request = first.content.find((p) => p.type === 'tool-approval-request')
      expect(request).toMatchObject({ toolCall: { toolName: 'write_file' }, reason: `ask "write_file" under ${dir}` })
      expect(received).toEqual([])
      const messages: Array<ModelMessage> = [
        { role: 'user', content: 'save it' },
        ...first.response.messages,
        {
          role: 'tool',
          content: [
            {
              type: 'tool-approval-response',
              approvalId: request?.type === 'tool-approval-request' ? request.approvalId : '',
              approved,
            },
          ],
        },
      ]
      await generateText({ model, tools, messages, stopWhen: stepCountIs(3), toolApproval: approval.toolApproval })
      expect(received.map((r) => r.name)).toEqual(approved ? ['write_file'] : [])
      if (approved) expect(readFileSync(target, 'utf8')).toBe('summary')
    }
  })

  it('without the SDK’s approval (toolApproval not passed), the policy refuses the call itself', async () => {
    const { dir, client, received } = await filesystem()
    const approval = policyApproval({ rules: askRules(dir) })
    const tools = await toAiSdkTools(stackOver(client, askRules(dir), [], approval.onAsk), { approval })
    const model = scriptedModel((_, turn) =>
      turn === 0
        ? [{ id: 'w1', tool: 'write_file', input: JSON.stringify({ path: join(dir, 'x.md'), content: 'x' }) }]
        : 'done',
    )
    await generateText({ model, tools, prompt: 'save it', stopWhen: stepCountIs(3) })
    expect(received).toEqual([])
    expect(toolOutputs(model.prompts.at(-1) ?? []).get('w1')).toMatchObject({
      type: 'error-text',
      // the SDK asked no one about it: refused as no one asked, not as declined
      value: expect.stringMatching(/needs the user's permission, and no one is available to give it/),
    })
  })
})
