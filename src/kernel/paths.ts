/**
 * Where a call acts, read lexically: location arguments made absolute against the tool's root and compared
 * with a directory segment by segment. Nothing here touches the filesystem, so a symlink is never followed
 * and a path that cannot be read cleanly is *unknown*, never guessed.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import { hasOwn } from './guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The argument names read as locations by default: each a string, or an array of strings. Only those a tool
 * **declares** are read (see `LocationScope`); a call that carries one its tool does not declare has an
 * *unknown* location, so `under` rules fail closed on it.
 *
 * @since 0.1.0
 * @category model
 */
export const LOCATION_ARGS: ReadonlyArray<string> = Object.freeze([
  'path',
  'paths',
  'source',
  'destination',
  'from',
  'to',
  'file',
  'files',
  'target',
  'directory',
  'dir',
])

/**
 * What `locate` knows of the tool a call is for: the argument names read as locations, and the top-level
 * argument names the tool declares (the keys of its `parameters.properties`), or `undefined` when its
 * declaration is not known (no listing of it went through the policy): then every `under` rule fails closed.
 *
 * @since 0.1.0
 * @category model
 */
export interface LocationScope {
  readonly names: ReadonlyArray<string>
  readonly declared: ReadonlySet<string> | undefined
}

/**
 * Whether a location lies inside a directory. `unknown` when the location cannot be read cleanly: the policy
 * treats it as inside for deny and ask, outside for allow.
 *
 * @since 0.1.0
 * @category model
 */
export type Containment = 'inside' | 'outside' | 'unknown'

/**
 * Tool-name prefix → the directory its relative paths are resolved against. The longest matching prefix wins;
 * `''` matches every tool.
 *
 * @since 0.1.0
 * @category model
 */
export type Roots = Readonly<Record<string, string>>

/**
 * One location argument of a call: an absolute, normalised path, or why it cannot be read.
 *
 * @since 0.1.0
 * @category model
 */
export type PathLocation =
  | { readonly _tag: 'Known'; readonly arg: string; readonly path: string }
  | { readonly _tag: 'Unknown'; readonly arg: string; readonly problem: string }
  /** The call gives no location argument; a tool may well default to somewhere. */
  | { readonly _tag: 'Missing' }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// The checks every path goes through before its segments are trusted; the order decides which problem a model
// is told about first.
const problemOf = (p: string): string | undefined => {
  if (p === '') return 'is empty'
  if (p.includes('\u0000')) return 'contains a NUL character'
  if (p.includes('\\')) return 'contains a backslash'
  if (p.startsWith('~')) return 'starts with "~", which only a shell expands'
  if (p.split('/').includes('..')) return 'has a ".." segment'
  return undefined
}

const segmentsOf = (p: string): ReadonlyArray<string> => p.split('/').filter((s) => s !== '' && s !== '.')

const fromSegments = (segments: ReadonlyArray<string>): string => '/' + segments.join('/')

/**
 * A clean absolute path in normal form (no `.` or empty segments, no trailing slash), or why it is not one.
 *
 * @example
 * import { normalizeAbsolute } from './paths.js'
 * assert.deepStrictEqual(normalizeAbsolute('/tmp//root/./a/'), { _tag: 'Right', right: '/tmp/root/a' })
 * assert.deepStrictEqual(normalizeAbsolute('/tmp/../etc'), { _tag: 'Left', left: 'has a ".." segment' })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const normalizeAbsolute = (p: string): Either<string, string> => {
  const problem = problemOf(p)
  if (problem !== undefined) return left(problem)
  if (!p.startsWith('/')) return left('is not absolute')
  return right(fromSegments(segmentsOf(p)))
}

/**
 * The root for a tool: the directory of the longest prefix of its name, `''` acting as a catch-all. Roots
 * that are not clean absolute paths are ignored.
 *
 * @example
 * import { rootFor } from './paths.js'
 * const roots = { '': '/srv', fs_: '/home/me/project' }
 * assert.strictEqual(rootFor(roots, 'fs_read'), '/home/me/project')
 * assert.strictEqual(rootFor(roots, 'web_get'), '/srv')
 * assert.strictEqual(rootFor({}, 'fs_read'), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const rootFor = (roots: Roots, tool: string): string | undefined => {
  let best: { readonly prefix: string; readonly dir: string } | undefined
  // own entries only: a prefix is data, `__proto__` included
  for (const [prefix, dir] of Object.entries(roots)) {
    if (typeof dir !== 'string' || !tool.startsWith(prefix)) continue
    if (best !== undefined && best.prefix.length >= prefix.length) continue
    const clean = normalizeAbsolute(dir)
    if (clean._tag === 'Right') best = { prefix, dir: clean.right }
  }
  return best?.dir
}

/**
 * A raw location argument as an absolute, normalised path: absolute paths as they are, relative ones against
 * `root`. Anything that cannot be read cleanly is a Left giving the reason.
 *
 * @example
 * import { absolutise } from './paths.js'
 * assert.deepStrictEqual(absolutise('src/a.ts', '/proj'), { _tag: 'Right', right: '/proj/src/a.ts' })
 * assert.deepStrictEqual(absolutise('src/a.ts', undefined), {
 *   _tag: 'Left',
 *   left: 'is relative and this tool has no root',
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const absolutise = (raw: unknown, root: string | undefined): Either<string, string> => {
  if (typeof raw !== 'string')
    return left(
      raw === undefined
        ? 'is missing'
        : `is not a string (${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw})`,
    )
  const problem = problemOf(raw)
  if (problem !== undefined) return left(problem)
  if (raw.startsWith('/')) return right(fromSegments(segmentsOf(raw)))
  if (root === undefined) return left('is relative and this tool has no root')
  const base = normalizeAbsolute(root)
  if (base._tag === 'Left') return left('is relative and this tool has no usable root')
  return right(fromSegments([...segmentsOf(base.right), ...segmentsOf(raw)]))
}

// one location argument's value: a string, or each string of an array (named by its position, so the human
// sees which one)
const valuesOf = (arg: string, raw: unknown, root: string | undefined): ReadonlyArray<PathLocation> => {
  const one = (name: string, v: unknown): PathLocation => {
    const path = absolutise(v, root)
    return path._tag === 'Right'
      ? { _tag: 'Known', arg: name, path: path.right }
      : { _tag: 'Unknown', arg: name, problem: path.left }
  }
  return Array.isArray(raw) ? raw.map((v: unknown, i) => one(`${arg}[${i}]`, v)) : [one(arg, raw)]
}

/**
 * Every location of a call, in the order of `scope.names` (default `LOCATION_ARGS`): each name the tool
 * declares and the call gives, a string or each string of an array. A name the call gives and the tool does
 * not declare is an unknown location, listed after those (a decoy decides nothing); so are arguments that are
 * not an object, and every location of a tool whose declaration is not known. A call that gives none is one
 * missing location. Without `scope` (a caller that has no declaration) every name the call gives is read.
 *
 * @example
 * import { locate } from './paths.js'
 * const scope = { names: ['source', 'destination', 'path'], declared: new Set(['source', 'destination']) }
 * assert.deepStrictEqual(locate({ source: 'a', destination: '/b', path: '/p' }, 'fs_move', { fs_: '/p' }, scope), [
 *   { _tag: 'Known', arg: 'source', path: '/p/a' },
 *   { _tag: 'Known', arg: 'destination', path: '/b' },
 *   { _tag: 'Unknown', arg: 'path', problem: 'is not an argument this tool declares' },
 * ])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const locate = (
  args: unknown,
  tool: string,
  roots: Roots,
  scope?: LocationScope,
): ReadonlyArray<PathLocation> => {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return [{ _tag: 'Unknown', arg: 'arguments', problem: 'could not be read as a JSON object' }]
  }
  if (scope !== undefined && scope.declared === undefined) {
    return [
      {
        _tag: 'Unknown',
        arg: 'arguments',
        problem:
          "cannot be located: this tool's declaration is not known (its tools were not listed through the policy)",
      },
    ]
  }
  try {
    const root = rootFor(roots, tool)
    const out: Array<PathLocation> = []
    // the decoys after the tool's own locations, so a human reads those first
    const decoys: Array<PathLocation> = []
    for (const arg of scope?.names ?? LOCATION_ARGS) {
      if (!hasOwn(args, arg)) continue
      if (scope?.declared !== undefined && !scope.declared.has(arg))
        decoys.push({ _tag: 'Unknown', arg, problem: 'is not an argument this tool declares' })
      else out.push(...valuesOf(arg, (args as Readonly<Record<string, unknown>>)[arg], root))
    }
    out.push(...decoys)
    return out.length > 0 ? out : [{ _tag: 'Missing' }]
  } catch {
    // a Proxy or a throwing getter: nothing about its location can be trusted
    return [{ _tag: 'Unknown', arg: 'arguments', problem: 'could not be read' }]
  }
}

/**
 * Whether normalised absolute `path` is `dir` or lies below it, segment by segment: `/tmp/root2` is not
 * inside `/tmp/root`, and a relative path is inside nothing.
 *
 * @example
 * import { isInside } from './paths.js'
 * assert.strictEqual(isInside('/tmp/root', '/tmp/root/a'), true)
 * assert.strictEqual(isInside('/tmp/root', '/tmp/root2'), false)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const isInside = (dir: string, path: string): boolean =>
  dir === '/' ? path.startsWith('/') : path === dir || path.startsWith(dir + '/')

/**
 * Where one location stands against a directory. A directory that is not a clean absolute path makes every
 * result `unknown`.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const locationWithin =
  (dir: string) =>
  (location: PathLocation): Containment => {
    if (location._tag !== 'Known') return 'unknown'
    const d = normalizeAbsolute(dir)
    if (d._tag === 'Left') return 'unknown'
    return isInside(d.right, location.path) ? 'inside' : 'outside'
  }

/**
 * Tri-state containment of a raw location argument in `dir`, relative paths read against `root`. A `..`
 * segment, a NUL, a backslash, a relative path with no root, a missing or non-string argument: each is
 * `unknown`.
 *
 * @example
 * import { containment } from './paths.js'
 * assert.strictEqual(containment('/tmp/root', '/tmp/root/a.txt'), 'inside')
 * assert.strictEqual(containment('/tmp/root', '/tmp/root2'), 'outside')
 * assert.strictEqual(containment('/tmp/root', '/tmp/root/../etc'), 'unknown')
 * assert.strictEqual(containment('/tmp/root', 'a.txt', '/tmp/root'), 'inside')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const containment = (dir: string, raw: unknown, root?: string): Containment => {
  const path = absolutise(raw, root)
  if (path._tag === 'Left') return 'unknown'
  return locationWithin(dir)({ _tag: 'Known', arg: 'path', path: path.right })
}

/**
 * The deepest directory containing every path (containment is inclusive: a single path returns itself),
 * `undefined` for no paths.
 *
 * @example
 * import { commonDirectory } from './paths.js'
 * assert.strictEqual(commonDirectory(['/p/src/a.ts', '/p/src/lib/b.ts']), '/p/src')
 * assert.strictEqual(commonDirectory(['/p/a']), '/p/a')
 * assert.strictEqual(commonDirectory(['/a', '/b']), '/')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const commonDirectory = (paths: ReadonlyArray<string>): string | undefined => {
  const [first, ...rest] = paths.map(segmentsOf)
  if (first === undefined) return undefined
  let n = first.length
  for (const segs of rest) {
    let i = 0
    while (i < n && i < segs.length && segs[i] === first[i]) i++
    n = i
  }
  return fromSegments(first.slice(0, n))
}

/**
 * The directory a normalised absolute path lies in; `/` for `/` itself.
 *
 * @example
 * import { parentDirectory } from './paths.js'
 * assert.strictEqual(parentDirectory('/w/src/a.ts'), '/w/src')
 * assert.strictEqual(parentDirectory('/w'), '/')
 * assert.strictEqual(parentDirectory('/'), '/')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const parentDirectory = (path: string): string => fromSegments(segmentsOf(path).slice(0, -1))
