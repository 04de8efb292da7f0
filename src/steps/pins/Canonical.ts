/**
 * Canonical JSON and the hash a definition is pinned by. Two texts that hold the same JSON value (members in
 * another order, other whitespace, `1.0` for `1`, `"\u00e9"` for `"é"`) have one canonical form, so a server
 * that re-serialises the same definition is never said to have changed it.
 *
 * The form is RFC 8785's (JSON Canonicalization Scheme): no whitespace, object members sorted by their names'
 * UTF-16 code units, numbers as ECMAScript writes them, strings with JSON's minimal escapes. The hash is SHA-256
 * of its UTF-8 bytes, written `sha256:` and 64 lowercase hexadecimal digits.
 *
 * @since 0.1.0
 */
import { createHash } from 'node:crypto'
import { hasOwn } from '../../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How a definition hash is written: `sha256:` and 64 lowercase hexadecimal digits.
 *
 * @since 0.1.0
 * @category model
 */
export const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/

// deeper than this, a value is not canonicalised (bounds the stack; a schema a server lists is never this deep)
const MAX_DEPTH = 128

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const canonical = (u: unknown, depth: number): string => {
  if (depth > MAX_DEPTH) throw new TypeError(`the value is nested deeper than ${MAX_DEPTH} levels`)
  if (u === null || typeof u === 'boolean' || typeof u === 'string') return JSON.stringify(u)
  // ECMAScript's shortest round-trip form is RFC 8785's; what JSON cannot hold is not a definition
  if (typeof u === 'number') {
    if (!Number.isFinite(u)) throw new TypeError(`${String(u)} is not a JSON number`)
    return JSON.stringify(u)
  }
  if (Array.isArray(u)) return `[${u.map((v) => canonical(v, depth + 1)).join(',')}]`
  if (typeof u === 'object') {
    // own names only, sorted by UTF-16 code units (the default sort); `__proto__` is a name like any other
    const names = Object.keys(u).sort()
    const members: Array<string> = []
    for (const k of names) {
      const v = hasOwn(u, k) ? (u as Record<string, unknown>)[k] : undefined
      // as JSON.stringify writes an object: a member without a JSON value is left out
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
      members.push(`${JSON.stringify(k)}:${canonical(v, depth + 1)}`)
    }
    return `{${members.join(',')}}`
  }
  throw new TypeError(`a ${typeof u} is not a JSON value`)
}

/**
 * The canonical JSON text of a JSON value (RFC 8785). Throws a `TypeError` for what JSON cannot hold (a
 * BigInt, a non-finite number, a cycle or a value nested deeper than 128 levels).
 *
 * @example
 * import { canonicalJson } from './Canonical.js'
 * assert.strictEqual(canonicalJson({ b: [1.0, 'é'], a: { y: null, x: true } }), '{"a":{"x":true,"y":null},"b":[1,"é"]}')
 * assert.strictEqual(canonicalJson(JSON.parse('{ "b" : 2 ,\n "a" : 1 }')), canonicalJson({ a: 1, b: 2 }))
 *
 * @since 0.1.0
 * @category pure steps
 */
export const canonicalJson = (u: unknown): string => canonical(u, 0)

/**
 * The hash of a text: SHA-256 of its UTF-8 bytes, as `sha256:` and 64 hexadecimal digits.
 *
 * @example
 * import { hashOf } from './Canonical.js'
 * assert.strictEqual(hashOf(''), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const hashOf = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`

/**
 * A hash as a person reads it in a line: its first 12 hexadecimal digits (`sha256:3b1f…`).
 *
 * @since 0.1.0
 * @category pure steps
 */
export const shortHash = (hash: string): string => (HASH_PATTERN.test(hash) ? `${hash.slice(0, 19)}…` : hash)
