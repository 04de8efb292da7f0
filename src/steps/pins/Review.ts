/**
 * One listing reviewed against the pin book: which tools are pinned now for the first time, which changed
 * since they were pinned (or were renamed), what follows (`warn`, `hold`, `refuse`), and each tool's standing,
 * which the policy reads to bind grants to definitions and to tell the human what changed. Pure.
 *
 * @since 0.1.0
 */
import type { Flag } from './Flags.js'
import { drawFlag } from './Flags.js'
import type { DefinitionChange } from './Diff.js'
import { diffDefinitions, drawChange } from './Diff.js'
import type { Pin, ToolDefinition } from './Definition.js'
import { bodyHash, pinOf } from './Definition.js'
import type { PinBook } from './Book.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What follows when a tool's definition differs from its pin: `warn` serves it as it comes (the change is
 * said); `hold` hides the tool until an operator accepts the new definition; `refuse` lists it as it was
 * pinned and refuses every call to it until then.
 *
 * @since 0.1.0
 * @category model
 */
export type DriftAction = 'warn' | 'hold' | 'refuse'

/**
 * A tool's standing at the last listing: the hash of its definition now, its pin's, what changed between them
 * and what follows, and its flags.
 *
 * @since 0.1.0
 * @category model
 */
export interface Standing {
  readonly tool: string
  /** The hash of its definition as listed now. */
  readonly hash: string
  /** Its pin's hash: `hash` when unchanged; `undefined` for a renamed tool not accepted yet. */
  readonly pinned: string | undefined
  /** What changed since the pin, and what follows, when it changed. */
  readonly change?: DefinitionChange
  readonly action?: DriftAction
  /** The flags of its definition now. */
  readonly flags: ReadonlyArray<Flag>
}

/**
 * One tool of a listing, read: its name as listed, its definition and that definition's canonical JSON and
 * hash, and (under a registry) the server it comes from with its own name there.
 *
 * @since 0.1.0
 * @category model
 */
export interface ListedTool {
  readonly tool: string
  readonly definition: ToolDefinition
  readonly text: string
  readonly hash: string
  readonly server?: ServerOf
}

/**
 * The server a tool comes from and its name there.
 *
 * @since 0.1.0
 * @category model
 */
export interface ServerOf {
  readonly server: string
  readonly name: string
}

/**
 * What a listing comes to: the pins to make, the changed definitions to record (each with its standing), and
 * every listed tool's standing.
 *
 * @since 0.1.0
 * @category model
 */
export interface Review {
  readonly first: ReadonlyArray<Pin>
  readonly changed: ReadonlyArray<{ readonly pin: Pin; readonly standing: ChangedStanding }>
  readonly standings: ReadonlyMap<string, Standing>
}

/**
 * The standing of a tool whose definition changed: what changed and what follows are known.
 *
 * @since 0.1.0
 * @category model
 */
export interface ChangedStanding extends Standing {
  readonly change: DefinitionChange
  readonly action: DriftAction
}

/**
 * What a question about a call shows of its tool's definition: its hash now and its pin's, the lines saying
 * what changed (escaped and bounded), its flags in lines, and whether a grant was set aside because the
 * definition changed since it was given.
 *
 * @since 0.1.0
 * @category model
 */
export interface DefinitionNotice {
  readonly hash: string
  readonly pinned: string | undefined
  readonly changes: ReadonlyArray<string>
  readonly flags: ReadonlyArray<string>
  readonly grantSetAside: boolean
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * Reviews a listing against `book`: a tool with no pin is pinned (first seen `at`), unless it is a renaming
 * (a pinned tool of the same server, gone from the listing, with the same definition but its name), which is a
 * change; a tool whose definition hashes otherwise than its pin changed. `flagsOf` gives a tool's flags;
 * `serverOf` routes a name to its server (a registry's prefixes), so a renaming stays within one server.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const reviewListing = (
  book: PinBook,
  listed: ReadonlyArray<ListedTool>,
  action: DriftAction,
  at: string,
  flagsOf: (t: ListedTool) => ReadonlyArray<Flag>,
  serverOf: (tool: string) => ServerOf | undefined = () => undefined,
): Review => {
  const present = new Set(listed.map((t) => t.tool))
  // pinned tools gone from the listing, by the hash of their definition without its name: what a renamed tool
  // is matched with (read only when a tool has no pin)
  let gone: Map<string, Pin> | undefined
  const goneByBody = (): Map<string, Pin> => {
    if (gone !== undefined) return gone
    gone = new Map()
    for (const [tool, p] of book.pins) {
      if (present.has(tool) || p.definition === undefined) continue
      try {
        const body = bodyHash(p.definition)
        if (!gone.has(body)) gone.set(body, p)
      } catch {
        // a pin that cannot be hashed again is matched with nothing
      }
    }
    return gone
  }
  const first: Array<Pin> = []
  const changed: Array<{ readonly pin: Pin; readonly standing: ChangedStanding }> = []
  const standings = new Map<string, Standing>()
  for (const t of listed) {
    if (standings.has(t.tool)) continue
    const flags = flagsOf(t)
    const pin = book.pins.get(t.tool)
    if (pin?.hash === t.hash) {
      standings.set(t.tool, { tool: t.tool, hash: t.hash, pinned: t.hash, flags })
      continue
    }
    const now = pinOf(t.tool, t.definition, at, t)
    if (pin !== undefined) {
      const standing: ChangedStanding = {
        tool: t.tool,
        hash: t.hash,
        pinned: pin.hash,
        change: diffDefinitions(pin.definition, t.definition),
        action,
        flags,
      }
      standings.set(t.tool, standing)
      changed.push({ pin: now, standing })
      continue
    }
    // a listed definition was hashed, so its body can be (see ListedTool)
    const renamed = goneByBody().get(bodyHash(t.definition))
    // the gone tool must route to the same server now: a tool of another server, or one whose prefix changed
    // (its old name routes nowhere), is not a renaming
    if (renamed !== undefined && serverOf(renamed.tool)?.server === t.server?.server) {
      const standing: ChangedStanding = {
        tool: t.tool,
        hash: t.hash,
        pinned: undefined,
        change: diffDefinitions(renamed.definition, t.definition, renamed.tool),
        action,
        flags,
      }
      standings.set(t.tool, standing)
      changed.push({ pin: now, standing })
      continue
    }
    first.push(now)
    standings.set(t.tool, { tool: t.tool, hash: t.hash, pinned: t.hash, flags })
  }
  return { first, changed, standings }
}

/**
 * Whether a grant holds for a call to a tool of this standing. A grant given under a definition (`definition`,
 * the hash it was given for) holds while the tool's definition is that one. A grant that names no definition
 * (given before pins, written by hand), or names tools by a glob (`fs_*`) and was given for another of them,
 * holds while the tool's definition is its pinned one. With no standing (the tool is not pinned, or pins are
 * not in use), every grant holds, as without pins.
 *
 * @example
 * import { grantHolds } from './Review.js'
 * const standing = { tool: 'fs_write', hash: 'sha256:new', pinned: 'sha256:old', flags: [] }
 * assert.strictEqual(grantHolds({ tool: 'fs_write', definition: 'sha256:old' }, standing), false)
 * assert.strictEqual(grantHolds({ tool: 'fs_write', definition: 'sha256:new' }, standing), true)
 * assert.strictEqual(grantHolds({ tool: 'fs_write' }, standing), false)
 * assert.strictEqual(grantHolds({ tool: 'fs_write' }, undefined), true)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const grantHolds = (
  grant: { readonly tool: string; readonly definition?: string | undefined },
  standing: Standing | undefined,
): boolean =>
  standing === undefined ||
  grant.definition === standing.hash ||
  (standing.pinned === standing.hash && (grant.definition === undefined || grant.tool.endsWith('*')))

/**
 * What a question shows of a tool's definition: its change since the pin in lines, its flags in lines, and
 * whether a grant was set aside; `undefined` when there is nothing to say (unchanged, unflagged, nothing set
 * aside).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const noticeOf = (standing: Standing | undefined, grantSetAside: boolean): DefinitionNotice | undefined => {
  if (standing === undefined) return undefined
  const changes = standing.change === undefined ? [] : drawChange(standing.change)
  const flags = standing.flags.map(drawFlag)
  if (!grantSetAside && standing.change === undefined && flags.length === 0) return undefined
  return { hash: standing.hash, pinned: standing.pinned, changes, flags, grantSetAside }
}
