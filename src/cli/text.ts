/**
 * Words and values as the command prints and reads them. It imports only the library's
 * leaves (`describe`, `guards`), which import nothing: the command line loads this
 * before it knows which subcommand runs.
 *
 * @since 0.1.0
 */
export { describeError } from '../internal/describe.js'
export { isRecord, own } from '../internal/guards.js'

/** `n` and a noun, plural unless `n` is 1. @since 0.1.0 */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

// C0 controls, DEL and C1 controls: what a terminal may act on (ESC starts a sequence
// that can retitle the window or move the cursor, U+009B is ESC [ in one character, a
// newline forges a line). Narrower than describe's escapeControls (which also writes
// separators, direction marks and the BOM) because test/cli/text.test.ts holds that
// nothing else changes.
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

const escaped = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/** Text from the input made safe for a terminal: each control character written as `\u001b`. @since 0.1.0 */
export const escapeControls = (s: string): string => s.replace(CONTROL, escaped)

/**
 * A value as one line of JSON that a terminal can show as is. `JSON.stringify` escapes
 * C0 controls but leaves DEL and C1 raw; those can only stand inside strings, where
 * `\u009b` means the same character: the JSON is exactly the same value.
 *
 * @since 0.1.0
 */
export const jsonLine = (value: unknown): string => escapeControls(JSON.stringify(value))

/** What kind of JSON value `u` is, in words. @since 0.1.0 */
export const kindOf = (u: unknown): string => (u === null ? 'null' : Array.isArray(u) ? 'an array' : typeof u === 'object' ? 'an object' : `a ${typeof u}`)

/** An id as the warnings name it (as `withUnknownKeyAudit` does): `''` for none. @since 0.1.0 */
export const idText = (id: unknown): string => (id === undefined || id === null ? '' : String(id))
