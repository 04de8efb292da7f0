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

const isObject = (u: unknown): u is object => typeof u === 'object' && u !== null

/**
 * Whether `value` nests objects and arrays more than `max` levels deep (the value itself, when it is one, is level
 * 1). It walks with a stack of its own, so a value far deeper than this process's call stack is measured, not
 * overflowed, and it stops at the first place too deep. An object met again no deeper than before is not read
 * again, so a value built in process that shares its parts (each level holding the next twice) costs at most
 * `max` readings of each part, not one per path to it.
 *
 * @example
 * import { nestsDeeperThan } from './guards.js'
 * let schema: Record<string, unknown> = { type: 'string' }
 * for (let i = 0; i < 5_000; i++) schema = { type: 'object', properties: { a: schema } }
 * assert.strictEqual(nestsDeeperThan(100)(schema), true)
 * assert.strictEqual(nestsDeeperThan(2)({ a: [1] }), false)
 * assert.strictEqual(nestsDeeperThan(2)({ a: [[1]] }), true)
 */
export const nestsDeeperThan =
  (max: number) =>
  (value: unknown): boolean => {
    // the deepest level each object was read at: a Map, as a value's parts are compared by identity
    const readAt = new Map<object, number>()
    const pending: Array<readonly [object, number]> = isObject(value) ? [[value, 1]] : []
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [v, depth] = next
      if (depth > max) return true
      if ((readAt.get(v) ?? 0) >= depth) continue
      readAt.set(v, depth)
      for (const child of Array.isArray(v) ? v : Object.values(v)) if (isObject(child)) pending.push([child, depth + 1])
    }
    return false
  }

/**
 * Whether a character code is whitespace as JSON has it: space, line feed, carriage return, tab (no other).
 *
 * @example
 * import { isJsonWhitespace } from './guards.js'
 * assert.deepStrictEqual([0x20, 0x0a, 0x0d, 0x09, 0x0b, 0xa0].map(isJsonWhitespace), [true, true, true, true, false, false])
 */
export const isJsonWhitespace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
