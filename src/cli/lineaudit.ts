/**
 * The proxy's audit of the bytes it forwarded: split into lines, each line read as
 * cheaply as it allows (a `tools/call` of a shape audited before by `quietCalls`, any
 * other plain `tools/call` by `skimCall`, anything else that can concern tools by
 * `JSON.parse`), and observed by the side channel's pure steps. The
 * same reader runs on the auditing thread and, when there is none, on the forwarding
 * thread.
 *
 * @since 0.1.0
 */
import type { UnknownKeyWarning } from '../index.js'
import type { Direction, SideChannel } from './sidechannel.js'
import { isAwaitingListing, newSideChannel, observe, observeCall } from './sidechannel.js'
import type { QuietCalls } from './quiet.js'
import { quietCalls } from './quiet.js'
import { skimCall } from './skim.js'
import { BACKSLASH, EMPTY, LF as NEWLINE } from './bytes.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface LineAudit {
  /**
   * Reads `bytes` of one side: every line they complete is audited before it returns
   * (so the bytes may be reused after); a line left incomplete waits for the rest.
   * Empty `bytes`: that side ended, and a last line without a newline is read now.
   */
  readonly feed: (from: Direction, bytes: Buffer) => void
  /** Whether a `tools/list` request is waiting for its response. */
  readonly awaitingListing: () => boolean
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

const TOOLS = Buffer.from('tools')

// Whether a line can hold "tools/list" or "tools/call": it contains "tools", or an
// escape that could spell it. Anything else is none of the side channel's business.
const mayConcernTools = (line: Buffer): boolean => line.includes(TOOLS) || line.includes(BACKSLASH)

interface Carry {
  buf: Buffer
  length: number
}

const append = (carry: Carry, bytes: Buffer, from: number): void => {
  const n = bytes.length - from
  if (carry.length + n > carry.buf.length) {
    const grown = Buffer.allocUnsafeSlow(Math.max(carry.length + n, carry.buf.length * 2, 1024))
    carry.buf.copy(grown, 0, 0, carry.length)
    carry.buf = grown
  }
  bytes.copy(carry.buf, carry.length, from)
  carry.length += n
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A reader over a fresh side channel (`tolerate` adds names to `reason`), handing each
 * warning to `warn` as it is raised; `quiet` remembers the call shapes it may skip.
 *
 * @since 0.1.0
 * @category constructors
 */
export const lineAudit = (tolerate: ReadonlyArray<string>, warn: (w: UnknownKeyWarning) => void, quiet: QuietCalls = quietCalls()): LineAudit => {
  let state: SideChannel = newSideChannel(tolerate)
  // the start of a line each side has not finished yet, copied (the bytes it came in
  // are reused) into a buffer of its own that grows to the longest line and is reused
  const carried: Record<Direction, Carry> = { host: { buf: EMPTY, length: 0 }, server: { buf: EMPTY, length: 0 } }

  const said = (w: UnknownKeyWarning | undefined): void => {
    if (w === undefined) return
    try {
      warn(w)
    } catch {
      // a log that cannot be written changes nothing about the traffic
    }
  }

  const parsed = (from: Direction, line: Buffer): void => {
    let msg: unknown
    try {
      msg = JSON.parse(line.toString('utf8'))
    } catch {
      return
    }
    if (typeof msg !== 'object' || msg === null) return
    const [warnings, next] = observe(from, msg)(state)
    state = next
    for (const w of warnings) said(w)
  }

  const line = (from: Direction, bytes: Buffer, start: number, end: number): void => {
    if (from === 'server') {
      if (isAwaitingListing(state)) parsed('server', bytes.subarray(start, end))
      return
    }
    // a call shaped as one audited before under these tools: nothing to say, nothing to change
    if (quiet.isQuiet(bytes, start, end, state.cache)) return
    const call = skimCall(bytes, start, end)
    if (call !== undefined) {
      const [w, next] = observeCall(call)(state)
      state = next
      // every pair of this shape is now declared, tolerated or said
      quiet.remember(bytes)
      said(w)
      return
    }
    const text = bytes.subarray(start, end)
    if (mayConcernTools(text)) parsed('host', text)
  }

  // audits the lines that end in bytes[from, to) and returns where the last one ends
  const lines = (from: Direction, bytes: Buffer, start: number, to: number): number => {
    for (;;) {
      // a host line that fits a quiet call's template ends where the template does
      if (from === 'host') {
        const e = quiet.quietLineAt(bytes, start, to, state.cache)
        if (e !== -1) {
          start = e + 1
          continue
        }
      }
      const nl = bytes.indexOf(NEWLINE, start)
      if (nl === -1 || nl >= to) return start
      if (nl > start) line(from, bytes, start, nl)
      start = nl + 1
    }
  }

  const feed = (from: Direction, bytes: Buffer): void => {
    const carry = carried[from]
    if (bytes.length === 0) {
      if (carry.length > 0) {
        const n = carry.length
        carry.length = 0
        line(from, carry.buf, 0, n)
      }
      return
    }
    if (carry.length === 0) {
      const done = lines(from, bytes, 0, bytes.length)
      if (done < bytes.length) append(carry, bytes, done)
      return
    }
    // a line that came in pieces: gathered until its newline arrives
    const nl = bytes.indexOf(NEWLINE)
    if (nl === -1) return append(carry, bytes, 0)
    append(carry, bytes.subarray(0, nl), 0)
    const n = carry.length
    carry.length = 0
    line(from, carry.buf, 0, n)
    const done = lines(from, bytes, nl + 1, bytes.length)
    if (done < bytes.length) append(carry, bytes, done)
  }

  return { feed: (from, bytes) => void feed(from, bytes), awaitingListing: () => isAwaitingListing(state) }
}
