/**
 * Records read from a recorded session: JSON Lines, or one JSON document.
 *
 * @since 0.1.0
 */
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { splitLines, textOf } from './lines.js'
import { describeError } from './text.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a reader reports: a parsed record, or a problem at a line (`null`: the input as
 * a whole).
 *
 * @since 0.1.0
 * @category model
 */
export interface RecordSink {
  readonly record: (value: unknown, line: number | null) => void
  readonly problem: (line: number | null, message: string) => void
}

// -------------------------------------------------------------------------------------
// lines
// -------------------------------------------------------------------------------------

const CR = 0x0d

/**
 * Where `readTextLines` puts what it reads.
 *
 * @since 0.1.0
 * @category model
 */
export interface TextLineSink {
  /** A line of text; `false` stops the reading (the rest of the input is not read). */
  readonly line: (text: string) => boolean | void
  /** A line longer than the limit, not read: its length in bytes. */
  readonly tooLong: (length: number) => void
}

/**
 * The text lines of a stream, cut as `readline` cuts them (with `crlfDelay: Infinity`):
 * at "\n", "\r\n" and a lone "\r"; a last line without a line end counts when it is not
 * empty, and an incomplete character at the very end is dropped, as readline's
 * decoder drops it. Each line is decoded from its own bytes: a line end is never
 * inside a character. A line of more than `maxBytes` bytes up to its "\n" is not kept.
 *
 * @since 0.1.0
 * @category reading
 */
export const readTextLines = (input: Readable, sink: TextLineSink, maxBytes = Infinity): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    let last = false
    let stopped = false
    const say = (text: string): void => {
      if (!stopped && sink.line(text) === false) stopped = true
    }
    const splitter = splitLines(
      {
        line: (bytes) => {
          let text = last ? new StringDecoder('utf8').write(bytes) : textOf(bytes)
          if (bytes.includes(CR)) {
            if (text.endsWith('\r')) text = text.slice(0, -1)
            for (const part of text.split('\r')) say(part)
          } else if (!last || text !== '') say(text)
        },
        tooLong: (length) => {
          if (!stopped) sink.tooLong(length)
        },
      },
      { maxBytes },
    )
    // a stream with an encoding gives strings, which may end inside a surrogate pair
    let high = ''
    const onData = (chunk: Uint8Array | string): void => {
      if (typeof chunk !== 'string') splitter.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      else {
        const text = high + chunk
        high = /[\ud800-\udbff]$/.test(text) ? text.slice(-1) : ''
        splitter.push(Buffer.from(high === '' ? text : text.slice(0, -1)))
      }
      if (stopped) {
        input.off('data', onData)
        input.destroy()
        resolve()
      }
    }
    input.on('data', onData)
    input.once('end', () => {
      if (high !== '') splitter.push(Buffer.from(high))
      last = true
      try {
        splitter.end()
        resolve()
      } catch (e) {
        reject(e)
      }
    })
    // kept after the first: a stream that errs again must not throw for want of a listener
    input.on('error', (e) => {
      input.off('data', onData)
      reject(e)
    })
  })

// -------------------------------------------------------------------------------------
// records
// -------------------------------------------------------------------------------------

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

const tryParse = (text: string): Parsed => {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (e) {
    return { ok: false, message: describeError(e) }
  }
}

const startsLikeRecord = (line: string): boolean => line.startsWith('{') || line.startsWith('[')

// JSON.parse's message names a character position; a line number is what a person
// can go to.
const withLine = (message: string, text: string): string => {
  const m = /position (\d+)/.exec(message)
  if (m === null) return message
  const pos = Number(m[1])
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) line++
  return `${message} (line ${line})`
}

/**
 * Reads records from a stream, holding no more than one line at a time once it knows
 * the input is JSON Lines, and never more than about `maxBytes` of it.
 *
 * The decision: when the first non-blank line parses on its own, the input is JSON
 * Lines. Otherwise lines are held until either two more lines that begin with `{` or
 * `[` parse on their own (then it is JSON Lines with a bad first record, and the held
 * lines are replayed as such), or the input ends and the held text is parsed as one
 * JSON document. A document that does not parse is replayed as JSON Lines when any of
 * its lines parses on its own, and is one problem otherwise; so is held text that
 * outgrows `maxBytes`, and then the rest of the input is not read. A line longer than
 * `maxBytes` is a problem at its line.
 *
 * @since 0.1.0
 * @category reading
 */
export const readRecords = (input: Readable, sink: RecordSink, maxBytes = Infinity): Promise<void> => {
  let mode: 'start' | 'lines' | 'held' = 'start'
  let lineNo = 0
  let held: Array<string> = []
  let heldFrom = 1
  let heldLength = 0
  let standalone = 0

  // parsed first: a blank line never parses, and most lines are not blank
  const asLine = (text: string, n: number): void => {
    let value: unknown
    try {
      value = JSON.parse(text) as unknown
    } catch (e) {
      if (text.trim() !== '') sink.problem(n, `not valid JSON (${describeError(e)})`)
      return
    }
    sink.record(value, n)
  }

  const replayHeld = (): void => {
    const lines = held
    held = []
    lines.forEach((text, i) => asLine(text, heldFrom + i))
  }

  // held text that cannot be one document within the limit: JSON Lines after all when
  // a held line parses on its own; otherwise the input is given up
  const outgrown = (): boolean => {
    mode = 'lines'
    if (held.some((l) => startsLikeRecord(l) && tryParse(l).ok)) return void replayHeld(), true
    held = []
    sink.problem(null, `neither JSON Lines nor a JSON document of at most ${maxBytes} bytes; the rest of it was not read`)
    return false
  }

  const tooLong = (length: number): void => {
    const n = ++lineNo
    if (mode === 'held' && !outgrown()) return
    sink.problem(n, `a line of ${length} bytes, longer than --max-line-bytes (${maxBytes}): not read`)
  }

  const line = (raw: string): boolean => {
    const n = ++lineNo
    const text = n === 1 && raw.startsWith('\ufeff') ? raw.slice(1) : raw
    if (mode === 'lines') return asLine(text, n), true
    if (mode === 'held') {
      held.push(text)
      heldLength += text.length + 1
      if (startsLikeRecord(text) && tryParse(text).ok && ++standalone >= 2) {
        mode = 'lines'
        replayHeld()
      } else if (heldLength > maxBytes) return outgrown()
      return true
    }
    if (text.trim() === '') return true
    const p = tryParse(text)
    if (p.ok) {
      mode = 'lines'
      sink.record(p.value, n)
    } else {
      mode = 'held'
      heldFrom = n
      held.push(text)
      heldLength = text.length + 1
    }
    return true
  }

  const end = (): void => {
    if (mode !== 'held') return
    const text = held.join('\n')
    const p = tryParse(text)
    if (p.ok) sink.record(p.value, null)
    else if (held.some((l) => startsLikeRecord(l) && tryParse(l).ok)) replayHeld()
    else sink.problem(null, `neither one JSON document nor JSON Lines: ${withLine(p.message, text)}`)
    held = []
  }

  return readTextLines(input, { line, tooLong }, maxBytes).then(end)
}
