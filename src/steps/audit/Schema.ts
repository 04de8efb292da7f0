/**
 * A tool's `parameters` read as a JSON Schema: where, in a call's arguments, keys are declared. A declaration
 * is compiled once per listing (`compileSchema`): into places (`Graph.ts`), and from them into a function
 * specialised to the schema (`Codegen.ts`), or, where a runtime forbids generated code, the interpreter
 * (`Walk.ts`). A call's arguments are then walked, and each key no place declares is named by its path
 * (`opts.encodng`, `edits[].oldtext`, `headers.*.vaule`) and by its place as segments.
 *
 * A place that declares no property (an open map, `{}`, a schema-free object) reports nothing; neither does a
 * union with a branch that takes any object. `additionalProperties: true` (or `{}`) declares nothing: a server
 * that accepts a key it does not advertise is exactly the case worth reporting; `additionalProperties` with a
 * schema declares every other key, and its values are read as a record's.
 *
 * @since 0.1.0
 */
import { REASON_PARAM } from '../../kernel/model.js'
import type { Draft, Node } from './Graph.js'
import { buildGraph } from './Graph.js'
import type { Checker } from './Codegen.js'
import { generate } from './Codegen.js'
import { cleanTextOf } from './Text.js'
import type { UnknownKey } from './Walk.js'
import { scratchOf, takeFound, walk } from './Walk.js'

export type { UnknownKey } from './Walk.js'
export type { Segment } from './Path.js'
export { pathOf } from './Path.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

declare const PlaceBrand: unique symbol
declare const CheckBrand: unique symbol

/**
 * A declaration's schema compiled for the walk. Opaque: read it with {@link diffKeys}.
 *
 * @since 0.1.0
 * @category model
 */
export interface Place {
  readonly [PlaceBrand]: 'Place'
}

/**
 * A schema's compiled check. Opaque: {@link diffKeys} runs it.
 *
 * @since 0.1.0
 * @category model
 */
export interface CompiledCheck {
  readonly [CheckBrand]: 'CompiledCheck'
}

/**
 * A declaration's schema, compiled: the root place, the keys declared at the top, and its check.
 *
 * @since 0.1.0
 * @category model
 */
export interface Shape {
  readonly root: Place
  /** The check specialised to the schema: generated code, or the interpreter where that is forbidden. */
  readonly check: CompiledCheck
  /** Every key declared at the top level (by the root and by each of its union branches). */
  readonly keys: ReadonlySet<string>
  /** Whether the top level declares keys by pattern, or every key through `additionalProperties`. */
  readonly patterned: boolean
  /** Whether keys can be reported only at the top level (no union, no pattern, nothing below). */
  readonly flat: boolean
  /** The draft its `$schema` names (`4`, `6`, `7`, `2019`, `2020`); absent when it names none (both read). */
  readonly draft?: 4 | 6 | 7 | 2019 | 2020
  /** The generated check's source, for debugging; absent where the runtime forbids generated code. */
  readonly source?: string
}

const asPlace = (n: Node): Place => n as unknown as Place
const nodeOf = (p: Place): Node => p as unknown as Node
const checkerOf = (c: CompiledCheck): Checker => c as unknown as Checker
const asCheck = (c: Checker): CompiledCheck => c as unknown as CompiledCheck

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const interpreted =
  (root: Node): Checker =>
  (args, s) =>
    walk(s, args, [root], 0)

const topKeys = (root: Node): ReadonlySet<string> => {
  const keys = new Set<string>()
  const seen = new Set<Node>()
  const go = (p: Node): void => {
    if (seen.has(p)) return
    seen.add(p)
    for (const k of p.props.keys()) keys.add(k)
    for (const u of p.unions) for (const b of u.branches) if (b.object) go(b)
  }
  go(root)
  return keys
}

/**
 * Compiles a declaration's `parameters`: its places, and a check specialised to them (generated code, or the
 * interpreter where the runtime forbids it). Never throws on a schema it cannot read: what it cannot read
 * declares nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compileSchema = (parameters: unknown): Shape => {
  const { root, draft } = buildGraph(parameters)
  const generated = generate(root)
  const flat =
    root.unions.length === 0 &&
    root.patterns.length === 0 &&
    root.rests.length === 0 &&
    [...root.props.values()].every((ps) => ps.every((q) => !q.speaks))
  const shape: Shape = {
    root: asPlace(root),
    check: asCheck(generated?.check ?? interpreted(root)),
    keys: topKeys(root),
    patterned: root.patterns.length > 0 || root.rests.length > 0,
    flat,
    ...(draft === undefined ? {} : { draft: draft as NonNullable<Draft> }),
    ...(generated === undefined ? {} : { source: generated.source }),
  }
  return shape
}

/**
 * Whether a shape's check is generated code (else the interpreter walks its calls).
 *
 * @since 0.1.0
 * @category utils
 */
export const isGenerated = (shape: Shape): boolean => shape.source !== undefined

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const TOLERATED: ReadonlySet<string> = new Set([REASON_PARAM])

/**
 * The keys of `args` that no place of `shape` declares, each once per path, sorted by path. `reason` and the
 * `tolerated` names are never reported at the top level. Each array's positions are one place
 * (`edits[].oldtext`), and so are a record's entries (`headers.*.vaule`), so a typo repeated in a hundred
 * elements is one key. A clean call allocates nothing where the schema's code decides (the interpreter, where a
 * discriminator or a pattern decides, allocates a little). Only own keys are the call's; a walk stops at
 * `MAX_VISITS` objects entered or `MAX_FOUND` paths found.
 *
 * @example
 * import { compileSchema, diffKeys } from 'toolstack'
 * const shape = compileSchema({
 *   type: 'object',
 *   properties: { edits: { type: 'array', items: { type: 'object', properties: { oldText: {}, newText: {} } } } },
 * })
 * const found = diffKeys(shape)({
 *   reason: 'r',
 *   edits: [
 *     { oldtext: 'a', newText: 'b' },
 *     { oldtext: 'c', newText: 'd' },
 *   ],
 * })
 * assert.deepStrictEqual(
 *   found.map((k) => [k.path, k.key, k.place]),
 *   [['edits[].oldtext', 'oldtext', ['edits', { each: 'element' }]]],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const diffKeys = (
  shape: Shape,
  tolerated: ReadonlySet<string> = TOLERATED,
): ((args: Readonly<Record<string, unknown>>) => ReadonlyArray<UnknownKey>) => {
  const check = checkerOf(shape.check)
  // one scratch, reused call after call (a check never waits, so calls do not overlap; a check made inside
  // another, from a getter, gets its own). A `catch` that rethrows rather than a `finally`: the clean call,
  // the common case, then takes no exit through it (the flat figures of docs/performance.md)
  const scratch = scratchOf(tolerated)
  // the reuse is seen only in what is allocated: each mutant marked below makes every check take a fresh
  // scratch, the same keys found
  // Stryker disable next-line BooleanLiteral: equivalent (above)
  let busy = false
  return (args) => {
    // Stryker disable next-line ConditionalExpression: equivalent (above)
    if (busy) {
      const own = scratchOf(tolerated)
      check(args, own)
      return takeFound(own)
    }
    busy = true
    try {
      check(args, scratch)
    } catch (e) {
      // what the walk found before a getter threw is not the next call's
      // Stryker disable next-line BooleanLiteral: equivalent (above)
      busy = false
      takeFound(scratch)
      throw e
    }
    // Stryker disable next-line BooleanLiteral: equivalent (above)
    busy = false
    return takeFound(scratch)
  }
}

/**
 * For a shape whose top-level keys are decided by name alone: a test that a call's arguments, as JSON text,
 * are an object whose every key its place declares (or tolerates, at the top), each value as its place allows (a
 * clean call, decided unparsed: see `Text.ts`); `undefined` for any other shape. It never says a call is unclean: a text it does not accept is parsed and
 * walked by {@link diffKeys}.
 *
 * @example
 * import { compileSchema } from 'toolstack'
 * import { cleanText } from 'toolstack/extend'
 * const clean = cleanText(compileSchema({ type: 'object', properties: { path: {}, offset: {} } }))
 * assert.strictEqual(clean?.('{"path":"/tmp/a","offset":3,"reason":"read it"}'), true)
 * assert.strictEqual(clean?.('{"path":"/tmp/a","ffset":3}'), false)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const cleanText = (
  shape: Shape,
  tolerated: ReadonlySet<string> = TOLERATED,
): ((text: string) => boolean) | undefined => cleanTextOf(nodeOf(shape.root), tolerated)
