/**
 * `registry`: one namespace over many providers. Each provider's tools are published under its own
 * prefix, and each call is routed back to the provider that owns the name, with the prefix stripped.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { Batch, BatchProvider, Provider, ToolCall, ToolDeclaration } from '../kernel/model.js'
import { assertProvider } from '../kernel/model.js'
import { batchOf, runBatch } from '../steps/Batch.js'
import type { Step } from '../steps/answer.js'
import { answerHere, readPositions, sendInOrder } from '../steps/answer.js'
import { cut, describeError, describeValue, escapeControls } from '../kernel/describe.js'
import { memberOf, own } from '../kernel/guards.js'
import { longestTagOf, namespaceOf } from '../kernel/longest.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One provider and the namespace it is published under: its tools are listed as
 * `prefix + separator + name`.
 *
 * @since 0.1.0
 * @category model
 */
export interface RegistryEntry {
  /**
   * Letters, digits, `_` and `-`; unique within a registry. The empty string publishes the provider's names
   * unchanged (no separator either): it owns every name no other entry's namespace starts with.
   */
  readonly prefix: string
  readonly provider: Provider<unknown>
  /** Letters, digits, `_` and `-`; not empty. Default `_`. */
  readonly separator?: string
}

/**
 * A provider's listing failed: a Left (kept as `error`) or a rejection (the reason).
 *
 * @since 0.1.0
 * @category model
 */
export interface ListingFailed {
  readonly _tag: 'ListingFailed'
  readonly prefix: string
  readonly error: unknown
}

/**
 * A provider listed something the registry cannot publish: a listing that is not an
 * array, or a declaration without a non-empty string `function.name`.
 *
 * @since 0.1.0
 * @category model
 */
export interface ListingUnreadable {
  readonly _tag: 'ListingUnreadable'
  readonly prefix: string
  /** What is wrong, in words. */
  readonly problem: string
}

/**
 * A tool whose published name would route to another provider, because that provider's namespace is
 * longer and nests inside this one's (`a_` + `b_c` and `a_b_` + `c` are both `a_b_c`).
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolShadowed {
  readonly _tag: 'ToolShadowed'
  readonly prefix: string
  /** The tool's name in its own provider. */
  readonly tool: string
  /** The name it would be published as. */
  readonly published: string
  /** The prefix of the provider that name routes to instead. */
  readonly shadowedBy: string
}

/**
 * Why a registry's listing failed. Running a batch never fails.
 *
 * @since 0.1.0
 * @category model
 */
export type RegistryError = ListingFailed | ListingUnreadable | ToolShadowed

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category constructors
 */
export const listingFailed = (prefix: string, error: unknown): RegistryError => ({
  _tag: 'ListingFailed',
  prefix,
  error,
})

/**
 * @since 0.1.0
 * @category constructors
 */
export const listingUnreadable = (prefix: string, problem: string): RegistryError => ({
  _tag: 'ListingUnreadable',
  prefix,
  problem,
})

/**
 * @since 0.1.0
 * @category constructors
 */
export const toolShadowed = (prefix: string, tool: string, published: string, shadowedBy: string): RegistryError => ({
  _tag: 'ToolShadowed',
  prefix,
  tool,
  published,
  shadowedBy,
})

/**
 * One namespace over many providers. Each provider's tools are published as `prefix + separator + name`;
 * a call goes to the provider with the longest `prefix + separator` its name starts with, stripped of
 * it, all of one provider's calls as one batch in the model's order, providers concurrently.
 *
 * A batch never fails: an unknown name, a malformed call, a provider that fails or returns too few
 * results become `is_error` results for exactly the calls concerned. The listing fails (a Left
 * `RegistryError`) when any provider cannot list, because a silently shorter catalogue leaves a model
 * wondering where a capability went.
 *
 * A registry is a provider, so registries nest. Entries are validated here: a bad prefix or separator,
 * a duplicate prefix or namespace, a non-provider or an unknown member throws a `TypeError` naming the
 * entry and the problem.
 *
 * @example
 * import { registry } from 'toolstack'
 * import * as TE from 'fp-ts/lib/TaskEither.js'
 * const echo = {
 *   toolsForLlm: TE.right([{ type: 'function' as const, function: { name: 'say' } }]),
 *   executeToolCalls: (calls: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string } }>) =>
 *     TE.right(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: c.function.name }))),
 * }
 * const tools = registry([{ prefix: 'echo', provider: echo }])
 * const listed = await tools.toolsForLlm()
 * assert.deepStrictEqual(listed._tag === 'Right' && listed.right.map((d) => d.function.name), ['echo_say'])
 * const out = await tools.executeToolCalls([{ id: '1', function: { name: 'echo_say', arguments: '' } }])()
 * assert.deepStrictEqual(out._tag === 'Right' && out.right.map((r) => r.content), ['say'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const registry = (entries: ReadonlyArray<RegistryEntry>): BatchProvider<RegistryError> => {
  const table = readEntries(entries)
  const decideCall = decide(table)
  const who = (route: Route): string => `the tool provider for ${JSON.stringify(route.tag)}`

  // each provider gets its own calls as one batch, all providers at once
  const executeBatch = (batch: Batch) => () => {
    const read = readPositions(batch.calls)
    if (isLeft(read)) return Promise.resolve(right(read.left))
    const { calls, unreadable } = read.right
    const steps = calls.map((call, i) => unreadable[i] ?? decideCall(call))
    return sendInOrder(batch, calls, steps, (route, b) => route.send(b)(), who).then(right)
  }

  const listOne = async (route: Route): Promise<Publish> => {
    try {
      const listed: unknown = await route.provider.toolsForLlm()
      const tag =
        typeof listed === 'object' && listed !== null ? (listed as { readonly _tag?: unknown })._tag : undefined
      if (tag === 'Left') return left(listingFailed(route.prefix, (listed as { readonly left: unknown }).left))
      if (tag !== 'Right')
        return left(listingUnreadable(route.prefix, `the listing is ${describeValue(listed)}, not an Either`))
      return publish(table, route)((listed as { readonly right: unknown }).right)
    } catch (e) {
      return left(listingFailed(route.prefix, e))
    }
  }

  return {
    toolsForLlm: async () => {
      const listings = await Promise.all(table.routes.map(listOne))
      const out: Array<ToolDeclaration> = []
      // the first failure in registration order, whichever settled first
      for (const l of listings) {
        if (l._tag === 'Left') return l
        out.push(...l.right)
      }
      return right(out)
    },
    executeToolCalls: (calls) => executeBatch(batchOf(calls)),
    executeBatch,
  }
}

// -------------------------------------------------------------------------------------
// destructors
// -------------------------------------------------------------------------------------

/**
 * Case analysis over a `RegistryError`.
 *
 * @since 0.1.0
 * @category destructors
 */
export const matchRegistryError =
  <A>(cases: {
    readonly ListingFailed: (e: ListingFailed) => A
    readonly ListingUnreadable: (e: ListingUnreadable) => A
    readonly ToolShadowed: (e: ToolShadowed) => A
  }) =>
  (e: RegistryError): A => {
    switch (e._tag) {
      case 'ListingFailed':
        return cases.ListingFailed(e)
      case 'ListingUnreadable':
        return cases.ListingUnreadable(e)
      case 'ToolShadowed':
        return cases.ToolShadowed(e)
    }
  }

const REGISTRY_ERROR_TAGS: ReadonlySet<unknown> = new Set(['ListingFailed', 'ListingUnreadable', 'ToolShadowed'])

const isRegistryError = (u: unknown): u is RegistryError =>
  REGISTRY_ERROR_TAGS.has(memberOf(u, '_tag')) && typeof memberOf(u, 'prefix') === 'string'

/**
 * Renders a `RegistryError` in one line for a human; a nested registry's error is rendered inside its
 * parent's.
 *
 * @example
 * import { drawRegistryError } from 'toolstack'
 * import { listingFailed } from './Registry.js'
 * assert.strictEqual(
 *   drawRegistryError(listingFailed('web', 'connection refused')),
 *   'registry: the provider under prefix "web" could not list its tools: connection refused',
 * )
 *
 * @since 0.1.0
 * @category destructors
 */
export const drawRegistryError: (e: RegistryError) => string = matchRegistryError({
  ListingFailed: (e) =>
    `registry: the provider under prefix ${quoteName(e.prefix)} could not list its tools: ${
      isRegistryError(e.error) ? drawRegistryError(e.error) : shownReason(describeError(e.error))
    }`,
  ListingUnreadable: (e) =>
    `registry: the provider under prefix ${quoteName(e.prefix)} listed tools the registry cannot publish: ${shownReason(e.problem)}`,
  ToolShadowed: (e) =>
    `registry: tool ${quoteName(e.tool)} of the provider under prefix ${quoteName(e.prefix)} ` +
    `would be published as ${quoteName(e.published)}, but calls to that name route to the provider ` +
    `under prefix ${quoteName(e.shadowedBy)}; rename the tool or choose prefixes whose namespaces do not nest`,
})

// -------------------------------------------------------------------------------------
// internal
// -------------------------------------------------------------------------------------

interface Route {
  readonly prefix: string
  /** `prefix + separator`: what published names start with. */
  readonly tag: string
  readonly provider: Provider<unknown>
  readonly send: ReturnType<typeof runBatch<unknown>>
}

interface Table {
  /** In registration order. */
  readonly routes: ReadonlyArray<Route>
  /** The route owning a name: the longest tag it starts with that leaves a name behind. */
  readonly routeOf: (name: string) => Route | undefined
}

const WHERE = 'registry'
const ALPHABET = /^[A-Za-z0-9_-]+$/
const DEFAULT_SEPARATOR = '_'
const MEMBERS: ReadonlySet<string> = new Set(['prefix', 'provider', 'separator'])

const readEntry = (u: unknown, i: number): Route => {
  const at = `${WHERE}: entry ${i}`
  if (typeof u !== 'object' || u === null || Array.isArray(u)) {
    throw new TypeError(`${at} must be an object { prefix, provider, separator? }, got ${describeValue(u)}`)
  }
  let prefix: unknown
  let provider: unknown
  let separator: unknown
  try {
    const unknownMembers = Object.keys(u).filter((k) => !MEMBERS.has(k))
    if (unknownMembers.length > 0) {
      throw new TypeError(
        `${at} has unknown member${unknownMembers.length > 1 ? 's' : ''} ` +
          `${unknownMembers.map((k) => JSON.stringify(k)).join(', ')} (known members: prefix, provider, separator)`,
      )
    }
    prefix = own(u, 'prefix')
    provider = own(u, 'provider')
    separator = own(u, 'separator')
  } catch (e) {
    if (e instanceof TypeError) throw e
    throw new TypeError(`${at} cannot be read: ${describeError(e)}`)
  }
  if (typeof prefix !== 'string' || (prefix !== '' && !ALPHABET.test(prefix))) {
    throw new TypeError(
      `${at}: prefix must be a string of letters, digits, "_" and "-" (or "" for the names unchanged), got ${describeValue(prefix)}`,
    )
  }
  const named = `${at} (prefix ${JSON.stringify(prefix)})`
  const sep = separator === undefined ? DEFAULT_SEPARATOR : separator
  if (typeof sep !== 'string' || !ALPHABET.test(sep)) {
    throw new TypeError(
      `${named}: separator must be a non-empty string of letters, digits, "_" and "-", got ${describeValue(sep)}`,
    )
  }
  assertProvider(named, provider)
  return { prefix, tag: namespaceOf(prefix, sep), provider, send: runBatch(provider) }
}

const readEntries = (entries: unknown): Table => {
  if (!Array.isArray(entries)) {
    throw new TypeError(
      `${WHERE}: expected an array of entries { prefix, provider, separator? }, got ${describeValue(entries)}`,
    )
  }
  const routes: Array<Route> = []
  const byPrefix = new Map<string, number>()
  const byTag = new Map<string, number>()
  entries.forEach((u: unknown, index) => {
    const r = readEntry(u, index)
    const samePrefix = byPrefix.get(r.prefix)
    if (samePrefix !== undefined) {
      throw new TypeError(`${WHERE}: entries ${samePrefix} and ${index} both use prefix ${JSON.stringify(r.prefix)}`)
    }
    const sameTag = byTag.get(r.tag)
    if (sameTag !== undefined) {
      throw new TypeError(
        `${WHERE}: entries ${sameTag} and ${index} both publish into the namespace ${JSON.stringify(r.tag)}, so their calls could not be told apart`,
      )
    }
    byPrefix.set(r.prefix, index)
    byTag.set(r.tag, index)
    routes.push(r)
  })
  return { routes, routeOf: longestTagOf(routes, (r) => r.tag) }
}

// a name a server or a model chose, quoted, cut, and with every control, format and bidirectional character escaped
// (JSON's escapes cover only C0): it is shown to a model, a host and a terminal
const quoteName = (s: string): string => escapeControls(JSON.stringify(cut(s, 80)))

// why a provider could not list, in a registry's error: it may be a server's text, many lines long
const shownReason = (s: string): string => escapeControls(cut(s, 300))

type Publish = Either<RegistryError, ReadonlyArray<ToolDeclaration>>

/**
 * A provider's listing renamed into its namespace, copied only along the path that changes. A
 * declaration without a non-empty string name fails the listing: passed through unrenamed it would be
 * unroutable (and could collide with a published name); dropped, the catalogue would silently shrink.
 */
const publish =
  (table: Table, route: Route) =>
  (listed: unknown): Publish => {
    if (!Array.isArray(listed))
      return left(listingUnreadable(route.prefix, `the listing is ${describeValue(listed)}, not an array`))
    const owner = table.routeOf
    const out: Array<ToolDeclaration> = []
    for (let i = 0; i < listed.length; i++) {
      const d: unknown = listed[i]
      let copy: ToolDeclaration
      let name: unknown
      try {
        const fn: unknown =
          typeof d === 'object' && d !== null ? (d as { readonly function?: unknown }).function : undefined
        if (typeof fn !== 'object' || fn === null) {
          return left(
            listingUnreadable(route.prefix, `declaration ${i} has no "function" object (got ${describeValue(d)})`),
          )
        }
        name = (fn as { readonly name?: unknown }).name
        if (typeof name !== 'string' || name === '') {
          return left(
            listingUnreadable(
              route.prefix,
              `declaration ${i} has no tool name (function.name is ${describeValue(name)})`,
            ),
          )
        }
        copy = {
          ...(d as ToolDeclaration),
          function: { ...(fn as ToolDeclaration['function']), name: route.tag + name },
        }
      } catch (e) {
        return left(listingUnreadable(route.prefix, `declaration ${i} cannot be read (${describeError(e)})`))
      }
      const published = copy.function.name
      const routed = owner(published)
      if (routed !== route) return left(toolShadowed(route.prefix, name, published, routed?.prefix ?? ''))
      out.push(copy)
    }
    return right(out)
  }

/** Send a renamed copy to a route, or answer here (`answerHere`: an `is_error` result, not forwarded). */
type Routing = Step<Route>

const MALFORMED = 'this tool call is malformed'
const SHAPE = 'a tool call looks like { "id": "…", "function": { "name": "…", "arguments": "{…}" } }'

const answered = answerHere

const decide = (table: Table) => {
  const route = table.routeOf
  return (call: unknown): Routing => {
    try {
      if (typeof call !== 'object' || call === null)
        return answered(call, `${MALFORMED}: it is ${describeValue(call)}; ${SHAPE}`)
      const fn: unknown = (call as { readonly function?: unknown }).function
      if (typeof fn !== 'object' || fn === null)
        return answered(call, `${MALFORMED}: it has no "function" object; ${SHAPE}`)
      const name: unknown = (fn as { readonly name?: unknown }).name
      if (typeof name !== 'string')
        return answered(call, `${MALFORMED}: its function.name is ${describeValue(name)}, not a string; ${SHAPE}`)
      const found = route(name)
      if (found === undefined) {
        const known = table.routes.map((r) => JSON.stringify(r.tag))
        return answered(
          call,
          known.length === 0
            ? `no tool named ${quoteName(name)}; no tools are registered`
            : `no tool named ${quoteName(name)}; known prefixes are ${known.join(', ')}`,
        )
      }
      // under the empty prefix the name is the provider's own: the very call goes on
      if (found.tag === '') return { _tag: 'Send', to: found }
      // a copy, so the caller's call keeps the model's name; `arguments` is the same reference, so a parse
      // an upper layer already made can be reused below
      const copy = { ...call, function: { ...fn, name: name.slice(found.tag.length) } } as ToolCall
      return { _tag: 'Send', to: found, call: copy }
    } catch (e) {
      return answered(call, `${MALFORMED}: it cannot be read (${describeError(e)}); ${SHAPE}`)
    }
  }
}
