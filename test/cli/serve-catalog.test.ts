// `toolstack serve` as a host runs it, for resources and prompts: the built command over stdio, the
// everything server upstream, a real SDK Client.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('toolstack serve: resources and prompts over stdio', () => {
  it("lists and reads the everything server's resources, gets its prompts under the prefix, and forwards an update to the subscribed host", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolstack-serve-catalog-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
    const file = join(dir, 'toolstack.json')
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
        listWaitMs: 30_000,
      }),
    )
    const client = new Client({ name: 'host', version: '1' })
    const updates: Array<string> = []
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri))
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [main, 'serve', '--config', file],
        stderr: 'ignore',
      }),
    )
    cleanups.push(() => client.close())
    expect(client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
    })
    const { resources } = await client.listResources()
    const doc = resources[0]?.uri ?? ''
    expect(doc).toMatch(/^demo:\/\/resource\/static\/document\//)
    expect(await client.readResource({ uri: doc })).toMatchObject({ contents: [{ uri: doc }] })
    const { prompts } = await client.listPrompts()
    expect(prompts.map((p) => p.name)).toContain('ev_simple-prompt')
    expect(await client.getPrompt({ name: 'ev_simple-prompt' })).toMatchObject({ messages: [{ role: 'user' }] })
    await client.subscribeResource({ uri: doc })
    await client.callTool({ name: 'ev_toggle-subscriber-updates', arguments: {} })
    const end = Date.now() + 15_000
    while (updates.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 25))
    expect(updates[0]).toBe(doc)
  })
})
