// Reading untyped data: keys are data, so a missing key must never fall through to Object.prototype, and `in`
// is never used on objects this code did not make.

/** Whether `k` is an own property of `o`. */
export const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Whether a value is a whole number in the safe range (false for whatever is not a number). */
export const isSafeInteger = (u: unknown): u is number => Number.isSafeInteger(u)

/** Whether a value is a non-array object. */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === 'object' && u !== null && !Array.isArray(u)

/**
 * Returns `u[key]` read from untrusted data: `undefined` when `u` is not an object (a primitive, `null`, a
 * function); `unreadable` (default `undefined`) when the read throws (a getter, a Proxy trap). The guard is
 * separate from the try, so a test can tell "nothing to read" from "could not be read", and no catch can hide
 * a missing guard.
 */
export const memberOf = (u: unknown, key: string, unreadable?: unknown): unknown => {
  if (typeof u !== 'object' || u === null) return undefined
  try {
    return (u as Record<string, unknown>)[key]
  } catch {
    return unreadable
  }
}

/** An own property of a non-array object, or `undefined`. */
export const own = (u: unknown, key: string): unknown => (isRecord(u) && hasOwn(u, key) ? u[key] : undefined)

/** A plain object holding `o`'s own enumerable members, `__proto__` among them as a member like any other. */
export const ownCopy = (o: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(o)) {
    Object.defineProperty(out, k, {
      value: (o as Record<string, unknown>)[k],
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}
