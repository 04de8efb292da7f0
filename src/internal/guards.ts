// Reading untyped data: keys are data, so a missing key must never fall through to
// Object.prototype, and `in` is never used on objects this code did not make.

/** Whether `k` is an own property of `o`. */
export const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)

/** Whether a value is a non-array object. */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === 'object' && u !== null && !Array.isArray(u)

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
