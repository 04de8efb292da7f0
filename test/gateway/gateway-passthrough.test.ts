// What the gateway passes through beyond tools and resources (issue 37): logging (each host's level, the most
// verbose asked upstream, messages to the hosts they concern, escaped), completion, an upstream session per host
// session for a Streamable HTTP upstream, and an upstream stream cut mid-call. The upstream is a low-level SDK
// server served over Streamable HTTP in process (`serveHttp`, a server per session), the hosts real SDK Clients.
import { getEventListeners } from 'node:events'
import type { AddressInfo, Socket } from 'node:net'
import { connect, createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { HttpServing } from '../../src/mcp/index.js'
import type { Gateway, GatewayRecord } from '../../src/gateway/index.js'
import { serveHttp } from '../../src/mcp/index.js'
import { decodeGatewayConfig, startGateway } from '../../src/gateway/index.js'
import { until } from '../support/until.js'

const running: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.close()
})

// the upstream: what each of its sessions was asked, for the tests to read
interface UpstreamSession {
  level: string | undefined
  readonly completed: Array<unknown>
}
const upstreamSessions: Array<UpstreamSession> = []

const TOOLS = ['log', 'later', 'session', 'ask', 'level'].map((name) => ({
  name,
  inputSchema: { type: 'object', properties: { level: { type: 'string' }, data: {} } },
}))

// a barrier: each `ask` call waits here until a second one has arrived, on whatever session of the upstream
let waiting: Array<() => void> = []
const bothAsking = (): Promise<void> =>
  new Promise<void>((resolve) => {
    waiting.push(resolve)
    if (waiting.length < 2) return
    for (const release of waiting) release()
    waiting = []
  })

const upstreamServer = (completions = true): Server => {
  const state: UpstreamSession = { level: undefined, completed: [] }
  upstreamSessions.push(state)
  const server = new Server(
    { name: 'passthrough-upstream', version: '1.2.3' },
    {
      capabilities: { tools: {}, logging: {}, prompts: {}, resources: {}, ...(completions ? { completions: {} } : {}) },
    },
  )
  server.setRequestHandler(SetLevelRequestSchema, (r) => {
    state.level = r.params.level
    return {}
  })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
  server.setRequestHandler(CallToolRequestSchema, async (r, extra) => {
    const args = r.params.arguments ?? {}
    const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] })
    switch (r.params.name) {
      case 'log':
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: args['level'] as 'info', logger: 'up\u001b[2J', data: args['data'] },
        })
        return text('logged')
      case 'later':
        // after the call: on no call's stream
        setTimeout(
          () =>
            void server
              .notification({ method: 'notifications/message', params: { level: 'error', data: 'afterwards' } })
              .catch(() => undefined),
          50,
        )
        return text('later')
      case 'session':
        return text(extra.sessionId ?? 'none')
      case 'ask': {
        // both hosts' calls are in flight before either asks (the test calls `ask` two at a time)
        await bothAsking()
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: { message: 'who?', requestedSchema: { type: 'object', properties: { who: { type: 'string' } } } },
          },
          ElicitResultSchema,
        )
        return text(JSON.stringify(answer.content))
      }
      default:
        return text(state.level ?? 'none')
    }
  })
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [{ name: 'greet', arguments: [{ name: 'name' }] }],
  }))
  server.setRequestHandler(GetPromptRequestSchema, () => ({ messages: [] }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{ uriTemplate: 'test://item/{id}', name: 'item' }],
  }))
  if (completions)
    server.setRequestHandler(CompleteRequestSchema, (r) => {
      state.completed.push(r.params.ref)
      const ref = r.params.ref
      const what = ref.type === 'ref/prompt' ? ref.name : ref.uri
      return { completion: { values: [`${what}:${r.params.argument.value}`], hasMore: false } }
    })
  return server
}

const upstream = async (completions = true): Promise<HttpServing> => {
  const serving = await serveHttp(() => upstreamServer(completions), { port: 0 })
  running.push(serving)
  return serving
}

const gatewayOver = async (mcpServers: Record<string, unknown>): Promise<Gateway> => {
  const records: Array<GatewayRecord> = []
  const config = decodeGatewayConfig({ mcpServers, listWaitMs: 30_000 })
  if (config._tag === 'Left') throw new Error(config.left)
  const gateway = await startGateway(config.right, (r) => void records.push(r))
  running.push(gateway)
  return gateway
}

interface Host {
  readonly client: Client
  readonly logs: Array<{ readonly level: string; readonly logger?: string | undefined; readonly data: unknown }>
  readonly close: () => Promise<void>
}

const host = async (gateway: Gateway, who = 'host'): Promise<Host> => {
  const client = new Client({ name: who, version: '1' }, { capabilities: { elicitation: {} } })
  const logs: Host['logs'] = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params))
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { who } }))
  const [c, s] = InMemoryTransport.createLinkedPair()
  await gateway.newServer().connect(s)
  await client.connect(c)
  const close = () => client.close()
  running.push({ close })
  return { client, logs, close }
}

const textOf = (r: unknown): string => ((r as { content: Array<{ text?: string }> }).content[0]?.text ?? '') as string

const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms))

describe('the gateway passes logging through', () => {
  it('declares logging; each host receives the messages of its own calls at the level it set, escaped; the upstream is asked for the most verbose level', async () => {
    const up = await upstream()
    const gateway = await gatewayOver({ up: { url: up.url, prefix: '' } })
    const a = await host(gateway, 'a')
    const b = await host(gateway, 'b')
    expect(a.client.getServerCapabilities()?.logging).toEqual({})
    expect(await a.client.setLoggingLevel('warning')).toEqual({})

    await a.client.callTool({ name: 'log', arguments: { level: 'info', data: 'quiet' } })
    await a.client.callTool({ name: 'log', arguments: { level: 'error', data: { line: 'a\u202eb', n: 1 } } })
    await b.client.callTool({ name: 'log', arguments: { level: 'debug', data: 'for b' } })
    await until(() => a.logs.length > 0 && b.logs.length > 0)
    await settle()
    // a set warning: its info is not sent; b set nothing: it gets every level; neither gets the other's
    expect(a.logs).toEqual([{ level: 'error', logger: 'up\\u001b[2J', data: { line: 'a\\u202eb', n: 1 } }])
    expect(b.logs).toEqual([{ level: 'debug', logger: 'up\\u001b[2J', data: 'for b' }])

    // each upstream session was asked for the most verbose level any host asked for
    expect(textOf(await a.client.callTool({ name: 'level', arguments: {} }))).toBe('warning')
    await b.client.setLoggingLevel('debug')
    await until(() => upstreamSessions.slice(-2).every((s) => s.level === 'debug'))
    await b.close()
    // b is gone: the most verbose level asked is a's again
    await until(() => upstreamSessions.some((s) => s.level === 'warning'))
  })

  it("a message after a call reaches that call's host alone (per host); from a shared session with no call in flight, every host that wants its level", async () => {
    const up = await upstream()
    const perHost = await gatewayOver({ up: { url: up.url, prefix: '' } })
    const a = await host(perHost, 'a')
    const b = await host(perHost, 'b')
    await a.client.callTool({ name: 'later', arguments: {} })
    await until(() => a.logs.length === 1)
    await settle()
    expect(a.logs).toEqual([{ level: 'error', data: 'afterwards' }])
    expect(b.logs).toEqual([])

    const shared = await gatewayOver({ up: { url: up.url, prefix: '', sessions: 'shared' } })
    const c = await host(shared, 'c')
    const d = await host(shared, 'd')
    const e = await host(shared, 'e')
    await e.client.setLoggingLevel('emergency')
    await c.client.callTool({ name: 'later', arguments: {} })
    await until(() => c.logs.length === 1 && d.logs.length === 1)
    await settle()
    expect(d.logs).toEqual([{ level: 'error', data: 'afterwards' }])
    expect(e.logs).toEqual([])
  })
})

describe('the gateway gives each host session an upstream session of its own', () => {
  it('per host for a url: two hosts, two upstream sessions, each ended with its host; "shared": one for all', async () => {
    const up = await upstream()
    const gateway = await gatewayOver({ up: { url: up.url, prefix: '' } })
    const a = await host(gateway, 'a')
    const b = await host(gateway, 'b')
    const sa = textOf(await a.client.callTool({ name: 'session', arguments: {} }))
    const sb = textOf(await b.client.callTool({ name: 'session', arguments: {} }))
    expect(sa).not.toBe(sb)
    expect(textOf(await a.client.callTool({ name: 'session', arguments: {} }))).toBe(sa)
    // the gateway's shared session (listings), and one per host
    expect(up.sessions()).toBe(3)
    await a.close()
    await until(() => up.sessions() === 2)

    const shared = await gatewayOver({ up: { url: up.url, prefix: '', sessions: 'shared' } })
    const c = await host(shared, 'c')
    const d = await host(shared, 'd')
    expect(textOf(await c.client.callTool({ name: 'session', arguments: {} }))).toBe(
      textOf(await d.client.callTool({ name: 'session', arguments: {} })),
    )
  })

  it("two hosts' calls in flight at once each have their elicitation answered by their own host (shared, one is refused)", async () => {
    const up = await upstream()
    const gateway = await gatewayOver({ up: { url: up.url, prefix: '' } })
    const a = await host(gateway, 'a')
    const b = await host(gateway, 'b')
    const answers = await Promise.all([
      a.client.callTool({ name: 'ask', arguments: {} }),
      b.client.callTool({ name: 'ask', arguments: {} }),
    ])
    expect(answers.map(textOf)).toEqual(['{"who":"a"}', '{"who":"b"}'])

    const shared = await gatewayOver({ up: { url: up.url, prefix: '', sessions: 'shared' } })
    const c = await host(shared, 'c')
    const d = await host(shared, 'd')
    const refused = await Promise.all([
      c.client.callTool({ name: 'ask', arguments: {} }),
      d.client.callTool({ name: 'ask', arguments: {} }),
    ])
    for (const r of refused) {
      expect(r.isError).toBe(true)
      expect(textOf(r)).toContain('calls of 2 host sessions are in flight at this server')
    }
  })
})

describe('the gateway passes completion through', () => {
  const rejection = async (p: Promise<unknown>): Promise<McpError> => {
    const e: unknown = await p.then(
      () => undefined,
      (err: unknown) => err,
    )
    if (!(e instanceof McpError)) throw new Error(`expected an McpError, got ${String(e)}`)
    return e
  }

  it('routes a prompt argument as prompts/get (its own name upstream), a template argument to the upstream listing it; unknown is InvalidParams; no completion upstream, no values', async () => {
    const up = await upstream()
    const bare = await upstream(false)
    const gateway = await gatewayOver({ up: { url: up.url }, bare: { url: bare.url } })
    const a = await host(gateway)
    expect(a.client.getServerCapabilities()?.completions).toEqual({})
    const prompt = await a.client.complete({
      ref: { type: 'ref/prompt', name: 'up_greet' },
      argument: { name: 'name', value: 'Al' },
    })
    expect(prompt.completion.values).toEqual(['greet:Al'])
    await a.client.listResourceTemplates()
    const template = await a.client.complete({
      ref: { type: 'ref/resource', uri: 'test://item/{id}' },
      argument: { name: 'id', value: '4' },
    })
    expect(template.completion.values).toEqual(['test://item/{id}:4'])
    expect(
      (
        await a.client.complete({
          ref: { type: 'ref/prompt', name: 'bare_greet' },
          argument: { name: 'name', value: 'x' },
        })
      ).completion.values,
    ).toEqual([])
    const unknown = await rejection(
      a.client.complete({ ref: { type: 'ref/prompt', name: 'nope_greet' }, argument: { name: 'n', value: '' } }),
    )
    expect(unknown.code).toBe(-32602)
    expect(unknown.message).toContain('there is no prompt named "nope_greet"')
  })
})

describe('a Streamable HTTP upstream called many times', () => {
  it("40 calls leave no listener on the upstream transport's signal: each request has a signal of its own", async () => {
    const up = await upstream()
    // one upstream session for all hosts: the calls go through the upstream's own client
    const gateway = await gatewayOver({ up: { url: up.url, prefix: '', sessions: 'shared' } })
    const a = await host(gateway)
    for (let i = 0; i < 40; i++) await a.client.callTool({ name: 'session', arguments: {} })
    // the SDK's transport passes one signal to every request (a private member, read here to count what holds it);
    // Node's fetch leaves a listener on the signal it is given until the request is collected
    const transport = gateway.upstreams[0]?.client()?.transport as unknown as { _abortController: AbortController }
    expect(getEventListeners(transport._abortController.signal, 'abort').length).toBeLessThan(5)
  }, 120_000)
})

/**
 * A TCP relay to the port `to` names (read at each connection). It tells whether the connection that carried a
 * `tools/call` has passed an SSE priming event (`retry:`) back; `hold` keeps the server's bytes from then on;
 * `cut` ends every connection open now (a proxy restarted, a network change).
 */
const relayTo = async (to: () => number) => {
  const open = new Set<Socket>()
  let callPrimed = false
  let holding = false
  const relay = createServer((inbound) => {
    const outbound = connect(to(), '127.0.0.1')
    let carriesCall = false
    open.add(inbound)
    open.add(outbound)
    const end = () => {
      open.delete(inbound)
      open.delete(outbound)
      inbound.destroy()
      outbound.destroy()
    }
    inbound.on('close', end).on('error', end)
    inbound.on('data', (chunk: Buffer) => {
      if (chunk.toString('latin1').includes('"tools/call"')) carriesCall = true
      outbound.write(chunk)
    })
    outbound.on('close', end).on('error', end)
    outbound.on('data', (chunk: Buffer) => {
      if (holding) return
      if (carriesCall && chunk.toString('latin1').includes('retry:')) callPrimed = true
      inbound.write(chunk)
    })
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  running.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy()
        relay.close(() => resolve())
      }),
  })
  const { port: own } = relay.address() as AddressInfo
  return {
    host: `127.0.0.1:${own}`,
    url: `http://127.0.0.1:${own}/mcp`,
    callPrimed: () => callPrimed,
    hold: () => void (holding = true),
    cut: () => {
      holding = false
      for (const s of open) s.destroy()
    },
  }
}

/** An upstream over Streamable HTTP, reached through a relay, whose one tool answers once `release` is called. */
const slowUpstreamBehindRelay = async () => {
  let arrived: () => void = () => undefined
  const called = new Promise<void>((r) => (arrived = r))
  let release: () => void = () => undefined
  const released = new Promise<void>((r) => (release = r))
  let upstreamPort = 0
  const relay = await relayTo(() => upstreamPort)
  const up = await serveHttp(
    () => {
      const server = new Server({ name: 'resumable', version: '1' }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: 'slow', inputSchema: { type: 'object', properties: {} } }],
      }))
      server.setRequestHandler(CallToolRequestSchema, async () => {
        arrived()
        await released
        return { content: [{ type: 'text' as const, text: 'finished while the stream was cut' }] }
      })
      return server
    },
    // the upstream is reached through the relay, so the relay's address is the Host it is sent
    { port: 0, allowedHosts: [relay.host] },
  )
  running.push(up)
  upstreamPort = Number(new URL(up.url).port)
  const gateway = await gatewayOver({ up: { url: relay.url, prefix: '' } })
  const a = await host(gateway)
  expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['slow'])
  return { relay, called, release, call: () => a.client.callTool({ name: 'slow', arguments: {} }) }
}

describe('an upstream stream cut mid-call', () => {
  it("is resumed by the gateway's client with Last-Event-ID once it was primed: the host gets the result the upstream sent meanwhile", async () => {
    const { relay, called, release, call } = await slowUpstreamBehindRelay()
    const result = call()
    await called
    // the call's stream has opened with its priming event (an id to resume from) once the relay has passed it
    await until(relay.callPrimed, 30_000, "the call's priming event")
    relay.cut()
    release()
    expect(textOf(await result)).toBe('finished while the stream was cut')
  })

  it('is answered at once as an error when it was cut before any event reached the gateway (nothing to resume from)', async () => {
    const { relay, called, release, call } = await slowUpstreamBehindRelay()
    const result = call()
    await called
    relay.hold()
    relay.cut()
    const r = await result
    release()
    expect(r.isError).toBe(true)
    expect(textOf(r)).toBe('the tool call failed: fetch failed')
  })
})
