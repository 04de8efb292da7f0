/**
 * Words and values as the command prints and reads them. It imports only the library's
 * leaves (`describe`, `guards`), which import nothing: the command line loads this
 * before it knows which subcommand runs.
 *
 * @since 0.1.0
 */
import { escapeControls } from '../kernel/describe.js'

export { describeError, escapeControls } from '../kernel/describe.js'
export { isRecord, own } from '../kernel/guards.js'

/** `n` and a noun, plural unless `n` is 1. @since 0.1.0 */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/**
 * A value as one line of JSON that a terminal can show as is. `JSON.stringify` escapes
 * C0 controls but leaves DEL, C1, separators and direction marks raw; those can only
 * stand inside strings, where `\u009b` means the same character: the JSON is exactly the
 * same value.
 *
 * @since 0.1.0
 */
export const jsonLine = (value: unknown): string => escapeControls(JSON.stringify(value))

/** What kind of JSON value `u` is, in words. @since 0.1.0 */
export const kindOf = (u: unknown): string =>
  u === null ? 'null' : Array.isArray(u) ? 'an array' : typeof u === 'object' ? 'an object' : `a ${typeof u}`

/** An id as the warnings name it (as `withUnknownKeyAudit` does): `''` for none. @since 0.1.0 */
export const idText = (id: unknown): string => (id === undefined || id === null ? '' : String(id))
