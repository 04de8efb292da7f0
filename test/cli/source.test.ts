import { execFileSync } from 'node:child_process'
import { constants, mkdtempSync, openSync, rmSync } from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { ChunkSource } from '../../src/cli/source.js'
import { hostSource, pipeSource, readableSource } from '../../src/cli/source.js'

const dir = mkdtempSync(join(tmpdir(), 'toolstack-source-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// A named pipe opened at both ends in this process: the read end's descriptor, and a
// socket over the write end.
let fifos = 0
const fifo = (): { readonly fd: number; readonly writer: Socket } => {
  const path = join(dir, `p${fifos++}`)
  execFileSync('mkfifo', [path])
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = new Socket({ fd: openSync(path, constants.O_WRONLY | constants.O_NONBLOCK), readable: false, writable: true })
  return { fd, writer }
}

const writeAll = (writer: Socket, pieces: ReadonlyArray<Uint8Array>): void => {
  for (const p of pieces) writer.write(p)
  writer.end()
}

/**
 * Reads `source` to its end. Each chunk is read in full only when it is released: at
 * once, or after the next few chunks arrived (`late[i]` of them), as a sink still
 * writing it would. `early` releases each chunk as it arrives, before reading it: a
 * consumer that breaks the rule.
 */
const drain = (source: ChunkSource, late: ReadonlyArray<number>, early = false): Promise<Buffer> =>
  new Promise((resolve) => {
    const out: Array<Buffer> = []
    const held: Array<{ readonly chunk: Buffer; readonly release: () => void; due: number }> = []
    let i = 0
    const settle = (all: boolean): void => {
      for (const h of held) h.due--
      while (held.length > 0 && (all || (held[0]?.due ?? 0) < 0)) {
        const h = held.shift() as (typeof held)[number]
        out.push(Buffer.from(h.chunk))
        h.release()
      }
    }
    source.start(
      (chunk, release) => {
        if (early) release()
        held.push({ chunk, release, due: late.length === 0 ? 0 : (late[i++ % late.length] ?? 0) })
        settle(false)
      },
      () => {
        settle(true)
        resolve(Buffer.concat(out))
      },
    )
  })

// pieces from a few bytes to many reads' worth (`size: 'max'`: lengths spread over the
// whole range, not only small ones)
const data = fc.array(fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 100 }), fc.uint8Array({ minLength: 1, maxLength: 100_000, size: 'max' })), { minLength: 1, maxLength: 12 })
const lateness = fc.array(fc.nat(4), { maxLength: 8 })

describe('pipeSource', () => {
  it('hands over every byte in order, however long each chunk is held before it is released', async () => {
    await fc.assert(
      fc.asyncProperty(data, lateness, async (pieces, late) => {
        const { fd, writer } = fifo()
        const got = drain(pipeSource(fd, 4096), late)
        writeAll(writer, pieces)
        expect((await got).equals(Buffer.concat(pieces))).toBe(true)
      }),
      { numRuns: 30 },
    )
  })

  it('the property fails for a consumer that releases a chunk before it has read it', async () => {
    const result = await fc.check(
      fc.asyncProperty(data, lateness, async (pieces, late) => {
        const { fd, writer } = fifo()
        const got = drain(pipeSource(fd, 4096), late, true)
        writeAll(writer, pieces)
        expect((await got).equals(Buffer.concat(pieces))).toBe(true)
      }),
      // failing is all this asks: no shrinking
      { numRuns: 30, endOnFailure: true },
    )
    expect(result.failed).toBe(true)
  })

  it('reads into the same few buffers over and over', async () => {
    const { fd, writer } = fifo()
    const memories = new Set<ArrayBufferLike>()
    let total = 0
    const done = new Promise<void>((resolve) =>
      pipeSource(fd, 4096).start(
        (chunk, release) => {
          memories.add(chunk.buffer)
          total += chunk.length
          release()
        },
        resolve,
      ),
    )
    writeAll(writer, Array.from({ length: 200 }, () => new Uint8Array(4096).fill(7)))
    await done
    expect(total).toBe(200 * 4096)
    expect(memories.size).toBeLessThanOrEqual(3)
  })

  it('stops reading while paused and goes on when resumed', async () => {
    const { fd, writer } = fifo()
    const source = pipeSource(fd, 4096)
    let total = 0
    source.pause()
    const done = new Promise<void>((resolve) =>
      source.start(
        (chunk, release) => {
          total += chunk.length
          release()
        },
        resolve,
      ),
    )
    writeAll(writer, [new Uint8Array(10_000)])
    await new Promise((r) => setTimeout(r, 50))
    expect(total).toBe(0)
    source.resume()
    await done
    expect(total).toBe(10_000)
  })
})

describe('readableSource and hostSource', () => {
  it('a stream: every chunk in order, then the end; an error ends it too', async () => {
    const s = new PassThrough()
    const got = drain(readableSource(s), [2, 0, 1])
    s.write('ab')
    s.write('cd')
    s.end('e')
    expect((await got).toString()).toBe('abcde')
    const failing = new PassThrough()
    const ended = drain(readableSource(failing), [])
    failing.write('x')
    failing.destroy(new Error('gone'))
    expect((await ended).toString()).toBe('x')
  })

  it('reads a pipe from its descriptor, and anything else from the stream it is given', async () => {
    const { fd, writer } = fifo()
    let fellBack = 0
    const fromPipe = hostSource(fd, () => {
      fellBack++
      return new PassThrough()
    })
    const got = drain(fromPipe, [])
    writeAll(writer, [Buffer.from('through the pipe')])
    expect((await got).toString()).toBe('through the pipe')
    expect(fellBack).toBe(0)
    const file = openSync(join(dir, 'plain-file'), 'w')
    const stream = new PassThrough()
    const fromFile = hostSource(file, () => stream)
    const viaStream = drain(fromFile, [])
    stream.end('from the stream')
    expect((await viaStream).toString()).toBe('from the stream')
  })
})
