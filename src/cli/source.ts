/**
 * Where the proxy reads the host's bytes: a stream, or, when its stdin is a pipe or a
 * socket, the descriptor itself into a few buffers used over and over. Node's own
 * stream gives every read a fresh 64 KiB buffer; on the machines this was measured on,
 * reading such a buffer for the first time costs about 6 µs a page, ten times its copy,
 * and the audit reads every byte. A recycled buffer is read warm.
 *
 * @since 0.1.0
 */
import { fstatSync } from 'node:fs'
import type { OnReadOpts, SocketConstructorOpts } from 'node:net'
import { Socket } from 'node:net'
import type { Readable } from 'node:stream'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A source of chunks that may reuse a chunk's memory once it is released.
 *
 * @since 0.1.0
 * @category model
 */
export interface ChunkSource {
  readonly _tag: 'ChunkSource'
  /**
   * Starts the flow: each chunk goes to `onChunk` with `release`, to be called once
   * nothing reads its bytes any more (they may be overwritten after); `onEnd` comes
   * after the last chunk, or when the source fails.
   */
  readonly start: (onChunk: (chunk: Buffer, release: () => void) => void, onEnd: () => void) => void
  readonly pause: () => void
  readonly resume: () => void
  /** Stops reading for good; `onEnd` is not called. */
  readonly destroy: () => void
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const nothing = (): void => undefined

/** `f`, called at most once, and never after `cancelled()` says so. */
const endOnce = (f: () => void, cancelled: () => boolean): (() => void) => {
  let done = false
  return () => {
    if (done || cancelled()) return
    done = true
    f()
  }
}

/**
 * A stream as a source: each chunk is its own, so releasing it changes nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readableSource = (stream: Readable): ChunkSource => {
  let destroyed = false
  return {
    _tag: 'ChunkSource',
    start: (onChunk, onEnd) => {
      const end = endOnce(onEnd, () => destroyed)
      stream.on('data', (chunk: Buffer) => onChunk(chunk, nothing))
      stream.once('end', end)
      stream.once('error', end)
    },
    pause: () => void stream.pause(),
    resume: () => void stream.resume(),
    destroy: () => {
      destroyed = true
      stream.pause()
      stream.removeAllListeners('data')
      stream.destroy()
    },
  }
}

/** The size of each read: what Node's streams read at a time. */
const CHUNK_BYTES = 64 * 1024
/** Released buffers kept for reuse; more in flight are left to the collector once released. */
const KEPT = 16

/**
 * The pipe or socket `fd`, read into recycled buffers of `chunkBytes`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pipeSource = (fd: number, chunkBytes: number = CHUNK_BYTES): ChunkSource => {
  const free: Array<Buffer> = []
  const fresh = (): Buffer => free.pop() ?? Buffer.allocUnsafeSlow(chunkBytes)
  let socket: Socket | undefined
  let destroyed = false
  let paused = false
  return {
    _tag: 'ChunkSource',
    start: (onChunk, onEnd) => {
      const end = endOnce(onEnd, () => destroyed)
      // Node asks for the next buffer after each read is handed on. (`onread` is a
      // constructor option since Node 15.8; the type declarations list it for
      // `connect` only.)
      const options: SocketConstructorOpts & { readonly onread: OnReadOpts } = {
        fd,
        readable: true,
        writable: false,
        onread: {
          buffer: fresh,
          callback: (n, buf) => {
            const whole = buf as Buffer
            let released = false
            onChunk(whole.subarray(0, n), () => {
              if (released) return
              released = true
              if (free.length < KEPT) free.push(whole)
            })
            return !paused
          },
        },
      }
      const s = new Socket(options)
      socket = s
      s.once('end', end)
      s.once('error', end)
      if (paused) s.pause()
    },
    pause: () => {
      paused = true
      socket?.pause()
    },
    resume: () => {
      paused = false
      socket?.resume()
    },
    destroy: () => {
      destroyed = true
      socket?.destroy()
    },
  }
}

/**
 * How the command reads the host: `fd` itself when it is a pipe or a socket, else the
 * stream `fallback` gives (a file, a terminal).
 *
 * @since 0.1.0
 * @category constructors
 */
export const hostSource = (fd: number, fallback: () => Readable): ChunkSource => {
  try {
    const st = fstatSync(fd)
    if (st.isFIFO() || st.isSocket()) return pipeSource(fd)
  } catch {
    // not a descriptor this process can look at: the stream will say what is wrong
  }
  return readableSource(fallback())
}
