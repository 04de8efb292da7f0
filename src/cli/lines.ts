/**
 * Lines cut from a stream of bytes at each LF, for both commands: a line that came in
 * pieces is joined once its LF arrives; a line nobody wants, or longer than the limit,
 * is passed over without being kept.
 *
 * @since 0.1.0
 */
import { isAscii } from 'node:buffer'

/** @since 0.1.0 */
export interface LineSink {
  /** A whole line, without its LF (a CR before it is left in): a view of a chunk, which is never reused. */
  readonly line: (bytes: Buffer) => void
  /** A line longer than the limit, not kept: its length in bytes, without its LF. */
  readonly tooLong?: (length: number) => void
}

/** @since 0.1.0 */
export interface SplitOptions {
  /** Asked as each line starts (its first byte, or its LF, arrives): a line it declines is not kept. */
  readonly wants?: () => boolean
  /** The longest line kept, in bytes: memory stays bounded by it, whatever the input. */
  readonly maxBytes?: number
}

/** @since 0.1.0 */
export interface LineSplitter {
  /** Cuts a chunk: every line it completes goes to the sink before `push` returns. */
  readonly push: (chunk: Buffer) => void
  /** The input ended: a last line without LF goes to the sink too. */
  readonly end: () => void
}

const EMPTY = Buffer.alloc(0)
const LF = 0x0a
const always = (): boolean => true

/** A splitter over `sink`. @since 0.1.0 */
export const splitLines = (
  sink: LineSink,
  { wants = always, maxBytes = Infinity }: SplitOptions = {},
): LineSplitter => {
  let pieces: Array<Buffer> = []
  let length = 0
  // undefined: no line started; true: the line is kept; false: it is not
  let keeping: boolean | undefined
  let tooLong = false

  const finish = (): void => {
    if (keeping === true)
      sink.line(
        pieces.length === 0 ? EMPTY : pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, length),
      )
    else if (tooLong) sink.tooLong?.(length)
    pieces = []
    length = 0
    keeping = undefined
    tooLong = false
  }

  return {
    push: (chunk) => {
      for (let start = 0; start < chunk.length;) {
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
 * The text of UTF-8 bytes. ASCII, most of JSON, is decoded as Latin-1: the same text,
 * about four times cheaper here than Node's UTF-8 decoder, which cost as much as
 * `JSON.parse` of the line.
 *
 * @since 0.1.0
 */
export const textOf = (bytes: Buffer): string => (isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'))
