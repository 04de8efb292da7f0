// policyApproval and approvedInMessages: which calls the SDK's toolApproval asks a human
// about and why, which messages hold the human's approval of a call (and which only
// look like they do), and the whole round trip in a real generateText loop over an
// in-process stack. The MCP-backed round trip is in mcp.test.ts.
import type { ModelMessage } from 'ai'
import { generateText, stepCountIs } from 'ai'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import type { PermissionRequest, Rule } from '../../src/index.js'
import { fromTools, withPolicy } from '../../src/index.js'
import { approvedInMessages, policyApproval, toAiSdkTools } from '../../src/ai-sdk/index.js'
import { scriptedModel, toolOutputs } from './support.js'

const request = (approvalId: string, toolCallId: string) => ({ type: 'tool-approval-request', approvalId, toolCallId })
const response = (approvalId: string, approved: unknown) => ({ type: 'tool-approval-response', approvalId, approved })
const assistant = (...content: ReadonlyArray<unknown>) => ({ role: 'assistant', content })
const toolMessage = (...content: ReadonlyArray<unknown>) => ({ role: 'tool', content })

const APPROVED = [assistant(request('a1', 'c1')), toolMessage(response('a1', true))]

describe('approvedInMessages', () => {
  it('an assistant’s request for the call, answered approved in a tool message, is an approval of that call only', () => {
    expect(approvedInMessages(APPROVED, 'c1')).toBe(true)
    expect(approvedInMessages(APPROVED, 'c2')).toBe(false)
    expect(approvedInMessages([], 'c1')).toBe(false)
  })

  it('whatever else the messages hold, around the pair: approved is true, and not approved is false', () => {
    const noise = fc.array(fc.anything(), { maxLength: 4 })
    fc.assert(
      fc.property(noise, noise, noise, fc.string(), fc.string(), (before, between, after, approvalId, toolCallId) => {
        const messages = (approved: unknown) => [
          ...before,
          assistant(request(approvalId, toolCallId)),
          ...between,
          toolMessage(response(approvalId, approved)),
          ...after,
        ]
        expect(approvedInMessages(messages(true), toolCallId)).toBe(true)
        expect(approvedInMessages(messages(false), toolCallId)).toBe(false)
      }),
    )
  })

  it('a pair among parts and messages that are not one is still found', () => {
    const messages = [
      null,
      'text',
      { role: 'assistant', content: undefined },
      assistant(null, 'loose', request('a0', 'c0'), request('a1', 'c1')),
      { role: 'tool', content: 'done' },
      toolMessage(null, 7, response('a1', true)),
    ]
    expect(approvedInMessages(messages, 'c1')).toBe(true)
  })

  it('any one piece missing or wrong, and it is no approval', () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]> = [
      ['approved: false', [assistant(request('a1', 'c1')), toolMessage(response('a1', false))]],
      ['approved: "true"', [assistant(request('a1', 'c1')), toolMessage(response('a1', 'true'))]],
      [
        'no approved at all',
        [assistant(request('a1', 'c1')), toolMessage({ type: 'tool-approval-response', approvalId: 'a1' })],
      ],
      ['the response answers another request', [assistant(request('a1', 'c1')), toolMessage(response('a2', true))]],
      ['the request is for another call', [assistant(request('a1', 'c2')), toolMessage(response('a1', true))]],
      ['no request', [toolMessage(response('a1', true))]],
      ['the request is in a tool message', [toolMessage(request('a1', 'c1')), toolMessage(response('a1', true))]],
      ['the response is in an assistant message', [assistant(request('a1', 'c1')), assistant(response('a1', true))]],
      [
        'the response is in a user message',
        [assistant(request('a1', 'c1')), { role: 'user', content: [response('a1', true)] }],
      ],
      [
        'the request is not one',
        [assistant({ ...request('a1', 'c1'), type: 'tool-call' }), toolMessage(response('a1', true))],
      ],
      [
        'the response is not one',
        [assistant(request('a1', 'c1')), toolMessage({ ...response('a1', true), type: 'tool-result' })],
      ],
    ]
    for (const [what, messages] of cases)
      expect([what, approvedInMessages(messages, 'c1')]).toStrictEqual([what, false])
  })

  it('messages that are not an array hold no approval, even an iterable of the very messages', () => {
    expect(approvedInMessages(new Set(APPROVED), 'c1')).toBe(false)
    expect(approvedInMessages({ 0: APPROVED[0], 1: APPROVED[1], length: 2 }, 'c1')).toBe(false)
    expect(approvedInMessages(undefined, 'c1')).toBe(false)
    expect(approvedInMessages('messages', 'c1')).toBe(false)
  })

  it('messages that cannot be read hold no approval', () => {
    const unreadable = {
      get role(): string {
        throw new Error('no role for you')
      },
    }
    expect(approvedInMessages([unreadable, ...APPROVED], 'c1')).toBe(false)
    const proxy = new Proxy([], {
      get: () => {
        throw new Error('trap')
      },
    })
    expect(approvedInMessages(proxy, 'c1')).toBe(false)
  })
})

// -------------------------------------------------------------------------------------
// policyApproval
// -------------------------------------------------------------------------------------

const RULES: ReadonlyArray<Rule> = [
  { tool: 'read_*', decision: 'allow' },
  { tool: 'delete', decision: 'deny' },
  { tool: 'write', decision: 'ask', note: 'writes need a human' },
  { tool: 'edit', decision: 'ask', under: '/project' },
]

const permission = (id: string): PermissionRequest => ({
  kind: 'permission',
  tool: 'write',
  arguments: {},
  call: { id, type: 'function', function: { name: 'write', arguments: '{}' } },
  rule: RULES[2],
  why: 'rule',
  paths: [],
  suggestedRule: { tool: 'write', decision: 'allow' },
})

describe('policyApproval: toolApproval', () => {
  const { toolApproval } = policyApproval({ rules: RULES })
  const status = (toolName: string, input: unknown) => toolApproval({ toolCall: { toolName, input } })

  it('what the rules allow or deny is no business of the human', () => {
    expect(status('read_file', { path: '/x' })).toBe('not-applicable')
    expect(status('delete', { path: '/x' })).toBe('not-applicable')
  })

  it('what they ask about goes to the human, with the rule that asked and its note', () => {
    expect(status('write', {})).toStrictEqual({ type: 'user-approval', reason: 'ask "write": writes need a human' })
    expect(status('edit', { path: '/project/a.txt' })).toStrictEqual({
      type: 'user-approval',
      reason: 'ask "edit" under /project',
    })
  })

  it('a call no rule speaks of goes to the human too', () => {
    expect(status('mystery', {})).toStrictEqual({ type: 'user-approval', reason: 'no rule allows this call' })
  })

  it('reads paths against the roots it was given, once told the listing', () => {
    const rules: ReadonlyArray<Rule> = [{ tool: 'edit', decision: 'allow', under: '/project' }]
    const call = { toolCall: { toolName: 'edit', input: { path: 'a.txt' } } }
    const listing = [
      { type: 'function', function: { name: 'edit', parameters: { type: 'object', properties: { path: {} } } } },
    ]
    const rooted = policyApproval({ rules, roots: { '': '/project' } })
    // before the listing, `path` may be a decoy the tool does not take: the allow fails closed
    expect(rooted.toolApproval(call)).toStrictEqual({ type: 'user-approval', reason: 'no rule allows this call' })
    rooted.listed(listing)
    expect(rooted.toolApproval(call)).toBe('not-applicable')
    // without a root, a relative path is nowhere the rule can allow
    const bare = policyApproval({ rules })
    bare.listed(listing)
    expect(bare.toolApproval(call)).toStrictEqual({ type: 'user-approval', reason: 'no rule allows this call' })
  })

  it('a call that cannot be read goes to the human, saying so', () => {
    expect(toolApproval({ toolCall: null } as never)).toStrictEqual({
      type: 'user-approval',
      reason: 'the call could not be evaluated',
    })
    const unreadable = {
      toolName: 'write',
      get input(): unknown {
        throw new Error('gone')
      },
    }
    expect(toolApproval({ toolCall: unreadable })).toStrictEqual({
      type: 'user-approval',
      reason: 'the call could not be evaluated',
    })
  })

  it('its options are checked, in its own name', () => {
    const messageOf = (f: () => unknown): string => {
      try {
        f()
      } catch (e) {
        return e instanceof TypeError ? e.message : 'not a TypeError'
      }
      return 'no throw'
    }
    expect(messageOf(() => policyApproval(null as never))).toBe(
      'policyApproval: options must be an object { rules, roots?, locationArgs?, resolver?, onAsk? }, got null',
    )
    expect(messageOf(() => policyApproval({ rules: RULES, onAsk: 'yes' as never }))).toBe(
      'policyApproval: option "onAsk" must be a function, got the string "yes"',
    )
  })
})

describe('policyApproval: onAsk and approvedWhile', () => {
  it('onAsk allows a call only while it is marked approved, and answers "unasked" otherwise (no one was asked)', async () => {
    const approval = policyApproval({ rules: RULES })
    expect(await approval.onAsk(permission('w1'))).toStrictEqual({ action: 'unasked' })
    const during = await approval.approvedWhile(permission('w1').call, async () => [
      await approval.onAsk(permission('w1')),
      await approval.onAsk(permission('w2')),
    ])
    expect(during).toStrictEqual([{ action: 'allow-once' }, { action: 'unasked' }])
    expect(await approval.onAsk(permission('w1'))).toStrictEqual({ action: 'unasked' })
  })

  it('a call not approved through the SDK goes to the onAsk it was given', async () => {
    const asked: Array<string> = []
    const approval = policyApproval({
      rules: RULES,
      onAsk: (r) => {
        asked.push(r.call.id)
        return { action: 'allow-once' }
      },
    })
    expect(await approval.onAsk(permission('w3'))).toStrictEqual({ action: 'allow-once' })
    expect(asked).toStrictEqual(['w3'])
  })
})

describe('policyApproval in a real generateText loop over an in-process stack', () => {
  const rules: ReadonlyArray<Rule> = [
    { tool: 'write', decision: 'ask', note: 'writes need a human' },
    { tool: 'read', decision: 'allow' },
  ]

  const setUp = async () => {
    const written: Array<unknown> = []
    const approval = policyApproval({ rules })
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'write', parameters: { type: 'object', properties: { text: {} } } },
          },
          run: (args) => {
            written.push(args)
            return TE.right('written')
          },
        },
        {
          declaration: { type: 'function', function: { name: 'read', parameters: { type: 'object', properties: {} } } },
          run: () => TE.right('read'),
        },
      ]),
      withPolicy({ rules, onAsk: approval.onAsk }),
    )
    const tools = await toAiSdkTools(stack, { approval })
    const model = scriptedModel((_, turn) =>
      turn === 0
        ? [
            { id: 'w1', tool: 'write', input: '{"text":"hello"}' },
            { id: 'r1', tool: 'read', input: '{}' },
          ]
        : 'done',
    )
    return { written, approval, tools, model }
  }

  for (const approved of [true, false]) {
    it(`the SDK asks about the write only, and the write runs ${approved ? 'once approved' : 'never when denied'}`, async () => {
      const { written, approval, tools, model } = await setUp()
      const first = await generateText({
        model,
        tools,
        prompt: 'save it',
        stopWhen: stepCountIs(3),
        toolApproval: approval.toolApproval,
      })
      const requests = first.content.filter((p) => p.type === 'tool-approval-request')
      expect(requests.map((r) => [r.toolCall.toolCallId, r.toolCall.toolName, r.reason])).toStrictEqual([
        ['w1', 'write', 'ask "write": writes need a human'],
      ])
      expect(written).toStrictEqual([])
      const messages: Array<ModelMessage> = [
        { role: 'user', content: 'save it' },
        ...first.response.messages,
        {
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId: requests[0]?.approvalId ?? '', approved }],
        },
      ]
      await generateText({ model, tools, messages, stopWhen: stepCountIs(3), toolApproval: approval.toolApproval })
      expect(written).toStrictEqual(approved ? [{ text: 'hello' }] : [])
      const sent = toolOutputs(model.prompts.at(-1) ?? [])
      expect(sent.get('r1')).toStrictEqual({ type: 'text', value: 'read' })
      if (approved) expect(sent.get('w1')).toStrictEqual({ type: 'text', value: 'written' })
      else expect(sent.get('w1')).toMatchObject({ type: 'execution-denied' })
    })
  }
})

// the SDK's check and withPolicy read a call's locations alike: only what the tool declares. Before, the bridge read
// a key the tool does not take (`path` beside a shell tool's `command`) as the call's location, let the call through
// unasked, and withPolicy, which reads no undeclared key, then refused it as no one was asked
describe('policyApproval in a generateText loop: a location the tool does not declare', () => {
  it('the SDK asks the human about the call withPolicy asks about, and the approved call runs', async () => {
    const rules: ReadonlyArray<Rule> = [{ tool: 'run', decision: 'allow', under: '/srv' }]
    const ran: Array<unknown> = []
    const approval = policyApproval({ rules })
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'run', parameters: { type: 'object', properties: { command: {} } } },
          },
          run: (args) => {
            ran.push(args)
            return TE.right('ran')
          },
        },
      ]),
      withPolicy({ rules, onAsk: approval.onAsk }),
    )
    const tools = await toAiSdkTools(stack, { approval })
    const model = scriptedModel((_, turn) =>
      turn === 0 ? [{ id: 'x1', tool: 'run', input: '{"command":"rm -rf .","path":"/srv/a"}' }] : 'done',
    )
    const first = await generateText({
      model,
      tools,
      prompt: 'clean up',
      stopWhen: stepCountIs(3),
      toolApproval: approval.toolApproval,
    })
    const requests = first.content.filter((p) => p.type === 'tool-approval-request')
    expect(requests.map((r) => [r.toolCall.toolCallId, r.reason])).toStrictEqual([['x1', 'no rule allows this call']])
    expect(ran).toStrictEqual([])
    const messages: Array<ModelMessage> = [
      { role: 'user', content: 'clean up' },
      ...first.response.messages,
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: requests[0]?.approvalId ?? '', approved: true }],
      },
    ]
    await generateText({ model, tools, messages, stopWhen: stepCountIs(3), toolApproval: approval.toolApproval })
    expect(ran).toStrictEqual([{ command: 'rm -rf .', path: '/srv/a' }])
    expect(toolOutputs(model.prompts.at(-1) ?? []).get('x1')).toStrictEqual({ type: 'text', value: 'ran' })
  })
})
