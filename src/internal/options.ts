// Construction-time validation shared by every combinator: a mistyped option is a
// TypeError that names it, never a layer that silently does less.
import * as t from 'io-ts/lib/index.js'
import { isLeft } from 'fp-ts/lib/Either.js'

/** A short, human description of a value, for error messages. */
export const describeValue = (u: unknown): string => {
  if (u === null) return 'null'
  if (Array.isArray(u)) return 'an array'
  switch (typeof u) {
    case 'string':
      return `the string ${JSON.stringify(u.length > 40 ? u.slice(0, 40) + '…' : u)}`
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

/** Renders io-ts errors as one line per failure: where, what was expected, what came. */
export const drawErrors = (errors: t.Errors): string =>
  errors
    .map((e) => {
      const path = e.context
        .slice(1)
        .map((c) => c.key)
        .filter((k) => k !== '')
        .join('.')
      const expected = e.context[e.context.length - 1]?.type.name ?? 'a valid value'
      return `${path === '' ? 'value' : path} must be ${expected}, got ${describeValue(e.value)}`
    })
    .filter((line, i, all) => all.indexOf(line) === i)
    .join('; ')

/**
 * Validates an options record: `undefined` is `{}`, any key outside `props` is
 * refused by name, every present value must decode.
 */
export const decodeOptions = <P extends t.Props>(
  where: string,
  props: P,
  u: unknown,
): t.TypeOf<t.PartialC<P>> => {
  if (u === undefined) return {} as t.TypeOf<t.PartialC<P>>
  if (typeof u !== 'object' || u === null || Array.isArray(u)) {
    throw new TypeError(`${where}: options must be an object, got ${describeValue(u)}`)
  }
  const known = Object.keys(props)
  const unknown = Object.keys(u).filter((k) => !known.includes(k))
  if (unknown.length > 0) {
    throw new TypeError(
      `${where}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known options: ${known.join(', ')})`,
    )
  }
  const decoded = t.partial(props).decode(u)
  if (isLeft(decoded)) throw new TypeError(`${where}: ${drawErrors(decoded.left)}`)
  return decoded.right
}

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
