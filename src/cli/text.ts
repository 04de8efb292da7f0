/**
 * Words and values as the command prints and reads them. No library import: the
 * command line loads this before it knows which subcommand runs.
 *
 * @since 0.1.0
 */

/**
 * A failure of any kind, in one line.
 *
 * @since 0.1.0
 */
export const describeError = (e: unknown): string => {
  if (e instanceof Error) return e.message || e.name
  try {
    return typeof e === 'string' ? e : (JSON.stringify(e) ?? String(e))
  } catch {
    return String(e)
  }
}

/**
 * `n` and a noun, plural unless `n` is 1.
 *
 * @since 0.1.0
 */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

// -------------------------------------------------------------------------------------
// reading JSON values
// -------------------------------------------------------------------------------------

/**
 * Whether `u` is a JSON object (not an array).
 *
 * @since 0.1.0
 */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === 'object' && u !== null && !Array.isArray(u)

/**
 * `u[key]` when `u` is an object that owns `key`: keys are data (`__proto__` is a key).
 *
 * @since 0.1.0
 */
export const own = (u: unknown, key: string): unknown => (isRecord(u) && Object.hasOwn(u, key) ? u[key] : undefined)

/**
 * What kind of JSON value `u` is, in words.
 *
 * @since 0.1.0
 */
export const kindOf = (u: unknown): string =>
  u === null ? 'null' : Array.isArray(u) ? 'an array' : typeof u === 'object' ? 'an object' : `a ${typeof u}`

/**
 * An id as the warnings name it (as `withUnknownKeyAudit` does): `''` for none.
 *
 * @since 0.1.0
 */
export const idText = (id: unknown): string => (id === undefined || id === null ? '' : String(id))
