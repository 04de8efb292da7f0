// The relay's steps without a transport: hostContext over a recorded `extra` and session (what it sends
// where, read with which schema), progressOf, and the router's view of the hosts in flight.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ErrorCode,
  ListRootsResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import type { HostCallExtra, HostSession, McpCallContext } from '../../src/mcp/index.js'
import { hostContext, hostRefusal, newHostRouter, progressOf } from '../../src/mcp/index.js'

interface Sent {
  readonly via: 'call' | 'session'
  readonly message: unknown
  readonly schema?: unknown
  readonly options?: Record<string, unknown>
}

/** A host call's `extra` and its session, recording what is sent through each; `failing` makes every send reject. */
const host = (o: { readonly token?: string | number; readonly capabilities?: unknown; readonly failing?: boolean }) => {
  const sent: Array<Sent> = []
  const call = new AbortController()
  const answer = (what: string): Promise<never> =>
    o.failing === true ? Promise.reject(new Error('gone')) : (Promise.resolve(what) as Promise<never>)
  const extra = {
    signal: call.signal,
    ...(o.token === undefined ? {} : { _meta: { progressToken: o.token } }),
    sendNotification: (message: unknown) => {
      sent.push({ via: 'call', message })
      return answer('sent')
    },
    sendRequest: (message: unknown, schema: unknown, options: Record<string, unknown>) => {
      sent.push({ via: 'call', message, schema, options })
      return answer('the call answered')
    },
  } as unknown as HostCallExtra
  const session = {
    getClientCapabilities: () => o.capabilities,
    request: (message: unknown, schema: unknown, options: Record<string, unknown>) => {
      sent.push({ via: 'session', message, schema, options })
      return answer('the session answered')
    },
    notification: (message: unknown) => {
      sent.push({ via: 'session', message })
      return answer('sent')
    },
  } as unknown as HostSession
  return { extra, session, sent, call }
}

const everything = { sampling: { tools: {} }, elicitation: { form: {}, url: {} }, roots: {} }

describe('progressOf', () => {
  it('keeps progress, and total and message only when they are there, whatever the update', () => {
    fc.assert(
      fc.property(
        fc.double(),
        fc.option(fc.double(), { nil: undefined }),
        fc.option(fc.string(), { nil: undefined }),
        (progress, total, message) => {
          const p = progressOf({ progress, total, message })
          // the oracle: the members that hold a value, as they are
          const expected: Record<string, unknown> = { progress }
          if (total !== undefined) expected['total'] = total
          if (message !== undefined) expected['message'] = message
          expect(p).toStrictEqual(expected)
        },
      ),
    )
  })
})

describe('hostContext', () => {
  it("is the call's signal and session, and the host's capabilities when it declared any", () => {
    const h = host({ capabilities: everything })
    const context = hostContext(h.extra, h.session, 1_000)
    expect(context.signal).toBe(h.call.signal)
    expect(context.session).toBe(h.session)
    expect(context.hostCapabilities).toBe(everything)
    const bare = host({})
    const none = hostContext(bare.extra, bare.session, 1_000)
    expect('hostCapabilities' in none).toBe(false)
    expect('onProgress' in none).toBe(false)
    expect('onLog' in none).toBe(false)
  })

  it("sends progress under the host's own token, whatever the update; a failed send is dropped", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.integer()),
        fc.double(),
        fc.option(fc.double(), { nil: undefined }),
        (token, progress, total) => {
          const h = host({ token })
          hostContext(h.extra, h.session, 1_000).onProgress?.({ progress, ...(total === undefined ? {} : { total }) })
          expect(h.sent).toEqual([
            {
              via: 'call',
              message: {
                method: 'notifications/progress',
                params: { progress, ...(total === undefined ? {} : { total }), progressToken: token },
              },
            },
          ])
          return Promise.resolve()
        },
      ),
    )
    const failing = host({ token: 't', failing: true })
    hostContext(failing.extra, failing.session, 1_000).onProgress?.({ progress: 1 })
    // an unhandled rejection would fail the run
    await new Promise((r) => setTimeout(r, 10))
    expect(failing.sent.length).toBe(1)
  })

  it('asks the host on the call, read with the result schema of the method, within the timeout, progress resetting it', async () => {
    const cases = [
      [{ method: 'roots/list' }, ListRootsResultSchema],
      [{ method: 'elicitation/create', params: { message: 'm', requestedSchema: {} } }, ElicitResultSchema],
      [{ method: 'sampling/createMessage', params: { messages: [] } }, CreateMessageResultSchema],
      [{ method: 'sampling/createMessage', params: { tools: [] } }, CreateMessageResultWithToolsSchema],
      [
        { method: 'sampling/createMessage', params: { toolChoice: { mode: 'auto' } } },
        CreateMessageResultWithToolsSchema,
      ],
    ] as const
    for (const [request, schema] of cases) {
      const h = host({ capabilities: everything })
      expect(await hostContext(h.extra, h.session, 1_234).requestHost?.(request)).toBe('the call answered')
      expect(h.sent.length).toBe(1)
      expect(h.sent[0]?.via).toBe('call')
      expect(h.sent[0]?.message).toBe(request)
      expect(h.sent[0]?.schema).toBe(schema)
      expect(h.sent[0]?.options).toEqual({ timeout: 1_234, signal: h.call.signal, resetTimeoutOnProgress: true })
      expect(h.sent[0]?.options?.['signal']).toBe(h.call.signal)
    }
  })

  it("a request's own signal and the call's both cancel it", async () => {
    for (const which of ['call', 'own'] as const) {
      const h = host({ capabilities: everything })
      const own = new AbortController()
      await hostContext(h.extra, h.session, 1_000).requestHost?.({ method: 'roots/list' }, { signal: own.signal })
      const signal = h.sent[0]?.options?.['signal'] as AbortSignal
      expect(signal.aborted).toBe(false)
      ;(which === 'call' ? h.call : own).abort()
      expect(signal.aborted).toBe(true)
    }
  })

  it("after the call, asks on the session's own stream, with the request's signal when it has one", async () => {
    const h = host({ capabilities: everything })
    const context = hostContext(h.extra, h.session, 500)
    const request = { method: 'roots/list' }
    expect(await context.requestHost?.(request, { afterCall: true })).toBe('the session answered')
    const own = new AbortController()
    await context.requestHost?.(request, { afterCall: true, signal: own.signal })
    await context.requestHost?.(request, { afterCall: false })
    expect(h.sent.map((s) => [s.via, s.schema, s.options])).toEqual([
      ['session', ListRootsResultSchema, { timeout: 500, resetTimeoutOnProgress: true }],
      ['session', ListRootsResultSchema, { timeout: 500, resetTimeoutOnProgress: true, signal: own.signal }],
      ['call', ListRootsResultSchema, { timeout: 500, resetTimeoutOnProgress: true, signal: h.call.signal }],
    ])
  })

  it('refuses what the host did not declare with MethodNotFound and the reason, and sends nothing', async () => {
    const requests = [
      { method: 'roots/list' },
      { method: 'sampling/createMessage', params: {} },
      { method: 'elicitation/create', params: {} },
      { method: 'ping' },
    ]
    for (const request of requests) {
      const h = host({ capabilities: {} })
      const e: unknown = await hostContext(h.extra, h.session, 1_000)
        .requestHost?.(request)
        .catch((err: unknown) => err)
      expect(e).toBeInstanceOf(McpError)
      expect((e as McpError).code).toBe(ErrorCode.MethodNotFound)
      expect((e as McpError).message).toBe(
        `MCP error ${ErrorCode.MethodNotFound}: ${hostRefusal(request.method, request.params, {})}`,
      )
      expect(h.sent).toEqual([])
    }
  })

  it("sends a log message the host's level takes, on the call or after it on the session's stream; drops the others", async () => {
    const h = host({})
    const levels: Array<string> = []
    const context = hostContext(h.extra, h.session, 1_000, (level) => {
      levels.push(level)
      return level !== 'debug'
    })
    context.onLog?.({ level: 'debug', data: 'no' })
    context.onLog?.({ level: 'error', data: 'on the call' })
    context.onLog?.({ level: 'warning', data: 'after' }, { afterCall: true })
    context.onLog?.({ level: 'info', data: 'still on the call' }, { afterCall: false })
    expect(levels).toEqual(['debug', 'error', 'warning', 'info'])
    expect(h.sent).toEqual([
      { via: 'call', message: { method: 'notifications/message', params: { level: 'error', data: 'on the call' } } },
      { via: 'session', message: { method: 'notifications/message', params: { level: 'warning', data: 'after' } } },
      {
        via: 'call',
        message: { method: 'notifications/message', params: { level: 'info', data: 'still on the call' } },
      },
    ])
  })

  it('a failed log send is dropped, and a session that cannot notify sends nothing after the call', async () => {
    const failing = host({ failing: true })
    const context = hostContext(failing.extra, failing.session, 1_000, () => true)
    context.onLog?.({ level: 'error', data: 'x' })
    context.onLog?.({ level: 'error', data: 'x' }, { afterCall: true })
    await new Promise((r) => setTimeout(r, 10))
    expect(failing.sent.length).toBe(2)
    const h = host({})
    const { notification: _, ...quiet } = h.session as HostSession & { notification?: unknown }
    hostContext(h.extra, quiet as HostSession, 1_000, () => true).onLog?.(
      { level: 'error', data: 'x' },
      { afterCall: true },
    )
    expect(h.sent).toEqual([])
  })
})

describe('hostRefusal, the cases the table leaves', () => {
  it('a toolChoice alone asks for sampling with tools; a host declaring both elicitation modes takes either', () => {
    expect(hostRefusal('sampling/createMessage', { toolChoice: { mode: 'auto' } }, { sampling: {} })).toBe(
      'the host of this session does not support sampling with tools (sampling/createMessage)',
    )
    expect(hostRefusal('sampling/createMessage', { toolChoice: {} }, { sampling: { tools: {} } })).toBeUndefined()
    const both = { elicitation: { form: {}, url: {} } }
    expect(hostRefusal('elicitation/create', { mode: 'url' }, both)).toBeUndefined()
    expect(hostRefusal('elicitation/create', { mode: 'form' }, both)).toBeUndefined()
    expect(hostRefusal('elicitation/create', { mode: 'form' }, { elicitation: { form: {} } })).toBeUndefined()
  })

  it('names a method it does not relay quoted, cut at 100 characters, whatever it is', () => {
    const relayed = ['sampling/createMessage', 'elicitation/create', 'roots/list']
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }).filter((m) => !relayed.includes(m)),
        (method) => {
          const shown = method.length > 100 ? `${method.slice(0, 100)}…` : method
          expect(hostRefusal(method, undefined, everything)).toBe(
            `the gateway does not relay ${JSON.stringify(shown)} requests to the host`,
          )
        },
      ),
    )
  })
})

describe("newHostRouter's hosts", () => {
  it('the most recent call in flight of each host session, in the order the sessions entered; none when idle', () => {
    const router = newHostRouter()
    expect(router.hosts()).toEqual([])
    const s1 = {}
    const s2 = {}
    const a: McpCallContext = { session: s1 }
    const b: McpCallContext = { session: s2 }
    const c: McpCallContext = { session: s1 }
    const lone: McpCallContext = {}
    const leaveA = router.enter(a)
    const leaveB = router.enter(b)
    const leaveC = router.enter(c)
    const leaveLone = router.enter(lone)
    const hosts = router.hosts()
    expect(hosts.length).toBe(3)
    expect(hosts[0]).toBe(c)
    expect(hosts[1]).toBe(b)
    expect(hosts[2]).toBe(lone)
    leaveC()
    leaveLone()
    expect(router.hosts()[0]).toBe(a)
    leaveA()
    leaveB()
    expect(router.hosts()).toEqual([])
  })

  it('a call without a session is a host of its own: two of them in flight are two hosts', () => {
    const router = newHostRouter()
    router.enter({})
    router.enter({})
    const refused = router.route('roots/list')
    expect(refused._tag).toBe('Left')
  })

  it('a host that declared no roots is not remembered for roots/list', () => {
    const router = newHostRouter()
    router.enter({ hostCapabilities: { sampling: {} } })()
    expect(router.route('roots/list')).toEqual({
      _tag: 'Left',
      left: 'no host that supports roots has sent a call to this server yet',
    })
  })
})
