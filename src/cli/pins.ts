/**
 * `toolstack pins list|accept TOOL HASH --store URL`: the tool definitions the gateways on a store pinned, and the
 * changed ones waiting for an operator, listed; and one accepted, without stopping a gateway. An accepted definition
 * becomes its tool's pin in the store, and every gateway on it serves it again: a `file:` store's gateways read the
 * file again, a `redis://` store's are told on its channel.
 *
 * @since 0.1.0
 */
import type { Pin } from '../extend.js'
import { bookEntries, diffDefinitions, drawChange, drawFlag, flagDefinition } from '../extend.js'
import { usingStore, written } from './storeOpen.js'
import { cut, jsonLine, plural, shown } from './text.js'

/**
 * The effects `pins` needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface PinsIO {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

/**
 * @since 0.1.0
 * @category model
 */
export interface PinsOptions {
  readonly store: string
  readonly json: boolean
}

/**
 * What a store's pins come to, for one line each: a pinned definition, or a changed one waiting (with its tool's
 * pin, what changed since it and its flags, in lines already escaped and bounded).
 *
 * @since 0.1.0
 * @category model
 */
export type PinEntry =
  | { readonly state: 'pinned'; readonly tool: string; readonly hash: string; readonly at: string }
  | {
      readonly state: 'waiting'
      readonly tool: string
      readonly hash: string
      readonly at: string
      readonly pinned: string | undefined
      readonly changed: ReadonlyArray<string>
      readonly flags: ReadonlyArray<string>
    }

/**
 * A store's pins and changes as entries: the changes waiting first (what an operator is here for), then the pins,
 * each sorted by tool. What changed is drawn from the two definitions when the store kept both whole.
 *
 * @example
 * import { pinEntries } from './pins.js'
 * const schema = (...keys: Array<string>) => ({ properties: Object.fromEntries(keys.map((k) => [k, {}])) })
 * const was = { tool: 'add', hash: 'sha256:' + 'a'.repeat(64), at: 't0', definition: { name: 'add', inputSchema: schema('a') } }
 * const now = { tool: 'add', hash: 'sha256:' + 'b'.repeat(64), at: 't1', definition: { name: 'add', inputSchema: schema('a', 'to') } }
 * const [waiting, pinned] = pinEntries([was], [now])
 * assert.deepStrictEqual(waiting, {
 *   state: 'waiting', tool: 'add', hash: now.hash, at: 't1', pinned: was.hash, changed: ['schema: keys added: to'], flags: [],
 * })
 * assert.deepStrictEqual(pinned, { state: 'pinned', tool: 'add', hash: was.hash, at: 't0' })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const pinEntries = (pins: ReadonlyArray<Pin>, changes: ReadonlyArray<Pin>): ReadonlyArray<PinEntry> => {
  const pinOf = new Map(pins.map((p) => [p.tool, p]))
  const waiting = changes.map((c): PinEntry => {
    const pin = pinOf.get(c.tool)
    return {
      state: 'waiting',
      tool: c.tool,
      hash: c.hash,
      at: c.at,
      pinned: pin?.hash,
      changed:
        c.definition === undefined
          ? ['the new definition was too long to keep whole: only its hash is known']
          : pin === undefined
            ? ['not pinned before (a new name)']
            : drawChange(diffDefinitions(pin.definition, c.definition)),
      // the rules that need the other upstreams' tools (shadowing) cannot be read here
      flags: c.definition === undefined ? [] : flagDefinition(c.definition).map(drawFlag),
    }
  })
  return [...waiting, ...pins.map((p): PinEntry => ({ state: 'pinned', tool: p.tool, hash: p.hash, at: p.at }))]
}

/**
 * An entry as lines: the tool, its hash and its state, then for a change what changed and its flags, indented.
 *
 * @example
 * import { pinLines } from './pins.js'
 * assert.deepStrictEqual(pinLines({ state: 'pinned', tool: 'add\u001b', hash: 'sha256:ab', at: '2026-01-01T00:00:00Z' }), [
 *   'add\\u001b  sha256:ab  pinned 2026-01-01T00:00:00Z',
 * ])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const pinLines = (e: PinEntry): ReadonlyArray<string> =>
  e.state === 'pinned'
    ? [`${shown(e.tool)}  ${shown(e.hash, 80)}  pinned ${shown(e.at, 40)}`]
    : [
        `${shown(e.tool)}  ${shown(e.hash, 80)}  waiting since ${shown(e.at, 40)}; pinned: ${e.pinned === undefined ? 'none' : shown(e.pinned, 80)}`,
        ...e.changed.map((l) => `    ${shown(l, 1000)}`),
        ...e.flags.map((l) => `    flagged: ${shown(l, 1000)}`),
      ]

/**
 * Runs `toolstack pins list` or `toolstack pins accept TOOL HASH` over the store at `options.store`; returns the exit
 * status: 0 done, 1 no such changed definition waits, 2 the store cannot be opened or reached.
 *
 * @since 0.1.0
 * @category command
 */
export const runPins = (
  action: { readonly _tag: 'list' } | { readonly _tag: 'accept'; readonly tool: string; readonly hash: string },
  options: PinsOptions,
  io: PinsIO,
): Promise<number> =>
  usingStore('toolstack pins', options.store, io.err, async (opened, where) => {
    const { store } = opened
    const { pins, changes } = bookEntries(store.pins.book())
    if (action._tag === 'list') {
      const entries = pinEntries(pins, changes)
      if (options.json)
        for (const e of entries) io.out(jsonLine(e, (_k, v) => (typeof v === 'string' ? cut(v, 1000) : v)))
      else {
        for (const e of entries) for (const l of pinLines(e)) io.out(l)
        io.out(
          `${plural(pins.length, 'pin')} and ${plural(changes.length, 'change')} waiting in ${where}` +
            (changes.length === 0 ? '' : '; toolstack pins accept TOOL HASH accepts one'),
        )
      }
      return 0
    }
    const hash = action.hash.trim().toLowerCase()
    const named = JSON.stringify(shown(action.tool))
    if (store.pins.book().pins.get(action.tool)?.hash === hash) {
      io.out(`${hash} is already the pin of ${named} in ${where}; nothing changed`)
      return 0
    }
    const accepted = await store.pins.accept(action.tool, hash)
    if (accepted._tag === 'Left') {
      io.err(`toolstack pins: ${shown(accepted.left, 1000)} in ${where}; toolstack pins list --store URL shows them`)
      return 1
    }
    if (!(await written('toolstack pins', opened, io.err, 'the definition may not have been accepted'))) return 2
    io.out(`accepted ${hash} as the definition of ${named} in ${where}; every gateway on it serves it again`)
    return 0
  })
