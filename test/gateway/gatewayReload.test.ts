// Gateway.reload in process: real upstream processes (the whoami fixture, which says its pid and argv) and a
// real SDK Client connected to the gateway in memory, kept connected across reloads.
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Gateway, GatewayConfig, GatewayRecord } from '../../src/gateway/index.js'
import { decodeGatewayConfig, startGateway } from '../../src/gateway/index.js'
import { cleanUpAfterEach, isAlive } from '../mcp/fixtures.js'
import { until } from '../support/until.js'

cleanUpAfterEach()
const WHOAMI = fileURLToPath(new URL('../mcp/fixtures/whoami-server.mjs', import.meta.url))
const running: Array<Gateway> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((g) => g.close()))
})

const whoami = (...args: ReadonlyArray<string>) => ({ command: process.execPath, args: [WHOAMI, ...args] })
const read = (u: Record<string, unknown>): GatewayConfig => {
  const c = decodeGatewayConfig({ listWaitMs: 30_000, ...u })
  if (c._tag === 'Left') throw new Error(c.left)
  return c.right
}
const TWO = { mcpServers: { a: whoami('one'), b: whoami('two') }, rules: [{ tool: '*', decision: 'allow' }] }

const start = async (config: GatewayConfig) => {
  const records: Array<GatewayRecord> = []
  const gateway = await startGateway(config, (r) => void records.push(r))
  running.push(gateway)
  return { gateway, records }
}

const host = async (gateway: Gateway, elicit?: () => unknown) => {
  const client = new Client(
    { name: 'host', version: '1' },
    elicit === undefined ? {} : { capabilities: { elicitation: {} } },
  )
  if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, () => elicit() as never)
  let changes = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++)
  const [c, s] = InMemoryTransport.createLinkedPair()
  await gateway.newServer().connect(s)
  await client.connect(c)
  return { client, changes: () => changes }
}

const pids = (gateway: Gateway): Record<string, number | undefined> =>
  Object.fromEntries(gateway.upstreams.map((u) => [u.name, u.pid()]))

const said = (r: Record<string, unknown>): { argv: Array<string>; pid: number } =>
  JSON.parse((r['content'] as Array<{ text: string }>)[0]?.text ?? 'null') as { argv: Array<string>; pid: number }

describe('Gateway.reload', () => {
  it('restarts only the upstream whose args changed; the host keeps its session, hears list_changed, and calls the new one', async () => {
    const { gateway, records } = await start(read(TWO))
    const { client, changes } = await host(gateway)
    await client.listTools()
    const before = pids(gateway)
    const change = await gateway.reload(read({ ...TWO, mcpServers: { a: whoami('one'), b: whoami('three') } }))
    expect(change).toMatchObject({ restarted: ['b'], kept: ['a'], added: [], removed: [], listChanged: true })
    const after = pids(gateway)
    expect(after['a']).toBe(before['a'])
    expect(after['b']).not.toBe(before['b'])
    expect(isAlive(before['b'] as number)).toBe(false)
    await until(() => changes() > 0)
    const b = said(await client.callTool({ name: 'b_whoami', arguments: { reason: 'who' } }))
    expect(b).toMatchObject({ argv: ['three'], pid: after['b'] })
    expect(records).toContainEqual(expect.objectContaining({ type: 'reload', outcome: 'reloaded', restarted: ['b'] }))
  })

  it('a rules change turns an allowed call into a refused one in the same session, without restarting anything', async () => {
    const { gateway } = await start(read(TWO))
    const { client } = await host(gateway)
    const ok = await client.callTool({ name: 'a_whoami', arguments: { reason: 'who' } })
    expect(ok['isError']).toBeFalsy()
    const before = pids(gateway)
    const change = await gateway.reload(
      read({
        ...TWO,
        rules: [
          { tool: 'a_*', decision: 'deny', note: 'not a' },
          { tool: '*', decision: 'allow' },
        ],
      }),
    )
    expect(change).toMatchObject({ settings: ['rules'], kept: ['a', 'b'], listChanged: false })
    expect(pids(gateway)).toEqual(before)
    const refused = await client.callTool({ name: 'a_whoami', arguments: { reason: 'who' } })
    expect(refused['isError']).toBe(true)
    expect(JSON.stringify(refused['content'])).toContain('not a')
    expect((await client.callTool({ name: 'b_whoami', arguments: { reason: 'who' } }))['isError']).toBeFalsy()
  })

  it('starts an added upstream and stops a removed one; the listing follows, and the removed tools are unknown', async () => {
    const { gateway } = await start(read(TWO))
    const { client, changes } = await host(gateway)
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['a_whoami', 'b_whoami'])
    const gone = pids(gateway)['a'] as number
    const change = await gateway.reload(read({ ...TWO, mcpServers: { b: whoami('two'), c: whoami('new') } }))
    expect(change).toMatchObject({ added: ['c'], removed: ['a'], kept: ['b'] })
    expect(isAlive(gone)).toBe(false)
    expect(gateway.upstreams.map((u) => u.name)).toEqual(['b', 'c'])
    await until(() => changes() > 0)
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['b_whoami', 'c_whoami'])
    expect(said(await client.callTool({ name: 'c_whoami', arguments: { reason: 'who' } })).argv).toEqual(['new'])
    // a tool no longer listed is a JSON-RPC error, as MCP has it
    await expect(client.callTool({ name: 'a_whoami', arguments: { reason: 'who' } })).rejects.toThrow(
      'there is no tool named "a_whoami"',
    )
    expect(gateway.readiness()['upstreams']).toEqual([
      expect.objectContaining({ name: 'b' }),
      expect.objectContaining({ name: 'c' }),
    ])
  })

  it('a new prefix or curation keeps the process, tells the host, and routes by the new names', async () => {
    const { gateway } = await start(read(TWO))
    const { client, changes } = await host(gateway)
    await client.listTools()
    const before = pids(gateway)
    const change = await gateway.reload(
      read({
        ...TWO,
        mcpServers: { a: { ...whoami('one'), prefix: 'alpha' }, b: { ...whoami('two'), tools: { exclude: ['*'] } } },
      }),
    )
    expect(change).toMatchObject({ changed: ['a', 'b'], restarted: [], listChanged: true })
    expect(pids(gateway)).toEqual(before)
    await until(() => changes() > 0)
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['alpha_whoami'])
    expect(said(await client.callTool({ name: 'alpha_whoami', arguments: { reason: 'who' } })).pid).toBe(before['a'])
    await expect(client.callTool({ name: 'b_whoami', arguments: { reason: 'who' } })).rejects.toThrow(
      'there is no tool named "b_whoami"',
    )
  })

  it('keeps a session\'s "always" answers across a reload', async () => {
    const ask = { ...TWO, rules: [{ tool: '*', decision: 'ask' }] }
    const { gateway } = await start(read(ask))
    let asked = 0
    const { client } = await host(gateway, () => {
      asked++
      return { action: 'accept', content: { action: 'always-allow' } }
    })
    expect((await client.callTool({ name: 'a_whoami', arguments: { reason: 'who' } }))['isError']).toBeFalsy()
    expect(asked).toBe(1)
    await gateway.reload(read({ ...ask, tolerate: ['x'] }))
    expect((await client.callTool({ name: 'a_whoami', arguments: { reason: 'who' } }))['isError']).toBeFalsy()
    expect(asked).toBe(1)
  })

  it('two reloads at once run one after the other: the last one is what runs', async () => {
    const { gateway, records } = await start(read(TWO))
    const a = pids(gateway)['a']
    const [first, second] = await Promise.all([
      gateway.reload(read({ ...TWO, mcpServers: { a: whoami('one'), b: whoami('2') } })),
      gateway.reload(read({ ...TWO, mcpServers: { a: whoami('one'), c: whoami('3') } })),
    ])
    expect(first).toMatchObject({ restarted: ['b'] })
    expect(second).toMatchObject({ added: ['c'], removed: ['b'], kept: ['a'] })
    expect(gateway.upstreams.map((u) => u.name)).toEqual(['a', 'c'])
    expect(pids(gateway)['a']).toBe(a)
    // no b is left running: neither the first nor the one the first reload started
    const bs = records.flatMap((r) =>
      r.type === 'upstream' && r._tag === 'Started' && r.upstream === 'b' ? [r.pid] : [],
    )
    expect(bs).toHaveLength(2)
    await until(() => bs.every((pid) => !isAlive(pid as number)))
  })

  it('an added upstream that never answers holds the reload back by listWaitMs at most', async () => {
    const STORM = fileURLToPath(new URL('../mcp/fixtures/storm-server.mjs', import.meta.url))
    const { gateway } = await start(read(TWO))
    const t0 = Date.now()
    const change = await gateway.reload(
      read({
        ...TWO,
        mcpServers: { ...TWO.mcpServers, stuck: { command: process.execPath, args: [STORM, 'hang'] } },
        listWaitMs: 300,
      }),
    )
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(change).toMatchObject({ added: ['stuck'], kept: ['a', 'b'], settings: ['listWaitMs'] })
    expect(gateway.readiness()).toMatchObject({ ready: false })
  })

  it('nothing changed: nothing restarted, and a reload after close is refused', async () => {
    const { gateway } = await start(read(TWO))
    const before = pids(gateway)
    expect(await gateway.reload(read(TWO))).toMatchObject({ kept: ['a', 'b'], listChanged: false, settings: [] })
    expect(pids(gateway)).toEqual(before)
    await gateway.close()
    await expect(gateway.reload(read(TWO))).rejects.toThrow('closed')
    expect(Object.values(before).every((pid) => !isAlive(pid as number))).toBe(true)
  })
})
