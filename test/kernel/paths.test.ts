import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  LOCATION_ARGS,
  absolutise,
  commonDirectory,
  containment,
  isInside,
  locate,
  normalizeAbsolute,
  rootFor,
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
