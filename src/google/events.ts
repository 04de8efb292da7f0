/**
 * Server-sent events as `streamGenerateContent?alt=sse` frames them, read as they arrive. Internal to
 * toolstack/google (not re-exported): the SDK parses its own copy; the audit reads a second one, and the SDK
 * offers no hook that hands over its parsed chunks.
 *
 * @since 0.1.0
 */

/**
 * The `data:` payloads of the complete server-sent events at the start of `buffer`, and what is left of it
 * (an event not yet complete). Events end with a blank line (`\n\n`, `\r\n\r\n` or `\r\r`), as the SDK reads
 * them.
 *
 * @example
 * import { splitEvents } from './events.js'
 * assert.deepStrictEqual(splitEvents('data: {"a":1}\r\n\r\ndata: {"b"'), [['{"a":1}'], 'data: {"b"'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const splitEvents = (buffer: string): readonly [ReadonlyArray<string>, string] => {
  const data: Array<string> = []
  const events = buffer.split(/\r\n\r\n|\n\n|\r\r/)
  const rest = events.pop() as string // split gives at least one piece, '' for an empty buffer
  for (const event of events)
    for (const line of event.split(/\r\n|\n|\r/)) if (line.startsWith('data:')) data.push(line.slice(5).trim())
  return [data, rest]
}
