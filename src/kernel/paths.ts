/**
 * Where a call acts, read as a server will read it: each location argument in Unicode NFC, a `file:` URL as
 * the path it names, a relative path against the tool's root, in normal form. Anything that is not plainly a
 * path on this machine (another URL, an e-mail address, a `..` segment, a value that is not a string) is
 * never guessed: it is *unknown*, or *elsewhere*. Nothing here touches the filesystem; `resolve.ts` adds what
 * only the filesystem can tell (symbolic links, the case rules of a volume).
 *
 * One file: over 500 lines because reading a location (what a name is, what a value is, where it stands
 * against a rule) is one decision the guard must make the same way everywhere; half the file is its documentation.
 *
 * @since 0.1.0
 */
import { fileURLToPath } from 'node:url'
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import { cut, describeError } from './describe.js'
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
  'uri',
  'url',
])

/**
 * The words that make an argument's name look like a location when it ends with one (`repo_path`, `filePath`,
 * `workingDir`, `output-files`), and the names that are one whole (`cwd`, `root`, `workdir`). A declared
 * argument whose name looks like a location and is not read as one (`LOCATION_ARGS`, `locationArgs`) makes
 * `under` rules fail closed for its tool, until `locationArgs` reads it or says it is not a location.
 *
 * @since 0.1.0
 * @category model
 */
export const LOCATION_WORDS: ReadonlyArray<string> = Object.freeze([
  'path',
  'paths',
  'pathname',
  'filepath',
  'filepaths',
  'file',
  'files',
  'filename',
  'filenames',
  'dir',
  'dirs',
  'directory',
  'directories',
  // where a copy or a move puts something, and what it takes: a copy tool's own names
  'src',
  'dest',
  'dst',
  'destination',
  'destinations',
  'location',
  'locations',
  'folder',
  'folders',
  'uri',
  'uris',
  'url',
  'urls',
  'cwd',
  'root',
  'roots',
  'workdir',
])

/**
 * What `locate` knows of the tool a call is for: the argument names read as locations; the names said not to
 * be locations (never read, never suspected); and the top-level argument names the tool declares (the keys of
 * its `parameters.properties`), or `undefined` when its declaration is not known (no listing of it went
 * through the policy): then no key the call gives can be told from a decoy, so every location is unknown and
 * `under` rules fail closed.
 *
 * @since 0.1.0
 * @category model
 */
export interface LocationScope {
  readonly names: ReadonlyArray<string>
  readonly declared: ReadonlySet<string> | undefined
  readonly notLocations?: ReadonlySet<string>
}

/**
 * Whether a location lies inside a directory, holds it (the directory is inside the location: a move or a
 * delete of the location carries the directory along), or neither. `unknown` when the location cannot be
 * read as a path: the policy treats it as inside for deny and ask, outside for allow.
 *
 * @since 0.1.0
 * @category model
 */
export type Containment = 'inside' | 'holds' | 'outside' | 'unknown'

/**
 * Tool-name prefix → the directory its relative paths are resolved against. The longest matching prefix wins;
 * `''` matches every tool.
 *
 * @since 0.1.0
 * @category model
 */
export type Roots = Readonly<Record<string, string>>

/**
 * One location argument of a call, as read:
 * - `Known`: an absolute path in canonical form; `sent` is the string the model wrote, when it differs.
 * - `Unknown`: it cannot be read as a path (why: `problem`), so it may be anywhere.
 * - `Elsewhere`: plainly not a path on this machine (a URL of another scheme, an e-mail address). Unknown to
 *   every `under` rule, but it cannot name a file here.
 * - `Unread`: a declared argument whose name looks like a location, not read as one by the rules (unknown to
 *   every `under` rule); `reading` is what it would be if it were read.
 * - `Missing`: the call gives no location argument; a tool may well default to somewhere.
 *
 * @since 0.1.0
 * @category model
 */
export type PathLocation =
  Reading | { readonly _tag: 'Unread'; readonly arg: string; readonly reading: Reading } | { readonly _tag: 'Missing' }

/**
 * One value read as a location (see `PathLocation`).
 *
 * @since 0.1.0
 * @category model
 */
export type Reading =
  | {
      readonly _tag: 'Known'
      readonly arg: string
      /** Where it leads: the form compared (see `resolve.ts`). */
      readonly path: string
      /** What the model wrote, when that differs from `path`. */
      readonly sent?: string
      /** The other ways the same location reaches the filesystem, each judged too (see `LocationForms`). */
      readonly forms?: LocationForms
    }
  | {
      readonly _tag: 'Unknown'
      readonly arg: string
      readonly problem: string
      /** A key the tool does not declare (a decoy): unknown to every rule; the server does not take it. */
      readonly undeclared?: true
    }
  | { readonly _tag: 'Elsewhere'; readonly arg: string; readonly problem: string }

/**
 * The ways one location reaches the filesystem besides where it leads, when they differ from it: as written
 * (normal form, before any link is followed: compared with a rule's directory as written), the link its last
 * name is (a move or a delete acts on it), and each other link passed through on the way.
 *
 * @since 0.1.0
 * @category model
 */
export interface LocationForms {
  readonly written?: string
  readonly link?: string
  readonly through?: ReadonlyArray<string>
}

/**
 * Why a value is not a path, and whether it plainly names a place that is not on this machine.
 *
 * @since 0.1.0
 * @category model
 */
export interface NotAPath {
  readonly problem: string
  readonly elsewhere: boolean
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// The checks every path goes through before its segments are trusted; the order decides which problem a model
// is told about first.
const problemOf = (p: string): string | undefined => {
  if (p === '') return 'is empty'
  if (p.includes('\u0000')) return 'contains a NUL character'
  // eslint-disable-next-line no-control-regex
  if (/[\u0001-\u001f\u007f-\u009f]/.test(p)) return 'contains a control character'
  if (p.includes('\\')) return 'contains a backslash'
  if (p.startsWith('~')) return 'starts with "~", which only a shell expands'
  if (p.split('/').includes('..')) return 'has a ".." segment'
  return undefined
}

const segmentsOf = (p: string): ReadonlyArray<string> => p.split('/').filter((s) => s !== '' && s !== '.')

const fromSegments = (segments: ReadonlyArray<string>): string => '/' + segments.join('/')

/**
 * A clean absolute path in normal form (Unicode NFC, no `.` or empty segments, no trailing slash), or why it
 * is not one.
 *
 * @example
 * import { normalizeAbsolute } from './paths.js'
 * assert.deepStrictEqual(normalizeAbsolute('/tmp//root/./a/'), { _tag: 'Right', right: '/tmp/root/a' })
 * assert.deepStrictEqual(normalizeAbsolute('/tmp/../etc'), { _tag: 'Left', left: 'has a ".." segment' })
 * assert.deepStrictEqual(normalizeAbsolute('/caf\u0065\u0301'), { _tag: 'Right', right: '/caf\u00e9' })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const normalizeAbsolute = (p: string): Either<string, string> => {
  const problem = problemOf(p)
  if (problem !== undefined) return left(problem)
  if (!p.startsWith('/')) return left('is not absolute')
  return right(fromSegments(segmentsOf(p.normalize('NFC'))))
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
    // Stryker disable next-line EqualityOperator: equivalent: two keys of one length that both start `tool` are one
    if (best !== undefined && best.prefix.length >= prefix.length) continue
    const clean = normalizeAbsolute(dir)
    if (clean._tag === 'Right') best = { prefix, dir: clean.right }
  }
  return best?.dir
}

const unknown = (problem: string): Either<NotAPath, string> => left({ problem, elsewhere: false })
const elsewhere = (problem: string): Either<NotAPath, string> => left({ problem, elsewhere: true })

// a URL's scheme followed by "//" (https://host/…), and a bare e-mail address; both name a place off this
// machine's filesystem
const NETWORK_URL = /^([a-z][a-z0-9+.-]*):\/\//i
const MAILTO = /^mailto:/i
const EMAIL = /^[^/@:\s]+@[^/@:\s]+$/

// the path a file: URL names, read as Node's fileURLToPath reads it (percent-decoded); one naming another host,
// or holding an encoded "/", names no path here. A server that takes no URL (the reference filesystem server)
// reads the same text as a relative path, "file:" its first name: the two readings agree on where they can
// reach only while the text holds nothing the URL reading drops or resolves away (a query, a fragment, a dot
// segment, spelled out or percent-encoded), so a URL that holds one is unknown
const fileUrlPath = (s: string): Either<NotAPath, string> => {
  if (/[?#]/.test(s))
    return unknown('is a file: URL with a query or a fragment, which a server may read as part of a path')
  if (/%2e/i.test(s)) return unknown('is a file: URL with an encoded ".", which may make a ".." segment')
  try {
    return right(fileURLToPath(s))
  } catch (e) {
    return unknown(`is a file: URL that names no local path (${cut(describeError(e), 120)})`)
  }
}

/**
 * A raw location value as the absolute path a server will resolve, in normal form: NFC, a `file:` URL read
 * as its path, a relative path against `root`. A Left says why it is not plainly a path, and whether it
 * plainly names a place off this machine (another URL, an e-mail address). The text is judged as written
 * first, whatever it is: a server that takes no URL reads `http://x/../../etc` as a relative path, so a
 * `..` segment makes any value unknown, never elsewhere; so does a `file:` URL's query, fragment or encoded
 * dot, which its reading as a URL drops or resolves away.
 *
 * @example
 * import { readLocation } from './paths.js'
 * assert.deepStrictEqual(readLocation('src/a.ts', '/proj'), { _tag: 'Right', right: '/proj/src/a.ts' })
 * assert.deepStrictEqual(readLocation('file:///etc/passwd', '/proj'), { _tag: 'Right', right: '/etc/passwd' })
 * assert.deepStrictEqual(readLocation('a@evil.example', '/proj'), {
 *   _tag: 'Left',
 *   left: { problem: 'is an e-mail address, not a path', elsewhere: true },
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const readLocation = (raw: unknown, root: string | undefined): Either<NotAPath, string> => {
  if (typeof raw !== 'string')
    return unknown(
      raw === undefined
        ? 'is missing'
        : `is not a string (${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw})`,
    )
  if (raw.trim() !== raw) return unknown('begins or ends with white space')
  // the text itself first: a server may read a URL's text as a path too, and a ".." there leaves its first name
  const written = problemOf(raw)
  if (written !== undefined) return unknown(written)
  let path = raw
  if (/^file:/i.test(raw)) {
    const named = fileUrlPath(raw)
    if (named._tag === 'Left') return named
    path = named.right
    // what percent-decoding made (a NUL, a control character)
    const decoded = problemOf(path)
    if (decoded !== undefined) return unknown(decoded)
  } else {
    const scheme = NETWORK_URL.exec(raw)
    if (scheme !== null) return elsewhere(`is a URL (${JSON.stringify(`${cut(scheme[1] ?? '', 20)}:`)}), not a path`)
    if (MAILTO.test(raw) || EMAIL.test(raw)) return elsewhere('is an e-mail address, not a path')
    const colon = raw.indexOf(':')
    // Stryker disable next-line EqualityOperator: equivalent: a ":" and a "/" are never at one index
    if (colon !== -1 && (raw.indexOf('/') === -1 || colon < raw.indexOf('/')))
      return unknown('holds a ":" before any "/", so it may be a URL or a drive, not plainly a path')
  }
  const nfc = path.normalize('NFC')
  if (nfc.startsWith('/')) return right(fromSegments(segmentsOf(nfc)))
  if (root === undefined) return unknown('is relative and this tool has no root')
  const base = normalizeAbsolute(root)
  if (base._tag === 'Left') return unknown('is relative and this tool has no usable root')
  return right(fromSegments([...segmentsOf(base.right), ...segmentsOf(nfc)]))
}

/**
 * A raw location argument as an absolute, normalised path (see `readLocation`), or why it cannot be read.
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
  const read = readLocation(raw, root)
  return read._tag === 'Right' ? read : left(read.left.problem)
}

// the words of an argument's name: snake_case, kebab-case, dotted and camelCase split, lower-cased
const wordsOf = (name: string): ReadonlyArray<string> =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase())

/**
 * Whether an argument's name looks like a location: its last word is one of `LOCATION_WORDS`, or the whole
 * name is (`repo_path`, `filePath`, `cwd`, `output_dir`).
 *
 * @example
 * import { looksLikeLocation } from './paths.js'
 * assert.deepStrictEqual(['repo_path', 'filePath', 'cwd', 'workingDir', 'pathway', 'name'].map(looksLikeLocation), [
 *   true,
 *   true,
 *   true,
 *   true,
 *   false,
 *   false,
 * ])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const looksLikeLocation = (name: string): boolean => {
  const words = wordsOf(name)
  return [...words.slice(-1), words.join('')].some((w) => LOCATION_WORDS.includes(w))
}

/**
 * The declared argument names that look like locations and are neither read as one nor said not to be one:
 * the arguments `under` rules cannot judge, so a tool that has any fails closed.
 *
 * @example
 * import { unreadLocations } from './paths.js'
 * const scope = { names: ['path'], declared: new Set(['path', 'repo_path', 'message']), notLocations: new Set() }
 * assert.deepStrictEqual(unreadLocations(scope), ['repo_path'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const unreadLocations = (scope: LocationScope): ReadonlyArray<string> =>
  scope.declared === undefined
    ? []
    : [...scope.declared].filter(
        (n) => looksLikeLocation(n) && !scope.names.includes(n) && !(scope.notLocations?.has(n) ?? false),
      )

// one value read as a location, named by its argument
const readingOf = (arg: string, v: unknown, root: string | undefined): Reading => {
  const read = readLocation(v, root)
  // a Right is read from a string only
  if (read._tag === 'Right')
    return v === read.right
      ? { _tag: 'Known', arg, path: read.right }
      : { _tag: 'Known', arg, path: read.right, sent: v as string }
  return read.left.elsewhere
    ? { _tag: 'Elsewhere', arg, problem: read.left.problem }
    : { _tag: 'Unknown', arg, problem: read.left.problem }
}

// one argument's value: a string, or each element of an array (named by its position, so the human sees which)
const readingsOf = (arg: string, raw: unknown, root: string | undefined): ReadonlyArray<Reading> =>
  Array.isArray(raw) ? raw.map((v: unknown, i) => readingOf(`${arg}[${i}]`, v, root)) : [readingOf(arg, raw, root)]

const NOT_DECLARED = 'is not an argument this tool declares'

const NOT_KNOWN = "this tool's declaration is not known (its tools were not listed through the policy)"

// a call to a tool whose declaration is not known: each key that names or looks like a location is unknown
// (what it holds is not read, so the human is not shown it as checked), or, with none, the arguments are
const undeclaredTool = (
  args: object,
  names: ReadonlyArray<string>,
  notLocations: ReadonlySet<string> | undefined,
): ReadonlyArray<PathLocation> => {
  const out: Array<PathLocation> = Object.keys(args)
    .filter((k) => (names.includes(k) || looksLikeLocation(k)) && !(notLocations?.has(k) ?? false))
    .map((arg) => ({ _tag: 'Unknown', arg, problem: `cannot be told from a decoy: ${NOT_KNOWN}` }))
  return out.length > 0 ? out : [{ _tag: 'Unknown', arg: 'arguments', problem: `give no location, and ${NOT_KNOWN}` }]
}

/**
 * Every location of a call, in this order: the values of each name of `scope.names` (default `LOCATION_ARGS`)
 * the tool declares and the call gives, a string or each element of an array; then each declared argument
 * whose name looks like a location but is not read (`Unread`, with what it would read as, whether or not the
 * call gives it); then each location name, or name that looks like one, that the call gives and the tool
 * does not declare (an unknown decoy, deciding nothing). When `scope` says the tool's declaration is not
 * known (`declared` undefined: no listing of it went through the policy), no key can be told from a decoy:
 * each location name, or name that looks like one, the call gives is unknown, and a call that gives none has
 * one unknown location, so `under` rules fail closed. A call to a known tool that gives none is one missing
 * location. Arguments that are not an object are one unknown location. Without `scope` (a caller that has no
 * declaration, such as `evaluate` on its own) every location name the call gives is read, and every other key
 * that looks like a location is `Unread`.
 *
 * @example
 * import { locate } from './paths.js'
 * const scope = { names: ['source', 'destination', 'path'], declared: new Set(['source', 'destination']) }
 * assert.deepStrictEqual(locate({ source: 'a', destination: '/b', path: '/p' }, 'fs_move', { fs_: '/p' }, scope), [
 *   { _tag: 'Known', arg: 'source', path: '/p/a', sent: 'a' },
 *   { _tag: 'Known', arg: 'destination', path: '/b' },
 *   { _tag: 'Unknown', arg: 'path', problem: 'is not an argument this tool declares', undeclared: true },
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
  try {
    const root = rootFor(roots, tool)
    const names = scope?.names ?? LOCATION_ARGS
    const declared = scope?.declared
    const notLocations = scope?.notLocations
    const given = args as Readonly<Record<string, unknown>>
    // the tool's declaration is not known: no key the call gives can be told from a decoy, so none decides
    if (scope !== undefined && declared === undefined) return undeclaredTool(args, names, notLocations)
    const out: Array<PathLocation> = []
    for (const arg of names)
      if (hasOwn(args, arg) && (declared?.has(arg) ?? true)) out.push(...readingsOf(arg, given[arg], root))
    // what the rules cannot read: declared names that look like locations (the tool's own), or, with no scope
    // (so no declaration and no names said not to be locations), such keys the call gives
    const unread =
      scope === undefined
        ? Object.keys(args).filter((k) => looksLikeLocation(k) && !names.includes(k))
        : unreadLocations(scope)
    for (const arg of unread)
      for (const reading of readingsOf(arg, hasOwn(args, arg) ? given[arg] : undefined, root))
        out.push({ _tag: 'Unread', arg, reading })
    // the decoys last, so a human reads the tool's own locations first
    if (declared !== undefined)
      for (const k of Object.keys(args))
        if (!declared.has(k) && !(notLocations?.has(k) ?? false) && (names.includes(k) || looksLikeLocation(k)))
          out.push({ _tag: 'Unknown', arg: k, problem: NOT_DECLARED, undeclared: true })
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
 * Where a canonical path stands against a canonical directory: inside it (itself included), holding it (an
 * ancestor of it), or neither.
 *
 * @example
 * import { standing } from './paths.js'
 * assert.deepStrictEqual(['/d/x', '/d', '/', '/e'].map((p) => standing('/d', p)), ['inside', 'inside', 'holds', 'outside'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const standing = (dir: string, path: string): Exclude<Containment, 'unknown'> =>
  isInside(dir, path) ? 'inside' : isInside(path, dir) ? 'holds' : 'outside'

/**
 * Tri-state containment of a raw location argument in `dir`, read lexically (`readLocation`), relative paths
 * against `root`: `inside`, `holds` (the location is an ancestor of `dir`), `outside`, or `unknown` for
 * anything that is not plainly a path.
 *
 * @example
 * import { containment } from './paths.js'
 * assert.strictEqual(containment('/tmp/root', '/tmp/root/a.txt'), 'inside')
 * assert.strictEqual(containment('/tmp/root', '/tmp'), 'holds')
 * assert.strictEqual(containment('/tmp/root', '/tmp/root2'), 'outside')
 * assert.strictEqual(containment('/tmp/root', '/tmp/root/../etc'), 'unknown')
 * assert.strictEqual(containment('/tmp/root', 'a.txt', '/tmp/root'), 'inside')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const containment = (dir: string, raw: unknown, root?: string): Containment => {
  const path = readLocation(raw, root)
  const d = normalizeAbsolute(dir)
  if (path._tag === 'Left' || d._tag === 'Left') return 'unknown'
  return standing(d.right, path.right)
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
    // past the end of `segs`, `segs[i]` is undefined, never a name of `first`
    while (i < n && segs[i] === first[i]) i++
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

/**
 * The segments of a normalised absolute path (`[]` for `/`), and the path they make.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const pathSegments = segmentsOf

/**
 * The absolute path the segments make.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const joinSegments = fromSegments
