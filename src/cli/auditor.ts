/**
 * Where the proxy's audit runs. Forwarding never waits for it: the forwarding thread
 * copies the bytes it forwarded into a bounded ring in shared memory, and a worker
 * thread audits them (`auditworker.ts`). When the auditing thread falls a whole ring
 * behind, the proxy stops reading from the host until there is room again: the
 * traffic slows, and no call goes unaudited. Without a worker (its module cannot be
 * found) the same audit runs on the forwarding thread.
 *
 * @since 0.1.0
 */
import { existsSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { UnknownKeyWarning } from '../index.js'
import { describeError } from '../internal/describe.js'
import { isRecord, own } from '../internal/guards.js'
import { lineAudit } from './lineaudit.js'
import type { RingMemory, RingWriter, Side } from './ring.js'
import { newRingMemory, ringWriter, Slot } from './ring.js'
import type { Direction } from './sidechannel.js'
import { BACKSLASH, EMPTY, LF as NEWLINE } from './bytes.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The forwarding thread's end of the audit.
 *
 * @since 0.1.0
 * @category model
 */
export interface Auditor {
  /**
   * Hands over bytes just forwarded from one side, in order: the host's as they came,
   * the server's in whole lines (only while `wantsServer`). They are copied or
   * audited before it returns, so the caller may reuse them.
   */
  readonly feed: (from: Direction, pieces: ReadonlyArray<Buffer>) => void
  /** That side ended: a last line without a newline is audited too. */
  readonly end: (from: Direction) => void
  /** Whether the server's lines can matter now (a `tools/list` may be awaited). */
  readonly wantsServer: () => boolean
  /** Audits what was handed over (for at most `ms`), then stops. */
  readonly close: (ms: number) => Promise<void>
}

/**
 * What the forwarding thread needs from the proxy.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditorIO {
  readonly warn: (warning: UnknownKeyWarning) => void
  readonly err: (line: string) => void
  /** Stops reading from the host (true) or lets it go on (false). */
  readonly holdHost: (hold: boolean) => void
}

/**
 * What the auditing thread is started with.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditWorkerData {
  readonly role: 'toolstack-audit'
  readonly memory: RingMemory
  readonly tolerate: ReadonlyArray<string>
}

/**
 * What the auditing thread posts back.
 *
 * @since 0.1.0
 * @category model
 */
export type FromAuditWorker =
  | { readonly type: 'warning'; readonly warning: UnknownKeyWarning }
  /** The ring has room again (posted only when the writer asked). */
  | { readonly type: 'room' }
  /** The writer closed and everything was audited. */
  | { readonly type: 'drained' }

/**
 * @since 0.1.0
 * @category guards
 */
export const isAuditWorkerData = (u: unknown): u is AuditWorkerData =>
  isRecord(u) && own(u, 'role') === 'toolstack-audit' && isRecord(own(u, 'memory')) && Array.isArray(own(u, 'tolerate'))

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The audit on the forwarding thread itself.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inlineAuditor = (tolerate: ReadonlyArray<string>, io: Pick<AuditorIO, 'warn'>): Auditor => {
  const audit = lineAudit(tolerate, io.warn)
  return {
    feed: (from, pieces) => {
      for (const p of pieces) if (p.length > 0) audit.feed(from, p)
    },
    end: (from) => audit.feed(from, EMPTY),
    wantsServer: audit.awaitingListing,
    close: () => Promise.resolve(),
  }
}

const SIDE: Record<Direction, Side> = { host: 0, server: 1 }
const LISTING = Buffer.from('tools/list')

/** How long after a write the auditing thread is woken to read it. */
const WAKE_AFTER_MS = 1

/** Ring size: how far the audit may fall behind the traffic before the host waits. */
export const RING_BYTES = 2 * 1024 * 1024

interface Queued {
  readonly side: Side
  readonly bytes: Buffer
  from: number
  /** Whether these bytes may hold a `tools/list` request. */
  readonly listing: boolean
}

/**
 * Starts the auditing thread from `file` (the `auditworker` module next to the
 * running command). Running from TypeScript sources (`.ts`, under tsx), the worker
 * registers tsx's ESM hooks first: Node 20 does not pass a process's module hooks on
 * to its workers.
 */
const startWorker = (file: string, workerData: AuditWorkerData): Worker => {
  if (!file.endsWith('.ts')) return new Worker(file, { workerData })
  const require = createRequire(file)
  const tsx = require.resolve('tsx/package.json')
  const api = join(dirname(tsx), tsxEsmApi(require(tsx)))
  const code = `import(${JSON.stringify(pathToFileURL(api).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(pathToFileURL(file).href)}) })`
  return new Worker(code, { eval: true, workerData })
}

// tsx's `./esm/api` export under the `import` condition (its CommonJS build cannot
// register from a worker's eval'd script)
const tsxEsmApi = (pkg: unknown): string => {
  const target = own(own(own(own(pkg, 'exports'), './esm/api'), 'import'), 'default')
  if (typeof target !== 'string') throw new Error("tsx's package.json has no import export for ./esm/api")
  return target
}

/**
 * The audit on a worker thread started from `file`, or on the forwarding thread when
 * there is no such file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const threadedAuditor = (file: string | undefined, tolerate: ReadonlyArray<string>, io: AuditorIO, ringBytes = RING_BYTES): Auditor => {
  if (file === undefined || !existsSync(file)) return inlineAuditor(tolerate, io)
  // started at once (see the end), so that its modules are loaded while the server
  // starts, not while the first calls wait for room
  let thread: { readonly worker: Worker; readonly ring: RingWriter } | undefined
  let fallback: Auditor | undefined

  const start = (): { readonly worker: Worker; readonly ring: RingWriter } | undefined => {
    if (thread !== undefined || fallback !== undefined) return thread
    const memory = newRingMemory(ringBytes)
    let worker: Worker
    try {
      worker = startWorker(file, { role: 'toolstack-audit', memory, tolerate: [...tolerate] })
    } catch (e) {
      io.err(`cannot start the audit's thread (${describeError(e)}); auditing on the forwarding thread`)
      fallback = inlineAuditor(tolerate, io)
      return undefined
    }
    worker.on('message', (m: FromAuditWorker) => {
      if (m.type === 'warning') io.warn(m.warning)
      else if (m.type === 'room') pump()
      else drained()
    })
    worker.on('error', (e) => stop(describeError(e)))
    worker.on('exit', () => drained())
    // the proxy's end does not wait for a thread it has not closed
    worker.unref()
    return (thread = { worker, ring: ringWriter(memory) })
  }

  const queue: Array<Queued> = []
  let holding = false
  let stopped = false
  // where the last bytes that may hold a tools/list request end in the ring
  let listingEnd: number | undefined
  let closing: (() => void) | undefined
  let drained: () => void = () => undefined
  const done = new Promise<void>((resolve) => {
    drained = resolve
  })

  const hold = (on: boolean): void => {
    if (holding === on) return
    holding = on
    io.holdHost(on)
  }

  // Writes what waits, in order, as far as the ring has room.
  const pump = (): void => {
    if (thread === undefined) return
    const { ring } = thread
    while (queue.length > 0) {
      const q = queue[0] as Queued
      let n = ring.write(q.side, q.bytes, q.from)
      if (n === 0) {
        // ask to be told about room, then look again: the reader may have made some
        // between the two (it frees room, then reads the flag)
        Atomics.store(ring.control, Slot.wantsRoom, 1)
        n = ring.write(q.side, q.bytes, q.from)
        if (n === 0) {
          hold(true)
          ring.wake()
          return
        }
      }
      q.from += n
      if (q.from >= q.bytes.length) {
        queue.shift()
        if (q.listing) listingEnd = ring.position()
      }
      wakeSoon(ring.used() >= ringBytes / 4)
    }
    hold(false)
    closing?.()
  }

  // The reader is woken a moment after a write, not at once: a call and its response
  // go through first, and a burst of writes costs one wake. A ring a quarter full is a
  // flood: the reader is woken at once, before the ring fills and the host waits.
  let waking: NodeJS.Timeout | undefined
  const wakeSoon = (now: boolean): void => {
    if (now) {
      clearTimeout(waking)
      waking = undefined
      thread?.ring.wake()
      return
    }
    if (waking !== undefined) return
    waking = setTimeout(() => {
      waking = undefined
      thread?.ring.wake()
    }, WAKE_AFTER_MS)
    waking.unref()
  }

  const stop = (why: string): void => {
    if (stopped) return
    stopped = true
    queue.length = 0
    hold(false)
    io.err(`the audit stopped (${why}); forwarding goes on, unaudited`)
    drained()
  }

  const enqueue = (side: Side, bytes: Buffer, listing: boolean): void => {
    const q: Queued = { side, bytes, from: 0, listing }
    queue.push(q)
    if (queue.length === 1) pump()
    // what waits for room is copied: the caller may reuse its bytes once fed
    if (queue[queue.length - 1] === q) queue[queue.length - 1] = { side, bytes: Buffer.from(bytes.subarray(q.from)), from: 0, listing }
  }

  // Whether host bytes may hold (part of) a `tools/list` request: they spell it, or
  // an escape that could, or they finish a line begun in bytes that might have.
  // Word boundaries between chunks are looked at through the last bytes of the one
  // before.
  const seam = Buffer.alloc(2 * (LISTING.length - 1))
  let seamLength = 0
  let lineMayList = false
  const mayList = (p: Buffer): boolean => {
    const head = Math.min(p.length, LISTING.length - 1)
    p.copy(seam, seamLength, 0, head)
    const across = seam.subarray(0, seamLength + head).includes(LISTING)
    const listing = lineMayList || across || p.includes(LISTING) || p.includes(BACKSLASH)
    // a request the line after the last newline begins must be followed to its end
    const nl = p.lastIndexOf(NEWLINE)
    lineMayList = nl === -1 ? listing : p.includes(LISTING, nl + 1) || p.includes(BACKSLASH, nl + 1)
    // the next seam starts with this piece's last bytes (or all of the seam so far)
    const keep = LISTING.length - 1
    if (p.length >= keep) {
      p.copy(seam, 0, p.length - keep)
      seamLength = keep
    } else {
      const joined = Buffer.concat([seam.subarray(0, seamLength), p]).subarray(-keep)
      joined.copy(seam, 0)
      seamLength = joined.length
    }
    return listing
  }

  const feed = (from: Direction, pieces: ReadonlyArray<Buffer>): void => {
    if (stopped) return
    if (start() === undefined) return fallback?.feed(from, pieces)
    for (const p of pieces) {
      if (p.length === 0) continue
      enqueue(SIDE[from], p, from === 'host' && mayList(p))
    }
  }

  const end = (from: Direction): void => {
    if (fallback !== undefined) fallback.end(from)
    // a side that was never fed has nothing to finish
    else if (thread !== undefined && !stopped) enqueue(SIDE[from], EMPTY, false)
  }

  const wantsServer = (): boolean => {
    if (fallback !== undefined) return fallback.wantsServer()
    if (stopped || thread === undefined) return false
    if (queue.length > 0) return true
    const control = thread.ring.control
    if (listingEnd !== undefined) {
      const processed = Atomics.load(control, Slot.processed) >>> 0
      // audited past the request: its response is awaited or came; the flag says which
      if (((processed - listingEnd) | 0) < 0) return true
      listingEnd = undefined
    }
    return Atomics.load(control, Slot.awaiting) === 1
  }

  const close = (ms: number): Promise<void> => {
    const t = thread
    if (t === undefined) return Promise.resolve()
    if (!stopped && closing === undefined) {
      closing = () => {
        closing = undefined
        t.ring.close()
      }
      if (queue.length === 0) closing()
    }
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms)
    })
    return Promise.race([done, late]).then(async () => {
      clearTimeout(timer)
      await t.worker.terminate()
    })
  }

  start()
  return { feed, end, wantsServer, close }
}

/**
 * The auditing thread's module beside the command's entry (`process.argv[1]`, links
 * followed): `auditworker.js`, or `auditworker.ts` when running from sources.
 *
 * @since 0.1.0
 * @category utils
 */
export const auditWorkerBeside = (entry: string | undefined): string | undefined => {
  if (entry === undefined) return undefined
  try {
    const real = realpathSync(entry)
    return join(dirname(real), `auditworker${extname(real) === '.ts' ? '.ts' : '.js'}`)
  } catch {
    return undefined
  }
}
