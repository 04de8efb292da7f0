/**
 * How the store commands (`toolstack grants`, `toolstack pins`) open a store: with a way to ask whether it reached
 * its backend, since a store that cannot serves from memory, which a command would print as if it were the truth.
 *
 * @since 0.1.0
 */
import type { GatewayStore } from '../gateway/index.js'
import { openStore } from '../gateway/index.js'

/**
 * A store opened by a command, and what its backend last said was wrong (`undefined` while it answers).
 *
 * @since 0.1.0
 * @category model
 */
export interface OpenedStore {
  readonly store: GatewayStore
  readonly unreachable: () => string | undefined
}

/**
 * Opens the store at `url` for a command; rejects as `openStore` does (a corrupt file, a package missing).
 *
 * @since 0.1.0
 * @category constructors
 */
export const openForCommand = async (url: string): Promise<OpenedStore> => {
  let unreachable: string | undefined
  const store = await openStore(url, {
    // a notice is a backend that failed (then one that answers again); a directory that cannot be watched is not one
    onNotice: (message) => {
      if (/cannot be watched/.test(message)) return
      unreachable = /\bagain\b/.test(message) ? undefined : (unreachable ?? message)
    },
  })
  return { store, unreachable: () => unreachable }
}
