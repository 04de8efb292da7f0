// Values and failures as words, for error messages a human or a model reads. Imports nothing of the library.

// A warning sent to telemetry (an OpenTelemetry event, an Agents trace span, a LangChain custom event) is
// bounded the same way everywhere: each name, key or id from a model cut to this many characters, and at most
// this many keys from one call.
export const MAX_TELEMETRY_CHARS = 256
export const MAX_TELEMETRY_KEYS = 16

/** `s` cut at `max` characters, with `…` where it was cut. */
export const cut = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max)}…` : s)

/**
 * The first `max` of `items`, and how many were left out: the same array when none was.
 *
 * @example
 * import { firstOf } from './describe.js'
 * assert.deepStrictEqual(firstOf(['a', 'b', 'c'], 2), { shown: ['a', 'b'], more: 1 })
 * assert.deepStrictEqual(firstOf(['a'], 2), { shown: ['a'], more: 0 })
 *
 * @since 0.1.0
 * @category utils
 */
export const firstOf = <A>(
  items: ReadonlyArray<A>,
  max: number,
): { readonly shown: ReadonlyArray<A>; readonly more: number } =>
  items.length <= max ? { shown: items, more: 0 } : { shown: items.slice(0, max), more: items.length - max }

/** A name, key or id from a model as telemetry carries it: cut at {@link MAX_TELEMETRY_CHARS}. */
export const telemetryText = (s: string): string => cut(s, MAX_TELEMETRY_CHARS)

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

// what a terminal or a page acts on, and what a human cannot see: C0, DEL and C1; every format character
// (Unicode Cf: direction marks and overrides, zero-width spaces and joiners, the BOM, the soft hyphen, the tag
// characters); a lone surrogate; the line and paragraph separators; and the invisible fillers and selectors
// that are letters or marks by category (Hangul fillers, the combining grapheme joiner, Khmer inherent vowels,
// Mongolian and Unicode variation selectors), so that "pa\u200bth" never reads as "path"
const UNSAFE =
  // each a code point of its own, matched alone on purpose: a combining selector is what is being escaped
  // eslint-disable-next-line no-misleading-character-class
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/gu

/**
 * Each character of `s` that `escapeControls` writes as `\uXXXX`: what a human cannot see or a terminal acts
 * on (the same set, so what is flagged as hidden is exactly what is shown escaped).
 */
export const unsafeCharacters = (s: string): IterableIterator<RegExpMatchArray> => s.matchAll(UNSAFE)

// one UTF-16 unit as JSON writes it
const unit = (u: number): string => `\\u${u.toString(16).padStart(4, '0')}`

/**
 * `s` with every control character (C0, DEL and C1), format character (direction marks and overrides,
 * zero-width characters, the BOM, tag characters), line or paragraph separator, and invisible filler or
 * selector written as `\uXXXX` (a character beyond the BMP as its two UTF-16 escapes, as JSON writes it), so
 * text from a model or a log cannot move a terminal's cursor, retitle it, ring it, reorder what a human
 * reads, or hide a character in plain sight.
 */
export const escapeControls = (s: string): string =>
  s.replace(UNSAFE, (c) => (c.length === 1 ? unit(c.charCodeAt(0)) : unit(c.charCodeAt(0)) + unit(c.charCodeAt(1))))

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

/**
 * The command that installs `packages` beside toolstack: the local one, and the one for a global toolstack
 * (`npm install -g toolstack`: Node finds a global package beside it, in the same global folder).
 */
export const installCommand = (packages: ReadonlyArray<string>): string =>
  `npm install ${packages.join(' ')} (with a global toolstack: npm install -g ${packages.join(' ')})`

// the codes Node gives a module it cannot find: ESM's, then CommonJS's
const NOT_FOUND: ReadonlySet<unknown> = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND'])

/**
 * Whether `e` is Node failing to find the package `name` (or a module of it), as `import` and `require` report
 * it; any other failure (a module that throws as it loads, a package that is there but broken) is not.
 */
export const isMissingPackage = (e: unknown, name: string): boolean => {
  if (typeof e !== 'object' || e === null || !NOT_FOUND.has((e as { code?: unknown }).code)) return false
  const message = describeError(e)
  return message.includes(`'${name}'`) || message.includes(`'${name}/`) || message.includes(`"${name}"`)
}

/**
 * The error for an optional package that is missing: who needs it, which package, and the command that installs
 * it (`installCommand`), with Node's own words last.
 */
export const missingPackageError = (who: string, needs: string, packages: ReadonlyArray<string>, e: unknown): Error =>
  new Error(
    `${who} needs ${needs}, which is not installed; install it: ${installCommand(packages)} (${describeError(e)})`,
    {
      cause: e,
    },
  )

/**
 * Text that came from a model or a server, as a human may be shown it: on one line, every control character, line break
 * and direction mark escaped (`\n`, `\u202e`), at most a bounded number of characters. `cut` is how many
 * characters of the escaped text were left out.
 *
 * @since 0.1.0
 * @category model
 */
export interface Shown {
  readonly text: string
  readonly cut: number
}

/** `escaped` (already escaped text) cut at `max` characters, never inside an escape or a surrogate pair. */
export const bounded = (escaped: string, max: number): Shown => {
  if (escaped.length <= max) return { text: escaped, cut: 0 }
  // never half of an escape (\u20) or of a surrogate pair
  const kept = escaped.slice(0, max).replace(/\\(u[0-9a-fA-F]{0,3})?$|[\ud800-\udbff]$/, '')
  return { text: kept, cut: escaped.length - kept.length }
}

/**
 * Text from a model or a server, shown: control characters, line breaks, direction marks escaped, at most `max`
 * characters.
 *
 * @example
 * import { showText } from 'toolstack/extend'
 * assert.deepStrictEqual(showText('a\nb\u202e', 20), { text: 'a\\u000ab\\u202e', cut: 0 })
 * assert.deepStrictEqual(showText('abcdef', 4), { text: 'abcd', cut: 2 })
 * assert.deepStrictEqual(showText('a\nb', 4), { text: 'a', cut: 7 })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const showText = (s: string, max: number): Shown => bounded(escapeControls(s), max)

/** How many of a server's last stderr lines a failure quotes, and within how many characters. */
export const STDERR_TAIL_LINES = 5
export const STDERR_TAIL_CHARS = 1024

/**
 * `; the end of its stderr: …` for a failure that quotes a server's last words: the last STDERR_TAIL_LINES of `lines`
 * that say something, within STDERR_TAIL_CHARS characters, escaped (a hostile server's escape sequences must not reach
 * the terminal that shows the error), marked `… | ` when earlier lines were left out (`earlier`, or more lines
 * than shown) and `…` when the first shown is cut at its start (`cutStart`); `''` when none says anything.
 *
 * @since 0.1.0
 */
export const stderrEnd = (lines: ReadonlyArray<string>, earlier: boolean, cutStart = false): string => {
  const said = lines.filter((l) => l.trim() !== '')
  if (said.length === 0) return ''
  const joined = said.slice(-STDERR_TAIL_LINES).join(' | ')
  const shown = joined.length > STDERR_TAIL_CHARS ? joined.slice(-STDERR_TAIL_CHARS) : joined
  const more = earlier || said.length > STDERR_TAIL_LINES ? '… | ' : cutStart || shown !== joined ? '…' : ''
  return `; the end of its stderr: ${more}${escapeControls(shown)}`
}
