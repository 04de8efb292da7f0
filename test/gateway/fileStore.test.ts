// The stores a gateway remembers with: the file store on a real directory (atomic writes, refusal of a file it
// cannot read, two stores on one file), the memory store, and openStore's dispatch.
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Rule } from '../../src/index.js'
import type { GatewayStore } from '../../src/gateway/index.js'
import {
  decodeStoreFile,
  encodeStoreFile,
  fileStore,
  memoryStore,
  mergeGrants,
  openStore,
  storeKindOf,
} from '../../src/gateway/index.js'
import { hashDefinition } from '../../src/extend.js'
import { cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'
import { until as waitUntil } from '../support/until.js'

cleanUpAfterEach()

// a check that throws is not done yet: the store writes by renaming a temporary file, so a directory listing can
// show that file before the rename, and the grants file is read a moment later
const holds = (done: () => boolean): boolean => {
  try {
    return done()
  } catch {
    return false
  }
}

const until = (done: () => boolean, ms?: number): Promise<void> => waitUntil(() => holds(done), ms)

const grantsIn = (file: string): ReadonlyArray<Rule> => {
  const d = decodeStoreFile(readFileSync(file, 'utf8'))
  if (d._tag === 'Left') throw new Error(d.left)
  return d.right.grants
}

const key = (r: Rule): string => JSON.stringify([r.tool, r.decision, r.under ?? null, r.note ?? null])
const asSet = (rs: ReadonlyArray<Rule>): ReadonlySet<string> => new Set(rs.map(key))

const WRITE: Rule = { tool: 'fs_write_file', decision: 'allow', under: '/srv/p' }
const MOVE: Rule = { tool: 'fs_move_file', decision: 'deny' }

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

describe('decodeStoreFile and encodeStoreFile', () => {
  it('round-trips, as indented JSON with a version a person can read', () => {
    const text = encodeStoreFile([WRITE, MOVE])
    expect(text).toBe(
      '{\n  "version": 1,\n  "grants": [\n    {\n      "tool": "fs_write_file",\n      "decision": "allow",\n' +
        '      "under": "/srv/p"\n    },\n    {\n      "tool": "fs_move_file",\n      "decision": "deny"\n    }\n  ]\n}\n',
    )
    // a file with no pins nor changes decodes to a StoreFile without those members (not members set to undefined)
    expect(decodeStoreFile(text)).toStrictEqual({
      _tag: 'Right',
      right: { version: 1, grants: [WRITE, MOVE], revoked: [] },
    })
    const taken = encodeStoreFile([WRITE], [MOVE])
    expect(JSON.parse(taken)).toEqual({ version: 1, grants: [WRITE], revoked: [MOVE] })
    expect(decodeStoreFile(taken)).toEqual({ _tag: 'Right', right: { version: 1, grants: [WRITE], revoked: [MOVE] } })
  })

  it('refuses what is not a store file, naming the problem', () => {
    const problem = (text: string): string => {
      const d = decodeStoreFile(text)
      return d._tag === 'Left' ? d.left : 'read'
    }
    expect(problem('')).toMatch(/^it is not JSON .*truncated/)
    expect(problem(encodeStoreFile([WRITE]).slice(0, 30))).toMatch(/^it is not JSON/)
    expect(problem('[]')).toMatch(/^it must be an object/)
    expect(problem('{"version":2,"grants":[]}')).toBe('its version must be 1, got number 2')
    expect(problem('{"version":1,"grants":[],"x":1}')).toBe('it has unknown members "x"')
    expect(problem('{"version":1,"grants":[{"tool":"x","decision":"alow"}]}')).toMatch(/^grants\[0\]\.decision must be/)
  })
})

// -------------------------------------------------------------------------------------
// fileStore
// -------------------------------------------------------------------------------------

describe('fileStore', () => {
  it('starts with no grants when the file does not exist, and writes it at the first grant: whole, with no temporary or lock file left', async () => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const store = await fileStore(file)
    expect(store.grants()).toEqual([])
    expect(readdirSync(dir)).toEqual([])
    store.addGrant(WRITE)
    // in the grants at once, before any write
    expect(store.grants()).toEqual([WRITE])
    store.addGrant(WRITE)
    store.addGrant(MOVE)
    await store.close()
    expect(readdirSync(dir)).toEqual(['grants.json'])
    expect(grantsIn(file)).toEqual([WRITE, MOVE])
  })

  it('reads the grants a file holds: they survive a restart', async () => {
    const file = join(tempDir(), 'grants.json')
    const one = await fileStore(file)
    one.addGrant(WRITE)
    await one.close()
    const two = await fileStore(file)
    expect(two.grants()).toEqual([WRITE])
    await two.close()
  })

  it.each([
    ['a truncated file', encodeStoreFile([WRITE, MOVE]).slice(0, 40)],
    ['an empty file', ''],
    ['a corrupt file', '{"version":1,"grants":[{"tool":"*_x","decision":"allow"}]}'],
    ['another version', '{"version":9,"grants":[]}'],
  ])('refuses %s at start, naming its path, and leaves it as it is', async (_what, text) => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    writeFileSync(file, text)
    await expect(fileStore(file)).rejects.toThrow(`the store ${JSON.stringify(file)} cannot be read: `)
    await expect(openStore(`file:${file}`)).rejects.toThrow('It is left as it is')
    expect(readFileSync(file, 'utf8')).toBe(text)
    expect(readdirSync(dir)).toEqual(['grants.json'])
  })

  it('refuses a file in a directory that does not exist', async () => {
    const file = join(tempDir(), 'no', 'grants.json')
    await expect(fileStore(file)).rejects.toThrow(`the store ${JSON.stringify(file)} cannot be written`)
  })

  it("two stores on one file: each learns the other's grants (onGrantsChanged), and the file holds both", async () => {
    const file = join(tempDir(), 'grants.json')
    const a = await fileStore(file)
    const b = await fileStore(file)
    let heard = 0
    b.onGrantsChanged(() => void heard++)
    a.addGrant(WRITE)
    await until(() => b.grants().length === 1)
    expect(heard).toBe(1)
    b.addGrant(MOVE)
    await until(() => a.grants().length === 2)
    await Promise.all([a.close(), b.close()])
    expect(asSet(grantsIn(file))).toEqual(asSet([WRITE, MOVE]))
    expect(asSet(a.grants())).toEqual(asSet(b.grants()))
  })

  it('a grant taken back leaves every store on the file (each told), stays out of the file though another held it, and comes back when answered again', async () => {
    const file = join(tempDir(), 'grants.json')
    const a = await fileStore(file)
    const b = await fileStore(file)
    a.addGrant(WRITE)
    a.addGrant(MOVE)
    await until(() => b.grants().length === 2)
    let heard = 0
    b.onGrantsChanged(() => void heard++)
    a.revokeGrant(WRITE)
    expect(a.grants()).toEqual([MOVE])
    await until(() => b.grants().length === 1)
    expect(b.grants()).toEqual([MOVE])
    expect(heard).toBe(1)
    // B held WRITE when it was taken back: a write of B's own does not bring it back
    b.addGrant({ tool: 'b_only', decision: 'allow' })
    await until(() => a.grants().length === 2)
    expect(asSet(grantsIn(file))).toEqual(asSet([MOVE, { tool: 'b_only', decision: 'allow' }]))
    expect((JSON.parse(readFileSync(file, 'utf8')) as { revoked: unknown }).revoked).toEqual([WRITE])
    // answered "always" again, it is a grant again, everywhere
    b.addGrant(WRITE)
    await until(() => a.grants().length === 3)
    await Promise.all([a.close(), b.close()])
    expect(asSet(grantsIn(file))).toEqual(asSet([MOVE, WRITE, { tool: 'b_only', decision: 'allow' }]))
    expect((JSON.parse(readFileSync(file, 'utf8')) as { revoked?: unknown }).revoked).toBeUndefined()
    // and a restart reads what was taken back as gone
    const c = await fileStore(file)
    c.revokeGrant(MOVE)
    await c.close()
    const d = await fileStore(file)
    expect(asSet(d.grants())).toEqual(asSet([WRITE, { tool: 'b_only', decision: 'allow' }]))
    await d.close()
  })

  it('whatever grants two stores add and take back, in whatever order, each ends holding what the file holds: what was added and not taken back since', async () => {
    const ops = fc.array(
      fc.record({ by: fc.constantFrom(0, 1), revoke: fc.boolean(), tool: fc.constantFrom('a', 'b', 'c') }),
      {
        maxLength: 8,
      },
    )
    await fc.assert(
      fc.asyncProperty(ops, async (steps) => {
        const file = join(tempDir(), 'grants.json')
        const stores = [await fileStore(file), await fileStore(file)]
        // the oracle: the last thing done to each tool, by either store, in this order
        const last = new Map<string, boolean>()
        for (const step of steps) {
          const rule: Rule = { tool: step.tool, decision: 'allow' }
          const store = stores[step.by] as GatewayStore
          // each step waits for the other store to follow, as a person acting through one gateway at a time would
          if (step.revoke) store.revokeGrant(rule)
          else store.addGrant(rule)
          last.set(step.tool, !step.revoke)
          const want = [...last]
            .filter(([, held]) => held)
            .map(([tool]) => tool)
            .sort()
          await until(() =>
            stores.every(
              (s) =>
                JSON.stringify(
                  s
                    .grants()
                    .map((g) => g.tool)
                    .sort(),
                ) === JSON.stringify(want),
            ),
          )
        }
        await Promise.all(stores.map((s) => s.close()))
        const want = [...last]
          .filter(([, held]) => held)
          .map(([tool]) => tool)
          .sort()
        // a run that granted nothing writes no file
        const held = existsSync(file) ? grantsIn(file) : []
        expect(held.map((g) => g.tool).sort()).toEqual(want)
      }),
      { numRuns: 8 },
    )
  }, 60_000)

  it('a file rewritten without a grant this store holds (a lost update) gets the grant back', async () => {
    const file = join(tempDir(), 'grants.json')
    const a = await fileStore(file)
    const held = (n: number) => () => {
      try {
        return grantsIn(file).length === n
      } catch {
        return false // not written yet
      }
    }
    a.addGrant(WRITE)
    await until(held(1))
    // another writer's rename replaced the file with what it had read before A's write
    const other = `${file}.other`
    writeFileSync(other, encodeStoreFile([MOVE]))
    renameSync(other, file)
    await until(held(2))
    expect(asSet(grantsIn(file))).toEqual(asSet([WRITE, MOVE]))
    expect(asSet(a.grants())).toEqual(asSet([WRITE, MOVE]))
    await a.close()
  })

  it('a file made unreadable while running is never overwritten: one notice, the grant kept, written once the file is mended', async () => {
    const file = join(tempDir(), 'grants.json')
    const notices: Array<string> = []
    const store = await fileStore(file, { onNotice: (m) => void notices.push(m) })
    store.addGrant(WRITE)
    await until(() => readdirSync(join(file, '..')).join() === 'grants.json' && grantsIn(file).length === 1)
    writeFileSync(file, '{"version":1,"gr')
    await until(() => notices.length === 1)
    store.addGrant(MOVE)
    // a pin is answered once the write that holds it (and MOVE, queued before it) was tried
    const pin = { name: 'fs_read', description: 'Reads a file.' }
    expect(
      await store.pins.pin([{ tool: pin.name, hash: hashDefinition(pin).hash, at: '2026-12-06T00:00:00.000Z' }]),
    ).toEqual([true])
    expect(readFileSync(file, 'utf8')).toBe('{"version":1,"gr')
    expect(store.grants()).toEqual([WRITE, MOVE])
    expect(notices[0]).toContain(`the store ${JSON.stringify(file)}: it cannot be read`)
    writeFileSync(file, encodeStoreFile([WRITE]))
    await until(() => notices.length === 2, 8000)
    await store.close()
    expect(notices[1]).toContain('is read and written again')
    expect(grantsIn(file)).toEqual([WRITE, MOVE])
  })

  it('whatever grants two stores add, in whatever order, the file ends holding their union', async () => {
    const dir = tempDir()
    const rule = fc.record({
      tool: fc.constantFrom('a', 'b', 'fs_*'),
      decision: fc.constantFrom('allow' as const, 'deny' as const),
    })
    let run = 0
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.boolean(), rule, fc.nat(3)), { maxLength: 8 }), async (steps) => {
        const file = join(dir, `grants-${run++}.json`)
        const stores: ReadonlyArray<GatewayStore> = [await fileStore(file), await fileStore(file)]
        for (const [second, r, pause] of steps) {
          stores[second ? 1 : 0]?.addGrant(r)
          if (pause > 0) await new Promise((done) => setTimeout(done, pause))
        }
        await Promise.all(stores.map((s) => s.close()))
        const union = asSet(steps.map(([, r]) => r))
        expect(union.size === 0 ? new Set() : asSet(grantsIn(file))).toEqual(union)
      }),
      { numRuns: 25 },
    )
    // no temporary or lock file is left
    expect(readdirSync(dir).every((f) => /^grants-\d+\.json$/.test(f))).toBe(true)
  })
})

// -------------------------------------------------------------------------------------
// memoryStore
// -------------------------------------------------------------------------------------

describe('memoryStore', () => {
  it('shares grants, claims each pair once, sums counts, sorted by tool then key', async () => {
    const store = memoryStore()
    store.addGrant(WRITE)
    store.addGrant(WRITE)
    expect(store.grants()).toEqual([WRITE])
    expect(await store.claim('t', 'k')).toBe(true)
    expect(await store.claim('t', 'k')).toBe(false)
    expect(await store.claim('t', 'j')).toBe(true)
    store.addCounts([
      { tool: 't', key: 'k', calls: 2 },
      { tool: 's', key: 'z', calls: 1 },
      { tool: 't', key: 'k', calls: 1 },
      { tool: 't', key: 'j', calls: 0 },
      { tool: 't', key: 'j', calls: -4 },
    ])
    expect(await store.stats()).toEqual([
      { tool: 's', key: 'z', calls: 1 },
      { tool: 't', key: 'k', calls: 3 },
    ])
  })

  it('takes a grant back: gone from grants at once, the same list when it held none', async () => {
    const store = memoryStore()
    store.addGrant(WRITE)
    store.addGrant(MOVE)
    const before = store.grants()
    store.revokeGrant({ tool: 'other', decision: 'allow' })
    expect(store.grants()).toBe(before)
    store.revokeGrant({ ...MOVE })
    expect(store.grants()).toEqual([WRITE])
    await store.close()
  })

  it('remembers at most maxPairs pairs: a new pair past it is said each time and not counted; a long key costs a digest', async () => {
    const store = memoryStore({ maxPairs: 1 })
    expect(await store.claim('t', 'k')).toBe(true)
    expect(await store.claim('t', 'other')).toBe(true)
    expect(await store.claim('t', 'other')).toBe(true)
    store.addCounts([{ tool: 't', key: 'other', calls: 5 }])
    expect(await store.stats()).toEqual([])
    const long = memoryStore()
    long.addCounts([{ tool: 't', key: 'x'.repeat(10_000), calls: 1 }])
    expect((await long.stats())[0]?.key.length).toBeLessThan(120)
    expect(() => memoryStore({ maxPairs: 0 })).toThrow('memoryStore: maxPairs must be a whole number of at least 1')
  })

  it('an error about a store URL never shows the password it carries', async () => {
    for (const url of [
      'redis:/user:s3cret@host:6379',
      'valkey://:s3cret@host',
      'rediss://u:s3cret@[::1',
      'redis://u:s3cret@h?pairs=0',
    ]) {
      const refused = await openStore(url).then(
        () => 'opened',
        (e: unknown) => String(e),
      )
      expect(refused).toMatch(/TypeError/)
      expect(refused).not.toContain('s3cret')
    }
  })

  it('mergeGrants adds what is missing, in order, and returns the same list when nothing is', () => {
    const held = [WRITE]
    expect(mergeGrants(held, [WRITE])).toBe(held)
    expect(mergeGrants(held, [MOVE, WRITE, MOVE])).toEqual([WRITE, MOVE])
  })
})

// -------------------------------------------------------------------------------------
// openStore
// -------------------------------------------------------------------------------------

describe('openStore', () => {
  it('opens memory and file: stores, and names what a URL must be', async () => {
    const memory = await openStore('memory')
    memory.addGrant(MOVE)
    expect(memory.grants()).toEqual([MOVE])
    const file = join(tempDir(), 'g.json')
    const onFile = await openStore(`file:${file}`)
    onFile.addGrant(MOVE)
    await onFile.close()
    expect(grantsIn(file)).toEqual([MOVE])
    await expect(openStore('postgres://db')).rejects.toThrow(
      'openStore: the URL must be a store: "memory", "file:PATH", or "redis://HOST:PORT"',
    )
    // the redis:// arm loads redisStore, which checks the URL before it connects
    await expect(openStore('redis://127.0.0.1:6379?pairs=0')).rejects.toThrow("the store URL's pairs must be")
    expect(storeKindOf('rediss://h:1')).toEqual({ _tag: 'Right', right: 'redis' })
    expect(storeKindOf('file:')._tag).toBe('Left')
  })
})
