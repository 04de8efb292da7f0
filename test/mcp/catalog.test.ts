// The catalog's pure routing steps, and its bounds over a real SDK server in process.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import {
  claimFirst,
  newCatalog,
  pickOwner,
  promptName,
  routePrompt,
  templateOwners,
} from '../../src/gateway/catalog.js'
import { toMcpServer } from '../../src/mcp/server.js'
import { fromTools } from '../../src/index.js'
import { linked } from './fixtures.js'

describe('claimFirst', () => {
  const listings = fc.array(
    fc.option(fc.array(fc.constantFrom<string>('a', 'b', 'c', 'd', 'e'), { maxLength: 6 }), { nil: undefined }),
    {
      maxLength: 5,
    },
  )

  it('serves each URI once, from the first listing in config order that holds it, whatever the listings', () => {
    fc.assert(
      fc.property(listings, (ls) => {
        // the oracle: the lowest index whose listing includes the key
        const ownerOf = (key: string): number => ls.findIndex((l) => l?.includes(key) === true)
        const keys = new Set(ls.flatMap((l) => l ?? []))
        const { served, hidden } = claimFirst((u: string) => u)(ls)
        expect(served.map((s) => s.item).sort()).toEqual([...keys].sort())
        for (const s of served) expect(s.from).toBe(ownerOf(s.item))
        const others = ls.flatMap((l, i) => (l ?? []).filter((k) => ownerOf(k) !== i).map((k) => [k, i, ownerOf(k)]))
        expect(hidden.map((h) => [h.key, h.from, h.keptBy])).toEqual(others)
      }),
    )
  })

  it('who wins does not depend on the order each upstream listed its URIs in', () => {
    fc.assert(
      fc.property(listings, fc.infiniteStream(fc.integer()), (ls, seeds) => {
        const shuffled = ls.map((l) =>
          l === undefined ? l : [...l].sort(() => (seeds.next().value % 2 === 0 ? 1 : -1)),
        )
        const owners = (xs: typeof ls) =>
          new Map(claimFirst((u: string) => u)(xs).served.map((s) => [s.item, s.from] as const))
        expect(owners(shuffled)).toEqual(owners(ls))
      }),
    )
  })
})

describe('pickOwner', () => {
  it('the first owner in config order, up or down: a URI keeps its owner while it is down', () => {
    expect(pickOwner([0, 2])).toBe(0)
    expect(pickOwner([2])).toBe(2)
    expect(pickOwner([])).toBeUndefined()
  })
})

describe('templateOwners', () => {
  it('every upstream whose template matches, in config order; a template the SDK cannot parse matches nothing', () => {
    const owners = templateOwners([['file:///{path}'], ['demo://{+rest}', 'x://{'], undefined, ['demo://a/{id}']])
    expect(owners('demo://a/1')).toEqual([1, 3])
    expect(owners('file:///etc')).toEqual([0])
    expect(owners('x://{')).toEqual([])
  })

  it('an absent listing or a template the SDK cannot parse matches nothing, whatever the URI', () => {
    const unparsable = fc.constantFrom('x://{', '{', 'a{b}}{', '}{', '{a', 'x://{a}{')
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.array(unparsable, { maxLength: 3 }), { nil: undefined }), { maxLength: 4 }),
        fc.string({ maxLength: 20 }),
        (listings, uri) => {
          expect(templateOwners(listings)(uri)).toEqual([])
        },
      ),
    )
  })

  it('a URI longer than the SDK matches (1 000 000 characters) matches nothing, rather than failing', () => {
    const owners = templateOwners([['x://{+rest}']])
    expect(owners(`x://${'a'.repeat(999_996)}`)).toEqual([0])
    expect(owners(`x://${'a'.repeat(999_997)}`)).toEqual([])
  })
})

describe('routePrompt', () => {
  const prefix = fc.stringMatching(/^[a-z]{1,3}(_[a-z]{1,2})?$/)

  it('routes a published name back to its upstream and name by the longest prefix, as tools are', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(prefix, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 8 }),
        (ps, k, name) => {
          const i = k % ps.length
          const published = promptName(ps[i] ?? '', name)
          // the oracle: of the prefixes whose `prefix_` starts the name and leaves something, the longest
          const best = ps
            .map((p, index) => ({ tag: `${p}_`, index }))
            .filter((e) => published.startsWith(e.tag) && published.length > e.tag.length)
            .sort((a, b) => b.tag.length - a.tag.length)[0]
          expect(routePrompt(ps)(published)).toEqual(
            best === undefined ? undefined : { index: best.index, name: published.slice(best.tag.length) },
          )
        },
      ),
    )
  })

  it('a name with no known prefix routes nowhere', () => {
    expect(routePrompt(['fs'])('web_search')).toBeUndefined()
    expect(routePrompt(['fs'])('fs_')).toBeUndefined()
  })

  it("the empty prefix keeps a prompt's own name and takes every name no other prefix claims", () => {
    expect(promptName('', 'greet')).toBe('greet')
    const route = routePrompt(['', 'fs'])
    expect(route('greet')).toEqual({ index: 0, name: 'greet' })
    expect(route('fs_read')).toEqual({ index: 1, name: 'read' })
    expect(route('fs_')).toEqual({ index: 0, name: 'fs_' })
    expect(route('')).toBeUndefined()
  })
})

describe('newCatalog over an SDK server in process', () => {
  const upstream = async () => {
    const server = new Server({ name: 'r', version: '0' }, { capabilities: { resources: { subscribe: true } } })
    const calls: Array<string> = []
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }))
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [{ uriTemplate: 'r://{id}', name: 'r' }],
    }))
    server.setRequestHandler(SubscribeRequestSchema, (req) => {
      calls.push(`+${req.params.uri}`)
      return {}
    })
    server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
      calls.push(`-${req.params.uri}`)
      return {}
    })
    const { client, close } = await linked(server)
    return {
      entry: { name: 'r', prefix: 'r', upstream: { client: () => client, onNotice: () => () => undefined } },
      calls,
      close,
    }
  }

  it('a session holds at most maxSubscriptions URIs, each of bounded length; the upstream is subscribed once per URI and unsubscribed with the last holder', async () => {
    const { entry, calls, close } = await upstream()
    const catalog = newCatalog([entry], { maxSubscriptions: 2 })
    const one = catalog.resources.openSession(() => undefined)
    const two = catalog.resources.openSession(() => undefined)
    await one.subscribe('r://1')
    await one.subscribe('r://1')
    await one.subscribe('r://2')
    await expect(one.subscribe('r://3')).rejects.toMatchObject({
      code: -32600,
      message: 'a session may subscribe to at most 2 resources at once',
    })
    await expect(two.subscribe(`r://${'x'.repeat(9000)}`)).rejects.toMatchObject({ code: -32602 })
    await two.subscribe('r://1')
    await one.unsubscribe('r://2')
    one.close()
    two.close()
    await new Promise((r) => setTimeout(r, 20))
    expect(calls).toEqual(['+r://1', '+r://2', '-r://2', '-r://1'])
    catalog.close()
    await close()
  })

  const prompter = async (names: ReadonlyArray<string> | 'fails') => {
    const server = new Server({ name: 'p', version: '0' }, { capabilities: { prompts: {} } })
    server.setRequestHandler(ListPromptsRequestSchema, () => {
      if (names === 'fails') throw new Error('no listing today')
      return { prompts: names.map((name) => ({ name })) }
    })
    server.setRequestHandler(GetPromptRequestSchema, (req) => ({
      messages: [{ role: 'user', content: { type: 'text', text: req.params.name } }],
    }))
    const { client, close } = await linked(server)
    return { client, close }
  }

  it('prompts: a name that would route to a nested prefix is hidden and said once; a failed listing is said and the others still answer', async () => {
    const ups = await Promise.all([prompter(['x_read', 'read']), prompter(['read']), prompter('fails')])
    const said: Array<string> = []
    const catalog = newCatalog(
      ups.map((u, i) => ({
        name: `u${i}`,
        prefix: ['fs', 'fs_x', 'web'][i] ?? '',
        upstream: { client: () => u.client, onNotice: () => () => undefined },
      })),
      { diagnose: (m) => void said.push(m) },
    )
    for (let n = 0; n < 2; n++)
      expect((await catalog.prompts.list()).map((p) => p.name)).toEqual(['fs_read', 'fs_x_read'])
    expect(said).toEqual([
      'the upstream MCP server "u2" could not list its prompts: MCP error -32603: no listing today',
      'the prompt "x_read" of the upstream MCP server "u0" is hidden: "fs_x_read" routes to "u1", whose prefix is longer',
      'the upstream MCP server "u2" could not list its prompts: MCP error -32603: no listing today',
    ])
    expect(await catalog.prompts.get('fs_x_read', undefined)).toMatchObject({
      messages: [{ content: { text: 'read' } }],
    })
    catalog.close()
    await Promise.all(ups.map((u) => u.close()))
  })

  it('an upstream without subscriptions, prompts or templates: a clear error naming it, no such prompt, no templates', async () => {
    const server = new Server({ name: 'n', version: '0' }, { capabilities: { resources: {} } })
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: 'n://1', name: 'one' }] }))
    const { client, close } = await linked(server)
    const said: Array<string> = []
    const catalog = newCatalog(
      [{ name: 'n', prefix: 'n', upstream: { client: () => client, onNotice: () => () => undefined } }],
      { diagnose: (m) => void said.push(m) },
    )
    await expect(catalog.resources.openSession(() => undefined).subscribe('n://1')).rejects.toMatchObject({
      code: -32602,
      message: 'the upstream MCP server "n" does not offer subscriptions; the resource "n://1" was not subscribed to',
    })
    await expect(catalog.prompts.get('n_hello', undefined)).rejects.toMatchObject({
      code: -32602,
      message: 'there is no prompt named "n_hello"',
    })
    // it lists no templates (no handler at all): an empty listing, not a failure said on every read
    expect(await catalog.resources.listTemplates()).toEqual([])
    expect(said).toEqual([])
    catalog.close()
    await close()
  })
})

describe('toMcpServer with and without the catalog', () => {
  const capabilitiesOf = async (options: Parameters<typeof toMcpServer>[2]) => {
    const { client, close } = await linked(toMcpServer(fromTools([]), { name: 's', version: '0' }, options))
    const caps = client.getServerCapabilities()
    await close()
    return caps
  }

  it('declares resources and prompts only when given them', async () => {
    expect(await capabilitiesOf({})).toEqual({ tools: { listChanged: true } })
    const catalog = newCatalog([])
    expect(await capabilitiesOf({ resources: catalog.resources, prompts: catalog.prompts })).toEqual({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
    })
  })
})
