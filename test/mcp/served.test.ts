// serveCatalog and catalogCapabilities in process: an SDK Server serving a catalog of the test's (resources,
// templates, prompts, completions) to an SDK Client over a linked in-memory pair. The gateway's own tests reach
// this module only through processes they start, where no mutant lives.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { ServedCompletions, ServedPrompts, ServedResources } from '../../src/mcp/served.js'
import { catalogCapabilities, serveCatalog } from '../../src/mcp/served.js'

interface Served {
  readonly client: Client
  readonly server: Server
  readonly said: Array<string>
}

const open: Array<Served> = []
afterEach(async () => {
  for (const s of open.splice(0)) await s.client.close()
})

// a server over the options, a client linked to it; `said` holds every notification the client heard, in order
const serve = async (options: Parameters<typeof serveCatalog>[1]): Promise<Served> => {
  const server = new Server({ name: 'catalog', version: '1.0.0' }, { capabilities: catalogCapabilities(options) })
  serveCatalog(server, options)
  const client = new Client({ name: 'host', version: '1.0.0' })
  const said: Array<string> = []
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void said.push(`updated ${n.params.uri}`))
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void said.push('resources changed'))
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void said.push('prompts changed'))
  const [c, s] = InMemoryTransport.createLinkedPair()
  await server.connect(s)
  await client.connect(c)
  const served = { client, server, said }
  open.push(served)
  return served
}

// resolves once `said` holds `n` notifications
const heard = async (said: ReadonlyArray<string>, n: number): Promise<void> => {
  while (said.length < n) await new Promise((r) => setTimeout(r, 5))
}

// a catalog of resources that records what it was asked
const resourcesOf = () => {
  const asked: Array<string> = []
  const listeners: Array<() => void> = []
  let updated: ((uri: string) => void) | undefined
  const resources: ServedResources = {
    list: () => Promise.resolve([{ uri: 'file:///a.txt', name: 'a' }]),
    listTemplates: () => Promise.resolve([{ uriTemplate: 'file:///{name}', name: 'any' }]),
    read: (uri) => Promise.resolve({ contents: [{ uri, text: `text of ${uri}` }] }),
    openSession: (onUpdated) => {
      asked.push('open')
      updated = onUpdated
      return {
        subscribe: (uri) => Promise.resolve(void asked.push(`subscribe ${uri}`)),
        unsubscribe: (uri) => Promise.resolve(void asked.push(`unsubscribe ${uri}`)),
        close: () => void asked.push('close'),
      }
    },
    onListChanged: (listener) => {
      listeners.push(listener)
      return () => void asked.push('off resources')
    },
  }
  return { resources, asked, changed: () => listeners.forEach((l) => l()), update: (uri: string) => updated?.(uri) }
}

const promptsOf = () => {
  const asked: Array<string> = []
  const listeners: Array<() => void> = []
  const prompts: ServedPrompts = {
    list: () => Promise.resolve([{ name: 'review', description: 'a review' }]),
    get: (name, args) => {
      asked.push(`get ${name} ${JSON.stringify(args)}`)
      return Promise.resolve({ messages: [{ role: 'user', content: { type: 'text', text: `prompt ${name}` } }] })
    },
    onListChanged: (listener) => {
      listeners.push(listener)
      return () => void asked.push('off prompts')
    },
  }
  return { prompts, asked, changed: () => listeners.forEach((l) => l()) }
}

describe('catalogCapabilities', () => {
  it('says what is served, and nothing of what is not', () => {
    const { resources } = resourcesOf()
    const { prompts } = promptsOf()
    const completions: ServedCompletions = () => Promise.resolve({ completion: { values: [] } })
    expect(catalogCapabilities({})).toStrictEqual({})
    expect(catalogCapabilities({ resources, prompts, completions })).toStrictEqual({
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
    })
    expect(catalogCapabilities({ completions })).toStrictEqual({ completions: {} })
  })
})

describe('serveCatalog', () => {
  it('resources: listed, templates listed, read, each as the catalog answers', async () => {
    const { resources } = resourcesOf()
    const { client } = await serve({ resources })
    expect((await client.listResources()).resources).toEqual([{ uri: 'file:///a.txt', name: 'a' }])
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: 'file:///{name}', name: 'any' },
    ])
    expect((await client.readResource({ uri: 'file:///b.txt' })).contents).toEqual([
      { uri: 'file:///b.txt', text: 'text of file:///b.txt' },
    ])
  })

  it('subscriptions: one session opened at the first, each URI subscribed and unsubscribed, its updates told', async () => {
    const r = resourcesOf()
    const { client, said } = await serve({ resources: r.resources })
    await client.unsubscribeResource({ uri: 'file:///none' })
    expect(r.asked).toEqual([])
    await client.subscribeResource({ uri: 'file:///a.txt' })
    await client.subscribeResource({ uri: 'file:///b.txt' })
    await client.unsubscribeResource({ uri: 'file:///a.txt' })
    expect(r.asked).toEqual(['open', 'subscribe file:///a.txt', 'subscribe file:///b.txt', 'unsubscribe file:///a.txt'])
    r.update('file:///b.txt')
    await heard(said, 1)
    expect(said).toEqual(['updated file:///b.txt'])
  })

  it('a change to the resources or the prompts is told to the host', async () => {
    const r = resourcesOf()
    const p = promptsOf()
    const { said } = await serve({ resources: r.resources, prompts: p.prompts })
    r.changed()
    await heard(said, 1)
    p.changed()
    await heard(said, 2)
    expect(said).toEqual(['resources changed', 'prompts changed'])
  })

  it('prompts: listed, and got with their arguments', async () => {
    const p = promptsOf()
    const { client } = await serve({ prompts: p.prompts })
    expect((await client.listPrompts()).prompts).toEqual([{ name: 'review', description: 'a review' }])
    const got = await client.getPrompt({ name: 'review', arguments: { file: 'a.ts' } })
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'prompt review' } }])
    expect(p.asked).toEqual(['get review {"file":"a.ts"}'])
  })

  it('completions: the request’s params handed on, the answer returned', async () => {
    const asked: Array<unknown> = []
    const completions: ServedCompletions = (params) => {
      asked.push(params)
      return Promise.resolve({ completion: { values: ['a.ts', 'b.ts'] } })
    }
    const { client } = await serve({ completions })
    const params = { ref: { type: 'ref/prompt' as const, name: 'review' }, argument: { name: 'file', value: 'a' } }
    expect((await client.complete(params)).completion.values).toEqual(['a.ts', 'b.ts'])
    expect(asked).toEqual([params])
  })

  it('what is not served is not answered: the SDK refuses the request', async () => {
    const { client } = await serve({})
    await expect(client.listResources()).rejects.toThrow()
    await expect(client.listPrompts()).rejects.toThrow()
  })

  it('closing: every listener let go and the session closed, the previous onclose still called; no subscription after', async () => {
    const r = resourcesOf()
    const p = promptsOf()
    const server = new Server(
      { name: 'catalog', version: '1.0.0' },
      { capabilities: catalogCapabilities({ resources: r.resources, prompts: p.prompts }) },
    )
    let before = 0
    server.onclose = () => void before++
    serveCatalog(server, { resources: r.resources, prompts: p.prompts })
    const client = new Client({ name: 'host', version: '1.0.0' })
    const [c, s] = InMemoryTransport.createLinkedPair()
    await server.connect(s)
    await client.connect(c)
    await client.subscribeResource({ uri: 'file:///a.txt' })
    await server.close()
    // the linked pair closes from both ends, so onclose may run more than once: letting go again changes nothing
    expect(before).toBeGreaterThanOrEqual(1)
    expect([...new Set(r.asked)]).toEqual(['open', 'subscribe file:///a.txt', 'off resources', 'close'])
    expect([...new Set(p.asked)]).toEqual(['off prompts'])
  })

  it('a subscription asked after the close opens no session (the server connected again)', async () => {
    const r = resourcesOf()
    const server = new Server(
      { name: 'catalog', version: '1.0.0' },
      { capabilities: catalogCapabilities({ resources: r.resources }) },
    )
    serveCatalog(server, { resources: r.resources })
    const first = new Client({ name: 'host', version: '1.0.0' })
    const [c1, s1] = InMemoryTransport.createLinkedPair()
    await server.connect(s1)
    await first.connect(c1)
    await server.close()
    const again = new Client({ name: 'host', version: '1.0.0' })
    const [c2, s2] = InMemoryTransport.createLinkedPair()
    await server.connect(s2)
    await again.connect(c2)
    expect(await again.subscribeResource({ uri: 'file:///a.txt' })).toEqual({})
    expect([...new Set(r.asked)]).toEqual(['off resources'])
    await again.close()
  })
})
