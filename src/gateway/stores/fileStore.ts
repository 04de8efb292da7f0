/**
 * The `file:PATH` store, the embedded choice for one machine: the human's "always" answers (grants) and the
 * pinned tool definitions kept in one JSON file a person can read, so they survive restarts and apply to every
 * session. Pairs and counts are the process's own (as `memoryStore`'s).
 *
 * Each write is atomic (a temporary file in the same directory, fsync, rename) and made under a lock file
 * (`PATH.lock`), after reading the file again and merging what it holds: two gateways on one file never
 * corrupt it, and neither loses the other's grants or pins; a pin or a change is said by the gateway that
 * wrote it to the file first. Each gateway watches the file, so a grant written by one reaches the other's
 * sessions. A grant taken back is moved to the file's `revoked` list, which every gateway on the file reads: it
 * drops the grant, and never writes it back (an "always" answered again takes it out of the list). A file that
 * cannot be read at start is refused, and never overwritten.
 *
 * One file: over 500 lines because grants, grants taken back and pins share one file, one lock and one
 * read-merge-write, so no write of one kind can drop another's.
 *
 * @since 0.1.0
 */
import { randomUUID } from 'node:crypto'
import type { FSWatcher } from 'node:fs'
import { constants, watch } from 'node:fs'
import { access, open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { IO } from 'fp-ts/lib/IO.js'
import type { Rule } from '../../steps/policy/Rule.js'
import { decodeRules } from '../../steps/policy/Rule.js'
import type { Pin } from '../../steps/pins/Definition.js'
import { decodePin } from '../../steps/pins/Definition.js'
import type { PinBook, PinMemory } from '../../steps/pins/Book.js'
import {
  acceptChange,
  bookEntries,
  bookOf,
  emptyBook,
  mergeBook,
  pinFirst,
  recordChange,
  sameBook,
  setPin,
} from '../../steps/pins/Book.js'
import { describeError, describeValue } from '../../kernel/describe.js'
import { isRecord } from '../../kernel/guards.js'
import type { GatewayStore, StoreOptions } from './store.js'
import { memoryStore, mergeGrants } from './memoryStore.js'
import { forgetGrant } from '../../steps/policy/Answer.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the file holds: `{ "version": 1, "grants": [rules], "revoked": [rules], "pins": [pins], "changes": [pins] }`,
 * written as indented JSON; `revoked` (the grants taken back, the latest `MAX_REVOKED`), `pins` (each tool's pinned
 * definition) and `changes` (changed definitions awaiting acceptance) are written once there are any.
 *
 * @since 0.1.0
 * @category model
 */
export interface StoreFile {
  readonly version: 1
  readonly grants: ReadonlyArray<Rule>
  readonly revoked: ReadonlyArray<Rule>
  readonly pins?: ReadonlyArray<Pin>
  readonly changes?: ReadonlyArray<Pin>
}

/**
 * The most grants taken back the file remembers (the latest): a gateway that still held an older one in memory when
 * it left the list could write it back.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_REVOKED = 1_000

/**
 * The version of the file's format this code reads and writes.
 *
 * @since 0.1.0
 * @category model
 */
export const STORE_FILE_VERSION = 1

// a lock older than this is left by a process that died while writing: every write takes milliseconds
const STALE_LOCK_MS = 10_000
// how long a write waits for another gateway's lock before it tries again later
const LOCK_WAIT_MS = 2_000
// a write that could not be made is tried again after this long
const RETRY_MS = 1_000
// a change to the file is read once its writes settled
const SETTLE_MS = 50

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

/**
 * Reads the text of a store file: its grants, or what is wrong with it (a Left naming the member).
 *
 * @example
 * import { decodeStoreFile } from 'toolstack/gateway'
 * assert.deepStrictEqual(decodeStoreFile('{"version":1,"grants":[{"tool":"x","decision":"allow"}]}'), {
 *   _tag: 'Right',
 *   right: { version: 1, grants: [{ tool: 'x', decision: 'allow' }], revoked: [] },
 * })
 * assert.strictEqual(decodeStoreFile('{"version":1,"gra')._tag, 'Left')
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeStoreFile = (text: string): Either<string, StoreFile> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return left(`it is not JSON (${describeError(e)}); a truncated or half-written file reads so`)
  }
  if (!isRecord(json)) return left(`it must be an object { "version": 1, "grants": [...] }, got ${describeValue(json)}`)
  const extra = Object.keys(json).filter((k) => !['version', 'grants', 'revoked', 'pins', 'changes'].includes(k))
  if (extra.length > 0) return left(`it has unknown members ${extra.map((k) => JSON.stringify(k)).join(', ')}`)
  if (json['version'] !== STORE_FILE_VERSION)
    return left(`its version must be ${STORE_FILE_VERSION}, got ${describeValue(json['version'])}`)
  const grants = decodeRules(json['grants'], 'grants')
  if (isLeft(grants)) return left(grants.left)
  const revoked = json['revoked'] === undefined ? right([]) : decodeRules(json['revoked'], 'revoked')
  if (isLeft(revoked)) return left(revoked.left)
  const pins = decodePins(json['pins'], 'pins')
  if (isLeft(pins)) return pins
  const changes = decodePins(json['changes'], 'changes')
  if (isLeft(changes)) return changes
  return right({
    version: STORE_FILE_VERSION,
    grants: grants.right,
    revoked: revoked.right,
    ...(pins.right === undefined ? {} : { pins: pins.right }),
    ...(changes.right === undefined ? {} : { changes: changes.right }),
  })
}

// a list of pins, each checked by decodePin (a definition that does not hash to its pin's hash is dropped)
const decodePins = (u: unknown, at: string): Either<string, ReadonlyArray<Pin> | undefined> => {
  if (u === undefined) return right(undefined)
  if (!Array.isArray(u)) return left(`${at} must be an array of pins, got ${describeValue(u)}`)
  const out: Array<Pin> = []
  for (const [i, p] of u.entries()) {
    const pin = decodePin(p)
    if (pin === undefined)
      return left(`${at}[${i}] must be a pin { tool, hash: "sha256:…", at, definition? }, got ${describeValue(p)}`)
    out.push(pin)
  }
  return right(out)
}

/**
 * A store file's text: indented JSON, one member a line, ending with a newline.
 *
 * @since 0.1.0
 * @category codecs
 */
export const encodeStoreFile = (
  grants: ReadonlyArray<Rule>,
  revoked: ReadonlyArray<Rule> = [],
  book: PinBook = emptyBook,
): string => {
  const { pins, changes } = bookEntries(book)
  return (
    JSON.stringify(
      {
        version: STORE_FILE_VERSION,
        grants,
        ...(revoked.length === 0 ? {} : { revoked: revoked.slice(-MAX_REVOKED) }),
        ...(pins.length === 0 ? {} : { pins }),
        ...(changes.length === 0 ? {} : { changes }),
      },
      null,
      2,
    ) + '\n'
  )
}

// what the file should hold: its grants and ours, less every grant taken back (its list and ours); the list of
// grants taken back: its and ours, less those answered "always" again here, the latest MAX_REVOKED
const merged = (
  read: Held,
  grants: ReadonlyArray<Rule>,
  revoked: ReadonlyArray<Rule>,
  regranted: ReadonlyArray<Rule>,
): { readonly grants: ReadonlyArray<Rule>; readonly revoked: ReadonlyArray<Rule> } => {
  // the file keeps the latest MAX_REVOKED (encodeStoreFile)
  const gone = mergeGrants(
    regranted.reduce((rs, r) => forgetGrant(r)(rs), read.revoked),
    revoked,
  )
  return { grants: gone.reduce((gs, r) => forgetGrant(r)(gs), mergeGrants(read.grants, grants)), revoked: gone }
}

// whether two lists hold the same rules, in any order
const sameRules = (a: ReadonlyArray<Rule>, b: ReadonlyArray<Rule>): boolean =>
  a.length === b.length && mergeGrants(a, b) === a

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

// the clock the lock reads and the wait between its tries: the system's, or one a test moves by hand (the lock's
// bounds are seconds long)
export interface LockClock {
  readonly now: () => number
  readonly sleep: (ms: number) => Promise<void>
}
const systemClock: LockClock = { now: Date.now, sleep: (ms) => new Promise((done) => setTimeout(done, ms)) }

const isMissing = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT'

interface Held {
  readonly grants: ReadonlyArray<Rule>
  readonly revoked: ReadonlyArray<Rule>
  readonly book: PinBook
}

// the file's grants, grants taken back and pins; none when it does not exist yet; a Left when it cannot be read
// or decoded
const readHeld = async (path: string): Promise<Either<string, Held>> => {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    return isMissing(e) ? right({ grants: [], revoked: [], book: emptyBook }) : left(describeError(e))
  }
  const decoded = decodeStoreFile(text)
  if (isLeft(decoded)) return decoded
  const { grants, revoked, pins, changes } = decoded.right
  return right({ grants, revoked, book: bookOf(pins ?? [], changes ?? []) })
}

// the temporary file is written and flushed to the disk before it takes the file's name, so the name always
// holds a whole file, the old one or the new one
const writeAtomically = async (path: string, text: string): Promise<void> => {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomUUID()}.tmp`)
  const handle = await open(temporary, 'wx')
  try {
    await handle.writeFile(text)
    await handle.sync()
  } catch (e) {
    await handle.close()
    await unlink(temporary).catch(() => undefined)
    throw e
  }
  await handle.close()
  try {
    await rename(temporary, path)
  } catch (e) {
    await unlink(temporary).catch(() => undefined)
    throw e
  }
  // the rename itself is made durable with the directory; a file system that cannot sync one costs nothing
  try {
    const directory = await open(dirname(path), 'r')
    await directory.sync().finally(() => directory.close())
  } catch {
    // not every platform syncs a directory
  }
}

// runs `step` holding PATH.lock (created exclusively), so no two gateways read-merge-write at once; a lock left
// by a dead process is taken over once it is older than STALE_LOCK_MS; between tries, a wait of 10 to 30 ms, so
// that two waiting gateways do not try in step
export const withLock = async <A>(
  path: string,
  step: () => Promise<A>,
  clock: LockClock = systemClock,
): Promise<{ readonly held: true; readonly value: A } | { readonly held: false }> => {
  const lock = `${path}.lock`
  const until = clock.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      const handle = await open(lock, 'wx')
      await handle.writeFile(`${process.pid}\n`).finally(() => handle.close())
      break
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      const since = await stat(lock).then(
        (s) => clock.now() - s.mtimeMs,
        () => 0,
      )
      if (since > STALE_LOCK_MS) await unlink(lock).catch(() => undefined)
      else if (clock.now() > until) return { held: false }
      else await clock.sleep(10 + Math.random() * 20)
    }
  }
  try {
    return { held: true, value: await step() }
  } finally {
    await unlink(lock).catch(() => undefined)
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Opens the `file:` store at `path` (made absolute), reading the grants it holds; a file that does not exist
 * yet is written at the first grant. Rejects, naming the path, when the file cannot be read or is not a store
 * file (truncated, corrupt, another version), and leaves it as it is; also when its directory cannot be
 * written.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fileStore = async (path: string, options: StoreOptions = {}): Promise<GatewayStore> => {
  const file = resolve(path)
  const named = JSON.stringify(file)
  const first = await readHeld(file)
  if (isLeft(first))
    throw new Error(
      `the store ${named} cannot be read: ${first.left}. It is left as it is: mend it, or move it away to start with no grants`,
    )
  try {
    await access(dirname(file), constants.W_OK)
  } catch (e) {
    throw new Error(`the store ${named} cannot be written: its directory: ${describeError(e)}`)
  }

  const local = memoryStore()
  let grants: ReadonlyArray<Rule> = first.right.grants
  // grants taken back here, and grants answered here that the file had taken back: written at the next write
  let revoked: ReadonlyArray<Rule> = []
  let regranted: ReadonlyArray<Rule> = []
  let book: PinBook = first.right.book
  // a write failed: what is held here waits for the next try
  let unwritten = false
  const listeners = new Set<IO<void>>()
  const pinListeners = new Set<IO<void>>()
  // acceptances made here, applied again over what the file holds until they are written
  const accepted = new Map<string, Pin>()
  // pins and changes this process recorded first, waiting to learn (under the lock) whether the file had them:
  // `answer` is called with the file's book as read, or with undefined when it could not be written
  const asks: Array<(read: PinBook | undefined) => void> = []
  let closed = false

  // told once when the file cannot be read or written, and once when it can again
  let failing = false
  const onNotice = options.onNotice ?? (() => undefined)
  const notice = (problem: string | undefined): void => {
    if ((problem !== undefined) === failing) return
    failing = problem !== undefined
    try {
      onNotice(
        problem === undefined
          ? `toolstack: the store ${named} is read and written again`
          : `toolstack: the store ${named}: ${problem}; grants are kept in this process meanwhile and written when it can be`,
      )
    } catch {
      // a notice that cannot be told changes nothing
    }
  }

  const tell = (to: Set<IO<void>>): void => {
    for (const l of [...to]) {
      try {
        l()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  // grants and pins read from the file join those held, and the grants it says were taken back leave them (unless
  // answered "always" here since)
  const learn = (read: Held): void => {
    const next = merged(read, grants, revoked, regranted).grants
    if (!sameRules(next, grants)) {
      grants = next
      tell(listeners)
    }
    // the file's pin wins, but for an acceptance made here and not yet written
    let nextBook = mergeBook(book, read.book)
    for (const p of accepted.values()) nextBook = setPin(nextBook, p)
    if (!sameBook(nextBook, book)) {
      book = nextBook
      tell(pinListeners)
    }
  }
  // whether the file as read lacks something this process holds
  const lacks = (read: Held): boolean =>
    !sameRules(merged(read, grants, revoked, regranted).grants, read.grants) || !sameBook(read.book, book)

  // under the lock: the file read again, what it lacks added and what was taken back taken out, written whole; a
  // file that cannot be read now is never overwritten
  const writeOnce = async (): Promise<void> => {
    const answering = asks.splice(0)
    let problem: string | undefined
    let answeredBy: PinBook | undefined
    try {
      const outcome = await withLock(file, async (): Promise<string | undefined> => {
        const read = await readHeld(file)
        if (isLeft(read)) return `it cannot be read (${read.left}), so it is not written`
        learn(read.right)
        const next = merged(read.right, grants, revoked, regranted)
        // the file already holds every grant, grant taken back and pin: nothing to write
        if (
          !sameRules(next.grants, read.right.grants) ||
          !sameRules(next.revoked, read.right.revoked) ||
          !sameBook(read.right.book, book)
        )
          await writeAtomically(file, encodeStoreFile(next.grants, next.revoked, book))
        revoked = []
        regranted = []
        accepted.clear()
        answeredBy = read.right.book
        return undefined
      })
      problem = outcome.held ? outcome.value : `its lock ${JSON.stringify(`${file}.lock`)} is held by another process`
    } catch (e) {
      problem = `it cannot be written (${describeError(e)})`
    }
    // who recorded a pin or a change first is judged against the file as read under the lock; when it could not
    // be (answeredBy is then undefined), this process's own answer stands
    for (const answer of answering) answer(answeredBy)
    notice(problem)
    unwritten = problem !== undefined
    if (unwritten) retry()
  }
  // a write waits for the one before it
  let writing: Promise<void> = Promise.resolve()
  const schedule = (): void => {
    writing = writing.then(writeOnce)
  }
  let retryTimer: NodeJS.Timeout | undefined
  const retry = (): void => {
    if (closed || retryTimer !== undefined) return
    retryTimer = setTimeout(() => {
      retryTimer = undefined
      schedule()
    }, RETRY_MS)
    retryTimer.unref()
  }

  // another gateway (or a person) wrote the file: its grants are read, and those it took back dropped; a write of
  // ours made meanwhile merged under the lock, but a lock taken over as stale while we held it can let the other's
  // rename replace ours: a file that lacks a grant this store holds is written again, so no grant is lost for good
  const reread = async (): Promise<void> => {
    const read = await readHeld(file)
    if (isLeft(read)) return notice(`it cannot be read (${read.left})`)
    // read again, but still not written: said once a write is made
    if (!unwritten) notice(undefined)
    learn(read.right)
    if (!closed && lacks(read.right)) schedule()
  }
  let settle: NodeJS.Timeout | undefined
  let watcher: FSWatcher | undefined
  try {
    // the directory is watched, for the name: a rename replaces the file, and a watch on the file would stop
    const w = watch(dirname(file), (_event, changed) => {
      if (changed !== null && changed !== basename(file)) return
      clearTimeout(settle)
      settle = setTimeout(() => void reread().catch(() => undefined), SETTLE_MS)
      settle.unref()
    })
    w.unref()
    w.on('error', () => w.close())
    watcher = w
  } catch (e) {
    notice(
      `its directory cannot be watched (${describeError(e)}), so grants written by another gateway reach this one at its next write`,
    )
  }

  // a pin or a change recorded here first is written, and said only when the file did not hold it already
  const written = <A>(answer: (read: PinBook | undefined) => A): Promise<A> =>
    new Promise<A>((done) => {
      asks.push((read) => done(answer(read)))
      schedule()
    })
  const pins: PinMemory = {
    book: () => book,
    pin: (ps) => {
      const [firsts, next] = pinFirst(ps)(book)
      book = next
      if (!firsts.includes(true)) return Promise.resolve(firsts)
      return written((read) => ps.map((p, i) => firsts[i] === true && (read === undefined || !read.pins.has(p.tool))))
    },
    change: (pin) => {
      const [isNew, next] = recordChange(pin)(book)
      book = next
      if (!isNew) return Promise.resolve(false)
      return written((read) => read === undefined || recordChange(pin)(read)[0])
    },
    accept: (tool, hash) => {
      const done = acceptChange(tool, hash)(book)
      if (isLeft(done)) return Promise.resolve(done)
      const [pin, next] = done.right
      if (next === book) return Promise.resolve(right(pin))
      book = next
      accepted.set(tool, pin)
      tell(pinListeners)
      // resolved once the file holds it (or the write was tried: it is kept here and written when it can be)
      return written(() => right(pin))
    },
    onPinsChanged: (listener) => {
      pinListeners.add(listener)
      return () => void pinListeners.delete(listener)
    },
  }

  return {
    ...local,
    pins,
    grants: () => grants,
    addGrant: (rule) => {
      const next = mergeGrants(grants, [rule])
      if (next === grants) return
      grants = next
      // answered "always" again: out of the list of grants taken back
      revoked = forgetGrant(rule)(revoked)
      regranted = mergeGrants(regranted, [rule])
      schedule()
    },
    revokeGrant: (rule) => {
      const next = forgetGrant(rule)(grants)
      if (next === grants) return
      grants = next
      regranted = forgetGrant(rule)(regranted)
      revoked = mergeGrants(revoked, [rule])
      schedule()
    },
    onGrantsChanged: (listener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    close: async () => {
      closed = true
      clearTimeout(retryTimer)
      clearTimeout(settle)
      watcher?.close()
      // what a failed write left is tried once more, then let go
      if (unwritten) schedule()
      await writing
      await local.close()
    },
  }
}
