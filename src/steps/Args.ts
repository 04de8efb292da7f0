/**
 * Reading a call's arguments: the one place a JSON string becomes an object.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem } from '../kernel/model.js'
import { describeError } from '../kernel/describe.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const absent: ArgsProblem = { _tag: 'Absent' }
const empty: ArgsProblem = { _tag: 'Empty' }

// -------------------------------------------------------------------------------------
// destructors
// -------------------------------------------------------------------------------------

/**
 * Renders a problem in words a model can act on.
 *
 * @example
 * import { drawArgsProblem } from 'toolstack'
 * assert.strictEqual(
 *   drawArgsProblem({ _tag: 'NotAnObject', got: 'an array' }),
 *   'the arguments must be a JSON object, but they are an array',
 * )
 *
 * @since 0.1.0
 * @category destructors
 */
export const drawArgsProblem = (p: ArgsProblem): string => {
  switch (p._tag) {
    case 'Absent':
      return 'the arguments are missing'
    case 'Empty':
      return 'the arguments are empty'
    case 'Unparsable':
      return `the arguments are not valid JSON (${p.message})`
    case 'NotAnObject':
      return `the arguments must be a JSON object, but they are ${p.got}`
    case 'Unreadable':
      return `the call cannot be read (${p.message})`
  }
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

const isPlainObject = (u: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const kindOf = (u: unknown): string =>
  u === null
    ? 'null'
    : Array.isArray(u)
      ? 'an array'
      : typeof u === 'object'
        ? 'an object that is not a plain object'
        : `a ${typeof u}`

/**
 * The object {@link parseArgs} reads `raw` as, or `undefined` where it reads none: for a layer that needs only
 * the object, so no `Either` is made for each call (the flat figures of docs/performance.md).
 *
 * @example
 * import { argsObject } from 'toolstack/extend'
 * assert.deepStrictEqual(argsObject('{"path":"/tmp"}'), { path: '/tmp' })
 * assert.strictEqual(argsObject('[1]'), undefined)
 * assert.strictEqual(argsObject('{"path":'), undefined)
 *
 * @since 0.1.0
 * @category utils
 */
export const argsObject = (raw: unknown): Args | undefined => {
  if (typeof raw === 'string') {
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      // not JSON: no object, as undefined is none
    }
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Args) : undefined
  }
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && isPlainObject(raw)
    ? (raw as Args)
    : undefined
}

// why `raw` reads as no object, once argsObject said so (read again: only a call that fails pays for it)
const problemOf = (raw: unknown): ArgsProblem => {
  if (typeof raw === 'string') {
    try {
      return { _tag: 'NotAnObject', got: kindOf(JSON.parse(raw)) }
    } catch (e) {
      return raw.trim() === '' ? empty : { _tag: 'Unparsable', message: describeError(e) }
    }
  }
  return raw === undefined || raw === null ? absent : { _tag: 'NotAnObject', got: kindOf(raw) }
}

/**
 * Reads raw arguments: a plain object (a null-prototype one included) is returned as is (same reference); a
 * string must parse as a JSON object.
 *
 * @example
 * import { parseArgs } from 'toolstack'
 * import { isRight, isLeft } from 'fp-ts/lib/Either.js'
 * assert.ok(isRight(parseArgs('{"path":"/tmp"}')))
 * assert.deepStrictEqual(parseArgs('   '), { _tag: 'Left', left: { _tag: 'Empty' } })
 * assert.ok(isLeft(parseArgs('[1]')))
 *
 * @since 0.1.0
 * @category utils
 */
export const parseArgs = (raw: unknown): Either<ArgsProblem, Args> => {
  const args = argsObject(raw)
  return args === undefined ? left(problemOf(raw)) : right(args)
}

/**
 * `parseArgs` for a tool that is about to run: absent or empty arguments are how models call a tool that
 * takes none, so they read as `{}`; every other problem stays.
 *
 * @example
 * import { parseArgs } from 'toolstack'
 * import { noneAsEmpty } from 'toolstack/extend'
 * assert.deepStrictEqual(noneAsEmpty(parseArgs('')), { _tag: 'Right', right: {} })
 * assert.strictEqual(noneAsEmpty(parseArgs('[1]'))._tag, 'Left')
 *
 * @since 0.1.0
 * @category utils
 */
export const noneAsEmpty = (parsed: Either<ArgsProblem, Args>): Either<ArgsProblem, Args> =>
  parsed._tag === 'Left' && (parsed.left._tag === 'Absent' || parsed.left._tag === 'Empty') ? NO_ARGS : parsed

const NO_ARGS: Either<ArgsProblem, Args> = right(Object.freeze({}))
