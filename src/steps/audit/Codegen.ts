/**
 * A schema's places compiled into a specialised function, once per listing, as ajv does: a `for…in` over an
 * object's keys and a `switch` on each, the descent into a declared key's value written out, nothing looked up
 * and nothing allocated while a call is clean. What depends on the call itself (the branch a discriminator
 * picks, the patterns an undeclared key matches) is handed to the interpreter (`Walk.ts`) at that place.
 *
 * It exists for the figures of docs/performance.md (the audit below a compiled ajv, and its walk within one
 * `JSON.parse`, on real schemas): the interpreter costs 4 to 17 times ajv's validator there. Where a runtime
 * forbids code generation (`new Function` throws), `generate` returns `undefined` and the interpreter does
 * the whole walk.
 *
 * @since 0.1.0
 */
import type { Node } from './Graph.js'
import { MAX_DEPTH, declaresKeys } from './Graph.js'
import { ELEMENT, ENTRY } from './Path.js'
import type { Scratch } from './Walk.js'
import {
  ARRAY,
  MAX_VISITS,
  OBJECT,
  childrenAt,
  expand,
  isTolerated,
  keyAt,
  report,
  speaksAny,
  walkObject,
} from './Walk.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A compiled check: walks `args` from the root, recording what it finds in the scratch.
 *
 * @since 0.1.0
 * @category model
 */
export type Checker = (args: Readonly<Record<string, unknown>>, s: Scratch) => void

/**
 * A compiled check and the source it was made from (kept for debugging).
 *
 * @since 0.1.0
 * @category model
 */
export interface Generated {
  readonly check: Checker
  readonly source: string
}

// how deep a `switch` case's body is indented in the generated code
const CASE_BODY = ' '.repeat(10)

// what generated code calls: the interpreter's steps, named once
const RUNTIME = Object.freeze({
  ELEMENT,
  ENTRY,
  own: (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k),
  tol: isTolerated,
  report,
  keyAt,
  walkObject,
})

/**
 * How the keys of an object at some places are decided: by the call's own value (a discriminator picks the
 * branch: the interpreter decides), not at all (some branch takes any object, or nothing declares a key: nothing
 * is reported), or by the names the deciding places declare, with their patterns and records.
 *
 * @since 0.1.0
 * @category model
 */
export type ObjectPlan =
  | { readonly _tag: 'ByValue' }
  | { readonly _tag: 'Open' }
  | {
      readonly _tag: 'Named'
      readonly deciding: ReadonlyArray<Node>
      /** Every name the deciding places declare, each once. */
      readonly names: ReadonlyArray<string>
      /** Whether a deciding place declares keys by pattern (the call's key is tested against each). */
      readonly patterned: boolean
      /** The places of every other key's value, where `additionalProperties` is a schema (a record). */
      readonly rests: ReadonlyArray<Node>
    }

const BY_VALUE: ObjectPlan = { _tag: 'ByValue' }
const OPEN: ObjectPlan = { _tag: 'Open' }

/**
 * How an object's keys at `places` are decided (see {@link ObjectPlan}): the one decision the generated check
 * and the text check (`Text.ts`) both write.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const objectPlan = (places: ReadonlyArray<Node>): ObjectPlan => {
  const deciding: Array<Node> = []
  const open = expand(places, OBJECT, undefined, (p) => deciding.push(p), true)
  if (open === undefined) return BY_VALUE
  if (open || !deciding.some(declaresKeys)) return OPEN
  const names = [...new Set(deciding.flatMap((p) => [...p.props.keys()]))]
  const patterned = deciding.some((p) => p.patterns.length > 0)
  const rests = deciding.flatMap((p) => p.rests.map((r) => r.node))
  return { _tag: 'Named', deciding, names, patterned, rests }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const unique = (places: ReadonlyArray<Node>): ReadonlyArray<Node> => [...new Set(places)].sort((a, b) => a.id - b.id)

const keyOf = (places: ReadonlyArray<Node>): string => places.map((p) => p.id).join(',')

/**
 * The source of a check specialised to the places below `root`, and the constants it reads (`C[i]`: lists of
 * places, handed to the interpreter where the call decides).
 *
 * @since 0.1.0
 * @category constructors
 */
export const sourceOf = (root: Node): { readonly source: string; readonly constants: ReadonlyArray<unknown> } => {
  const constants: Array<unknown> = []
  const functions: Array<string> = []
  const values = new Map<string, string>()
  const constant = (c: unknown): string => {
    constants.push(c)
    return `C[${constants.length - 1}]`
  }

  // the function that reads a value at `places` (an object or an array), its name; generated on first use.
  // Only the root's function can run at depth 0, where `reason` and the tolerated names are skipped
  const rootKey = keyOf([root])
  const valueFn = (places: ReadonlyArray<Node>): string => {
    const set = unique(places)
    const key = keyOf(set)
    const had = values.get(key)
    if (had !== undefined) return had
    const name = `v${values.size}`
    values.set(key, name)
    const onObject = objectBody(set, key === rootKey)
    const onArray = arrayBody(set)
    functions.push(
      `function ${name}(x, s, d) {\n  if (typeof x !== 'object' || x === null || d > ${MAX_DEPTH} || ++s.visits > ${MAX_VISITS}) return\n` +
        `  if (Array.isArray(x)) {\n${onArray}\n  } else {\n${onObject}\n  }\n}`,
    )
    return name
  }

  // descends into a value at `places` when a key can be reported there or below
  const descend = (places: ReadonlyArray<Node>, value: string, indent: string): string =>
    speaksAny(places) ? `${indent}${valueFn(places)}(${value}, s, d + 1)` : ''

  const objectBody = (places: ReadonlyArray<Node>, top: boolean): string => {
    const tol = top ? '(d !== 0 || !R.tol(s, d, k))' : ''
    // for…in meets inherited enumerable keys too (a polluted Object.prototype): only an own key is the call's,
    // so only an own key is descended into or reported; a declared name inherited is passed over either way
    const owned = `${tol === '' ? '' : `${tol} && `}R.own(x, k)`
    const plan = objectPlan(places)
    // a discriminator picks by the call's own value: the interpreter decides this place
    if (plan._tag === 'ByValue') return `    R.walkObject(s, x, ${constant(places)}, d)`
    if (plan._tag === 'Open') return ''
    const { deciding, names, patterned, rests } = plan
    const decidingC = constant(deciding)
    const cases: Array<string> = []
    for (const k of names) {
      const children = childrenAt(deciding, k)?.places ?? []
      // an own key, met by for…in: a plain read takes the member, `__proto__` included
      const go = descend(children, 'x[k]', '          ')
      cases.push(
        go === ''
          ? `      case ${JSON.stringify(k)}: break`
          : `      case ${JSON.stringify(k)}:\n        if (${owned}) {\n          s.stack[d] = k\n${go}\n        }\n        break`,
      )
    }
    // an undeclared name: a pattern may declare it (the interpreter tests them), a record's schema does, or
    // it is reported (an inherited key, met by for…in, is not the call's)
    const miss = patterned
      ? `        if (R.own(x, k)) R.keyAt(s, x, k, ${decidingC}, d)`
      : rests.length > 0
        ? speaksAny(rests)
          ? `        if (${owned}) {\n          s.stack[d] = R.ENTRY\n${descend(rests, 'x[k]', CASE_BODY)}\n        }`
          : ''
        : `        if (${owned}) R.report(s, d, k, ${decidingC})`
    return `    for (const k in x) {\n      switch (k) {\n${cases.join('\n')}\n      default:\n${miss}\n      }\n    }`
  }

  const arrayBody = (places: ReadonlyArray<Node>): string => {
    const all: Array<Node> = []
    if (expand(places, ARRAY, undefined, (p) => all.push(p)) === true) return ''
    const longest = Math.max(0, ...all.map((p) => p.prefix.length))
    const at = (i: number): ReadonlyArray<Node> =>
      all.flatMap((p) => (i < p.prefix.length ? (p.prefix[i] as ReadonlyArray<Node>) : p.items))
    const tail = descend(at(longest), 'x[i]', '        ')
    const positions = Array.from({ length: longest }, (_, i) => descend(at(i), 'x[i]', '          '))
    if (tail === '' && positions.every((p) => p === '')) return ''
    const body =
      longest === 0
        ? tail
        : `      switch (i) {\n${positions.map((go, i) => `      case ${i}:\n${go}\n          break`).join('\n')}\n      default:\n${tail}\n      }`
    return `    s.stack[d] = R.ELEMENT\n    for (let i = 0; i < x.length; i++) {\n${body}\n    }`
  }

  const rootFn = valueFn([root])
  const source = `'use strict'\n${functions.join('\n')}\nreturn function check(args, s) {\n  ${rootFn}(args, s, 0)\n}`
  return { source, constants }
}

/**
 * The check of the places below `root`, as generated code; `undefined` where the runtime refuses to compile
 * code from a string (a `--disallow-code-generation-from-strings` process, a policy that forbids `eval`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const generate = (root: Node): Generated | undefined => {
  const { source, constants } = sourceOf(root)
  let make: (r: typeof RUNTIME, c: ReadonlyArray<unknown>) => Checker
  try {
    make = new Function('R', 'C', source) as typeof make
  } catch {
    return undefined
  }
  return { check: make(RUNTIME, constants), source }
}
