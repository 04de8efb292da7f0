import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { LocationScope } from '../../src/kernel/paths.js'
import {
  LOCATION_ARGS,
  absolutise,
  commonDirectory,
  containment,
  isInside,
  locate,
  looksLikeLocation,
  normalizeAbsolute,
  readLocation,
  rootFor,
  standing,
  unreadLocations,
} from '../../src/kernel/paths.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

describe('LOCATION_ARGS', () => {
  it('is the usual names of a location argument, and frozen', () => {
    expect(LOCATION_ARGS).toEqual([
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
    expect(Object.isFrozen(LOCATION_ARGS)).toBe(true)
  })
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('normalizeAbsolute', () => {
  it('drops "." and empty segments and a trailing slash', () => {
    expect(normalizeAbsolute('/tmp//root/./a/')).toEqual({ _tag: 'Right', right: '/tmp/root/a' })
    expect(normalizeAbsolute('/')).toEqual({ _tag: 'Right', right: '/' })
    expect(normalizeAbsolute('//')).toEqual({ _tag: 'Right', right: '/' })
  })

  it.each([
    ['relative', 'tmp/a', 'is not absolute'],
    ['..', '/tmp/../etc', 'has a ".." segment'],
    ['NUL', '/tmp/a\u0000b', 'contains a NUL character'],
    ['backslash', '/tmp\\a', 'contains a backslash'],
    ['tilde', '~/a', 'starts with "~", which only a shell expands'],
    ['empty', '', 'is empty'],
  ])('refuses a %s path', (_, p, why) => {
    expect(normalizeAbsolute(p)).toEqual({ _tag: 'Left', left: why })
  })

  it('keeps ".." inside a name, which is not a ".." segment', () => {
    expect(normalizeAbsolute('/a/..b/c..')).toEqual({ _tag: 'Right', right: '/a/..b/c..' })
  })
})

describe('rootFor', () => {
  const roots = { '': '/srv', fs_: '/home/me/project', fs_tmp_: '/tmp' }

  it('takes the longest prefix of the tool name', () => {
    expect(rootFor(roots, 'fs_read')).toBe('/home/me/project')
    expect(rootFor(roots, 'fs_tmp_write')).toBe('/tmp')
  })

  it('uses "" as a catch-all', () => {
    expect(rootFor(roots, 'web_get')).toBe('/srv')
  })

  it('has no root when no prefix matches', () => {
    expect(rootFor({ fs_: '/p' }, 'web_get')).toBeUndefined()
    expect(rootFor({}, 'fs_read')).toBeUndefined()
  })

  it('gives back the root in normal form and ignores roots that are not clean absolute paths', () => {
    expect(rootFor({ '': '/p//q/' }, 'x')).toBe('/p/q')
    expect(rootFor({ '': '/srv', x: 'relative' }, 'x')).toBe('/srv')
  })

  it('reads prefixes as data: "__proto__" is an own key like any other', () => {
    const roots = JSON.parse('{"__proto__":"/protos","":"/srv"}') as Record<string, string>
    expect(rootFor(roots, '__proto__x')).toBe('/protos')
    expect(rootFor(roots, 'constructor')).toBe('/srv')
  })
})

describe('absolutise', () => {
  it('keeps absolute paths, normalised, whatever the root', () => {
    expect(absolutise('/a//b/', '/root')).toEqual({ _tag: 'Right', right: '/a/b' })
  })

  it('resolves relative paths against the root', () => {
    expect(absolutise('src/./a.ts', '/proj')).toEqual({ _tag: 'Right', right: '/proj/src/a.ts' })
    expect(absolutise('.', '/proj')).toEqual({ _tag: 'Right', right: '/proj' })
  })

  it.each([
    ['a relative path with no root', 'a.txt', undefined, 'is relative and this tool has no root'],
    ['a missing argument', undefined, '/p', 'is missing'],
    ['a number', 42, '/p', 'is not a string (number)'],
    ['null', null, '/p', 'is not a string (null)'],
    ['an array', ['/p'], '/p', 'is not a string (an array)'],
    ['a ".." segment', 'a/../../etc', '/p', 'has a ".." segment'],
    ['a NUL', '/p/a\u0000', '/p', 'contains a NUL character'],
    ['a backslash', 'a\\b', '/p', 'contains a backslash'],
  ])('cannot read %s', (_, raw, root, why) => {
    expect(absolutise(raw, root)).toEqual({ _tag: 'Left', left: why })
  })
})

describe('locate', () => {
  it('reads path, from and to, in that order, against the tool root', () => {
    expect(locate({ to: '/b', path: 'x', from: 'a' }, 'fs_move', { fs_: '/p' })).toEqual([
      { _tag: 'Known', arg: 'path', path: '/p/x', sent: 'x' },
      { _tag: 'Known', arg: 'from', path: '/p/a', sent: 'a' },
      { _tag: 'Known', arg: 'to', path: '/b' },
    ])
  })

  it('says when a location argument cannot be read', () => {
    expect(locate({ path: 7 }, 't', {})).toEqual([
      { _tag: 'Unknown', arg: 'path', problem: 'is not a string (number)' },
    ])
  })

  it('gives one missing location when the call names none', () => {
    expect(locate({ query: 'https://x' }, 'web_get', {})).toEqual([{ _tag: 'Missing' }])
    expect(locate({}, 't', {})).toEqual([{ _tag: 'Missing' }])
  })

  it('gives one unknown location for arguments that are not an object', () => {
    for (const args of [undefined, null, 'path', 42, ['/p']]) {
      expect(locate(args, 't', {})).toEqual([
        { _tag: 'Unknown', arg: 'arguments', problem: 'could not be read as a JSON object' },
      ])
    }
  })

  it('reads own keys only: an inherited path is not a location', () => {
    expect(locate(Object.create({ path: '/p/a' }) as object, 't', {})).toEqual([{ _tag: 'Missing' }])
  })

  it('gives an unknown location for arguments that throw when read', () => {
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor: () => {
          throw new Error('boom')
        },
      },
    )
    expect(locate(hostile, 't', {})).toEqual([{ _tag: 'Unknown', arg: 'arguments', problem: 'could not be read' }])
  })
})

describe('isInside', () => {
  it('compares segment by segment, inclusively', () => {
    expect(isInside('/tmp/root', '/tmp/root')).toBe(true)
    expect(isInside('/tmp/root', '/tmp/root/a/b')).toBe(true)
    expect(isInside('/tmp/root', '/tmp/root2')).toBe(false)
    expect(isInside('/tmp/root', '/tmp')).toBe(false)
    expect(isInside('/', '/anything')).toBe(true)
    // a relative path is inside nothing, not even the root
    expect(isInside('/', 'tmp/a')).toBe(false)
    expect(isInside('/tmp', 'tmp/a')).toBe(false)
  })
})

describe('containment', () => {
  it('is inside, outside or unknown', () => {
    expect(containment('/tmp/root', '/tmp/root/a.txt')).toBe('inside')
    expect(containment('/tmp/root', '/tmp/root2/a.txt')).toBe('outside')
    expect(containment('/tmp/root', '/tmp/root2')).toBe('outside')
    expect(containment('/tmp/root/', '/tmp/root')).toBe('inside')
    expect(containment('/tmp/root', 'a.txt', '/tmp/root')).toBe('inside')
    expect(containment('/tmp/root', 'a.txt', '/elsewhere')).toBe('outside')
  })

  it.each([
    ['a ".." segment', '/tmp/root/../root/a', '/'],
    ['a ".." that stays inside, lexically', 'a/../b', '/tmp/root'],
    ['a NUL', '/tmp/root/a\u0000', undefined],
    ['a backslash', '/tmp/root\\a', undefined],
    ['a relative path with no root', 'a.txt', undefined],
    ['a missing argument', undefined, '/tmp/root'],
    ['a non-string argument', { path: '/tmp/root' }, '/tmp/root'],
  ])('is unknown for %s', (_, raw, root) => {
    expect(containment('/tmp/root', raw, root)).toBe('unknown')
  })

  it('is unknown for every path when the directory itself is not clean', () => {
    expect(containment('/tmp/../root', '/tmp/root/a')).toBe('unknown')
    expect(containment('relative', '/relative/a')).toBe('unknown')
  })

  const segment = fc.oneof(
    fc.constantFrom('a', 'tmp', 'root', '.', '', 'root2', '..a'),
    fc.stringMatching(/^[a-z.]{1,4}$/),
  )

  it('never says inside for a path with a ".." segment (property)', () => {
    fc.assert(
      fc.property(
        fc.array(segment, { maxLength: 5 }),
        fc.array(segment, { maxLength: 5 }),
        fc.boolean(),
        fc.constantFrom('/', '/tmp', '/tmp/root', '/a/b'),
        fc.option(fc.constantFrom('/', '/tmp', '/tmp/root'), { nil: undefined }),
        (before, after, absolute, dir, root) => {
          const raw = (absolute ? '/' : '') + [...before, '..', ...after].join('/')
          expect(containment(dir, raw, root)).not.toBe('inside')
        },
      ),
    )
  })

  it('says inside for every clean path below the directory and outside for a sibling sharing its prefix (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,4}$/), { minLength: 1, maxLength: 4 }),
        fc.array(fc.stringMatching(/^[a-z]{1,4}$/), { maxLength: 4 }),
        fc.stringMatching(/^[a-z0-9]{1,3}$/),
        (dir, rest, suffix) => {
          const d = '/' + dir.join('/')
          expect(containment(d, [d, ...rest].join('/'))).toBe('inside')
          expect(containment(d, d + suffix)).toBe('outside')
        },
      ),
    )
  })
})

describe('commonDirectory', () => {
  it('is the deepest directory containing every path', () => {
    expect(commonDirectory(['/p/src/a.ts', '/p/src/lib/b.ts'])).toBe('/p/src')
    expect(commonDirectory(['/p/src', '/p/src/a'])).toBe('/p/src')
    expect(commonDirectory(['/p/a'])).toBe('/p/a')
    expect(commonDirectory(['/a', '/b'])).toBe('/')
    expect(commonDirectory(['/tmp/root', '/tmp/root2'])).toBe('/tmp')
    expect(commonDirectory([])).toBeUndefined()
  })

  it('contains every path it was given (property)', () => {
    const path = fc.array(fc.constantFrom('a', 'b', 'ab', 'c'), { maxLength: 4 }).map((s) => '/' + s.join('/'))
    fc.assert(
      fc.property(fc.array(path, { minLength: 1, maxLength: 5 }), (paths) => {
        const dir = commonDirectory(paths) as string
        for (const p of paths) expect(isInside(dir, p)).toBe(true)
      }),
    )
  })
})

describe('absolutise and rootFor: roots that cannot be used', () => {
  it('cannot resolve a relative path against a root that is not a clean absolute path', () => {
    for (const root of ['relative', '/p/../q', '', '~/p']) {
      expect(absolutise('a.txt', root)).toEqual({ _tag: 'Left', left: 'is relative and this tool has no usable root' })
      expect(containment('/', 'a.txt', root)).toBe('unknown')
    }
  })

  it('skips a root that is not a string, and a prefix the tool does not start with, however long', () => {
    const roots = JSON.parse('{"":"/srv","fs_":3,"fs_read_more":"/long","web_":"/web"}') as Record<string, string>
    expect(rootFor(roots, 'fs_read')).toBe('/srv')
    expect(rootFor({ fs_: null, web_: '/web' } as unknown as Record<string, string>, 'fs_read')).toBeUndefined()
  })
})

// -------------------------------------------------------------------------------------
// issue 34: a location read as the server will read it
// -------------------------------------------------------------------------------------

describe('readLocation', () => {
  const elsewhere = (problem: string) => ({ _tag: 'Left', left: { problem, elsewhere: true } })
  const unknown = (problem: string) => ({ _tag: 'Left', left: { problem, elsewhere: false } })

  it('reads a file: URL as the path it names, percent-decoded', () => {
    expect(readLocation('file:///etc/passwd', '/p')).toEqual({ _tag: 'Right', right: '/etc/passwd' })
    expect(readLocation('file://localhost/srv/a%20b', '/p')).toEqual({ _tag: 'Right', right: '/srv/a b' })
    expect(readLocation('file:///srv/caf%C3%A9', undefined)).toEqual({ _tag: 'Right', right: '/srv/caf\u00e9' })
  })

  // the reference filesystem server takes no URL: it reads "file:///R/a#/../../x" as the relative path
  // R/file:/R/a#/../../x, which its ".." segments lead out of; the URL reading drops the fragment
  it('says a file: URL is unknown when what its URL reading drops or resolves away could lead elsewhere', () => {
    const query = 'is a file: URL with a query or a fragment, which a server may read as part of a path'
    expect(readLocation('file:///srv/p/a.txt#/../../../etc/passwd', '/p')).toEqual(unknown('has a ".." segment'))
    expect(readLocation('file:///srv/p/a.txt#x', '/p')).toEqual(unknown(query))
    expect(readLocation('file:///srv/p/a.txt?x', '/p')).toEqual(unknown(query))
    expect(readLocation('FILE:///srv/x/%2e%2e/y', '/p')).toEqual(
      unknown('is a file: URL with an encoded ".", which may make a ".." segment'),
    )
    expect(readLocation('file:///srv/x/.%2E/y', '/p')).toEqual(
      unknown('is a file: URL with an encoded ".", which may make a ".." segment'),
    )
    expect(readLocation('file:///srv/x/../y', '/p')).toEqual(unknown('has a ".." segment'))
    expect(readLocation('file:///srv\\..\\y', '/p')).toEqual(unknown('contains a backslash'))
  })

  it('says a URL of any scheme with a ".." segment is unknown, not elsewhere: a server may read it as a path', () => {
    expect(readLocation('http://x/../../.toolstack/grants.json', '/p')).toEqual(unknown('has a ".." segment'))
    expect(readLocation('mailto:../../etc', '/p')).toEqual(unknown('has a ".." segment'))
  })

  it('refuses a file: URL that names no path here', () => {
    const other = readLocation('file://otherhost/srv/a', '/p')
    expect(other._tag === 'Left' && other.left.problem.startsWith('is a file: URL that names no local path')).toBe(true)
    const slash = readLocation('file:///srv/a%2Fb', '/p')
    expect(slash._tag === 'Left' && !slash.left.elsewhere).toBe(true)
    expect(readLocation('file:///srv/a%00b', '/p')).toEqual(unknown('contains a NUL character'))
  })

  it('says a URL of another scheme, or an e-mail address, is elsewhere', () => {
    expect(readLocation('https://evil.example/x', '/p')).toEqual(elsewhere('is a URL ("https:"), not a path'))
    expect(readLocation('s3://bucket/key', '/p')).toEqual(elsewhere('is a URL ("s3:"), not a path'))
    expect(readLocation('attacker@evil.example', '/p')).toEqual(elsewhere('is an e-mail address, not a path'))
    expect(readLocation('mailto:a@b.c', '/p')).toEqual(elsewhere('is an e-mail address, not a path'))
  })

  it('cuts a long scheme in what it says', () => {
    const long = readLocation(`${'a'.repeat(5000)}://x`, '/p')
    expect(long._tag === 'Left' && long.left.problem.length).toBeLessThan(100)
  })

  it('says what is not plainly a path is unknown: a colon before any slash, white space at an end, a control character', () => {
    const colon = 'holds a ":" before any "/", so it may be a URL or a drive, not plainly a path'
    expect(readLocation('C:/Windows', '/p')).toEqual(unknown(colon))
    expect(readLocation('notes:2024.txt', '/p')).toEqual(unknown(colon))
    expect(readLocation(' /etc/passwd', '/p')).toEqual(unknown('begins or ends with white space'))
    expect(readLocation('/etc/passwd\n', '/p')).toEqual(unknown('begins or ends with white space'))
    expect(readLocation('/srv/a\u001bb', '/p')).toEqual(unknown('contains a control character'))
    // a colon after the first slash is a name like any other, "file:" included past the start
    expect(readLocation('/srv/a:b', '/p')).toEqual({ _tag: 'Right', right: '/srv/a:b' })
    expect(readLocation('/srv/file:a', '/p')).toEqual({ _tag: 'Right', right: '/srv/file:a' })
    expect(readLocation('src/FILE:a', '/p')).toEqual({ _tag: 'Right', right: '/p/src/FILE:a' })
    // "@" in a path with a slash is a name like any other
    expect(readLocation('node_modules/@scope/pkg', '/p')).toEqual({
      _tag: 'Right',
      right: '/p/node_modules/@scope/pkg',
    })
  })

  it('gives NFC, so both spellings of a name are one location', () => {
    expect(readLocation('/srv/cafe\u0301', undefined)).toEqual({ _tag: 'Right', right: '/srv/caf\u00e9' })
    expect(readLocation('cafe\u0301/x', '/r')).toEqual({ _tag: 'Right', right: '/r/caf\u00e9/x' })
  })

  it('whatever the value, a path it gives is absolute, in NFC and normal form, with no ".." segment (property)', () => {
    const segment = fc.oneof(
      fc.constantFrom('.', '..', '', 'a', 'e\u0301', '\u00e9', '~', 'a:b', 'x@y', '%2e%2e', ' '),
      fc.string({ maxLength: 4 }),
    )
    const raw = fc.oneof(
      fc.array(segment, { maxLength: 6 }).map((s) => s.join('/')),
      fc.array(segment, { maxLength: 6 }).map((s) => '/' + s.join('/')),
      fc.array(segment, { maxLength: 6 }).map((s) => 'file:///' + s.join('/')),
      fc.anything(),
    )
    fc.assert(
      fc.property(raw, fc.option(fc.constantFrom('/r', '/r/s', 'relative'), { nil: undefined }), (v, root) => {
        const read = readLocation(v, root)
        if (read._tag === 'Left') return
        const p = read.right
        expect(p.startsWith('/')).toBe(true)
        expect(p.normalize('NFC')).toBe(p)
        if (p !== '/') expect(p.endsWith('/')).toBe(false)
        expect(
          p
            .split('/')
            .slice(1)
            .filter((s) => s === '' || s === '.' || s === '..'),
        ).toEqual(p === '/' ? [''] : [])
      }),
    )
  })
})

describe('looksLikeLocation and unreadLocations', () => {
  it('knows a location by the last word of its name', () => {
    const yes = [
      'repo_path',
      'filePath',
      'cwd',
      'workingDir',
      'output-files',
      'root',
      'projectRoot',
      'file_uri',
      'sourceUrl',
      'workdir',
      'target_directory',
      'FOLDER',
      // a copy or a move: where it puts something, and what it takes
      'dest',
      'dst',
      'src',
      'backup_destination',
      'saveLocation',
      // the whole name one word of the list, though its last word is not
      'fileName',
      'File_Name',
      // separators at either end, or several in a row, make no word
      'path_',
      '__repo--path__',
    ]
    const no = [
      'pathway',
      'name',
      'content',
      'rooted',
      'profile',
      'urlencoded',
      '',
      '_',
      'directoryListing',
      // a location word that is not the last, nor the whole name
      'max_path_length',
      'path_of_least_resistance',
    ]
    expect(yes.filter((n) => !looksLikeLocation(n))).toEqual([])
    expect(no.filter((n) => looksLikeLocation(n))).toEqual([])
  })

  it('names the declared arguments that look like locations and that the rules neither read nor set aside', () => {
    const declared = new Set(['path', 'repo_path', 'cwd', 'message', 'url'])
    expect(unreadLocations({ names: LOCATION_ARGS, declared })).toEqual(['repo_path', 'cwd'])
    expect(
      unreadLocations({ names: [...LOCATION_ARGS, 'repo_path'], declared, notLocations: new Set(['cwd']) }),
    ).toEqual([])
    expect(unreadLocations({ names: LOCATION_ARGS, declared: undefined })).toEqual([])
  })
})

describe('standing and containment: a directory is touched by what holds it', () => {
  it('says inside, holds or outside, segment by segment', () => {
    expect(standing('/d/e', '/d/e/f')).toBe('inside')
    expect(standing('/d/e', '/d/e')).toBe('inside')
    expect(standing('/d/e', '/d')).toBe('holds')
    expect(standing('/d/e', '/')).toBe('holds')
    expect(standing('/d/e', '/d/ef')).toBe('outside')
    expect(standing('/d/e', '/d/f')).toBe('outside')
    expect(standing('/', '/x')).toBe('inside')
  })

  it('reads a raw location for containment as readLocation does', () => {
    expect(containment('/tmp/root', 'file:///tmp')).toBe('holds')
    expect(containment('/tmp/root', 'https://x/tmp/root')).toBe('unknown')
    expect(containment('relative', '/tmp')).toBe('unknown')
  })
})

describe('locate: what the rules cannot read', () => {
  const scope = (declared: ReadonlyArray<string> | undefined, extra: Partial<LocationScope> = {}): LocationScope => ({
    names: LOCATION_ARGS,
    declared: declared === undefined ? undefined : new Set(declared),
    ...extra,
  })

  it('gives each declared argument that looks like a location, and is not read, as unread, given or not', () => {
    expect(
      locate({ files: ['a'], repo_path: '/other' }, 'git_add', { '': '/r' }, scope(['repo_path', 'files'])),
    ).toEqual([
      { _tag: 'Known', arg: 'files[0]', path: '/r/a', sent: 'a' },
      { _tag: 'Unread', arg: 'repo_path', reading: { _tag: 'Known', arg: 'repo_path', path: '/other' } },
    ])
    expect(locate({ files: ['/r/a'] }, 'git_add', {}, scope(['repo_path', 'files']))).toEqual([
      { _tag: 'Known', arg: 'files[0]', path: '/r/a' },
      { _tag: 'Unread', arg: 'repo_path', reading: { _tag: 'Unknown', arg: 'repo_path', problem: 'is missing' } },
    ])
  })

  it('reads nothing a name said not to be a location, and suspects nothing of it', () => {
    expect(
      locate(
        { cwd: '/x', to: 'a@b.c' },
        't',
        {},
        scope(['cwd', 'to'], { names: LOCATION_ARGS.filter((n) => n !== 'to'), notLocations: new Set(['cwd', 'to']) }),
      ),
    ).toEqual([{ _tag: 'Missing' }])
  })

  it('gives a key the tool does not declare, that looks like a location, as an unknown decoy', () => {
    expect(locate({ path: '/r/a', work_dir: '/etc' }, 't', {}, scope(['path']))).toEqual([
      { _tag: 'Known', arg: 'path', path: '/r/a' },
      { _tag: 'Unknown', arg: 'work_dir', problem: 'is not an argument this tool declares', undeclared: true },
    ])
  })

  it('gives no decoy for an undeclared key said not to be a location', () => {
    expect(
      locate({ path: '/r/a', work_dir: '/etc' }, 't', {}, scope(['path'], { notLocations: new Set(['work_dir']) })),
    ).toEqual([{ _tag: 'Known', arg: 'path', path: '/r/a' }])
  })

  const notKnown =
    "cannot be told from a decoy: this tool's declaration is not known (its tools were not listed through the policy)"

  it('when the declaration is not known, suspects nothing of a key said not to be a location', () => {
    expect(
      locate({ cwd: '/x', repo_path: '/y' }, 't', {}, scope(undefined, { notLocations: new Set(['cwd']) })),
    ).toEqual([{ _tag: 'Unknown', arg: 'repo_path', problem: notKnown }])
  })

  // principle 9: before a listing, "path" may be a decoy beside the tool's own "src"; nothing the call gives decides
  it('when the declaration is not known, reads no key: each location the call gives is unknown, and none is one unknown', () => {
    expect(locate({ path: '/r/a', repo_path: '/x', src: '/etc', msg: 'hi' }, 't', {}, scope(undefined))).toEqual([
      { _tag: 'Unknown', arg: 'path', problem: notKnown },
      { _tag: 'Unknown', arg: 'repo_path', problem: notKnown },
      { _tag: 'Unknown', arg: 'src', problem: notKnown },
    ])
    expect(locate({ msg: 'hi' }, 't', {}, scope(undefined))).toEqual([
      {
        _tag: 'Unknown',
        arg: 'arguments',
        problem:
          "give no location, and this tool's declaration is not known (its tools were not listed through the policy)",
      },
    ])
  })

  it('without a scope at all, reads every location name the call gives, and suspects every other that looks like one', () => {
    expect(locate({ path: '/r/a', repo_path: '/x', msg: 'hi' }, 't', {})).toEqual([
      { _tag: 'Known', arg: 'path', path: '/r/a' },
      { _tag: 'Unread', arg: 'repo_path', reading: { _tag: 'Known', arg: 'repo_path', path: '/x' } },
    ])
    expect(locate({ msg: 'hi' }, 't', {})).toEqual([{ _tag: 'Missing' }])
  })
})
