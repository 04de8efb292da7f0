/**
 * What `withPolicy` is told about locations, checked once at construction (a `TypeError` naming the option
 * and what it must be): the roots relative paths are read against, the names read as locations and those
 * set aside, how a location is resolved, and the files no call may touch.
 *
 * @since 0.1.0
 */
import { isLeft, isRight } from 'fp-ts/lib/Either.js'
import type { Roots } from '../../kernel/paths.js'
import { LOCATION_ARGS, normalizeAbsolute } from '../../kernel/paths.js'
import type { LocationResolver } from '../../kernel/resolve.js'
import { filesystemResolver, lexicalResolver } from '../../kernel/resolve.js'
import type { ProtectedFile } from './evaluate.js'
import { describeValue } from '../../kernel/describe.js'
import { memberOf } from '../../kernel/guards.js'

const quote = (s: string): string => JSON.stringify(s)

/**
 * `roots`: each prefix's directory a clean absolute path, in normal form; `{}` when absent.
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeRoots = (where: string, u: unknown): Roots => {
  if (u === undefined) return {}
  if (typeof u !== 'object' || u === null || Array.isArray(u)) {
    throw new TypeError(
      `${where}: roots must be an object mapping a tool-name prefix to a directory, got ${describeValue(u)}`,
    )
  }
  const out: Record<string, string> = {}
  for (const [prefix, dir] of Object.entries(u)) {
    const clean = typeof dir === 'string' ? normalizeAbsolute(dir) : undefined
    if (clean === undefined || isLeft(clean)) {
      throw new TypeError(
        `${where}: roots[${quote(prefix)}] must be an absolute POSIX path without "..", NUL, backslash or "~", got ${describeValue(dir)}`,
      )
    }
    Object.defineProperty(out, prefix, { value: clean.right, enumerable: true })
  }
  return Object.freeze(out)
}

/**
 * The names read as locations (`LOCATION_ARGS` and `locationArgs`), and those said not to be one (`!name`).
 *
 * @since 0.1.0
 * @category utils
 */
export const locationNames = (
  where: string,
  u: unknown,
): { readonly names: ReadonlyArray<string>; readonly notLocations: ReadonlySet<string> } => {
  if (u === undefined) return { names: LOCATION_ARGS, notLocations: new Set() }
  if (!Array.isArray(u) || !u.every((n) => typeof n === 'string' && n !== '' && n !== '!')) {
    throw new TypeError(
      `${where}: option "locationArgs" must be an array of argument names (non-empty strings; "!name" for a name ` +
        `that is not a location), added to ${LOCATION_ARGS.join(', ')}; got ${describeValue(u)}`,
    )
  }
  const given = u as ReadonlyArray<string>
  const notLocations = new Set(given.filter((n) => n.startsWith('!')).map((n) => n.slice(1)))
  const both = given.find((n) => notLocations.has(n))
  if (both !== undefined)
    throw new TypeError(
      `${where}: option "locationArgs" both reads and refuses ${JSON.stringify(both)}: keep "${both}" or "!${both}"`,
    )
  const names = [...new Set([...LOCATION_ARGS, ...given.filter((n) => !n.startsWith('!'))])]
  return { names: Object.freeze(names.filter((n) => !notLocations.has(n))), notLocations }
}

const isResolver = (u: unknown): u is LocationResolver => typeof memberOf(u, 'resolve') === 'function'

/**
 * `resolver`: `'lexical'` (the default), `'filesystem'`, a resolver, or a function from a tool name to one (a
 * function that throws, or answers with something else, gives the lexical form).
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeResolver = (where: string, u: unknown): ((tool: string) => LocationResolver) => {
  if (u === undefined || u === 'lexical') {
    const lexical = lexicalResolver()
    return () => lexical
  }
  if (u === 'filesystem') {
    const shared = filesystemResolver()
    return () => shared
  }
  if (isResolver(u)) return () => u
  if (typeof u === 'function' && u.length <= 1) {
    const fallback = lexicalResolver()
    // a per-tool choice that throws, or answers with something else, is the lexical form
    return (tool) => {
      try {
        const r: unknown = (u as (tool: string) => unknown)(tool)
        return isResolver(r) ? r : fallback
      } catch {
        return fallback
      }
    }
  }
  throw new TypeError(
    `${where}: option "resolver" must be "lexical", "filesystem", a LocationResolver, or a function from a tool name to one, got ${describeValue(u)}`,
  )
}

/**
 * `protect`: each `{ path, what }` a clean absolute path in normal form, and words for it; `[]` when absent.
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeProtect = (where: string, u: unknown): ReadonlyArray<ProtectedFile> => {
  if (u === undefined) return []
  const files = Array.isArray(u) ? u.map(protectedFileOf) : undefined
  if (files === undefined || !files.every((f): f is ProtectedFile => f !== undefined))
    throw new TypeError(
      `${where}: option "protect" must be an array of { path, what }, each path a clean absolute path, got ${describeValue(u)}`,
    )
  return Object.freeze(files)
}

// one entry of `protect`, each member read once (a getter is not asked twice), or undefined when it is not one
const protectedFileOf = (f: unknown): ProtectedFile | undefined => {
  const path = memberOf(f, 'path')
  const what = memberOf(f, 'what')
  const clean = typeof path === 'string' ? normalizeAbsolute(path) : undefined
  return typeof what === 'string' && clean !== undefined && isRight(clean)
    ? Object.freeze({ path: clean.right, what })
    : undefined
}
