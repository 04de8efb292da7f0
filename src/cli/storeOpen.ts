/**
 * How the store commands (`toolstack grants`, `toolstack pins`) open a store: with a way to ask whether it reached
 * its backend, since a store that cannot serves from memory, which a command would print as if it were the truth.
 *
 * @since 0.1.0
 */
import { existsSync } from 'node:fs'
import type { GatewayStore } from '../gateway/index.js'
import { openStore, shownStoreUrl, storeFileOf } from '../gateway/index.js'
import { describeError, shown } from './text.js'

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

/**
 * Runs a store command's work over the store at `url` and closes it, whatever happens; returns the work's exit
 * status, or 2 with a line on `err` when the store cannot be used: a `file:` store with no file there (looked
 * for before opening, so a mistyped path creates nothing), one that cannot be opened (its own message says what
 * to do: a corrupt file is left as it is), or a backend that does not answer (its store would serve from memory).
 * `work` is given the store and its URL as shown (credentials hidden, escaped).
 *
 * @since 0.1.0
 * @category combinators
 */
export const usingStore = async (
  command: string,
  url: string,
  err: (line: string) => void,
  work: (opened: OpenedStore, where: string) => Promise<number>,
): Promise<number> => {
  const where = shown(shownStoreUrl(url))
  const file = storeFileOf(url)
  if (file !== undefined && !existsSync(file)) {
    err(
      `${command}: no store at ${shown(file)}: a gateway writes it at its first listing; is it the --store it was given?`,
    )
    return 2
  }
  let opened: OpenedStore
  try {
    opened = await openForCommand(url)
  } catch (e) {
    err(`${command}: ${shown(describeError(e), 1000)}`)
    return 2
  }
  try {
    const down = opened.unreachable()
    if (down !== undefined) {
      err(`${command}: ${shown(down).replace(/; serving from .*$/, '')}; nothing was read or changed`)
      return 2
    }
    return await work(opened, where)
  } finally {
    await opened.store.close()
  }
}

/**
 * After a change: closes the store (which writes what is pending, so the change is in the backend before the
 * command says so); returns false, with a line on `err` ending with `otherwise`, when the backend did not take it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const written = async (
  command: string,
  opened: OpenedStore,
  err: (line: string) => void,
  otherwise: string,
): Promise<boolean> => {
  await opened.store.close()
  const left = opened.unreachable()
  if (left !== undefined) err(`${command}: ${shown(left)}; ${otherwise}`)
  return left === undefined
}
