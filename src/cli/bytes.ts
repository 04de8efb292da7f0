/**
 * The bytes the command's readers look for, named once: JSON's structural and
 * whitespace characters, and the helpers that spell words as bytes.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export const TAB = 0x09
/** @since 0.1.0 */
export const LF = 0x0a
/** @since 0.1.0 */
export const CR = 0x0d
/** @since 0.1.0 */
export const SPACE = 0x20
/** @since 0.1.0 */
export const QUOTE = 0x22
/** @since 0.1.0 */
export const PLUS = 0x2b
/** @since 0.1.0 */
export const COMMA = 0x2c
/** @since 0.1.0 */
export const MINUS = 0x2d
/** @since 0.1.0 */
export const DOT = 0x2e
/** @since 0.1.0 */
export const ZERO = 0x30
/** @since 0.1.0 */
export const NINE = 0x39
/** @since 0.1.0 */
export const COLON = 0x3a
/** @since 0.1.0 */
export const OPEN_BRACKET = 0x5b
/** @since 0.1.0 */
export const BACKSLASH = 0x5c
/** @since 0.1.0 */
export const CLOSE_BRACKET = 0x5d
/** @since 0.1.0 */
export const OPEN_BRACE = 0x7b
/** @since 0.1.0 */
export const CLOSE_BRACE = 0x7d

/**
 * Whether `c` is JSON whitespace.
 *
 * @since 0.1.0
 */
export const isWs = (c: number): boolean => c === SPACE || c === LF || c === CR || c === TAB

/**
 * The first index at or after `i` (before `end`) that is not JSON whitespace.
 *
 * @since 0.1.0
 */
export const skipWs = (b: Uint8Array, i: number, end: number): number => {
  while (i < end) {
    const c = b[i] as number
    if (c > SPACE || !isWs(c)) return i
    i++
  }
  return i
}

/**
 * No bytes: a side's end, or nothing carried.
 *
 * @since 0.1.0
 */
export const EMPTY: Buffer = Buffer.alloc(0)

/**
 * An ASCII word as bytes, to compare against a line without decoding it.
 *
 * @since 0.1.0
 */
export const wordOf = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0))
