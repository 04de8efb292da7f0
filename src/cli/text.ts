/**
 * Text helpers for what the command prints and reads. Imports only the kernel's leaf modules
 * (`describe`, `guards`), which import nothing: the command line loads this before it knows which
 * subcommand runs.
 *
 * @since 0.1.0
 */
import { cut, escapeControls } from '../kernel/describe.js'

export { cut, describeError, escapeControls, installCommand, isMissingPackage } from '../kernel/describe.js'
export { isRecord, own } from '../kernel/guards.js'

/**
 * Text from a model, an upstream or a file as the command prints it: cut at `max` characters, control and
 * invisible characters escaped. @since 0.1.0
 */
export const shown = (s: string, max = 200): string => escapeControls(cut(s, max))

/** `n` and a noun, plural unless `n` is 1. @since 0.1.0 */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/**
 * Returns `value` as one line of JSON that is safe to print to a terminal. `JSON.stringify` escapes C0
 * controls but leaves DEL, C1, line separators and direction marks raw; those can only occur inside
 * strings, where an escape such as `\u009b` denotes the same character, so the JSON is the same value.
 *
 * @since 0.1.0
 */
export const jsonLine = (value: unknown, replacer?: (key: string, value: unknown) => unknown): string =>
  escapeControls(JSON.stringify(value, replacer))

/** What kind of JSON value `u` is, in words. @since 0.1.0 */
export const kindOf = (u: unknown): string =>
  u === null ? 'null' : Array.isArray(u) ? 'an array' : typeof u === 'object' ? 'an object' : `a ${typeof u}`

/** An id as warnings print it (as `withUnknownKeyAudit` does): `''` for none. @since 0.1.0 */
export const idText = (id: unknown): string => (id === undefined || id === null ? '' : String(id))
