/**
 * The proxy's reading of the traffic: which host-to-server `tools/list` requests are
 * pending, the schemas their responses listed, and each `tools/call` checked against
 * them. Pure steps over an immutable state; the proxy holds the one current value.
 *
 * @since 0.1.0
 */
import type { Catalogue, SeenSet, UnknownKeyWarning } from './check.js'
import { catalogueTolerating, checkCall, emptyCatalogue, emptySeenSet } from './check.js'
import { idText, isRecord, own } from './text.js'

/** @since 0.1.0 */
export interface SideChannel {
  /**
   * Pending host-to-server `tools/list` requests, keyed by the JSON text of their id (so `1` and `"1"`
   * stay apart). Ids are per direction: only responses from the server are matched against these.
   */
  readonly listing: ReadonlySet<string>
  /** The declarations of the listing being assembled page by page; none when no listing is under way. */
  readonly pages: ReadonlyArray<unknown> | undefined
  /** The schemas calls are audited against now: replaced when a listing's last page arrives. */
  readonly cache: Catalogue
  /** Names never reported besides `reason`. */
  readonly tolerate: ReadonlyArray<string>
  /** The (tool, key) pairs already reported: each is reported once. */
  readonly seen: SeenSet
  /** Whether a listing ever completed: before one, no call can be audited. */
  readonly hasListing: boolean
  /** Whether a call made before any listing was already reported (it is reported once). */
  readonly toldUnlisted: boolean
}

/** What `observe` emits: a warning, or (once) that a tool was called before any listing. @since 0.1.0 */
export type Event =
  | { readonly _tag: 'Warning'; readonly warning: UnknownKeyWarning }
  | { readonly _tag: 'Unlisted'; readonly tool: string; readonly id: string }

/** @since 0.1.0 */
export type Direction = 'host' | 'server'

/** The initial state: nothing listed, pending or reported. @since 0.1.0 */
export const newSideChannel = (tolerate: ReadonlyArray<string> = []): SideChannel => ({
  listing: new Set(),
  pages: undefined,
  cache: emptyCatalogue,
  tolerate,
  seen: emptySeenSet,
  hasListing: false,
  toldUnlisted: false,
})

const idKey = (id: unknown): string | undefined =>
  typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? JSON.stringify(id) : undefined

// MCP lists `{ name, inputSchema }`; the audit's steps read the OpenAI shape.
const asDeclaration = (tool: unknown): unknown =>
  isRecord(tool)
    ? { type: 'function', function: { name: own(tool, 'name'), parameters: own(tool, 'inputSchema') } }
    : undefined

const fromHost = (s: SideChannel, msg: unknown): readonly [Event | undefined, SideChannel] => {
  const method = own(msg, 'method')
  if (method === 'tools/list') {
    const key = idKey(own(msg, 'id'))
    if (key === undefined) return [undefined, s]
    // a listing that starts without a cursor starts over; a later page adds to the
    // one being assembled
    const fresh = own(own(msg, 'params'), 'cursor') === undefined || s.pages === undefined
    return [undefined, { ...s, listing: new Set(s.listing).add(key), pages: fresh ? [] : s.pages }]
  }
  if (method !== 'tools/call') return [undefined, s]
  const params = own(msg, 'params')
  const name = own(params, 'name')
  if (typeof name !== 'string') return [undefined, s]
  const id = idText(own(msg, 'id'))
  if (!s.hasListing)
    return s.toldUnlisted
      ? [undefined, s]
      : [
          { _tag: 'Unlisted', tool: name, id },
          { ...s, toldUnlisted: true },
        ]
  const [check, seen] = checkCall(s.cache, name, own(params, 'arguments'), id)(s.seen)
  const warning = check._tag === 'Audited' ? check.warning : undefined
  return [warning === undefined ? undefined : { _tag: 'Warning', warning }, seen === s.seen ? s : { ...s, seen }]
}

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
  if (!Array.isArray(tools)) return { ...s, listing, pages: undefined }
  const pages = [...(s.pages ?? []), ...tools.map(asDeclaration)]
  if (typeof own(result, 'nextCursor') === 'string') return { ...s, listing, pages }
  return { ...s, listing, pages: undefined, cache: catalogueTolerating(s.tolerate)(pages), hasListing: true }
}

/**
 * Reads one parsed message (or a batch: an array, each element read in turn) from one side, and
 * returns the events it emitted with the next state.
 *
 * @since 0.1.0
 */
export const observe =
  (from: Direction, message: unknown) =>
  (s: SideChannel): readonly [ReadonlyArray<Event>, SideChannel] => {
    const messages: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    let state = s
    const events: Array<Event> = []
    for (const m of messages) {
      if (from === 'server') state = fromServer(state, m)
      else {
        const [e, next] = fromHost(state, m)
        state = next
        if (e !== undefined) events.push(e)
      }
    }
    return [events, state]
  }

/**
 * Whether a server line can matter: only while a listing is pending. Lets the proxy skip almost all
 * server output without parsing it.
 *
 * @since 0.1.0
 */
export const isAwaitingListing = (s: SideChannel): boolean => s.listing.size > 0
