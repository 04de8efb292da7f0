// Arguments a tool's schema accepts, made from the schema alone and written apart from the audit
// (it imports nothing of src/): each object holds only keys its schema names in `properties` (all
// the required ones, some of the others), a record a few entries, an array a few elements. What it
// makes is checked by ajv before use, so a value this sketch gets wrong is dropped, never trusted.
// Used by the real-tool tests and the bench.

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }
type Schema = Readonly<Record<string, unknown>>

/** A small seeded generator (mulberry32): the same seed, the same arguments. */
export const seeded = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const isSchema = (u: unknown): u is Schema => typeof u === 'object' && u !== null && !Array.isArray(u)

// local references only, by JSON pointer from the document's root
const deref = (root: unknown, ref: string): unknown => {
  if (!ref.startsWith('#')) return undefined
  let at: unknown = root
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isSchema(at) || !Object.prototype.hasOwnProperty.call(at, token)) return undefined
    at = at[token]
  }
  return at
}

const WORDS = ['alpha', 'notes', 'report.md', 'q3', 'x', 'Hello world', '2026-01-01']

// a branch that takes any object: no type or `object`, and nothing naming keys
const takesAnyObject = (root: unknown, b: unknown): boolean => {
  const s = isSchema(b) && typeof b['$ref'] === 'string' ? deref(root, b['$ref']) : b
  if (s === true) return true
  if (!isSchema(s)) return false
  const type = s['type']
  const object = type === undefined || type === 'object' || (Array.isArray(type) && type.includes('object'))
  const additional = s['additionalProperties']
  const names =
    isSchema(s['properties']) ||
    isSchema(s['patternProperties']) ||
    (isSchema(additional) && Object.keys(additional).length > 0) ||
    ['anyOf', 'oneOf', 'allOf', '$ref'].some((k) => k in s)
  return object && !names
}

/**
 * A value `schema` accepts, or `undefined` when this sketch cannot make one. `full`: every property is
 * present (the widest call), else each optional one half the time. `open` is told of each object made for a
 * union that also has a branch taking any object (a place where no key is undeclared).
 */
export const validValue = (
  root: unknown,
  rand: () => number,
  full = false,
  open: WeakSet<object> = new WeakSet(),
): Json | undefined => {
  const pick = <T>(xs: ReadonlyArray<T>): T => xs[Math.floor(rand() * xs.length)] as T
  const make = (s: unknown, depth: number): Json | undefined => {
    if (s === true || s === undefined) return 'any'
    if (!isSchema(s) || depth > 12) return undefined
    if (typeof s['$ref'] === 'string') return make(deref(root, s['$ref']), depth + 1)
    if (Object.prototype.hasOwnProperty.call(s, 'const')) return s['const'] as Json
    if (Array.isArray(s['enum'])) return pick(s['enum'] as ReadonlyArray<Json>)
    for (const group of ['anyOf', 'oneOf']) {
      const branches = s[group]
      if (Array.isArray(branches) && branches.length > 0) {
        // a branch as the value, the siblings' properties merged in when both are objects
        const branch = make(pick(branches), depth + 1)
        if (isSchema(branch) && branches.some((b) => takesAnyObject(root, b))) open.add(branch)
        const own = { ...s, [group]: undefined }
        if (!isSchema(branch) || !('properties' in s)) return branch
        const rest = make(own, depth + 1)
        return isSchema(rest) ? { ...(rest as object), ...(branch as object) } : branch
      }
    }
    if (Array.isArray(s['allOf'])) {
      let out: Record<string, Json> = {}
      for (const b of s['allOf']) {
        const v = make(b, depth + 1)
        if (isSchema(v)) out = { ...out, ...(v as Record<string, Json>) }
      }
      const { allOf: _, ...own } = s
      const v = make(own, depth + 1)
      return isSchema(v) ? { ...(v as Record<string, Json>), ...out } : Object.keys(out).length > 0 ? out : v
    }
    const types = Array.isArray(s['type']) ? (s['type'] as ReadonlyArray<string>) : [s['type']]
    const type =
      types.find((t) => t === 'object') ??
      (isSchema(s['properties']) || isSchema(s['additionalProperties']) ? 'object' : undefined) ??
      types.find((t) => t !== 'null') ??
      (s['items'] !== undefined ? 'array' : 'string')
    switch (type) {
      case 'object': {
        const out: Record<string, Json> = {}
        const props = isSchema(s['properties']) ? s['properties'] : {}
        const required = Array.isArray(s['required']) ? (s['required'] as ReadonlyArray<string>) : []
        for (const k of Object.keys(props)) {
          if (!full && !required.includes(k) && rand() < 0.5) continue
          const v = make(props[k], depth + 1)
          if (v !== undefined)
            Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
        }
        const names = isSchema(s['propertyNames']) ? s['propertyNames'] : undefined
        const additional = s['additionalProperties']
        if (Object.keys(props).length === 0 && isSchema(additional)) {
          const keys = Array.isArray(names?.['enum']) ? (names['enum'] as ReadonlyArray<string>) : ['k1', 'k2']
          for (const k of keys) {
            const v = make(additional, depth + 1)
            if (v !== undefined) out[k] = v
          }
        }
        return out
      }
      case 'array': {
        const prefix = Array.isArray(s['prefixItems'])
          ? (s['prefixItems'] as ReadonlyArray<unknown>)
          : Array.isArray(s['items'])
            ? (s['items'] as ReadonlyArray<unknown>)
            : []
        const rest = Array.isArray(s['items']) ? s['additionalItems'] : s['items']
        const out: Array<Json> = []
        for (const p of prefix) {
          const v = make(p, depth + 1)
          if (v === undefined) return undefined
          out.push(v)
        }
        const min = typeof s['minItems'] === 'number' ? s['minItems'] : 0
        const n = full ? Math.max(min, 2) : Math.max(min, Math.floor(rand() * 3))
        for (let i = 0; i < n && rest !== undefined && rest !== false; i++) {
          const v = make(rest, depth + 1)
          if (v !== undefined) out.push(v)
        }
        return out
      }
      case 'integer':
        return typeof s['minimum'] === 'number' ? Math.ceil(s['minimum']) : Math.floor(rand() * 10)
      case 'number':
        return typeof s['minimum'] === 'number' ? s['minimum'] : rand() * 10
      case 'boolean':
        return rand() < 0.5
      case 'null':
        return null
      default:
        return pick(WORDS)
    }
  }
  return make(root, 0)
}

/** Every key path of `value` (each object key with the segments of the object holding it). */
export const keysOf = (
  value: unknown,
): ReadonlyArray<{ readonly at: ReadonlyArray<string | number>; readonly key: string }> => {
  const out: Array<{ at: ReadonlyArray<string | number>; key: string }> = []
  const go = (v: unknown, at: ReadonlyArray<string | number>): void => {
    if (Array.isArray(v)) v.forEach((e, i) => go(e, [...at, i]))
    else if (isSchema(v))
      for (const k of Object.keys(v)) {
        out.push({ at, key: k })
        go(v[k], [...at, k])
      }
  }
  go(value, [])
  return out
}

/** A misspelling of `key`: two neighbours swapped, or a letter dropped, or one doubled. */
export const misspell = (key: string, rand: () => number): string => {
  const i = Math.floor(rand() * Math.max(1, key.length - 1))
  const how = Math.floor(rand() * 3)
  if (how === 0 && key.length >= 2 && key[i] !== key[i + 1])
    return key.slice(0, i) + (key[i + 1] ?? '') + (key[i] ?? '') + key.slice(i + 2)
  if (how === 1 && key.length >= 3) return key.slice(0, i) + key.slice(i + 1)
  return key.slice(0, i + 1) + (key[i] ?? 'x') + key.slice(i + 1)
}
