// Construction-time validation shared by every combinator: a mistyped option throws a TypeError that names
// it, never a layer that silently does less.
import * as t from 'io-ts/lib/index.js'
import { isLeft } from 'fp-ts/lib/Either.js'
import { isProvider } from './model.js'
import { suggestKey } from './Suggest.js'
import { describeValue } from './describe.js'
import { isSafeInteger } from './guards.js'

/** A codec of what `is` accepts, decoded as it is; `name` is what a TypeError says the value must be. */
export const refined = <A>(name: string, is: (u: unknown) => u is A): t.Type<A, A, unknown> =>
  new t.Type<A, A, unknown>(name, is, (u, c) => (is(u) ? t.success(u) : t.failure(u, c)), t.identity)

/** setTimeout's longest delay in milliseconds: it treats anything above as 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647

/** A codec of the whole numbers from `min` to `max`. */
export const wholeNumber = (name: string, min: number, max: number): t.Type<number, number, unknown> =>
  refined(name, (u): u is number => isSafeInteger(u) && u >= min && u <= max)

/** Renders io-ts errors as one line per failure: where, what was expected, what came. */
export const drawErrors = (errors: t.Errors): string =>
  errors
    .map((e) => {
      // the root entry io-ts's decode makes has the key '', which the filter drops
      const path = e.context
        .map((c) => c.key)
        .filter((k) => k !== '')
        .join('.')
      const expected = e.context[e.context.length - 1]?.type.name ?? 'a valid value'
      return `${path === '' ? 'value' : path} must be ${expected}, got ${describeValue(e.value)}`
    })
    .filter((line, i, all) => all.indexOf(line) === i)
    .join('; ')

const quote = (s: string): string => JSON.stringify(s)

/**
 * "did you mean" for unknown names: a name other tools use (`aliases`), else the known name the unknown one
 * plainly points at (suggestKey); `''` when none does.
 */
export const didYouMean = (
  known: ReadonlyArray<string>,
  unknown: ReadonlyArray<string>,
  aliases: ReadonlyMap<string, string>,
): string => {
  const near = suggestKey(new Set(known))
  const hints: Array<readonly [string, string]> = []
  for (const k of unknown) {
    const s = near(k)
    const meant = aliases.get(k) ?? (s._tag === 'Some' ? s.value : undefined)
    if (meant !== undefined) hints.push([k, meant])
  }
  if (hints.length === 0) return ''
  // with a single unknown name, there is no need to say which one is meant
  return `; did you mean ${hints.map(([k, meant]) => (unknown.length === 1 ? quote(meant) : `${quote(meant)} for ${quote(k)}`)).join(', ')}?`
}

/**
 * Validates an options record: `undefined` is `{}`, any key outside `props` is rejected by name (with the
 * known option it plainly points at, or the one `aliases` maps it to), every present value must decode. A
 * provider passed as the options is rejected with the call that was meant (`example` is what goes between its
 * parentheses).
 */
export const decodeOptions = <P extends t.Props>(
  where: string,
  props: P,
  u: unknown,
  example = '',
  aliases: ReadonlyMap<string, string> = new Map(),
): t.TypeOf<t.PartialC<P>> => {
  if (u === undefined) return {} as t.TypeOf<t.PartialC<P>>
  if (typeof u !== 'object' || u === null || Array.isArray(u)) {
    throw new TypeError(`${where}: options must be an object, got ${describeValue(u)}`)
  }
  if (isProvider(u)) {
    // `withX(provider)`: the combinator got its data where its options belong
    throw new TypeError(
      `${where}: got a provider where the options belong; a combinator takes its options first: did you mean ${where}(${example})(provider)?`,
    )
  }
  const known = Object.keys(props)
  const unknown = Object.keys(u).filter((k) => !known.includes(k))
  if (unknown.length > 0) {
    const named = `unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map(quote).join(', ')}`
    throw new TypeError(`${where}: ${named} (known options: ${known.join(', ')})${didYouMean(known, unknown, aliases)}`)
  }
  const decoded = t.partial(props).decode(u)
  if (isLeft(decoded)) throw new TypeError(`${where}: ${drawErrors(decoded.left)}`)
  return decoded.right
}

/**
 * Runs a host callback that may return an effect (fp-ts style: `(a) => IO<void>`) or do its work directly
 * (`(a) => void`); either way it has run when this returns. A throwing callback never affects a tool call:
 * returns what it threw (`undefined` when it completed, or when there is no callback), for a caller that can
 * report it. One that returns a promise (an `async` callback, or a `Task`, which passes for an `IO`) is not
 * awaited, and its rejection is dropped: left unhandled, it would end a Node process.
 */
export const callBack = <A>(f: ((a: A) => unknown) | undefined, a: A): unknown => {
  if (f === undefined) return undefined
  try {
    const effect = f(a)
    const done: unknown = typeof effect === 'function' ? (effect as () => unknown)() : effect
    if (isThenable(done)) done.then(undefined, () => undefined)
    return undefined
  } catch (e) {
    return e
  }
}

const isThenable = (u: unknown): u is PromiseLike<unknown> =>
  (typeof u === 'object' || typeof u === 'function') &&
  u !== null &&
  typeof (u as { readonly then?: unknown }).then === 'function'

/** A host callback that must be a function taking at most `max` parameters. */
export const assertCallback = (where: string, name: string, u: unknown, max: number): void => {
  if (u === undefined) return
  if (typeof u !== 'function') {
    throw new TypeError(`${where}: option "${name}" must be a function, got ${describeValue(u)}`)
  }
  if (u.length > max) {
    throw new TypeError(
      `${where}: option "${name}" must take at most ${max} parameter${max === 1 ? '' : 's'} and return an effect, but it takes ${u.length}`,
    )
  }
}
