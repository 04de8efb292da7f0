/**
 * Lines from a stream, cut from its bytes exactly as `readline` cuts them.
 *
 * @since 0.1.0
 */
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'

/**
 * What `readLines` reports: each line in order, then either the end of the input or
 * the error that stopped it (once; nothing is reported after either).
 *
 * @since 0.1.0
 * @category model
 */
export interface LineSink {
  readonly line: (text: string) => void
  readonly end: () => void
  readonly error: (e: unknown) => void
}

// Cuts a chunk at its line ends ("\n", "\r\n", a lone "\r"), from `from`: `line` gets
// each line's start and end, and what follows the last line end is returned.
// `find(code, from)` is the chunk's `indexOf`, for a byte or a UTF-16 code unit.
const cutLines = (find: (code: number, from: number) => number, from: number, line: (start: number, end: number) => void): number => {
  let start = from
  let nl = find(0x0a, start)
  let cr = find(0x0d, start)
  while (nl !== -1 || cr !== -1) {
    if (nl === -1 || (cr !== -1 && cr < nl)) {
      line(start, cr)
      start = cr + 1 === nl ? nl + 1 : cr + 1
    } else {
      line(start, nl)
      start = nl + 1
    }
    if (nl !== -1 && nl < start) nl = find(0x0a, start)
    if (cr !== -1 && cr < start) cr = find(0x0d, start)
  }
  return start
}

/**
 * Splits a stream into lines exactly as `readline` does with `crlfDelay: Infinity`,
 * holding no more than one line and one chunk.
 *
 * The same line ends: "\n", "\r\n" (also when a chunk ends between the two) and a
 * lone "\r". A last line without a line end is a line when it is not empty. The same
 * text: readline decodes the stream with a `StringDecoder` and never ends it, so an
 * incomplete character at the very end is dropped; here each line is decoded from
 * its own bytes (a line end is never inside a character, and the decoder gives what
 * V8's gives for the same bytes whole), and the very end with a `StringDecoder`. String
 * chunks are cut as they are.
 *
 * Readline decodes each chunk whole into one string and cuts it with a regular
 * expression: that cost about as much as the audit of what it read, and the chunk's
 * string, alive at each young-generation collection, was copied by each.
 *
 * @since 0.1.0
 * @category reading
 */
export const readLines = (input: Readable, sink: LineSink): void => new LineReader(input, sink).start()

// A class, not closures: its methods are the same functions in every run, so code
// optimised for one run stays right for the next. The chunks' own callbacks
// (for `cutLines`) are made per chunk, here, so they are the same code in every run.
class LineReader {
  // the start of a line whose end has not come yet, never holding a line end: text
  // from string chunks, then bytes, copied (the chunk is let go at once, as readline
  // lets it go) into one buffer that grows to the longest line and is used again
  private headText = ''
  private head = Buffer.allocUnsafe(0)
  private headLength = 0
  // the last chunk ended with "\r": a "\n" opening the next one ends nothing more
  private sawReturn = false
  private settled = false
  private readonly onData = (chunk: Uint8Array | string): void => {
    if (this.settled) return
    if (typeof chunk === 'string') this.onText(chunk)
    else this.onBytes(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
  }
  private readonly onEnd = (): void => this.end()
  // kept after settling: a stream that errs again must not throw for want of a listener
  private readonly onError = (e: unknown): void => this.fail(e)

  constructor(
    private readonly input: Readable,
    private readonly sink: LineSink,
  ) {}

  start(): void {
    this.input.on('error', this.onError)
    this.input.on('end', this.onEnd)
    this.input.on('data', this.onData)
    this.input.resume()
  }

  private keep(chunk: Buffer, start: number, end: number): void {
    const n = end - start
    if (this.headLength + n > this.head.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.head.length * 2, this.headLength + n, 1 << 12))
      this.head.copy(bigger, 0, 0, this.headLength)
      this.head = bigger
    }
    chunk.copy(this.head, this.headLength, start, end)
    this.headLength += n
  }

  private takeHead(): string {
    const text = this.headText
    this.headText = ''
    if (this.headLength === 0) return text
    const bytes = this.head.toString('utf8', 0, this.headLength)
    this.headLength = 0
    return text + bytes
  }

  private onBytes(chunk: Buffer): void {
    const from = this.sawReturn && chunk[0] === 0x0a ? 1 : 0
    const start = cutLines(
      (code, at) => chunk.indexOf(code, at),
      from,
      (a, b) => {
        if (this.headLength === 0 && this.headText === '') this.sink.line(chunk.toString('utf8', a, b))
        else {
          this.keep(chunk, a, b)
          this.sink.line(this.takeHead())
        }
      },
    )
    if (start < chunk.length) this.keep(chunk, start, chunk.length)
    this.sawReturn = chunk[chunk.length - 1] === 0x0d
  }

  private onText(chunk: string): void {
    if (this.headLength > 0) this.headText = this.takeHead()
    const from = this.sawReturn && chunk.charCodeAt(0) === 0x0a ? 1 : 0
    const start = cutLines(
      (code, at) => chunk.indexOf(code === 0x0a ? '\n' : '\r', at),
      from,
      (a, b) => {
        const part = chunk.slice(a, b)
        if (this.headText === '') this.sink.line(part)
        else {
          const whole = this.headText + part
          this.headText = ''
          this.sink.line(whole)
        }
      },
    )
    if (start < chunk.length) this.headText += chunk.slice(start)
    this.sawReturn = chunk.charCodeAt(chunk.length - 1) === 0x0d
  }

  private stop(): void {
    this.settled = true
    this.input.off('data', this.onData)
    this.input.off('end', this.onEnd)
  }

  private end(): void {
    if (this.settled) return
    this.stop()
    // as readline's decoder holds back an incomplete character at the end, and drops it
    const bytes = this.headLength === 0 ? '' : new StringDecoder('utf8').write(this.head.subarray(0, this.headLength))
    const last = this.headText + bytes
    this.headText = ''
    this.headLength = 0
    if (last.length > 0) this.sink.line(last)
    this.sink.end()
  }

  private fail(e: unknown): void {
    if (this.settled) return
    this.stop()
    this.input.pause()
    this.sink.error(e)
  }
}
