/**
 * The server side of stdio: JSON-RPC messages read from a host, one a line, and answers written back. It replaces
 * the SDK's `StdioServerTransport`, which closes the whole connection (and so ends the command) once a line passes
 * 10 MiB, and hands a line that is not a JSON-RPC message to `onerror` only, so the host's request is never
 * answered. Here memory stays bounded by the longest line kept, a line over the bound is skipped up to its line
 * break, and every line that cannot be served is answered with a JSON-RPC error (the request's id when it can be
 * read), said once to `onerror`, and the next line read.
 *
 * @since 0.1.0
 */
import type { Readable, Writable } from 'node:stream'
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import { cut } from '../kernel/describe.js'
import { own } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The longest line kept, in bytes: the SDK's own stdio bound (`STDIO_DEFAULT_MAX_BUFFER_SIZE`), so every message
 * a host could send before is still served.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_STDIO_LINE_BYTES = 10 * 1024 * 1024

/**
 * A JSON-RPC error answer to a line that cannot be served. `id` is `null` when the request's id cannot be read
 * (JSON-RPC 2.0 §5), which is why this is not the SDK's `JSONRPCMessage`.
 *
 * @since 0.1.0
 * @category model
 */
export interface Refusal {
  readonly jsonrpc: '2.0'
  readonly id: RequestId | null
  readonly error: { readonly code: number; readonly message: string }
}

/**
 * What one line holds: messages to serve, and answers to lines (or batch members) that cannot be served, with
 * the words that say why (for `onerror`; not yet escaped nor cut).
 *
 * @since 0.1.0
 * @category model
 */
export interface Decoded {
  readonly messages: ReadonlyArray<JSONRPCMessage>
  readonly refusals: ReadonlyArray<Refusal>
  readonly why: string | undefined
}

/** A line over the bound, as much of it as is kept to read its id from: its first and its last bytes. */
interface Skipped {
  readonly length: number
  readonly head: Buffer
  readonly tail: Buffer
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// as the SDK's Streamable HTTP transport bounds a batch (MAX_BATCH_SIZE)
const MAX_BATCH = 100

// how much of a line over the bound is kept at each end, to read its id from
const PEEK_BYTES = 256

// how much of a line that is not JSON the diagnostic quotes
const QUOTED = 80

const refusal = (id: RequestId | null, code: number, message: string): Refusal => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
})

// the SDK's RequestIdSchema: a string, or a number without a fractional part
const isRequestId = (u: unknown): u is RequestId => typeof u === 'string' || Number.isInteger(u)

/**
 * The id to answer an invalid message with: its own, when it is a valid id and the message is not a response. A
 * malformed response's id is one of the server's requests, in the server's numbering: answered under it, the host
 * would take the error for the answer to its own request of that number.
 */
const idToAnswer = (value: unknown): RequestId | null => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const id = own(value, 'id')
  const isResponse =
    !Object.hasOwn(value, 'method') && (Object.hasOwn(value, 'result') || Object.hasOwn(value, 'error'))
  return isRequestId(id) && !isResponse ? id : null
}

const idText = (id: RequestId | null): string => (id === null ? 'null' : JSON.stringify(id))

/** One JSON value of a line (the line, or a member of its batch): a message to serve, or its refusal. */
type Member =
  | { readonly _tag: 'Message'; readonly message: JSONRPCMessage }
  | { readonly _tag: 'Refused'; readonly refusal: Refusal }

const decodeValue = (value: unknown): Member => {
  const parsed = JSONRPCMessageSchema.safeParse(value)
  return parsed.success
    ? { _tag: 'Message', message: parsed.data }
    : {
        _tag: 'Refused',
        refusal: refusal(
          idToAnswer(value),
          ErrorCode.InvalidRequest,
          'Invalid Request: not a valid JSON-RPC 2.0 message',
        ),
      }
}

// the words for `onerror`: what the line was, how it was answered, under which ids
const said = (what: string, refusals: ReadonlyArray<Refusal>): string | undefined => {
  const [first] = refusals
  if (first === undefined) return undefined
  const ids = cut(refusals.map((r) => idText(r.id)).join(', '), QUOTED)
  return `${what}: answered ${first.error.code} (${first.error.message}), id ${ids}`
}

const refused = (what: string, answer: Refusal): Decoded => ({
  messages: [],
  refusals: [answer],
  why: said(what, [answer]),
})

/**
 * What a line says: a message, a batch of them (each member served or refused on its own, as the SDK's HTTP
 * transport serves a batch's members one by one), or why neither. Pure.
 *
 * @example
 * import { decodeLine } from './stdioServer.js'
 * assert.deepStrictEqual(decodeLine('{"jsonrpc":"1.0","id":3,"method":"ping"}').refusals, [
 *   { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: not a valid JSON-RPC 2.0 message' } },
 * ])
 * assert.deepStrictEqual(decodeLine('{not json').refusals, [
 *   { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: Invalid JSON' } },
 * ])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decodeLine = (line: string): Decoded => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    const quoted = JSON.stringify(cut(line, QUOTED))
    return refused(
      `a line that is not JSON (${quoted})`,
      refusal(null, ErrorCode.ParseError, 'Parse error: Invalid JSON'),
    )
  }
  if (Array.isArray(value) && (value.length === 0 || value.length > MAX_BATCH))
    return refused(
      `a batch of ${value.length} messages`,
      refusal(null, ErrorCode.InvalidRequest, `Invalid Request: a batch holds from 1 to ${MAX_BATCH} messages`),
    )
  const members = (Array.isArray(value) ? value : [value]).map(decodeValue)
  const refusals = members.flatMap((m) => (m._tag === 'Refused' ? [m.refusal] : []))
  return {
    messages: members.flatMap((m) => (m._tag === 'Message' ? [m.message] : [])),
    refusals,
    why: said(
      Array.isArray(value)
        ? `a batch of ${value.length} messages, ${refusals.length} of them not JSON-RPC 2.0`
        : 'a message that is not JSON-RPC 2.0',
      refusals,
    ),
  }
}

// `"id": 7` or `"id": "x"`
const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\\u0000-\u001f]|\\.)*")\s*`
// `{` and, if it comes first, `"jsonrpc": "2.0",`: what follows is a member of the line's own object
const OPEN = String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?`
// a request written as most are: its id, then its method
const ID_THEN_METHOD = new RegExp(`${OPEN}${ID},\\s*"method"\\s*:`)
// a request as the SDK's client writes it (`{ ...request, jsonrpc, id }`): its method first, its id last. A `"id"`
// after a comma, in valid JSON, opens a key or a string, never closes one; the `}` ending the line closes the
// line's own object
const METHOD_FIRST = new RegExp(`${OPEN}"method"\\s*:`)
const ID_LAST = new RegExp(String.raw`,\s*${ID}\}\s*$`)

/**
 * The id of a line too long to be kept, read from its first and last bytes only, when they show a request (a
 * response's id is in the server's numbering: see `idToAnswer`); `null` otherwise. Pure.
 */
const peekId = (skipped: Skipped): RequestId | null => {
  const head = skipped.head.toString('utf8')
  const found =
    ID_THEN_METHOD.exec(head)?.[1] ??
    (METHOD_FIRST.test(head) ? ID_LAST.exec(skipped.tail.toString('utf8'))?.[1] : undefined)
  // Stryker disable next-line ConditionalExpression: equivalent: JSON.parse(undefined) throws, answered null below
  if (found === undefined) return null
  try {
    const id: unknown = JSON.parse(found)
    return isRequestId(id) ? id : null
  } catch {
    return null
  }
}

/** The answer to a line over the bound, and the words that say so. Pure. */
const decodeSkipped = (skipped: Skipped, maxBytes: number): Decoded =>
  refused(
    `a line of ${skipped.length} bytes, over the ${maxBytes} a message may take, was skipped`,
    refusal(peekId(skipped), ErrorCode.InvalidRequest, `Invalid Request: a message is at most ${maxBytes} bytes`),
  )

// -------------------------------------------------------------------------------------
// lines
// -------------------------------------------------------------------------------------

const LF = 0x0a
const EMPTY = Buffer.alloc(0)

// the last PEEK_BYTES of `kept` then `more`, copied: no chunk is held
const lastBytes = (kept: Buffer, more: Buffer): Buffer =>
  Buffer.concat([kept, more.subarray(Math.max(0, more.length - PEEK_BYTES))]).subarray(-PEEK_BYTES)

/**
 * Splits chunks into lines at each LF, as `splitLines` of the command's `lines` module does (which this layer may
 * not import): a line split across chunks is joined once its LF arrives, and one over `maxBytes` is not buffered;
 * of that one only its first and last bytes are kept, to answer it under its id.
 */
const boundedLines = (
  maxBytes: number,
  sink: { readonly line: (bytes: Buffer) => void; readonly skipped: (line: Skipped) => void },
): ((chunk: Buffer) => void) => {
  let pieces: Array<Buffer> = []
  let length = 0
  let over: { head: Buffer; tail: Buffer } | undefined
  const finish = (): void => {
    if (over !== undefined) sink.skipped({ length, ...over })
    else sink.line(Buffer.concat(pieces, length))
    pieces = []
    length = 0
    over = undefined
  }
  return (chunk) => {
    // Stryker disable next-line EqualityOperator: equivalent: from a chunk's end, the piece is empty and no LF is found
    for (let start = 0; start < chunk.length;) {
      const nl = chunk.indexOf(LF, start)
      const end = nl === -1 ? chunk.length : nl
      const piece = chunk.subarray(start, end)
      length += piece.length
      if (over === undefined && length > maxBytes) {
        const all = [...pieces, piece]
        over = { head: Buffer.concat(all, Math.min(PEEK_BYTES, length)), tail: all.reduce(lastBytes, EMPTY) }
        // Stryker disable next-line ArrayDeclaration: equivalent: a line over the bound reads `over`, never its pieces
        pieces = []
      } else if (over !== undefined) over.tail = lastBytes(over.tail, piece)
      else pieces.push(piece)
      if (nl === -1) return
      finish()
      start = nl + 1
    }
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A server transport over `input` and `output` (a host's stdin and stdout). A line of more than `maxBytes` bytes
 * (default {@link MAX_STDIO_LINE_BYTES}) is skipped to its line break and answered -32600 (under its id when its
 * first and last bytes show a request: its id, then its method; or its method first and its id last); a line that is not JSON is answered -32700, and JSON that
 * is not a JSON-RPC 2.0 message -32600 (under its id when it has a valid one and is not a response), each with id
 * `null` otherwise; the members of a batch are served, or answered, one by one; a blank line is passed over. Each
 * line answered so is told to `onerror` once, in words not yet escaped nor cut. Closes itself when `input` ends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stdioServerTransport = (
  input: Readable,
  output: Writable,
  maxBytes: number = MAX_STDIO_LINE_BYTES,
): Transport => {
  let started = false
  let closed = false
  const write = (text: string): Promise<void> =>
    new Promise((resolve) => {
      if (output.write(text)) resolve()
      else output.once('drain', resolve)
    })
  const serve = (decoded: Decoded): void => {
    for (const r of decoded.refusals) void write(JSON.stringify(r) + '\n')
    if (decoded.why !== undefined) transport.onerror?.(new Error(decoded.why))
    for (const m of decoded.messages) {
      // a handler's throw is reported, and the rest of the input still read
      try {
        transport.onmessage?.(m)
      } catch (e) {
        transport.onerror?.(e instanceof Error ? e : new Error(String(e)))
      }
    }
  }
  const push = boundedLines(maxBytes, {
    // a blank line (a CR before the LF included) is no message, and is not answered
    line: (bytes) => {
      const text = bytes.toString('utf8')
      if (text.trim() !== '') serve(decodeLine(text))
    },
    skipped: (line) => serve(decodeSkipped(line, maxBytes)),
  })
  // Stryker disable next-line ConditionalExpression: equivalent when always true: a Buffer is copied (the cost)
  const onData = (chunk: Buffer | string): void => push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  const onError = (e: Error): void => transport.onerror?.(e)
  // the host closed its end: no more requests will come (a last line without its LF is not a message)
  const onEnd = (): void => void transport.close()
  const transport: Transport = {
    start: () => {
      if (started) return Promise.reject(new Error('this stdio transport is started already'))
      started = true
      input.on('data', onData)
      input.on('error', onError)
      input.once('end', onEnd)
      return Promise.resolve()
    },
    send: (message) => write(serializeMessage(message)),
    close: () => {
      if (closed) return Promise.resolve()
      closed = true
      input.off('data', onData)
      input.off('error', onError)
      input.off('end', onEnd)
      // as the SDK's transport: stdin is paused only when nothing else reads it
      if (input.listenerCount('data') === 0) input.pause()
      transport.onclose?.()
      return Promise.resolve()
    },
  }
  return transport
}
