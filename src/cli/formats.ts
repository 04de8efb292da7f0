/**
 * The request bodies `toolstack audit` reads, with the format detected per record: OpenAI chat
 * completions, OpenAI Responses and Anthropic Messages. Each is read into one `Request`: the calls it
 * carries, and a tool's declarations in the OpenAI chat shape the audit's steps expect.
 *
 * @since 0.1.0
 */
import { cut, idText, isRecord, kindOf, own } from './text.js'

/** @since 0.1.0 */
export type Format = 'chat' | 'responses' | 'anthropic'

/** @since 0.1.0 */
export const FORMAT_NAMES: Readonly<Record<Format, string>> = {
  chat: 'OpenAI chat completions',
  responses: 'OpenAI Responses',
  anthropic: 'Anthropic Messages',
}

/** Called with one call as recorded: `args` is a JSON string or an object. @since 0.1.0 */
export type CallVisitor = (id: string, name: unknown, args: unknown) => void

/** @since 0.1.0 */
export interface Request {
  readonly format: Format
  /** Visits each call, in order (a visitor rather than an array: a request repeats every earlier call). */
  readonly calls: (visit: CallVisitor) => void
  /** The request's declarations of tool `name`, in the OpenAI chat shape. */
  readonly declarationsOf: (name: string) => ReadonlyArray<unknown>
}

/** A record that is not a request body in a supported format, with a description of it. @since 0.1.0 */
export interface UnknownShape {
  readonly _tag: 'UnknownShape'
  /** What the record is: a kind of value, or an object and its first keys (each cut at 40 characters, all at 300). */
  readonly shape: string
}

const NONE: ReadonlyArray<unknown> = []
const asArray = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : NONE)

const asDeclaration = (name: unknown, parameters: unknown): unknown => ({
  type: 'function',
  function: { name, parameters },
})

const chat = (tools: ReadonlyArray<unknown>, messages: ReadonlyArray<unknown>): Request => ({
  format: 'chat',
  calls: (visit) => {
    for (const m of messages) {
      for (const c of asArray(own(m, 'tool_calls'))) {
        const fn = own(c, 'function')
        visit(idText(own(c, 'id')), own(fn, 'name'), own(fn, 'arguments'))
      }
    }
  },
  declarationsOf: (name) => tools.filter((t) => own(own(t, 'function'), 'name') === name),
})

// `input` items of type `function_call`; tools `{ type: 'function', name, parameters }`
const responses = (tools: ReadonlyArray<unknown>, input: ReadonlyArray<unknown>): Request => ({
  format: 'responses',
  calls: (visit) => {
    for (const i of input)
      if (own(i, 'type') === 'function_call') visit(idText(own(i, 'call_id')), own(i, 'name'), own(i, 'arguments'))
  },
  declarationsOf: (name) =>
    tools
      .filter((t) => own(t, 'type') === 'function' && own(t, 'name') === name)
      .map((t) => asDeclaration(name, own(t, 'parameters'))),
})

// `messages[].content[]` blocks of type `tool_use` (`input` an object); tools `{ name, input_schema }`
const anthropic = (tools: ReadonlyArray<unknown>, messages: ReadonlyArray<unknown>): Request => ({
  format: 'anthropic',
  calls: (visit) => {
    for (const m of messages)
      for (const b of asArray(own(m, 'content')))
        if (own(b, 'type') === 'tool_use') visit(idText(own(b, 'id')), own(b, 'name'), own(b, 'input'))
  },
  declarationsOf: (name) =>
    tools
      .filter((t) => own(t, 'name') === name && own(t, 'input_schema') !== undefined)
      .map((t) => asDeclaration(name, own(t, 'input_schema'))),
})

// Both APIs send `messages`: chat completions declare `function`s, Anthropic
// `input_schema`s; without tools, Anthropic's calls and results are content blocks.
const isAnthropic = (tools: ReadonlyArray<unknown>, messages: ReadonlyArray<unknown>): boolean => {
  const first = tools[0]
  if (first !== undefined)
    return own(first, 'function') === undefined && tools.some((t) => own(t, 'input_schema') !== undefined)
  return messages.some((m) =>
    asArray(own(m, 'content')).some((b) => own(b, 'type') === 'tool_use' || own(b, 'type') === 'tool_result'),
  )
}

// A description names a few keys, each cut: the keys are data from the log (one can be as long as its line), and
// the description is printed per record and is what the summary counts records by. Six keys cut at 40 characters
// make at most 291 characters; the whole is cut as well, since JSON.stringify writes a control character as six.
const SHAPE_KEYS = 6
const SHAPE_KEY_CHARS = 40
const SHAPE_CHARS = 300

const describeShape = (u: unknown): string => {
  if (!isRecord(u)) return kindOf(u)
  const keys = Object.keys(u).sort()
  if (keys.length === 0) return 'an empty object'
  const shown = keys.slice(0, SHAPE_KEYS).map((k) => JSON.stringify(cut(k, SHAPE_KEY_CHARS)))
  const more = keys.length > SHAPE_KEYS ? ', …' : ''
  return cut(`an object with ${keys.length === 1 ? 'key' : 'keys'} ${shown.join(', ')}${more}`, SHAPE_CHARS)
}

/** Reads a request body in any of the three formats, or returns an `UnknownShape`. @since 0.1.0 */
export const readRequest = (body: unknown): Request | UnknownShape => {
  const tools = asArray(own(body, 'tools'))
  const messages = own(body, 'messages')
  if (Array.isArray(messages)) return isAnthropic(tools, messages) ? anthropic(tools, messages) : chat(tools, messages)
  const input = own(body, 'input')
  if (Array.isArray(input)) return responses(tools, input)
  if (typeof input === 'string') return responses(tools, [])
  return { _tag: 'UnknownShape', shape: describeShape(body) }
}
