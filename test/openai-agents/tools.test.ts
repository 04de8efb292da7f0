// src/openai-agents/tools.ts and approval.ts, value by value, with the Agents SDK's own
// RunContext, approval items and Agent: the function tools toAgentsTools makes (each
// field, the call each invoke sends, every way it answers instead of throwing, the
// approval bridge), which tools auditAgentsTools wraps and what the wrapper passes on,
// and what policyApproval's needsApproval answers.
import type { FunctionTool, Tool } from '@openai/agents'
import { Agent, RunContext, RunToolApprovalItem, setTracingDisabled, tool } from '@openai/agents'
import { functionCall } from '@openai/agents/testing'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type {
  AuditDiagnostic,
  Rule,
  ToolCall,
  ToolDeclaration,
  ToolResult,
  UnknownKeyWarning,
} from '../../src/index.js'
import { fromTools, withPolicy } from '../../src/index.js'
import { auditAgentsTools, outputOf, policyApproval, toAgentsTools } from '../../src/openai-agents/index.js'

beforeAll(() => setTracingDisabled(true))

/** A provider listing `declarations` and answering each call with `answer(call)`, recording every batch it is sent. */
const recording = (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer: (call: ToolCall) => Omit<ToolResult, 'role' | 'tool_call_id'> = () => ({ content: 'ran' }),
) => {
  const received: Array<ReadonlyArray<ToolCall>> = []
  const provider = {
    toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: declarations }),
    executeToolCalls: (calls: ReadonlyArray<ToolCall>) => () => {
      received.push(calls)
      return Promise.resolve({
        _tag: 'Right' as const,
        right: calls.map((c): ToolResult => ({ role: 'tool', tool_call_id: c.id, ...answer(c) })),
      })
    },
  }
  return { provider, received }
}

const echoDeclaration: ToolDeclaration = {
  type: 'function',
  function: {
    name: 'echo',
    description: 'Echoes',
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
  },
}

/** The details the SDK hands an invoke for the call `callId`. */
const declaring = (name: string, properties: ReadonlyArray<string>): ToolDeclaration => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: Object.fromEntries(properties.map((k) => [k, {}])) } },
})

const detailsFor = (callId: string, name = 'echo') => ({
  toolCall: { type: 'function_call' as const, callId, name, arguments: '' },
})

/** A RunContext in which the SDK's human approved (or rejected) the call `callId` of `name`. */
const contextWith = (name: string, callId: string, approve: boolean, always = false): RunContext => {
  const context = new RunContext()
  const item = new RunToolApprovalItem(
    functionCall(name, '{}', { callId }) as never,
    new Agent({ name: 'a', instructions: 'x' }),
  )
  if (approve) context.approveTool(item, { alwaysApprove: always })
  else context.rejectTool(item)
  return context
}

const only = async (tools: Promise<Array<FunctionTool>>): Promise<FunctionTool> => {
  const [t] = await tools
  if (t === undefined) throw new Error('no tool listed')
  return t
}

describe('outputOf', () => {
  it('the content, or for an is_error result the content after "Error: "', () => {
    expect(outputOf({ content: 'ok' })).toBe('ok')
    expect(outputOf({ content: 'ok', is_error: false })).toBe('ok')
    expect(outputOf({ content: 'nope', is_error: true })).toBe('Error: nope')
  })
})

describe('toAgentsTools: the tools', () => {
  it('one function tool per name, first declaration first, each field as the declaration says; strict false', async () => {
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    }
    const { provider } = recording([
      { type: 'function', function: { name: 'read', description: 'Reads', parameters } },
      { type: 'function', function: { name: 'ping' } },
      {
        type: 'function',
        function: { name: 'read', description: 'A second read', parameters: { type: 'object', properties: {} } },
      },
    ])
    const tools = await toAgentsTools(provider)
    const fns = { invoke: expect.any(Function), needsApproval: expect.any(Function), isEnabled: expect.any(Function) }
    expect(tools).toStrictEqual([
      { type: 'function', name: 'read', description: 'Reads', parameters, strict: false, ...fns },
      {
        type: 'function',
        name: 'ping',
        description: '',
        parameters: { type: 'object', properties: {}, required: [], additionalProperties: true },
        strict: false,
        ...fns,
      },
    ])
    // the declared schema itself goes to the SDK
    expect(tools[0]?.parameters).toBe(parameters)
  })

  it('every tool is enabled: the SDK’s Agent offers each of them', async () => {
    const { provider } = recording([echoDeclaration, { type: 'function', function: { name: 'ping' } }])
    const tools = await toAgentsTools(provider)
    const agent = new Agent({ name: 'a', instructions: 'x', tools })
    expect((await agent.getAllTools(new RunContext())).map((t: Tool) => t.name)).toStrictEqual(['echo', 'ping'])
    for (const t of tools) expect(await t.isEnabled(new RunContext(), agent)).toBe(true)
  })

  it('a listing that fails rejects with a ProviderFailure carrying its Left', async () => {
    const { provider } = recording([])
    await expect(
      toAgentsTools({ ...provider, toolsForLlm: () => Promise.resolve({ _tag: 'Left' as const, left: 'down' }) }),
    ).rejects.toMatchObject({ name: 'ProviderFailure', left: 'down' })
  })

  it('refuses options that are not an object, and a provider that is not one, naming toAgentsTools', () => {
    const { provider } = recording([echoDeclaration])
    expect(() => toAgentsTools(provider, 5 as never)).toThrow(
      new TypeError('toAgentsTools: options must be an object, got number 5'),
    )
    expect(() => toAgentsTools(provider, null as never)).toThrow(
      new TypeError('toAgentsTools: options must be an object, got null'),
    )
    expect(() => toAgentsTools(provider, ['x'] as never)).toThrow(
      new TypeError('toAgentsTools: options must be an object, got an array'),
    )
    expect(() => toAgentsTools({} as never)).toThrow(/^toAgentsTools: /)
  })
})

describe('toAgentsTools: invoke', () => {
  it('sends the raw argument string down the stack with the SDK’s call id; answers the result’s text', async () => {
    const { provider, received } = recording([echoDeclaration], (c) => ({
      content: `echo ${String(c.function.arguments)}`,
    }))
    const echo = await only(toAgentsTools(provider, {}))
    const raw = '{"text":"hi","txet":1}'
    expect(await echo.invoke(new RunContext(), raw, detailsFor('c1'))).toBe(`echo ${raw}`)
    expect(received).toStrictEqual([[{ id: 'c1', type: 'function', function: { name: 'echo', arguments: raw } }]])
  })

  it('an is_error result is its content after "Error: "', async () => {
    const { provider } = recording([echoDeclaration], () => ({ content: 'no such file', is_error: true }))
    const echo = await only(toAgentsTools(provider))
    expect(await echo.invoke(new RunContext(), '{}', detailsFor('c1'))).toBe('Error: no such file')
  })

  it('without a readable string call id the call goes down with the id "": no details, no toolCall, a number, a throwing getter', async () => {
    const { provider, received } = recording([echoDeclaration])
    const echo = await only(toAgentsTools(provider))
    const throwing = {
      get toolCall(): never {
        throw new Error('unreadable')
      },
    }
    const detailsList = [
      undefined,
      {},
      { toolCall: null },
      { toolCall: { callId: 7 } },
      throwing,
      {
        toolCall: {
          get callId(): never {
            throw new Error('unreadable')
          },
        },
      },
    ]
    for (const details of detailsList) expect(await echo.invoke(new RunContext(), '{}', details as never)).toBe('ran')
    expect(received.map((batch) => batch.map((c) => c.id))).toStrictEqual(detailsList.map(() => ['']))
  })

  it('a call aborted before it ran is said in words and never sent; a live signal runs it', async () => {
    const { provider, received } = recording([echoDeclaration])
    const echo = await only(toAgentsTools(provider))
    const aborted = new AbortController()
    aborted.abort(new Error('the user left'))
    expect(await echo.invoke(new RunContext(), '{}', { ...detailsFor('c1'), signal: aborted.signal })).toBe(
      'Error: the call was aborted before it ran (the user left)',
    )
    expect(received).toStrictEqual([])
    expect(
      await echo.invoke(new RunContext(), '{}', { ...detailsFor('c2'), signal: new AbortController().signal }),
    ).toBe('ran')
    expect(received.map((batch) => batch.map((c) => c.id))).toStrictEqual([['c2']])
  })

  it('a provider that rejects is the model’s text, never a throw', async () => {
    const { provider } = recording([echoDeclaration])
    const echo = await only(
      toAgentsTools({ ...provider, executeToolCalls: () => () => Promise.reject(new Error('the host fell over')) }),
    )
    expect(await echo.invoke(new RunContext(), '{}', detailsFor('c1'))).toBe(
      'Error: the tool provider failed: the host fell over',
    )
  })
})

describe('toAgentsTools with policyApproval', () => {
  const rules: ReadonlyArray<Rule> = [
    { tool: 'read', decision: 'allow' },
    { tool: 'write', decision: 'ask', under: '/srv' },
    { tool: 'write', decision: 'allow' },
  ]
  const writeDeclaration: ToolDeclaration = {
    type: 'function',
    function: { name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  }
  const readDeclaration: ToolDeclaration = {
    type: 'function',
    function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  }
  const setUp = (withApproval: boolean) => {
    const approval = policyApproval({ rules })
    const ran: Array<string> = []
    const stack = pipe(
      fromTools([
        { declaration: writeDeclaration, run: (a) => (ran.push(`write ${String(a['path'])}`), 'wrote') },
        { declaration: readDeclaration, run: (a) => (ran.push(`read ${String(a['path'])}`), 'read') },
      ]),
      withPolicy({ rules, onAsk: approval.onAsk }),
    )
    return { tools: toAgentsTools(stack, withApproval ? { approval } : undefined), ran }
  }
  const write = async (withApproval: boolean) => {
    const { tools, ran } = setUp(withApproval)
    const t = (await tools).find((x) => x.name === 'write')
    if (t === undefined) throw new Error('no write tool')
    return { t, ran }
  }
  // the policy asks, and the SDK's human did not approve this very call: withPolicy's words for no one asked
  const refused = /^Error: This call to "write" needs the user's permission, and no one is available to give it/

  it('needsApproval is the rules’ ask for this tool and these arguments; without the bridge, never', async () => {
    const ctx = new RunContext()
    const [withBridge, without] = await Promise.all([setUp(true).tools, setUp(false).tools])
    const ask = async (tools: Array<FunctionTool>, name: string, input: unknown) =>
      tools.find((t) => t.name === name)?.needsApproval(ctx, input as never, 'c1')
    expect(await ask(withBridge, 'write', { path: '/srv/a' })).toBe(true)
    expect(await ask(withBridge, 'write', { path: '/tmp/a' })).toBe(false)
    expect(await ask(withBridge, 'read', { path: '/srv/a' })).toBe(false)
    expect(await ask(without, 'write', { path: '/srv/a' })).toBe(false)
    expect(await ask(without, 'read', { path: '/srv/a' })).toBe(false)
  })

  // the bridge is told the listing toAgentsTools lists: a key the tool does not take (`path` beside `command`)
  // decides nothing for either, so the SDK asks about the call withPolicy asks about, and the approved call runs
  it('a location the tool does not declare: the SDK asks, as withPolicy does, and the approved call runs', async () => {
    const own: ReadonlyArray<Rule> = [{ tool: 'run', decision: 'allow', under: '/srv' }]
    const approval = policyApproval({ rules: own })
    const ran: Array<string> = []
    const stack = pipe(
      fromTools([{ declaration: declaring('run', ['command']), run: (a) => (ran.push(String(a['command'])), 'ran') }]),
      withPolicy({ rules: own, onAsk: approval.onAsk }),
    )
    const [t] = await toAgentsTools(stack, { approval })
    if (t === undefined) throw new Error('no run tool')
    const input = { command: 'ls', path: '/srv/a' }
    expect(await t.needsApproval(new RunContext(), input as never, 'r1')).toBe(true)
    expect(await t.invoke(contextWith('run', 'r1', true), JSON.stringify(input), detailsFor('r1', 'run'))).toBe('ran')
    expect(ran).toStrictEqual(['ls'])
  })

  it('a call the SDK’s human approved runs through the policy’s ask; one not approved, or rejected, is refused', async () => {
    const { t, ran } = await write(true)
    const input = JSON.stringify({ path: '/srv/a' })
    expect(await t.invoke(contextWith('write', 'w1', true), input, detailsFor('w1', 'write'))).toBe('wrote')
    expect(await t.invoke(contextWith('write', 'w1', true), input, detailsFor('w2', 'write'))).toMatch(refused)
    expect(await t.invoke(contextWith('write', 'w1', false), input, detailsFor('w1', 'write'))).toMatch(refused)
    expect(await t.invoke(new RunContext(), input, detailsFor('w1', 'write'))).toMatch(refused)
    // the approval lasted for its call only
    expect(await t.invoke(new RunContext(), input, detailsFor('w1', 'write'))).toMatch(refused)
    expect(ran).toStrictEqual(['write /srv/a'])
  })

  it('a call without an id cannot be marked approved, even for a tool approved always', async () => {
    const { t, ran } = await write(true)
    expect(await t.invoke(contextWith('write', 'w1', true, true), JSON.stringify({ path: '/srv/a' }))).toMatch(refused)
    expect(ran).toStrictEqual([])
  })

  it('without the bridge the SDK’s approval is not consulted: the policy alone decides', async () => {
    const { t, ran } = await write(false)
    expect(
      await t.invoke(contextWith('write', 'w1', true), JSON.stringify({ path: '/srv/a' }), detailsFor('w1', 'write')),
    ).toMatch(refused)
    expect(
      await t.invoke(contextWith('write', 'w1', true), JSON.stringify({ path: '/tmp/a' }), detailsFor('w1', 'write')),
    ).toBe('wrote')
    expect(ran).toStrictEqual(['write /tmp/a'])
  })

  it('a run context that throws when asked is the model’s text, and the call is not run', async () => {
    const { t, ran } = await write(true)
    const context = new RunContext()
    context.isToolApproved = () => {
      throw new Error('the context is gone')
    }
    expect(await t.invoke(context, JSON.stringify({ path: '/tmp/a' }), detailsFor('w1', 'write'))).toBe(
      'Error: the tool call failed: the context is gone',
    )
    expect(ran).toStrictEqual([])
  })
})

// -------------------------------------------------------------------------------------

describe('policyApproval', () => {
  it('needsApproval is true exactly when the rules decide ask: no rule matching is ask, deny and allow are not', () => {
    const approval = policyApproval({
      rules: [
        { tool: 'read_*', decision: 'allow' },
        { tool: 'remove', decision: 'deny' },
        { tool: 'write', decision: 'ask', under: '/srv' },
        { tool: 'write', decision: 'allow', under: '/tmp' },
      ],
    })
    approval.listed([declaring('write', ['path'])])
    expect(approval.needsApproval('read_file', { path: '/srv/a' })).toBe(false)
    expect(approval.needsApproval('remove', { path: '/srv/a' })).toBe(false)
    expect(approval.needsApproval('write', { path: '/srv/a' })).toBe(true)
    expect(approval.needsApproval('write', { path: '/tmp/a' })).toBe(false)
    expect(approval.needsApproval('shell', { command: 'ls' })).toBe(true)
  })

  it('reads paths against the roots given, and only the locations the listing told declares', () => {
    const rules: ReadonlyArray<Rule> = [{ tool: 'write', decision: 'allow', under: '/srv' }]
    const rooted = policyApproval({ rules, roots: { '': '/srv' } })
    expect(rooted.needsApproval('write', { path: 'a.txt' })).toBe(true)
    rooted.listed([declaring('write', ['path'])])
    expect(rooted.needsApproval('write', { path: 'a.txt' })).toBe(false)
    const bare = policyApproval({ rules })
    bare.listed([declaring('write', ['path'])])
    expect(bare.needsApproval('write', { path: 'a.txt' })).toBe(true)
    // a decoy beside what the tool declares decides nothing: the human is asked
    rooted.listed([declaring('write', ['text'])])
    expect(rooted.needsApproval('write', { text: 'x', path: 'a.txt' })).toBe(true)
  })

  it('a call that cannot be evaluated (roots that cannot be read) asks a human, even where the rules allow it', () => {
    const refuse = (): never => {
      throw new Error('unreadable')
    }
    const roots = new Proxy(
      {},
      { get: refuse, has: refuse, ownKeys: refuse, getOwnPropertyDescriptor: refuse, getPrototypeOf: refuse },
    )
    const approval = policyApproval({ rules: [{ tool: 'write', decision: 'allow', under: '/srv' }], roots })
    expect(approval.needsApproval('write', { path: '/srv/a' })).toBe(true)
  })

  it('whatever the tool and arguments, needsApproval agrees with the rules’ decision', () => {
    const rules: ReadonlyArray<Rule> = [
      { tool: 'a*', decision: 'ask' },
      { tool: 'ab', decision: 'deny' },
      { tool: 'b', decision: 'allow' },
    ]
    const approval = policyApproval({ rules })
    const decision = (tool: string): 'allow' | 'ask' | 'deny' =>
      tool === 'ab' ? 'deny' : tool.startsWith('a') ? 'ask' : tool === 'b' ? 'allow' : 'ask'
    fc.assert(
      fc.property(fc.constantFrom('a', 'ab', 'abc', 'b', 'c', ''), fc.jsonValue({ maxDepth: 2 }), (tool, input) => {
        expect(approval.needsApproval(tool, input)).toBe(decision(tool) === 'ask')
      }),
    )
  })

  it('its onAsk allows a call while approvedWhile runs it, and otherwise answers as the fallback does', async () => {
    const rules: ReadonlyArray<Rule> = [{ tool: 'write', decision: 'ask' }]
    const asked: Array<string> = []
    const approval = policyApproval({ rules, onAsk: (r) => (asked.push(r.call.id), { action: 'deny-once' }) })
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'write', parameters: { type: 'object', properties: { path: {} } } },
          },
          run: () => 'wrote',
        },
      ]),
      withPolicy({ rules, onAsk: approval.onAsk }),
    )
    await stack.toolsForLlm()
    const call = (id: string): ToolCall => ({
      id,
      type: 'function',
      function: { name: 'write', arguments: '{"path":"/a"}' },
    })
    const contentOf = async (id: string): Promise<string | undefined> => {
      const out = await stack.executeToolCalls([call(id)])()
      return out._tag === 'Right' ? out.right[0]?.content : undefined
    }
    expect(await approval.approvedWhile(call('w1'), () => contentOf('w1'))).toBe('wrote')
    expect(asked).toStrictEqual([])
    expect(await contentOf('w1')).toMatch(/^The user declined this call to "write"\./)
    expect(asked).toStrictEqual(['w1'])
  })

  it('refuses options that are not an object, naming policyApproval', () => {
    expect(() => policyApproval(null as never)).toThrow(
      new TypeError(
        'policyApproval: options must be an object { rules, roots?, locationArgs?, resolver?, onAsk? }, got null',
      ),
    )
    expect(() => policyApproval({ rules: [], onAsk: 'yes' as never })).toThrow(
      new TypeError('policyApproval: option "onAsk" must be a function, got the string "yes"'),
    )
  })
})

// -------------------------------------------------------------------------------------

const hand = (
  name: string,
  properties: Record<string, unknown>,
  invoke: FunctionTool['invoke'] = async () => 'ran',
): FunctionTool => ({
  type: 'function',
  name,
  description: name,
  strict: false,
  parameters: { type: 'object', properties, required: [], additionalProperties: true } as never,
  invoke,
  needsApproval: async () => false,
  isEnabled: async () => true,
})

describe('auditAgentsTools: which tools', () => {
  it('only a function tool (an object typed function, named by a string, with an invoke) is counted and audited; the rest go on as they are', () => {
    const properties = { path: {} }
    const notFunctionTools: ReadonlyArray<unknown> = [
      null,
      'read',
      { ...hand('hosted', properties), type: 'hosted_tool' },
      { ...hand('x', properties), name: 5 },
      { ...hand('noinvoke', properties), invoke: 'run' },
      Object.assign([], hand('arrayed', properties)),
    ]
    const ping = hand('ping', {})
    const diagnostics: Array<AuditDiagnostic> = []
    const audited = auditAgentsTools([ping, ...notFunctionTools] as never, {
      onDiagnostic: (d) => void diagnostics.push(d),
    })
    expect(audited.auditedTools()).toStrictEqual([])
    expect(diagnostics).toStrictEqual([{ _tag: 'NothingToAudit', tools: 1 }])
    expect(audited.tools).toHaveLength(notFunctionTools.length + 1)
    audited.tools.forEach((t, i) => expect(t).toBe([ping, ...notFunctionTools][i]))
  })

  it('a function tool declaring a property is a new object over the same fields, with its own invoke wrapped', () => {
    const read = hand('read', { path: {} })
    const ping = hand('ping', {})
    const diagnostics: Array<AuditDiagnostic> = []
    const audited = auditAgentsTools([ping, read], {
      onWarn: () => undefined,
      onDiagnostic: (d) => void diagnostics.push(d),
    })
    expect(audited.auditedTools()).toStrictEqual(['read'])
    expect(diagnostics).toStrictEqual([])
    expect(audited.tools[0]).toBe(ping)
    expect(audited.tools[1]).not.toBe(read)
    expect(audited.tools[1]).toStrictEqual({ ...read, invoke: expect.any(Function) })
    expect(audited.tools[1]?.invoke).not.toBe(read.invoke)
  })

  it('refuses what is not an array, naming auditAgentsTools', () => {
    expect(() => auditAgentsTools({} as never)).toThrow(
      new TypeError('auditAgentsTools: expected an array of tools, got an object'),
    )
    expect(() => auditAgentsTools(undefined as never)).toThrow(
      new TypeError('auditAgentsTools: expected an array of tools, got undefined'),
    )
    expect(() => auditAgentsTools([], { maxPairs: 0 })).toThrow(/^auditAgentsTools: /)
  })
})

describe('auditAgentsTools: the wrapped invoke', () => {
  it('hands the tool the very run context, input and details, and the SDK the very promise it answered', async () => {
    const seen: Array<readonly [unknown, string, unknown]> = []
    const answer = Promise.resolve('the answer')
    const read = hand(
      'read',
      { path: {}, offset: {} },
      (ctx, input, details) => (seen.push([ctx, input, details]), answer),
    )
    const warnings: Array<UnknownKeyWarning> = []
    const [audited] = auditAgentsTools([read], { onWarn: (w) => void warnings.push(w) }).tools
    const ctx = new RunContext()
    const details = detailsFor('c1', 'read')
    const input = '{"path":"a","ffset":3}'
    expect(audited?.invoke(ctx, input, details)).toBe(answer)
    expect(seen).toHaveLength(1)
    expect(seen[0]?.[0]).toBe(ctx)
    expect(seen[0]?.[1]).toBe(input)
    expect(seen[0]?.[2]).toBe(details)
    expect(warnings).toStrictEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
  })

  it('audits the raw string against the tool’s own parameters, once per (tool, key), the id "" when the SDK gave none', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audited = auditAgentsTools([hand('read', { path: {} }), hand('list', { dir: {} })], {
      onWarn: (w) => void warnings.push(w),
    })
    const [read, list] = audited.tools
    await read?.invoke(new RunContext(), '{"path":"a","pth":1}')
    await read?.invoke(new RunContext(), '{"path":"a","pth":1}', { toolCall: { callId: 9 } } as never)
    await list?.invoke(new RunContext(), '{"path":"a"}', detailsFor('l1', 'list'))
    await read?.invoke(new RunContext(), '{"path":"a"}', detailsFor('r3', 'read'))
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.id])).toStrictEqual([
      ['read', ['pth'], ''],
      ['list', ['path'], 'l1'],
    ])
    expect(audited.stats()).toStrictEqual([
      { tool: 'list', key: 'path', calls: 1, firstId: 'l1' },
      { tool: 'read', key: 'pth', calls: 2, firstId: '' },
    ])
  })

  it('a zod tool made by the SDK’s tool(): its parameters are what the audit reads', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const read = tool({
      name: 'read',
      description: 'Reads',
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => `read ${path}`,
    })
    const [audited] = auditAgentsTools([read], { onWarn: (w) => void warnings.push(w) }).tools
    expect(await audited?.invoke(new RunContext(), '{"path":"a","paht":"b"}', detailsFor('c1', 'read'))).toBe('read a')
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.id, w.declaredKeys])).toStrictEqual([
      ['read', ['paht'], 'c1', ['path']],
    ])
  })
})
