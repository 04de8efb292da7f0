/**
 * Records read from a recorded session: JSON Lines, or one JSON document.
 *
 * @since 0.1.0
 */
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { splitLines, textOf } from './lines.js'
import { describeError } from './text.js'

/** What a reader reports: a parsed record, or a problem at a line (`null`: the input as a whole). @since 0.1.0 */
export interface RecordSink {
  readonly record: (value: unknown, line: number | null) => void
  readonly problem: (line: number | null, message: string) => void
}

/** Where `readTextLines` puts what it reads. @since 0.1.0 */
export interface TextLineSink {
  /** Receives a line of text; returning `false` stops reading (the rest of the input is not read). */
  readonly line: (text: string) => boolean | void
  /** Called for a line over the limit (skipped) with its length in bytes. */
  readonly tooLong: (length: number) => void
}

const CR = 0x0d

/**
 * Splits a byte stream into text lines as `readline` does (`crlfDelay: Infinity`): at "\n", "\r\n"
 * and a lone "\r"; a last line without a line end counts when it is not empty, and an incomplete
 * character at the end is dropped, as readline's decoder drops it. Each line is decoded from its own
 * bytes (a line end is never inside a character). A line of more than `maxBytes` bytes is skipped.
 *
 * @since 0.1.0
 */
export const readTextLines = (input: Readable, sink: TextLineSink, maxBytes = Infinity): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    // a stream that already ended emits no second `end`: waiting for one would leave the promise pending, and
    // Node would exit once nothing else is left to do (as it did for stdin named twice)
    if (input.readableEnded) return resolve()
    // nor does one that was closed before its end (stopped early, or destroyed): what it held was not all read
    if (input.destroyed) return reject(new Error('the input was closed before its end'))
    let last = false
    let stopped = false
    const emit = (text: string): void => {
      if (!stopped && sink.line(text) === false) stopped = true
    }
    const line = (bytes: Buffer): void => {
      let text = last ? new StringDecoder('utf8').write(bytes) : textOf(bytes)
      if (!bytes.includes(CR)) return last && text === '' ? undefined : emit(text)
      if (text.endsWith('\r')) text = text.slice(0, -1)
      for (const part of text.split('\r')) emit(part)
    }
    const splitter = splitLines({ line, tooLong: (length) => void (stopped || sink.tooLong(length)) }, { maxBytes })
    const onData = (chunk: Buffer | Uint8Array | string): void => {
      splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array))
      if (!stopped) return
      input.off('data', onData)
      input.destroy()
      resolve()
    }
    input.on('data', onData)
    input.once('end', () => {
      last = true
      try {
        splitter.end()
        resolve()
      } catch (e) {
        reject(e)
      }
    })
    // `on`, not `once`: a stream that emits a second error must still find a listener, or it throws
    input.on('error', (e) => {
      input.off('data', onData)
      reject(e)
    })
    // a close with no end or error before it (the stream destroyed by its owner) would leave the promise pending;
    // after an end, an error or a stop the promise is settled already, and this changes nothing
    input.once('close', () => reject(new Error('the input was closed before its end')))
  })

type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

const tryParse = (text: string): Parsed => {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (e) {
    return { ok: false, message: describeError(e) }
  }
}

const startsLikeRecord = (line: string): boolean => line.startsWith('{') || line.startsWith('[')

// JSON.parse reports a character position; add the line number, which a person can go to.
const withLine = (message: string, text: string): string => {
  const m = /position (\d+)/.exec(message)
  if (m === null) return message
  const pos = Number(m[1])
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) line++
  return `${message} (line ${line})`
}

/**
 * Reads records from a stream, holding one line at a time once it knows the input is JSON Lines, and
 * never more than about `maxBytes` of it.
 *
 * When the first non-blank line parses on its own, the input is JSON Lines. Otherwise lines are held
 * until either two more lines starting with `{` or `[` parse on their own (JSON Lines with a bad first
 * record: the held lines are replayed as such), or the input ends and the held text is parsed as one
 * JSON document. A document that does not parse is replayed as JSON Lines when any of its lines parses
 * on its own, and is one problem otherwise; so is held text that outgrows `maxBytes`, and then the rest
 * of the input is not read. A line longer than `maxBytes` is a problem at its line, and since no document
 * of at most `maxBytes` holds it, the input is JSON Lines from then on: the lines held before it are
 * replayed as such (each bad one a problem) and the rest is read.
 *
 * @since 0.1.0
 */
export const readRecords = (input: Readable, sink: RecordSink, maxBytes = Infinity): Promise<void> => {
  // done: the input was abandoned and is not read further
  let mode: 'start' | 'lines' | 'held' | 'done' = 'start'
  let lineNo = 0
  let held: Array<string> = []
  let heldFrom = 1
  let heldLength = 0
  let standalone = 0

  // parse before testing for blank: a blank line never parses, and most lines are not blank
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

  // held text over the limit for one document: JSON Lines after all when a held line parses on its
  // own; otherwise the input is abandoned
  const outgrown = (): boolean => {
    const jsonLines = held.some((l) => startsLikeRecord(l) && tryParse(l).ok)
    mode = jsonLines ? 'lines' : 'done'
    if (jsonLines) return (replayHeld(), true)
    held = []
    sink.problem(
      null,
      `neither JSON Lines nor a JSON document of at most ${maxBytes} bytes; the rest of it was not read`,
    )
    return false
  }

  // A line over the limit: no document of at most maxBytes holds it, so the input is JSON Lines (with a bad
  // record here), never a document to give up on; the held lines before it are records of their own.
  const tooLong = (length: number): void => {
    const n = ++lineNo
    if (mode === 'done') return
    const wasHeld = mode === 'held'
    mode = 'lines'
    if (wasHeld) replayHeld()
    sink.problem(n, `a line of ${length} bytes, longer than --max-line-bytes (${maxBytes}): not read`)
  }

  const line = (raw: string): boolean => {
    if (mode === 'done') return false
    const n = ++lineNo
    const text = n === 1 && raw.startsWith('\ufeff') ? raw.slice(1) : raw
    if (mode === 'lines') return (asLine(text, n), true)
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
