/**
 * The gateway's resources and prompts: what every upstream lists, served as one catalog. Prompts are
 * published as tools are, `prefix_name`, and routed back by the longest prefix. Resources keep their own
 * URIs: a read goes to the upstream whose last listing holds the URI (the first in config order when
 * several do), else to the first whose resource template matches it. Subscriptions are counted per URI
 * and upstream, so an upstream is subscribed once however many sessions ask, and its updates reach only
 * the sessions that subscribed. Policy and audit stay on tools.
 *
 * One file: over 500 lines because `newCatalog` is one closure over every upstream's last listing, the URIs
 * each owns and the subscriptions counted per URI; routing a read, a subscription and a completion read the
 * same state.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js'
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { cut, describeError } from '../kernel/describe.js'
import { longestTagOf, namespaceOf } from '../kernel/longest.js'
import type { Upstream, UpstreamNotice } from './upstream.js'
import type { ResourceSession, ServedCompletions, ServedPrompts, ServedResources } from '../mcp/served.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One upstream of the catalog, in config order (the order decides URI collisions).
 *
 * @since 0.1.0
 * @category model
 */
export interface CatalogEntry {
  readonly name: string
  readonly prefix: string
  readonly upstream: Pick<Upstream, 'client' | 'onNotice'>
  /** Milliseconds each request to it may take (the SDK's 60 s when absent). */
  readonly timeout?: number
}

/**
 * @since 0.1.0
 * @category model
 */
export interface CatalogOptions {
  /** Told once of each hidden resource or prompt, and of each failed listing. */
  readonly diagnose?: (message: string) => void
  /**
   * Milliseconds a listing waits for a slow upstream before it serves what that upstream listed last; the hosts
   * are told (`list_changed`) when its fresh listing differs. Default 2 000.
   */
  readonly listWaitMs?: number
  /** URIs one session may be subscribed to at once. Default 1 000. */
  readonly maxSubscriptions?: number
}

/**
 * @since 0.1.0
 * @category model
 */
export interface Catalog {
  readonly resources: ServedResources
  readonly prompts: ServedPrompts
  readonly complete: ServedCompletions
  /** Stops listening to the upstreams. */
  readonly close: IO<void>
}

/**
 * What `claimFirst` decided: each key served once, from the first listing (in config order) that holds
 * it; every later copy hidden, with the listing that keeps it.
 *
 * @since 0.1.0
 * @category model
 */
export interface Claimed<A> {
  readonly served: ReadonlyArray<{ readonly item: A; readonly from: number }>
  readonly hidden: ReadonlyArray<{ readonly key: string; readonly from: number; readonly keptBy: number }>
}

// bounds on what an upstream may make the gateway hold
const MAX_PAGES = 100
const MAX_ITEMS = 10_000
const MAX_URI = 8_192
const MAX_SAID = 1_000
const SHOWN = 200

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Each key once, from the first listing that holds it (config order), whatever the order the listings
 * arrived in; an absent listing (an upstream down, or failed) claims nothing. A key listed twice by one
 * upstream is served once and not reported.
 *
 * @example
 * import { claimFirst } from 'toolstack/gateway'
 * const c = claimFirst((u: string) => u)([['a', 'b'], undefined, ['b', 'c']])
 * assert.deepStrictEqual(c.served.map((s) => [s.item, s.from]), [['a', 0], ['b', 0], ['c', 2]])
 * assert.deepStrictEqual(c.hidden, [{ key: 'b', from: 2, keptBy: 0 }])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const claimFirst =
  <A>(keyOf: (a: A) => string) =>
  (listings: ReadonlyArray<ReadonlyArray<A> | undefined>): Claimed<A> => {
    const owner = new Map<string, number>()
    const served: Array<{ readonly item: A; readonly from: number }> = []
    const hidden: Array<{ readonly key: string; readonly from: number; readonly keptBy: number }> = []
    listings.forEach((listing, from) => {
      for (const item of listing ?? []) {
        const key = keyOf(item)
        const keptBy = owner.get(key)
        if (keptBy === undefined) {
          owner.set(key, from)
          served.push({ item, from })
        } else if (keptBy !== from) hidden.push({ key, from, keptBy })
      }
    })
    return { served, hidden }
  }

/**
 * The upstream a URI goes to: of those whose listing holds it (`owners`, in config order), the first, up or down.
 * A URI keeps its owner while the owner is down (a read names it, and no other upstream's copy or catch-all
 * template answers in its place); it moves only when the owner, listing again, no longer holds it, or on a reload.
 *
 * @example
 * import { pickOwner } from 'toolstack/gateway'
 * assert.strictEqual(pickOwner([0, 2]), 0)
 * assert.strictEqual(pickOwner([]), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const pickOwner = (owners: ReadonlyArray<number>): number | undefined => owners[0]

/**
 * Every upstream whose template matches `uri`, in config order. A template the SDK cannot parse matches
 * nothing.
 *
 * @example
 * import { templateOwners } from 'toolstack/gateway'
 * const owners = templateOwners([['demo://a/{id}'], undefined, ['demo://{kind}/{id}']])
 * assert.deepStrictEqual(owners('demo://a/1'), [0, 2])
 * assert.deepStrictEqual(owners('other://a/1'), [])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const templateOwners = (
  templates: ReadonlyArray<ReadonlyArray<string> | undefined>,
): ((uri: string) => ReadonlyArray<number>) => {
  const parsed = templates.map(
    (ts) =>
      ts?.flatMap((t) => {
        try {
          return [new UriTemplate(t)]
        } catch {
          return []
        }
      }) ?? [],
  )
  return (uri) =>
    parsed.flatMap((ts, i) =>
      ts.some((t) => {
        try {
          return t.match(uri) !== null
        } catch {
          return false
        }
      })
        ? [i]
        : [],
    )
}

/**
 * A prompt's published name: the tools' rule, `prefix_name` (the name itself under the empty prefix).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const promptName = (prefix: string, name: string): string => namespaceOf(prefix) + name

/**
 * The upstream (its index) and the upstream's own name a published prompt name routes to: the longest
 * prefix it starts with, as for tools; `undefined` when none.
 *
 * @example
 * import { routePrompt } from 'toolstack/gateway'
 * const route = routePrompt(['fs', 'fs_x'])
 * assert.deepStrictEqual(route('fs_x_read'), { index: 1, name: 'read' })
 * assert.deepStrictEqual(route('fs_read'), { index: 0, name: 'read' })
 * assert.strictEqual(route('web_read'), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const routePrompt = (
  prefixes: ReadonlyArray<string>,
): ((published: string) => { readonly index: number; readonly name: string } | undefined) => {
  const longest = longestTagOf(
    prefixes.map((p, index) => ({ tag: promptName(p, ''), index })),
    (e) => e.tag,
  )
  return (published) => {
    const hit = longest(published)
    return hit === undefined ? undefined : { index: hit.index, name: published.slice(hit.tag.length) }
  }
}

const shown = (s: string): string => JSON.stringify(cut(s, SHOWN))

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// an Error with a `code`: the SDK sends its message as it is (an McpError's carries "MCP error N: " already)
const failure = (code: number, message: string): Error & { readonly code: number } =>
  Object.assign(new Error(message), { code })

// an upstream's error message without the SDK's "MCP error N: " prefixes (each hop adds one)
const upstreamMessage = (e: unknown): string => describeError(e).replace(/^(MCP error -?\d+: )+/, '')

const optionsOf = (e: CatalogEntry): RequestOptions => (e.timeout === undefined ? {} : { timeout: e.timeout })

// what an upstream declares; an upstream's client is handed out once connected, when they are known
const capabilitiesOf = (client: Client): ServerCapabilities => client.getServerCapabilities() ?? {}

// every page the upstream offers, within MAX_PAGES and MAX_ITEMS
const collect = async <A>(
  page: (
    cursor: string | undefined,
  ) => Promise<{ readonly items: ReadonlyArray<A>; readonly nextCursor?: string | undefined }>,
): Promise<ReadonlyArray<A>> => {
  const out: Array<A> = []
  let cursor: string | undefined
  for (let n = 0; n < MAX_PAGES && out.length < MAX_ITEMS; n++) {
    const got = await page(cursor)
    out.push(...got.items.slice(0, MAX_ITEMS - out.length))
    cursor = got.nextCursor
    if (cursor === undefined) break
  }
  return out
}

// calls each listener; one that throws costs the others nothing
const tellAll = (listeners: ReadonlySet<IO<void>>): void => {
  for (const l of [...listeners]) {
    try {
      l()
    } catch {
      // as said
    }
  }
}

// adds a listener; returns its removal
const listenOn =
  (listeners: Set<IO<void>>) =>
  (listener: IO<void>): IO<void> => {
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
    }
  }

const cursorOf = (cursor: string | undefined): { cursor?: string } => (cursor === undefined ? {} : { cursor })

/**
 * The catalog over `entries` (config order): listens to every upstream's notices until `close`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const newCatalog = (entries: ReadonlyArray<CatalogEntry>, options: CatalogOptions = {}): Catalog => {
  const maxSubscriptions = options.maxSubscriptions ?? 1_000
  const listWaitMs = options.listWaitMs ?? 2_000
  const said = new Set<string>()
  // each message once, and a bounded number of them remembered
  const sayOnce = (message: string): void => {
    if (said.has(message) || said.size >= MAX_SAID) return
    said.add(message)
    options.diagnose?.(message)
  }
  const say = (message: string): void => options.diagnose?.(message)
  // every index below is one of entries' (config order)
  const entry = (i: number): CatalogEntry => entries[i] as CatalogEntry
  const nameOf = (i: number): string => JSON.stringify(entry(i).name)

  const resourcesListeners = new Set<IO<void>>()
  const promptsListeners = new Set<IO<void>>()

  // what each upstream listed last: kept while it is down (so a read names it) and served while it is slow
  const lastResources: Array<ReadonlyArray<Resource> | undefined> = entries.map(() => undefined)
  const lastTemplates: Array<ReadonlyArray<ResourceTemplate> | undefined> = entries.map(() => undefined)
  const lastPrompts: Array<ReadonlyArray<Prompt> | undefined> = entries.map(() => undefined)
  // each URI's owner: the first upstream (config order) whose last listing holds it
  let uriOwners = new Map<string, number>()
  let templateRoute: (uri: string) => ReadonlyArray<number> = () => []

  const reindex = (): void => {
    const owners = new Map<string, number>()
    lastResources.forEach((listed, i) =>
      listed?.forEach(({ uri }) => {
        if (!owners.has(uri)) owners.set(uri, i)
      }),
    )
    uriOwners = owners
    templateRoute = templateOwners(lastTemplates.map((ts) => ts?.map((t) => t.uriTemplate)))
  }

  // the upstream's client when it is up and declares `capability`, else undefined
  const clientWith = (i: number, capability: keyof ServerCapabilities): Client | undefined => {
    const client = entry(i).upstream.client()
    return client === undefined || capabilitiesOf(client)[capability] === undefined ? undefined : client
  }

  // one listing in flight per upstream and kind, however many hosts list at once
  const inFlight = new Map<string, Promise<boolean | undefined>>()

  // every upstream's listing, those up and declaring `capability`; one slower than listWaitMs is served
  // as it listed last, and the hosts are told when its fresh listing differs
  const listEach = async <R extends { readonly nextCursor?: string | undefined }, A>(
    capability: keyof ServerCapabilities,
    what: string,
    last: Array<ReadonlyArray<A> | undefined>,
    listeners: ReadonlySet<IO<void>>,
    page: (client: Client, params: { cursor?: string }, options: RequestOptions) => Promise<R>,
    itemsOf: (r: R) => ReadonlyArray<A>,
  ): Promise<ReadonlyArray<ReadonlyArray<A> | undefined>> =>
    Promise.all(
      entries.map(async (e, i) => {
        const client = clientWith(i, capability)
        if (client === undefined) return undefined
        const key = `${what}\n${i}`
        let listing = inFlight.get(key)
        if (listing === undefined) {
          const mine = collect(async (cursor) => {
            const r = await page(client, cursorOf(cursor), optionsOf(e))
            return { items: itemsOf(r), nextCursor: r.nextCursor }
          }).then(
            (listed) => {
              const changed = JSON.stringify(listed) !== JSON.stringify(last[i])
              last[i] = listed
              return changed
            },
            (err: unknown) => {
              // a server with resources but no templates (a low-level one often has none): nothing to list
              if (err instanceof McpError && err.code === ErrorCode.MethodNotFound) {
                last[i] = []
                return false
              }
              say(`the upstream MCP server ${nameOf(i)} could not list its ${what}: ${cut(describeError(err), 1_000)}`)
              return undefined
            },
          )
          listing = mine
          inFlight.set(key, mine)
          void mine.then(() => inFlight.delete(key))
        }
        let timer: NodeJS.Timeout | undefined
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), listWaitMs)
          timer.unref()
        })
        const got = await Promise.race([listing, late])
        clearTimeout(timer)
        if (got === 'late') {
          void listing.then((changed) => {
            if (changed !== true) return
            reindex()
            tellAll(listeners)
          })
          return last[i]
        }
        return got === undefined ? undefined : last[i]
      }),
    )

  // each key once, the first upstream's; the others' copies said once
  const servedOnce = <A>(
    what: string,
    keyOf: (a: A) => string,
    listings: ReadonlyArray<ReadonlyArray<A> | undefined>,
  ): Claimed<A>['served'] => {
    const claimed = claimFirst(keyOf)(listings)
    for (const h of claimed.hidden)
      sayOnce(
        `the ${what} ${shown(h.key)} of the upstream MCP server ${nameOf(h.from)} is hidden: ` +
          `${nameOf(h.keptBy)} lists the same one and comes first in the configuration`,
      )
    return claimed.served
  }

  // resources and templates: listed, the routes rebuilt, each key served once
  const listServed = async <R extends { readonly nextCursor?: string | undefined }, A>(
    what: 'resource' | 'resource template',
    last: Array<ReadonlyArray<A> | undefined>,
    page: (client: Client, params: { cursor?: string }, options: RequestOptions) => Promise<R>,
    itemsOf: (r: R) => ReadonlyArray<A>,
    keyOf: (a: A) => string,
  ): Promise<ReadonlyArray<A>> => {
    const listings = await listEach('resources', `${what}s`, last, resourcesListeners, page, itemsOf)
    reindex()
    // claimed over what each upstream listed last, down or not: a down upstream keeps its URIs, so another's copy
    // stays hidden; what is served is what the upstreams that answered now listed
    return servedOnce(what, keyOf, last)
      .filter((s) => listings[s.from] !== undefined)
      .map((s) => s.item)
  }
  const listResources = (): Promise<ReadonlyArray<Resource>> =>
    listServed(
      'resource',
      lastResources,
      (c, params, o) => c.listResources(params, o),
      (r) => r.resources,
      (r) => r.uri,
    )
  const listTemplates = (): Promise<ReadonlyArray<ResourceTemplate>> =>
    listServed(
      'resource template',
      lastTemplates,
      (c, params, o) => c.listResourceTemplates(params, o),
      (r) => r.resourceTemplates,
      (t) => t.uriTemplate,
    )

  const ownerOf = (uri: string): number | undefined => uriOwners.get(uri) ?? pickOwner(templateRoute(uri))

  // one re-listing in flight for every read that missed the index
  let relisting: Promise<void> | undefined
  const relist = (): Promise<void> =>
    (relisting ??= Promise.all([listResources(), listTemplates()])
      .then(() => undefined)
      .finally(() => {
        relisting = undefined
      }))

  // an upstream up and never listed may own a URI another's template matches: it is listed before it is passed over
  const unlisted = (): boolean =>
    entries.some(
      (_, i) =>
        clientWith(i, 'resources') !== undefined && (lastResources[i] === undefined || lastTemplates[i] === undefined),
    )

  const route = async (uri: string): Promise<number> => {
    if (!uriOwners.has(uri) && unlisted()) await relist()
    const known = ownerOf(uri)
    if (known !== undefined) return known
    await relist()
    const found = ownerOf(uri)
    if (found === undefined)
      throw failure(
        ErrorCode.InvalidParams,
        `there is no resource ${shown(uri)}: no upstream lists it or a template that matches it`,
      )
    return found
  }

  const running = (i: number, what: string): Client => {
    const client = entry(i).upstream.client()
    if (client === undefined)
      throw failure(ErrorCode.InternalError, `the upstream MCP server ${nameOf(i)} is not running; ${what}`)
    return client
  }

  // an upstream's own error, named and cut
  const upstreamFailed = (i: number, e: unknown): Error =>
    failure(
      e instanceof McpError ? e.code : ErrorCode.InternalError,
      `the upstream MCP server ${nameOf(i)} failed: ${JSON.stringify(cut(upstreamMessage(e), 1_000))}`,
    )

  const read = async (uri: string): Promise<ReadResourceResult> => {
    const i = await route(uri)
    const client = running(i, `the resource ${shown(uri)} was not read`)
    try {
      return await client.readResource({ uri }, optionsOf(entry(i)))
    } catch (e) {
      throw upstreamFailed(i, e)
    }
  }

  // subscriptions: one upstream subscription per (upstream, URI), however many sessions hold it
  interface Held {
    count: number
    readonly ready: Promise<void>
  }
  const held = new Map<string, Held>()
  const keyOf = (i: number, uri: string): string => `${i}\n${uri}`
  interface SessionState {
    readonly subs: Map<string, number>
    readonly onUpdated: (uri: string) => void
  }
  const sessions = new Set<SessionState>()

  const acquire = (i: number, uri: string, client: Client): Promise<void> => {
    const key = keyOf(i, uri)
    const now = held.get(key)
    if (now !== undefined) {
      now.count++
      return now.ready
    }
    const ready = client.subscribeResource({ uri }, optionsOf(entry(i))).then(() => undefined)
    const mine: Held = { count: 1, ready }
    held.set(key, mine)
    ready.catch(() => {
      if (held.get(key) === mine) held.delete(key)
    })
    return ready
  }

  const release = (i: number, uri: string): void => {
    const key = keyOf(i, uri)
    const now = held.get(key)
    if (now === undefined) return
    now.count--
    if (now.count > 0) return
    held.delete(key)
    entry(i)
      .upstream.client()
      ?.unsubscribeResource({ uri }, optionsOf(entry(i)))
      .catch(() => undefined)
  }

  const openSession = (onUpdated: (uri: string) => void): ResourceSession => {
    const state: SessionState = { subs: new Map(), onUpdated }
    sessions.add(state)
    return {
      subscribe: async (uri) => {
        if (state.subs.has(uri)) return
        if (uri.length > MAX_URI)
          throw failure(ErrorCode.InvalidParams, `a URI to subscribe to has at most ${MAX_URI} characters`)
        const full = (): boolean => state.subs.size >= maxSubscriptions
        const tooMany = `a session may subscribe to at most ${maxSubscriptions} resources at once`
        if (full()) throw failure(ErrorCode.InvalidRequest, tooMany)
        const i = await route(uri)
        const client = running(i, `the resource ${shown(uri)} was not subscribed to`)
        if (capabilitiesOf(client).resources?.subscribe !== true)
          throw failure(
            ErrorCode.InvalidParams,
            `the upstream MCP server ${nameOf(i)} does not offer subscriptions; the resource ${shown(uri)} was not subscribed to`,
          )
        // checked again: other subscriptions of this session, or its close, may have come during the routing
        if (state.subs.has(uri) || !sessions.has(state)) return
        if (full()) throw failure(ErrorCode.InvalidRequest, tooMany)
        state.subs.set(uri, i)
        try {
          await acquire(i, uri, client)
        } catch (e) {
          // a failed upstream subscription is dropped for every session that shared it (see acquire)
          if (state.subs.get(uri) === i) state.subs.delete(uri)
          throw upstreamFailed(i, e)
        }
      },
      unsubscribe: (uri) => {
        const i = state.subs.get(uri)
        if (i !== undefined) {
          state.subs.delete(uri)
          release(i, uri)
        }
        return Promise.resolve()
      },
      close: () => {
        sessions.delete(state)
        for (const [uri, i] of state.subs) release(i, uri)
        state.subs.clear()
      },
    }
  }

  const updated = (i: number, uri: string): void => {
    for (const s of [...sessions]) {
      if (s.subs.get(uri) !== i) continue
      try {
        s.onUpdated(uri)
      } catch {
        // a session that cannot be told costs the others nothing
      }
    }
  }

  // a restarted upstream has a new client, without the old one's subscriptions
  const resubscribe = (i: number): void => {
    const client = entry(i).upstream.client()
    if (client === undefined) return
    for (const key of held.keys()) {
      const at = key.indexOf('\n')
      if (Number(key.slice(0, at)) !== i) continue
      const uri = key.slice(at + 1)
      client
        .subscribeResource({ uri }, optionsOf(entry(i)))
        .catch((e: unknown) =>
          say(
            `the upstream MCP server ${nameOf(i)} refused the subscription to ${shown(uri)} again: ${cut(upstreamMessage(e), 1_000)}`,
          ),
        )
    }
  }

  const onNotice = (i: number) => (n: UpstreamNotice) => {
    switch (n._tag) {
      case 'Up':
        resubscribe(i)
        // what it owns is known from its listing: listed as it comes up, so a read meanwhile finds its owner
        void relist()
        tellAll(resourcesListeners)
        tellAll(promptsListeners)
        return
      case 'Down':
        tellAll(resourcesListeners)
        tellAll(promptsListeners)
        return
      case 'ResourcesChanged':
        tellAll(resourcesListeners)
        return
      case 'PromptsChanged':
        tellAll(promptsListeners)
        return
      case 'ResourceUpdated':
        updated(i, n.uri)
        return
    }
  }
  const offs = entries.map((e, i) => e.upstream.onNotice(onNotice(i)))

  // prompts
  const promptRoute = routePrompt(entries.map((e) => e.prefix))

  const listPrompts = async (): Promise<ReadonlyArray<Prompt>> => {
    const listings = await listEach(
      'prompts',
      'prompts',
      lastPrompts,
      promptsListeners,
      (c, params, o) => c.listPrompts(params, o),
      (r) => r.prompts,
    )
    const published = listings.map((l, i) =>
      l?.flatMap((p) => {
        const name = promptName(entry(i).prefix, p.name)
        const to = promptRoute(name)
        if (to?.index === i) return [{ ...p, name }]
        // with nested prefixes (`fs`, `fs_x`) a name can route to the other upstream; an empty name to none
        sayOnce(
          `the prompt ${shown(p.name)} of the upstream MCP server ${nameOf(i)} is hidden: ${shown(name)} routes to ` +
            (to === undefined ? 'no upstream' : `${nameOf(to.index)}, whose prefix is longer`),
        )
        return []
      }),
    )
    return claimFirst((p: Prompt) => p.name)(published).served.map((s) => s.item)
  }

  const getPrompt = async (
    name: string,
    args: Readonly<Record<string, string>> | undefined,
  ): Promise<GetPromptResult> => {
    const to = promptRoute(name)
    if (to === undefined) throw failure(ErrorCode.InvalidParams, `there is no prompt named ${shown(name)}`)
    const client = running(to.index, `the prompt ${shown(name)} was not fetched`)
    if (capabilitiesOf(client).prompts === undefined)
      throw failure(ErrorCode.InvalidParams, `there is no prompt named ${shown(name)}`)
    try {
      return await client.getPrompt(
        { name: to.name, ...(args === undefined ? {} : { arguments: { ...args } }) },
        optionsOf(entry(to.index)),
      )
    } catch (e) {
      throw upstreamFailed(to.index, e)
    }
  }

  // completion: a prompt's argument goes where prompts/get goes; a resource template's to the first upstream (config
  // order) that lists that template, else to the one its URI would be read from. An upstream that offers no
  // completion has no suggestions.
  const templateOwner = (uri: string): number | undefined =>
    pickOwner(lastTemplates.flatMap((ts, i) => (ts?.some((t) => t.uriTemplate === uri) === true ? [i] : [])))
  const complete = async (params: CompleteRequest['params']): Promise<CompleteResult> => {
    const ref = params.ref
    let i: number
    let forwarded: CompleteRequest['params']
    if (ref.type === 'ref/prompt') {
      const to = promptRoute(ref.name)
      if (to === undefined) throw failure(ErrorCode.InvalidParams, `there is no prompt named ${shown(ref.name)}`)
      i = to.index
      forwarded = { ...params, ref: { ...ref, name: to.name } }
    } else {
      let owner = templateOwner(ref.uri)
      if (owner === undefined) {
        await relist()
        owner = templateOwner(ref.uri) ?? ownerOf(ref.uri)
      }
      if (owner === undefined)
        throw failure(ErrorCode.InvalidParams, `there is no resource template ${shown(ref.uri)} to complete`)
      i = owner
      forwarded = params
    }
    const client = running(i, 'nothing was completed')
    if (capabilitiesOf(client).completions === undefined) return { completion: { values: [] } }
    try {
      return await client.complete(forwarded, optionsOf(entry(i)))
    } catch (e) {
      throw upstreamFailed(i, e)
    }
  }

  return {
    resources: {
      list: listResources,
      listTemplates,
      read,
      openSession,
      onListChanged: listenOn(resourcesListeners),
    },
    prompts: { list: listPrompts, get: getPrompt, onListChanged: listenOn(promptsListeners) },
    complete,
    close: () => {
      for (const off of offs) off()
    },
  }
}

/**
 * A catalog that a gateway's reload replaces while hosts hold sessions on it: listings, reads and prompts go to
 * the catalog in force, each session's subscriptions are taken over by the new one, the old one is closed, and
 * every listener hears that both lists may have changed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const replaceableCatalog = (first: Catalog): Catalog & { readonly replace: (next: Catalog) => void } => {
  let now = first
  const resourcesListeners = new Set<IO<void>>()
  const promptsListeners = new Set<IO<void>>()
  const hook = (c: Catalog): ReadonlyArray<IO<void>> => [
    c.resources.onListChanged(() => tellAll(resourcesListeners)),
    c.prompts.onListChanged(() => tellAll(promptsListeners)),
  ]
  let offs = hook(first)
  // each host session: its session on the catalog in force, and the URIs it holds, to subscribe again
  interface Following {
    inner: ResourceSession
    readonly uris: Set<string>
    readonly onUpdated: (uri: string) => void
  }
  const following = new Set<Following>()
  const openSession = (onUpdated: (uri: string) => void): ResourceSession => {
    const f: Following = { inner: now.resources.openSession(onUpdated), uris: new Set(), onUpdated }
    following.add(f)
    return {
      subscribe: async (uri) => {
        await f.inner.subscribe(uri)
        f.uris.add(uri)
        // a replace while subscribing left it on the old catalog: the one in force takes it too (on the same
        // catalog, a URI held already is answered at once)
        await f.inner.subscribe(uri)
      },
      unsubscribe: async (uri) => {
        f.uris.delete(uri)
        await f.inner.unsubscribe(uri)
      },
      close: () => {
        following.delete(f)
        f.inner.close()
      },
    }
  }
  const replace = (next: Catalog): void => {
    const before = now
    now = next
    for (const off of offs) off()
    offs = hook(next)
    for (const f of following) {
      const old = f.inner
      f.inner = next.resources.openSession(f.onUpdated)
      old.close()
      // a URI the new configuration no longer routes is dropped
      for (const uri of f.uris) f.inner.subscribe(uri).catch(() => f.uris.delete(uri))
    }
    before.close()
    tellAll(resourcesListeners)
    tellAll(promptsListeners)
  }
  return {
    resources: {
      list: () => now.resources.list(),
      listTemplates: () => now.resources.listTemplates(),
      read: (uri) => now.resources.read(uri),
      openSession,
      onListChanged: listenOn(resourcesListeners),
    },
    prompts: {
      list: () => now.prompts.list(),
      get: (name, args) => now.prompts.get(name, args),
      onListChanged: listenOn(promptsListeners),
    },
    complete: (params) => now.complete(params),
    close: () => {
      for (const off of offs) off()
      now.close()
    },
    replace,
  }
}
