// Reading untyped data: keys are data, so a missing key must never fall through to
// Object.prototype, and `in` is never used on objects this code did not make.

import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'

/** Whether `k` is an own property of `o`. */
export const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Whether a value is a non-array object. */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === 'object' && u !== null && !Array.isArray(u)

/**
 * `u[key]` read from data this code did not make: `Right(undefined)` when `u` is not an
 * object (a primitive, `null`, a function), `Left` with what was thrown when the read
 * throws (a getter, a Proxy trap). The guard and the read are apart, so "nothing to
 * read" and "could not be read" are two answers a test can tell apart.
 */
export const readMember = (u: unknown, key: string): Either<unknown, unknown> => {
  if (typeof u !== 'object' || u === null) return right(undefined)
  try {
    return right((u as Record<string, unknown>)[key])
  } catch (e) {
    return left(e)
  }
}

/** `u[key]`, or `undefined` when there is nothing to read or it cannot be read. */
export const memberOf = (u: unknown, key: string): unknown => {
  const read = readMember(u, key)
  return read._tag === 'Right' ? read.right : undefined
}

/** An own property of a non-array object, or `undefined`. */
export const own = (u: unknown, key: string): unknown => (isRecord(u) && hasOwn(u, key) ? u[key] : undefined)

/** A plain object holding `o`'s own enumerable members, `__proto__` among them as a member like any other. */
export const ownCopy = (o: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(o)) {
    Object.defineProperty(out, k, { value: (o as Record<string, unknown>)[k], enumerable: true, writable: true, configurable: true })
  }
  return out
}
