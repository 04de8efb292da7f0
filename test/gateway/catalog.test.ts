// newCatalog and replaceableCatalog in process: upstreams are SDK Servers over linked in-memory
// transports, their notices sent by the test, so each promise of the catalog is seen without a process.
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js'
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Catalog, CatalogEntry, UpstreamNotice } from '../../src/gateway/index.js'
import { newCatalog, replaceableCatalog } from '../../src/gateway/index.js'
import { linked } from '../mcp/fixtures.js'

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c()))
})

/** What a test upstream lists and answers; every request it gets is written to `asked`. */
interface Script {
  readonly capabilities?: ServerCapabilities
  readonly resources?: ReadonlyArray<string>
  /** Its templates; `'none'`: it answers the listing MethodNotFound (a server without templates). */
  readonly templates?: ReadonlyArray<string> | 'none'
  readonly prompts?: ReadonlyArray<string>
  /** Pages of the resource listing, by cursor (instead of `resources`). */
  readonly pages?: (cursor: string | undefined) => { readonly uris: ReadonlyArray<string>; readonly next?: string }
  /** What a read does instead of answering (never settles when `'hang'`). */
  readonly read?: 'hang' | (() => unknown)
  /** Awaited before each listing answers (a slow upstream). */
  readonly gate?: () => Promise<void>
  /** Awaited before a subscription is answered. */
  readonly subscribeGate?: () => Promise<void>
  /** Whether it refuses subscriptions now (read at each request). */
  readonly refuses?: () => boolean
}

/** One upstream in process: its entry, the requests it got, and the notices and restarts the test drives. */
const upstream = async (name: string, prefix: string, script: Script, timeout?: number) => {
  const asked: Array<string> = []
  // the listings it was asked for, by kind
  const lists: Array<string> = []
  const undeclared: Array<string> = []
  const make = async (): Promise<{ readonly client: Client; readonly close: () => Promise<void> }> => {
    const capabilities = script.capabilities ?? { resources: { subscribe: true }, prompts: {}, completions: {} }
    const server = new Server({ name, version: '0' }, { capabilities })
    // the SDK lets a server answer only what it declares
    const on = (kind: keyof ServerCapabilities, register: () => void): void => {
      if (capabilities[kind] !== undefined) register()
    }
    on('resources', () =>
      server.setRequestHandler(ListResourcesRequestSchema, async (r) => {
        lists.push('resources')
        await script.gate?.()
        const page = script.pages?.(r.params?.cursor) ?? { uris: script.resources ?? [] }
        return {
          resources: page.uris.map((uri) => ({ uri, name: uri })),
          ...(page.next === undefined ? {} : { nextCursor: page.next }),
        }
      }),
    )
    on('resources', () =>
      server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
        lists.push('templates')
        await script.gate?.()
        if (script.templates === 'none') throw new McpError(ErrorCode.MethodNotFound, 'no templates here')
        return {
          resourceTemplates: (script.templates ?? []).map((uriTemplate) => ({ uriTemplate, name: uriTemplate })),
        }
      }),
    )
    on('resources', () =>
      server.setRequestHandler(ReadResourceRequestSchema, (r) => {
        asked.push(`read ${r.params.uri}`)
        if (script.read === 'hang') return new Promise<never>(() => undefined)
        if (script.read !== undefined) return script.read() as { contents: [] }
        return { contents: [{ uri: r.params.uri, text: `${name} has ${r.params.uri}` }] }
      }),
    )
    on('resources', () =>
      server.setRequestHandler(SubscribeRequestSchema, async (r) => {
        asked.push(`+${r.params.uri}`)
        const refused = script.refuses?.() === true
        await script.subscribeGate?.()
        if (refused) throw new McpError(-32002, `not ${r.params.uri}`)
        return {}
      }),
    )
    on('resources', () =>
      server.setRequestHandler(UnsubscribeRequestSchema, (r) => {
        asked.push(`-${r.params.uri}`)
        return {}
      }),
    )
    on('prompts', () =>
      server.setRequestHandler(ListPromptsRequestSchema, async () => {
        lists.push('prompts')
        await script.gate?.()
        return { prompts: (script.prompts ?? []).map((p) => ({ name: p })) }
      }),
    )
    on('prompts', () =>
      server.setRequestHandler(GetPromptRequestSchema, (r) => {
        asked.push(`get ${r.params.name} ${JSON.stringify(r.params.arguments)}`)
        if (r.params.name === 'missing') throw new McpError(ErrorCode.InvalidParams, 'no prompt missing here')
        return { messages: [{ role: 'user', content: { type: 'text', text: `${name}:${r.params.name}` } }] }
      }),
    )
    on('completions', () =>
      server.setRequestHandler(CompleteRequestSchema, (r) => {
        asked.push(`complete ${JSON.stringify(r.params.ref)}`)
        if (r.params.argument.name === 'missing') throw new McpError(ErrorCode.InvalidParams, 'no argument missing')
        return { completion: { values: [name] } }
      }),
    )
    // a request for what it does not declare
    server.fallbackRequestHandler = (r) => {
      undeclared.push(r.method)
      return Promise.reject(new McpError(ErrorCode.MethodNotFound, r.method))
    }
    const l = await linked(server)
    closing.push(l.close)
    return l
  }
  let client: Client | undefined = (await make()).client
  const listeners = new Set<(n: UpstreamNotice) => void>()
  const entry: CatalogEntry = {
    name,
    prefix,
    upstream: {
      client: () => client,
      onNotice: (l) => {
        listeners.add(l)
        return () => {
          listeners.delete(l)
        }
      },
    },
    ...(timeout === undefined ? {} : { timeout }),
  }
  return {
    entry,
    asked,
    lists,
    undeclared,
    listening: () => listeners.size,
    notice: (n: UpstreamNotice): void => {
      for (const l of [...listeners]) l(n)
    },
    down: (): void => {
      client = undefined
    },
    /** A new client, as after a restart: without the old one's subscriptions. */
    restart: async (): Promise<void> => {
      client = (await make()).client
    },
  }
}

const settle = (ms = 20): Promise<void> => new Promise((r) => setTimeout(r, ms))

const codeOf = async (p: Promise<unknown>): Promise<{ readonly code: unknown; readonly message: string }> => {
  const e: unknown = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  if (!(e instanceof Error)) throw new Error('expected a rejection')
  return { code: (e as { code?: unknown }).code, message: e.message }
}

/** A catalog whose diagnostics are kept. */
const catalogOf = (entries: ReadonlyArray<CatalogEntry>, listWaitMs?: number) => {
  const said: Array<string> = []
  const catalog: Catalog = newCatalog(entries, {
    diagnose: (m) => void said.push(m),
    ...(listWaitMs === undefined ? {} : { listWaitMs }),
  })
  return { catalog, said }
}

describe('listing', () => {
  it('takes every page an upstream offers, up to 100 pages', async () => {
    const pages: Array<string | undefined> = []
    const endless = await upstream('endless', 'e', {
      pages: (cursor) => {
        pages.push(cursor)
        const n = Number(cursor ?? '0')
        return { uris: [`r://${n}`], next: String(n + 1) }
      },
    })
    const { catalog } = catalogOf([endless.entry])
    const listed = await catalog.resources.list()
    expect(listed.map((r) => r.uri)).toEqual(Array.from({ length: 100 }, (_, n) => `r://${n}`))
    // the first page is asked without a cursor, each next one with the cursor the last answered
    expect(pages).toEqual([undefined, ...Array.from({ length: 99 }, (_, n) => String(n + 1))])
  })

  it('holds at most 10 000 items of one upstream, the first ones in its order', async () => {
    const pages: Array<string | undefined> = []
    const wide = await upstream('wide', 'w', {
      pages: (cursor) => {
        pages.push(cursor)
        const n = Number(cursor ?? '0')
        return { uris: Array.from({ length: 4_000 }, (_, k) => `r://${n * 4_000 + k}`), next: String(n + 1) }
      },
    })
    const listed = await catalogOf([wide.entry]).catalog.resources.list()
    expect(listed.map((r) => r.uri)).toEqual(Array.from({ length: 10_000 }, (_, k) => `r://${k}`))
    // no page is asked once the bound is reached
    expect(pages).toEqual([undefined, '1', '2'])
  })

  it('an upstream that ends its listing is asked no further page', async () => {
    const pages: Array<string | undefined> = []
    const two = await upstream('two', 't', {
      pages: (cursor) => {
        pages.push(cursor)
        return cursor === undefined ? { uris: ['r://a'], next: 'b' } : { uris: ['r://b'] }
      },
    })
    expect((await catalogOf([two.entry]).catalog.resources.list()).map((r) => r.uri)).toEqual(['r://a', 'r://b'])
    expect(pages).toEqual([undefined, 'b'])
  })

  it('says each hidden copy once, and remembers at most 1 000 such messages', async () => {
    const uris = Array.from({ length: 1_100 }, (_, k) => `r://${k}`)
    const first = await upstream('first', 'f', { resources: uris })
    const second = await upstream('second', 's', { resources: uris })
    const { catalog, said } = catalogOf([first.entry, second.entry])
    expect((await catalog.resources.list()).length).toBe(1_100)
    expect(said.length).toBe(1_000)
    expect(new Set(said).size).toBe(1_000)
    expect(said[0]).toBe(
      'the resource "r://0" of the upstream MCP server "second" is hidden: "first" lists the same one and comes first in the configuration',
    )
    await catalog.resources.list()
    expect(said.length).toBe(1_000)
  })
})

describe('reading', () => {
  it("an upstream's own error: its code kept, its message without the SDK's prefixes, named and quoted", async () => {
    const refusing = await upstream('refusing', 'r', {
      resources: ['r://1'],
      read: () => {
        throw new McpError(-32002, 'no such thing')
      },
    })
    const { catalog } = catalogOf([refusing.entry])
    expect(await codeOf(catalog.resources.read('r://1'))).toEqual({
      code: -32002,
      message: 'the upstream MCP server "refusing" failed: "no such thing"',
    })
  })

  it('an answer the SDK cannot read is an internal error naming the upstream', async () => {
    const garbled = await upstream('garbled', 'g', { resources: ['r://1'], read: () => ({ contents: 'not a list' }) })
    const { code, message } = await codeOf(catalogOf([garbled.entry]).catalog.resources.read('r://1'))
    expect(code).toBe(ErrorCode.InternalError)
    expect(message.startsWith('the upstream MCP server "garbled" failed: ')).toBe(true)
  })

  it("an entry's timeout bounds each request to its upstream", async () => {
    const slow = await upstream('slow', 's', { resources: ['r://1'], read: 'hang' }, 50)
    const started = Date.now()
    expect(await codeOf(catalogOf([slow.entry]).catalog.resources.read('r://1'))).toEqual({
      code: ErrorCode.RequestTimeout,
      message: 'the upstream MCP server "slow" failed: "Request timed out"',
    })
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})

describe('notices', () => {
  it('tells the hosts what changed: resources, prompts, or both when an upstream comes up or goes down; a listener that throws costs the others nothing', async () => {
    const a = await upstream('a', 'a', {})
    const { catalog } = catalogOf([a.entry])
    const heard: Array<string> = []
    catalog.resources.onListChanged(() => {
      throw new Error('a host gone')
    })
    const offResources = catalog.resources.onListChanged(() => void heard.push('resources'))
    catalog.prompts.onListChanged(() => {
      throw new Error('a host gone')
    })
    catalog.prompts.onListChanged(() => void heard.push('prompts'))
    const told = (n: UpstreamNotice): ReadonlyArray<string> => {
      heard.length = 0
      a.notice(n)
      return [...heard]
    }
    expect(told({ _tag: 'ResourcesChanged' })).toEqual(['resources'])
    expect(told({ _tag: 'PromptsChanged' })).toEqual(['prompts'])
    expect(told({ _tag: 'Down' })).toEqual(['resources', 'prompts'])
    expect(told({ _tag: 'Up' })).toEqual(['resources', 'prompts'])
    expect(told({ _tag: 'ResourceUpdated', uri: 'a://1' })).toEqual([])
    offResources()
    expect(told({ _tag: 'ResourcesChanged' })).toEqual([])
    expect(a.listening()).toBe(1)
    catalog.close()
    expect(a.listening()).toBe(0)
  })

  it('an update reaches each session subscribed to its URI at that upstream, not another; a session that throws costs the others nothing', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1', 'a://2'] })
    const { catalog } = catalogOf([a.entry])
    const got: Array<string> = []
    const one = catalog.resources.openSession((uri) => void got.push(`one ${uri}`))
    const broken = catalog.resources.openSession(() => {
      throw new Error('gone')
    })
    const two = catalog.resources.openSession((uri) => void got.push(`two ${uri}`))
    await one.subscribe('a://1')
    await broken.subscribe('a://1')
    await two.subscribe('a://1')
    await two.subscribe('a://2')
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://1' })
    expect(got).toEqual(['one a://1', 'two a://1'])
    got.length = 0
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://2' })
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://3' })
    expect(got).toEqual(['two a://2'])
    got.length = 0
    await one.unsubscribe('a://1')
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://1' })
    expect(got).toEqual(['two a://1'])
  })

  it("an update from another upstream than the one a session's URI is held at reaches no one", async () => {
    const a = await upstream('a', 'a', { resources: ['x://1'] })
    const b = await upstream('b', 'b', { resources: ['x://1'] })
    const { catalog } = catalogOf([a.entry, b.entry])
    const got: Array<string> = []
    await catalog.resources.openSession((uri) => void got.push(uri)).subscribe('x://1')
    b.notice({ _tag: 'ResourceUpdated', uri: 'x://1' })
    expect(got).toEqual([])
    a.notice({ _tag: 'ResourceUpdated', uri: 'x://1' })
    expect(got).toEqual(['x://1'])
    expect(a.asked).toEqual(['+x://1'])
    expect(b.asked).toEqual([])
  })

  it('a restarted upstream is subscribed again to the URIs held there, and only those; a refusal is said', async () => {
    let refusing = false
    const a = await upstream('a', 'a', { resources: ['a://1', 'a://2'], refuses: () => refusing })
    const b = await upstream('b', 'b', { resources: ['b://1'] })
    const { catalog, said } = catalogOf([a.entry, b.entry])
    const session = catalog.resources.openSession(() => undefined)
    await session.subscribe('a://1')
    await session.subscribe('a://2')
    await session.subscribe('b://1')
    await session.unsubscribe('a://2')
    await settle()
    expect(a.asked).toEqual(['+a://1', '+a://2', '-a://2'])
    a.asked.length = 0
    b.asked.length = 0
    await a.restart()
    a.notice({ _tag: 'Up' })
    await settle()
    expect(a.asked).toEqual(['+a://1'])
    expect(b.asked).toEqual([])
    // down, then up with no client yet: nothing to subscribe
    a.down()
    a.notice({ _tag: 'Up' })
    await a.restart()
    refusing = true
    a.asked.length = 0
    a.notice({ _tag: 'Up' })
    await settle()
    expect(a.asked).toEqual(['+a://1'])
    expect(said).toEqual(['the upstream MCP server "a" refused the subscription to "a://1" again: not a://1'])
  })
})

describe('completion', () => {
  it("a prompt's argument goes where prompts/get goes, under the upstream's own name; an unknown prompt is refused", async () => {
    const a = await upstream('a', 'a', { prompts: ['greet'] })
    const b = await upstream('b', 'b', { prompts: ['greet'] })
    const { catalog } = catalogOf([a.entry, b.entry])
    const argument = { name: 'who', value: 'w' }
    expect(await catalog.complete({ ref: { type: 'ref/prompt', name: 'b_greet' }, argument })).toEqual({
      completion: { values: ['b'] },
    })
    expect(b.asked).toEqual(['complete {"type":"ref/prompt","name":"greet"}'])
    expect(a.asked).toEqual([])
    expect(await codeOf(catalog.complete({ ref: { type: 'ref/prompt', name: 'c_greet' }, argument }))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'there is no prompt named "c_greet"',
    })
  })

  it("a template's argument goes to the first upstream that lists that template, else to the one its URI is read from", async () => {
    const a = await upstream('a', 'a', { resources: ['x://{id}'], templates: ['x://{id}/{part}'] })
    const b = await upstream('b', 'b', { templates: ['x://{id}'] })
    const c = await upstream('c', 'c', { templates: ['x://{id}'] })
    const { catalog } = catalogOf([a.entry, b.entry, c.entry])
    const argument = { name: 'id', value: '1' }
    const ref = (uri: string) => ({ type: 'ref/resource' as const, uri })
    // listed by b and c: b's, found by the listing the first completion makes
    expect(await catalog.complete({ ref: ref('x://{id}'), argument })).toEqual({ completion: { values: ['b'] } })
    expect(await catalog.complete({ ref: ref('x://{id}/{part}'), argument })).toEqual({
      completion: { values: ['a'] },
    })
    expect(c.asked).toEqual([])
    // a URI no template names: where it is read from (a lists it as a resource)
    expect(await catalog.complete({ ref: ref('x://7/p'), argument })).toEqual({ completion: { values: ['a'] } })
    expect(await codeOf(catalog.complete({ ref: ref('y://{id}'), argument }))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'there is no resource template "y://{id}" to complete',
    })
  })

  it('an upstream that offers no completion has no suggestions, and is not asked', async () => {
    const quiet = await upstream('quiet', 'q', { capabilities: { prompts: {} }, prompts: ['greet'] })
    const { catalog } = catalogOf([quiet.entry])
    expect(
      await catalog.complete({ ref: { type: 'ref/prompt', name: 'q_greet' }, argument: { name: 'n', value: '' } }),
    ).toEqual({ completion: { values: [] } })
    expect(quiet.asked).toEqual([])
  })

  it('an upstream that is down is named', async () => {
    const a = await upstream('a', 'a', { prompts: ['greet'] })
    a.down()
    const { catalog } = catalogOf([a.entry])
    expect(
      await codeOf(
        catalog.complete({ ref: { type: 'ref/prompt', name: 'a_greet' }, argument: { name: 'n', value: '' } }),
      ),
    ).toEqual({
      code: ErrorCode.InternalError,
      message: 'the upstream MCP server "a" is not running; nothing was completed',
    })
  })
})

describe('replaceableCatalog', () => {
  it('serves the catalog in force; after a replace its listeners hear both lists changed, and the old one is closed and unheard', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'], prompts: ['p'], templates: ['a://{id}'] })
    const b = await upstream('b', 'b', { resources: ['b://1'], prompts: ['p'], templates: ['b://{id}'] })
    const catalog = replaceableCatalog(catalogOf([a.entry]).catalog)
    const heard: Array<string> = []
    catalog.resources.onListChanged(() => void heard.push('resources'))
    catalog.prompts.onListChanged(() => void heard.push('prompts'))
    const served = async () => ({
      resources: (await catalog.resources.list()).map((r) => r.uri),
      templates: (await catalog.resources.listTemplates()).map((t) => t.uriTemplate),
      prompts: (await catalog.prompts.list()).map((p) => p.name),
      read: (await catalog.resources.read('a://1').catch(() => undefined))?.contents,
      get: (await catalog.prompts.get('b_p', { x: '1' }).catch(() => undefined))?.messages,
      complete: (
        await catalog
          .complete({ ref: { type: 'ref/prompt', name: 'a_p' }, argument: { name: 'x', value: '' } })
          .catch(() => undefined)
      )?.completion.values,
    })
    expect(await served()).toEqual({
      resources: ['a://1'],
      templates: ['a://{id}'],
      prompts: ['a_p'],
      read: [{ uri: 'a://1', text: 'a has a://1' }],
      get: undefined,
      complete: ['a'],
    })
    a.notice({ _tag: 'ResourcesChanged' })
    expect(heard).toEqual(['resources'])
    heard.length = 0
    catalog.replace(catalogOf([b.entry]).catalog)
    expect(heard).toEqual(['resources', 'prompts'])
    expect(a.listening()).toBe(0)
    heard.length = 0
    a.notice({ _tag: 'PromptsChanged' })
    expect(heard).toEqual([])
    b.notice({ _tag: 'PromptsChanged' })
    expect(heard).toEqual(['prompts'])
    expect(await served()).toEqual({
      resources: ['b://1'],
      templates: ['b://{id}'],
      prompts: ['b_p'],
      read: undefined,
      get: [{ role: 'user', content: { type: 'text', text: 'b:p' } }],
      complete: undefined,
    })
    expect(b.asked).toContain('get p {"x":"1"}')
    catalog.close()
    expect(b.listening()).toBe(0)
  })

  it("a session's subscriptions move to the new catalog; one the new catalog cannot route is dropped for good", async () => {
    const one = await upstream('one', 'o', { resources: ['x://1', 'x://2'] })
    const two = await upstream('two', 't', { resources: ['x://1'] })
    const catalog = replaceableCatalog(catalogOf([one.entry]).catalog)
    const got: Array<string> = []
    const session = catalog.resources.openSession((uri) => void got.push(uri))
    await session.subscribe('x://1')
    await session.subscribe('x://2')
    catalog.replace(catalogOf([two.entry]).catalog)
    await settle()
    // the old upstream unsubscribed, the new one subscribed to what it routes
    expect(one.asked).toEqual(['+x://1', '+x://2', '-x://1', '-x://2'])
    expect(two.asked).toEqual(['+x://1'])
    two.notice({ _tag: 'ResourceUpdated', uri: 'x://1' })
    expect(got).toEqual(['x://1'])
    // x://2 was dropped: a second replace does not try it again
    const three = await upstream('three', 'h', { resources: ['x://1', 'x://2'] })
    catalog.replace(catalogOf([three.entry]).catalog)
    await settle()
    expect(three.asked).toEqual(['+x://1'])
    await session.unsubscribe('x://1')
    await settle()
    expect(three.asked).toEqual(['+x://1', '-x://1'])
    catalog.replace(catalogOf([two.entry]).catalog)
    await settle()
    expect(two.asked).toEqual(['+x://1', '-x://1'])
    session.close()
  })

  it('a session closed is taken over by no later catalog', async () => {
    const one = await upstream('one', 'o', { resources: ['x://1'] })
    const two = await upstream('two', 't', { resources: ['x://1'] })
    const catalog = replaceableCatalog(catalogOf([one.entry]).catalog)
    const session = catalog.resources.openSession(() => undefined)
    await session.subscribe('x://1')
    session.close()
    await settle()
    expect(one.asked).toEqual(['+x://1', '-x://1'])
    catalog.replace(catalogOf([two.entry]).catalog)
    await settle()
    expect(two.asked).toEqual([])
  })

  it('a replace while a subscription is under way: the new catalog takes it too', async () => {
    const one = await upstream('one', 'o', { resources: ['x://1'] })
    const two = await upstream('two', 't', { resources: ['x://1'] })
    const catalog = replaceableCatalog(catalogOf([one.entry]).catalog)
    const session = catalog.resources.openSession(() => undefined)
    const under = session.subscribe('x://1')
    catalog.replace(catalogOf([two.entry]).catalog)
    await under
    await settle()
    expect(two.asked).toEqual(['+x://1'])
  })
})

/** A gate a slow upstream's listings wait at: closed until opened. */
const gate = () => {
  let open: () => void = () => undefined
  let at = Promise.resolve()
  return {
    wait: () => at,
    close: (): void => {
      at = new Promise((r) => (open = r))
    },
    open: (): void => open(),
  }
}

describe('listing a slow upstream', () => {
  it('one listing in flight per upstream and kind, however many hosts list at once', async () => {
    const g = gate()
    const a = await upstream('a', 'a', { resources: ['a://1'], gate: g.wait })
    const { catalog } = catalogOf([a.entry])
    g.close()
    const three = Promise.all([catalog.resources.list(), catalog.resources.list(), catalog.resources.list()])
    await settle()
    g.open()
    expect((await three).map((l) => l.map((r) => r.uri))).toEqual([['a://1'], ['a://1'], ['a://1']])
    expect(a.lists).toEqual(['resources'])
    // answered, the next listing asks again
    await catalog.resources.list()
    expect(a.lists).toEqual(['resources', 'resources'])
  })

  it('is served as it listed last (absent the first time) without waiting past listWaitMs; the hosts are told when its fresh listing differs, not when it is the same', async () => {
    const g = gate()
    const script: { resources: ReadonlyArray<string>; gate: () => Promise<void> } = {
      resources: ['s://1'],
      gate: g.wait,
    }
    const slow = await upstream('slow', 's', script)
    const quick = await upstream('quick', 'q', { resources: ['q://1'] })
    const { catalog } = catalogOf([quick.entry, slow.entry], 50)
    const heard: Array<string> = []
    catalog.resources.onListChanged(() => void heard.push('resources'))
    const uris = async (): Promise<ReadonlyArray<string>> => {
      const started = Date.now()
      const listed = (await catalog.resources.list()).map((r) => r.uri)
      expect(Date.now() - started).toBeLessThan(1_000)
      return listed
    }
    g.close()
    expect(await uris()).toEqual(['q://1'])
    g.open()
    await expect.poll(() => heard).toEqual(['resources'])
    expect(await uris()).toEqual(['q://1', 's://1'])
    // slow again, with the same listing: served as before, nobody told
    g.close()
    expect(await uris()).toEqual(['q://1', 's://1'])
    g.open()
    await settle(50)
    expect(heard).toEqual(['resources'])
    // slow again, with a new listing: served as before, then told, and the new one served
    script.resources = ['s://2']
    g.close()
    expect(await uris()).toEqual(['q://1', 's://1'])
    g.open()
    await expect.poll(() => heard).toEqual(['resources', 'resources'])
    expect(await uris()).toEqual(['q://1', 's://2'])
    // and read from it, by the index its late listing rebuilt
    expect((await catalog.resources.read('s://2')).contents).toEqual([{ uri: 's://2', text: 'slow has s://2' }])
  })

  it('a failed listing is said and serves nothing from that upstream, yet its URIs stay its own', async () => {
    let failing = false
    const a = await upstream('a', 'a', {
      pages: () => {
        if (failing) throw new Error('no listing today')
        return { uris: ['x://1'] }
      },
    })
    const b = await upstream('b', 'b', { resources: ['x://1', 'b://1'] })
    const { catalog, said } = catalogOf([a.entry, b.entry])
    expect((await catalog.resources.list()).map((r) => r.uri)).toEqual(['x://1', 'b://1'])
    failing = true
    said.length = 0
    expect((await catalog.resources.list()).map((r) => r.uri)).toEqual(['b://1'])
    expect(said).toEqual([
      'the upstream MCP server "a" could not list its resources: MCP error -32603: no listing today',
    ])
    expect((await catalog.resources.read('x://1')).contents).toEqual([{ uri: 'x://1', text: 'a has x://1' }])
  })
})

describe('routing', () => {
  it('an unknown URI is refused, naming it, after one fresh listing of every upstream', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'], templates: ['a://{id}/x'] })
    const { catalog } = catalogOf([a.entry])
    await catalog.resources.list()
    await catalog.resources.listTemplates()
    a.lists.length = 0
    expect(await codeOf(catalog.resources.read('z://1'))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'there is no resource "z://1": no upstream lists it or a template that matches it',
    })
    expect([...a.lists].sort()).toEqual(['resources', 'templates'])
    // a known one asks no listing
    a.lists.length = 0
    await catalog.resources.read('a://1')
    await catalog.resources.read('a://2/x')
    expect(a.lists).toEqual([])
    expect(a.asked).toEqual(['read a://1', 'read a://2/x'])
  })

  it("an upstream up and never listed is listed before another's template takes a URI it may own", async () => {
    const a = await upstream('a', 'a', { templates: ['b://{id}'] })
    const b = await upstream('b', 'b', { resources: ['b://1'] })
    b.down()
    const { catalog } = catalogOf([a.entry, b.entry])
    await catalog.resources.list()
    await catalog.resources.listTemplates()
    await b.restart()
    expect((await catalog.resources.read('b://1')).contents).toEqual([{ uri: 'b://1', text: 'b has b://1' }])
    expect(a.asked).toEqual([])
  })

  it('a read routed to an upstream that is down names it', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    const { catalog } = catalogOf([a.entry])
    await catalog.resources.list()
    a.down()
    expect(await codeOf(catalog.resources.read('a://1'))).toEqual({
      code: ErrorCode.InternalError,
      message: 'the upstream MCP server "a" is not running; the resource "a://1" was not read',
    })
  })
})

describe('prompts', () => {
  it("get sends the upstream's own name, and the arguments only when given", async () => {
    const a = await upstream('a', 'a', { prompts: ['p'] })
    const { catalog } = catalogOf([a.entry])
    await catalog.prompts.get('a_p', undefined)
    await catalog.prompts.get('a_p', { x: '1' })
    expect(a.asked).toEqual(['get p undefined', 'get p {"x":"1"}'])
  })

  it('a prompt routed to an upstream that is down names it; one without prompts has no such prompt', async () => {
    const a = await upstream('a', 'a', { prompts: ['p'] })
    const r = await upstream('r', 'r', { capabilities: { resources: {} } })
    a.down()
    const { catalog } = catalogOf([a.entry, r.entry])
    expect(await codeOf(catalog.prompts.get('a_p', undefined))).toEqual({
      code: ErrorCode.InternalError,
      message: 'the upstream MCP server "a" is not running; the prompt "a_p" was not fetched',
    })
    expect(await codeOf(catalog.prompts.get('r_p', undefined))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'there is no prompt named "r_p"',
    })
    expect(await catalog.prompts.list()).toEqual([])
  })
})

describe('subscriptions', () => {
  it('one session subscribing to one URI twice at once subscribes the upstream once', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    const { catalog } = catalogOf([a.entry])
    const session = catalog.resources.openSession(() => undefined)
    await Promise.all([session.subscribe('a://1'), session.subscribe('a://1')])
    expect(a.asked).toEqual(['+a://1'])
  })

  it('the bound holds for subscriptions made at once', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1', 'a://2'] })
    const catalog = newCatalog([a.entry], { maxSubscriptions: 1 })
    const session = catalog.resources.openSession(() => undefined)
    const both = await Promise.allSettled([session.subscribe('a://1'), session.subscribe('a://2')])
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    expect(a.asked).toEqual(['+a://1'])
  })

  it('a session closed while its subscription was routed subscribes nothing', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    const { catalog } = catalogOf([a.entry])
    const session = catalog.resources.openSession(() => undefined)
    const under = session.subscribe('a://1')
    session.close()
    await under
    await settle()
    expect(a.asked).toEqual([])
  })

  it("a refused upstream subscription is the upstream's error, and leaves the session not subscribed", async () => {
    let refusing = true
    const a = await upstream('a', 'a', { resources: ['a://1'], refuses: () => refusing })
    const { catalog } = catalogOf([a.entry])
    const got: Array<string> = []
    const session = catalog.resources.openSession((uri) => void got.push(uri))
    expect(await codeOf(session.subscribe('a://1'))).toEqual({
      code: -32002,
      message: 'the upstream MCP server "a" failed: "not a://1"',
    })
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://1' })
    expect(got).toEqual([])
    refusing = false
    await session.subscribe('a://1')
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://1' })
    expect(got).toEqual(['a://1'])
    expect(a.asked).toEqual(['+a://1', '+a://1'])
  })

  it('closing a session twice lets go of its subscriptions once', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    const { catalog } = catalogOf([a.entry])
    const one = catalog.resources.openSession(() => undefined)
    const two = catalog.resources.openSession(() => undefined)
    await one.subscribe('a://1')
    await two.subscribe('a://1')
    one.close()
    one.close()
    await one.unsubscribe('a://1')
    await settle()
    expect(a.asked).toEqual(['+a://1'])
    two.close()
    await settle()
    expect(a.asked).toEqual(['+a://1', '-a://1'])
  })
})

describe('what the catalog says, and to whom', () => {
  it('a catalog told nothing (no diagnose) still serves, hides and survives a failed listing', async () => {
    const a = await upstream('a', 'a', { resources: ['x://1'] })
    const b = await upstream('b', 'b', { resources: ['x://1'] })
    const broken = await upstream('broken', 'k', {
      pages: () => {
        throw new Error('no listing today')
      },
    })
    const catalog = newCatalog([a.entry, b.entry, broken.entry])
    expect((await catalog.resources.list()).map((r) => r.uri)).toEqual(['x://1'])
  })

  it('a hidden template is said as a resource template', async () => {
    const a = await upstream('a', 'a', { templates: ['x://{id}'] })
    const b = await upstream('b', 'b', { templates: ['x://{id}'] })
    const { catalog, said } = catalogOf([a.entry, b.entry])
    expect((await catalog.resources.listTemplates()).map((t) => t.uriTemplate)).toEqual(['x://{id}'])
    expect(said).toEqual([
      'the resource template "x://{id}" of the upstream MCP server "b" is hidden: "a" lists the same one and comes first in the configuration',
    ])
  })

  it('a prompt whose published name routes nowhere (an empty name) is hidden and said; an unknown prompt is refused by name', async () => {
    const a = await upstream('a', 'a', { prompts: ['', 'p'] })
    const { catalog, said } = catalogOf([a.entry])
    expect((await catalog.prompts.list()).map((p) => p.name)).toEqual(['a_p'])
    expect(said).toEqual(['the prompt "" of the upstream MCP server "a" is hidden: "a_" routes to no upstream'])
    expect(await codeOf(catalog.prompts.get('zz_p', undefined))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'there is no prompt named "zz_p"',
    })
  })

  it("an upstream's message is shown whole (cut at 1 000), without the SDK's prefixes, its code kept, whatever they are", async () => {
    let thrown = new McpError(0, '')
    const a = await upstream('a', 'a', {
      resources: ['a://1'],
      read: () => {
        throw thrown
      },
    })
    const { catalog } = catalogOf([a.entry])
    await catalog.resources.list()
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -40_000, max: 40_000 }).filter((c) => c !== -32042),
        fc.oneof(fc.string({ maxLength: 1_200 }), fc.constant('see MCP error -1: here')),
        async (code, message) => {
          fc.pre(!message.startsWith('MCP error '))
          thrown = new McpError(code, message)
          const shown = message.length > 1_000 ? `${message.slice(0, 1_000)}…` : message
          expect(await codeOf(catalog.resources.read('a://1'))).toEqual({
            code,
            message: `the upstream MCP server "a" failed: ${JSON.stringify(shown)}`,
          })
        },
      ),
      { numRuns: 50 },
    )
  })
})

describe('routing, more', () => {
  it('each unknown URI gets its own fresh listing; an upstream without resources is never waited for', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'], templates: ['a://{id}/x'] })
    const p = await upstream('p', 'p', { capabilities: { prompts: {} }, prompts: ['q'] })
    const { catalog } = catalogOf([a.entry, p.entry])
    await catalog.resources.list()
    await catalog.resources.listTemplates()
    a.lists.length = 0
    await catalog.resources.read('a://2/x')
    expect(a.lists).toEqual([])
    await codeOf(catalog.resources.read('z://1'))
    await codeOf(catalog.resources.read('z://2'))
    expect([...a.lists].sort()).toEqual(['resources', 'resources', 'templates', 'templates'])
  })

  it('an upstream whose templates were never listed is listed before another template takes a URI', async () => {
    const b = await upstream('b', 'b', { templates: ['x://{id}'] })
    const a = await upstream('a', 'a', { templates: ['x://{id}'] })
    const { catalog } = catalogOf([b.entry, a.entry])
    b.down()
    await catalog.resources.listTemplates()
    await b.restart()
    await catalog.resources.list()
    expect((await catalog.resources.read('x://1')).contents).toEqual([{ uri: 'x://1', text: 'b has x://1' }])
  })

  it('an upstream whose resources were never listed is listed before a template takes a URI it may list', async () => {
    const a = await upstream('a', 'a', { templates: ['x://{id}'] })
    const b = await upstream('b', 'b', { resources: ['x://1'] })
    const { catalog } = catalogOf([a.entry, b.entry])
    await catalog.resources.listTemplates()
    expect((await catalog.resources.read('x://1')).contents).toEqual([{ uri: 'x://1', text: 'b has x://1' }])
  })

  it('with every upstream down and never listed, a read is refused as no such resource', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    a.down()
    const { catalog } = catalogOf([a.entry])
    expect(await codeOf(catalog.resources.read('a://1'))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'there is no resource "a://1": no upstream lists it or a template that matches it',
    })
  })
})

describe('completion, more', () => {
  it('a template goes to the upstream that lists that very template, not to one whose template only matches its text; once known, no listing is asked', async () => {
    const b = await upstream('b', 'b', { templates: ['y://{+rest}'] })
    const a = await upstream('a', 'a', { templates: ['x://{a}', 'y://{b}'] })
    const { catalog } = catalogOf([b.entry, a.entry])
    const complete = () =>
      catalog.complete({ ref: { type: 'ref/resource', uri: 'y://{b}' }, argument: { name: 'b', value: '' } })
    expect(await complete()).toEqual({ completion: { values: ['a'] } })
    a.lists.length = 0
    b.lists.length = 0
    expect(await complete()).toEqual({ completion: { values: ['a'] } })
    expect([...a.lists, ...b.lists]).toEqual([])
  })
})

describe('subscriptions, more', () => {
  it('a subscription routed to an upstream that is down names it; a session closed or unsubscribing while it is down costs nothing', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1', 'a://2'] })
    const { catalog } = catalogOf([a.entry])
    const session = catalog.resources.openSession(() => undefined)
    await session.subscribe('a://1')
    await session.subscribe('a://2')
    a.down()
    expect(await codeOf(catalog.resources.openSession(() => undefined).subscribe('a://1'))).toEqual({
      code: ErrorCode.InternalError,
      message: 'the upstream MCP server "a" is not running; the resource "a://1" was not subscribed to',
    })
    await session.unsubscribe('a://1')
    session.close()
  })

  it('a URI held already is answered at once, at the bound too; the bound is checked before any routing', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    const catalog = newCatalog([a.entry], { maxSubscriptions: 1 })
    const session = catalog.resources.openSession(() => undefined)
    await session.subscribe('a://1')
    await session.subscribe('a://1')
    a.lists.length = 0
    expect(await codeOf(session.subscribe('z://1'))).toEqual({
      code: ErrorCode.InvalidRequest,
      message: 'a session may subscribe to at most 1 resources at once',
    })
    expect(a.lists).toEqual([])
    expect(a.asked).toEqual(['+a://1'])
  })

  it('a URI of 8 192 characters may be subscribed to, one longer may not', async () => {
    const a = await upstream('a', 'a', { templates: ['r://{+rest}'] })
    const { catalog } = catalogOf([a.entry])
    const session = catalog.resources.openSession(() => undefined)
    await session.subscribe(`r://${'x'.repeat(8_188)}`)
    expect(await codeOf(session.subscribe(`r://${'x'.repeat(8_189)}`))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'a URI to subscribe to has at most 8192 characters',
    })
  })

  it('an upstream restarted without subscriptions says so for a URI it still owns', async () => {
    const script: { resources: ReadonlyArray<string>; capabilities?: ServerCapabilities } = { resources: ['a://1'] }
    const a = await upstream('a', 'a', script)
    const { catalog } = catalogOf([a.entry])
    await catalog.resources.list()
    script.capabilities = { prompts: {} }
    await a.restart()
    expect(await codeOf(catalog.resources.openSession(() => undefined).subscribe('a://1'))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'the upstream MCP server "a" does not offer subscriptions; the resource "a://1" was not subscribed to',
    })
  })

  it('a refused subscription let go of before it failed leaves a later one of the same URI held', async () => {
    const g = gate()
    let calls = 0
    const a = await upstream('a', 'a', {
      resources: ['a://1'],
      refuses: () => ++calls === 1,
      subscribeGate: g.wait,
    })
    const { catalog } = catalogOf([a.entry])
    await catalog.resources.list()
    g.close()
    const one = catalog.resources.openSession(() => undefined)
    const first = one.subscribe('a://1')
    await expect.poll(() => a.asked).toEqual(['+a://1'])
    await one.unsubscribe('a://1')
    const got: Array<string> = []
    const two = catalog.resources.openSession((uri) => void got.push(uri))
    const second = two.subscribe('a://1')
    await expect.poll(() => a.asked).toEqual(['+a://1', '-a://1', '+a://1'])
    g.open()
    expect((await codeOf(first)).code).toBe(-32002)
    await second
    a.notice({ _tag: 'ResourceUpdated', uri: 'a://1' })
    expect(got).toEqual(['a://1'])
    // still held: a third session shares it, and the upstream is not asked again
    await catalog.resources.openSession(() => undefined).subscribe('a://1')
    expect(a.asked).toEqual(['+a://1', '-a://1', '+a://1'])
  })
})

describe('late answers', () => {
  it('a server without templates answering late is served none, and nobody is told of a change', async () => {
    const g = gate()
    const a = await upstream('a', 'a', { templates: 'none', gate: g.wait })
    const { catalog, said } = catalogOf([a.entry], 50)
    const heard: Array<string> = []
    catalog.resources.onListChanged(() => void heard.push('resources'))
    g.close()
    expect(await catalog.resources.listTemplates()).toEqual([])
    g.open()
    await settle(50)
    expect(await catalog.resources.listTemplates()).toEqual([])
    expect(heard).toEqual([])
    expect(said).toEqual([])
  })

  it("a refused subscription at one upstream leaves the session's later one of that URI, at another, in place", async () => {
    const g = gate()
    const aScript: { resources: ReadonlyArray<string> } & Script = {
      resources: ['x://1'],
      refuses: () => true,
      subscribeGate: g.wait,
    }
    const a = await upstream('a', 'a', aScript)
    const b = await upstream('b', 'b', { resources: ['x://1'] })
    const { catalog } = catalogOf([a.entry, b.entry])
    await catalog.resources.list()
    g.close()
    const got: Array<string> = []
    const session = catalog.resources.openSession((uri) => void got.push(uri))
    const first = session.subscribe('x://1')
    await expect.poll(() => a.asked).toEqual(['+x://1'])
    await session.unsubscribe('x://1')
    // a no longer lists it: b owns it now
    aScript.resources = []
    await catalog.resources.list()
    await session.subscribe('x://1')
    expect(b.asked).toEqual(['+x://1'])
    g.open()
    expect((await codeOf(first)).code).toBe(-32002)
    b.notice({ _tag: 'ResourceUpdated', uri: 'x://1' })
    expect(got).toEqual(['x://1'])
  })
})

describe('what an upstream is asked', () => {
  it('only what it declares: one without resources is never asked to list them, even when a read misses', async () => {
    const a = await upstream('a', 'a', { resources: ['a://1'] })
    const p = await upstream('p', 'p', { capabilities: { prompts: {} }, prompts: ['q'] })
    const { catalog } = catalogOf([a.entry, p.entry])
    await catalog.resources.list()
    await catalog.resources.listTemplates()
    await codeOf(catalog.resources.read('z://1'))
    expect((await catalog.prompts.list()).map((x) => x.name)).toEqual(['p_q'])
    expect(p.undeclared).toEqual([])
    expect(a.undeclared).toEqual([])
  })

  it('a URI an upstream lists since its last listing is found by the fresh listing a read makes', async () => {
    const script: { resources: ReadonlyArray<string> } = { resources: ['a://1'] }
    const a = await upstream('a', 'a', script)
    const { catalog } = catalogOf([a.entry])
    await catalog.resources.list()
    await catalog.resources.listTemplates()
    script.resources = ['a://1', 'a://2']
    expect((await catalog.resources.read('a://2')).contents).toEqual([{ uri: 'a://2', text: 'a has a://2' }])
  })

  it("an upstream's refusal of a prompt or a completion is its own error, named", async () => {
    const a = await upstream('a', 'a', { prompts: ['missing'] })
    const { catalog } = catalogOf([a.entry])
    expect(await codeOf(catalog.prompts.get('a_missing', undefined))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'the upstream MCP server "a" failed: "no prompt missing here"',
    })
    expect(
      await codeOf(
        catalog.complete({ ref: { type: 'ref/prompt', name: 'a_missing' }, argument: { name: 'missing', value: '' } }),
      ),
    ).toEqual({ code: ErrorCode.InvalidParams, message: 'the upstream MCP server "a" failed: "no argument missing"' })
  })
})
