/**
 * Splits a byte stream into lines at each LF (for `audit` and `proxy`): a line split across chunks is
 * joined once its LF arrives; a line the caller does not want, or one over the limit, is skipped
 * without being buffered.
 *
 * @since 0.1.0
 */
import { isAscii } from 'node:buffer'

/** @since 0.1.0 */
export interface LineSink {
  /** Receives a whole line without its LF (a CR before it is kept); may be a view of a chunk (never reused). */
  readonly line: (bytes: Buffer) => void
  /** Called for a line over the limit (not buffered) with its length in bytes, without its LF. */
  readonly tooLong?: (length: number) => void
}

/** @since 0.1.0 */
export interface SplitOptions {
  /** Called as each line starts (its first byte or its LF arrives); a line it declines is not buffered. */
  readonly wants?: () => boolean
  /** The longest line buffered, in bytes: memory stays bounded by it, whatever the input. */
  readonly maxBytes?: number
}

/** @since 0.1.0 */
export interface LineSplitter {
  /** Splits a chunk: every line it completes is passed to the sink before `push` returns. */
  readonly push: (chunk: Buffer) => void
  /** Ends the input: a last line without LF is passed to the sink too. */
  readonly end: () => void
}

const EMPTY = Buffer.alloc(0)
const LF = 0x0a
const always = (): boolean => true

/** Returns a splitter that passes lines to `sink`. @since 0.1.0 */
export const splitLines = (
  sink: LineSink,
  { wants = always, maxBytes = Infinity }: SplitOptions = {},
): LineSplitter => {
  let pieces: Array<Buffer> = []
  let length = 0
  // undefined: no line started; true: the line is buffered; false: it is skipped
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
 * Decodes UTF-8 bytes. Pure ASCII (most JSON) is decoded as Latin-1: the same text, about four times
 * faster than Node's UTF-8 decoder, which cost as much as `JSON.parse` of the line.
 *
 * @since 0.1.0
 */
export const textOf = (bytes: Buffer): string => (isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'))
