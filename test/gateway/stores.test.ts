// What every store shares (store.ts: the order of stats, a grant as text and its id, a URL shown without its
// password), the memory store's bounds, and openStore's reading of a URL.
import { mkdirSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Rule } from '../../src/index.js'
import {
  decodeStoreFile,
  encodeStoreFile,
  grantId,
  grantText,
  memoryStore,
  openStore,
  shownStoreUrl,
  storeKindOf,
} from '../../src/gateway/index.js'
import type { PairCount } from '../../src/gateway/index.js'
import { byToolThenKey } from '../../src/gateway/stores/store.js'
import { cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'

cleanUpAfterEach()

const pair: fc.Arbitrary<PairCount> = fc.record({
  tool: fc.string({ maxLength: 3 }),
  key: fc.string({ maxLength: 3 }),
  calls: fc.nat(),
})

describe('byToolThenKey', () => {
  it('sorts by tool, then by key, whatever the pairs', () => {
    fc.assert(
      fc.property(fc.array(pair, { maxLength: 12 }), (ps) => {
        const sorted = [...ps].sort(byToolThenKey)
        sorted.slice(1).forEach((b, i) => {
          const a = sorted[i] as PairCount
          expect(a.tool < b.tool || (a.tool === b.tool && a.key <= b.key)).toBe(true)
        })
      }),
    )
  })

  it('answers 0 for the same tool and key only, and the opposite sign turned round', () => {
    fc.assert(
      fc.property(pair, pair, (a, b) => {
        expect(byToolThenKey(a, b) === 0).toBe(a.tool === b.tool && a.key === b.key)
        expect(Math.sign(byToolThenKey(a, b)) + Math.sign(byToolThenKey(b, a))).toBe(0)
        expect(byToolThenKey(a, { ...a, calls: a.calls + 1 })).toBe(0)
      }),
    )
  })
})

const MEMBERS = ['tool', 'decision', 'under', 'note', 'definition'] as const
const rule: fc.Arbitrary<Rule> = fc.record(
  {
    tool: fc.string(),
    decision: fc.constantFrom('allow' as const, 'ask' as const, 'deny' as const),
    under: fc.string(),
    note: fc.string(),
    definition: fc.string(),
  },
  { requiredKeys: ['tool', 'decision'] },
)

describe('grantText and grantId', () => {
  it('a grant as text holds tool and decision, then under, note and definition when present, in that order, whatever the rule', () => {
    fc.assert(
      fc.property(rule, (r) => {
        const expected = MEMBERS.flatMap((k) => (r[k] === undefined ? [] : [[k, r[k]]]))
        expect(Object.entries(JSON.parse(grantText(r)) as object)).toEqual(expected)
      }),
    )
  })

  it('the id is 16 hex digits of the text: the same for a copy with its members in another order, another for another rule', () => {
    fc.assert(
      fc.property(rule, rule, (a, b) => {
        expect(grantId(a)).toMatch(/^[0-9a-f]{16}$/)
        const reversed = Object.fromEntries(Object.entries(a).reverse()) as unknown as Rule
        expect(grantId(reversed)).toBe(grantId(a))
        expect(grantId(a) === grantId(b)).toBe(grantText(a) === grantText(b))
      }),
    )
  })
})

describe('shownStoreUrl', () => {
  it('hides what comes before the @ of the authority, whatever the scheme, user and password', () => {
    const lower = fc.stringMatching(/^[a-z][a-z0-9+.-]{0,6}$/)
    fc.assert(
      fc.property(
        lower,
        fc.constantFrom('//', '/', ''),
        fc.stringMatching(/^[a-z0-9]{0,6}$/),
        fc.stringMatching(/^[A-Z0-9!$%]{1,8}$/),
        fc.stringMatching(/^[a-z0-9.]{1,8}(:[0-9]{1,5})?$/),
        (scheme, slashes, user, password, host) => {
          const shown = shownStoreUrl(`${scheme}:${slashes}${user}:${password}@${host}/0`)
          expect(shown).toBe(`${scheme}:${slashes}***@${host}/0`)
        },
      ),
    )
  })

  it('leaves a URL without credentials as it is', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,6}:\/\/[a-z0-9.:]{1,12}(\/[a-z@:]{0,5})?(\?[a-z=:@]{0,6})?$/), (url) => {
        fc.pre(!/^[a-z]+:\/\/[^/?#]*@/.test(url))
        expect(shownStoreUrl(url)).toBe(url)
      }),
    )
  })
})

describe('memoryStore bounds', () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    'refuses maxPairs %s, saying what it must be',
    (maxPairs) => {
      expect(() => memoryStore({ maxPairs })).toThrow(
        new TypeError(`memoryStore: maxPairs must be a whole number of at least 1, got ${String(maxPairs)}`),
      )
    },
  )

  it('counts only whole positive numbers of calls; a claimed pair no call carried is not in stats', async () => {
    const store = memoryStore({ maxPairs: 1 })
    store.addCounts([1.5, Number.NaN, Number.POSITIVE_INFINITY, -1, 0].map((calls) => ({ tool: 't', key: 'k', calls })))
    expect(await store.claim('t', 'k')).toBe(true)
    expect(await store.stats()).toEqual([])
    store.addCounts([{ tool: 't', key: 'k', calls: 2 }])
    expect(await store.stats()).toEqual([{ tool: 't', key: 'k', calls: 2 }])
    // the one pair it remembers is this one: it is still claimed
    expect(await store.claim('t', 'k')).toBe(false)
  })

  it('a count of no calls remembers no pair: it takes none of the maxPairs places', async () => {
    const store = memoryStore({ maxPairs: 1 })
    store.addCounts([{ tool: 't', key: 'k', calls: 0 }])
    expect(await store.claim('t', 'j')).toBe(true)
    expect(await store.claim('t', 'j')).toBe(false)
  })
})

describe('memoryStore, the rest of its contract', () => {
  it('onGrantsChanged returns its removal and never calls the listener (nothing else writes its grants); close resolves', async () => {
    const store = memoryStore()
    let told = 0
    const off = store.onGrantsChanged(() => void told++)
    store.addGrant({ tool: 't', decision: 'allow' })
    expect(typeof off).toBe('function')
    off()
    expect(told).toBe(0)
    await expect(store.close()).resolves.toBeUndefined()
  })
})

describe('openStore and a file: URL', () => {
  it('reads file:PATH as a path as written (relative to the working directory) and file:///PATH as a file URL', async () => {
    const dir = join(tempDir(), 'a dir')
    mkdirSync(dir)
    const asUrl = await openStore(pathToFileURL(join(dir, 'u.json')).href)
    asUrl.addGrant({ tool: 'u', decision: 'allow' })
    await asUrl.close()
    const asPath = await openStore(`file:${relative(process.cwd(), join(dir, 'p.json'))}`)
    asPath.addGrant({ tool: 'p', decision: 'allow' })
    await asPath.close()
    expect(readdirSync(dir).sort()).toEqual(['p.json', 'u.json'])
  })

  it('a path as written is not decoded as a URL: file:/dir/a%41b/g.json is in the directory a%41b', async () => {
    const dir = join(tempDir(), 'a%41b')
    mkdirSync(dir)
    const store = await openStore(`file:${join(dir, 'g.json')}`)
    store.addGrant({ tool: 'p', decision: 'allow' })
    await store.close()
    expect(readdirSync(dir)).toEqual(['g.json'])
  })
})

describe('storeKindOf', () => {
  it.each([
    ['memory', 'memory'],
    ['file:g.json', 'file'],
    ['file:/srv/g.json', 'file'],
    ['file:///srv/g.json', 'file'],
    ['redis://h:1', 'redis'],
    ['rediss://h:1', 'redis'],
  ])('reads %s as a %s store', (url, kind) => {
    expect(storeKindOf(url)).toEqual({ _tag: 'Right', right: kind })
  })

  it.each(['file:', 'redis://', 'rediss://', 'redisx://h', 'xredis://h', 'Memory', 'afile:x', ' memory'])(
    'refuses %j, naming what a store URL must be',
    (url) => {
      expect(storeKindOf(url)).toEqual({
        _tag: 'Left',
        left: `must be a store: "memory", "file:PATH", or "redis://HOST:PORT" ("rediss://" with TLS), got the string ${JSON.stringify(url)}`,
      })
    },
  )

  it('only a string is a store URL, whatever a value reads as', () => {
    for (const text of ['file:g.json', 'redis://h:1']) {
      const value = { toString: () => text }
      expect(storeKindOf(value)._tag).toBe('Left')
    }
  })

  it('shows at most 40 characters of a URL, without its password; a value that is not a string by its kind', () => {
    const url = `postgres://user:s3cret@${'h'.repeat(60)}`
    expect(storeKindOf(url)).toEqual({
      _tag: 'Left',
      left: `must be a store: "memory", "file:PATH", or "redis://HOST:PORT" ("rediss://" with TLS), got the string "${'postgres://***@'.padEnd(40, 'h')}"`,
    })
    expect(storeKindOf(42)).toEqual({
      _tag: 'Left',
      left: 'must be a store: "memory", "file:PATH", or "redis://HOST:PORT" ("rediss://" with TLS), got number 42',
    })
  })
})

describe('decodeStoreFile, beyond the grants', () => {
  const problem = (file: Record<string, unknown>): string => {
    const d = decodeStoreFile(JSON.stringify({ version: 1, grants: [], ...file }))
    return d._tag === 'Left' ? d.left : 'read'
  }
  const PIN = { tool: 't', hash: `sha256:${'0'.repeat(64)}`, at: '2026-12-05T00:00:00.000Z' }

  it('names every unknown member, and each list that is not what it must be, by its place', () => {
    expect(problem({ x: 1, y: 2 })).toBe('it has unknown members "x", "y"')
    expect(problem({ revoked: [{ tool: 'x', decision: 'alow' }] })).toMatch(/^revoked\[0\]\.decision must be/)
    expect(problem({ pins: 'no' })).toBe('pins must be an array of pins, got the string "no"')
    expect(problem({ changes: 7 })).toBe('changes must be an array of pins, got number 7')
    expect(problem({ pins: [PIN, { tool: '' }] })).toBe(
      'pins[1] must be a pin { tool, hash: "sha256:…", at, definition? }, got an object',
    )
    expect(problem({ pins: [PIN], changes: [{}] })).toBe(
      'changes[0] must be a pin { tool, hash: "sha256:…", at, definition? }, got an object',
    )
    expect(problem({ pins: [PIN], changes: [PIN] })).toBe('read')
  })

  it('keeps the latest 1 000 grants taken back', () => {
    const revoked = Array.from({ length: 1_001 }, (_, n) => ({ tool: `t${n}`, decision: 'allow' as const }))
    const d = decodeStoreFile(encodeStoreFile([], revoked))
    expect(d._tag === 'Right' && d.right.revoked).toEqual(revoked.slice(1))
  })
})
