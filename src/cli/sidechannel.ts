/**
 * The proxy's parsed copy of the traffic: which host-to-server `tools/list` requests
 * are pending, the schemas their responses listed, and each `tools/call` checked
 * against them. Pure steps over an immutable state; the proxy holds the one current
 * value.
 *
 * @since 0.1.0
 */
import type { SeenSet, UnknownKeyWarning } from '../index.js'
import { emptySeenSet } from '../index.js'
import type { Catalogue, Check } from './check.js'
import { bySeen, catalogueOf, checkCallWith, checkKeys, emptyCatalogue, mergeCatalogues, toleratedOf } from './check.js'
import { isRecord, own } from '../internal/guards.js'
import { callIdOf } from '../internal/calls.js'
import type { SkimmedCall } from './skim.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface SideChannel {
  /**
   * Host-to-server `tools/list` requests not answered yet, keyed by the JSON text of
   * their id (so `1` and `"1"` stay apart). Ids are per direction: only responses
   * coming from the server are matched against these.
   */
  readonly listing: ReadonlySet<string>
  /** The listing being assembled page by page; swapped in when its last page arrives. */
  readonly pending: Catalogue | undefined
  /** The schemas calls are audited against now. */
  readonly cache: Catalogue
  /** Names never reported: `reason`, and the `--tolerate` ones. */
  readonly tolerated: ReadonlySet<string>
  /** The (tool, key) pairs said already: each is said once. */
  readonly said: SeenSet
}

/**
 * @since 0.1.0
 * @category model
 */
export type Direction = 'host' | 'server'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Nothing listed, nothing pending, nothing said; `tolerate` adds names to `reason`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const newSideChannel = (tolerate: ReadonlyArray<string> = []): SideChannel => ({
  listing: new Set(),
  pending: undefined,
  cache: emptyCatalogue,
  tolerated: toleratedOf(tolerate),
  said: emptySeenSet,
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const idKey = (id: unknown): string | undefined =>
  typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? JSON.stringify(id) : undefined

// MCP lists `{ name, inputSchema }`; the pure steps read the OpenAI shape.
const asDeclaration = (tool: unknown): unknown =>
  isRecord(tool) ? { type: 'function', function: { name: own(tool, 'name'), parameters: own(tool, 'inputSchema') } } : undefined

const withListing = (s: SideChannel, listing: ReadonlySet<string>): SideChannel => ({ ...s, listing })

const fromHost = (s: SideChannel, msg: unknown): readonly [UnknownKeyWarning | undefined, SideChannel] => {
  const method = own(msg, 'method')
  if (method === 'tools/list') {
    const key = idKey(own(msg, 'id'))
    if (key === undefined) return [undefined, s]
    const listing = new Set(s.listing).add(key)
    // a listing that starts without a cursor starts over; a later page adds to the
    // one being assembled
    const fresh = own(own(msg, 'params'), 'cursor') === undefined || s.pending === undefined
    return [undefined, { ...s, listing, pending: fresh ? emptyCatalogue : s.pending }]
  }
  if (method === 'tools/call') {
    const params = own(msg, 'params')
    const name = own(params, 'name')
    if (typeof name !== 'string') return [undefined, s]
    return afterCheck(s, checkCallWith(bySeen, s.cache, name, own(params, 'arguments'), callIdOf(msg))(s.said))
  }
  return [undefined, s]
}

const afterCheck = (s: SideChannel, [check, said]: readonly [Check, SeenSet]): readonly [UnknownKeyWarning | undefined, SideChannel] => [
  check._tag === 'Audited' ? check.warning : undefined,
  said === s.said ? s : { ...s, said },
]

const fromServer = (s: SideChannel, msg: unknown): SideChannel => {
  if (s.listing.size === 0 || own(msg, 'method') !== undefined) return s
  const key = idKey(own(msg, 'id'))
  if (key === undefined || !s.listing.has(key)) return s
  const listing = new Set(s.listing)
  listing.delete(key)
  const result = own(msg, 'result')
  const tools = own(result, 'tools')
  // an error, or a result without a tool list, abandons the listing being assembled:
  // the cache is replaced only by a listing that completed
  if (!Array.isArray(tools)) return { ...withListing(s, listing), pending: undefined }
  const page = catalogueOf(s.tolerated)(tools.map(asDeclaration))
  const pending = mergeCatalogues(s.pending ?? emptyCatalogue, page)
  const next = own(result, 'nextCursor')
  return typeof next === 'string' ? { ...s, listing, pending } : { ...s, listing, pending: undefined, cache: pending }
}

/**
 * Reads one parsed message (or a batch: an array, each element read in turn) from
 * one side, and returns the warnings it raised with the next state.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const observe =
  (from: Direction, message: unknown) =>
  (s: SideChannel): readonly [ReadonlyArray<UnknownKeyWarning>, SideChannel] => {
    const messages: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    let state = s
    let warnings: Array<UnknownKeyWarning> | undefined
    for (const m of messages) {
      if (from === 'server') state = fromServer(state, m)
      else {
        const [w, next] = fromHost(state, m)
        state = next
        if (w !== undefined) (warnings ??= []).push(w)
      }
    }
    return [warnings ?? [], state]
  }

/**
 * `observe` for a host `tools/call` already read down to its id, tool and argument
 * keys (by `skimCall`): the same warning and the same next state as observing the
 * parsed message.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const observeCall =
  (call: SkimmedCall) =>
  (s: SideChannel): readonly [UnknownKeyWarning | undefined, SideChannel] =>
    afterCheck(s, checkKeys(bySeen, s.cache, call.name, call.keys, call.id)(s.said))

/**
 * Whether a server line can matter to the side channel: only while a listing is
 * pending. Lets the proxy skip parsing almost everything the server says.
 *
 * @since 0.1.0
 * @category utils
 */
export const isAwaitingListing = (s: SideChannel): boolean => s.listing.size > 0
