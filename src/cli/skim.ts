/**
 * The proxy's fast path for the line it sees most: a host-to-server `tools/call`.
 * `skimCall` reads the id, the tool name and the argument keys straight from the
 * bytes, validating the whole line as strictly as `JSON.parse` would, without decoding
 * it to a string or building a single object. It is an accelerator, not a parser: when
 * it is not certain, it says nothing and the caller parses the line.
 *
 * @since 0.1.0
 */
import { Buffer } from 'node:buffer'
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, DOT, MINUS, NINE, OPEN_BRACE, OPEN_BRACKET, PLUS, QUOTE, SPACE, ZERO, skipWs, wordOf } from './bytes.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the audit reads from a `tools/call`: `id` as `callIdOf` gives it (`''` when
 * absent or null), `params.name`, and `Object.keys(params.arguments)` in their order.
 *
 * @since 0.1.0
 * @category model
 */
export interface SkimmedCall {
  /** `String(id)`, `''` for none or null; what `callIdOf` gives. */
  readonly id: string
  /** `params.name`, decoded. */
  readonly name: string
  /** `Object.keys(params.arguments)`: array indices ascending, then first insertion order. */
  readonly keys: ReadonlyArray<string>
}

// -------------------------------------------------------------------------------------
// bytes
// -------------------------------------------------------------------------------------

/** Not valid JSON, or not a line this reader wants to answer for. */
const FAIL = -1

// Containers nested deeper than this inside a value are left to JSON.parse, which has
// no such limit: the skipper keeps its stack in the bits of one integer.
const MAX_NESTING = 31
// Strings longer than this are searched natively and checked a word at a time; they
// are then reported as not plain, so the rare long key is decoded by JSON.parse.
const SHORT = 64
// Below this many bytes a word-at-a-time check costs more than it saves.
const WORDS_FROM = 128

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE

const isHex = (c: number): boolean => (c >= ZERO && c <= NINE) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66)


/** `i` is at a backslash: the index of the escape's last byte, or FAIL. */
const skipEscape = (b: Buffer, i: number, end: number): number => {
  if (i + 1 >= end) return FAIL
  switch (b[i + 1] as number) {
    case QUOTE:
    case BACKSLASH:
    case 0x2f: // /
    case 0x62: // b
    case 0x66: // f
    case 0x6e: // n
    case 0x72: // r
    case 0x74: // t
      return i + 1
    case 0x75: // u
      return i + 5 < end && isHex(b[i + 2] as number) && isHex(b[i + 3] as number) && isHex(b[i + 4] as number) && isHex(b[i + 5] as number)
        ? i + 5
        : FAIL
    default:
      return FAIL
  }
}

/**
 * The first index in `[i, q)` holding a control byte or a backslash, `q` when there is
 * none. Long spans are read four bytes at a time: a word has a byte below 0x20 exactly
 * when `(x - 0x20202020) & ~x & 0x80808080` is not zero, and a backslash exactly when
 * the same test for zero holds of `x ^ 0x5c5c5c5c`.
 */
const stopIn = (b: Buffer, i: number, q: number): number => {
  if (q - i >= WORDS_FROM) {
    const offset = b.byteOffset
    for (; ((offset + i) & 3) !== 0; i++) {
      const c = b[i] as number
      if (c < SPACE || c === BACKSLASH) return i
    }
    const n = (q - i) >>> 2
    const words = new Uint32Array(b.buffer, offset + i, n)
    let k = 0
    for (; k < n; k++) {
      const x = words[k] as number
      const y = x ^ 0x5c5c5c5c
      if ((((x - 0x20202020) & ~x) | ((y - 0x01010101) & ~y)) & 0x80808080) break
    }
    i += k << 2
  }
  for (; i < q; i++) {
    const c = b[i] as number
    if (c < SPACE || c === BACKSLASH) return i
  }
  return q
}

/** The rest of a long string from `i`: its closing quote's index, or FAIL. */
const scanLong = (b: Buffer, i: number, end: number): number => {
  let q = b.indexOf(QUOTE, i)
  for (;;) {
    if (q < 0 || q >= end) return FAIL
    const p = stopIn(b, i, q)
    if (p === q) return q
    if (b[p] !== BACKSLASH) return FAIL
    const e = skipEscape(b, p, end)
    if (e === FAIL) return FAIL
    i = e + 1
    // only `\"` can swallow the quote found; search again only then, so a long run
    // of escapes before one far quote stays linear
    if (e >= q) q = b.indexOf(QUOTE, i)
  }
}

/** 1 for the bytes that end a run of plain string contents: controls, `"`, `\`, non-ASCII. */
const ENDS_RUN = Uint8Array.from({ length: 256 }, (_, c) => (c < SPACE || c === QUOTE || c === BACKSLASH || c >= 0x80 ? 1 : 0))

const ends = (c: number): number => ENDS_RUN[c] as number

/**
 * A string's contents from `i` (just after its opening quote). The closing quote's
 * index `q` when the string is plain (printable ASCII, no escape), `~q` when it is
 * valid but not plain, FAIL when it is not valid.
 */
const scanString = (b: Buffer, i: number, end: number): number => {
  const stop = end - i > SHORT ? i + SHORT : end
  // four ordinary bytes at a time (twice as fast as one by one, measured on ids and
  // keys), then byte by byte from the group holding something else
  while (i + 4 <= stop && (ends(b[i] as number) | ends(b[i + 1] as number) | ends(b[i + 2] as number) | ends(b[i + 3] as number)) === 0) i += 4
  let plain = true
  for (; i < stop; i++) {
    const c = b[i] as number
    if (c === QUOTE) return plain ? i : ~i
    if (c === BACKSLASH) {
      i = skipEscape(b, i, end)
      if (i === FAIL) return FAIL
      plain = false
    } else if (c < SPACE) return FAIL
    else if (c >= 0x80) plain = false
  }
  if (i >= end) return FAIL
  const q = scanLong(b, i, end)
  return q === FAIL ? FAIL : ~q
}

/** The closing quote's index from what `scanString` answered (not FAIL). */
const closing = (r: number): number => (r >= 0 ? r : ~r)

/** A number from `i`: the index after it, or FAIL; exactly the JSON grammar. */
const scanNumber = (b: Buffer, i: number, end: number): number => {
  if (i < end && b[i] === MINUS) i++
  if (i >= end) return FAIL
  const first = b[i] as number
  if (first === ZERO) i++
  else if (first > ZERO && first <= NINE) {
    i++
    while (i < end && isDigit(b[i] as number)) i++
  } else return FAIL
  if (i < end && b[i] === DOT) {
    i++
    if (i >= end || !isDigit(b[i] as number)) return FAIL
    while (i < end && isDigit(b[i] as number)) i++
  }
  if (i < end && ((b[i] as number) | 0x20) === 0x65) {
    i++
    if (i < end && (b[i] === PLUS || b[i] === MINUS)) i++
    if (i >= end || !isDigit(b[i] as number)) return FAIL
    while (i < end && isDigit(b[i] as number)) i++
  }
  return i
}

/** An ASCII word as bytes, to compare against the line without decoding it. */
type Word = Uint8Array

const W_TRUE = wordOf('true')
const W_FALSE = wordOf('false')
const W_NULL = wordOf('null')
const W_METHOD = wordOf('method')
const W_PARAMS = wordOf('params')
const W_ID = wordOf('id')
const W_NAME = wordOf('name')
const W_ARGUMENTS = wordOf('arguments')
const W_TOOLS_CALL = wordOf('tools/call')

/** Whether the bytes from `i` spell `w`. */
const spells = (b: Buffer, i: number, end: number, w: Word): boolean => {
  const n = w.length
  if (end - i < n) return false
  for (let k = 0; k < n; k++) if (b[i + k] !== w[k]) return false
  return true
}

/** Whether the decoded text `t` is `w`. */
const textIs = (t: string, w: Word): boolean => {
  const n = w.length
  if (t.length !== n) return false
  for (let k = 0; k < n; k++) if (t.charCodeAt(k) !== w[k]) return false
  return true
}

const fromCharCode = String.fromCharCode

/** Node's slicer behind `toString('latin1', …)`, called directly to skip the argument checks (~10 ns). */
type Latin1Slicer = Buffer & { readonly latin1Slice: (start: number, end: number) => string }

const latin1: (b: Buffer, s: number, q: number) => string =
  typeof (Buffer.prototype as Partial<Latin1Slicer>).latin1Slice === 'function'
    ? (b, s, q) => (b as Latin1Slicer).latin1Slice(s, q)
    : (b, s, q) => b.toString('latin1', s, q)

/**
 * Printable ASCII `[s, q)` as a string. Measured here: a spelled-out
 * `String.fromCharCode` takes 10 to 15 ns up to 8 bytes, where a `latin1` slice costs
 * 45 ns alone and far more inside the skim (the call into C++ dominates); past 24 bytes
 * the slice wins.
 */
const ascii = (b: Buffer, s: number, q: number): string => {
  switch (q - s) {
    case 0:
      return ''
    case 1:
      return fromCharCode(b[s] as number)
    case 2:
      return fromCharCode(b[s] as number, b[s + 1] as number)
    case 3:
      return fromCharCode(b[s] as number, b[s + 1] as number, b[s + 2] as number)
    case 4:
      return fromCharCode(b[s] as number, b[s + 1] as number, b[s + 2] as number, b[s + 3] as number)
    case 5:
      return fromCharCode(b[s] as number, b[s + 1] as number, b[s + 2] as number, b[s + 3] as number, b[s + 4] as number)
    case 6:
      return fromCharCode(b[s] as number, b[s + 1] as number, b[s + 2] as number, b[s + 3] as number, b[s + 4] as number, b[s + 5] as number)
    case 7:
      return fromCharCode(
        b[s] as number,
        b[s + 1] as number,
        b[s + 2] as number,
        b[s + 3] as number,
        b[s + 4] as number,
        b[s + 5] as number,
        b[s + 6] as number,
      )
    case 8:
      return fromCharCode(
        b[s] as number,
        b[s + 1] as number,
        b[s + 2] as number,
        b[s + 3] as number,
        b[s + 4] as number,
        b[s + 5] as number,
        b[s + 6] as number,
        b[s + 7] as number,
      )
    default:
      // in eights, joined, while that still beats the native call
      return q - s <= 24 ? ascii(b, s, s + 8) + ascii(b, s + 8, q) : latin1(b, s, q)
  }
}

/**
 * The string whose contents are `[s, q)`, already validated, as JSON.parse reads it.
 * Escapes and non-ASCII bytes are rare in what is decoded (keys, names, ids): those go
 * to JSON.parse, over the very bytes the whole line's UTF-8 decoding would have given
 * (a malformed sequence never swallows the ASCII quote that ends it).
 */
const decode = (b: Buffer, s: number, r: number): string =>
  r >= 0 ? ascii(b, s, r) : (JSON.parse(b.toString('utf8', s - 1, ~r + 1)) as string)

/** Whether the string from `s` (`r` as `scanString` answered) reads as `w`. */
const reads = (b: Buffer, s: number, r: number, w: Word): boolean =>
  r >= 0 ? r - s === w.length && b[s] === w[0] && spells(b, s, r, w) : textIs(decode(b, s, r), w)

// -------------------------------------------------------------------------------------
// values
// -------------------------------------------------------------------------------------

/** `q` at a key's closing quote: the index of its value (whitespace skipped), or FAIL. */
const valueAfter = (b: Buffer, q: number, end: number): number => {
  const i = skipWs(b, q + 1, end)
  return i < end && b[i] === COLON ? skipWs(b, i + 1, end) : FAIL
}

/** `i` at a member's key: the index of its value, or FAIL. */
const afterKey = (b: Buffer, i: number, end: number): number => {
  if (i >= end || b[i] !== QUOTE) return FAIL
  const r = scanString(b, i + 1, end)
  return r === FAIL ? FAIL : valueAfter(b, closing(r), end)
}

/** A scalar from `i`: the index after it, or FAIL. */
const skipScalar = (b: Buffer, i: number, end: number): number => {
  switch (b[i] as number) {
    case QUOTE: {
      const r = scanString(b, i + 1, end)
      return r === FAIL ? FAIL : closing(r) + 1
    }
    case 0x74:
      return spells(b, i, end, W_TRUE) ? i + 4 : FAIL
    case 0x66:
      return spells(b, i, end, W_FALSE) ? i + 5 : FAIL
    case 0x6e:
      return spells(b, i, end, W_NULL) ? i + 4 : FAIL
    default:
      return scanNumber(b, i, end)
  }
}

/**
 * Any value from `i` (no whitespace before it): the index after it, or FAIL. One loop
 * rather than a recursion: bit `d` of `objects` tells whether the container at depth
 * `d` is an object.
 */
const skipValue = (b: Buffer, i: number, end: number): number => {
  let objects = 0
  let depth = 0
  for (;;) {
    if (i >= end) return FAIL
    const c = b[i] as number
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === MAX_NESTING) return FAIL
      const isObject = c === OPEN_BRACE
      i = skipWs(b, i + 1, end)
      if (i < end && b[i] === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) i++
      else {
        if (isObject) {
          objects |= 1 << depth
          i = afterKey(b, i, end)
          if (i === FAIL) return FAIL
        } else objects &= ~(1 << depth)
        depth++
        continue
      }
    } else {
      i = skipScalar(b, i, end)
      if (i === FAIL) return FAIL
    }
    // a value ended: close what it ends, up to the next member or element
    for (;;) {
      if (depth === 0) return i
      i = skipWs(b, i, end)
      if (i >= end) return FAIL
      const d = b[i] as number
      const inObject = ((objects >>> (depth - 1)) & 1) === 1
      if (d === COMMA) {
        i = skipWs(b, i + 1, end)
        if (inObject) i = afterKey(b, i, end)
        if (i === FAIL) return FAIL
        break
      }
      if (d !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return FAIL
      depth--
      i++
    }
  }
}

/** After a member at `i`: the next key's index, `~after` past the closing brace, or FAIL. */
const nextMember = (b: Buffer, i: number, end: number): number => {
  i = skipWs(b, i, end)
  if (i >= end) return FAIL
  const c = b[i] as number
  if (c === COMMA) return skipWs(b, i + 1, end)
  return c === CLOSE_BRACE ? ~(i + 1) : FAIL
}

// -------------------------------------------------------------------------------------
// the message
// -------------------------------------------------------------------------------------

/**
 * What one pass has found so far. One record per line, written as members are met,
 * so that the last of duplicate keys wins as it does under JSON.parse.
 */
interface Found {
  /** The last `method` is the string `tools/call`. */
  isCall: boolean
  /** The last `id` as `callIdOf` reads it; `undefined` for an object or array id. */
  id: string | undefined
  /** The last `params.name`, when a string in an object `params`. */
  name: string | undefined
  /** The last `params.arguments` keys, first-seen order, when an object. */
  keys: Array<string> | undefined
  /** Some key of `keys` is an array index, so `Object.keys` would put it first. */
  indexed: boolean
  /** `keys` as a set, once there are enough of them for a scan to cost more. */
  seen: Set<string> | undefined
}

const MESSAGE = 0
const PARAMS = 1
const ARGUMENTS = 2
type Level = typeof MESSAGE | typeof PARAMS | typeof ARGUMENTS

/** A canonical array index, `0` to `2^32 - 2`: what `Object.keys` lists first, ascending. */
const isIndex = (k: string): boolean => {
  const n = k.length
  if (n === 0 || n > 10) return false
  const first = k.charCodeAt(0)
  if (first === ZERO) return n === 1
  for (let j = 0; j < n; j++) if (!isDigit(k.charCodeAt(j))) return false
  return n < 10 || Number(k) <= 4294967294
}

const SET_FROM = 16

/** `first`: the key's first character code, or anything else that is not a digit. */
const addKey = (f: Found, keys: Array<string>, k: string, first: number): void => {
  if (f.seen !== undefined) {
    if (f.seen.has(k)) return
    f.seen.add(k)
  } else {
    if (keys.includes(k)) return
    if (keys.length === SET_FROM) f.seen = new Set([...keys, k])
  }
  keys.push(k)
  if (!f.indexed && isDigit(first) && isIndex(k)) f.indexed = true
}

/** `Object.keys` order: array indices ascending, then the rest as first inserted. */
const ordered = (keys: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...keys.filter(isIndex).sort((a, b) => Number(a) - Number(b)),
  ...keys.filter((k) => !isIndex(k)),
]

/**
 * Whether the JSON number `[i, e)` is spelled as `String` spells its value: up to 15
 * digits, no sign, fraction or exponent (the grammar already rules out leading zeros).
 */
const isCanonical = (b: Buffer, i: number, e: number): boolean => {
  if (e - i > 15) return false
  for (let k = i; k < e; k++) if (!isDigit(b[k] as number)) return false
  return true
}

/** The id's value at `i` as `callIdOf` would render it; the index after it, or FAIL. */
const readId = (b: Buffer, i: number, end: number, f: Found): number => {
  const c = b[i] as number
  if (c === QUOTE) {
    const r = scanString(b, i + 1, end)
    if (r === FAIL) return FAIL
    f.id = decode(b, i + 1, r)
    return closing(r) + 1
  }
  if (c === MINUS || isDigit(c)) {
    const e = scanNumber(b, i, end)
    if (e === FAIL) return FAIL
    f.id = isCanonical(b, i, e) ? ascii(b, i, e) : String(Number(latin1(b, i, e)))
    return e
  }
  const e = skipValue(b, i, end)
  f.id = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? '' : undefined
  return e
}

const readMethod = (b: Buffer, i: number, end: number, f: Found): number => {
  if (b[i] !== QUOTE) {
    f.isCall = false
    return skipValue(b, i, end)
  }
  const r = scanString(b, i + 1, end)
  if (r === FAIL) return FAIL
  f.isCall = reads(b, i + 1, r, W_TOOLS_CALL)
  return closing(r) + 1
}

const readName = (b: Buffer, i: number, end: number, f: Found): number => {
  if (b[i] !== QUOTE) {
    f.name = undefined
    return skipValue(b, i, end)
  }
  const r = scanString(b, i + 1, end)
  if (r === FAIL) return FAIL
  f.name = decode(b, i + 1, r)
  return closing(r) + 1
}

/** A member's value at `i`, read as its key at `level` requires; the index after it. */
const readMember = (b: Buffer, s: number, r: number, i: number, end: number, level: Level, f: Found): number => {
  switch (level) {
    case MESSAGE:
      if (reads(b, s, r, W_METHOD)) return readMethod(b, i, end, f)
      if (reads(b, s, r, W_PARAMS)) {
        f.name = undefined
        f.keys = undefined
        return b[i] === OPEN_BRACE ? readObject(b, i, end, PARAMS, f) : skipValue(b, i, end)
      }
      if (reads(b, s, r, W_ID)) return readId(b, i, end, f)
      return skipValue(b, i, end)
    case PARAMS:
      if (reads(b, s, r, W_NAME)) return readName(b, i, end, f)
      if (reads(b, s, r, W_ARGUMENTS)) {
        f.keys = undefined
        if (b[i] !== OPEN_BRACE) return skipValue(b, i, end)
        f.keys = []
        f.indexed = false
        f.seen = undefined
        return readObject(b, i, end, ARGUMENTS, f)
      }
      return skipValue(b, i, end)
    case ARGUMENTS: {
      const k = decode(b, s, r)
      // read off the bytes when they are the characters: asking a joined string for
      // a character would flatten it here
      addKey(f, f.keys as Array<string>, k, r >= 0 ? (b[s] as number) : k.charCodeAt(0))
      return skipValue(b, i, end)
    }
  }
}

/** The object at `i` (its `{`) at `level`: the index after it, or FAIL. */
const readObject = (b: Buffer, i: number, end: number, level: Level, f: Found): number => {
  i = skipWs(b, i + 1, end)
  if (i < end && b[i] === CLOSE_BRACE) return i + 1
  for (;;) {
    if (i >= end || b[i] !== QUOTE) return FAIL
    const r = scanString(b, i + 1, end)
    if (r === FAIL) return FAIL
    const s = i + 1
    i = valueAfter(b, closing(r), end)
    if (i === FAIL) return FAIL
    i = readMember(b, s, r, i, end, level, f)
    if (i === FAIL) return FAIL
    i = nextMember(b, i, end)
    if (i < FAIL) return ~i
    if (i === FAIL) return FAIL
  }
}

const skim = (b: Buffer, start: number, end: number): SkimmedCall | undefined => {
  const i = skipWs(b, start, end)
  if (i >= end || b[i] !== OPEN_BRACE) return undefined
  const f: Found = { isCall: false, id: '', name: undefined, keys: undefined, indexed: false, seen: undefined }
  const after = readObject(b, i, end, MESSAGE, f)
  if (after === FAIL || skipWs(b, after, end) !== end) return undefined
  const { id, name, keys } = f
  if (!f.isCall || id === undefined || name === undefined || keys === undefined) return undefined
  return { id, name, keys: f.indexed ? ordered(keys) : keys }
}

const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * The call the line `bytes[start, end)` holds, when it is certainly a plain
 * `tools/call`: the range, read as UTF-8, is valid JSON (whitespace around allowed, no
 * BOM), an object whose `method` is `"tools/call"`, whose `params` is an object with a
 * string `name` and an object `arguments`. Duplicate keys resolve as JSON.parse
 * resolves them (the last wins), and `keys` is `Object.keys(arguments)`. `undefined`
 * means "ask JSON.parse": the line is invalid, something else, or not worth the
 * trouble here (an object or array id, a value nested beyond 31 levels). Never throws.
 *
 * @since 0.1.0
 * @category utils
 */
export const skimCall = (bytes: Uint8Array, start: number, end: number): SkimmedCall | undefined => {
  try {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end > bytes.length || start > end) return undefined
    return skim(asBuffer(bytes), start, end)
  } catch {
    return undefined
  }
}
