// The way back to the host, in process: every layer carries a call's mcp_context down
// unchanged (the law), fromMcpClient reads it (cancellation, progress), the router picks
// the host of a request, and hostRefusal says why a host cannot answer.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { CreateMessageResultSchema } from '@modelcontextprotocol/sdk/types.js'
import type { McpCallContext, McpProgress } from '../../src/mcp/index.js'
import {
  MAX_WAITING,
  UPSTREAM_CAPABILITIES,
  fromMcpClient,
  hostRefusal,
  newHostRouter,
  relayHostRequests,
} from '../../src/mcp/index.js'
import type { Provider, ToolCall } from '../../src/index.js'
import { registry, withPolicy, withReasons, withUnknownKeyAudit } from '../../src/index.js'
import { curated, newListedNames, onlyListed, recordListed } from '../../src/gateway/listed.js'
import { decl } from '../support/fakes.js'
import { keepsCallContext } from '../laws.js'
import { linked } from './fixtures.js'

const tools = [decl('read', ['path']), decl('write', ['path'])]
const names = fc.constantFrom('read', 'write')
const prefixed = fc.constantFrom('fs_read', 'fs_write')
const allow = [{ tool: '*', decision: 'allow' as const }]

// -------------------------------------------------------------------------------------
// the law, for every layer and for the gateway's whole stack
// -------------------------------------------------------------------------------------

describe("a call's mcp_context reaches the provider below as the same object", () => {
  const cases: ReadonlyArray<readonly [string, (p: Provider<string>) => Provider<unknown>, fc.Arbitrary<string>]> = [
    ['registry (a renamed copy)', (p) => registry([{ prefix: 'fs', provider: p }]), prefixed],
    ['withReasons (a copy without reason)', withReasons(), names],
    ['withUnknownKeyAudit', withUnknownKeyAudit({ onWarn: () => () => undefined }), names],
    ['withPolicy', withPolicy({ rules: allow }), names],
    [
      'withPolicy, asked and allowed by the human',
      withPolicy({
        rules: [{ tool: '*', decision: 'ask' }],
        onAsk: () => () => Promise.resolve({ action: 'allow-once' as const }),
      }),
      names,
    ],
    ['curated', curated({ exclude: ['nothing'] }), names],
    [
      'recordListed and onlyListed',
      (p) => {
        const listed = newListedNames()
        return pipe(p, recordListed(listed), onlyListed(listed))
      },
      names,
    ],
    [
      "the gateway's stack",
      (p) => {
        const listed = newListedNames()
        return pipe(
          registry([{ prefix: 'fs', provider: p }]),
          withReasons(),
          recordListed(listed),
          withUnknownKeyAudit({ onWarn: () => () => undefined }),
          // asked: the policy sends a copy of the arguments it judged
          withPolicy({
            rules: [{ tool: 'fs_*', decision: 'ask' }],
            onAsk: () => () => Promise.resolve({ action: 'allow-once' as const }),
          }),
          onlyListed(listed),
        )
      },
      prefixed,
    ],
  ]
  for (const [name, make, calls] of cases)
    it(name, async () => {
      await fc.assert(keepsCallContext(make, tools, calls))
    })

  it('the law can fail: a layer that rebuilds calls without their context breaks it', async () => {
    const dropping = (p: Provider<string>): Provider<string> => ({
      toolsForLlm: p.toolsForLlm,
      executeToolCalls: (calls) => p.executeToolCalls(calls.map((c) => ({ id: c.id, function: c.function }))),
    })
    const out = await fc.check(keepsCallContext(dropping, tools, names))
    expect(out.failed).toBe(true)
  })
})

// -------------------------------------------------------------------------------------
// fromMcpClient reads it
// -------------------------------------------------------------------------------------

// an upstream whose `wait` tool sends `steps` progress updates `everyMs` apart (when asked for progress),
// then answers; it records its calls' progress tokens and the ones cancelled
const upstream = () => {
  const tokens: Array<unknown> = []
  const cancelled: Array<string> = []
  const server = new McpServer({ name: 'up', version: '0' })
  server.registerTool('wait', { description: 'waits' }, async (extra) => {
    const token = extra._meta?.progressToken
    tokens.push(token)
    extra.signal.addEventListener('abort', () => void cancelled.push('wait'))
    for (let i = 1; i <= 4; i++) {
      await new Promise((r) => setTimeout(r, 60))
      if (extra.signal.aborted) break
      if (token !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: 4, message: `step ${i}` },
        })
    }
    return { content: [{ type: 'text', text: 'waited' }] }
  })
  return { server, tokens, cancelled }
}

const waitCall = (mcp_context?: McpCallContext): ToolCall => ({
  id: '1',
  function: { name: 'wait', arguments: '{}' },
  ...(mcp_context === undefined ? {} : { mcp_context }),
})

describe('fromMcpClient and the context of a call', () => {
  it("sends the upstream's progress to the context, and asks for none without one", async () => {
    const up = upstream()
    const { client, close } = await linked(up.server)
    try {
      const provider = fromMcpClient(client)
      const plain = await provider.executeToolCalls([waitCall()])()
      expect(plain._tag === 'Right' && plain.right[0]?.content).toBe('waited')
      const updates: Array<McpProgress> = []
      const out = await provider.executeToolCalls([waitCall({ onProgress: (p) => void updates.push(p) })])()
      expect(out._tag === 'Right' && out.right[0]?.content).toBe('waited')
      expect(up.tokens[0]).toBeUndefined()
      expect(up.tokens[1]).not.toBeUndefined()
      expect(updates).toEqual([1, 2, 3, 4].map((i) => ({ progress: i, total: 4, message: `step ${i}` })))
    } finally {
      await close()
    }
  })

  it('progress resets the timeout: a call that keeps reporting outlives it, a silent one does not', async () => {
    const up = upstream()
    const { client, close } = await linked(up.server)
    try {
      const provider = fromMcpClient(client, { timeout: 150 })
      const reporting = await provider.executeToolCalls([waitCall({ onProgress: () => undefined })])()
      expect(reporting._tag === 'Right' && reporting.right[0]).toMatchObject({ content: 'waited' })
      const silent = await provider.executeToolCalls([waitCall()])()
      expect(silent._tag === 'Right' && silent.right[0]).toMatchObject({ is_error: true })
      expect(silent._tag === 'Right' && silent.right[0]?.content).toContain('did not answer within 150 ms')
    } finally {
      await close()
    }
  })

  it("the host's abort cancels the upstream's call, and the call's result says it was aborted", async () => {
    const up = upstream()
    const { client, close } = await linked(up.server)
    try {
      const controller = new AbortController()
      const pending = fromMcpClient(client).executeToolCalls([waitCall({ signal: controller.signal })])()
      await new Promise((r) => setTimeout(r, 30))
      controller.abort(new Error('the host cancelled'))
      const out = await pending
      expect(out._tag === 'Right' && out.right[0]).toMatchObject({ is_error: true })
      expect(out._tag === 'Right' && out.right[0]?.content).toContain('the call was aborted (the host cancelled)')
      await expect.poll(() => up.cancelled).toEqual(['wait'])
    } finally {
      await close()
    }
  })

  it('a context of the wrong shape is ignored, member by member', async () => {
    const up = upstream()
    const { client, close } = await linked(up.server)
    try {
      const odd = { signal: 'no', onProgress: 42, requestHost: null } as unknown as McpCallContext
      const out = await fromMcpClient(client).executeToolCalls([waitCall(odd)])()
      expect(out._tag === 'Right' && out.right[0]?.content).toBe('waited')
      expect(up.tokens).toEqual([undefined])
    } finally {
      await close()
    }
  })
})

// -------------------------------------------------------------------------------------
// the router and the refusals
// -------------------------------------------------------------------------------------

describe('newHostRouter', () => {
  it('routes to the most recent call in flight; with none, roots go to the last host with roots, anything else is refused', () => {
    const router = newHostRouter()
    expect(router.route('roots/list')).toEqual({
      _tag: 'Left',
      left: 'no host that supports roots has sent a call to this server yet',
    })
    const session = {}
    const a: McpCallContext = { hostCapabilities: { roots: {} }, session }
    const b: McpCallContext = { hostCapabilities: { roots: {} }, session }
    const leaveA = router.enter(a)
    const leaveB = router.enter(b)
    expect(router.route('sampling/createMessage')).toEqual({ _tag: 'Right', right: { context: b, inFlight: true } })
    leaveB()
    expect(router.route('sampling/createMessage')).toEqual({ _tag: 'Right', right: { context: a, inFlight: true } })
    leaveA()
    expect(router.route('roots/list')).toEqual({ _tag: 'Right', right: { context: a, inFlight: false } })
    expect(router.route('sampling/createMessage')).toEqual({
      _tag: 'Left',
      left: 'no call from a host is in flight at this server, so there is no host to ask (sampling/createMessage)',
    })
  })

  it('refuses while calls of two host sessions are in flight, and routes again once one is done', () => {
    const router = newHostRouter()
    const a: McpCallContext = { session: {} }
    const b: McpCallContext = { session: {} }
    const leaveA = router.enter(a)
    const leaveB = router.enter(b)
    expect(router.route('elicitation/create')).toEqual({
      _tag: 'Left',
      left:
        'calls of 2 host sessions are in flight at this server, and MCP does not say which call a request serves, ' +
        'so it is refused rather than sent to a host it may not concern (elicitation/create)',
    })
    leaveA()
    expect(router.route('elicitation/create')).toEqual({ _tag: 'Right', right: { context: b, inFlight: true } })
    leaveB()
  })
})

describe('hostRefusal', () => {
  it.each([
    ['sampling/createMessage', {}, { sampling: {} }, undefined],
    ['sampling/createMessage', {}, {}, 'the host of this session does not support sampling (sampling/createMessage)'],
    [
      'sampling/createMessage',
      { tools: [] },
      { sampling: {} },
      'the host of this session does not support sampling with tools (sampling/createMessage)',
    ],
    ['sampling/createMessage', { tools: [] }, { sampling: { tools: {} } }, undefined],
    ['elicitation/create', {}, { elicitation: {} }, undefined],
    ['elicitation/create', { mode: 'url' }, { elicitation: { url: {} } }, undefined],
    [
      'elicitation/create',
      { mode: 'url' },
      { elicitation: {} },
      'the host of this session does not support URL-mode elicitation (elicitation/create)',
    ],
    [
      'elicitation/create',
      {},
      { elicitation: { url: {} } },
      'the host of this session does not support form-mode elicitation (elicitation/create)',
    ],
    ['elicitation/create', {}, undefined, 'the host of this session does not support elicitation (elicitation/create)'],
    ['roots/list', undefined, { roots: {} }, undefined],
    ['roots/list', undefined, { sampling: {} }, 'the host of this session does not support roots (roots/list)'],
  ])('%s with %j and a host with %j', (method, params, capabilities, expected) => {
    expect(hostRefusal(method, params, capabilities)).toBe(expected)
  })

  it('names another method quoted and cut, whatever it holds', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (method) => {
        fc.pre(!['sampling/createMessage', 'elicitation/create', 'roots/list'].includes(method))
        const why = hostRefusal(method, undefined, {}) ?? ''
        expect(why.length).toBeLessThan(200)
        expect([...why].every((ch) => ch.charCodeAt(0) >= 0x20)).toBe(true)
      }),
    )
  })
})

describe('relayHostRequests', () => {
  // an upstream server and the gateway's client of it, in process, the client relaying through `router`
  const relayed = async (router: ReturnType<typeof newHostRouter>) => {
    const server = new McpServer({ name: 'up', version: '0' })
    const client = new Client({ name: 'gateway', version: '0' }, { capabilities: UPSTREAM_CAPABILITIES })
    relayHostRequests(client, router)
    const [c, s] = InMemoryTransport.createLinkedPair()
    await server.connect(s)
    await client.connect(c)
    return { server, close: () => client.close() }
  }
  const sample = { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'hi' } }], maxTokens: 5 }
  const answer = { model: 'm', role: 'assistant', content: { type: 'text', text: 'ok' } }

  it(`holds at most ${MAX_WAITING} requests open at the host; the next is refused at once, saying why`, async () => {
    const router = newHostRouter()
    const release: Array<() => void> = []
    const context: McpCallContext = {
      hostCapabilities: { sampling: {} },
      requestHost: () => new Promise((resolve) => release.push(() => resolve(answer))),
    }
    const leave = router.enter(context)
    const { server, close } = await relayed(router)
    try {
      const held = Array.from({ length: MAX_WAITING }, () => server.server.createMessage(sample))
      await expect.poll(() => release.length).toBe(MAX_WAITING)
      await expect(server.server.createMessage(sample)).rejects.toThrow(
        `${MAX_WAITING} requests from this server already wait for the host's answer`,
      )
      for (const r of release) r()
      expect((await Promise.all(held)).every((r) => r.model === 'm')).toBe(true)
      // answered, they no longer count
      release.length = 0
      const next = server.server.createMessage(sample)
      await expect.poll(() => release.length).toBe(1)
      release[0]?.()
      expect((await next).model).toBe('m')
    } finally {
      leave()
      await close()
    }
  })

  it("roots/list with no call in flight goes to the last host with roots, outside its call (the call's stream is gone)", async () => {
    const router = newHostRouter()
    const asked: Array<unknown> = []
    const context: McpCallContext = {
      hostCapabilities: { roots: {} },
      requestHost: (request, options) => {
        asked.push({ method: request.method, afterCall: options?.afterCall })
        return Promise.resolve({ roots: [{ uri: 'file:///srv' }] })
      },
    }
    router.enter(context)()
    const { server, close } = await relayed(router)
    try {
      expect(await server.server.listRoots()).toEqual({ roots: [{ uri: 'file:///srv' }] })
      expect(asked).toEqual([{ method: 'roots/list', afterCall: true }])
      await expect(server.server.createMessage(sample)).rejects.toThrow(
        'no call from a host is in flight at this server, so there is no host to ask (sampling/createMessage)',
      )
    } finally {
      await close()
    }
  })

  it("the upstream's method and params as they are (no params member when it sent none), on the call while it is in flight", async () => {
    const router = newHostRouter()
    const asked: Array<unknown> = []
    const context: McpCallContext = {
      requestHost: (request, options) => {
        asked.push([request, options?.afterCall, options?.signal instanceof AbortSignal])
        return Promise.resolve(
          request.method === 'roots/list'
            ? { roots: [] }
            : { model: 'm', role: 'assistant', content: { type: 'text', text: 'ok' } },
        )
      },
    }
    const leave = router.enter(context)
    const { server, close } = await relayed(router)
    try {
      await server.server.listRoots()
      const sample = {
        messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'hi' } }],
        maxTokens: 5,
      }
      await server.server.createMessage(sample)
      expect(asked).toStrictEqual([
        [{ method: 'roots/list' }, false, true],
        [{ method: 'sampling/createMessage', params: sample }, false, true],
      ])
    } finally {
      leave()
      await close()
    }
  })

  it('a host that cannot be asked anything is named as such to the upstream', async () => {
    const router = newHostRouter()
    const leave = router.enter({ hostCapabilities: { roots: {} } })
    const { server, close } = await relayed(router)
    try {
      await expect(server.server.listRoots()).rejects.toThrow('the host of this call cannot be asked anything')
    } finally {
      leave()
      await close()
    }
  })
})

describe("the call's timeout while the host answers", () => {
  it("waits for the host: a human who takes longer than the call's timeout does not cancel the call", async () => {
    const server = new McpServer({ name: 'up', version: '0' })
    server.registerTool('ask', { description: 'asks the host' }, async (extra) => {
      const r = await extra.sendRequest(
        { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
        CreateMessageResultSchema,
      )
      return { content: [{ type: 'text', text: `host said ${JSON.stringify(r.content)}` }] }
    })
    const router = newHostRouter()
    const client = new Client({ name: 'gateway', version: '0' }, { capabilities: UPSTREAM_CAPABILITIES })
    relayHostRequests(client, router)
    const [c, s] = InMemoryTransport.createLinkedPair()
    await server.connect(s)
    await client.connect(c)
    try {
      const provider = fromMcpClient(client, { timeout: 150, onCallContext: router.enter })
      const slowHuman: McpCallContext = {
        requestHost: () =>
          new Promise((resolve) =>
            setTimeout(() => resolve({ model: 'm', role: 'assistant', content: { type: 'text', text: 'late' } }), 400),
          ),
      }
      const out = await provider.executeToolCalls([
        { id: '1', function: { name: 'ask', arguments: '{}' }, mcp_context: slowHuman },
      ])()
      expect(out._tag === 'Right' && out.right[0]).toMatchObject({ content: 'host said {"type":"text","text":"late"}' })
      // without a router, the server's request finds no host to ask
      const alone = await fromMcpClient(client, { timeout: 150 }).executeToolCalls([
        { id: '2', function: { name: 'ask', arguments: '{}' }, mcp_context: slowHuman },
      ])()
      expect(alone._tag === 'Right' && alone.right[0]).toMatchObject({ is_error: true })
    } finally {
      await client.close()
    }
  })
})
