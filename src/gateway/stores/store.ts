/**
 * What a gateway remembers beyond one session, behind one interface: the human's "always" answers (grants),
 * which (tool, undeclared key) pairs have been said, how many calls carried each, and each tool's pinned
 * definition. The default keeps them
 * in this process; `file:` and `redis://` stores share them across restarts and across replicas.
 *
 * A store is never on a call's path: `grants` reads what this process knows now, and every write is made
 * after, off the call. A store that cannot reach its backend keeps answering from this process's memory
 * (`claim` resolves, never rejects) and says so once through `onNotice`.
 *
 * @since 0.1.0
 */
import { createHash } from 'node:crypto'
import type { IO } from 'fp-ts/lib/IO.js'
import type { Rule } from '../../steps/policy/Rule.js'
import type { PinMemory } from '../../steps/pins/Book.js'
import { rememberedKey } from '../../steps/audit/SeenSet.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How many calls carried one (tool, undeclared key) pair.
 *
 * @since 0.1.0
 * @category model
 */
export interface PairCount {
  readonly tool: string
  readonly key: string
  readonly calls: number
}

/**
 * What a gateway remembers beyond one session.
 *
 * @since 0.1.0
 * @category model
 */
export interface GatewayStore {
  /** The grants known now, for every session; synchronous, read at each judgement. */
  readonly grants: IO<ReadonlyArray<Rule>>
  /** Remembers an "always" answer: in `grants` at once, written to the backend after. */
  readonly addGrant: (rule: Rule) => void
  /**
   * Takes a grant back: out of `grants` at once, out of the backend after, so that every process sharing the store
   * drops it (their `onGrantsChanged` listeners are told). Nothing happens for a rule the store does not hold.
   */
  readonly revokeGrant: (rule: Rule) => void
  /**
   * Calls `listener` after `grants` changed from elsewhere (another replica, a re-read: a grant added or taken back);
   * returns the unsubscribe.
   */
  readonly onGrantsChanged: (listener: IO<void>) => IO<void>
  /**
   * Whether this process is the one to say (tool, key): true for the first claim of the pair among all the
   * processes sharing the store. Resolves from this process's memory when the backend cannot answer.
   */
  readonly claim: (tool: string, key: string) => Promise<boolean>
  /** Adds calls that carried each pair in this process (deltas), to the shared sum, after. */
  readonly addCounts: (counts: ReadonlyArray<PairCount>) => void
  /** The counts summed over every process sharing the store (this process's own when the backend cannot answer). */
  readonly stats: () => Promise<ReadonlyArray<PairCount>>
  /**
   * The gateway's pinned tool definitions and the changed ones awaiting acceptance (`withDefinitionPins`'s
   * `memory`): kept with the grants, so pins survive restarts and are shared by replicas; a pin or a change is
   * said by the first process to record it.
   */
  readonly pins: PinMemory
  /** Writes what is pending, then lets go of the backend. */
  readonly close: () => Promise<void>
}

/**
 * @since 0.1.0
 * @category model
 */
export interface StoreOptions {
  /** Told once when the backend becomes unreachable, and once when it is back (plain text, already bounded). */
  readonly onNotice?: (message: string) => void
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

// A pair as every store remembers it: tool and key each as the seen-set remembers a key (a long one by its start
// and a digest), as one text, so no two pairs share one
export const pairField = (tool: string, key: string): string =>
  JSON.stringify([rememberedKey(tool), rememberedKey(key)])

// the order `stats` answers in: by tool, then by key
export const byToolThenKey = (a: PairCount, b: PairCount): number =>
  a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0

/**
 * A store URL as an error message may show it: what stands before an `@` after the scheme (a user and a
 * password, however many slashes were typed) is replaced by `***`.
 *
 * @example
 * import { shownStoreUrl } from 'toolstack/gateway'
 * assert.strictEqual(shownStoreUrl('redis:/user:s3cret@host:6379'), 'redis:/***@host:6379')
 * assert.strictEqual(shownStoreUrl('valkey://:s3cret@host'), 'valkey://***@host')
 * assert.strictEqual(shownStoreUrl('file:/var/lib/grants.json'), 'file:/var/lib/grants.json')
 *
 * @since 0.1.0
 * @category utils
 */
/**
 * One text per grant, whatever order its members were written in: how stores compare, write and name grants.
 *
 * @since 0.1.0
 */
export const grantText = (r: Rule): string =>
  // JSON leaves out a member whose value is undefined, so an absent `under` and one never set give one text
  JSON.stringify({ tool: r.tool, decision: r.decision, under: r.under, note: r.note, definition: r.definition })

/**
 * A grant's short name: the first 16 hex digits of the SHA-256 of its `grantText`, the same in every process (what
 * the page's revoke button and `toolstack grants revoke` send).
 *
 * @example
 * import { grantId } from 'toolstack/gateway'
 * assert.match(grantId({ tool: 'fs_write_file', decision: 'allow', under: '/srv' }), /^[0-9a-f]{16}$/)
 * assert.strictEqual(grantId({ decision: 'deny', tool: 'x' }), grantId({ tool: 'x', decision: 'deny' }))
 *
 * @since 0.1.0
 */
export const grantId = (r: Rule): string => createHash('sha256').update(grantText(r)).digest('hex').slice(0, 16)

export const shownStoreUrl = (url: string): string => url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/*)[^/?#]*@/, '$1***@')
