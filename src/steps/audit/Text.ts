/**
 * A clean call decided from its text, unparsed: per tool, once per listing, a regular expression written from the
 * tool's places (as the generated check is) that reads a JSON object text member by member while each key is one
 * its place declares (or, at the top, tolerates) and each value one its place allows: an object whose keys are
 * decided by name alone, an array read against one place, or a scalar or array of scalars anywhere (they hold no
 * key). When it reads to the object's end, the call carries no undeclared key, and the audit need not parse it.
 * Anything else (an undeclared key, an object a discriminator or a pattern decides, a key written with escapes, a
 * text that is no JSON) is parsed and walked as before: it never finds a call unclean by itself.
 *
 * It exists for the flat figures of docs/performance.md: over a provider that parses its calls itself (no
 * `executeBatch`), the audit's own `JSON.parse` was most of its cost, and V8 runs this expression in about
 * half the time of that parse (a run of a string's plain characters is one character class, nothing is
 * allocated). Over a provider that reads batches the parse is shared, and this is not used.
 *
 * @since 0.1.0
 */
import { isJsonWhitespace } from '../../kernel/guards.js'
import { REASON_PARAM } from '../../kernel/model.js'
import type { Node } from './Graph.js'
import { objectPlan } from './Codegen.js'
import { ARRAY, childrenAt, expand, speaksAny } from './Walk.js'

// the grammar of RFC 8259, as JSON.parse reads it: whitespace is these four characters only; a string is any code
// unit but `"`, `\` and the controls, or an escape (an unrolled loop: V8 skips a run of plain characters at once);
// a number has no leading zero nor bare dot
const WS = '[ \\t\\n\\r]*'
const STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"`
const NUMBER = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
const SCALAR = `(?:${STRING}|${NUMBER}|true|false|null)`
// an array of scalars holds no key: as clean as a scalar, whatever the place declares below. An element, as a
// member below, is followed by a comma and another, or by the end: one copy of it in the expression
const arrayOf = (element: string): string => `\\[${WS}(?:${element}${WS}(?:,${WS}(?!\\])|(?=\\])))*\\]`
const ARRAY_OF_SCALARS = arrayOf(SCALAR)
const VALUE = `(?:${SCALAR}|${ARRAY_OF_SCALARS})`

// a key as its JSON text holds it unescaped: each code unit as `\uXXXX`, so no character of it means anything to
// the expression. A key JSON must escape (a `"`, a `\`, a control) is left out: a call naming it is parsed
const keyPattern = (key: string): string | undefined => {
  let out = '"'
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c) return undefined
    out += `\\u${c.toString(16).padStart(4, '0')}`
  }
  return out + '"'
}

// the members of an object, each a key's pattern with its value's: keys whose values read alike share one copy
// of the value's expression (`(?:"a"|"b")…`), so the expression is as long as its distinct values, not its keys
const membersOf = (pairs: Iterable<readonly [string, string]>): Array<string> => {
  const byValue = new Map<string, Array<string>>()
  for (const [key, value] of pairs) {
    const keys = byValue.get(value)
    if (keys === undefined) byValue.set(value, [key])
    else keys.push(key)
  }
  return [...byValue].map(([value, keys]) => `(?:${keys.join('|')})${WS}:${WS}${value}`)
}

// each of `keys` that can be written unescaped (see keyPattern), with its value's expression
const pairsOf = (keys: Iterable<string>, valueOf: (key: string) => string): Array<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  for (const k of keys) {
    const key = keyPattern(k)
    if (key !== undefined) out.push([key, valueOf(k)])
  }
  return out
}

// the expression of an object whose members are `members` (each a key's pattern, then its value's), each member
// followed by a comma and the next key, or by the object's end
const objectOf = (members: ReadonlyArray<string>, open: boolean): string =>
  `${open ? '' : '\\{'}${WS}(?:(?:${members.join('|')})${WS}(?:,${WS}(?=")|(?=\\})))*${open ? '' : '\\}'}`

// the sticky test of a text whose members are `members` (see cleanTextTest)
const testOf = (members: ReadonlyArray<string>): ((text: string) => boolean) => {
  const read = new RegExp(`${WS}\\{${objectOf(members, true)}`, 'y')
  return (text) => {
    read.lastIndex = 0
    // after a throw the read stands where it began, at no end: the same answer without the catch's block
    // Stryker disable BlockStatement: equivalent (above)
    try {
      if (!read.test(text)) return false
    } catch {
      // a text that outgrows the engine's backtracking stack: parsed instead
      return false
    }
    // Stryker restore BlockStatement
    let i = read.lastIndex
    if (text.charCodeAt(i) !== 0x7d) return false
    for (i++; i < text.length; i++) if (!isJsonWhitespace(text.charCodeAt(i))) return false
    return true
  }
}

/**
 * A test that a text is a JSON object whose keys are all among `keys` and whose values are all scalars or arrays
 * of scalars; `undefined` when no key can be written unescaped (nothing to accept but `{}`, which the parse reads
 * as fast).
 *
 * The expression reads members while they are accepted (sticky, no end anchor) and the test then looks for the
 * object's end where it stopped: a text that stops at an undeclared key is refused there, never backtracked through
 * (anchored at both ends, a key refused at the end of a text cost three times a clean text's reading).
 *
 * @example
 * import { cleanTextTest } from './Text.js'
 * const clean = cleanTextTest(['path', 'reason']) as (text: string) => boolean
 * assert.strictEqual(clean('{"path": "/tmp/a", "reason": "read it"}'), true)
 * assert.strictEqual(clean('{"path": "/tmp/a", "ffset": 3}'), false)
 * assert.strictEqual(clean('{"path": {"to": "/tmp/a"}}'), false)
 *
 * @since 0.1.0
 * @category constructors
 */
export const cleanTextTest = (keys: Iterable<string>): ((text: string) => boolean) | undefined => {
  const pairs = pairsOf(keys, () => VALUE)
  return pairs.length === 0 ? undefined : testOf(membersOf(pairs))
}

/**
 * How many places below the top the expression follows per tool: past them, a value is accepted only as a scalar
 * or an array of scalars (which hold no key), and a call that carries more is parsed. A schema that refers to
 * itself would otherwise write an expression without end, and each place followed adds to it (about a kilobyte).
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_TEXT_PLACES = 64

/**
 * For a tool whose keys are decided by name alone at the top (no discriminator, pattern or record there): a test
 * that says a call's arguments text is clean (see {@link cleanTextTest}). Below the top, an object is accepted where
 * its keys are decided by name alone too, each value as its place allows, an array where every element is read
 * against the same places; anything else only as a scalar or an array of scalars. At the top, `reason` and the
 * `tolerated` names take any such value. `undefined` for any other tool, whose calls are parsed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cleanTextOf = (root: Node, tolerated: ReadonlySet<string>): ((text: string) => boolean) | undefined => {
  let followed = 0

  // the members of an object at `places` whose keys are decided by name alone; undefined where something else
  // decides them
  const membersAt = (places: ReadonlyArray<Node>): Array<readonly [string, string]> | undefined => {
    const plan = objectPlan(places)
    if (plan._tag !== 'Named' || plan.patterned || plan.rests.length > 0) return undefined
    // a name the plan lists has its places: the fallback is for the types
    // Stryker disable next-line OptionalChaining,ArrayDeclaration: equivalent (above)
    return pairsOf(plan.names, (k) => valueAt(childrenAt(plan.deciding, k)?.places ?? []))
  }

  // a value at `places` that holds no key reported there or below
  const valueAt = (places: ReadonlyArray<Node>): string => {
    if (!speaksAny(places) || followed >= MAX_TEXT_PLACES) return VALUE
    followed++
    const alternatives = [SCALAR]
    const members = membersAt(places)
    if (members !== undefined) alternatives.push(objectOf(membersOf(members), false))
    const all: Array<Node> = []
    const anyArray = expand(places, ARRAY, undefined, (p) => all.push(p))
    alternatives.push(
      anyArray === true || all.some((p) => p.prefix.length > 0)
        ? ARRAY_OF_SCALARS
        : arrayOf(valueAt(all.flatMap((p) => p.items))),
    )
    return `(?:${alternatives.join('|')})`
  }

  const members = membersAt([root])
  if (members === undefined) return undefined
  // at the top, `reason` and the tolerated names are never walked: any value that holds no key (a declared one
  // keeps its own reading too, an alternative beside this one)
  return testOf(membersOf([...members, ...pairsOf([REASON_PARAM, ...tolerated], () => VALUE)]))
}
