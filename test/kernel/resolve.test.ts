// The resolver puts a location in the form the server will touch: links followed (a dangling one too), a
// name missing in its spelling mapped onto its one NFC twin, case folded where the volume ignores it. Tested
// on a real directory tree the test makes, and, for a case-insensitive volume this machine cannot mount, on
// a fake filesystem that behaves as one.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { ResolverFs } from '../../src/kernel/resolve.js'
import { filesystemResolver, lexicalResolver, nodeFs } from '../../src/kernel/resolve.js'
import { describeError } from '../../src/kernel/describe.js'

const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-resolve-')))
afterAll(() => {
  chmodSync(join(root, 'locked'), 0o755)
  rmSync(root, { recursive: true, force: true, maxRetries: 5 })
})

// the tree: R/x/secret/a.txt, R/link -> x/secret, R/abs -> R/x, R/dangling -> R/out/new, R/café (NFC)
mkdirSync(join(root, 'x', 'secret'), { recursive: true })
writeFileSync(join(root, 'x', 'secret', 'a.txt'), 'secret')
symlinkSync('x/secret', join(root, 'link'))
symlinkSync(join(root, 'x'), join(root, 'abs'))
symlinkSync(join(root, 'out', 'new'), join(root, 'dangling'))
mkdirSync(join(root, 'out'))
mkdirSync(join(root, 'caf\u00e9'))
symlinkSync('loop2', join(root, 'loop1'))
symlinkSync('loop1', join(root, 'loop2'))
symlinkSync('../../x', join(root, 'x', 'secret', 'up'))
mkdirSync(join(root, 'locked', 'inner'), { recursive: true })
symlinkSync('/etc', join(root, 'locked', 'inner', 'etc'))

const resolver = filesystemResolver()
const resolve = (p: string) => resolver.resolve(p)

describe('lexicalResolver', () => {
  it('gives a path back as written, folded only when told the volume ignores case', () => {
    expect(lexicalResolver().resolve('/A/b')).toStrictEqual({ path: '/A/b' })
    expect(lexicalResolver({ caseInsensitive: true }).resolve('/A/B')).toStrictEqual({ path: '/a/b' })
    expect(lexicalResolver({ caseInsensitive: 'detect' }).resolve('/A/B')).toStrictEqual({ path: '/A/B' })
  })
})

describe('filesystemResolver', () => {
  it('leaves a path with no link as it is, existing or not', () => {
    expect(resolve(`${root}/x/secret/a.txt`)).toStrictEqual({ path: `${root}/x/secret/a.txt` })
    expect(resolve(`${root}/x/new/deeper`)).toStrictEqual({ path: `${root}/x/new/deeper` })
    expect(resolve('/')).toStrictEqual({ path: '/' })
  })

  it('follows a link to where it leads, relative or absolute, at any depth, naming the links on the way', () => {
    expect(resolve(`${root}/link/a.txt`)).toStrictEqual({ path: `${root}/x/secret/a.txt`, through: [`${root}/link`] })
    expect(resolve(`${root}/abs/secret/new`)).toStrictEqual({ path: `${root}/x/secret/new`, through: [`${root}/abs`] })
    // a link whose target climbs with "..": taken from the link's own (resolved) directory
    expect(resolve(`${root}/link/up/secret`)).toStrictEqual({
      path: `${root}/x/secret`,
      through: [`${root}/link`, `${root}/x/secret/up`],
    })
  })

  it('gives a last name that is a link as itself too: a move or a delete acts on the link', () => {
    expect(resolve(`${root}/link`)).toStrictEqual({ path: `${root}/x/secret`, entry: `${root}/link` })
    expect(resolve(`${root}/x/secret/up`)).toStrictEqual({ path: `${root}/x`, entry: `${root}/x/secret/up` })
  })

  it('follows a dangling link: a write through it creates its target', () => {
    expect(resolve(`${root}/dangling`)).toStrictEqual({ path: `${root}/out/new`, entry: `${root}/dangling` })
    expect(resolve(`${root}/dangling/more`)).toStrictEqual({
      path: `${root}/out/new/more`,
      through: [`${root}/dangling`],
    })
  })

  it('sees /proc/self/root and every other way round as where it leads', () => {
    expect(resolve(`/proc/self/root${root}/link/a.txt`)).toMatchObject({ path: `${root}/x/secret/a.txt` })
  })

  it('maps a name missing in its spelling onto the one entry equal to it in NFC, as the server does', () => {
    // the request is NFC already (readLocation makes it so); the entry on disk may be either
    mkdirSync(join(root, 'nfd-e\u0301'))
    expect(resolve(`${root}/nfd-\u00e9/f`)).toStrictEqual({ path: `${root}/nfd-\u00e9/f` })
    expect(resolve(`${root}/caf\u00e9/f`)).toStrictEqual({ path: `${root}/caf\u00e9/f` })
  })

  it('judges as written, and says why, what it cannot resolve: a loop of links, two NFC twins', () => {
    expect(resolve(`${root}/loop1/x`)).toMatchObject({
      path: `${root}/loop1/x`,
      problem: 'passes through too many symbolic links',
    })
    // two spellings on disk, neither the NFC one asked for, both equal to it in NFC: which one the server would
    // take cannot be told
    mkdirSync(join(root, 'twin-e\u0323\u0302'))
    mkdirSync(join(root, 'twin-e\u0302\u0323'))
    expect(resolve(`${root}/twin-\u1ec7/a`)).toStrictEqual({
      path: `${root}/twin-\u1ec7/a`,
      problem: 'names two entries that are both "twin-\u1ec7" in NFC',
    })
    // the exact spelling, when it exists, is the one
    expect(resolve(`${root}/caf\u00e9/a`)).toStrictEqual({ path: `${root}/caf\u00e9/a` })
  })

  it('judges as written a path through a directory it cannot read, saying so', () => {
    const denied: ResolverFs = {
      ...nodeFs,
      lstat: (p) => {
        if (p.startsWith(`${root}/locked/`))
          throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })
        return nodeFs.lstat(p)
      },
    }
    expect(filesystemResolver({}, denied).resolve(`${root}/locked/inner/etc/passwd`)).toStrictEqual({
      path: `${root}/locked/inner/etc/passwd`,
      problem: 'could not be resolved (EACCES: permission denied)',
    })
  })

  it('treats a path through a file as one that does not exist below it', () => {
    expect(resolve(`${root}/x/secret/a.txt/b`)).toStrictEqual({ path: `${root}/x/secret/a.txt/b` })
  })

  it('gives NFC whatever the spelling on disk, so a rule and a location compare alike', () => {
    expect(resolve(`${root}/nfd-\u00e9`).path).toBe(`${root}/nfd-\u00e9`)
  })
})

// a volume that ignores case (APFS, NTFS): every name found whatever its case, one entry for all spellings
const caseless = (dirs: ReadonlyArray<string>, links: Readonly<Record<string, string>> = {}): ResolverFs => {
  const key = (p: string): string => p.toLowerCase()
  const ino = new Map(dirs.map((d, i) => [key(d), i + 1]))
  const linked = new Map(Object.entries(links).map(([k, v]) => [key(k), v]))
  return {
    lstat: (p) => {
      if (p === '/') return { dev: 1, ino: 0, link: false }
      if (linked.has(key(p))) return { dev: 1, ino: 1000, link: true }
      const n = ino.get(key(p))
      return n === undefined ? undefined : { dev: 1, ino: n, link: false }
    },
    readlink: (p) => linked.get(key(p)) ?? '',
    readdir: (p) =>
      dirs.filter(
        (d) => key(d).startsWith(key(p) === '/' ? '/' : `${key(p)}/`) && !d.slice(p.length + 1).includes('/'),
      ),
  }
}

describe('filesystemResolver on a volume that ignores case', () => {
  const fs = caseless(['/Vol', '/Vol/Project', '/Vol/Project/Secret'], { '/Vol/Project/Link': '/Vol/Project/Secret' })

  it('detects it, and folds case, so every spelling of one place is one path', () => {
    const r = filesystemResolver({}, fs)
    expect(r.resolve('/Vol/Project/SECRET/a')).toStrictEqual({ path: '/vol/project/secret/a' })
    expect(r.resolve('/vol/project/secret/A')).toStrictEqual({ path: '/vol/project/secret/a' })
    expect(r.resolve('/VOL/PROJECT/LINK/x')).toStrictEqual({
      path: '/vol/project/secret/x',
      through: ['/vol/project/link'],
    })
  })

  it('folds when told, and never when told not to', () => {
    expect(filesystemResolver({ caseInsensitive: false }, fs).resolve('/Vol/Project/SECRET')).toStrictEqual({
      path: '/Vol/Project/SECRET',
    })
    expect(filesystemResolver({ caseInsensitive: true }).resolve(`${root}/X/Secret`)).toStrictEqual({
      path: `${root}/x/secret`.toLowerCase(),
    })
  })

  it("does not fold on a volume that keeps case (this machine's)", () => {
    expect(resolve(`${root}/X/secret`)).toStrictEqual({ path: `${root}/X/secret` })
  })
})

describe('filesystemResolver: links', () => {
  // R/l2 -> link -> x/secret, R/dot -> ./x/./secret, and a chain c0 -> x, c1 -> c0, …, c40 -> c39
  symlinkSync('link', join(root, 'l2'))
  symlinkSync('./x/./secret', join(root, 'dot'))
  symlinkSync('x', join(root, 'c0'))
  for (let i = 1; i <= 40; i++) symlinkSync(`c${i - 1}`, join(root, `c${i}`))

  it('gives a last name that leads to another link as itself, and the link after it as passed through', () => {
    expect(resolve(`${root}/l2`)).toStrictEqual({
      path: `${root}/x/secret`,
      entry: `${root}/l2`,
      through: [`${root}/link`],
    })
    expect(resolve(`${root}/l2/a.txt`)).toStrictEqual({
      path: `${root}/x/secret/a.txt`,
      through: [`${root}/l2`, `${root}/link`],
    })
  })

  it('reads "." and empty segments of a target as nothing', () => {
    expect(resolve(`${root}/dot/a.txt`)).toStrictEqual({ path: `${root}/x/secret/a.txt`, through: [`${root}/dot`] })
  })

  it('follows 40 links, as Linux does, and gives up on the 41st', () => {
    expect(resolve(`${root}/c39/secret`)).toMatchObject({ path: `${root}/x/secret` })
    expect(resolve(`${root}/c39/secret`).problem).toBeUndefined()
    expect(resolve(`${root}/c40/secret`)).toMatchObject({ problem: 'passes through too many symbolic links' })
  })

  it('walks a target from the link\'s directory as the kernel does, whatever its ".", ".." and empty segments', () => {
    // /d1/d2 exists; /d1/d2/L is a link to the target; nothing else the target names exists. Oracle: a ".." leaves
    // the directory reached so far, and past a missing name there is nothing to leave, so the path is unresolved
    const segment = fc.constantFrom('a', 'b', '.', '..', '')
    const exists = (segs: ReadonlyArray<string>): boolean => ['', 'd1', 'd1/d2'].includes(segs.join('/'))
    fc.assert(
      fc.property(fc.boolean(), fc.array(segment, { maxLength: 6 }), (absolute, segs) => {
        const target = (absolute ? '/' : '') + segs.join('/')
        const fs: ResolverFs = {
          lstat: (p) =>
            p === '/d1' || p === '/d1/d2'
              ? { dev: 1, ino: p.length, link: false }
              : p === '/d1/d2/L'
                ? { dev: 1, ino: 9, link: true }
                : undefined,
          readlink: () => target,
          readdir: () => [],
        }
        const out = filesystemResolver({ caseInsensitive: false }, fs).resolve('/d1/d2/L/z')
        const at: Array<string> = absolute ? [] : ['d1', 'd2']
        let missing = false
        let stuck = false
        for (const s of segs) {
          if (s === '' || s === '.') continue
          if (s === '..') {
            if (missing) stuck = true
            else at.pop()
          } else {
            at.push(s)
            if (!exists(at)) missing = true
          }
        }
        if (stuck)
          expect(out).toMatchObject({ problem: 'goes through a missing entry, then ".."', through: ['/d1/d2/L'] })
        else expect(out).toStrictEqual({ path: posix.resolve('/d1/d2', target, 'z'), through: ['/d1/d2/L'] })
      }),
    )
  })
})

describe('filesystemResolver: what it cannot read', () => {
  it('reads through nodeFs a path a loop of links leads through as an error, not as a missing entry', () => {
    expect(() => nodeFs.lstat(`${root}/loop1/x`)).toThrow(/ELOOP/)
    expect(nodeFs.lstat(`${root}/x/secret/a.txt/b`)).toBeUndefined()
    expect(nodeFs.lstat(`${root}/nothing/here`)).toBeUndefined()
  })

  // /a is a directory; whatever reading it throws
  const readingThrows = (code: string): ResolverFs => ({
    lstat: (p) => (p === '/' || p === '/a' ? { dev: 1, ino: p.length, link: false } : undefined),
    readlink: () => '',
    readdir: () => {
      throw Object.assign(new Error(`${code}: while reading`), { code })
    },
  })

  it('keeps as written a name in a directory removed while it is read', () => {
    expect(filesystemResolver({ caseInsensitive: false }, readingThrows('ENOENT')).resolve('/a/b')).toStrictEqual({
      path: '/a/b',
    })
    expect(filesystemResolver({ caseInsensitive: false }, readingThrows('ENOTDIR')).resolve('/a/b')).toStrictEqual({
      path: '/a/b',
    })
  })

  it('judges as written, and says so, a name in a directory it cannot list', () => {
    expect(filesystemResolver({ caseInsensitive: false }, readingThrows('EACCES')).resolve('/a/b')).toStrictEqual({
      path: '/a/b',
      problem: 'could not be resolved (EACCES: while reading)',
    })
  })

  it('folds what it cannot resolve when told the volume ignores case', () => {
    expect(filesystemResolver({ caseInsensitive: true }, readingThrows('EACCES')).resolve('/A/B')).toStrictEqual({
      path: '/a/b',
      problem: 'could not be resolved (EACCES: while reading)',
    })
  })
})

describe('filesystemResolver: telling whether a volume ignores case', () => {
  const keeping = (entries: Readonly<Record<string, { readonly dev: number; readonly ino: number }>>): ResolverFs => ({
    lstat: (p) =>
      p === '/' ? { dev: 1, ino: 0, link: false } : p in entries ? { ...entries[p]!, link: false } : undefined,
    readlink: () => '',
    readdir: () => [],
  })

  it('looks up a name all in capitals in lower case', () => {
    expect(filesystemResolver({}, caseless(['/VOL'])).resolve('/VOL/New')).toStrictEqual({ path: '/vol/new' })
  })

  it('asks of the deepest name that has a letter', () => {
    expect(filesystemResolver({}, caseless(['/Vol', '/Vol/123'])).resolve('/Vol/123/New')).toStrictEqual({
      path: '/vol/123/new',
    })
    // the deepest such name is on a volume that keeps case, whatever the one above it does
    const fs = keeping({ '/Vol': { dev: 1, ino: 1 }, '/vOL': { dev: 1, ino: 1 }, '/Vol/Sub': { dev: 2, ino: 5 } })
    expect(filesystemResolver({}, fs).resolve('/Vol/Sub/New')).toStrictEqual({ path: '/Vol/Sub/New' })
    expect(filesystemResolver({}, fs).resolve('/Vol/New')).toStrictEqual({ path: '/vol/new' })
  })

  it('does not fold when the other spelling is another entry, or the same number on another volume', () => {
    const two = keeping({ '/Vol': { dev: 1, ino: 1 }, '/vOL': { dev: 1, ino: 2 } })
    expect(filesystemResolver({}, two).resolve('/Vol/New')).toStrictEqual({ path: '/Vol/New' })
    const otherVolume = keeping({ '/Vol': { dev: 1, ino: 1 }, '/vOL': { dev: 2, ino: 1 } })
    expect(filesystemResolver({}, otherVolume).resolve('/Vol/New')).toStrictEqual({ path: '/Vol/New' })
  })

  it('does not fold when the name is gone by the time it is looked up again', () => {
    let asked = 0
    const fs: ResolverFs = {
      // the other spelling is there, the same entry, but the name itself answers only once
      lstat: (p) => (p === '/vOL' || (p === '/Vol' && asked++ === 0) ? { dev: 1, ino: 1, link: false } : undefined),
      readlink: () => '',
      readdir: () => [],
    }
    expect(filesystemResolver({}, fs).resolve('/Vol/New')).toStrictEqual({ path: '/Vol/New' })
  })

  it('follows the platform when no existing name has a letter: folds on macOS and Windows only', () => {
    const platform = Object.getOwnPropertyDescriptor(process, 'platform') as PropertyDescriptor
    const on = (name: string): string => {
      Object.defineProperty(process, 'platform', { ...platform, value: name })
      try {
        return filesystemResolver({}, caseless(['/1'])).resolve('/1/New').path
      } finally {
        Object.defineProperty(process, 'platform', platform)
      }
    }
    expect(on('darwin')).toBe('/1/new')
    expect(on('win32')).toBe('/1/new')
    expect(on('linux')).toBe('/1/New')
    expect(on('freebsd')).toBe('/1/New')
  })

  it('gives the link a last name is, and those passed through, in NFC and folded as the path is', () => {
    const fs = caseless(['/Vol', '/Vol/Secret'], { '/Vol/Link': '/Vol/Secret', '/Vol/Last': '/Vol/Secret' })
    expect(filesystemResolver({}, fs).resolve('/VOL/LAST')).toStrictEqual({ path: '/vol/secret', entry: '/vol/last' })
    // a link named in NFD on disk, asked for in NFC
    symlinkSync('x', join(root, 'lnk-e\u0301'))
    expect(resolve(`${root}/lnk-\u00e9`)).toStrictEqual({ path: `${root}/x`, entry: `${root}/lnk-\u00e9` })
    expect(resolve(`${root}/lnk-\u00e9/secret`)).toStrictEqual({
      path: `${root}/x/secret`,
      through: [`${root}/lnk-\u00e9`],
    })
  })
})

describe('filesystemResolver: one judgement', () => {
  // the real tree, each read counted by kind and path
  const counting = () => {
    const reads: Array<string> = []
    const fs: ResolverFs = {
      lstat: (p) => (reads.push(`lstat ${p}`), nodeFs.lstat(p)),
      readlink: (p) => (reads.push(`readlink ${p}`), nodeFs.readlink(p)),
      readdir: (p) => (reads.push(`readdir ${p}`), nodeFs.readdir(p)),
    }
    return { fs, reads }
  }
  const once = (reads: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(reads)]

  it('reads each path once for one judgement, and again for the next, with the same answers', () => {
    const { fs, reads } = counting()
    const r = filesystemResolver({}, fs)
    const paths = [`${root}/link/a.txt`, `${root}/nfd-\u00e9/f`, `${root}/link/new`, `${root}/caf\u00e9/g`]
    const plain = paths.map((p) => r.resolve(p))
    const plainReads = reads.length
    expect(reads.some((x) => x.startsWith('readlink'))).toBe(true)
    expect(reads.some((x) => x.startsWith('readdir'))).toBe(true)
    expect(once(reads).length).toBeLessThan(plainReads)
    reads.length = 0
    const judgement = r.forOneJudgement?.()
    expect(judgement).toBeDefined()
    expect(paths.map((p) => judgement?.resolve(p))).toStrictEqual(plain)
    expect(reads).toStrictEqual(once(reads))
    const first = [...reads]
    reads.length = 0
    const next = r.forOneJudgement?.()
    expect(paths.map((p) => next?.resolve(p))).toStrictEqual(plain)
    expect(reads).toStrictEqual(first)
  })

  it('folds in a judgement as told', () => {
    const fs = caseless(['/Vol'])
    expect(filesystemResolver({ caseInsensitive: true }, fs).forOneJudgement?.().resolve('/1/New')).toStrictEqual({
      path: '/1/new',
    })
    expect(filesystemResolver({ caseInsensitive: false }, fs).forOneJudgement?.().resolve('/Vol/New')).toStrictEqual({
      path: '/Vol/New',
    })
    expect(filesystemResolver({}, fs).forOneJudgement?.().resolve('/Vol/New')).toStrictEqual({ path: '/vol/new' })
  })
})

describe('filesystemResolver: the exact spelling first', () => {
  it('gives, with a ".." past a missing name, the path walked so far and the rest of its names without the ".."', () => {
    symlinkSync('gone/../x', join(root, 'past-missing'))
    symlinkSync('x/gone/../../x', join(root, 'past-missing-deeper'))
    const problem = 'goes through a missing entry, then ".."'
    expect(resolve(`${root}/past-missing/secret`)).toStrictEqual({
      path: `${root}/gone/x/secret`,
      through: [`${root}/past-missing`],
      problem,
    })
    expect(resolve(`${root}/past-missing-deeper/a`)).toStrictEqual({
      path: `${root}/x/gone/x/a`,
      through: [`${root}/past-missing-deeper`],
      problem,
    })
  })

  it('says a name with a twin equal to it in NFC is unresolved, whichever spelling is sent (the guard fails closed)', () => {
    // R/both-é (NFC) a directory, R/both-e + U+0301 (NFD) a link elsewhere: the server opens the spelling sent,
    // and the guard compares in NFC, so it cannot tell which one a call means
    mkdirSync(join(root, 'both-\u00e9'))
    symlinkSync('x/secret', join(root, 'both-e\u0301'))
    const problem = 'names an entry that has a twin equal to it in NFC ("both-\u00e9")'
    // with the problem, the path as written from the twin on, in NFC
    expect(resolve(`${root}/both-\u00e9/f`)).toStrictEqual({ path: `${root}/both-\u00e9/f`, problem })
    expect(resolve(`${root}/both-e\u0301/f`)).toStrictEqual({ path: `${root}/both-\u00e9/f`, problem })
    // a name outside ASCII without a twin is resolved as before
    mkdirSync(join(root, 'only-\u00e9'))
    expect(resolve(`${root}/only-\u00e9/f`)).toStrictEqual({ path: `${root}/only-\u00e9/f` })
  })
})

describe('filesystemResolver: whatever a host filesystem throws', () => {
  // anything but the codes of a missing entry, which say there is nothing to read
  const missing = (t: unknown): boolean =>
    typeof t === 'object' && t !== null && ['ENOENT', 'ENOTDIR'].includes((t as { code?: unknown }).code as string)

  it('judges the path as written and says what was thrown', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom(null, undefined),
          fc.anything().filter((t) => !missing(t)),
        ),
        (thrown) => {
          const fs: ResolverFs = {
            lstat: (p) => (p === '/a' ? { dev: 1, ino: 1, link: false } : undefined),
            readlink: () => '',
            readdir: () => {
              throw thrown
            },
          }
          expect(filesystemResolver({ caseInsensitive: false }, fs).resolve('/a/b')).toStrictEqual({
            path: '/a/b',
            problem: `could not be resolved (${describeError(thrown)})`,
          })
        },
      ),
    )
  })
})
