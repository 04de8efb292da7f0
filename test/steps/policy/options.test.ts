// What withPolicy is told about locations, decoded once: each option's absence, each form it may take, and
// each mistake as a TypeError that names the option.
import { describe, expect, it } from 'vitest'
import type { LocationResolver } from '../../../src/kernel/resolve.js'
import { lexicalResolver } from '../../../src/kernel/resolve.js'
import { LOCATION_ARGS } from '../../../src/kernel/paths.js'
import { decodeProtect, decodeResolver, decodeRoots, locationNames } from '../../../src/steps/policy/options.js'

describe('decodeRoots', () => {
  it('is {} when absent, and each directory in normal form', () => {
    expect(decodeRoots('w', undefined)).toEqual({})
    const roots = decodeRoots('w', { fs_: '/srv//p/./q/', '': '/' })
    expect(roots).toEqual({ fs_: '/srv/p/q', '': '/' })
    expect(Object.isFrozen(roots)).toBe(true)
  })

  it('keeps a prefix named "__proto__" as an own, listed key, leaving the prototype alone', () => {
    const roots = decodeRoots('w', JSON.parse('{"__proto__":"/p"}'))
    expect(Object.keys(roots)).toEqual(['__proto__'])
    expect(Object.getOwnPropertyDescriptor(roots, '__proto__')?.value).toBe('/p')
    expect(Object.getPrototypeOf(roots)).toBe(Object.prototype)
  })

  it('refuses what is not an object, and a directory that is not a clean absolute path, naming where', () => {
    for (const [u, got] of [
      [5, 'number 5'],
      [null, 'null'],
      [['/p'], 'an array'],
    ] as const)
      expect(() => decodeRoots('w', u)).toThrow(
        new TypeError(`w: roots must be an object mapping a tool-name prefix to a directory, got ${got}`),
      )
    for (const [dir, got] of [
      ['p', 'the string "p"'],
      ['/p/../q', 'the string "/p/../q"'],
      [undefined, 'undefined'],
    ] as const)
      expect(() => decodeRoots('w', { a_: dir })).toThrow(
        new TypeError(`w: roots["a_"] must be an absolute POSIX path without "..", NUL, backslash or "~", got ${got}`),
      )
  })
})

describe('locationNames', () => {
  it('is the default names, none set aside, when absent', () => {
    const { names, notLocations } = locationNames('w', undefined)
    expect(names).toBe(LOCATION_ARGS)
    expect([...notLocations]).toEqual([])
  })

  it('adds names once each, sets aside "!name" (a default one too), and freezes the list', () => {
    const { names, notLocations } = locationNames('w', ['workdir', 'path', '!to', 'workdir'])
    expect(names).toEqual([...LOCATION_ARGS.filter((n) => n !== 'to'), 'workdir'])
    expect([...notLocations]).toEqual(['to'])
    expect(Object.isFrozen(names)).toBe(true)
    expect(locationNames('w', []).names).toEqual(LOCATION_ARGS)
  })

  it('refuses what is not a list of names, naming the option and its defaults', () => {
    const message =
      'w: option "locationArgs" must be an array of argument names (non-empty strings; "!name" for a name that ' +
      `is not a location), added to ${LOCATION_ARGS.join(', ')}; got `
    for (const [u, got] of [
      ['path', 'the string "path"'],
      [[''], 'an array'],
      [['!'], 'an array'],
      [['a', 1], 'an array'],
    ] as const)
      expect(() => locationNames('w', u)).toThrow(new TypeError(message + got))
  })

  it('refuses a name both read and set aside', () => {
    expect(() => locationNames('w', ['!cwd', 'a', 'cwd'])).toThrow(
      new TypeError('w: option "locationArgs" both reads and refuses "cwd": keep "cwd" or "!cwd"'),
    )
  })
})

describe('decodeResolver', () => {
  const resolverLike: LocationResolver = { resolve: (path) => ({ path: `${path}!` }) }

  it('is one lexical resolver for every tool when absent or "lexical"', () => {
    for (const u of [undefined, 'lexical']) {
      const of = decodeResolver('w', u)
      expect(of('a').resolve('/A/b')).toEqual({ path: '/A/b' })
      expect(of('a').forOneJudgement).toBeUndefined()
      expect(of('b')).toBe(of('a'))
    }
  })

  it('is one filesystem resolver for every tool when "filesystem"', () => {
    const of = decodeResolver('w', 'filesystem')
    expect(of('a').forOneJudgement).toBeTypeOf('function')
    expect(of('a').resolve('/')).toEqual({ path: '/' })
    expect(of('b')).toBe(of('a'))
  })

  it('takes a resolver as it is, for every tool', () => {
    const of = decodeResolver('w', resolverLike)
    expect(of('a')).toBe(resolverLike)
    expect(of('b')).toBe(resolverLike)
  })

  it('asks a function per tool, and reads the lexical form where it throws or answers something else', () => {
    const seen: Array<string> = []
    const of = decodeResolver('w', (tool: string) => {
      seen.push(tool)
      if (tool === 'throws') throw new Error('no')
      return tool === 'fs' ? resolverLike : { resolve: 'not a function' }
    })
    expect(of('fs')).toBe(resolverLike)
    const other = of('other')
    expect(other.resolve('/A')).toEqual({ path: '/A' })
    expect(of('throws')).toBe(other)
    expect(seen).toEqual(['fs', 'other', 'throws'])
    // a function of no parameters is one too
    expect(decodeResolver('w', () => resolverLike)('x')).toBe(resolverLike)
  })

  it('refuses anything else, naming the option', () => {
    for (const [u, got] of [
      ['disk', 'the string "disk"'],
      [5, 'number 5'],
      [{ resolve: 5 }, 'an object'],
    ] as const)
      expect(() => decodeResolver('w', u)).toThrow(
        new TypeError(
          `w: option "resolver" must be "lexical", "filesystem", a LocationResolver, or a function from a tool name to one, got ${got}`,
        ),
      )
    // a function of two parameters is not a choice per tool
    expect(() => decodeResolver('w', (a: string, b: string) => lexicalResolver({ caseInsensitive: a === b }))).toThrow(
      /option "resolver" must be/,
    )
  })
})

describe('decodeProtect', () => {
  it('is [] when absent, and each path in normal form, with its words, frozen', () => {
    expect(decodeProtect('w', undefined)).toEqual([])
    const files = decodeProtect('w', [{ path: '/srv//p/./grants.json', what: 'the store' }])
    expect(files).toEqual([{ path: '/srv/p/grants.json', what: 'the store' }])
    expect(Object.isFrozen(files)).toBe(true)
    expect(Object.isFrozen(files[0])).toBe(true)
  })

  it('reads each member once: a getter that answers otherwise the second time is not asked again', () => {
    let reads = 0
    const file = {
      get path() {
        return reads++ === 0 ? '/srv/grants.json' : 'relative'
      },
      what: 'the store',
    }
    expect(decodeProtect('w', [file])).toEqual([{ path: '/srv/grants.json', what: 'the store' }])
    expect(reads).toBe(1)
  })

  it('refuses what is not a list of { path, what } with clean absolute paths', () => {
    for (const u of [
      'path',
      [{ path: '/a' }],
      [{ what: 'x' }],
      [{ path: 5, what: 'x' }],
      [{ path: '/a', what: 5 }],
      [{ path: 'a', what: 'x' }],
      [{ path: '/a', what: 'x' }, null],
    ])
      expect(() => decodeProtect('w', u)).toThrow(
        /^w: option "protect" must be an array of \{ path, what \}, each path/,
      )
  })
})
