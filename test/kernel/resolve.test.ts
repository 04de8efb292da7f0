// The resolver puts a location in the form the server will touch: links followed (a dangling one too), a
// name missing in its spelling mapped onto its one NFC twin, case folded where the volume ignores it. Tested
// on a real directory tree the test makes, and, for a case-insensitive volume this machine cannot mount, on
// a fake filesystem that behaves as one.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { ResolverFs } from '../../src/kernel/resolve.js'
import { filesystemResolver, lexicalResolver, nodeFs } from '../../src/kernel/resolve.js'

const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-resolve-')))
afterAll(() => {
  chmodSync(join(root, 'locked'), 0o755)
  rmSync(root, { recursive: true, force: true })
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
    expect(lexicalResolver().resolve('/A/b')).toEqual({ path: '/A/b' })
    expect(lexicalResolver({ caseInsensitive: true }).resolve('/A/B')).toEqual({ path: '/a/b' })
    expect(lexicalResolver({ caseInsensitive: 'detect' }).resolve('/A/B')).toEqual({ path: '/A/B' })
  })
})

describe('filesystemResolver', () => {
  it('leaves a path with no link as it is, existing or not', () => {
    expect(resolve(`${root}/x/secret/a.txt`)).toEqual({ path: `${root}/x/secret/a.txt` })
    expect(resolve(`${root}/x/new/deeper`)).toEqual({ path: `${root}/x/new/deeper` })
    expect(resolve('/')).toEqual({ path: '/' })
  })

  it('follows a link to where it leads, relative or absolute, at any depth, naming the links on the way', () => {
    expect(resolve(`${root}/link/a.txt`)).toEqual({ path: `${root}/x/secret/a.txt`, through: [`${root}/link`] })
    expect(resolve(`${root}/abs/secret/new`)).toEqual({ path: `${root}/x/secret/new`, through: [`${root}/abs`] })
    // a link whose target climbs with "..": taken from the link's own (resolved) directory
    expect(resolve(`${root}/link/up/secret`)).toEqual({
      path: `${root}/x/secret`,
      through: [`${root}/link`, `${root}/x/secret/up`],
    })
  })

  it('gives a last name that is a link as itself too: a move or a delete acts on the link', () => {
    expect(resolve(`${root}/link`)).toEqual({ path: `${root}/x/secret`, entry: `${root}/link` })
    expect(resolve(`${root}/x/secret/up`)).toEqual({ path: `${root}/x`, entry: `${root}/x/secret/up` })
  })

  it('follows a dangling link: a write through it creates its target', () => {
    expect(resolve(`${root}/dangling`)).toEqual({ path: `${root}/out/new`, entry: `${root}/dangling` })
    expect(resolve(`${root}/dangling/more`)).toEqual({ path: `${root}/out/new/more`, through: [`${root}/dangling`] })
  })

  it('sees /proc/self/root and every other way round as where it leads', () => {
    expect(resolve(`/proc/self/root${root}/link/a.txt`)).toMatchObject({ path: `${root}/x/secret/a.txt` })
  })

  it('maps a name missing in its spelling onto the one entry equal to it in NFC, as the server does', () => {
    // the request is NFC already (readLocation makes it so); the entry on disk may be either
    mkdirSync(join(root, 'nfd-e\u0301'))
    expect(resolve(`${root}/nfd-\u00e9/f`)).toEqual({ path: `${root}/nfd-\u00e9/f` })
    expect(resolve(`${root}/caf\u00e9/f`)).toEqual({ path: `${root}/caf\u00e9/f` })
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
    expect(resolve(`${root}/twin-\u1ec7/a`)).toEqual({
      path: `${root}/twin-\u1ec7/a`,
      problem: 'names two entries that are both "twin-\u1ec7" in NFC',
    })
    // the exact spelling, when it exists, is the one
    expect(resolve(`${root}/caf\u00e9/a`)).toEqual({ path: `${root}/caf\u00e9/a` })
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
    expect(filesystemResolver({}, denied).resolve(`${root}/locked/inner/etc/passwd`)).toEqual({
      path: `${root}/locked/inner/etc/passwd`,
      problem: 'could not be resolved (EACCES: permission denied)',
    })
  })

  it('treats a path through a file as one that does not exist below it', () => {
    expect(resolve(`${root}/x/secret/a.txt/b`)).toEqual({ path: `${root}/x/secret/a.txt/b` })
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
    expect(r.resolve('/Vol/Project/SECRET/a')).toEqual({ path: '/vol/project/secret/a' })
    expect(r.resolve('/vol/project/secret/A')).toEqual({ path: '/vol/project/secret/a' })
    expect(r.resolve('/VOL/PROJECT/LINK/x')).toEqual({ path: '/vol/project/secret/x', through: ['/vol/project/link'] })
  })

  it('folds when told, and never when told not to', () => {
    expect(filesystemResolver({ caseInsensitive: false }, fs).resolve('/Vol/Project/SECRET')).toEqual({
      path: '/Vol/Project/SECRET',
    })
    expect(filesystemResolver({ caseInsensitive: true }).resolve(`${root}/X/Secret`)).toEqual({
      path: `${root}/x/secret`.toLowerCase(),
    })
  })

  it("does not fold on a volume that keeps case (this machine's)", () => {
    expect(resolve(`${root}/X/secret`)).toEqual({ path: `${root}/X/secret` })
  })
})
