/**
 * A bounded byte queue in shared memory, from one writer thread to one reader thread:
 * the proxy's forwarding thread hands the bytes it forwarded to the thread that audits
 * them, for the cost of a copy and an atomic store, with no message per chunk.
 *
 * Bytes travel as records: a 4-byte header (length × 16 + padding × 2 + side), up to 7
 * bytes of padding, and the bytes. The padding puts the bytes at the same address
 * modulo 8 in the ring as where they came from: V8 copies into shared memory a word at
 * a time only then, and a byte at a time (about eight times slower) otherwise. A record
 * of length 0 ends its side. A writer that finds too little room writes what fits and
 * keeps the rest, so a record may arrive in several pieces and a line in several
 * records; the reader joins them.
 *
 * @since 0.1.0
 */

import { EMPTY } from './bytes.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Where each side of the ring keeps its counters, in the `Int32Array` over the
 * control block. `written` and `read` count bytes modulo 2^32; `processed` is where the
 * reader has finished auditing; the flags are 0 or 1.
 *
 * @since 0.1.0
 * @category model
 */
export const Slot = {
  written: 0,
  read: 1,
  processed: 2,
  /** The reader's audit is waiting for a `tools/list` response. */
  awaiting: 3,
  /** The writer waits for room: the reader should say when it has made some. */
  wantsRoom: 4,
  /** The writer is done: the reader ends once it has read everything. */
  closing: 5,
  /** Bumped by the writer after each change above: what a waiting reader waits on. */
  signal: 6,
  /** The reader is (about to be) asleep on `signal`: the writer must wake it. */
  asleep: 7,
} as const

const SLOTS = 8
const HEADER = 4
/** Copies into shared memory go a word at a time when source and target agree modulo this. */
const WORD = 8
/** The largest ring: a record's length, times 16, fits the header's 32 bits. */
const MAX_CAPACITY = 2 ** 27

/**
 * The shared memory of one ring: what is passed to the reader's thread.
 *
 * @since 0.1.0
 * @category model
 */
export interface RingMemory {
  readonly control: SharedArrayBuffer
  readonly data: SharedArrayBuffer
}

/**
 * One side of the traffic, as a bit in a record's header.
 *
 * @since 0.1.0
 * @category model
 */
export type Side = 0 | 1

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A ring of `capacity` bytes (a power of two, from 16 to 2^27).
 *
 * @since 0.1.0
 * @category constructors
 */
export const newRingMemory = (capacity: number): RingMemory => {
  if (!Number.isInteger(capacity) || capacity < 16 || capacity > MAX_CAPACITY || (capacity & (capacity - 1)) !== 0) {
    throw new TypeError(`ring capacity: expected a power of two from 16 to 2^27, got ${String(capacity)}`)
  }
  return { control: new SharedArrayBuffer(SLOTS * 4), data: new SharedArrayBuffer(capacity) }
}

// -------------------------------------------------------------------------------------
// writing
// -------------------------------------------------------------------------------------

/**
 * The writer's end.
 *
 * @since 0.1.0
 * @category writing
 */
export interface RingWriter {
  readonly control: Int32Array
  /**
   * Writes as much of `bytes[from…]` as fits, as one record of `side`; returns how many
   * bytes of `bytes` it took (0 when not even a header and one byte fit). An empty
   * `bytes` writes the end of `side` and returns 1 when it fit. A reader that is asleep
   * is not woken: see `wake`.
   */
  readonly write: (side: Side, bytes: Uint8Array, from: number) => number
  /** Wakes the reader if it sleeps, to read what was written. */
  readonly wake: () => void
  /** Tells the reader that nothing more will be written. */
  readonly close: () => void
  /** Bytes written so far, modulo 2^32: compare with `Slot.processed`. */
  readonly position: () => number
  /** Bytes written and not read yet. */
  readonly used: () => number
}

/**
 * @since 0.1.0
 * @category writing
 */
export const ringWriter = (memory: RingMemory): RingWriter => {
  const control = new Int32Array(memory.control)
  const data = new Uint8Array(memory.data)
  const capacity = data.length
  const mask = capacity - 1
  let written = Atomics.load(control, Slot.written) >>> 0

  const put = (at: number, bytes: Uint8Array): void => {
    const i = at & mask
    const first = Math.min(bytes.length, capacity - i)
    data.set(first === bytes.length ? bytes : bytes.subarray(0, first), i)
    if (first < bytes.length) data.set(bytes.subarray(first), 0)
  }
  const putHeader = (at: number, word: number): void => {
    data[at & mask] = word & 0xff
    data[(at + 1) & mask] = (word >>> 8) & 0xff
    data[(at + 2) & mask] = (word >>> 16) & 0xff
    data[(at + 3) & mask] = word >>> 24
  }
  const ringOffset = data.byteOffset

  const write = (side: Side, bytes: Uint8Array, from: number): number => {
    const free = capacity - ((written - (Atomics.load(control, Slot.read) >>> 0)) >>> 0)
    const ending = bytes.length === 0
    // where the bytes start, modulo a word, decides where they go in the ring
    const pad = ending ? 0 : (bytes.byteOffset + from - (ringOffset + written + HEADER)) & (WORD - 1)
    if (free < HEADER + pad + (ending ? 0 : 1)) return 0
    const n = Math.min(bytes.length - from, free - HEADER - pad)
    putHeader(written, (n * 16 + pad * 2 + side) >>> 0)
    if (n > 0) put(written + HEADER + pad, from === 0 && n === bytes.length ? bytes : bytes.subarray(from, from + n))
    written = (written + HEADER + pad + n) >>> 0
    Atomics.store(control, Slot.written, written | 0)
    // a reader about to wait sees this and does not; one already asleep sleeps on
    // until `wake`
    Atomics.add(control, Slot.signal, 1)
    return ending ? 1 : n
  }

  // waking costs a system call and a core: only a reader that said it sleeps is woken
  const wake = (): void => {
    Atomics.add(control, Slot.signal, 1)
    if (Atomics.load(control, Slot.asleep) === 1) Atomics.notify(control, Slot.signal)
  }

  const close = (): void => {
    Atomics.store(control, Slot.closing, 1)
    wake()
  }

  return { control, write, wake, close, position: () => written, used: () => (written - (Atomics.load(control, Slot.read) >>> 0)) >>> 0 }
}

// -------------------------------------------------------------------------------------
// reading
// -------------------------------------------------------------------------------------

/**
 * What a reader hands on: `bytes` of one side (`length` 0: that side ended).
 *
 * @since 0.1.0
 * @category reading
 */
export type RecordHandler = (side: Side, bytes: Buffer) => void

/**
 * The reader's end. `take` hands on every record written so far, in order, where it
 * lies in the ring (a record that wraps around the end in two pieces), frees its room
 * once the handler returns (then calls `freed` with the bytes now free), and returns the write position it
 * read up to. The bytes handed on are valid only until the handler returns. `wait` blocks the reader's thread until the writer writes or closes
 * (never call it on a thread with other work).
 *
 * @since 0.1.0
 * @category reading
 */
export interface RingReader {
  readonly control: Int32Array
  readonly take: (onRecord: RecordHandler, freed?: (free: number) => void) => number
  /** Whether the writer closed and every byte it wrote was taken. */
  readonly finished: () => boolean
  /** Blocks until the writer writes or closes, unless it already did since `take` (or `ms` pass). */
  readonly wait: (ms?: number) => 'ok' | 'not-equal' | 'timed-out'
}

/**
 * @since 0.1.0
 * @category reading
 */
export const ringReader = (memory: RingMemory): RingReader => {
  const control = new Int32Array(memory.control)
  // records are read where they lie, and their room freed once read
  const data = Buffer.from(memory.data)
  const capacity = data.length
  const mask = capacity - 1
  const byte = (at: number): number => data[at & mask] as number
  // read before looking at the counters, so a write or close after that look wakes `wait`
  let seen = Atomics.load(control, Slot.signal)

  const take = (onRecord: RecordHandler, freed?: (free: number) => void): number => {
    seen = Atomics.load(control, Slot.signal)
    let read = Atomics.load(control, Slot.read) >>> 0
    const written = Atomics.load(control, Slot.written) >>> 0
    while (read !== written) {
      const word = (byte(read) | (byte(read + 1) << 8) | (byte(read + 2) << 16) | (byte(read + 3) << 24)) >>> 0
      const length = word >>> 4
      const pad = (word >>> 1) & (WORD - 1)
      const side = (word & 1) as Side
      // a record longer than what was written is not one (only a writer that broke the
      // protocol could leave it): stop at what was written rather than read past it
      if (HEADER + pad + length > ((written - read) >>> 0)) {
        Atomics.store(control, Slot.read, written | 0)
        break
      }
      const at = (read + HEADER + pad) & mask
      if (length === 0) onRecord(side, EMPTY)
      else if (at + length <= capacity) onRecord(side, data.subarray(at, at + length))
      else {
        // a record that wraps around the end comes in two pieces
        onRecord(side, data.subarray(at, capacity))
        onRecord(side, data.subarray(0, length - (capacity - at)))
      }
      read = (read + HEADER + pad + length) >>> 0
      Atomics.store(control, Slot.read, read | 0)
      freed?.(capacity - (((Atomics.load(control, Slot.written) >>> 0) - read) >>> 0))
    }
    return written
  }

  const finished = (): boolean =>
    Atomics.load(control, Slot.closing) === 1 && Atomics.load(control, Slot.written) === Atomics.load(control, Slot.read)

  const wait = (ms?: number): 'ok' | 'not-equal' | 'timed-out' => {
    Atomics.store(control, Slot.asleep, 1)
    try {
      return Atomics.wait(control, Slot.signal, seen, ms)
    } finally {
      Atomics.store(control, Slot.asleep, 0)
    }
  }

  return { control, take, finished, wait }
}
