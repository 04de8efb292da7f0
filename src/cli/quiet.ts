/**
 * The proxy's cheapest answer, for the line it sees most: a `tools/call` of a tool with
 * argument keys that, byte for byte, were audited before under the same tool list.
 * Such a call can raise no warning and change nothing, so it needs neither validating
 * nor decoding: its shape (the tool's name and the keys, as raw bytes) is found by a
 * lax scan and looked up.
 *
 * Why a lax scan is enough. Saying "quiet" only ever skips a line. For a line that is
 * not valid JSON, the audit would have skipped it too. For a valid line, the scan finds
 * what `JSON.parse` finds: it declines (`undefined`) whenever a member name at the
 * message or `params` level holds an escape, so no spelling can hide a `method`, a
 * `params`, a `name` or an `arguments`, and the last of duplicate members wins, as
 * under `JSON.parse`. Equal raw bytes decode to equal strings, so a shape remembered
 * from a call that was audited stands for every call with the same bytes. The said
 * pairs only grow; a new tool list forgets every shape.
 *
 * Most calls repeat the one before but for their values, so the last quiet lines are
 * kept as templates (see `fitAt`): a line that fits one is quiet without being scanned,
 * and ends where the template does, without a search for its newline.
 *
 * @since 0.1.0
 */

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, LF, OPEN_BRACE, OPEN_BRACKET, QUOTE, isWs, skipWs, wordOf } from './bytes.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The shapes known quiet under one tool list.
 *
 * @since 0.1.0
 * @category model
 */
export interface QuietCalls {
  /**
   * Scans the line `bytes[start, end)`: whether it is a `tools/call` whose shape was
   * remembered under `catalogue`. The scanned shape is kept until the next scan, for
   * `remember`.
   */
  readonly isQuiet: (bytes: Uint8Array, start: number, end: number, catalogue: object) => boolean
  /**
   * Remembers the shape of the line scanned last (still in the same bytes) as quiet:
   * call it once that very call was audited, valid, under `catalogue`. A line the scan
   * declined is not remembered.
   */
  readonly remember: (bytes: Uint8Array) => void
  /**
   * When the line that starts at `start` fits a template under `catalogue` and its
   * newline comes before `limit`: that newline's index (the line is quiet); else -1.
   * Finds a quiet line's end without searching for it.
   */
  readonly quietLineAt: (bytes: Uint8Array, start: number, limit: number, catalogue: object) => number
}

// -------------------------------------------------------------------------------------
// scanning
// -------------------------------------------------------------------------------------

/** Not a line this scan answers for. */
const NO = -1

/** Past this many bytes a string's closing quote is searched for natively. */
const LONG = 32
/** A call with more argument keys than this is left to the full audit. */
const MAX_KEYS = 64

const W_METHOD = wordOf('method')
const W_PARAMS = wordOf('params')
const W_NAME = wordOf('name')
const W_ARGUMENTS = wordOf('arguments')
const W_TOOLS_CALL = wordOf('tools/call')


/** Whether `[s, e)` holds exactly the bytes of `w`. */
const spells = (b: Uint8Array, s: number, e: number, w: Uint8Array): boolean => {
  if (e - s !== w.length) return false
  for (let k = 0; k < w.length; k++) if (b[s + k] !== w[k]) return false
  return true
}

/**
 * A string's contents from `i` (after its opening quote): the index of its closing
 * quote, or NO. Escapes are stepped over, not checked. A newline ends the search (a
 * line holds none, and a template is matched before the line's end is known).
 */
const stringEnd = (b: Uint8Array, i: number, end: number): number => {
  const stop = Math.min(end, i + LONG)
  for (; i < stop; i++) {
    const c = b[i] as number
    if (c === QUOTE) return i
    if (c === BACKSLASH) i++
    else if (c === LF) return NO
  }
  if (i >= end) return NO
  // a long string: the next quote not escaped (preceded by an even run of backslashes)
  const from = i
  for (;;) {
    const q = b.indexOf(QUOTE, i)
    if (q < 0 || q >= end) return NO
    let k = q - 1
    while (k >= from && b[k] === BACKSLASH) k--
    if (((q - 1 - k) & 1) === 0) {
      const nl = b.indexOf(LF, from)
      return nl !== -1 && nl < q ? NO : q
    }
    i = q + 1
  }
}

/** Whether `[s, e)` holds a backslash. */
const hasEscape = (b: Uint8Array, s: number, e: number): boolean => {
  for (let k = s; k < e; k++) if (b[k] === BACKSLASH) return true
  return false
}

/** Any value from `i`: the index after it, or NO. Containers are matched by depth only. */
const skipValue = (b: Uint8Array, i: number, end: number): number => {
  const c = b[i] as number
  if (c === QUOTE) {
    const q = stringEnd(b, i + 1, end)
    return q === NO ? NO : q + 1
  }
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0
    for (; i < end; i++) {
      const d = b[i] as number
      if (d === QUOTE) {
        i = stringEnd(b, i + 1, end)
        if (i === NO) return NO
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return i + 1
    }
    return NO
  }
  return scalarEnd(b, i, end)
}

/** A number or a literal from `i`: the index of what ends it, or NO when it is empty. */
const scalarEnd = (b: Uint8Array, i: number, end: number): number => {
  const from = i
  while (i < end) {
    const d = b[i] as number
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isWs(d)) break
    i++
  }
  return i > from ? i : NO
}

const MESSAGE = 0
const PARAMS = 1
const ARGUMENTS = 2

/**
 * The shape of the call being scanned: ranges into the line, and their hash. `ranges`
 * holds the name's range, then each key's.
 */
interface Shape {
  /**
   * Where the scalar values of members lie, when they are being recorded (for a
   * template): start, end, and 1 for a string or 0 for a number or literal, in order.
   */
  slots: Int32Array | undefined
  slotCount: number
  isCall: boolean
  /** Number of ranges set: 0 with no name yet; the name, then the keys. */
  count: number
  hasName: boolean
  hasArguments: boolean
  readonly ranges: Int32Array
}

/**
 * Members of the object whose `{` is at `i`, at `level`: the index after it, or NO.
 * At the message and `params` levels a member name with an escape declines the line.
 */
const scanObject = (b: Uint8Array, i: number, end: number, level: number, shape: Shape): number => {
  i = skipWs(b, i + 1, end)
  if (i < end && b[i] === CLOSE_BRACE) return i + 1
  for (;;) {
    if (i >= end || b[i] !== QUOTE) return NO
    const s = i + 1
    const q = stringEnd(b, s, end)
    if (q === NO) return NO
    i = skipWs(b, q + 1, end)
    if (i >= end || b[i] !== COLON) return NO
    i = skipWs(b, i + 1, end)
    if (i >= end) return NO
    if (level === ARGUMENTS) {
      if (shape.count >= MAX_KEYS + 1) return NO
      shape.ranges[2 * shape.count] = s
      shape.ranges[2 * shape.count + 1] = q
      shape.count++
      i = skipMember(b, i, end, shape)
    } else {
      if (hasEscape(b, s, q)) return NO
      i = level === MESSAGE ? messageMember(b, s, q, i, end, shape) : paramsMember(b, s, q, i, end, shape)
    }
    if (i === NO) return NO
    i = skipWs(b, i, end)
    if (i >= end) return NO
    const c = b[i] as number
    if (c === CLOSE_BRACE) return i + 1
    if (c !== COMMA) return NO
    i = skipWs(b, i + 1, end)
  }
}

const messageMember = (b: Uint8Array, s: number, q: number, i: number, end: number, shape: Shape): number => {
  if (spells(b, s, q, W_METHOD)) {
    const e = skipValue(b, i, end)
    shape.isCall = e !== NO && spells(b, i + 1, e - 1, W_TOOLS_CALL) && b[i] === QUOTE
    return e
  }
  if (spells(b, s, q, W_PARAMS)) {
    // the last params wins: forget what an earlier one said
    shape.count = 0
    shape.hasName = false
    shape.hasArguments = false
    return b[i] === OPEN_BRACE ? scanObject(b, i, end, PARAMS, shape) : skipValue(b, i, end)
  }
  return skipMember(b, i, end, shape)
}

const paramsMember = (b: Uint8Array, s: number, q: number, i: number, end: number, shape: Shape): number => {
  if (spells(b, s, q, W_NAME)) {
    shape.hasName = false
    if (b[i] !== QUOTE) return skipValue(b, i, end)
    const e = stringEnd(b, i + 1, end)
    if (e === NO) return NO
    // the name takes the first range; keys already met stay after it
    shape.ranges[0] = i + 1
    shape.ranges[1] = e
    shape.hasName = true
    return e + 1
  }
  if (spells(b, s, q, W_ARGUMENTS)) {
    shape.count = 1
    shape.hasArguments = b[i] === OPEN_BRACE
    return shape.hasArguments ? scanObject(b, i, end, ARGUMENTS, shape) : skipValue(b, i, end)
  }
  return skipMember(b, i, end, shape)
}

/**
 * `skipValue` for a member's value the scan does not read (anything but `method` and
 * the name): a scalar one is recorded as a slot while slots are being recorded.
 */
const skipMember = (b: Uint8Array, i: number, end: number, shape: Shape): number => {
  const e = skipValue(b, i, end)
  const slots = shape.slots
  if (slots !== undefined && e !== NO && shape.slotCount < MAX_SLOTS) {
    const c = b[i] as number
    if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
      const at = 3 * shape.slotCount++
      slots[at] = i
      slots[at + 1] = e
      slots[at + 2] = c === QUOTE ? 1 : 0
    }
  }
  return e
}

/** Scans the line into `shape`: whether it is a call with a name and object arguments. */
const scan = (b: Uint8Array, start: number, end: number, shape: Shape): boolean => {
  shape.isCall = false
  shape.slotCount = 0
  shape.count = 1
  shape.hasName = false
  shape.hasArguments = false
  const i = skipWs(b, start, end)
  if (i >= end || b[i] !== OPEN_BRACE) return false
  const after = scanObject(b, i, end, MESSAGE, shape)
  return after !== NO && skipWs(b, after, end) === end && shape.isCall && shape.hasName && shape.hasArguments
}

// -------------------------------------------------------------------------------------
// remembering
// -------------------------------------------------------------------------------------

/** A remembered shape: its ranges' bytes back to back, and where each ends. */
interface Known {
  readonly bytes: Uint8Array
  readonly ends: Int32Array
}

/** The most shapes kept under one tool list; past it they are forgotten and relearned. */
const MAX_SHAPES = 4096

const hashOf = (b: Uint8Array, ranges: Int32Array, count: number): number => {
  let h = 0x811c9dc5 ^ count
  for (let r = 0; r < count; r++) {
    const s = ranges[2 * r] as number
    const e = ranges[2 * r + 1] as number
    h = Math.imul(h ^ (e - s), 0x01000193)
    for (let k = s; k < e; k++) h = Math.imul(h ^ (b[k] as number), 0x01000193)
  }
  return h
}

const matches = (b: Uint8Array, ranges: Int32Array, count: number, known: Known): boolean => {
  if (known.ends.length !== count) return false
  let at = 0
  for (let r = 0; r < count; r++) {
    const s = ranges[2 * r] as number
    const e = ranges[2 * r + 1] as number
    if ((known.ends[r] as number) - at !== e - s) return false
    for (let k = s; k < e; k++) if (b[k] !== known.bytes[at++]) return false
  }
  return true
}

const copyOf = (b: Uint8Array, ranges: Int32Array, count: number): Known => {
  const ends = new Int32Array(count)
  let n = 0
  for (let r = 0; r < count; r++) ends[r] = n += (ranges[2 * r + 1] as number) - (ranges[2 * r] as number)
  const bytes = new Uint8Array(n)
  for (let r = 0, at = 0; r < count; r++) {
    bytes.set(b.subarray(ranges[2 * r] as number, ranges[2 * r + 1] as number), at)
    at = ends[r] as number
  }
  return { bytes, ends }
}

// -------------------------------------------------------------------------------------
// templates
// -------------------------------------------------------------------------------------

/**
 * A line known quiet, cut into what every line of its kind repeats and the slots where
 * such lines differ: the scalar values of the members the scan skips. A line that
 * repeats the fixed bytes and holds a scalar of the same kind in each slot is read by
 * the scan exactly as the template was (the scan skips a slot's value whatever it
 * holds, and the bytes after it are the same), so it has the same shape, and is quiet.
 * Checking that costs a comparison of the fixed bytes and a step over each value.
 */
interface Template {
  readonly bytes: Uint8Array
  /** `bytes`, read four at a time */
  readonly view: DataView
  /** start, end, kind (1 string, 0 other) of each slot, relative to the line's start */
  readonly slots: Int32Array
}

/** Slots recorded per template; later values stay in the fixed bytes. */
const MAX_SLOTS = 32
/** Lines longer than this are not made templates. */
const TEMPLATE_BYTES = 4096
/** Templates kept: a host that alternates between a few kinds of call. */
const TEMPLATES = 2

/**
 * Whether `n` bytes at `i` of the line (its memory's view `lv`, at the line's offset
 * `base`) are the template's from `from`: four bytes at a time, three times as fast
 * as one by one (measured here on 80 bytes).
 */
const sameBytes = (lv: DataView, base: number, i: number, tv: DataView, from: number, n: number): boolean => {
  const at = base + i
  let k = 0
  for (; k + 4 <= n; k += 4) if (lv.getUint32(at + k) !== tv.getUint32(from + k)) return false
  for (; k < n; k++) if (lv.getUint8(at + k) !== tv.getUint8(from + k)) return false
  return true
}

/**
 * Where the template's match ends, when the bytes from `start` (up to `limit`) are its
 * fixed bytes with a value of the same kind in each slot; NO otherwise. What matched
 * holds no newline.
 */
const fitAt = (b: Uint8Array, lv: DataView, start: number, limit: number, tpl: Template): number => {
  const tv = tpl.view
  const base = b.byteOffset
  const slots = tpl.slots
  let i = start
  let from = 0
  for (let k = 0; k < slots.length; k += 3) {
    const n = (slots[k] as number) - from
    if (limit - i <= n || !sameBytes(lv, base, i, tv, from, n)) return NO
    i += n
    const c = b[i] as number
    if (slots[k + 2] === 1) {
      if (c !== QUOTE) return NO
      const q = stringEnd(b, i + 1, limit)
      if (q === NO) return NO
      i = q + 1
    } else {
      if (c === QUOTE || c === OPEN_BRACE || c === OPEN_BRACKET) return NO
      i = scalarEnd(b, i, limit)
      if (i === NO) return NO
    }
    from = slots[k + 1] as number
  }
  const rest = tpl.bytes.length - from
  return limit - i >= rest && sameBytes(lv, base, i, tv, from, rest) ? i + rest : NO
}

const templateOf = (b: Uint8Array, start: number, end: number, recorded: Int32Array, count: number): Template => {
  const slots = new Int32Array(3 * count)
  for (let k = 0; k < slots.length; k += 3) {
    slots[k] = (recorded[k] as number) - start
    slots[k + 1] = (recorded[k + 1] as number) - start
    slots[k + 2] = recorded[k + 2] as number
  }
  const bytes = b.slice(start, end)
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), slots }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Nothing remembered yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const quietCalls = (): QuietCalls => {
  const shape: Shape = { slots: undefined, slotCount: 0, isCall: false, count: 0, hasName: false, hasArguments: false, ranges: new Int32Array(2 * (MAX_KEYS + 1)) }
  const recording = new Int32Array(3 * MAX_SLOTS)
  let scanned = false
  let hash = 0
  let under: object | undefined
  let known = new Map<number, Known | Array<Known>>()
  let size = 0
  // the most recently fitted first
  let templates: Array<Template> = []
  // a view of the memory the lines lie in (the ring, mostly), made again when it changes
  let memory: ArrayBufferLike | undefined
  let view: DataView = new DataView(new ArrayBuffer(0))
  let last: Uint8Array | undefined
  const viewOf = (b: Uint8Array): DataView => {
    if (b === last) return view
    last = b
    if (b.buffer !== memory) {
      memory = b.buffer
      view = new DataView(b.buffer)
    }
    return view
  }

  // the first template that fits from `start`: where its match ends, or NO
  const fitted = (bytes: Uint8Array, start: number, limit: number): number => {
    if (templates.length === 0) return NO
    const lv = viewOf(bytes)
    for (let t = 0; t < templates.length; t++) {
      const tpl = templates[t] as Template
      const e = fitAt(bytes, lv, start, limit, tpl)
      if (e !== NO) {
        if (t > 0) templates = [tpl, ...templates.filter((x) => x !== tpl)]
        return e
      }
    }
    return NO
  }

  const quietLineAt = (bytes: Uint8Array, start: number, limit: number, catalogue: object): number => {
    if (catalogue !== under) return NO
    const e = fitted(bytes, start, limit)
    return e !== NO && e < limit && bytes[e] === LF ? e : NO
  }

  const isKnown = (bytes: Uint8Array): boolean => {
    hash = hashOf(bytes, shape.ranges, shape.count)
    const k = known.get(hash)
    if (k === undefined) return false
    if (!Array.isArray(k)) return matches(bytes, shape.ranges, shape.count, k)
    for (const one of k) if (matches(bytes, shape.ranges, shape.count, one)) return true
    return false
  }

  const isQuiet = (bytes: Uint8Array, start: number, end: number, catalogue: object): boolean => {
    if (catalogue !== under) {
      under = catalogue
      known = new Map()
      size = 0
      templates = []
    }
    scanned = false
    if (fitted(bytes, start, end) === end) return true
    const short = end - start <= TEMPLATE_BYTES
    shape.slots = short ? recording : undefined
    scanned = scan(bytes, start, end, shape)
    shape.slots = undefined
    if (!scanned || !isKnown(bytes)) return false
    // quiet: the next line of its kind is checked against it
    if (short) templates = [templateOf(bytes, start, end, recording, shape.slotCount), ...templates].slice(0, TEMPLATES)
    return true
  }

  const remember = (bytes: Uint8Array): void => {
    if (!scanned) return
    scanned = false
    if (size >= MAX_SHAPES) {
      known = new Map()
      size = 0
    }
    const entry = copyOf(bytes, shape.ranges, shape.count)
    const k = known.get(hash)
    if (k === undefined) known.set(hash, entry)
    else if (Array.isArray(k)) k.push(entry)
    else known.set(hash, [k, entry])
    size++
  }

  return { isQuiet, remember, quietLineAt }
}
