/**
 * The `redis://` store: grants, said pairs and counts shared by every gateway replica through one Redis (or
 * valkey). The only module that imports `redis`; the gateway loads it with a dynamic import, and only for a
 * `redis://` or `rediss://` URL, so nothing else pays for the client.
 *
 * Redis is never on a call's path. Grants are a local cache, read at start, followed through pub/sub and
 * written after; a claim waits for Redis at most {@link CLAIM_WAIT_MS} and then answers from this process's
 * memory; counts are batched and added off the call. When Redis is down, or slow (a write or read unanswered
 * for a second), the store answers from memory, says so once, reconnects in the background and, when Redis
 * answers again, writes what it kept (grants, claims, counts), reads the grants again, and says so once.
 *
 * In Redis, under the prefix (`toolstack:` unless the URL's `prefix` parameter says otherwise):
 * `grants` (a set of rules as JSON, announced on the channel `grants:added`, and on `grants:removed` when taken
 * back), `said` (a hash whose fields are the claimed pairs), `counts` (a hash of calls per pair), `epoch` (a
 * random mark: a Redis that comes back without it lost its data, and each replica writes back every grant, pin
 * and change it holds), `pins` (a hash of each tool's pinned definition as JSON, by tool) and `changes` (a hash of
 * the changed definitions awaiting acceptance, by `[tool, hash]`), both announced on the channel `pins:changed`. A
 * pair's field is `JSON.stringify([tool, key])`, each bounded as the seen-set bounds a key, and each hash holds at
 * most `pairs` fields (the URL's `pairs` parameter, the seen-set's capacity by default).
 *
 * One file: over 500 lines because the store is one connection's life (its outage, the reconnection and the
 * write-back of what it kept) over the three kinds of record, each step reading the same refs.
 *
 * @since 0.1.0
 */
import { randomUUID } from 'node:crypto'
import { createClient } from 'redis'
import type { IO } from 'fp-ts/lib/IO.js'
import { right } from 'fp-ts/lib/Either.js'
import { getRight, toUndefined } from 'fp-ts/lib/Option.js'
import type { Rule } from '../../steps/policy/Rule.js'
import { decodeRule } from '../../steps/policy/Rule.js'
import type { Pin } from '../../steps/pins/Definition.js'
import { MAX_DEFINITION_CHARS, decodePin } from '../../steps/pins/Definition.js'
import type { PinBook, PinMemory } from '../../steps/pins/Book.js'
import {
  MAX_CHANGES,
  MAX_PINS,
  acceptChange,
  bookOf,
  emptyBook,
  mergeBook,
  pinFirst,
  recordChange,
  sameBook,
  setPin,
} from '../../steps/pins/Book.js'
import type { SeenSet } from '../../steps/audit/SeenSet.js'
import { DEFAULT_CAPACITY, emptySeenSetOf, firstSeen, hasSeen } from '../../steps/audit/SeenSet.js'
import { cut, describeError, escapeControls } from '../../kernel/describe.js'
import type { GatewayStore, PairCount, StoreOptions } from './store.js'
import { byToolThenKey, grantText, pairField, shownStoreUrl } from './store.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The key prefix when the URL names none.
 *
 * @since 0.1.0
 * @category model
 */
export const DEFAULT_REDIS_PREFIX = 'toolstack:'

/**
 * How long a claim waits for Redis before it answers from this process's memory: long enough for a healthy
 * Redis on the same network (well under a millisecond), short enough that a warning is never held up.
 *
 * @since 0.1.0
 * @category model
 */
export const CLAIM_WAIT_MS = 50

// counts are batched this long: one round trip per batch, not per call
const FLUSH_MS = 100
// how long start waits for Redis before serving from memory, and how long close waits to write what is pending
const START_WAIT_MS = 2_000
const CLOSE_WAIT_MS = 1_000
// a read or write off the call's path (the grants, a batch of counts, stats) waits this long
const COMMAND_WAIT_MS = 1_000
// while Redis is unreachable, how often it is asked again
const PROBE_MS = 500
// grants are a human's answers, so few; what Redis holds may be written by anything, so bound it
const MAX_GRANTS = 10_000
const MAX_GRANT_CHARS = 4_096
// a pin as JSON: its definition at most MAX_DEFINITION_CHARS in canonical form, with room for its tool, hash and time
const MAX_PIN_CHARS = MAX_DEFINITION_CHARS + 4_096
// pairs per script call when pending counts or claims are written
const CHUNK = 1_000

const PREFIX = /^[A-Za-z0-9:_.-]{1,64}$/

// -------------------------------------------------------------------------------------
// scripts
// -------------------------------------------------------------------------------------

// Claims each field (ARGV[2..]) in the hash KEYS[1] unless it is there: 1 claimed now, 0 claimed before, 2 the
// hash is full (then the caller says it, as the seen-set says a pair it can no longer remember).
const CLAIM = `local cap = tonumber(ARGV[1]) local out = {}
for i = 2, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then out[#out + 1] = 0
  elseif redis.call('HLEN', KEYS[1]) >= cap then out[#out + 1] = 2
  else redis.call('HSET', KEYS[1], ARGV[i], '1') out[#out + 1] = 1 end
end
return out`

// Adds each delta (ARGV[2i+1]) to its field (ARGV[2i]) of the hash KEYS[1], unless the field is new and the
// hash is full.
const ADD = `local cap = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 or redis.call('HLEN', KEYS[1]) < cap then
    redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return 0`

// Sets the field ARGV[2] of the hash KEYS[1] to ARGV[3] unless it is there: 1 set now, 0 there before, 2 the hash
// holds ARGV[1] fields already (then the caller says it, and it is not kept)
const PUT_ONCE = `if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then return 0
elseif redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 2
else redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) return 1 end`

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

interface Where {
  /** The URL as shown in a notice: no credentials, no query. */
  readonly shown: string
  readonly prefix: string
  readonly pairs: number
}

// the URL's `pairs`: plain digits, a safe integer of at least 1
const pairsOf = (text: string): number => {
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1)
    throw new TypeError(
      `the store URL's pairs must be a whole number of at least 1, got ${JSON.stringify(cut(text, 40))}`,
    )
  return n
}

// A URL from a configuration file or a flag: checked once, with a message that names what is wrong. The client
// is handed the caller's URL as it is: it reads only its scheme, credentials, host, port and database, not its query.
const whereOf = (url: string): Where => {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new TypeError(`the store URL ${JSON.stringify(cut(shownStoreUrl(url), 200))} is not a URL`)
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new TypeError(
      `the store URL must start with redis:// or rediss://, got ${JSON.stringify(cut(shownStoreUrl(url), 200))}`,
    )
  const prefix = u.searchParams.get('prefix') ?? DEFAULT_REDIS_PREFIX
  if (!PREFIX.test(prefix))
    throw new TypeError(
      `the store URL's prefix must be 1 to 64 of A-Z a-z 0-9 : _ . -, got ${JSON.stringify(cut(prefix, 80))}`,
    )
  const pairsText = u.searchParams.get('pairs')
  const pairs = pairsText === null ? DEFAULT_CAPACITY : pairsOf(pairsText)
  u.username = ''
  u.password = ''
  u.search = ''
  return { shown: u.toString(), prefix, pairs }
}

// what anyone with access wrote to Redis, read as JSON; `undefined` for what is not JSON (no JSON text parses to it)
const jsonOf = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

// a pair's field in Redis is its pairField (store.ts); read back, it is the pair or nothing
const pairOf = (field: string): readonly [string, string] | undefined => {
  const u = jsonOf(field)
  return Array.isArray(u) && u.length === 2 && typeof u[0] === 'string' && typeof u[1] === 'string'
    ? [u[0], u[1]]
    : undefined
}

// one text per rule, whatever order its members were written in: how grants are compared and stored
const textOf = grantText

// a changed definition's field in the changes hash
const changeField = (p: Pin): string => JSON.stringify([p.tool, p.hash])

// a pin read back from Redis (anyone with access may write it): bounded, then checked as a file's pins are
const pinFrom = (text: string): Pin | undefined => (text.length > MAX_PIN_CHARS ? undefined : decodePin(jsonOf(text)))

const ruleOf = (text: string): Rule | undefined =>
  text.length > MAX_GRANT_CHARS ? undefined : toUndefined(getRight(decodeRule(jsonOf(text))))

const countsOf = (entries: Iterable<readonly [string, number]>): ReadonlyArray<PairCount> => {
  const out: Array<PairCount> = []
  for (const [field, calls] of entries) {
    const pair = pairOf(field)
    if (pair !== undefined && Number.isSafeInteger(calls) && calls > 0) out.push({ tool: pair[0], key: pair[1], calls })
  }
  return out.sort(byToolThenKey)
}

// the first `n` of `items`, without copying the rest
const firstOf = <A>(items: Iterable<A>, n: number): Array<A> => {
  const out: Array<A> = []
  for (const a of items) {
    if (out.length >= n) break
    out.push(a)
  }
  return out
}

// what a command came to: its answer, or why there is none (it failed, or did not answer within `ms`; a late
// answer is dropped)
type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly why: unknown }

const attempt = <A>(p: Promise<A>, ms: number): Promise<Outcome<A>> =>
  new Promise<Outcome<A>>((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, why: new Error(`no answer within ${ms} ms`) }), ms)
    timer.unref()
    p.then(
      (value) => {
        clearTimeout(timer)
        resolve({ ok: true, value })
      },
      (why: unknown) => {
        clearTimeout(timer)
        resolve({ ok: false, why })
      },
    )
  })

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A store shared through the Redis at `url` (`redis://[user:password@]host[:port][/db][?prefix=P&pairs=N]`,
 * `rediss://` for TLS): `prefix` namespaces its keys (default `toolstack:`), `pairs` caps the pairs Redis
 * holds (default 100 000). Rejects only a malformed URL; a Redis that cannot be reached within two seconds
 * is said through `onNotice`, and the store serves from memory until it answers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const redisStore = async (url: string, options: StoreOptions): Promise<GatewayStore> => {
  const where = whereOf(url)
  const keys = {
    grants: `${where.prefix}grants`,
    said: `${where.prefix}said`,
    counts: `${where.prefix}counts`,
    channel: `${where.prefix}grants:added`,
    removed: `${where.prefix}grants:removed`,
    epoch: `${where.prefix}epoch`,
    pins: `${where.prefix}pins`,
    changes: `${where.prefix}changes`,
    pinsChannel: `${where.prefix}pins:changed`,
  }
  const pairs = String(where.pairs)
  const onNotice = options.onNotice ?? (() => undefined)
  const notice = (message: string): void => {
    try {
      onNotice(message)
    } catch {
      // a notice that throws changes nothing about the store
    }
  }

  // commands fail at once while the connection is down, rather than waiting in the client's queue
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: START_WAIT_MS,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, PROBE_MS),
    },
  })
  // the subscriber's SUBSCRIBE waits in its queue until it connects; the client subscribes again after each
  // reconnection, before it is ready
  const subscriber = client.duplicate({ disableOfflineQueue: false })

  // what this process knows now
  let grants: ReadonlyArray<Rule> = Object.freeze([])
  const grantTexts = new Set<string>()
  let claimed: SeenSet = emptySeenSetOf(where.pairs)
  const own = new Map<string, number>()
  // what is still to be written
  const pendingGrants = new Set<string>()
  // grants taken back here, not yet taken out of Redis
  const pendingRevokes = new Set<string>()
  // the Redis this process last wrote to, by the random mark it holds (see `restoreIfEmptied`)
  let epoch: string | undefined
  const pendingClaims = new Set<string>()
  const pendingCounts = new Map<string, number>()
  // the pin book as known here; pins and changes recorded here while Redis could not be asked; acceptances made
  // here, applied again over what Redis holds until they are written
  let book: PinBook = emptyBook
  const pendingPins = new Map<string, Pin>()
  const pendingChanges = new Map<string, Pin>()
  const accepted = new Map<string, Pin>()
  const pinListeners = new Set<IO<void>>()

  const listeners = new Set<IO<void>>()
  const changed = (): void => {
    for (const l of [...listeners]) {
      try {
        l()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  // adds the rules not known yet; whether there was one
  const learn = (rules: Iterable<Rule>): boolean => {
    const added: Array<Rule> = []
    for (const r of rules) {
      const text = textOf(r)
      if (grantTexts.has(text) || grantTexts.size >= MAX_GRANTS) continue
      grantTexts.add(text)
      added.push(r)
    }
    if (added.length > 0) grants = Object.freeze([...grants, ...added])
    return added.length > 0
  }

  // whether Redis answered the last time it was asked, and whether this process said it cannot be reached (so a
  // Redis that is there at start is not announced, and each change after is told once)
  let up = false
  let saidDown = false
  let closed = false
  let isDown: IO<void> = () => undefined
  const down = (why: unknown): void => {
    up = false
    probeSoon()
    if (saidDown || closed) return
    saidDown = true
    isDown()
    notice(
      `the store ${where.shown} cannot be reached (${cut(escapeControls(describeError(why)), 160)}); ` +
        'serving from this process’s memory, and catching up when it answers',
    )
  }

  // what Redis holds joins what is known here (its pin wins, but for an acceptance made here not yet written)
  const learnBook = (read: PinBook): void => {
    let next = mergeBook(book, read)
    for (const p of accepted.values()) next = setPin(next, p)
    if (sameBook(next, book)) return
    book = next
    for (const l of [...pinListeners]) {
      try {
        l()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  const readPins = async (): Promise<void> => {
    const [ps, cs] = await Promise.all([client.hGetAll(keys.pins), client.hGetAll(keys.changes)])
    const pins: Array<Pin> = []
    for (const [tool, text] of Object.entries(ps).slice(0, MAX_PINS)) {
      const p = pinFrom(text)
      if (p !== undefined && p.tool === tool) pins.push(p)
    }
    const changes: Array<Pin> = []
    for (const [field, text] of Object.entries(cs).slice(0, MAX_CHANGES)) {
      const p = pinFrom(text)
      if (p !== undefined && changeField(p) === field) changes.push(p)
    }
    learnBook(bookOf(pins, changes))
  }
  const putOnce = async (key: string, cap: number, field: string, p: Pin): Promise<boolean> => {
    const r = await client.eval(PUT_ONCE, { keys: [key], arguments: [String(cap), field, JSON.stringify(p)] })
    return r !== 0
  }
  // drops a grant; whether it was held
  const forget = (text: string): boolean => {
    if (!grantTexts.delete(text)) return false
    grants = Object.freeze(grants.filter((g) => textOf(g) !== text))
    return true
  }

  // What Redis holds becomes what this process holds (with what is still to be written): a grant another replica
  // took back meanwhile is dropped here too.
  const readGrants = async (): Promise<void> => {
    const texts = await client.sMembers(keys.grants)
    const rules: Array<Rule> = []
    for (const t of texts.slice(0, MAX_GRANTS)) {
      const r = ruleOf(t)
      if (r !== undefined) rules.push(r)
    }
    const keep = new Set([...rules.map(textOf), ...pendingGrants])
    let moved = false
    for (const t of [...grantTexts]) if (!keep.has(t)) moved = forget(t) || moved
    if (learn(rules) || moved) changed()
  }

  // A Redis without this store's mark is one that lost what it held (restarted without persistence, or flushed)
  // since this process last wrote to it, or one never written to: in the first case every grant, pin and change
  // this process holds is written back (not only those of the outage), so the fleet's grants and pins outlive the
  // Redis (a pin lost there would let another replica trust a changed definition as new); then the mark. A pin
  // another replica wrote back first is kept (as `pin` keeps the first).
  const restoreIfEmptied = async (): Promise<void> => {
    const mark = await client.get(keys.epoch)
    const emptied = epoch !== undefined && mark !== epoch
    // a mark there already is kept (NX)
    await client.set(keys.epoch, randomUUID(), { NX: true })
    epoch = (await client.get(keys.epoch)) ?? undefined
    if (!emptied) return
    for (const g of grants) {
      await client.sAdd(keys.grants, textOf(g))
      await client.publish(keys.channel, textOf(g))
    }
    for (const [tool, p] of book.pins) await putOnce(keys.pins, MAX_PINS, tool, p)
    for (const p of [...book.changes.values()].flat()) await putOnce(keys.changes, MAX_CHANGES, changeField(p), p)
    // a replica that read the emptied Redis before this write-back reads the pins again
    await client.publish(keys.pinsChannel, '')
  }

  // Writes what is pending. Grants and claims are idempotent, so one is dropped from pending only once
  // written; a batch of counts is taken out before it is sent (so deltas added meanwhile wait for the next)
  // and put back if it fails. A connection cut after Redis ran a batch but before it answered counts it twice.
  const write = async (): Promise<void> => {
    for (const text of [...pendingGrants]) {
      await client.sAdd(keys.grants, text)
      await client.publish(keys.channel, text)
      pendingGrants.delete(text)
    }
    for (const text of [...pendingRevokes]) {
      await client.sRem(keys.grants, text)
      await client.publish(keys.removed, text)
      pendingRevokes.delete(text)
    }
    const pinsMoved = pendingPins.size + pendingChanges.size + accepted.size > 0
    for (const [tool, p] of [...pendingPins]) {
      await putOnce(keys.pins, MAX_PINS, tool, p)
      pendingPins.delete(tool)
    }
    for (const [field, p] of [...pendingChanges]) {
      await putOnce(keys.changes, MAX_CHANGES, field, p)
      pendingChanges.delete(field)
    }
    for (const [tool, p] of [...accepted]) {
      await client.hSet(keys.pins, tool, JSON.stringify(p))
      await client.hDel(keys.changes, changeField(p))
      accepted.delete(tool)
    }
    if (pinsMoved) await client.publish(keys.pinsChannel, '')
    while (pendingClaims.size > 0) {
      const fields = firstOf(pendingClaims, CHUNK)
      await client.eval(CLAIM, { keys: [keys.said], arguments: [pairs, ...fields] })
      for (const f of fields) pendingClaims.delete(f)
    }
    while (pendingCounts.size > 0) {
      const batch = firstOf(pendingCounts, CHUNK)
      for (const [f] of batch) pendingCounts.delete(f)
      try {
        await client.eval(ADD, {
          keys: [keys.counts],
          arguments: [pairs, ...batch.flatMap(([f, n]) => [f, String(n)])],
        })
      } catch (e) {
        for (const [f, n] of batch) pendingCounts.set(f, (pendingCounts.get(f) ?? 0) + n)
        throw e
      }
    }
  }

  // one flush at a time; one asked for while another runs runs after it
  let flushing: Promise<void> | undefined
  let again = false
  const flush = (): Promise<void> => {
    if (flushing !== undefined) {
      again = true
      return flushing
    }
    const run = async (): Promise<void> => {
      do {
        again = false
        if (!up) return
        const done = await attempt(write(), COMMAND_WAIT_MS)
        if (!done.ok) return down(done.why)
      } while (again)
    }
    flushing = run().finally(() => {
      flushing = undefined
    })
    return flushing
  }

  let flushTimer: NodeJS.Timeout | undefined
  const flushSoon = (): void => {
    if (flushTimer !== undefined) return
    flushTimer = setTimeout(() => {
      flushTimer = undefined
      void flush()
    }, FLUSH_MS)
    flushTimer.unref()
  }

  // Redis answers again (or for the first time): write what was kept, then read the grants written meanwhile
  let probing: Promise<void> | undefined
  const probe = (): Promise<void> =>
    (probing ??= (async () => {
      // a closed client is never ready again
      if (!client.isReady) return
      const done = await attempt(
        restoreIfEmptied()
          .then(() => write())
          .then(() => Promise.all([readGrants(), readPins()])),
        COMMAND_WAIT_MS,
      )
      if (!done.ok) return down(done.why)
      up = true
      if (saidDown) notice(`the store ${where.shown} answers again; what this process kept is written`)
      saidDown = false
    })().finally(() => {
      probing = undefined
    }))
  let probeTimer: NodeJS.Timeout | undefined
  function probeSoon(): void {
    if (probeTimer !== undefined) return
    probeTimer = setTimeout(() => {
      probeTimer = undefined
      if (!up) void probe()
    }, PROBE_MS)
    probeTimer.unref()
  }

  client.on('error', (e: unknown) => down(e))
  client.on('ready', () => void probe())
  subscriber.on('error', () => {
    // the client's own 'error' says Redis is down; the subscriber reconnects by itself
  })
  // subscribed again: a grant published while it was not is in the set, so read them all; but only once the client
  // has caught up (the probe reads them too), or a Redis that came back empty would be read before the grants this
  // process holds are written back to it
  subscriber.on('ready', () => {
    if (up) Promise.all([readGrants(), readPins()]).catch(() => undefined)
  })

  const started = Promise.all([
    client.connect(),
    subscriber.connect(),
    subscriber.subscribe(keys.channel, (text: string) => {
      const r = ruleOf(text)
      if (r !== undefined && !pendingRevokes.has(text) && learn([r])) changed()
    }),
    subscriber.subscribe(keys.removed, (text: string) => {
      if (!pendingGrants.has(text) && forget(text)) changed()
    }),
    // a pin, a change or an acceptance written elsewhere: the book is read again
    subscriber.subscribe(keys.pinsChannel, () => {
      readPins().catch(() => undefined)
    }),
  ]).then(() => probe())
  // serves from memory if Redis is refused, or not there in time; the clients keep trying
  const start = await Promise.race([
    attempt(started, START_WAIT_MS),
    new Promise<undefined>((resolve) => {
      isDown = () => resolve(undefined)
    }),
  ])
  if (start !== undefined && !start.ok) down(start.why)

  const claim = (tool: string, key: string): Promise<boolean> => {
    if (hasSeen(tool, key)(claimed)) return Promise.resolve(false)
    claimed = firstSeen(tool, [key])(claimed)[1]
    const field = pairField(tool, key)
    const later = (): boolean => {
      if (pendingClaims.size < where.pairs) pendingClaims.add(field)
      return true
    }
    if (!up) return Promise.resolve(later())
    // slow or gone: this process says it, and the claim is written when Redis answers; a slow answer alone
    // is no outage (a write that takes a second is). The script answers one code per field.
    const asked = client.eval(CLAIM, { keys: [keys.said], arguments: [pairs, field] }) as Promise<[number]>
    return attempt(asked, CLAIM_WAIT_MS).then((a) => (a.ok ? a.value[0] !== 0 : later()))
  }

  // a pin or a change recorded here first is written at once and said only when Redis did not hold it already;
  // while Redis cannot be asked, this process says it, and it is written when Redis answers
  const recorded = async (
    key: string,
    cap: number,
    field: string,
    p: Pin,
    later: Map<string, Pin>,
  ): Promise<boolean> => {
    // what waits is bounded as Redis bounds it
    const keep = (): void => void (later.size < cap && later.set(field, p))
    if (!up) {
      keep()
      return true
    }
    const a = await attempt(putOnce(key, cap, field, p), COMMAND_WAIT_MS)
    if (!a.ok) {
      keep()
      down(a.why)
      return true
    }
    void attempt(client.publish(keys.pinsChannel, ''), COMMAND_WAIT_MS)
    return a.value
  }
  const pins: PinMemory = {
    book: () => book,
    pin: (ps) => {
      const [firsts, next] = pinFirst(ps)(book)
      book = next
      return Promise.all(
        ps.map((p, i) =>
          firsts[i] === true ? recorded(keys.pins, MAX_PINS, p.tool, p, pendingPins) : Promise.resolve(false),
        ),
      )
    },
    change: (p) => {
      const [isNew, next] = recordChange(p)(book)
      book = next
      return isNew ? recorded(keys.changes, MAX_CHANGES, changeField(p), p, pendingChanges) : Promise.resolve(false)
    },
    accept: async (tool, hash) => {
      const done = acceptChange(tool, hash)(book)
      if (done._tag === 'Left') return done
      const [pin, next] = done.right
      if (next !== book) {
        book = next
        accepted.set(tool, pin)
        for (const l of [...pinListeners]) {
          try {
            l()
          } catch {
            // one listener that throws costs the others nothing
          }
        }
        // written at once: another replica's sessions are held until it is
        await flush()
      }
      return right(pin)
    },
    onPinsChanged: (listener) => {
      pinListeners.add(listener)
      return () => void pinListeners.delete(listener)
    },
  }

  const addCounts = (counts: ReadonlyArray<PairCount>): void => {
    for (const { tool, key, calls } of counts) {
      if (!Number.isSafeInteger(calls) || calls <= 0) continue
      const field = pairField(tool, key)
      if (own.has(field) || own.size < where.pairs) own.set(field, (own.get(field) ?? 0) + calls)
      if (pendingCounts.has(field) || pendingCounts.size < where.pairs)
        pendingCounts.set(field, (pendingCounts.get(field) ?? 0) + calls)
    }
    flushSoon()
  }

  const stats = async (): Promise<ReadonlyArray<PairCount>> => {
    // what this process added is written first, so that the sum includes it
    await flush()
    if (!up) return countsOf(own)
    const all = await attempt(client.hGetAll(keys.counts), COMMAND_WAIT_MS)
    if (!all.ok) {
      down(all.why)
      return countsOf(own)
    }
    // what is counted while the read is under way is in the next answer
    return countsOf(Object.entries(all.value).map(([f, n]) => [f, Number(n)] as const))
  }

  return {
    grants: () => grants,
    addGrant: (rule) => {
      if (!learn([rule])) return
      pendingRevokes.delete(textOf(rule))
      pendingGrants.add(textOf(rule))
      // what another replica's human would be asked about: written at once, not batched
      void flush()
    },
    revokeGrant: (rule) => {
      const text = textOf(rule)
      if (!forget(text)) return
      pendingGrants.delete(text)
      pendingRevokes.add(text)
      void flush()
    },
    onGrantsChanged: (listener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    claim,
    addCounts,
    stats,
    pins,
    // a second close, and a flush or a probe after it (their timers are unref'd), find the clients closed and say
    // nothing
    close: async () => {
      await attempt(flush(), CLOSE_WAIT_MS)
      closed = true
      listeners.clear()
      pinListeners.clear()
      for (const c of [subscriber, client]) {
        if (c.isReady) await attempt(c.close(), CLOSE_WAIT_MS)
        try {
          c.destroy()
        } catch {
          // closed already
        }
      }
    },
  }
}
