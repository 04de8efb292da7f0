/**
 * `toolstack grants list|revoke ID --store URL`: the human's "always" answers a store holds, listed, and one taken
 * back by its id, without stopping a gateway. A grant taken back leaves every gateway on the store: a `file:` store's
 * gateways read the file's list of grants taken back, a `redis://` store's are told on its channel.
 *
 * @since 0.1.0
 */
import type { GatewayConfig } from '../gateway/index.js'
import { grantId } from '../gateway/index.js'
import { usingStore, written } from './storeOpen.js'
import { cut, jsonLine, plural, shown } from './text.js'

/**
 * The effects `grants` needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface GrantsIO {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

/**
 * @since 0.1.0
 * @category model
 */
export interface GrantsOptions {
  readonly store: string
  readonly json: boolean
}

type Rule = GatewayConfig['rules'][number]

/**
 * A grant as one line: its id, then the rule as the page shows it.
 *
 * @example
 * import { grantLine } from './grants.js'
 * assert.match(grantLine({ tool: 'fs_write_file', decision: 'allow', under: '/srv' }), /^[0-9a-f]{16}  allow fs_write_file under \/srv$/)
 *
 * @since 0.1.0
 */
export const grantLine = (r: Rule): string =>
  `${grantId(r)}  ${r.decision} ${shown(r.tool)}${r.under === undefined ? '' : ` under ${shown(r.under)}`}` +
  `${r.note === undefined ? '' : ` (${shown(r.note)})`}`

/**
 * Runs `toolstack grants list` or `toolstack grants revoke ID` over the store at `options.store`; returns the exit
 * status: 0 done, 1 no grant has that id, 2 the store cannot be opened or reached.
 *
 * @since 0.1.0
 * @category command
 */
export const runGrants = (
  action: { readonly _tag: 'list' } | { readonly _tag: 'revoke'; readonly id: string },
  options: GrantsOptions,
  io: GrantsIO,
): Promise<number> =>
  usingStore('toolstack grants', options.store, io.err, async (opened, where) => {
    const { store } = opened
    const grants = store.grants()
    if (action._tag === 'list') {
      if (options.json)
        for (const r of grants)
          io.out(jsonLine({ id: grantId(r), ...r }, (_k, v) => (typeof v === 'string' ? cut(v, 1000) : v)))
      else {
        for (const r of grants) io.out(grantLine(r))
        io.out(
          `${plural(grants.length, 'grant')} in ${where}${grants.length === 0 ? '' : '; toolstack grants revoke ID takes one back'}`,
        )
      }
      return 0
    }
    const id = action.id.trim().toLowerCase()
    const rule = grants.find((r) => grantId(r) === id)
    if (rule === undefined) {
      io.err(
        `toolstack grants: no grant in ${where} has the id ${shown(JSON.stringify(action.id))}; toolstack grants list --store URL shows them`,
      )
      return 1
    }
    store.revokeGrant(rule)
    if (!(await written('toolstack grants', opened, io.err, 'the grant may not have been taken back'))) return 2
    io.out(`took back ${grantLine(rule)} from ${where}; every gateway on it stops using it`)
    return 0
  })
