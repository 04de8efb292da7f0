/**
 * A clean call decided from its text, unparsed: per tool, once per listing, a regular expression that reads a
 * JSON object text member by member while each member's key is one the tool declares at the top (or tolerates
 * there) and its value a string, a number, `true`, `false`, `null` or an array of those. When it reads to the
 * object's end, the call carries no undeclared key, and the audit need not parse it. Anything else (an
 * undeclared key, an object as a value, a key written with escapes, a text that is no JSON) is parsed and
 * checked as before: it never finds a call unclean by itself.
 *
 * It exists for the flat figures of docs/performance.md: over a provider that parses its calls itself (no
 * `executeBatch`), the audit's own `JSON.parse` was most of its cost, and V8 runs this expression in about
 * half the time of that parse (a run of a string's plain characters is one character class, nothing is
 * allocated). Over a provider that reads batches the parse is shared, and this is not used.
 *
 * @since 0.1.0
 */
import { REASON_PARAM } from '../../kernel/model.js'
import type { Node } from './Graph.js'
import { objectPlan } from './Codegen.js'
import { childrenAt, speaksAny } from './Walk.js'

// the grammar of RFC 8259, as JSON.parse reads it: whitespace is these four characters only; a string is any code
// unit but `"`, `\` and the controls, or an escape (an unrolled loop: V8 skips a run of plain characters at once);
// a number has no leading zero nor bare dot
const WS = '[ \\t\\n\\r]*'
const STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"`
const NUMBER = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
const SCALAR = `(?:${STRING}|${NUMBER}|true|false|null)`
// an array of scalars holds no key: as clean as a scalar, whatever the place declares below. An element, as a
// member below, is followed by a comma and another, or by the end: one copy of it in the expression
const VALUE = `(?:${SCALAR}|\\[${WS}(?:${SCALAR}${WS}(?:,${WS}(?!\\])|(?=\\])))*\\])`

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

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

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
  const written: Array<string> = []
  for (const k of keys) {
    const p = keyPattern(k)
    if (p !== undefined) written.push(p)
  }
  if (written.length === 0) return undefined
  // each member followed by a comma and the next key, or by the object's end
  const member = `(?:${written.join('|')})${WS}:${WS}${VALUE}${WS}(?:,${WS}(?=")|(?=\\}))`
  const members = new RegExp(`${WS}\\{${WS}(?:${member})*`, 'y')
  return (text) => {
    members.lastIndex = 0
    try {
      if (!members.test(text)) return false
    } catch {
      // a text that outgrows the engine's backtracking stack: parsed instead
      return false
    }
    let i = members.lastIndex
    if (text.charCodeAt(i) !== 0x7d) return false
    for (i++; i < text.length; i++) if (!isWhitespace(text.charCodeAt(i))) return false
    return true
  }
}

/**
 * For a tool whose keys are decided by name alone at the top (no discriminator, pattern or record there), and
 * can be reported nowhere below: {@link cleanTextTest} of the names declared there, `reason` and the `tolerated`
 * ones; `undefined` for any other tool, whose calls are parsed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cleanTextOf = (root: Node, tolerated: ReadonlySet<string>): ((text: string) => boolean) | undefined => {
  const plan = objectPlan([root])
  if (plan._tag !== 'Named' || plan.patterned || plan.rests.length > 0) return undefined
  // where a key can be reported below the top, its calls carry objects, which the expression never accepts:
  // testing them first would only add to their parse
  if (plan.names.some((k) => speaksAny(childrenAt(plan.deciding, k)?.places ?? []))) return undefined
  return cleanTextTest(new Set([...plan.names, REASON_PARAM, ...tolerated]))
}
