// The gateway's resources and prompts over real upstream servers (the reference everything, filesystem
// and memory servers, and a resources fixture), served to real SDK Clients in process.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Gateway, GatewayRecord } from '../../src/gateway/index.js'
import { serveHttp } from '../../src/mcp/index.js'
import { decodeGatewayConfig, startGateway } from '../../src/gateway/index.js'
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, cleanUpAfterEach, spawnServer, tempDir } from '../mcp/fixtures.js'
import { until } from '../support/until.js'

cleanUpAfterEach()
const require = createRequire(import.meta.url)
const MEMORY_SERVER = require.resolve('@modelcontextprotocol/server-memory/dist/index.js')
const RESOURCES = fileURLToPath(new URL('../mcp/fixtures/resources-server.mjs', import.meta.url))
const running: Array<Gateway> = []
const clients: Array<Client> = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
  await Promise.all(running.splice(0).map((g) => g.close()))
})

const start = async (mcpServers: Record<string, unknown>, listWaitMs = 30_000) => {
  const records: Array<GatewayRecord> = []
  const config = decodeGatewayConfig({ mcpServers, listWaitMs })
  if (config._tag === 'Left') throw new Error(config.left)
  const gateway = await startGateway(config.right, (r) => void records.push(r))
  running.push(gateway)
  return { gateway, records }
}

/** A host session: a real SDK Client over an in-memory pair (or Streamable HTTP), with the notifications it got. */
const host = async (gateway: Gateway, url?: string) => {
  const client = new Client({ name: 'host', version: '1' })
  const updates: Array<string> = []
  const changed: Array<string> = []
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri))
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed.push('resources'))
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void changed.push('prompts'))
  if (url === undefined) {
    const [c, s] = InMemoryTransport.createLinkedPair()
    await gateway.newServer().connect(s)
    await client.connect(c)
  } else await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  clients.push(client)
  return { client, updates, changed }
}

/** A client straight to the upstream, to compare the gateway's answers with the upstream's own. */
const direct = async (script: string, args: ReadonlyArray<string>, env?: Record<string, string>) =>
  (await spawnServer({ script, args, ...(env === undefined ? {} : { env }) })).client

const rejection = async (p: Promise<unknown>): Promise<McpError> => {
  const e: unknown = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  if (!(e instanceof McpError)) throw new Error(`expected an McpError, got ${String(e)}`)
  return e
}

// the everything server's dynamic resources carry the time they were made
const untimed = (u: unknown): unknown => JSON.parse(JSON.stringify(u).replace(/at \d[^"]*"/g, 'at T"'))

describe('resources and prompts through the gateway', () => {
  it("serve the everything server's resources, templates and prompts as its own (prompts prefixed); filesystem, without any, adds none; memory adds its resource", async () => {
    const dir = tempDir()
    const memory = { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }
    const { gateway } = await start({
      ev: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      fs: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] },
      mem: { command: process.execPath, args: [MEMORY_SERVER], env: memory },
    })
    const { client } = await host(gateway)
    const ev = await direct(EVERYTHING_SERVER, ['stdio'])
    const mem = await direct(MEMORY_SERVER, [], memory)

    const own = [...(await ev.listResources()).resources, ...(await mem.listResources()).resources]
    expect(own.length).toBeGreaterThan(1)
    expect((await client.listResources()).resources).toEqual(own)
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual(
      (await ev.listResourceTemplates()).resourceTemplates,
    )
    const prompts = (await ev.listPrompts()).prompts
    expect((await client.listPrompts()).prompts).toEqual(prompts.map((p) => ({ ...p, name: `ev_${p.name}` })))

    const doc = own[0]?.uri ?? ''
    expect(await client.readResource({ uri: doc })).toEqual(await ev.readResource({ uri: doc }))
    expect(await client.readResource({ uri: 'memory://knowledge-graph' })).toEqual(
      await mem.readResource({ uri: 'memory://knowledge-graph' }),
    )
    // a URI no listing holds, matched by the everything server's template
    const dynamic = 'demo://resource/dynamic/text/7'
    expect(untimed(await client.readResource({ uri: dynamic }))).toEqual(
      untimed(await ev.readResource({ uri: dynamic })),
    )
    expect(await client.getPrompt({ name: 'ev_simple-prompt' })).toEqual(await ev.getPrompt({ name: 'simple-prompt' }))
    const args = { city: 'Lyon', state: 'Rhône' }
    expect(await client.getPrompt({ name: 'ev_args-prompt', arguments: args })).toEqual(
      await ev.getPrompt({ name: 'args-prompt', arguments: args }),
    )
  })

  it('an unknown URI or prompt is a clear JSON-RPC error, the name escaped and cut; an upstream refusing a prompt is named', async () => {
    const { gateway } = await start({ ev: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } })
    const { client } = await host(gateway)
    const unknown = await rejection(client.readResource({ uri: 'nowhere://x\u001b]0;hi' }))
    expect(unknown.code).toBe(-32602)
    expect(unknown.message).toMatch(/^MCP error -32602: there is no resource "nowhere:\/\/x\\u001b]0;hi": no upstream/)
    const long = await rejection(client.readResource({ uri: `nowhere://${'a'.repeat(5000)}` }))
    expect(long.message.length).toBeLessThan(400)
    expect(long.message).toContain('…')
    const prompt = await rejection(client.getPrompt({ name: 'web_search' }))
    expect(prompt.code).toBe(-32602)
    expect(prompt.message).toBe('MCP error -32602: there is no prompt named "web_search"')
    const refused = await rejection(client.getPrompt({ name: 'ev_no-such-prompt' }))
    expect(refused.message).toMatch(
      /^MCP error -32602: the upstream MCP server "ev" failed: "Prompt no-such-prompt not found"$/,
    )
  })

  it('a URI two upstreams list is served and read from the first in config order; the other copy is hidden and said once', async () => {
    const same = 'shared://doc'
    const { gateway, records } = await start({
      b: { command: process.execPath, args: [RESOURCES, 'b', same, 'b://own'] },
      a: { command: process.execPath, args: [RESOURCES, 'a', 'a://own', same] },
    })
    const { client } = await host(gateway)
    for (let i = 0; i < 2; i++)
      expect((await client.listResources()).resources.map((r) => [r.uri, r.name])).toEqual([
        [same, `b ${same}`],
        ['b://own', 'b b://own'],
        ['a://own', 'a a://own'],
      ])
    expect(await client.readResource({ uri: same })).toMatchObject({ contents: [{ text: `b: ${same}` }] })
    expect(await client.readResource({ uri: 'a://own' })).toMatchObject({ contents: [{ text: 'a: a://own' }] })
    // templates route a URI no listing holds
    expect(await client.readResource({ uri: 'a://item/9' })).toMatchObject({ contents: [{ text: 'a: a://item/9' }] })
    const said = records.filter((r) => r.type === 'diagnostic')
    expect(said).toEqual([
      {
        type: 'diagnostic',
        message:
          'the resource "shared://doc" of the upstream MCP server "a" is hidden: "b" lists the same one and comes first in the configuration',
      },
    ])
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['b_hello', 'a_hello'])
    expect(await client.getPrompt({ name: 'a_hello', arguments: { who: 'me' } })).toMatchObject({
      messages: [{ content: { text: 'a says hello to me' } }],
    })
  })

  it("an update reaches the sessions subscribed to its URI, not another; the upstream is subscribed while any session is, and unsubscribed after the last one's close", async () => {
    const { gateway } = await start({
      ev: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      r: { command: process.execPath, args: [RESOURCES, 'r', 'r://one', 'r://two'] },
    })
    const a = await host(gateway)
    const b = await host(gateway)
    const c = await host(gateway)
    const subscribed = async (): Promise<unknown> => {
      const out = await c.client.callTool({ name: 'r_subscribed', arguments: {} })
      return JSON.parse((out.content as Array<{ text: string }>)[0]?.text ?? '')
    }
    await a.client.subscribeResource({ uri: 'r://one' })
    await b.client.subscribeResource({ uri: 'r://one' })
    await b.client.subscribeResource({ uri: 'r://two' })
    expect(await subscribed()).toEqual(['r://one', 'r://two'])
    await c.client.callTool({ name: 'r_touch', arguments: { uri: 'r://one' } })
    await c.client.callTool({ name: 'r_touch', arguments: { uri: 'r://two' } })
    // an update for a URI no session holds goes nowhere
    await c.client.callTool({ name: 'r_touch', arguments: { uri: 'r://three' } })
    await until(() => a.updates.length === 1 && b.updates.length === 2)
    await b.client.unsubscribeResource({ uri: 'r://two' })
    expect(await subscribed()).toEqual(['r://one'])
    await c.client.callTool({ name: 'r_touch', arguments: { uri: 'r://two' } })
    await a.client.close()
    expect(await subscribed()).toEqual(['r://one'])
    await b.client.close()
    // the upstream is unsubscribed after the close, without waiting for it
    for (let i = 0; i < 100 && JSON.stringify(await subscribed()) !== '[]'; i++)
      await new Promise((r) => setTimeout(r, 20))
    expect(await subscribed()).toEqual([])
    expect(a.updates).toEqual(['r://one'])
    expect(b.updates).toEqual(['r://one', 'r://two'])
    expect(c.updates).toEqual([])

    // the everything server's own updates: sent at once when its tool turns them on
    const doc = (await c.client.listResources()).resources[0]?.uri ?? ''
    const d = await host(gateway)
    await d.client.subscribeResource({ uri: doc })
    await c.client.callTool({ name: 'ev_toggle-subscriber-updates', arguments: {} })
    await until(() => d.updates.length > 0)
    expect(d.updates[0]).toBe(doc)
    expect(c.updates).toEqual([])
  })

  it('an upstream that is down: its resources and prompts are absent, the hosts are told, a read or get routed to it names it', async () => {
    const dir = tempDir()
    const { gateway } = await start({
      ev: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
      once: { command: process.execPath, args: [RESOURCES, 'once', '--once', join(dir, 'marker'), 'once://doc'] },
    })
    const { client, changed } = await host(gateway)
    const before = (await client.listResources()).resources.map((r) => r.uri)
    expect(before).toContain('once://doc')
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('once_hello')
    const upstream = gateway.upstreams[1]
    process.kill(upstream?.pid() ?? 0)
    await until(() => upstream?.isUp() === false)
    await until(() => changed.includes('resources') && changed.includes('prompts'))
    const after = (await client.listResources()).resources.map((r) => r.uri)
    expect(after).toEqual(before.filter((u) => u !== 'once://doc'))
    expect((await client.listPrompts()).prompts.map((p) => p.name)).not.toContain('once_hello')
    const read = await rejection(client.readResource({ uri: 'once://doc' }))
    expect(read.message).toMatch(
      /the upstream MCP server "once" is not running; the resource "once:\/\/doc" was not read/,
    )
    const got = await rejection(client.getPrompt({ name: 'once_hello' }))
    expect(got.message).toMatch(
      /the upstream MCP server "once" is not running; the prompt "once_hello" was not fetched/,
    )
    // the other upstream still answers
    expect(await client.readResource({ uri: before[0] ?? '' })).toMatchObject({ contents: [{ uri: before[0] }] })
  })

  it('a URI keeps its owner while the owner is down: neither a later copy nor a catch-all template of another upstream answers for it; a reload moves it', async () => {
    const dir = tempDir()
    const servers = {
      owner: {
        command: process.execPath,
        args: [RESOURCES, 'owner', '--once', join(dir, 'marker'), 'owned://doc'],
      },
      thief: { command: process.execPath, args: [RESOURCES, 'thief', '--template', '{+any}', 'owned://doc'] },
    }
    const { gateway } = await start(servers)
    const { client } = await host(gateway)
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual(['owner owned://doc'])
    expect(await client.readResource({ uri: 'owned://doc' })).toMatchObject({
      contents: [{ text: 'owner: owned://doc' }],
    })
    expect(await client.readResource({ uri: 'owner://item/1' })).toMatchObject({
      contents: [{ text: 'owner: owner://item/1' }],
    })
    // the owner goes down, and stays down (--once)
    const owner = gateway.upstreams[0]
    process.kill(owner?.pid() ?? 0)
    await until(() => owner?.isUp() === false)
    // its URI, and one its template matches, name it: the other upstream's copy and catch-all answer neither
    for (const uri of ['owned://doc', 'owner://item/1'])
      expect((await rejection(client.readResource({ uri }))).message).toContain(
        'the upstream MCP server "owner" is not running',
      )
    expect((await client.listResources()).resources.map((r) => r.name)).toEqual([])
    // what no upstream owns still goes to the catch-all
    expect(await client.readResource({ uri: 'elsewhere://x' })).toMatchObject({
      contents: [{ text: 'thief: elsewhere://x' }],
    })
    // a reload without the owner moves its URI
    const next = decodeGatewayConfig({ mcpServers: { thief: servers.thief }, listWaitMs: 30_000 })
    if (next._tag === 'Left') throw new Error(next.left)
    await gateway.reload(next.right)
    expect(await client.readResource({ uri: 'owned://doc' })).toMatchObject({
      contents: [{ text: 'thief: owned://doc' }],
    })
  })

  it("an upstream's list_changed reaches every host; a restarted upstream is subscribed again, and its updates still arrive", async () => {
    const { gateway } = await start({ r: { command: process.execPath, args: [RESOURCES, 'r', 'r://one'] } })
    const a = await host(gateway)
    const b = await host(gateway)
    await a.client.subscribeResource({ uri: 'r://one' })
    await b.client.callTool({ name: 'r_change', arguments: {} })
    await until(() => [a, b].every((h) => h.changed.includes('resources') && h.changed.includes('prompts')))
    const upstream = gateway.upstreams[0]
    const pid = upstream?.pid()
    process.kill(pid ?? 0)
    await until(() => upstream?.isUp() === true && upstream.pid() !== pid)
    const out = await b.client.callTool({ name: 'r_subscribed', arguments: {} })
    expect(out.content).toEqual([{ type: 'text', text: '["r://one"]' }])
    await b.client.callTool({ name: 'r_touch', arguments: { uri: 'r://one' } })
    await until(() => a.updates.length === 1)
    expect(b.updates).toEqual([])
  })

  it("a reload serves the new upstreams' resources and prompts; a session's subscription on a kept upstream is kept, and its updates still arrive", async () => {
    const r = { command: process.execPath, args: [RESOURCES, 'r', 'r://one'] }
    const { gateway } = await start({ r })
    const a = await host(gateway)
    await a.client.subscribeResource({ uri: 'r://one' })
    const pid = gateway.upstreams[0]?.pid()
    const next = decodeGatewayConfig({
      mcpServers: { r, s: { command: process.execPath, args: [RESOURCES, 's', 's://two'] } },
      listWaitMs: 30_000,
    })
    if (next._tag === 'Left') throw new Error(next.left)
    await gateway.reload(next.right)
    expect(gateway.upstreams.find((u) => u.name === 'r')?.pid()).toBe(pid)
    await until(() => a.changed.includes('resources') && a.changed.includes('prompts'))
    expect((await a.client.listResources()).resources.map((x) => x.uri)).toEqual(['r://one', 's://two'])
    expect((await a.client.listPrompts()).prompts.map((x) => x.name)).toEqual(['r_hello', 's_hello'])
    expect((await a.client.readResource({ uri: 's://two' })).contents).toEqual([
      { uri: 's://two', mimeType: 'text/plain', text: 's: s://two' },
    ])
    const out = await a.client.callTool({ name: 'r_subscribed', arguments: {} })
    expect(out.content).toEqual([{ type: 'text', text: '["r://one"]' }])
    await a.client.callTool({ name: 'r_touch', arguments: { uri: 'r://one' } })
    await until(() => a.updates.length === 1)
    expect(a.updates).toEqual(['r://one'])
  })

  it('a slow upstream holds no listing back: served as it listed last (absent the first time), and the hosts told when its listing arrives', async () => {
    const { gateway } = await start(
      {
        r: { command: process.execPath, args: [RESOURCES, 'r', 'r://one'] },
        slow: { command: process.execPath, args: [RESOURCES, 'slow', '--slow', '1500', 'slow://one'] },
      },
      400,
    )
    await until(() => gateway.upstreams.every((u) => u.isUp()))
    const { client, changed } = await host(gateway)
    const t0 = Date.now()
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['r://one'])
    expect(Date.now() - t0).toBeLessThan(1200)
    await until(() => changed.includes('resources'))
    const t1 = Date.now()
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['r://one', 'slow://one'])
    expect(Date.now() - t1).toBeLessThan(1200)
  })

  it('over Streamable HTTP: each session its own subscriptions; an update reaches the subscribed session only', async () => {
    const { gateway } = await start({ r: { command: process.execPath, args: [RESOURCES, 'r', 'r://one'] } })
    const serving = await serveHttp(gateway.newServer, { port: 0 })
    try {
      const a = await host(gateway, serving.url)
      const b = await host(gateway, serving.url)
      expect((await b.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['r_hello'])
      expect(await b.client.readResource({ uri: 'r://one' })).toMatchObject({ contents: [{ text: 'r: r://one' }] })
      await a.client.subscribeResource({ uri: 'r://one' })
      await b.client.callTool({ name: 'r_touch', arguments: { uri: 'r://one' } })
      await until(() => a.updates.length === 1)
      await b.client.callTool({ name: 'r_touch', arguments: { uri: 'r://one' } })
      await until(() => a.updates.length === 2)
      expect(b.updates).toEqual([])
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()))
      await serving.close()
    }
  })
})
