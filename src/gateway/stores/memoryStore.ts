/**
 * The store a gateway keeps in its own process (`--store memory`): every session of the process shares its
 * grants, each (tool, key) pair is said once per process, and the counts are the process's own. All of it goes
 * when the process ends. The `file:` store builds on it for the pairs and counts.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import type { Rule } from '../../steps/policy/Rule.js'
import { forgetGrant, recordGrant } from '../../steps/policy/Answer.js'
import { DEFAULT_CAPACITY, rememberedKey } from '../../steps/audit/SeenSet.js'
import { newPinMemory } from '../../combinators/Pins.js'
import type { GatewayStore } from './store.js'
import { byToolThenKey, pairField } from './store.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface MemoryStoreOptions {
  /**
   * The most (tool, key) pairs remembered (a model chooses the keys). Past it, a new pair is still claimed
   * (said) each time, but neither remembered nor counted, as the audit's seen-set does. Default 100 000.
   */
  readonly maxPairs?: number
}

// one pair: whether it was claimed, and how many calls carried it
interface Pair {
  readonly tool: string
  readonly key: string
  readonly claimed: boolean
  readonly calls: number
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The grant list with each of `more` added that it does not hold yet, in order; the same list (same reference)
 * when it holds them all.
 *
 * @example
 * import { mergeGrants } from './memoryStore.js'
 * const a = [{ tool: 'x', decision: 'allow' }] as const
 * assert.strictEqual(mergeGrants(a, [{ tool: 'x', decision: 'allow' }]), a)
 * assert.deepStrictEqual(mergeGrants(a, [{ tool: 'y', decision: 'deny' }]).map((r) => r.tool), ['x', 'y'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const mergeGrants = (grants: ReadonlyArray<Rule>, more: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
  more.reduce((held, rule) => recordGrant(rule)(held), grants)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A store in this process: grants shared by every session (lost at exit), each pair claimed once per process,
 * counts summed in this process. Nothing is written anywhere; nothing can fail.
 *
 * @example
 * import { memoryStore } from 'toolstack/gateway'
 * const store = memoryStore()
 * store.addGrant({ tool: 'fs_write', decision: 'allow', under: '/tmp' })
 * assert.deepStrictEqual(store.grants(), [{ tool: 'fs_write', decision: 'allow', under: '/tmp' }])
 * assert.strictEqual(await store.claim('fs_read', 'pth'), true)
 * assert.strictEqual(await store.claim('fs_read', 'pth'), false)
 * store.addCounts([{ tool: 'fs_read', key: 'pth', calls: 2 }])
 * assert.deepStrictEqual(await store.stats(), [{ tool: 'fs_read', key: 'pth', calls: 2 }])
 *
 * @since 0.1.0
 * @category constructors
 */
export const memoryStore = (options: MemoryStoreOptions = {}): GatewayStore => {
  const max = options.maxPairs ?? DEFAULT_CAPACITY
  if (!Number.isSafeInteger(max) || max < 1)
    throw new TypeError(`memoryStore: maxPairs must be a whole number of at least 1, got ${String(max)}`)
  const grants: IORef<ReadonlyArray<Rule>> = newIORef<ReadonlyArray<Rule>>(Object.freeze([]))()
  // changed in one synchronous step each time, never across an await
  const pairs = new Map<string, Pair>()
  // a pair past the cap is not remembered: undefined
  const pairOf = (tool: string, key: string): readonly [string, Pair] | undefined => {
    const k = pairField(tool, key)
    const held = pairs.get(k)
    if (held !== undefined) return [k, held]
    if (pairs.size >= max) return undefined
    return [k, { tool: rememberedKey(tool), key: rememberedKey(key), claimed: false, calls: 0 }]
  }
  return {
    grants: grants.read,
    addGrant: (rule) => grants.write(recordGrant(rule)(grants.read()))(),
    revokeGrant: (rule) => grants.write(forgetGrant(rule)(grants.read()))(),
    // nothing else writes this store's grants
    onGrantsChanged: (): IO<void> => () => undefined,
    claim: (tool, key) => {
      const found = pairOf(tool, key)
      if (found === undefined) return Promise.resolve(true)
      const [k, pair] = found
      if (pair.claimed) return Promise.resolve(false)
      pairs.set(k, { ...pair, claimed: true })
      return Promise.resolve(true)
    },
    addCounts: (counts) => {
      for (const c of counts) {
        if (!(Number.isSafeInteger(c.calls) && c.calls > 0)) continue
        const found = pairOf(c.tool, c.key)
        if (found !== undefined) pairs.set(found[0], { ...found[1], calls: found[1].calls + c.calls })
      }
    },
    stats: () =>
      Promise.resolve(
        [...pairs.values()]
          .filter((p) => p.calls > 0)
          .map(({ tool, key, calls }) => ({ tool, key, calls }))
          .sort(byToolThenKey),
      ),
    pins: newPinMemory(),
    close: () => Promise.resolve(),
  }
}
