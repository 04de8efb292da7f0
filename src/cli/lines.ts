/**
 * Lines cut from a stream of bytes at each LF, for both commands. A line that came in
 * pieces is joined once its LF arrives; a line nobody wants is passed over without
 * being kept.
 *
 * @since 0.1.0
 */
import { isAscii } from 'node:buffer'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Where the lines go.
 *
 * @since 0.1.0
 * @category model
 */
export interface LineSink {
  /**
   * A whole line, without its LF (a CR before it is left in). The bytes may be a view
   * of a chunk: read them now, or keep the Buffer (chunks are never reused).
   */
  readonly line: (bytes: Buffer) => void
  /** A line longer than the limit, passed over without being kept: its length in bytes, without its LF. */
  readonly tooLong?: (length: number) => void
}

/**
 * @since 0.1.0
 * @category model
 */
export interface SplitOptions {
  /** Asked as each line starts (when its first byte, or its LF, arrives): a line it declines is skipped, not kept. */
  readonly wants?: () => boolean
  /** The longest line kept, in bytes: memory stays bounded by it, whatever the input. */
  readonly maxBytes?: number
}

/**
 * @since 0.1.0
 * @category model
 */
export interface LineSplitter {
  /** Cuts a chunk: every line it completes goes to the sink before `push` returns. */
  readonly push: (chunk: Buffer) => void
  /** The input ended: a last line without LF goes to the sink too. */
  readonly end: () => void
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const EMPTY = Buffer.alloc(0)
const LF = 0x0a
const always = (): boolean => true

/**
 * A splitter over `sink`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const splitLines = (sink: LineSink, { wants = always, maxBytes = Infinity }: SplitOptions = {}): LineSplitter => {
  let pieces: Array<Buffer> = []
  let length = 0
  // undefined: no line started; true: the line is kept; false: it is skipped
  let keeping: boolean | undefined
  let tooLong = false

  const finish = (): void => {
    if (keeping === true) sink.line(pieces.length === 0 ? EMPTY : pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, length))
    else if (tooLong) sink.tooLong?.(length)
    pieces = []
    length = 0
    keeping = undefined
    tooLong = false
  }

  return {
    push: (chunk) => {
      let start = 0
      while (start < chunk.length) {
        keeping ??= wants()
        const nl = chunk.indexOf(LF, start)
        const end = nl === -1 ? chunk.length : nl
        length += end - start
        if (keeping && length > maxBytes) {
          keeping = false
          tooLong = true
          pieces = []
        }
        if (keeping && end > start) pieces.push(chunk.subarray(start, end))
        if (nl === -1) return
        finish()
        start = nl + 1
      }
    },
    end: () => {
      if (keeping !== undefined) finish()
    },
  }
}

/**
 * The text of UTF-8 bytes. ASCII, which is most of JSON, is decoded as Latin-1: the
 * same text, and here about four times cheaper than Node's UTF-8 decoder, which cost
 * as much as `JSON.parse` of the line.
 *
 * @since 0.1.0
 * @category utils
 */
export const textOf = (bytes: Buffer): string => (isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'))
