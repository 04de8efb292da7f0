import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RingMemory, Side } from '../../src/cli/ring.js'
import { newRingMemory, ringReader, ringWriter, Slot } from '../../src/cli/ring.js'

// A writer that writes everything it is given, through the ring, as room allows, with
// the reader taking whenever `takeAt` says so (or when the writer is stuck): what the
// reader sees, per side, with the ends it saw.
type Op = readonly ['write', Side, Uint8Array] | readonly ['end', Side] | readonly ['take']

const replay = (memory: RingMemory, ops: ReadonlyArray<Op>): Record<Side, Array<number | 'end'>> => {
  const w = ringWriter(memory)
  const r = ringReader(memory)
  const got: Record<Side, Array<number | 'end'>> = { 0: [], 1: [] }
  const take = (): void => {
    r.take((side, bytes) => {
      if (bytes.length === 0) got[side].push('end')
      else for (const b of bytes) got[side].push(b)
    })
  }
  for (const op of ops) {
    if (op[0] === 'take') {
      take()
      continue
    }
    const bytes = op[0] === 'write' ? op[2] : new Uint8Array(0)
    const side = op[1]
    let from = 0
    for (let stuck = 0; ; ) {
      const n = w.write(side, bytes, from)
      from += n
      if (bytes.length === 0 ? n === 1 : from >= bytes.length) break
      if (n === 0) {
        if (++stuck > 2) throw new Error('no room after a take')
        take()
      }
    }
  }
  take()
  return got
}

const expected = (ops: ReadonlyArray<Op>): Record<Side, Array<number | 'end'>> => {
  const out: Record<Side, Array<number | 'end'>> = { 0: [], 1: [] }
  for (const op of ops) {
    if (op[0] === 'write') out[op[1]].push(...op[2])
    else if (op[0] === 'end') out[op[1]].push('end')
  }
  return out
}

const side = fc.constantFrom<Side>(0, 1)
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(fc.constant('write' as const), side, fc.uint8Array({ minLength: 1, maxLength: 100 })) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('end' as const), side) },
  { weight: 3, arbitrary: fc.constant(['take'] as const) },
)
const capacity = fc.constantFrom(16, 32, 64, 256)

describe('the ring', () => {
  it('hands over every byte of each side, in order, with its ends, whatever the sizes and the room', () => {
    fc.assert(
      fc.property(capacity, fc.array(op, { maxLength: 60 }), (cap, ops) => {
        expect(replay(newRingMemory(cap), ops)).toEqual(expected(ops))
      }),
    )
  })

  it('the property fails for a writer that forgets what the reader has not read yet', () => {
    // the broken writer believes the ring is empty whenever it writes
    const broken = (memory: RingMemory, ops: ReadonlyArray<Op>): ReturnType<typeof replay> => {
      const control = new Int32Array(memory.control)
      const w = ringWriter(memory)
      const r = ringReader(memory)
      const got: Record<Side, Array<number | 'end'>> = { 0: [], 1: [] }
      for (const o of ops) {
        if (o[0] === 'take') {
          r.take((s, bytes) => (bytes.length === 0 ? got[s].push('end') : got[s].push(...bytes)))
          continue
        }
        const bytes = o[0] === 'write' ? o[2] : new Uint8Array(0)
        let from = 0
        while (bytes.length === 0 ? from === 0 : from < bytes.length) {
          // pretend everything written was read
          const saved = Atomics.load(control, Slot.read)
          Atomics.store(control, Slot.read, Atomics.load(control, Slot.written))
          const n = w.write(o[1], bytes, from)
          Atomics.store(control, Slot.read, saved)
          from += n
        }
      }
      r.take((s, bytes) => (bytes.length === 0 ? got[s].push('end') : got[s].push(...bytes)))
      return got
    }
    const out = fc.check(
      fc.property(capacity, fc.array(op, { maxLength: 60 }), (cap, ops) => {
        expect(broken(newRingMemory(cap), ops)).toEqual(expected(ops))
      }),
    )
    expect(out.failed).toBe(true)
  })

  // `bytes` at `offset` in a buffer of their own: where they start, modulo a word,
  // decides the padding before them in the ring
  const at = (offset: number, ...bytes: ReadonlyArray<number>): Uint8Array => {
    const b = new Uint8Array(offset + bytes.length)
    b.set(bytes, offset)
    return b.subarray(offset)
  }

  it('writes nothing when not even a header and a byte fit, and takes a record that wraps around the end', () => {
    const memory = newRingMemory(16)
    const w = ringWriter(memory)
    const r = ringReader(memory)
    // bytes at 4 mod 8 go right after the header at 0: no padding
    expect(w.write(0, at(4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0)).toBe(10) // 14 of 16
    expect(w.write(1, at(2, 1), 0)).toBe(0) // 2 left: no room for header + 1
    const seen: Array<readonly [Side, ReadonlyArray<number>]> = []
    r.take((s, b) => seen.push([s, [...b]]))
    // the header wraps around the end; the bytes follow it at 2
    expect(w.write(1, at(2, 21, 22, 23, 24, 25, 26, 27), 0)).toBe(7)
    r.take((s, b) => seen.push([s, [...b]]))
    expect(seen).toEqual([
      [0, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
      [1, [21, 22, 23, 24, 25, 26, 27]],
    ])
  })

  it('puts the bytes at the address they came from, modulo 8, so that copying them goes a word at a time', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(15), fc.integer({ min: 1, max: 40 })), { maxLength: 30 }), (writes) => {
        const memory = newRingMemory(64)
        const w = ringWriter(memory)
        const r = ringReader(memory)
        for (const [offset, length] of writes) {
          const bytes = at(offset, ...Array.from({ length }, (_, i) => i))
          let from = 0
          while (from < bytes.length) {
            const n = w.write(0, bytes, from)
            if (n === 0) {
              r.take(() => undefined)
              continue
            }
            let next = from
            from += n
            r.take((_, got) => {
              // a record that wraps around the end comes in two pieces, the second at 0;
              // the first starts where it came from, modulo 8
              if (next === from - n) expect((got.byteOffset - (bytes.byteOffset + next)) & 7).toBe(0)
              expect([...got]).toEqual([...bytes.subarray(next, next + got.length)])
              next += got.length
            })
            expect(next).toBe(from)
          }
        }
      }),
    )
  })

  it('counts past 2^32 bytes without losing track (positions are modulo 2^32)', () => {
    const memory = newRingMemory(64)
    const control = new Int32Array(memory.control)
    // as if 2^32 − 10 bytes had gone through already
    Atomics.store(control, Slot.written, -10)
    Atomics.store(control, Slot.read, -10)
    const w = ringWriter(memory)
    const r = ringReader(memory)
    const got: Array<number> = []
    for (let i = 0; i < 20; i++) {
      expect(w.write(0, Uint8Array.of(i, i + 1, i + 2), 0)).toBe(3)
      r.take((_, b) => got.push(...b))
    }
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => [i, i + 1, i + 2]).flat())
  })

  it('rejects a capacity that is not a power of two at construction, naming it', () => {
    expect(() => newRingMemory(100)).toThrow(TypeError)
    expect(() => newRingMemory(100)).toThrow(/power of two.*100/)
    expect(() => newRingMemory(8)).toThrow(TypeError)
  })

  it('is finished only once closed and every byte was taken; a write or a close after a take keeps the reader from waiting', () => {
    const memory = newRingMemory(32)
    const w = ringWriter(memory)
    const r = ringReader(memory)
    w.write(0, Uint8Array.of(1), 0)
    r.take(() => undefined)
    // nothing new since the take: waiting times out
    expect(r.wait(20)).toBe('timed-out')
    w.write(0, Uint8Array.of(2), 0)
    expect(r.wait(5000)).not.toBe('timed-out')
    expect(r.finished()).toBe(false)
    r.take(() => undefined)
    w.close()
    expect(r.wait(5000)).not.toBe('timed-out')
    expect(r.finished()).toBe(true)
  })
})
