import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { StringMap } from '../../src/kernel/StringMap.js'
import {
  emptyStringMap,
  emptyStringMapHashedBy,
  entries,
  get,
  has,
  hashString,
  set,
} from '../../src/kernel/StringMap.js'
import * as SM from '../../src/kernel/StringMap.js'

// -------------------------------------------------------------------------------------
// what a map must do, stated once over a table of operations, so the same properties run
// against the real map, against the real map under hashes that force collisions, and
// against broken variants that they must catch
// -------------------------------------------------------------------------------------

interface Ops<M> {
  readonly empty: () => M
  readonly set: (m: M, key: string, value: unknown) => M
  readonly get: (m: M, key: string) => unknown
  readonly has: (m: M, key: string) => boolean
  readonly size: (m: M) => number
  readonly entries: (m: M) => Iterable<readonly [string, unknown]>
}

const opsHashedBy = (hash?: (key: string) => number): Ops<StringMap<unknown>> => ({
  empty: () => (hash === undefined ? emptyStringMap<unknown>() : emptyStringMapHashedBy<unknown>(hash)),
  set,
  get,
  has,
  size: (m) => m.size,
  entries,
})

const real = opsHashedBy()
// Every key in one collision node, at the bottom of a chain of single-child nodes.
const allCollide = opsHashedBy(() => 0)
// Few hash values, so keys share every bit, some bits, or none: regular slots, splits and
// collision nodes all at once.
const fourBits = opsHashedBy((k) => hashString(k) & 0b1000010000100001)
// Equal hashes for keys of one length: the real hash's top bits, then nothing.
const byLength = opsHashedBy((k) => Math.imul(k.length, 0x9e3779b1))

const ODD_KEYS = [
  '',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '\u0000',
  'a\u0000',
  '\u0000a',
  '\ud800', // lone high surrogate
  '\udc00', // lone low surrogate
  '\udc00\ud800', // a reversed pair: two lone surrogates
  '\ud83d\ude00', // a real pair
  'length',
  '0',
  '-0',
  'NaN',
  'undefined',
  ' ',
  'a'.repeat(300),
  'a'.repeat(299) + 'b',
]

const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
const keyArb = fc.oneof(
  fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  fc.constantFrom(...ODD_KEYS),
  fc.string({ unit: fc.constantFrom('a', 'b', '\u0000', '\ud800'), maxLength: 4 }),
  fc.string({ unit: codeUnit, maxLength: 3 }),
)
// NaN and undefined are the values that trip up "already bound to this value" checks.
const valueArb = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom<unknown>(undefined, null, Number.NaN, 'x'))

type Command =
  | { readonly op: 'set'; readonly key: string; readonly value: unknown }
  | { readonly op: 'get' | 'has'; readonly key: string }

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('set' as const), key: keyArb, value: valueArb }) },
  fc.record({ op: fc.constantFrom('get' as const, 'has' as const), key: keyArb }),
)

const setsArb = fc.array(fc.tuple(keyArb, valueArb), { maxLength: 80 })

// The bindings of `m`, checked to come out each once.
const bindings = <M>(ops: Ops<M>, m: M): Map<string, unknown> => {
  const out = new Map<string, unknown>()
  for (const [k, v] of ops.entries(m)) {
    expect(out.has(k), `entries yielded ${JSON.stringify(k)} twice`).toBe(false)
    out.set(k, v)
  }
  return out
}

const expectSameAs = <M>(ops: Ops<M>, m: M, model: ReadonlyMap<string, unknown>, probes: Iterable<string>): void => {
  expect(ops.size(m)).toBe(model.size)
  expect(bindings(ops, m)).toEqual(model)
  for (const k of probes) {
    expect(ops.has(m, k)).toBe(model.has(k))
    expect(ops.get(m, k)).toBe(model.get(k))
  }
}

// Random set/get/has against a JS Map, checking answers and size after every step.
const modelProperty = <M>(ops: Ops<M>) =>
  fc.property(fc.array(commandArb, { maxLength: 100 }), (commands) => {
    let m = ops.empty()
    const model = new Map<string, unknown>()
    for (const c of commands) {
      if (c.op === 'set') {
        m = ops.set(m, c.key, c.value)
        model.set(c.key, c.value)
      } else if (c.op === 'get') expect(ops.get(m, c.key)).toBe(model.get(c.key))
      else expect(ops.has(m, c.key)).toBe(model.has(c.key))
      expect(ops.size(m)).toBe(model.size)
    }
    expectSameAs(ops, m, model, [...model.keys(), ...ODD_KEYS])
  })

// Every version along a sequence of sets still holds exactly what it held when made.
const persistenceProperty = <M>(ops: Ops<M>) =>
  fc.property(setsArb, (sets) => {
    const versions: Array<readonly [M, Map<string, unknown>]> = [[ops.empty(), new Map()]]
    for (const [k, v] of sets) {
      const [m, model] = versions[versions.length - 1]!
      versions.push([ops.set(m, k, v), new Map(model).set(k, v)])
    }
    const probes = [...sets.map(([k]) => k), ...ODD_KEYS]
    for (const [m, model] of versions) expectSameAs(ops, m, model, probes)
  })

// Persistence along a branching history: two sets applied to the same version must not
// see each other.
const branchingProperty = <M>(ops: Ops<M>) =>
  fc.property(setsArb, keyArb, keyArb, (sets, k1, k2) => {
    let m = ops.empty()
    const model = new Map<string, unknown>()
    for (const [k, v] of sets) {
      m = ops.set(m, k, v)
      model.set(k, v)
    }
    const left = ops.set(m, k1, 'left')
    const right = ops.set(m, k2, 'right')
    const probes = [...model.keys(), k1, k2]
    expectSameAs(ops, m, model, probes)
    expectSameAs(ops, left, new Map(model).set(k1, 'left'), probes)
    expectSameAs(ops, right, new Map(model).set(k2, 'right'), probes)
  })

const identityProperty = <M>(ops: Ops<M>) =>
  fc.property(setsArb, (sets) => {
    let m = ops.empty()
    for (const [k, v] of sets) m = ops.set(m, k, v)
    for (const [k] of sets) expect(ops.set(m, k, ops.get(m, k))).toBe(m)
  })

// -------------------------------------------------------------------------------------
// the real map
// -------------------------------------------------------------------------------------

describe('StringMap', () => {
  it('starts empty, as one shared frozen value', () => {
    const m = emptyStringMap<number>()
    expect(m.size).toBe(0)
    expect(emptyStringMap<string>()).toBe(m)
    expect(Object.isFrozen(m)).toBe(true)
    expect([...entries(m)]).toEqual([])
    for (const k of ODD_KEYS) {
      expect(has(m, k)).toBe(false)
      expect(get(m, k)).toBeUndefined()
    }
  })

  it('treats keys that are property names, empty, or broken UTF-16 as plain data', () => {
    let m = emptyStringMap<number>()
    ODD_KEYS.forEach((k, i) => {
      m = set(m, k, i)
    })
    expect(m.size).toBe(ODD_KEYS.length)
    ODD_KEYS.forEach((k, i) => {
      expect(has(m, k)).toBe(true)
      expect(get(m, k)).toBe(i)
    })
    expect(has(m, 'a'.repeat(301))).toBe(false)
    expect(has(m, '\ud800\udc00')).toBe(false)
  })

  it('tells a key bound to undefined from a missing key', () => {
    const m = set(emptyStringMap<undefined>(), 'k', undefined)
    expect(m.size).toBe(1)
    expect(has(m, 'k')).toBe(true)
    expect(get(m, 'k')).toBeUndefined()
    expect(has(m, 'j')).toBe(false)
  })

  it('replaces a binding without growing, and keeps the old version', () => {
    const a = set(emptyStringMap<number>(), 'k', 1)
    const b = set(a, 'k', 2)
    expect([a.size, b.size]).toEqual([1, 1])
    expect([get(a, 'k'), get(b, 'k')]).toEqual([1, 2])
  })

  it('returns the very same map when re-binding a key to the same value', () => {
    const tuple = [1, 'id'] as const
    const m = set(set(emptyStringMap<unknown>(), 'k', tuple), 'n', Number.NaN)
    expect(set(m, 'k', tuple)).toBe(m)
    expect(set(m, 'n', Number.NaN)).toBe(m)
    expect(set(m, 'k', [1, 'id'] as const)).not.toBe(m) // equal is not identical
  })

  // Object.is, not ===: an === check would keep +0 when asked to bind -0.
  it('tells -0 from +0 when deciding the value is unchanged', () => {
    const m = set(emptyStringMap<number>(), 'k', 0)
    const n = set(m, 'k', -0)
    expect(n).not.toBe(m)
    expect(Object.is(get(n, 'k'), -0)).toBe(true)
  })

  it('holds many keys, through splits at every depth', () => {
    const n = 20_000
    let m = emptyStringMap<number>()
    const halfway: Array<StringMap<number>> = []
    for (let i = 0; i < n; i++) {
      m = set(m, `key-${i}`, i)
      if (i === n / 2) halfway.push(m)
    }
    expect(m.size).toBe(n)
    for (let i = 0; i < n; i++) expect(get(m, `key-${i}`)).toBe(i)
    expect(has(m, `key-${n}`)).toBe(false)
    const seen = new Set<string>()
    for (const [k] of entries(m)) seen.add(k)
    expect(seen.size).toBe(n)
    const old = halfway[0]!
    expect(old.size).toBe(n / 2 + 1)
    expect(has(old, `key-${n / 2}`)).toBe(true)
    expect(has(old, `key-${n / 2 + 1}`)).toBe(false)
  })

  it('hashes every code unit of a long key, not a sample of it', () => {
    const base = 'x'.repeat(10_000)
    const keys = Array.from({ length: 64 }, (_, i) => base.slice(0, 5_000) + String.fromCharCode(i) + base.slice(5_001))
    expect(new Set(keys.map(hashString)).size).toBe(keys.length)
  })

  it('is FNV-1a over the UTF-16 code units, then the murmur3 finaliser', () => {
    // FNV-1a and fmix32 as published, written out here independently
    const fnv1a = (str: string): number => {
      let h = 0x811c9dc5
      for (const unit of Array.from({ length: str.length }, (_, i) => str.charCodeAt(i)))
        h = Math.imul(h ^ unit, 16777619)
      return h
    }
    const fmix = (x: number): number => {
      let h = x
      h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
      return (h ^ (h >>> 16)) | 0
    }
    for (const key of ['', 'a', 'path', 'ffset', '\ud800', 'x'.repeat(100)])
      expect(hashString(key) | 0).toBe(fmix(fnv1a(key)))
  })

  it('hashes to 32-bit integers', () => {
    fc.assert(
      fc.property(fc.string({ unit: codeUnit }), (s) => {
        const h = hashString(s)
        expect(h).toBe(h | 0)
      }),
    )
  })

  describe('against a JS Map', () => {
    it('answers set, get and has like a Map, step by step', () => fc.assert(modelProperty(real)))
    it('keeps every earlier version intact', () => fc.assert(persistenceProperty(real)))
    it('keeps sibling versions apart', () => fc.assert(branchingProperty(real)))
    it('returns the same map when a key is re-bound to its value', () => fc.assert(identityProperty(real)))
  })

  describe('when hashes collide', () => {
    // Real collisions of hashString, found by a birthday search over 8-character keys.
    const COLLIDING: ReadonlyArray<readonly [string, string]> = [
      ['9afb9b70', 'jq85rava'],
      ['3ingmptl', '2nb6i3dj'],
      ['8a42q6re', '5_jr4n6q'],
      ['jph5rk3o', '63knv2xf'],
    ]

    it('keeps keys apart whose real hashes are equal', () => {
      let m = emptyStringMap<string>()
      for (const [a, b] of COLLIDING) {
        expect(hashString(a)).toBe(hashString(b))
        m = set(m, a, `${a}!`)
        expect(has(m, b)).toBe(false)
        m = set(m, b, `${b}!`)
      }
      expect(m.size).toBe(2 * COLLIDING.length)
      for (const [a, b] of COLLIDING) {
        expect(get(m, a)).toBe(`${a}!`)
        expect(get(m, b)).toBe(`${b}!`)
        const again = set(m, a, 'again')
        expect([get(again, a), get(again, b), get(m, a)]).toEqual(['again', `${b}!`, `${a}!`])
      }
    })

    it('keeps a map built under a test hash on that hash', () => {
      let m = emptyStringMapHashedBy<number>(() => 7)
      for (let i = 0; i < 100; i++) m = set(m, `k${i}`, i)
      expect(m.size).toBe(100)
      for (let i = 0; i < 100; i++) expect(get(m, `k${i}`)).toBe(i)
      expect(has(m, 'k100')).toBe(false)
    })

    it('tells a key from a value that spells it, in a node of colliding keys', () => {
      let m = emptyStringMapHashedBy<string>(() => 7)
      for (const [k, v] of [
        ['a', 'b'],
        ['b', 'x'],
        ['c', 'a'],
      ] as const)
        m = set(m, k, v)
      expect([get(m, 'a'), get(m, 'b'), get(m, 'c'), has(m, 'x')]).toEqual(['b', 'x', 'a', false])
      const again = set(m, 'b', 'y')
      expect([again.size, get(again, 'b'), get(again, 'a'), get(m, 'b')]).toEqual([3, 'y', 'b', 'x'])
      expect(set(m, 'x', 'b').size).toBe(4)
    })

    describe.each([
      ['every key on one hash', allCollide],
      ['a hash of four bits', fourBits],
      ['keys of one length on one hash', byLength],
    ])('with %s', (_, ops) => {
      it('answers like a Map', () => fc.assert(modelProperty(ops)))
      it('keeps every earlier version intact', () => fc.assert(persistenceProperty(ops)))
      it('keeps sibling versions apart', () => fc.assert(branchingProperty(ops)))
      it('returns the same map when a key is re-bound to its value', () => fc.assert(identityProperty(ops)))
    })
  })
})

// -------------------------------------------------------------------------------------
// the properties can fail
// -------------------------------------------------------------------------------------

describe('the properties, against broken maps', () => {
  it('catch a has() that trusts the hash and skips comparing keys', () => {
    const weak = (k: string): number => k.length & 3
    const base = opsHashedBy(weak)
    const broken: Ops<StringMap<unknown>> = {
      ...base,
      has: (m, k) => [...entries(m)].some(([resident]) => weak(resident) === weak(k)),
    }
    expect(fc.check(modelProperty(broken)).failed).toBe(true)
  })

  it('catch a set that updates in place instead of copying', () => {
    interface Mutable {
      readonly map: Map<string, unknown>
    }
    const inPlace: Ops<Mutable> = {
      empty: () => ({ map: new Map() }),
      set: (m, k, v) => {
        m.map.set(k, v)
        return m
      },
      get: (m, k) => m.map.get(k),
      has: (m, k) => m.map.has(k),
      size: (m) => m.map.size,
      entries: (m) => m.map.entries(),
    }
    expect(fc.check(modelProperty(inPlace)).failed).toBe(false) // a single version cannot tell
    expect(fc.check(persistenceProperty(inPlace)).failed).toBe(true)
    expect(fc.check(branchingProperty(inPlace)).failed).toBe(true)
  })
})

describe('update', () => {
  it.each([
    ['the real hash', () => SM.emptyStringMap<number>()],
    // every key in one full-hash collision node
    ['a hash under which every key collides', () => SM.emptyStringMapHashedBy<number>(() => 0)],
  ])('binds f(old) in one walk, f(undefined) when unbound, and keeps every earlier version, under %s', (_, empty) => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('a', 'b', 'c', '', '__proto__', 'x\u0000y'), fc.integer({ min: -3, max: 3 })),
          { maxLength: 40 },
        ),
        (steps) => {
          const versions: Array<[SM.StringMap<number>, Map<string, number>]> = [[empty(), new Map()]]
          for (const [k, d] of steps) {
            const [m, model] = versions[versions.length - 1] as [SM.StringMap<number>, Map<string, number>]
            const next = SM.update(m, k, (old) => (old ?? 100) + d)
            const nextModel = new Map(model).set(k, (model.get(k) ?? 100) + d)
            if (d === 0 && model.has(k)) expect(next).toBe(m)
            versions.push([next, nextModel])
          }
          for (const [m, model] of versions) {
            expect(m.size).toBe(model.size)
            for (const [k, v] of model) expect(SM.get(m, k)).toBe(v)
          }
        },
      ),
    )
  })
})
