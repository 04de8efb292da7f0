/**
 * A gateway's store from its URL (`toolstack serve --store URL`, the configuration's `store`): `memory`,
 * `file:PATH`, or `redis://…` / `rediss://…`. Each backend is loaded only when its URL is opened.
 *
 * @since 0.1.0
 */
import { fileURLToPath } from 'node:url'
import { describeValue, isMissingPackage, missingPackageError } from '../../kernel/describe.js'
import type { GatewayStore, StoreOptions } from './store.js'
import { shownStoreUrl } from './store.js'
import { memoryStore } from './memoryStore.js'
// the type only: the module, and `redis` with it, load for a redis:// URL
import type { redisStore as RedisStore } from './redisStore.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The kinds of store a URL can name.
 *
 * @since 0.1.0
 * @category model
 */
export type StoreKind = 'memory' | 'file' | 'redis'

const EXPECTED = 'a store: "memory", "file:PATH", or "redis://HOST:PORT" ("rediss://" with TLS)'

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

/**
 * Which kind of store a URL names, or what is wrong with it. A URL may carry a password: the message never
 * repeats a URL that names a kind.
 *
 * @example
 * import { storeKindOf } from 'toolstack/gateway'
 * assert.deepStrictEqual(storeKindOf('file:/var/lib/toolstack/grants.json'), { _tag: 'Right', right: 'file' })
 * assert.strictEqual(storeKindOf('postgres://db')._tag, 'Left')
 *
 * @since 0.1.0
 * @category codecs
 */
export const storeKindOf = (
  url: unknown,
): { readonly _tag: 'Left'; readonly left: string } | { readonly _tag: 'Right'; readonly right: StoreKind } => {
  if (url === 'memory') return { _tag: 'Right', right: 'memory' }
  if (typeof url === 'string' && /^file:./.test(url)) return { _tag: 'Right', right: 'file' }
  if (typeof url === 'string' && /^rediss?:\/\/./.test(url)) return { _tag: 'Right', right: 'redis' }
  return {
    _tag: 'Left',
    left: `must be ${EXPECTED}, got ${describeValue(typeof url === 'string' ? shownStoreUrl(url).slice(0, 40) : url)}`,
  }
}

/**
 * The file a `file:` store's URL names, as written (relative to the working directory when it is relative), or
 * `undefined` for another store: `file:///abs` is a file URL, `file:relative` and `file:/abs` are paths.
 *
 * @example
 * import { storeFileOf } from 'toolstack/gateway'
 * assert.strictEqual(storeFileOf('file:///srv/grants%20kept.json'), '/srv/grants kept.json')
 * assert.strictEqual(storeFileOf('file:state/grants.json'), 'state/grants.json')
 * assert.strictEqual(storeFileOf('redis://127.0.0.1:6379'), undefined)
 * assert.strictEqual(storeFileOf('memory'), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const storeFileOf = (url: string): string | undefined => (/^file:./.test(url) ? pathOf(url) : undefined)

// a `file:` URL as a path
const pathOf = (url: string): string => (url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length))

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Opens the store a URL names: `memory` (this process's, `memoryStore`), `file:PATH` (`fileStore`),
 * `redis://…` (`redisStore`, which loads the optional peer `redis`; when it is missing, the rejection names the
 * command that installs it). Throws a `TypeError` for a URL that names
 * none; rejects when the store cannot be opened (a file that cannot be read, a malformed Redis URL).
 *
 * @example
 * import { openStore } from 'toolstack/gateway'
 * const store = await openStore('memory')
 * store.addGrant({ tool: 'x', decision: 'allow' })
 * assert.strictEqual(store.grants().length, 1)
 * await store.close()
 *
 * @since 0.1.0
 * @category constructors
 */
export const openStore = async (url: string, options: StoreOptions = {}): Promise<GatewayStore> => {
  const kind = storeKindOf(url)
  if (kind._tag === 'Left') throw new TypeError(`openStore: the URL ${kind.left}`)
  switch (kind.right) {
    case 'memory':
      return memoryStore()
    case 'file':
      return (await import('./fileStore.js')).fileStore(pathOf(url), options)
    case 'redis': {
      let loaded: { readonly redisStore: typeof RedisStore }
      try {
        loaded = await import('./redisStore.js')
      } catch (e) {
        // an optional peer: a gateway that names a Redis says what to install, and starts nothing
        throw isMissingPackage(e, 'redis')
          ? missingPackageError('a redis:// store', 'the package redis', ['redis'], e)
          : e
      }
      return loaded.redisStore(url, options)
    }
  }
}
