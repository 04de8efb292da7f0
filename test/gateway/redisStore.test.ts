// The redis:// store against a real redis-server: two stores sharing one Redis, as two replicas do, and
// what each does when Redis dies and comes back.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createClient } from 'redis'
import type { GatewayStore } from '../../src/gateway/stores/store.js'
import { CLAIM_WAIT_MS, redisStore } from '../../src/gateway/stores/redisStore.js'
import { MAX_DEFINITION_CHARS, hashDefinition } from '../../src/steps/pins/Definition.js'
import type { RedisServer } from '../support/redis.js'
import { startRedis } from '../support/redis.js'
import { isAlive } from '../support/processes.js'
import { blocksOf } from '../support/blocks.js'
import { until } from '../support/until.js'
import { pinOf } from '../support/pins.js'

let redis: RedisServer
let run = 0
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  const pid = redis.pid()
  await redis.stop()
  if (pid !== undefined) expect(isAlive(pid)).toBe(false)
})

const opened: Array<GatewayStore> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()))
})

interface Opened {
  readonly store: GatewayStore
  readonly notices: Array<string>
}

/** A store on the test's Redis, under a prefix of this test's own unless `prefix` is given. */
const open = async (prefix = `t${run}:`, url = redis.url): Promise<Opened> => {
  const notices: Array<string> = []
  const store = await redisStore(`${url}?prefix=${prefix}`, { onNotice: (m) => notices.push(m) })
  opened.push(store)
  return { store, notices }
}

const pair = async (): Promise<readonly [Opened, Opened]> => {
  run++
  return [await open(), await open()]
}

const rawClient = () => createClient({ url: redis.url })

/** `f` run with a client of the test's own, to read what the stores wrote. */
const raw = async <A>(f: (c: ReturnType<typeof rawClient>) => Promise<A>): Promise<A> => {
  const c = rawClient()
  await c.connect()
  try {
    return await f(c)
  } finally {
    await c.close()
  }
}

describe('redisStore: two stores on one Redis', () => {
  it('a grant added through A is in B’s grants without B asking, and B’s listeners are told', async () => {
    const [a, b] = await pair()
    let told = 0
    b.store.onGrantsChanged(() => told++)
    a.store.addGrant({ tool: 'fs_write_file', decision: 'allow', under: '/srv' })
    expect(a.store.grants()).toEqual([{ tool: 'fs_write_file', decision: 'allow', under: '/srv' }])
    await until(() => b.store.grants().length === 1)
    expect(b.store.grants()).toEqual([{ tool: 'fs_write_file', decision: 'allow', under: '/srv' }])
    expect(told).toBe(1)
    // the same grant again changes nothing anywhere: the same list
    const held = a.store.grants()
    a.store.addGrant({ under: '/srv', decision: 'allow', tool: 'fs_write_file' })
    expect(a.store.grants()).toBe(held)
    await new Promise((r) => setTimeout(r, 100))
    expect(b.store.grants()).toHaveLength(1)
    expect(told).toBe(1)
  })

  it('a grant taken back through A leaves B at once (B’s listeners told), and Redis; one answered again comes back', async () => {
    const [a, b] = await pair()
    a.store.addGrant({ tool: 'w', decision: 'allow' })
    a.store.addGrant({ tool: 'm', decision: 'deny' })
    await until(() => b.store.grants().length === 2)
    let heard = 0
    b.store.onGrantsChanged(() => void heard++)
    a.store.revokeGrant({ tool: 'w', decision: 'allow' })
    expect(a.store.grants()).toEqual([{ tool: 'm', decision: 'deny' }])
    await until(() => b.store.grants().length === 1)
    expect(b.store.grants()).toEqual([{ tool: 'm', decision: 'deny' }])
    expect(heard).toBe(1)
    expect(await raw((c) => c.sMembers(`t${run}:grants`))).toEqual(['{"tool":"m","decision":"deny"}'])
    b.store.addGrant({ tool: 'w', decision: 'allow' })
    await until(() => a.store.grants().length === 2)
    // one not held taken back: nothing is announced, and no one is told
    a.store.revokeGrant({ tool: 'never', decision: 'allow' })
    a.store.addGrant({ tool: 'last', decision: 'allow' })
    await until(() => b.store.grants().length === 3)
    expect(heard).toBe(2)
  })

  it('a store started later reads the grants already there', async () => {
    const [a] = await pair()
    a.store.addGrant({ tool: 'ev_*', decision: 'allow' })
    await until(async () => (await raw((c) => c.sCard(`t${run}:grants`))) === 1)
    const c = await open()
    expect(c.store.grants()).toEqual([{ tool: 'ev_*', decision: 'allow' }])
  })

  it('what Redis holds that is not a rule is skipped', async () => {
    run++
    await raw((c) => c.sAdd(`t${run}:grants`, ['not json', '{"tool":"x","decision":"alow"}', 'x'.repeat(10_000)]))
    const a = await open()
    expect(a.store.grants()).toEqual([])
  })

  it('a pair claimed by A is not claimed by B, nor by A again', async () => {
    const [a, b] = await pair()
    expect(await a.store.claim('fs_read', 'ffset')).toBe(true)
    expect(await b.store.claim('fs_read', 'ffset')).toBe(false)
    expect(await a.store.claim('fs_read', 'ffset')).toBe(false)
    expect(await b.store.claim('fs_read', 'offset')).toBe(true)
  })

  // A claim Redis has not answered within CLAIM_WAIT_MS is answered from memory (won: a warning is never held
  // up), so on a busy machine two stores can both win a pair. The promise: never lost, and won exactly once when
  // every claim of the pair was answered within CLAIM_WAIT_MS, as this test saw it (it sees each take at least as
  // long as the store did).
  it('whatever the interleaving of claims from two stores, each pair is won once, or more only after a slow answer', async () => {
    const [a, b] = await pair()
    const stores = [a.store, b.store]
    let round = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ by: fc.integer({ min: 0, max: 1 }), pair: fc.integer({ min: 0, max: 3 }), wait: fc.boolean() }),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        async (claims) => {
          round++
          const asked: Array<Promise<readonly [number, boolean, number]>> = []
          for (const c of claims) {
            const t0 = performance.now()
            asked.push(
              (stores[c.by] as GatewayStore)
                .claim(`tool${round}`, `key${c.pair}`)
                .then((won) => [c.pair, won, performance.now() - t0]),
            )
            if (c.wait) await new Promise((r) => setImmediate(r))
          }
          const wins = new Map<number, number>()
          const slow = new Set<number>()
          for (const [p, won, ms] of await Promise.all(asked)) {
            wins.set(p, (wins.get(p) ?? 0) + (won ? 1 : 0))
            if (ms >= CLAIM_WAIT_MS) slow.add(p)
          }
          for (const c of claims)
            if (slow.has(c.pair)) expect(wins.get(c.pair)).toBeGreaterThanOrEqual(1)
            else expect(wins.get(c.pair)).toBe(1)
        },
      ),
      { numRuns: 60 },
    )
  })

  it('stats are summed over both stores', async () => {
    const [a, b] = await pair()
    a.store.addCounts([{ tool: 'fs_read', key: 'ffset', calls: 2 }])
    b.store.addCounts([
      { tool: 'fs_read', key: 'ffset', calls: 3 },
      { tool: 'fs_list', key: 'deep', calls: 1 },
    ])
    const sum = [
      { tool: 'fs_list', key: 'deep', calls: 1 },
      { tool: 'fs_read', key: 'ffset', calls: 5 },
    ]
    // each writes its own before it reads: once both have, both read the same sum
    await Promise.all([a.store.stats(), b.store.stats()])
    expect(await a.store.stats()).toEqual(sum)
    expect(await b.store.stats()).toEqual(sum)
  })

  it('close writes what is pending', async () => {
    const [a] = await pair()
    a.store.addCounts([{ tool: 't', key: 'k', calls: 7 }])
    await a.store.close()
    const c = await open()
    expect(await c.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 7 }])
  })

  it('stores under different prefixes share nothing', async () => {
    run++
    const a = await open(`left${run}:`)
    const b = await open(`right${run}:`)
    expect(await a.store.claim('t', 'k')).toBe(true)
    expect(await b.store.claim('t', 'k')).toBe(true)
  })
})

describe('docs/fleet.md', () => {
  it('the store URL shown is accepted, and the redis-cli lines read and forget what the store wrote', async () => {
    const [replicas = ''] = blocksOf('docs/fleet.md', 'sh')
    const cli = blocksOf('docs/fleet.md', 'sh').find((b) => /^redis-cli /m.test(b)) ?? ''
    const shown = new URL(/--store '([^']+)'/.exec(replicas)?.[1] ?? '')
    // the page's URL, its host and port this test's Redis
    const notices: Array<string> = []
    const a = await redisStore(`${redis.url}${shown.pathname}${shown.search}`, { onNotice: (m) => notices.push(m) })
    opened.push(a)
    expect(notices).toEqual([])
    a.addGrant({ tool: 'fs_write_file', decision: 'allow' })
    a.addCounts([{ tool: 'fs_read', key: 'ffset', calls: 2 }])
    await a.stats()
    const lines = [...cli.matchAll(/^redis-cli (.+)$/gm)].map((m) => (m[1] ?? '').split(' '))
    const answers = await raw(async (c) => {
      const out: Array<unknown> = []
      for (const args of lines) out.push(await c.sendCommand(args))
      return out
    })
    expect(answers).toEqual([['{"tool":"fs_write_file","decision":"allow"}'], { '["fs_read","ffset"]': '2' }, 1])
  })
})

describe('redisStore: what a model chooses is bounded in Redis', () => {
  it('a long tool name or key is remembered as its start and a digest', async () => {
    const [a, b] = await pair()
    const long = 'k'.repeat(100_000)
    expect(await a.store.claim('t'.repeat(50_000), long)).toBe(true)
    expect(await b.store.claim('t'.repeat(50_000), long)).toBe(false)
    // another long key with the same start is another pair
    expect(await b.store.claim('t'.repeat(50_000), long + 'x')).toBe(true)
    a.store.addCounts([{ tool: 'x', key: long, calls: 1 }])
    const fields = await raw(async (c) => [
      ...(await c.hKeys(`t${run}:said`)),
      ...(await a.store.stats().then(() => c.hKeys(`t${run}:counts`))),
    ])
    expect(fields).toHaveLength(3)
    for (const f of fields) expect(f.length).toBeLessThan(400)
  })

  it('Redis holds at most `pairs` pairs; past it a new pair is still said', async () => {
    run++
    const a = await open(`t${run}:&pairs=3`)
    const won = await Promise.all([1, 2, 3, 4, 5].map((i) => a.store.claim('t', `k${i}`)))
    expect(won).toEqual([true, true, true, true, true])
    a.store.addCounts([1, 2, 3, 4, 5].map((i) => ({ tool: 't', key: `k${i}`, calls: 1 })))
    expect(await a.store.stats()).toHaveLength(3)
    expect(await raw((c) => c.hLen(`t${run}:said`))).toBe(3)
    expect(await raw((c) => c.hLen(`t${run}:counts`))).toBe(3)
  })

  it('takes pairs of two digits or more', async () => {
    run++
    const a = await open(`t${run}:&pairs=10`)
    for (let i = 0; i < 12; i++) expect(await a.store.claim('t', `k${i}`)).toBe(true)
    expect(await raw((c) => c.hLen(`t${run}:said`))).toBe(10)
  })

  it('a notice shows the URL without its credentials or parameters', async () => {
    const notices: Array<string> = []
    const s = await redisStore('redis://me:pa55word@127.0.0.1:1/0?prefix=x:', { onNotice: (m) => notices.push(m) })
    await s.close()
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatch(/^the store redis:\/\/127\.0\.0\.1:1\/0 cannot be reached \(.*ECONNREFUSED/)
    expect(notices[0]).not.toMatch(/pa55word|me:|prefix/)
  })

  it('refuses each malformed URL with a TypeError that quotes what is wrong', async () => {
    const refused = async (url: string): Promise<unknown> =>
      redisStore(url, {}).then(
        () => undefined,
        (e: unknown) => e,
      )
    const cases: ReadonlyArray<readonly [string, string]> = [
      ['not a url', 'the store URL "not a url" is not a URL'],
      [
        'http://u:secret@127.0.0.1:1',
        'the store URL must start with redis:// or rediss://, got "http://***@127.0.0.1:1"',
      ],
      [`${redis.url}?prefix=a b`, 'the store URL\'s prefix must be 1 to 64 of A-Z a-z 0-9 : _ . -, got "a b"'],
      [
        `${redis.url}?prefix=${'p'.repeat(65)}`,
        `the store URL's prefix must be 1 to 64 of A-Z a-z 0-9 : _ . -, got "${'p'.repeat(65)}"`,
      ],
      [`${redis.url}?prefix=`, 'the store URL\'s prefix must be 1 to 64 of A-Z a-z 0-9 : _ . -, got ""'],
    ]
    for (const [url, message] of cases) {
      const e = await refused(url)
      expect(e, url).toBeInstanceOf(TypeError)
      expect((e as Error).message, url).toBe(message)
    }
    for (const pairs of ['0', '-1', '1.5', '1e3', '+3', ' 3', '3 ', '0x10', '', '9007199254740993']) {
      const e = await refused(`${redis.url}?pairs=${encodeURIComponent(pairs)}`)
      expect(e, pairs).toBeInstanceOf(TypeError)
      expect((e as Error).message, pairs).toBe(
        `the store URL's pairs must be a whole number of at least 1, got ${JSON.stringify(pairs)}`,
      )
    }
    // a long URL is quoted cut
    const long = (await refused(`http://${'h'.repeat(1_000)}`)) as Error
    expect(long.message.length).toBeLessThan(300)
  })

  it('takes a prefix of 64 characters, pairs of 1, and rediss://', async () => {
    run++
    const prefix = `t${run}:`.padEnd(64, 'p')
    const a = await redisStore(`${redis.url}?prefix=${prefix}&pairs=1`, {})
    opened.push(a)
    expect(await a.claim('t', 'k1')).toBe(true)
    expect(await a.claim('t', 'k2')).toBe(true)
    await a.stats()
    expect(await raw((c) => c.hLen(`${prefix}said`))).toBe(1)
    const notices: Array<string> = []
    const tls = await redisStore('rediss://127.0.0.1:1', { onNotice: (m) => notices.push(m) })
    await tls.close()
    expect(notices[0]).toMatch(/^the store rediss:\/\/127\.0\.0\.1:1 cannot be reached/)
  })

  it('a malformed URL is refused at once, naming what is wrong', async () => {
    await expect(redisStore('http://127.0.0.1:1', {})).rejects.toThrow(/redis:\/\/ or rediss:\/\//)
    await expect(redisStore(`${redis.url}?prefix=a b`, {})).rejects.toThrow(/prefix/)
    await expect(redisStore(`${redis.url}?pairs=0`, {})).rejects.toThrow(/pairs/)
  })
})

describe('redisStore: Redis dies and comes back', () => {
  it('both keep answering from memory, say so once each, and share again when Redis is back', async () => {
    const rejections: Array<unknown> = []
    const onRejection = (e: unknown): void => void rejections.push(e)
    process.on('unhandledRejection', onRejection)
    try {
      const [a, b] = await pair()
      a.store.addGrant({ tool: 'before', decision: 'allow' })
      await until(() => b.store.grants().length === 1)
      expect(await a.store.claim('t', 'said-before')).toBe(true)

      await redis.kill()
      await until(() => a.notices.length === 1 && b.notices.length === 1)
      expect(a.notices[0]).toMatch(/^the store redis:\/\/127\.0\.0\.1:\d+ cannot be reached/)

      // every answer comes from memory, at once
      const t0 = Date.now()
      expect(await b.store.claim('t', 'said-before')).toBe(true)
      expect(await a.store.claim('t', 'said-before')).toBe(false)
      expect(await a.store.claim('t', 'during')).toBe(true)
      expect(await a.store.claim('t', 'during')).toBe(false)
      expect(Date.now() - t0).toBeLessThan(500)
      b.store.addGrant({ tool: 'during', decision: 'allow' })
      expect(a.store.grants()).toEqual([{ tool: 'before', decision: 'allow' }])
      expect(b.store.grants()).toHaveLength(2)
      a.store.addCounts([{ tool: 't', key: 'during', calls: 4 }])
      expect(await a.store.stats()).toEqual([{ tool: 't', key: 'during', calls: 4 }])
      // the clients try again meanwhile: still one notice each
      await new Promise((r) => setTimeout(r, 1_500))
      expect([a.notices.length, b.notices.length]).toEqual([1, 1])

      await redis.restart()
      await until(() => a.notices.length === 2 && b.notices.length === 2)
      expect(a.notices[1]).toMatch(/answers again/)
      // what each kept is written: B's grant reaches A, A's claim holds for B, A's counts are summed
      await until(() => a.store.grants().length === 2)
      expect(a.store.grants()).toEqual([
        { tool: 'before', decision: 'allow' },
        { tool: 'during', decision: 'allow' },
      ])
      expect(await b.store.claim('t', 'during')).toBe(false)
      b.store.addCounts([{ tool: 't', key: 'during', calls: 1 }])
      expect(await b.store.stats()).toEqual([{ tool: 't', key: 'during', calls: 5 }])
      // and a grant added now is shared at once, as before
      a.store.addGrant({ tool: 'after', decision: 'allow' })
      await until(() => b.store.grants().length === 3)
      expect([a.notices.length, b.notices.length]).toEqual([2, 2])
    } finally {
      process.off('unhandledRejection', onRejection)
    }
    expect(rejections).toEqual([])
  })

  it('Redis back empty (no persistence): each replica writes back every grant it holds, not only those of the outage; one taken back meanwhile stays gone', async () => {
    const [a, b] = await pair()
    a.store.addGrant({ tool: 'old', decision: 'allow' })
    a.store.addGrant({ tool: 'gone', decision: 'allow' })
    await until(() => b.store.grants().length === 2)
    b.store.revokeGrant({ tool: 'gone', decision: 'allow' })
    await until(() => a.store.grants().length === 1)
    await redis.kill()
    await until(() => a.notices.length === 1 && b.notices.length === 1)
    b.store.addGrant({ tool: 'during', decision: 'allow' })
    await redis.restart()
    await until(() => a.notices.length === 2 && b.notices.length === 2)
    const want = ['{"tool":"during","decision":"allow"}', '{"tool":"old","decision":"allow"}']
    await until(
      async () => JSON.stringify((await raw((c) => c.sMembers(`t${run}:grants`))).sort()) === JSON.stringify(want),
    )
    // a replica started now reads them all
    const c = await open()
    expect(
      c.store
        .grants()
        .map((g) => g.tool)
        .sort(),
    ).toEqual(['during', 'old'])
    await until(() => a.store.grants().length === 2)
  })

  it('Redis back with what it held (a dropped connection): what it holds is read, and a grant taken out meanwhile is not written back', async () => {
    run++
    const a = await open()
    a.store.addGrant({ tool: 'kept', decision: 'allow' })
    a.store.addGrant({ tool: 'taken', decision: 'allow' })
    await until(async () => (await raw((c) => c.sMembers(`t${run}:grants`))).length === 2)
    let told = 0
    a.store.onGrantsChanged(() => void told++)
    // while A is cut off (every connection of its own), the grant is taken out of Redis, with no word to A
    await raw(async (c) => {
      await c.sRem(`t${run}:grants`, '{"tool":"taken","decision":"allow"}')
      const mine = (await c.clientList()).filter((x) => !x.cmd.startsWith('client'))
      for (const x of mine) await c.clientKill({ filter: 'ID', id: x.id }).catch(() => undefined)
    })
    await until(() => a.notices.length === 2)
    expect(a.notices[1]).toMatch(/answers again/)
    await until(() => a.store.grants().length === 1)
    expect(a.store.grants()).toEqual([{ tool: 'kept', decision: 'allow' }])
    expect(told).toBeGreaterThan(0)
    expect(await raw((c) => c.sMembers(`t${run}:grants`))).toEqual(['{"tool":"kept","decision":"allow"}'])
  })

  it('Redis hung (stopped, its connections open): a claim answers from memory within its wait, a slow write is said once', async () => {
    const [a] = await pair()
    a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
    expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 1 }])
    // the count is in Redis: the store has answered from Redis (a store still starting on a busy machine
    // answers from memory, and would say nothing when Redis hangs)
    await until(async () => Object.values(await raw((c) => c.hGetAll(`t${run}:counts`))).join() === '1')
    const pid = redis.pid() as number
    process.kill(pid, 'SIGSTOP')
    try {
      const t0 = Date.now()
      expect(await a.store.claim('t', 'hung')).toBe(true)
      expect(Date.now() - t0).toBeLessThan(300)
      a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
      // the write waits a second, then the store answers its own counts and says so
      expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 2 }])
      expect(a.notices).toHaveLength(1)
      expect(a.notices[0]).toMatch(/ cannot be reached \(no answer within 1000 ms\); serving from this process/)
      expect(await a.store.claim('t', 'hung2')).toBe(true)
      expect(a.notices).toHaveLength(1)
      // said down, it does not wait on Redis again: what it counts now is answered at once
      a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
      const t1 = Date.now()
      expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 3 }])
      expect(Date.now() - t1).toBeLessThan(300)
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    await until(() => a.notices.length === 2)
    expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 3 }])
  })

  it('pins, a change and an acceptance recorded while Redis is down are written when it answers, announced once, and not written again', async () => {
    run++
    const a = await open()
    const first = pinOf({ name: 'fs_write', description: 'Writes a file.' })
    const second = pinOf({ name: 'fs_write', description: 'Writes a file, and mails it.' })
    const read = pinOf({ name: 'fs_read', description: 'Reads a file.' })
    const list = pinOf({ name: 'fs_list', description: 'Lists a directory.' })
    const listed = pinOf({ name: 'fs_list', description: 'Lists a directory, and its size.' })
    const early = pinOf({ name: 'fs_list', description: 'Lists a directory, early.' })
    expect(await a.store.pins.pin([first, list])).toEqual([true, true])
    expect(await a.store.pins.change(early)).toBe(true)
    await redis.kill()
    await until(() => a.notices.length === 1)
    // said by this process, as no one else can be asked
    expect(await a.store.pins.pin([read])).toEqual([true])
    expect(await a.store.pins.change(second)).toBe(true)
    expect(await a.store.pins.change(listed)).toBe(true)
    expect((await a.store.pins.accept('fs_write', second.hash))._tag).toBe('Right')
    await redis.restart()
    await until(() => a.notices.length === 2)
    // Redis came back empty: every pin and change this process holds is written back (the pin made before the
    // outage too), with what was recorded while it was down, the acceptance over the change
    expect(await raw((c) => c.hGetAll(`t${run}:pins`))).toEqual({
      fs_list: JSON.stringify(list),
      fs_read: JSON.stringify(read),
      fs_write: JSON.stringify(second),
    })
    expect(await raw((c) => c.hGetAll(`t${run}:changes`))).toEqual({
      [JSON.stringify(['fs_list', early.hash])]: JSON.stringify(early),
      [JSON.stringify(['fs_list', listed.hash])]: JSON.stringify(listed),
    })
    const heard: Array<string> = []
    const listener = rawClient()
    await listener.connect()
    try {
      await listener.subscribe(`t${run}:pins:changed`, (_, channel) => void heard.push(channel))
      a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
      await a.store.stats()
      await new Promise((r) => setTimeout(r, 100))
    } finally {
      await listener.close()
    }
    expect(heard).toEqual([])
    // a replica started now holds the pins: the tool pinned before the outage is not pinned again with another
    // definition, which is a change
    const b = await open()
    expect(await b.store.pins.pin([listed])).toEqual([false])
    expect(b.store.pins.book().pins.get('fs_list')).toEqual(list)
  })

  it('Redis back empty: a replica that read it before another wrote its pins back hears them (pins:changed)', async () => {
    run++
    const a = await open()
    const list = pinOf({ name: 'fs_list', description: 'Lists a directory.' })
    expect(await a.store.pins.pin([list])).toEqual([true])
    await redis.kill()
    await until(() => a.notices.length === 1)
    await redis.restart()
    // started at once, it reads the empty Redis, most likely before A reconnects (A's write-back then reaches it
    // only by the announcement; read after, it finds the pin in Redis, and the test holds either way)
    const b = await open()
    await until(() => a.notices.length === 2)
    await until(() => b.store.pins.book().pins.get('fs_list')?.hash === list.hash)
  })

  it('a store started while Redis is down serves from memory, says so once, and catches up', async () => {
    run++
    await redis.kill()
    const t0 = Date.now()
    const c = await open()
    // refused: it does not wait for Redis
    expect(Date.now() - t0).toBeLessThan(1_000)
    expect(c.notices).toHaveLength(1)
    c.store.addGrant({ tool: 'kept', decision: 'allow' })
    expect(await c.store.claim('t', 'k')).toBe(true)
    await redis.restart()
    await until(() => c.notices.length === 2)
    expect(await raw((r) => r.sMembers(`t${run}:grants`))).toEqual(['{"tool":"kept","decision":"allow"}'])
    const d = await open()
    expect(await d.store.claim('t', 'k')).toBe(false)
  })
})

// What another program (or a person with redis-cli) wrote under the store's keys: read as documented, never trusted.
describe('redisStore: what Redis holds is checked as it is read', () => {
  it('a count whose field is not a [tool, key] pair, or whose value is not a whole number of at least 1, is skipped', async () => {
    run++
    const field = (tool: string, key: string): string => JSON.stringify([tool, key])
    await raw((c) =>
      c.hSet(`t${run}:counts`, {
        [field('b', 'k')]: '3',
        [field('a', 'k')]: '1',
        // not a pair
        'not json': '5',
        null: '5',
        '"xy"': '5',
        '["x"]': '5',
        '["x","y","z"]': '5',
        '[1,"y"]': '5',
        '["x",1]': '5',
        '{"0":"x","1":"y","length":2}': '5',
        // not a count
        [field('c', 'nan')]: 'abc',
        [field('c', 'zero')]: '0',
        [field('c', 'negative')]: '-2',
        [field('c', 'fraction')]: '1.5',
        [field('c', 'unsafe')]: '9007199254740993',
      }),
    )
    const a = await open()
    expect(await a.store.stats()).toEqual([
      { tool: 'a', key: 'k', calls: 1 },
      { tool: 'b', key: 'k', calls: 3 },
    ])
  })

  it('a grant of up to 4,096 characters is read, a longer one skipped', async () => {
    run++
    const edge = '{"tool":"edge","decision":"allow"}'.padEnd(4_096, ' ')
    const over = '{"tool":"over","decision":"allow"}'.padEnd(4_097, ' ')
    await raw((c) => c.sAdd(`t${run}:grants`, [edge, over]))
    const a = await open()
    expect(a.store.grants()).toEqual([{ tool: 'edge', decision: 'allow' }])
  })

  it('at most 10,000 grants are held: past them, one more is neither held nor written', async () => {
    run++
    const texts = Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ tool: `t${i}`, decision: 'allow' }))
    await raw((c) => c.sAdd(`t${run}:grants`, texts))
    const a = await open()
    expect(a.store.grants()).toHaveLength(10_000)
    a.store.addGrant({ tool: 'one_more', decision: 'allow' })
    expect(a.store.grants()).toHaveLength(10_000)
    await a.store.stats()
    expect(await raw((c) => c.sIsMember(`t${run}:grants`, '{"tool":"one_more","decision":"allow"}'))).toBe(0)
  })

  it('at most 10,000 of the members Redis holds are read: of 20,000, half not rules, fewer than 10,000 grants are held', async () => {
    run++
    const rules = Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ tool: `t${i}`, decision: 'allow' }))
    const junk = Array.from({ length: 10_000 }, (_, i) => `junk ${i}`)
    await raw((c) => c.sAdd(`t${run}:grants`, [...rules, ...junk]))
    const a = await open()
    // Redis answers its members in an order of its own, the junk among the rules
    expect(a.store.grants().length).toBeGreaterThan(0)
    expect(a.store.grants().length).toBeLessThan(10_000)
  })

  it('at most 10,000 pins and 2,000 changes are read: of twice as many fields, half not pins, fewer are held', async () => {
    run++
    const pins = Array.from({ length: 10_000 }, (_, i) => pinOf({ name: `p${i}`, description: `Does ${i}.` }))
    const changes = Array.from({ length: 2_000 }, (_, i) => pinOf({ name: `c${i}`, description: `Does ${i}.` }))
    const junk = (n: number): Record<string, string> =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`junk ${i}`, 'not a pin']))
    await raw(async (c) => {
      await c.hSet(`t${run}:pins`, {
        ...Object.fromEntries(pins.map((p) => [p.tool, JSON.stringify(p)])),
        ...junk(10_000),
      })
      await c.hSet(`t${run}:changes`, {
        ...Object.fromEntries(changes.map((p) => [JSON.stringify([p.tool, p.hash]), JSON.stringify(p)])),
        ...junk(2_000),
      })
    })
    const a = await open()
    const book = a.store.pins.book()
    expect(book.pins.size).toBeGreaterThan(0)
    expect(book.pins.size).toBeLessThan(10_000)
    expect(book.changes.size).toBeGreaterThan(0)
    expect(book.changes.size).toBeLessThan(2_000)
  })

  // room for a pin's tool, hash and time beside its definition's canonical text
  const MAX_PIN_CHARS = MAX_DEFINITION_CHARS + 4_096

  it('a pin or change of up to its bound as text is read, under its own field only; a longer one is skipped', async () => {
    run++
    const edge = pinOf({ name: 'edge', description: 'At the bound.' })
    const over = pinOf({ name: 'over', description: 'Past the bound.' })
    const elsewhere = pinOf({ name: 'elsewhere', description: 'Filed under another tool.' })
    const changed = pinOf({ name: 'edge', description: 'Changed, at the bound.' })
    const changedOver = pinOf({ name: 'over', description: 'Changed, past the bound.' })
    const misfiled = pinOf({ name: 'edge', description: 'Changed, filed under another hash.' })
    await raw(async (c) => {
      await c.hSet(`t${run}:pins`, {
        edge: JSON.stringify(edge).padEnd(MAX_PIN_CHARS, ' '),
        over: JSON.stringify(over).padEnd(MAX_PIN_CHARS + 1, ' '),
        other: JSON.stringify(elsewhere),
      })
      await c.hSet(`t${run}:changes`, {
        [JSON.stringify(['edge', changed.hash])]: JSON.stringify(changed).padEnd(MAX_PIN_CHARS, ' '),
        [JSON.stringify(['over', changedOver.hash])]: JSON.stringify(changedOver).padEnd(MAX_PIN_CHARS + 1, ' '),
        [JSON.stringify(['edge', edge.hash])]: JSON.stringify(misfiled),
      })
    })
    const a = await open()
    expect([...a.store.pins.book().pins]).toEqual([['edge', edge]])
    expect([...a.store.pins.book().changes]).toEqual([['edge', [changed]]])
  })

  it('a change is filed under [tool, hash], so two changes of one tool are both kept', async () => {
    const [a, b] = await pair()
    const first = pinOf({ name: 'fs_write', description: 'Writes a file.' })
    const second = pinOf({ name: 'fs_write', description: 'Writes a file, and mails it.' })
    const third = pinOf({ name: 'fs_write', description: 'Writes a file, and posts it.' })
    expect(await a.store.pins.pin([first])).toEqual([true])
    expect(await a.store.pins.change(second)).toBe(true)
    expect(await a.store.pins.change(third)).toBe(true)
    expect((await raw((c) => c.hKeys(`t${run}:changes`))).sort()).toEqual(
      [JSON.stringify(['fs_write', second.hash]), JSON.stringify(['fs_write', third.hash])].sort(),
    )
    await until(() => (b.store.pins.book().changes.get('fs_write') ?? []).length === 2)
  })
})

describe('redisStore: how it writes', () => {
  it('pending counts are written at most 1,000 pairs per script call', async () => {
    const [a] = await pair()
    const monitor = rawClient()
    await monitor.connect()
    const evals: Array<string> = []
    try {
      await monitor.monitor((line) => {
        if (line.includes('"EVAL"') && line.includes('chunked')) evals.push(line)
      })
      a.store.addCounts(Array.from({ length: 1_001 }, (_, i) => ({ tool: 'chunked', key: `k${i}`, calls: 1 })))
      expect(await a.store.stats()).toHaveLength(1_001)
      await until(() => evals.length >= 2)
    } finally {
      await monitor.close()
    }
    // each pair's field names the tool once
    expect(evals.map((l) => l.split('chunked').length - 1)).toEqual([1_000, 1])
  })

  it('a Redis that refuses a write (a key of another type, written by another program) is said once; the store answers from memory, writes what it kept once Redis takes it, and says a second outage again', async () => {
    run++
    const a = await open()
    await raw((c) => c.set(`t${run}:counts`, 'not a hash'))
    a.store.addCounts([{ tool: 't', key: 'k', calls: 2 }])
    await until(() => a.notices.length === 1)
    expect(a.notices[0]).toMatch(/ cannot be reached \(.*WRONGTYPE.*\); serving from this process/)
    expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 2 }])
    // it asks again meanwhile, and says nothing more
    await new Promise((r) => setTimeout(r, 1_200))
    expect(a.notices).toHaveLength(1)
    await raw((c) => c.del(`t${run}:counts`))
    await until(() => a.notices.length === 2)
    expect(a.notices[1]).toMatch(/answers again/)
    expect(await raw((c) => c.hGetAll(`t${run}:counts`))).toEqual({ '["t","k"]': '2' })
    // a second outage is said again, and so is its end
    await raw((c) => c.set(`t${run}:counts`, 'not a hash'))
    a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
    await until(() => a.notices.length === 3)
    expect(a.notices[2]).toMatch(/ cannot be reached \(.*WRONGTYPE/)
    await raw((c) => c.del(`t${run}:counts`))
    await until(() => a.notices.length === 4)
    expect(a.notices[3]).toMatch(/answers again/)
  })

  it('a read of the counts that fails is said, and stats answer this process’s own', async () => {
    run++
    const a = await open()
    await raw((c) => c.set(`t${run}:counts`, 'not a hash'))
    expect(await a.store.stats()).toEqual([])
    expect(a.notices).toHaveLength(1)
    expect(a.notices[0]).toMatch(/ cannot be reached \(.*WRONGTYPE/)
  })

  it('a count that is not a whole number of at least 1 is not added', async () => {
    const [a] = await pair()
    a.store.addCounts([
      { tool: 't', key: 'zero', calls: 0 },
      { tool: 't', key: 'negative', calls: -1 },
      { tool: 't', key: 'fraction', calls: 1.5 },
      { tool: 't', key: 'nan', calls: Number.NaN },
      { tool: 't', key: 'unsafe', calls: 2 ** 53 },
      { tool: 't', key: 'one', calls: 1 },
    ])
    expect(await a.store.stats()).toEqual([{ tool: 't', key: 'one', calls: 1 }])
    expect(a.notices).toEqual([])
    expect(await raw((c) => c.hGetAll(`t${run}:counts`))).toEqual({ '["t","one"]': '1' })
  })

  it('while Redis cannot be reached, this process counts at most `pairs` pairs (adding to those it has)', async () => {
    const notices: Array<string> = []
    const a = await redisStore('redis://127.0.0.1:1?pairs=2', { onNotice: (m) => notices.push(m) })
    opened.push(a)
    a.addCounts([
      { tool: 't', key: 'k1', calls: 1 },
      { tool: 't', key: 'k2', calls: 2 },
      { tool: 't', key: 'k3', calls: 3 },
      { tool: 't', key: 'k1', calls: 4 },
    ])
    expect(await a.stats()).toEqual([
      { tool: 't', key: 'k1', calls: 5 },
      { tool: 't', key: 'k2', calls: 2 },
    ])
    expect(notices).toHaveLength(1)
  })

  it('pin listeners are told of an acceptance, one that throws costing the others nothing, and not once unsubscribed', async () => {
    const [a] = await pair()
    const first = pinOf({ name: 'fs_write', description: 'Writes a file.' })
    const second = pinOf({ name: 'fs_write', description: 'Writes a file, and mails it.' })
    await a.store.pins.pin([first])
    await a.store.pins.change(second)
    let told = 0
    let gone = 0
    a.store.pins.onPinsChanged(() => {
      throw new Error('a listener that throws')
    })
    a.store.pins.onPinsChanged(() => void told++)
    a.store.pins.onPinsChanged(() => void gone++)()
    expect((await a.store.pins.accept('fs_write', second.hash))._tag).toBe('Right')
    expect([told, gone]).toEqual([1, 0])
    // the pin it is already: nothing changes, no one is told
    expect((await a.store.pins.accept('fs_write', second.hash))._tag).toBe('Right')
    expect(told).toBe(1)
    expect(await raw((c) => c.hGet(`t${run}:pins`, 'fs_write'))).toBe(JSON.stringify(second))
    expect(await raw((c) => c.hLen(`t${run}:changes`))).toBe(0)
  })
})

describe('redisStore: the keys and channels the module documents', () => {
  it('keys under its prefix (counts, epoch, pins), announces on grants:added, grants:removed and pins:changed (counts alone on none), and hears a grant another program announces', async () => {
    run++
    const a = await open()
    const heard: Array<readonly [string, string]> = []
    const listener = rawClient()
    await listener.connect()
    try {
      await listener.pSubscribe(`t${run}:*`, (message, channel) => void heard.push([channel, message]))
      // counts alone announce nothing
      a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
      await a.store.stats()
      // each announced once: the writes after (a batch of counts) announce nothing again
      const flushed = async (i: number): Promise<void> => {
        a.store.addCounts([{ tool: 't', key: `k${i}`, calls: 1 }])
        await a.store.stats()
      }
      a.store.addGrant({ tool: 'w', decision: 'allow' })
      await until(() => heard.length === 1)
      await flushed(1)
      a.store.revokeGrant({ tool: 'w', decision: 'allow' })
      await until(() => heard.length === 2)
      await flushed(2)
      const definition = { name: 'fs_read', description: 'Reads a file.' }
      const pin = { tool: 'fs_read', hash: hashDefinition(definition).hash, at: '2026-12-05T00:00:00.000Z', definition }
      expect(await a.store.pins.pin([pin])).toEqual([true])
      await until(() => heard.length === 3)
      await flushed(3)
      await new Promise((r) => setTimeout(r, 100))
      expect(heard).toEqual([
        [`t${run}:grants:added`, '{"tool":"w","decision":"allow"}'],
        [`t${run}:grants:removed`, '{"tool":"w","decision":"allow"}'],
        [`t${run}:pins:changed`, ''],
      ])
    } finally {
      await listener.close()
    }
    expect((await raw((c) => c.keys(`t${run}:*`))).sort()).toEqual([`t${run}:counts`, `t${run}:epoch`, `t${run}:pins`])
    expect(await raw((c) => c.get(`t${run}:epoch`))).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    )
    // another program adds a grant and announces it, then takes it back
    let told = 0
    a.store.onGrantsChanged(() => told++)
    const text = '{"tool":"x","decision":"deny"}'
    // what is not a rule is passed by, and what follows it heard (announced here before it is in the set, so only
    // the message can tell it)
    await raw(async (c) => {
      await c.publish(`t${run}:grants:added`, 'not a rule')
      await c.publish(`t${run}:grants:added`, text)
    })
    await until(() => told === 1)
    expect(a.store.grants()).toEqual([{ tool: 'x', decision: 'deny' }])
    await raw((c) => c.sAdd(`t${run}:grants`, text))
    await raw(async (c) => {
      await c.sRem(`t${run}:grants`, text)
      await c.publish(`t${run}:grants:removed`, text)
    })
    await until(() => told === 2)
    expect(a.store.grants()).toEqual([])
  })
})

// The store's own life: one write at a time, the batch timer, the listeners it hands back, and its close.
describe('redisStore: its writes, its listeners and its close', () => {
  it('a grant added while a write runs is written after it, each announced once; a stats waits for both; one not held taken back is not announced', async () => {
    run++
    const a = await open()
    const heard: Array<string> = []
    const listener = rawClient()
    await listener.connect()
    try {
      await listener.pSubscribe(
        `t${run}:grants:*`,
        (m, channel) => void heard.push(`${channel.slice(`t${run}:`.length)} ${m}`),
      )
      // the first starts a write; the second is asked for while it runs
      a.store.addGrant({ tool: 'one', decision: 'allow' })
      a.store.addGrant({ tool: 'two', decision: 'allow' })
      await a.store.stats()
      expect((await raw((c) => c.sMembers(`t${run}:grants`))).sort()).toEqual([
        '{"tool":"one","decision":"allow"}',
        '{"tool":"two","decision":"allow"}',
      ])
      a.store.revokeGrant({ tool: 'never', decision: 'allow' })
      await a.store.stats()
      // published after the store's writes, so heard after them
      await raw((c) => c.publish(`t${run}:grants:removed`, 'end'))
      await until(() => heard.length === 3)
    } finally {
      await listener.close()
    }
    expect(heard).toEqual([
      'grants:added {"tool":"one","decision":"allow"}',
      'grants:added {"tool":"two","decision":"allow"}',
      'grants:removed end',
    ])
  })

  it('counts are written by the batch timer, without a stats, batch after batch', async () => {
    run++
    const a = await open()
    const written = (): Promise<string | null> => raw((c) => c.hGet(`t${run}:counts`, '["t","k"]'))
    a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
    await until(async () => (await written()) === '1')
    a.store.addCounts([{ tool: 't', key: 'k', calls: 2 }])
    await until(async () => (await written()) === '3')
    expect(a.notices).toEqual([])
  })

  it('a grant listener unsubscribed is not told; the others are', async () => {
    const [a, b] = await pair()
    let told = 0
    let gone = 0
    b.store.onGrantsChanged(() => void told++)
    b.store.onGrantsChanged(() => void gone++)()
    a.store.addGrant({ tool: 'w', decision: 'allow' })
    await until(() => told === 1)
    expect(gone).toBe(0)
  })

  it('a claim Redis is answering when the store closes gets Redis’s answer', async () => {
    const [a, b] = await pair()
    expect(await b.store.claim('t', 'k')).toBe(true)
    const asked = a.store.claim('t', 'k')
    await a.store.close()
    // claimed by B first: Redis answers that, and the close waits for it
    expect(await asked).toBe(false)
  })

  it('a closed store lets its connections and its pin listeners go, says nothing more, and a second close does nothing', async () => {
    run++
    const a = await open()
    const first = pinOf({ name: 'fs_write', description: 'Writes a file.' })
    const second = pinOf({ name: 'fs_write', description: 'Writes a file, and mails it.' })
    await a.store.pins.pin([first])
    await a.store.pins.change(second)
    let told = 0
    a.store.pins.onPinsChanged(() => void told++)
    a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
    await a.store.close()
    expect(await raw((c) => c.hGetAll(`t${run}:counts`))).toEqual({ '["t","k"]': '1' })
    // no connection is left but the one reading the list
    await until(async () => (await raw((c) => c.clientList())).length === 1)
    // its clients are closed: what it is asked now is answered from memory, unsaid, and no listener is told
    a.store.addCounts([{ tool: 't', key: 'k', calls: 2 }])
    expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 3 }])
    expect((await a.store.pins.accept('fs_write', second.hash))._tag).toBe('Right')
    expect(told).toBe(0)
    await a.store.close()
    expect(a.notices).toEqual([])
  })

  it('a Redis that does not answer at start is said after the start’s wait; the store serves from memory and says when it answers', async () => {
    run++
    const pid = redis.pid() as number
    process.kill(pid, 'SIGSTOP')
    let c: Opened | undefined
    try {
      c = await open()
      expect(c.notices).toHaveLength(1)
      expect(c.notices[0]).toMatch(/ cannot be reached \(no answer within 2000 ms\); serving from this process/)
      expect(await c.store.claim('t', 'k')).toBe(true)
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    const d = c
    await until(() => d.notices.length === 2)
    expect(d.notices[1]).toMatch(/answers again/)
    expect(await raw((r) => r.hKeys(`t${run}:said`))).toEqual(['["t","k"]'])
  })

  // A Redis that refuses this store's writes (a key of another type) while its connections stay up: the store is
  // down as far as it knows, and its subscriber still hears what others announce.
  it('while it cannot write, stats answer this process’s own counts, not what Redis holds', async () => {
    const [a, b] = await pair()
    b.store.addCounts([{ tool: 't', key: 'other', calls: 5 }])
    await b.store.stats()
    await raw((c) => c.set(`t${run}:said`, 'not a hash'))
    // a claim that fails is answered from memory; the write of it that fails is the outage
    expect(await a.store.claim('t', 'k')).toBe(true)
    a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
    await until(() => a.notices.length === 1)
    expect(await a.store.stats()).toEqual([{ tool: 't', key: 'k', calls: 1 }])
    await raw((c) => c.del(`t${run}:said`))
    await until(() => a.notices.length === 2)
    expect(await a.store.stats()).toEqual([
      { tool: 't', key: 'k', calls: 1 },
      { tool: 't', key: 'other', calls: 5 },
    ])
  })

  it('while it cannot write, a grant it took back stays taken back though announced again, and one it added stays though announced removed', async () => {
    run++
    const a = await open()
    const g = '{"tool":"g","decision":"allow"}'
    const h = '{"tool":"h","decision":"allow"}'
    a.store.addGrant({ tool: 'g', decision: 'allow' })
    await until(async () => (await raw((c) => c.sMembers(`t${run}:grants`))).length === 1)
    await raw(async (c) => {
      await c.del(`t${run}:grants`)
      await c.set(`t${run}:grants`, 'not a set')
    })
    a.store.revokeGrant({ tool: 'g', decision: 'allow' })
    await until(() => a.notices.length === 1)
    a.store.addGrant({ tool: 'h', decision: 'allow' })
    let told = 0
    a.store.onGrantsChanged(() => void told++)
    // another replica announces g again and takes h back; then a grant of its own, heard after both
    await raw(async (c) => {
      await c.publish(`t${run}:grants:added`, g)
      await c.publish(`t${run}:grants:removed`, h)
      await c.publish(`t${run}:grants:added`, '{"tool":"s","decision":"allow"}')
    })
    await until(() => told === 1)
    expect(a.store.grants()).toEqual([
      { tool: 'h', decision: 'allow' },
      { tool: 's', decision: 'allow' },
    ])
    // Redis takes writes again: what it holds is what this process kept (s was announced, never written)
    await raw((c) => c.del(`t${run}:grants`))
    await until(() => a.notices.length === 2)
    expect(await raw((c) => c.sMembers(`t${run}:grants`))).toEqual([h])
    expect(a.store.grants()).toEqual([{ tool: 'h', decision: 'allow' }])
  })

  it('while it cannot write, a claim and a pin are answered from memory though Redis holds them, and the counts it keeps are bounded as Redis bounds them', async () => {
    run++
    const a = await open(`t${run}:&pairs=2`)
    const pin = pinOf({ name: 'fs_read', description: 'Reads a file.' })
    await raw((c) => c.set(`t${run}:counts`, 'not a hash'))
    a.store.addCounts([{ tool: 't', key: 'k1', calls: 1 }])
    await until(() => a.notices.length === 1)
    // another replica's claim and pin, whose announcement this one did not hear
    await raw(async (c) => {
      await c.hSet(`t${run}:said`, '["t","k1"]', '1')
      await c.hSet(`t${run}:pins`, 'fs_read', JSON.stringify(pin))
    })
    // said by this process: Redis is not asked while this process cannot write to it
    expect(await a.store.claim('t', 'k1')).toBe(true)
    expect(await a.store.pins.pin([pin])).toEqual([true])
    // and once only
    expect(await a.store.pins.pin([pin])).toEqual([false])
    // two pairs kept: a third is dropped, the first added to
    a.store.addCounts([
      { tool: 't', key: 'k2', calls: 2 },
      { tool: 't', key: 'k3', calls: 3 },
      { tool: 't', key: 'k1', calls: 4 },
    ])
    await raw((c) => c.del(`t${run}:counts`))
    await until(() => a.notices.length === 2)
    expect(await raw((c) => c.hGetAll(`t${run}:counts`))).toEqual({ '["t","k1"]': '5', '["t","k2"]': '2' })
    expect(await raw((c) => c.hKeys(`t${run}:said`))).toEqual(['["t","k1"]'])
  })

  it('a pin whose write Redis refuses is said by this process, the outage said, and written once Redis takes it', async () => {
    run++
    const a = await open()
    await raw((c) => c.set(`t${run}:pins`, 'not a hash'))
    const pin = pinOf({ name: 'fs_read', description: 'Reads a file.' })
    expect(await a.store.pins.pin([pin])).toEqual([true])
    expect(a.notices).toHaveLength(1)
    expect(a.notices[0]).toMatch(/ cannot be reached \(.*WRONGTYPE/)
    await raw((c) => c.del(`t${run}:pins`))
    await until(() => a.notices.length === 2)
    expect(await raw((c) => c.hGetAll(`t${run}:pins`))).toEqual({ fs_read: JSON.stringify(pin) })
  })

  it('Redis emptied and its writes paused: a subscriber back before the grants are written back reads nothing, and they are written back', async () => {
    run++
    const a = await open()
    const kept = '{"tool":"kept","decision":"allow"}'
    a.store.addGrant({ tool: 'kept', decision: 'allow' })
    await until(async () => (await raw((c) => c.sCard(`t${run}:grants`))) === 1)
    // emptied, the store's client cut off, and writes held for a while: its probe reads, then waits on its write
    await raw((c) =>
      c
        .multi()
        .addCommand(['FLUSHDB'])
        .addCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'])
        .addCommand(['CLIENT', 'PAUSE', '600', 'WRITE'])
        .exec(),
    )
    await until(() => a.notices.length === 1)
    // the client back and its probe held: now the subscriber is cut off, and comes back while the probe waits
    await until(async () => /cmd=set /.test(String(await raw((c) => c.sendCommand(['CLIENT', 'LIST'])))))
    await raw((c) => c.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub']))
    await until(() => a.notices.length === 2)
    expect(await raw((c) => c.sMembers(`t${run}:grants`))).toEqual([kept])
    expect(a.store.grants()).toEqual([{ tool: 'kept', decision: 'allow' }])
  })

  it('a store whose Redis cannot be reached closes without waiting for it', async () => {
    const s = await redisStore('redis://127.0.0.1:1', {})
    const t0 = Date.now()
    await s.close()
    // a close waits up to a second for a client that is connected; this one is not
    expect(Date.now() - t0).toBeLessThan(900)
  })

  it('a read after a dropped connection that finds what this process holds tells no listener', async () => {
    run++
    const a = await open()
    a.store.addGrant({ tool: 'kept', decision: 'allow' })
    await until(async () => (await raw((c) => c.sCard(`t${run}:grants`))) === 1)
    let told = 0
    a.store.onGrantsChanged(() => void told++)
    await raw(async (c) => {
      const mine = (await c.clientList()).filter((x) => !x.cmd.startsWith('client'))
      for (const x of mine) await c.clientKill({ filter: 'ID', id: x.id }).catch(() => undefined)
    })
    // said once the grants are read again
    await until(() => a.notices.length === 2)
    expect(told).toBe(0)
    expect(a.store.grants()).toEqual([{ tool: 'kept', decision: 'allow' }])
  })

  it('pins, changes and acceptances it wrote back after an outage are announced, so a replica that had none reads them', async () => {
    const [a, b] = await pair()
    const x = pinOf({ name: 'x', description: 'Does x.' })
    const x2 = pinOf({ name: 'x', description: 'Does x, and more.' })
    const y = pinOf({ name: 'y', description: 'Does y.' })
    expect(await a.store.pins.pin([x])).toEqual([true])
    await until(() => b.store.pins.book().pins.has('x'))
    // A alone cannot write its counts: it is down, and its probe writes the rest of what it keeps
    await raw((c) => c.set(`t${run}:counts`, 'not a hash'))
    a.store.addCounts([{ tool: 't', key: 'k', calls: 1 }])
    await until(() => a.notices.length === 1)
    // a pin and a change together
    expect(await a.store.pins.pin([y])).toEqual([true])
    expect(await a.store.pins.change(x2)).toBe(true)
    await until(() => b.store.pins.book().pins.has('y') && b.store.pins.book().changes.has('x'))
    // an acceptance alone
    expect((await a.store.pins.accept('x', x2.hash))._tag).toBe('Right')
    await until(() => b.store.pins.book().pins.get('x')?.hash === x2.hash)
    expect(b.store.pins.book().changes.has('x')).toBe(false)
    expect(b.notices).toEqual([])
  })

  it('a replica cut off alone keeps the mark of the Redis it wrote to: another, cut off after it, writes back no grant Redis dropped', async () => {
    run++
    // the connections of the store opened last: those no earlier one holds, but the one listing them
    const connections = async (): Promise<ReadonlyArray<number>> =>
      (await raw((c) => c.clientList())).filter((x) => !x.cmd.startsWith('client')).map((x) => x.id)
    const cutOff = (ids: ReadonlyArray<number>): Promise<void> =>
      raw(async (c) => {
        for (const id of ids) await c.clientKill({ filter: 'ID', id })
      })
    const a = await open()
    const ofA = await connections()
    const b = await open()
    const ofB = (await connections()).filter((id) => !ofA.includes(id))
    a.store.addGrant({ tool: 'g', decision: 'allow' })
    await until(() => b.store.grants().length === 1)
    await cutOff(ofA)
    await until(() => a.notices.length === 2)
    // taken out of Redis with no word to anyone
    await raw((c) => c.sRem(`t${run}:grants`, '{"tool":"g","decision":"allow"}'))
    await cutOff(ofB)
    await until(() => b.notices.length === 2)
    expect(await raw((c) => c.sMembers(`t${run}:grants`))).toEqual([])
    expect(b.store.grants()).toEqual([])
  })

  it('a store whose first probe fails writes what it was given when Redis answers, announced once: no Redis it wrote to was emptied', async () => {
    run++
    // a mark of another type: the first probe's read of it fails
    await raw((c) => c.hSet(`t${run}:epoch`, 'not', 'a mark'))
    const a = await open()
    expect(a.notices).toHaveLength(1)
    a.store.addGrant({ tool: 'kept', decision: 'allow' })
    const heard: Array<string> = []
    const listener = rawClient()
    await listener.connect()
    try {
      await listener.subscribe(`t${run}:grants:added`, (m) => void heard.push(m))
      await raw((c) => c.del(`t${run}:epoch`))
      await until(() => a.notices.length === 2)
      await raw((c) => c.publish(`t${run}:grants:added`, 'end'))
      await until(() => heard.includes('end'))
    } finally {
      await listener.close()
    }
    expect(heard).toEqual(['{"tool":"kept","decision":"allow"}', 'end'])
  })

  it('a grant announced while only its subscriber’s connection was gone is read when the subscriber is back', async () => {
    run++
    const a = await open()
    let told = 0
    a.store.onGrantsChanged(() => void told++)
    const text = '{"tool":"missed","decision":"allow"}'
    await raw(async (c) => {
      // the subscriber is the connection subscribed to the store's three channels
      const list = String(await c.sendCommand(['CLIENT', 'LIST']))
      const id = /^id=(\d+) .* sub=3 /m.exec(list)?.[1] ?? ''
      // in one transaction: the subscriber is gone before the grant is announced
      await c
        .multi()
        .addCommand(['CLIENT', 'KILL', 'ID', id])
        .sAdd(`t${run}:grants`, text)
        .publish(`t${run}:grants:added`, text)
        .exec()
    })
    await until(() => told === 1)
    expect(a.store.grants()).toEqual([{ tool: 'missed', decision: 'allow' }])
    // its other connection stayed: nothing was said
    expect(a.notices).toEqual([])
  })
})
