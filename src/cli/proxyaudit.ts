/**
 * The proxy's audit of forwarded lines: each relevant line is parsed and passed to the side channel's
 * pure steps, and the warnings and notices they emit are logged. The proxy loads this module, and the
 * library with it, only when the host first mentions tools.
 *
 * @since 0.1.0
 */
import type { UnknownKeyWarning } from './check.js'
import { formatWarning, warningFields } from './check.js'
import { isJsonWhitespace } from '../kernel/guards.js'
import { textOf } from './lines.js'
import { cut, escapeControls, shown } from './text.js'
import type { Direction, Event, SideChannel } from './sidechannel.js'
import { isAwaitingListing, newSideChannel, observe } from './sidechannel.js'

/** @since 0.1.0 */
export interface ProxyAuditOptions {
  /** Argument names never reported, besides `reason`. */
  readonly tolerate: ReadonlyArray<string>
}

/** What the proxy logs (a warning or a notice): a sentence, and the fields of a JSON record. @since 0.1.0 */
export interface LogRecord {
  readonly text: string
  readonly fields: Readonly<Record<string, unknown>>
  /** The warning itself, when the record is one (for the OTLP export). */
  readonly warning?: UnknownKeyWarning
}

/** @since 0.1.0 */
export interface ProxyAudit {
  /** Reads one forwarded line (without its LF); a server line matters only while a listing is pending. */
  readonly line: (from: Direction, bytes: Buffer) => void
  /** Whether server lines matter now (a `tools/list` response is pending). */
  readonly awaitingListing: () => boolean
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a

// The index of the quote closing the JSON string that opens at `open`, or -1: the first quote after
// it not escaped by an odd number of backslashes.
const closingQuote = (b: Buffer, open: number): number => {
  for (let at = open + 1; ;) {
    const q = b.indexOf(QUOTE, at)
    if (q === -1) return -1
    let k = q - 1
    while (b[k] === BACKSLASH) k--
    if ((q - 1 - k) % 2 === 0) return q
    at = q + 1
  }
}

/**
 * Returns the line with each string value longer than `longest` bytes emptied (`""`); member names are
 * kept whatever their length. `JSON.parse` of a 1 MB call cost more than forwarding it (back-to-back
 * 1 MB calls reached 0.37 of a bare relay's throughput on a 2-core machine, against a target of 0.5);
 * finding the quotes with `indexOf` and parsing the rest costs a fraction of that. The audit never
 * reads the dropped values (only member names and short values matter); a line that `JSON.parse` would
 * reject only for a dropped value (a raw control character in it) is read all the same.
 *
 * @since 0.1.0
 */
export const withoutLongStrings = (b: Buffer, longest: number): Buffer => {
  const kept: Array<Buffer> = []
  let from = 0
  for (let open = b.indexOf(QUOTE); open !== -1;) {
    const close = closingQuote(b, open)
    if (close === -1) break
    if (close - open - 1 > longest) {
      let next = close + 1
      while (isJsonWhitespace(b[next])) next++
      if (b[next] !== COLON) {
        kept.push(b.subarray(from, open + 1))
        from = close
      }
    }
    open = b.indexOf(QUOTE, close + 1)
  }
  if (from === 0) return b
  kept.push(b.subarray(from))
  return Buffer.concat(kept)
}

// how much of a name or an id a notice shows, as `shown` and the warnings cut them
const MAX_SHOWN = 200

// Lines longer than BIG_LINE have their string values over LONG_STRING emptied before parsing.
const BIG_LINE = 1 << 16
const LONG_STRING = 1 << 12

/**
 * An event as a log record: a sentence and the fields of a JSON record.
 *
 * @since 0.1.0
 */
export const recordOf = (e: Event): LogRecord => {
  if (e._tag === 'Warning')
    return { text: formatWarning(e.warning), fields: warningFields(e.warning), warning: e.warning }
  // the name and the id are the host's (a model's): escaped and cut at 200 characters, as a warning's are
  const tool = escapeControls(JSON.stringify(cut(e.tool, MAX_SHOWN)))
  const call = e.id === '' ? 'without an id' : shown(e.id, MAX_SHOWN)
  const message =
    `the host called ${tool} (call ${call}) before any tools/list was answered: ` +
    'calls are audited only against a listing the proxy saw, so none is audited until then; reported once'
  return { text: `toolstack proxy: ${message}`, fields: { type: 'notice', message } }
}

/**
 * Returns an audit over a fresh side channel; `log` is called with each warning and notice.
 *
 * @since 0.1.0
 */
export const proxyAudit = (options: ProxyAuditOptions, log: (record: LogRecord) => void): ProxyAudit => {
  let state: SideChannel = newSideChannel(options.tolerate)
  return {
    line: (from, bytes) => {
      if (from === 'server' && !isAwaitingListing(state)) return
      let msg: unknown
      try {
        msg = JSON.parse(textOf(bytes.length > BIG_LINE ? withoutLongStrings(bytes, LONG_STRING) : bytes))
      } catch {
        return
      }
      if (typeof msg !== 'object' || msg === null) return
      const [events, next] = observe(from, msg)(state)
      state = next
      for (const e of events) log(recordOf(e))
    },
    awaitingListing: () => isAwaitingListing(state),
  }
}
