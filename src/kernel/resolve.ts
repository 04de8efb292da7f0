/**
 * What only the filesystem can tell about a location: where its symbolic links lead, which entry a name in
 * another Unicode spelling maps onto, and whether its volume ignores case. A `LocationResolver` turns a
 * lexical path (`paths.ts`) into the form a server resolving it will touch, so a rule's directory and a
 * call's location are compared in that one form. The filesystem is a capability passed in.
 *
 * @since 0.1.0
 */
import { lstatSync, readdirSync, readlinkSync } from 'node:fs'
import { describeError } from './describe.js'
import { joinSegments, pathSegments } from './paths.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A location in the form compared: `path`, and `problem` when it could not be wholly resolved. Then `path` is
 * resolved as far as the walk went (a loop of links, two entries equal in NFC), the rest as written, or all
 * of it as written when nothing could be read; either way it is judged as it is.
 *
 * @since 0.1.0
 * @category model
 */
export interface Resolved {
  readonly path: string
  /**
   * When the path's last name is a symbolic link: the link itself (its directory resolved). A read or a write
   * goes where the link leads (`path`); a move or a delete acts on the link, in its own directory.
   */
  readonly entry?: string
  /** Each other symbolic link passed through on the way (itself, resolved): the directories it lies in are traversed. */
  readonly through?: ReadonlyArray<string>
  readonly problem?: string
}

/**
 * Turns a clean absolute path (NFC, normal form) into the form locations are compared in. The same resolver
 * reads a rule's directory and a call's location.
 *
 * @since 0.1.0
 * @category model
 */
export interface LocationResolver {
  readonly resolve: (path: string) => Resolved
  /**
   * A resolver for one judgement, which may remember what it reads until the judgement is made (a call's
   * locations and the rules' directories share most of their prefixes). Absent: `resolve` is used as it is.
   */
  readonly forOneJudgement?: () => LocationResolver
}

/**
 * What a resolver asks of the filesystem, synchronously: a judgement is one step (a few of these calls cost
 * microseconds), so a verdict never waits on I/O. Each throws as `node:fs` does (`ENOENT` for a missing entry).
 *
 * @since 0.1.0
 * @category model
 */
export interface ResolverFs {
  /** The entry itself, a link not followed; `undefined` when it does not exist. */
  readonly lstat: (path: string) => { readonly dev: number; readonly ino: number; readonly link: boolean } | undefined
  readonly readlink: (path: string) => string
  readonly readdir: (path: string) => ReadonlyArray<string>
}

/**
 * `caseInsensitive`: fold case before comparing (`true`), never (`false`), or, for `filesystemResolver`,
 * `'detect'` it per volume (the default there).
 *
 * @since 0.1.0
 * @category model
 */
export interface ResolverOptions {
  readonly caseInsensitive?: boolean | 'detect'
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const fold = (p: string): string => p.toLowerCase()

/**
 * The lexical resolver: a path is compared as written (already NFC and in normal form), case folded when
 * `caseInsensitive` is true. The default where the policy does not share the server's filesystem.
 *
 * @example
 * import { lexicalResolver } from './resolve.js'
 * assert.deepStrictEqual(lexicalResolver().resolve('/Srv/A'), { path: '/Srv/A' })
 * assert.deepStrictEqual(lexicalResolver({ caseInsensitive: true }).resolve('/Srv/A'), { path: '/srv/a' })
 *
 * @since 0.1.0
 * @category constructors
 */
export const lexicalResolver = (options: ResolverOptions = {}): LocationResolver => {
  const folding = options.caseInsensitive === true
  return { resolve: (path) => ({ path: folding ? fold(path) : path }) }
}

// a missing entry, or a path through something that is not a directory: nothing there to resolve
const absent = (e: unknown): boolean => {
  const code = (e as { readonly code?: unknown } | null)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/**
 * `node:fs`, as a resolver reads it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nodeFs: ResolverFs = {
  lstat: (path) => {
    try {
      // a missing entry is the common answer: no Error is made for it (making one costs more than the call)
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent: the catch answers a missing entry alike
      const s = lstatSync(path, { throwIfNoEntry: false })
      return s === undefined ? undefined : { dev: s.dev, ino: s.ino, link: s.isSymbolicLink() }
    } catch (e) {
      if (absent(e)) return undefined
      throw e
    }
  },
  readlink: (path) => readlinkSync(path),
  readdir: (path) => readdirSync(path),
}

// how many symbolic links one resolution follows before it gives up (Linux's own limit)
const MAX_LINKS = 40

// the names a link's target makes the walk go through: from the root, or from the link's own directory. A ".."
// is kept and taken where the walk meets it, after the names before it are resolved, as the kernel takes it:
// in "j/../x", where j is a link, ".." leaves where j leads, not the link's directory
const linkTarget = (dir: ReadonlyArray<string>, target: string): Array<string> => [
  ...(target.startsWith('/') ? [] : dir),
  ...target.split('/').filter((s) => s !== '' && s !== '.'),
]

// a name with a letter outside ASCII, the only kind that has another spelling in NFC
const NON_ASCII = /[\u0080-\uffff]/

// the entries of a directory that is not there
const NO_ENTRIES: ReadonlyArray<string> = Object.freeze([])

// a name with its letters' case swapped, or undefined when it has none that changes
const swapCase = (s: string): string | undefined => {
  const swapped = [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')
  return swapped === s ? undefined : swapped
}

/**
 * The resolver for a policy that shares the server's filesystem (as a gateway does with the servers it
 * starts): the longest existing prefix of a path is resolved as the server will resolve it, each symbolic
 * link followed (a dangling one included: a write creates its target; a last name that is a link is also
 * given as itself, `entry`, for a move or a delete acts on it), a name missing in its exact spelling
 * mapped onto the one entry that is the same in NFC (as the reference filesystem server does); what does not
 * exist yet is kept as written. Case is folded on a volume that ignores it (`caseInsensitive: 'detect'`, the
 * default: a name of the deepest existing directory looked up with its case swapped), or as told. A path
 * that cannot be wholly resolved (a loop of links, an unreadable directory, a name with a twin equal to it in
 * NFC, a `..` past a missing name) comes with its problem, and the guard takes it as unknown (it fails
 * closed). The lexical resolver can tell neither links nor twins: it is for a policy that does not share the
 * server's filesystem.
 *
 * @since 0.1.0
 * @category constructors
 */
export const filesystemResolver = (options: ResolverOptions = {}, fs: ResolverFs = nodeFs): LocationResolver => ({
  ...resolverOver(options.caseInsensitive ?? 'detect', fs),
  // what one judgement reads is read once: its locations and the rules' directories share their prefixes
  forOneJudgement: () => resolverOver(options.caseInsensitive ?? 'detect', rememberingFs(fs)),
})

// `fs` with each answer kept, for the span of one judgement (nothing outlives it, so nothing goes stale)
const rememberingFs = (fs: ResolverFs): ResolverFs => {
  const once = <A>(read: (path: string) => A): ((path: string) => A) => {
    const seen = new Map<string, A>()
    return (path) => {
      if (seen.has(path)) return seen.get(path) as A
      const a = read(path)
      seen.set(path, a)
      return a
    }
  }
  return { lstat: once(fs.lstat), readlink: once(fs.readlink), readdir: once(fs.readdir) }
}

const resolverOver = (mode: boolean | 'detect', fs: ResolverFs): LocationResolver => {
  // whether the volume holding `segments` (a resolved, existing path) ignores case: its deepest name with a
  // letter, looked up with the case swapped, is the same entry; a path with no such name says nothing, and
  // the platform's habit decides
  const ignoresCase = (segments: ReadonlyArray<string>): boolean => {
    for (let i = segments.length - 1; i >= 0; i--) {
      const swapped = swapCase(segments[i] as string)
      if (swapped === undefined) continue
      const real = fs.lstat(joinSegments(segments.slice(0, i + 1)))
      const other = fs.lstat(joinSegments([...segments.slice(0, i), swapped]))
      return real !== undefined && other !== undefined && real.dev === other.dev && real.ino === other.ino
    }
    return process.platform === 'darwin' || process.platform === 'win32'
  }
  // a directory's entries; none when it is not one (a path through a file), or is gone
  const entriesOf = (dir: string): ReadonlyArray<string> => {
    try {
      return fs.readdir(dir)
    } catch (e) {
      if (absent(e)) return NO_ENTRIES
      throw e
    }
  }
  // where a walk ended, and what it met on the way; `resolve` gives it the form compared
  interface Walked {
    readonly path: string
    readonly existing: ReadonlyArray<string>
    readonly entry: string | undefined
    readonly through: ReadonlyArray<string>
    readonly problem?: string
  }
  const resolveSegments = (start: ReadonlyArray<string>): Walked => {
    let rest = [...start]
    let done: Array<string> = []
    let links = 0
    // the link the path's own last name is, once met: what a move or a delete of the path acts on
    let entry: string | undefined
    let lastIsOwn = true
    const through: Array<string> = []
    while (rest.length > 0) {
      const name = rest[0] as string
      // only a link's target holds "..": its names before it are resolved already (`done`)
      if (name === '..') {
        done = done.slice(0, -1)
        rest = rest.slice(1)
        continue
      }
      let at = [...done, name]
      let seen = fs.lstat(joinSegments(at))
      // the name exists as spelled, and another entry beside it is the same in NFC (Linux keeps both): the
      // server opens the one spelled as sent, and the guard, which compares in NFC, cannot tell which
      if (seen !== undefined && NON_ASCII.test(name)) {
        const nfc = name.normalize('NFC')
        if (entriesOf(joinSegments(done)).some((e) => e !== name && e.normalize('NFC') === nfc))
          return {
            path: joinSegments([...done, ...rest]),
            existing: done,
            problem: `names an entry that has a twin equal to it in NFC (${JSON.stringify(nfc)})`,
            entry,
            through,
          }
      }
      // Stryker disable next-line ConditionalExpression: equivalent: a name that exists is its own one NFC match
      // (a twin has returned above), so the lookup below finds it again
      if (seen === undefined) {
        // the server maps a spelling that does not exist onto the one entry equal to it in NFC
        const same = entriesOf(joinSegments(done)).filter((e) => e.normalize('NFC') === name)
        if (same.length > 1)
          return {
            path: joinSegments([...done, ...rest]),
            existing: done,
            problem: `names two entries that are both ${JSON.stringify(name)} in NFC`,
            entry,
            through,
          }
        if (same.length === 1) {
          at = [...done, same[0] as string]
          seen = fs.lstat(joinSegments(at))
        }
      }
      if (seen === undefined) {
        // a ".." past a missing name: the kernel stops at the missing name, and the path as written means nothing
        if (rest.includes('..'))
          return {
            path: joinSegments([...done, ...rest.filter((s) => s !== '..')]),
            existing: done,
            problem: 'goes through a missing entry, then ".."',
            entry,
            through,
          }
        return { path: joinSegments([...done, ...rest]), existing: done, entry, through }
      }
      if (seen.link) {
        if (rest.length === 1 && lastIsOwn) {
          entry = joinSegments(at)
          lastIsOwn = false
        } else through.push(joinSegments(at))
        if (++links > MAX_LINKS)
          return {
            path: joinSegments([...done, ...rest]),
            existing: done,
            problem: 'passes through too many symbolic links',
            entry,
            through,
          }
        rest = [...linkTarget(done, fs.readlink(joinSegments(at))), ...rest.slice(1)]
        done = []
        continue
      }
      done = at
      rest = rest.slice(1)
    }
    return { path: joinSegments(done), existing: done, entry, through }
  }
  return {
    resolve: (path) => {
      try {
        const out = resolveSegments(pathSegments(path))
        const folding = mode === true || (mode === 'detect' && ignoresCase(out.existing))
        const form = (p: string): string => (folding ? fold(p.normalize('NFC')) : p.normalize('NFC'))
        return {
          path: form(out.path),
          ...(out.entry === undefined ? {} : { entry: form(out.entry) }),
          ...(out.through.length === 0 ? {} : { through: out.through.map(form) }),
          ...(out.problem === undefined ? {} : { problem: out.problem }),
        }
      } catch (e) {
        // a directory or a link that cannot be read (EACCES, ELOOP, a link removed while being read): judged as
        // written, and said
        return {
          path: mode === true ? fold(path) : path,
          problem: `could not be resolved (${describeError(e)})`,
        }
      }
    },
  }
}
