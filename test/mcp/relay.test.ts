// Pass-through through the gateway, with real servers and real SDK clients: the reference
// "everything" server's sampling, elicitation and roots requests reach the host whose call
// is in flight (and are refused, saying why, when that host lacks the capability); its
// progress reaches the host under the host's own token; a host's abort cancels the
// upstream's call (a fixture that writes to stderr when it is cancelled).
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Gateway, GatewayRecord } from '../../src/gateway/index.js'
import { serveHttp } from '../../src/mcp/index.js'
import { decodeGatewayConfig, startGateway } from '../../src/gateway/index.js'
import { cleanUpAfterEach, EVERYTHING_SERVER } from './fixtures.js'
import { until } from '../support/until.js'

cleanUpAfterEach()
const CANCEL = fileURLToPath(new URL('./fixtures/cancel-server.mjs', import.meta.url))
const running: Array<{ readonly close: () => Promise<void> }> = []
afterEach(async () => {
  // hosts first, then the gateways and servers they reached
  for (const r of running.splice(0).reverse()) await r.close()
})

const start = async () => {
  const records: Array<GatewayRecord> = []
  const config = decodeGatewayConfig({
    mcpServers: {
      ev: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      hg: { command: process.execPath, args: [CANCEL] },
    },
    reasons: false,
    listWaitMs: 30_000,
  })
  if (config._tag === 'Left') throw new Error(config.left)
  const gateway = await startGateway(config.right, (r) => void records.push(r))
  running.push(gateway)
  return { gateway, records }
}

interface Handlers {
  readonly sampling?: (text: string) => string
  readonly elicitation?: (message: string) => Record<string, unknown>
  readonly roots?: () => ReadonlyArray<{ readonly uri: string; readonly name?: string }>
}

const newHost = (handlers: Handlers): Client => {
  const capabilities: ClientCapabilities = {
    ...(handlers.sampling === undefined ? {} : { sampling: {} }),
    ...(handlers.elicitation === undefined ? {} : { elicitation: {} }),
    ...(handlers.roots === undefined ? {} : { roots: { listChanged: true } }),
  }
  const client = new Client({ name: 'host', version: '1' }, { capabilities })
  const { sampling, elicitation, roots } = handlers
  if (sampling !== undefined)
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      const first = req.params.messages[0]?.content
      const text = first !== undefined && 'text' in first ? String(first.text) : ''
      return { model: 'host-model', role: 'assistant', content: { type: 'text', text: sampling(text) } }
    })
  if (elicitation !== undefined)
    client.setRequestHandler(ElicitRequestSchema, (req) => ({
      action: 'accept',
      content: elicitation(req.params.message) as Record<string, string>,
    }))
  if (roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [...roots()] }))
  return client
}

const host = async (gateway: Gateway, handlers: Handlers = {}): Promise<Client> => {
  const client = newHost(handlers)
  const [c, s] = InMemoryTransport.createLinkedPair()
  await gateway.newServer().connect(s)
  await client.connect(c)
  running.push(client)
  return client
}

const text = (r: Record<string, unknown>): string => JSON.stringify(r['content'])

const stderrLines = (records: ReadonlyArray<GatewayRecord>, upstream: string): ReadonlyArray<string> =>
  records.flatMap((r) => (r.type === 'upstream' && r._tag === 'Stderr' && r.upstream === upstream ? [r.line] : []))

describe('requests from an upstream to the host', () => {
  it("sampling: the upstream's request reaches the host that called, and the host's answer gets back", async () => {
    const { gateway } = await start()
    const seen: Array<string> = []
    const client = await host(gateway, { sampling: (t) => (seen.push(t), 'the host sampled this') })
    const out = await client.callTool({ name: 'ev_trigger-sampling-request', arguments: { prompt: 'say hi' } })
    expect(out.isError).not.toBe(true)
    expect(seen).toHaveLength(1)
    expect(seen[0]).toContain('say hi')
    expect(text(out)).toContain('the host sampled this')
    expect(text(out)).toContain('host-model')
  })

  it('sampling: a host that did not declare sampling gets an error result that says so', async () => {
    const { gateway } = await start()
    const client = await host(gateway)
    const out = await client.callTool({ name: 'ev_trigger-sampling-request', arguments: { prompt: 'say hi' } })
    expect(out.isError).toBe(true)
    expect(text(out)).toContain('the host of this session does not support sampling')
  })

  it("elicitation: the upstream's form reaches the host's human, and the answer gets back", async () => {
    const { gateway } = await start()
    const messages: Array<string> = []
    const client = await host(gateway, { elicitation: (m) => (messages.push(m), { name: 'Ada Lovelace' }) })
    const out = await client.callTool({ name: 'ev_trigger-elicitation-request', arguments: {} })
    expect(out.isError).not.toBe(true)
    expect(messages).toEqual(['Please provide inputs for the following fields:'])
    expect(text(out)).toContain('Ada Lovelace')
  })

  it('elicitation: a host without it gets an error result that says so', async () => {
    const { gateway } = await start()
    const client = await host(gateway, { sampling: () => 'unused' })
    const out = await client.callTool({ name: 'ev_trigger-elicitation-request', arguments: {} })
    expect(out.isError).toBe(true)
    expect(text(out)).toContain('the host of this session does not support elicitation')
  })

  it("roots: the upstream reads the calling host's roots; after the host's roots/list_changed it reads them again, with no call in flight", async () => {
    const { gateway } = await start()
    let roots = [{ uri: 'file:///srv/one', name: 'one' }]
    let asked = 0
    const client = await host(gateway, { roots: () => (asked++, roots) })
    const first = await client.callTool({ name: 'ev_get-roots-list', arguments: {} })
    expect(first.isError).not.toBe(true)
    expect(text(first)).toContain('file:///srv/one')
    // at least the call's own request; the upstream may also have read them when this host arrived
    expect(asked).toBeGreaterThanOrEqual(1)
    const before = asked
    roots = [{ uri: 'file:///srv/two', name: 'two' }]
    await client.sendRootsListChanged()
    // the upstream reads its roots again on list_changed, outside any call: the last host with roots answers
    await until(() => asked > before)
    const second = await client.callTool({ name: 'ev_get-roots-list', arguments: {} })
    expect(text(second)).toContain('file:///srv/two')
  })

  it('roots: a host without roots is never asked; the upstream is answered with an error that says so', async () => {
    const { gateway, records } = await start()
    const client = await host(gateway, { sampling: () => 'unused' })
    const out = await client.callTool({ name: 'ev_get-roots-list', arguments: {} })
    expect(text(out)).not.toContain('file://')
    // the everything server writes the error it got to its stderr
    const refused = (): boolean =>
      stderrLines(records, 'ev').some((l) => l.includes('the host of this session does not support roots (roots/list)'))
    await until(refused)
  })
})

describe('several hosts', () => {
  it("while another host's call is in flight at the same upstream, a request is refused rather than sent to a host it may not concern", async () => {
    const { gateway, records } = await start()
    const sampled: Array<string> = []
    const a = await host(gateway, { sampling: (t) => (sampled.push(`a ${t}`), 'from a') })
    const b = await host(gateway, { sampling: (t) => (sampled.push(`b ${t}`), 'from b') })
    const controller = new AbortController()
    const hanging = b.callTool({ name: 'hg_hang', arguments: {} }, undefined, { signal: controller.signal })
    await until(() => stderrLines(records, 'hg').includes('hang started'))
    // hg and ev are different upstreams: b's call at hg does not make ev's request ambiguous
    const alone = await a.callTool({ name: 'ev_trigger-sampling-request', arguments: { prompt: 'one' } })
    expect(text(alone)).toContain('from a')
    controller.abort()
    await expect(hanging).rejects.toThrow()
    // b's call in flight at ev: ev's request could serve either call, so no host is asked
    const busy = new AbortController()
    const long = b.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 5, steps: 1 } },
      undefined,
      { signal: busy.signal },
    )
    await new Promise((r) => setTimeout(r, 200))
    const refused = await a.callTool({ name: 'ev_trigger-sampling-request', arguments: { prompt: 'two' } })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain('calls of 2 host sessions are in flight at this server')
    busy.abort()
    await expect(long).rejects.toThrow()
    expect(sampled).toEqual([expect.stringContaining('a ')])
  })
})

describe('progress and cancellation', () => {
  it("the upstream's progress reaches the host under the host's own token, and the result after it", async () => {
    const { gateway } = await start()
    const client = await host(gateway)
    const updates: Array<unknown> = []
    const out = await client.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (p) => void updates.push(p) },
    )
    expect(out.isError).not.toBe(true)
    expect(text(out)).toContain('Long running operation completed')
    // the SDK client calls onprogress only for the token it sent with this very call. The last update, sent
    // just before the result, an SDK client (the gateway's or the host's) can drop: it handles a notification a
    // microtask late, and the result may have removed the call's progress handler by then
    expect(updates.slice(0, 2)).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ])
  })

  it("a host's abort cancels the upstream's call", async () => {
    const { gateway, records } = await start()
    const client = await host(gateway)
    const controller = new AbortController()
    const call = client.callTool({ name: 'hg_hang', arguments: {} }, undefined, { signal: controller.signal })
    await until(() => stderrLines(records, 'hg').includes('hang started'))
    controller.abort(new Error('the human pressed stop'))
    await expect(call).rejects.toThrow(/the human pressed stop/)
    await until(() => stderrLines(records, 'hg').includes('hang cancelled'))
  })
})

describe('over Streamable HTTP', () => {
  const overHttp = async (handlers: Handlers) => {
    const { gateway } = await start()
    const http = await serveHttp(gateway.newServer, { port: 0, host: '127.0.0.1' })
    running.push(http)
    const client = newHost(handlers)
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
    running.push(client)
    return client
  }

  it("sampling and progress reach the host on the call's own stream", async () => {
    const client = await overHttp({ sampling: () => 'sampled over http' })
    const sampled = await client.callTool({ name: 'ev_trigger-sampling-request', arguments: { prompt: 'hi' } })
    expect(text(sampled)).toContain('sampled over http')
    const updates: Array<unknown> = []
    await client.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (p) => void updates.push(p) },
    )
    // the last update can be dropped, as in process
    expect(updates.slice(0, 2)).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ])
  })

  it("roots asked after the call (on the host's roots/list_changed) reach the host on the session's stream", async () => {
    let roots = [{ uri: 'file:///srv/one' }]
    let asked = 0
    const client = await overHttp({ roots: () => (asked++, roots) })
    expect(text(await client.callTool({ name: 'ev_get-roots-list', arguments: {} }))).toContain('file:///srv/one')
    roots = [{ uri: 'file:///srv/two' }]
    await client.sendRootsListChanged()
    await until(() => asked === 2)
    expect(text(await client.callTool({ name: 'ev_get-roots-list', arguments: {} }))).toContain('file:///srv/two')
  })
})
