// The gateway with a store, over real upstream servers (the reference filesystem server and an echo server),
// served to real SDK Clients in process: grants shared by every session and across gateways on one file, each
// pair said once, counts in the store, list_changed when grants from elsewhere change a listing.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Gateway, GatewayRecord } from '../../src/gateway/index.js'
import { decodeGatewayConfig, decodeStoreFile, encodeStoreFile, startGateway } from '../../src/gateway/index.js'
import { FILESYSTEM_SERVER, cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'
import { until } from '../support/until.js'

cleanUpAfterEach()
const ECHO = fileURLToPath(new URL('../mcp/fixtures/flaky-server.mjs', import.meta.url))
const running: Array<Gateway> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((g) => g.close()))
})

const configOf = (dir: string, extra: Record<string, unknown> = {}) => {
  const config = decodeGatewayConfig({
    mcpServers: {
      fs: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] },
      echo: { command: process.execPath, args: [ECHO], prefix: 'ec' },
    },
    rules: [
      { tool: 'fs_read_text_file', decision: 'allow' },
      { tool: 'ec_*', decision: 'allow' },
    ],
    listWaitMs: 30_000,
    ...extra,
  })
  if (config._tag === 'Left') throw new Error(config.left)
  return config.right
}

const start = async (dir: string, extra: Record<string, unknown> = {}) => {
  const records: Array<GatewayRecord> = []
  const gateway = await startGateway(configOf(dir, extra), (r) => void records.push(r))
  running.push(gateway)
  return { gateway, records }
}

// a host whose human answers each question with the next of `answers` (then declines), counting questions
const host = async (gateway: Gateway, answers: Array<string> = []) => {
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  const asked: Array<string> = []
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message)
    const action = answers.shift()
    return (action === undefined ? { action: 'decline' } : { action: 'accept', content: { action } }) as never
  })
  let changed = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++)
  const [c, s] = InMemoryTransport.createLinkedPair()
  await gateway.newServer().connect(s)
  await client.connect(c)
  return { client, asked, changed: () => changed }
}

const write = (client: Client, path: string) =>
  client.callTool({ name: 'fs_write_file', arguments: { path, content: 'x' } })

const warningsOf = (records: ReadonlyArray<GatewayRecord>) =>
  records.flatMap((r) => (r.type === 'warning' ? [[r.tool, ...r.unknownKeys]] : []))

describe('the gateway with a store', () => {
  it('memory: an "always" in one session is used by another without a question; without a store each session asks', async () => {
    const dir = tempDir()
    for (const store of [undefined, 'memory']) {
      const { gateway } = await start(dir, store === undefined ? {} : { store })
      const a = await host(gateway, ['always-allow'])
      const b = await host(gateway, ['always-allow'])
      expect((await write(a.client, join(dir, 'a.txt'))).isError).toBeFalsy()
      expect((await write(b.client, join(dir, 'b.txt'))).isError).toBeFalsy()
      expect([a.asked.length, b.asked.length]).toEqual(store === undefined ? [1, 1] : [1, 0])
    }
  })

  it('memory: an "always deny" in one session hides the tool from another, which is told list_changed', async () => {
    const dir = tempDir()
    // ec_ping is asked about; a call with no location is remembered for the tool, a deny that hides it
    const { gateway } = await start(dir, { store: 'memory', rules: [{ tool: 'fs_read_text_file', decision: 'allow' }] })
    const a = await host(gateway, ['always-deny'])
    const b = await host(gateway)
    const ping = (client: Client) => client.callTool({ name: 'ec_ping', arguments: {} })
    await a.client.listTools()
    expect((await b.client.listTools()).tools.map((t) => t.name)).toContain('ec_ping')
    expect((await ping(a.client)).isError).toBe(true)
    await until(() => b.changed() === 1)
    expect((await b.client.listTools()).tools.map((t) => t.name)).not.toContain('ec_ping')
    expect((await ping(b.client)).isError).toBe(true)
    expect(b.asked).toHaveLength(0)
  })

  it('memory: each (tool, key) pair is said once across sessions (once per session without a store); calls carrying it are counted in stats', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes.txt'), 'one\n')
    const read = (client: Client) =>
      client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: 1 } })
    for (const store of [undefined, 'memory']) {
      const { gateway, records } = await start(dir, store === undefined ? {} : { store })
      const a = await host(gateway)
      const b = await host(gateway)
      await a.client.listTools()
      await b.client.listTools()
      const statsReach = async (calls: number): Promise<void> => {
        // counts reach the store after the calls, off their path, a session's at most once a second; waited for,
        // failing only past a bound a loaded machine stays well inside
        const counted = JSON.stringify([{ tool: 'fs_read_text_file', key: 'haed', calls }])
        const end = Date.now() + 30_000
        while (JSON.stringify(await gateway.stats()) !== counted && Date.now() < end)
          await new Promise((r) => setTimeout(r, 20))
      }
      await read(a.client)
      // the first count sent before the repeats: a repeated pair is counted in place, and must still be sent
      if (store !== undefined) await statsReach(1)
      await read(a.client)
      await read(b.client)
      if (store === undefined) {
        await until(() => warningsOf(records).length === 2)
        expect(await gateway.stats()).toEqual([])
      } else {
        await until(() => warningsOf(records).length === 1)
        await statsReach(3)
        expect(await gateway.stats()).toEqual([{ tool: 'fs_read_text_file', key: 'haed', calls: 3 }])
        expect(warningsOf(records)).toEqual([['fs_read_text_file', 'haed']])
      }
    }
  })

  it('file: a grant answered through one gateway is used by another on the same file, and survives a restart', async () => {
    const dir = tempDir()
    const store = `file:${join(dir, 'grants.json')}`
    const one = await start(dir, { store })
    const two = await start(dir, { store })
    const a = await host(one.gateway, ['always-allow'])
    const b = await host(two.gateway)
    expect((await write(a.client, join(dir, 'a.txt'))).isError).toBeFalsy()
    await until(() => {
      try {
        return readFileSync(join(dir, 'grants.json'), 'utf8').includes('fs_write_file')
      } catch {
        return false
      }
    })
    await new Promise((r) => setTimeout(r, 150))
    expect((await write(b.client, join(dir, 'b.txt'))).isError).toBeFalsy()
    expect(b.asked).toHaveLength(0)
    await one.gateway.close()
    await two.gateway.close()
    const three = await start(dir, { store })
    const c = await host(three.gateway)
    expect((await write(c.client, join(dir, 'c.txt'))).isError).toBeFalsy()
    expect(c.asked).toHaveLength(0)
    const kept = decodeStoreFile(readFileSync(join(dir, 'grants.json'), 'utf8'))
    if (kept._tag === 'Left') throw new Error(kept.left)
    // the grant keeps the definition it was given under, and the file keeps the pins
    const pinned = kept.right.pins?.find((p) => p.tool === 'fs_write_file')?.hash
    expect(pinned).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(kept.right.grants).toEqual([{ tool: 'fs_write_file', decision: 'allow', under: dir, definition: pinned }])
    expect(kept.right.revoked).toEqual([])
  })

  it('file: a deny written by another gateway hides the tool: a session it changes is told list_changed, one it does not change is not', async () => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const { gateway } = await start(dir, { store: `file:${file}` })
    const a = await host(gateway)
    const listed = await a.client.listTools()
    expect(listed.tools.map((t) => t.name)).toContain('ec_ping')
    // another gateway (here, a person) writes the file
    writeFileSync(file, encodeStoreFile([{ tool: 'ec_ping', decision: 'deny' }]))
    await until(() => a.changed() === 1)
    expect((await a.client.listTools()).tools.map((t) => t.name)).not.toContain('ec_ping')
    // a second grant that hides nothing changes no listing
    writeFileSync(
      file,
      encodeStoreFile([
        { tool: 'ec_ping', decision: 'deny' },
        { tool: 'fs_write_file', decision: 'allow' },
      ]),
    )
    await new Promise((r) => setTimeout(r, 300))
    expect(a.changed()).toBe(1)
  })

  it('the store member is checked; a reload naming another store keeps the running one and says so; a store that cannot be opened starts nothing', async () => {
    expect(decodeGatewayConfig({ mcpServers: { x: { command: 'x' } }, store: 'sqlite:x' })).toEqual({
      _tag: 'Left',
      left: 'store must be a store: "memory", "file:PATH", or "redis://HOST:PORT" ("rediss://" with TLS), got the string "sqlite:x"',
    })
    const dir = tempDir()
    const { gateway, records } = await start(dir, { store: 'memory' })
    const a = await host(gateway, ['always-allow'])
    await write(a.client, join(dir, 'a.txt'))
    await gateway.reload(configOf(dir, { store: `file:${join(dir, 'g.json')}` }))
    expect(records.filter((r) => r.type === 'diagnostic').map((r) => r.type === 'diagnostic' && r.message)).toEqual([
      'toolstack serve: the configuration names another store; the store opened at start is kept until the gateway restarts',
    ])
    const b = await host(gateway)
    expect((await write(b.client, join(dir, 'b.txt'))).isError).toBeFalsy()
    expect(b.asked).toHaveLength(0)
    writeFileSync(join(dir, 'bad.json'), '{"version":1,')
    await expect(
      startGateway(configOf(dir, { store: `file:${join(dir, 'bad.json')}` }), () => undefined),
    ).rejects.toThrow(`the store ${JSON.stringify(join(dir, 'bad.json'))} cannot be read`)
  })
})

describe('the gateway: taking a grant back', () => {
  it('without a store: each session holds its own; taken back by id, every session that held it is asked again, and a diagnostic says so', async () => {
    const dir = tempDir()
    const { gateway, records } = await start(dir, { rules: [{ tool: 'fs_write_file', decision: 'ask', under: dir }] })
    const a = await host(gateway, ['always-allow', 'allow-once'])
    const b = await host(gateway, ['always-allow'])
    await write(a.client, join(dir, 'a.txt'))
    await write(b.client, join(dir, 'b.txt'))
    const held = gateway.grants()
    expect(held).toEqual([
      {
        // the grant names the definition it was given under (issue 40)
        rule: {
          tool: 'fs_write_file',
          decision: 'allow',
          under: dir,
          definition: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        },
        id: expect.stringMatching(/^[0-9a-f]{16}$/),
        sessions: 2,
        stored: false,
      },
    ])
    expect(gateway.revokeGrant('0000000000000000', 'a test')).toBeUndefined()
    expect(gateway.revokeGrant(held[0]?.id ?? '', 'a test')).toEqual({
      tool: 'fs_write_file',
      decision: 'allow',
      under: dir,
      definition: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    })
    expect(gateway.grants()).toEqual([])
    await write(a.client, join(dir, 'a2.txt'))
    expect(a.asked).toHaveLength(2)
    expect((await write(b.client, join(dir, 'b2.txt'))).isError).toBe(true)
    expect(b.asked).toHaveLength(2)
    expect(records).toContainEqual({
      type: 'diagnostic',
      message: `toolstack serve: a grant was taken back (a test): allow "fs_write_file" under ${dir}`,
    })
  })

  it('file: taken back through one gateway, it leaves the file and the sessions of another gateway on it; a deny taken back shows the tool again', async () => {
    const dir = tempDir()
    const store = `file:${join(dir, 'grants.json')}`
    const rules = [{ tool: 'fs_read_text_file', decision: 'allow' }]
    const one = await start(dir, { store, rules })
    const two = await start(dir, { store, rules })
    const a = await host(one.gateway, ['always-deny'])
    const b = await host(two.gateway, ['allow-once'])
    await a.client.callTool({ name: 'ec_ping', arguments: {} })
    await b.client.listTools()
    await until(() => two.gateway.grants().length === 1, 10_000)
    expect((await b.client.listTools()).tools.map((t) => t.name)).not.toContain('ec_ping')
    const id = one.gateway.grants()[0]?.id ?? ''
    expect(one.gateway.revokeGrant(id, 'the page')).toEqual({
      tool: 'ec_ping',
      decision: 'deny',
      definition: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    })
    await until(() => two.gateway.grants().length === 0, 10_000)
    await until(() => b.changed() >= 2, 10_000)
    expect((await b.client.listTools()).tools.map((t) => t.name)).toContain('ec_ping')
    expect((await b.client.callTool({ name: 'ec_ping', arguments: {} })).isError).toBeFalsy()
    expect(b.asked).toHaveLength(1)
    const file = decodeStoreFile(readFileSync(join(dir, 'grants.json'), 'utf8'))
    expect(file).toMatchObject({
      _tag: 'Right',
      right: { grants: [], revoked: [{ tool: 'ec_ping', decision: 'deny' }] },
    })
  })
})
