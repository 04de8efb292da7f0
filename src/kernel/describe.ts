// Values and failures as words, for error messages a human or a model reads. Imports nothing of the library.

// A warning sent to telemetry (an OpenTelemetry event, an Agents trace span, a LangChain custom event) is
// bounded the same way everywhere: each name, key or id from a model cut to this many characters, and at most
// this many keys from one call.
export const MAX_TELEMETRY_CHARS = 256
export const MAX_TELEMETRY_KEYS = 16

/** `s` cut at `max` characters, with `…` where it was cut. */
export const cut = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max)}…` : s)

/** A short, human description of a value, for error messages. */
export const describeValue = (u: unknown): string => {
  if (u === null) return 'null'
  if (Array.isArray(u)) return 'an array'
  switch (typeof u) {
    case 'string':
      return `the string ${JSON.stringify(cut(u, 40))}`
    case 'function':
      return `a function of ${u.length} parameter${u.length === 1 ? '' : 's'}`
    case 'object':
      return 'an object'
    case 'undefined':
      return 'undefined'
    default:
      return `${typeof u} ${String(u)}`
  }
}

/** A failure of any kind, in one line a model (and a human) can read. */
export const describeError = (e: unknown): string => {
  try {
    if (e instanceof Error) return e.message === '' ? e.name : e.message
    if (typeof e === 'string') return e
    const s = JSON.stringify(e)
    return s === undefined ? String(e) : s
  } catch {
    try {
      return String(e)
    } catch {
      return 'an unreadable error'
    }
  }
}

// what a terminal or a page acts on: C0, DEL and C1, the line and paragraph separators, direction marks and
// overrides, the BOM
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g

/**
 * `s` with every control character (C0, DEL and C1), line or paragraph separator, direction mark or override
 * and BOM written as `\uXXXX`, so text from a model or a log cannot move a terminal's cursor, retitle it,
 * ring it, or reorder what a human reads.
 */
export const escapeControls = (s: string): string =>
  s.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

// a listing can be long: the message names the first few; the name called comes from a model: cut
const MAX_NAMES_SHOWN = 30
const MAX_NAME_SHOWN = 200

/** The result text for a call to a name that is not listed: the name as called, and what is available. */
export const unknownToolMessage = (name: string, names: ReadonlyArray<string>): string =>
  names.length === 0
    ? `there is no tool named ${JSON.stringify(cut(name, MAX_NAME_SHOWN))}; no tools are available`
    : `there is no tool named ${JSON.stringify(cut(name, MAX_NAME_SHOWN))}; the available tools are ` +
      names
        .slice(0, MAX_NAMES_SHOWN)
        .map((n) => JSON.stringify(n))
        .join(', ') +
      (names.length > MAX_NAMES_SHOWN ? ', …' : '')
