/**
 * What the audit knows about the tools in force: for each audited tool, its schema compiled (see
 * `Schema.ts`), read once per listing. Shared by `withUnknownKeyAudit`, the framework adapters and the
 * `toolstack` command, so a tool is audited, or not, for the same reason wherever it is listed.
 *
 * @since 0.1.0
 */
import { isLeft } from 'fp-ts/lib/Either.js'
import type { ToolDeclaration } from '../../kernel/model.js'
import { REASON_PARAM, ReadableDeclaration } from '../../kernel/model.js'
import type { Suggestion } from '../../kernel/Suggest.js'
import { suggestKey } from '../../kernel/Suggest.js'
import type { Shape, UnknownKey } from './Schema.js'
import { cleanText, compileSchema, diffKeys, isGenerated, pathOf } from './Schema.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What one audited tool declares, with its per-call steps prepared once per listing.
 *
 * @since 0.1.0
 * @category model
 */
export interface Declared {
  /** The tool's name as listed: what the seen-set remembers, rather than a call's copy of it. */
  readonly name: string
  /** The property names declared at the top level. */
  readonly keys: ReadonlySet<string>
  /** The same, sorted: what a warning shows. */
  readonly sorted: ReadonlyArray<string>
  /** {@link diffKeys} for this tool, of a call's arguments: their undeclared keys, sorted by path. */
  readonly diff: (args: Readonly<Record<string, unknown>>) => ReadonlyArray<UnknownKey>
  /** The "did you mean" of each reported key, against the keys declared at its own place, as paths. */
  readonly suggest: (keys: ReadonlyArray<UnknownKey>) => ReadonlyArray<Suggestion>
  /** Whether its check is generated code; `false` where the runtime refused it (the interpreter walks). */
  readonly generated: boolean
  /**
   * Whether a call's arguments text is clean, decided unparsed (`cleanText`), for a tool whose top-level keys
   * are decided by name alone; absent for any other tool. `false` says only that the text must be parsed.
   */
  readonly cleanText?: (text: string) => boolean
}

/**
 * Tool name → what it declares, for the tools whose calls are audited: readable, and declaring a top-level
 * property that is not `reason` nor tolerated, or a top-level pattern (a tool that declares nothing, or only
 * `reason`, gives nothing to check keys against; keys below sit under a top-level property).
 *
 * @since 0.1.0
 * @category model
 */
export type Catalogue = ReadonlyMap<string, Declared>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Nothing listed: no call is audited.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyCatalogue: Catalogue = new Map()

/**
 * The names never reported, declared or not: `reason`, and those given.
 *
 * @example
 * import { toleratedOf } from 'toolstack/extend'
 * assert.deepStrictEqual([...toleratedOf(['_meta'])], ['reason', '_meta'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const toleratedOf = (names: ReadonlyArray<string> = []): ReadonlySet<string> => new Set([REASON_PARAM, ...names])

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const readable = (u: unknown): ReadableDeclaration | undefined => {
  try {
    const d = ReadableDeclaration.decode(u)
    return isLeft(d) ? undefined : d.right
  } catch {
    // a getter or a Proxy that throws: unreadable
  }
  return undefined
}

/**
 * Tool name → its `parameters` compiled as a schema, for every declaration it can read. Unreadable ones are
 * left out; when two declarations share a name, the first one wins (the one a model is most likely to have
 * been shown).
 *
 * @example
 * import { extractDeclarations } from 'toolstack'
 * const m = extractDeclarations([
 *   {
 *     type: 'function',
 *     function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {}, offset: {} } } },
 *   },
 *   null,
 * ])
 * assert.deepStrictEqual([...(m.get('fs_read')?.keys ?? [])], ['path', 'offset'])
 * assert.strictEqual(m.size, 1)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const extractDeclarations = (declarations: ReadonlyArray<unknown>): ReadonlyMap<string, Shape> => {
  const out = new Map<string, Shape>()
  if (!Array.isArray(declarations)) return out
  for (const d of declarations) {
    const r = readable(d)
    if (r === undefined) continue
    const { name, parameters } = r.function
    if (out.has(name)) continue
    try {
      out.set(name, compileSchema(parameters))
    } catch {
      // a Proxy that refuses to list its keys: unreadable, left out
    }
  }
  return out
}

// "did you mean" per place: each suggester is built on its place's first warning (most tools never warn) and
// cached by key-set identity (stable call after call, except where union branches merge)
const suggester = (): ((keys: ReadonlyArray<UnknownKey>) => ReadonlyArray<Suggestion>) => {
  const prepared = new WeakMap<ReadonlySet<string>, ReturnType<typeof suggestKey>>()
  const near = (declared: ReadonlySet<string>): ReturnType<typeof suggestKey> => {
    const had = prepared.get(declared)
    if (had !== undefined) return had
    const made = suggestKey(declared)
    prepared.set(declared, made)
    return made
  }
  return (keys) => {
    const out: Array<Suggestion> = []
    for (const k of keys) {
      const s = near(k.declared)(k.key)
      if (s._tag === 'Some') out.push({ key: k.path, didYouMean: pathOf(k.at, s.value) })
    }
    return out
  }
}

// a tool is audited when it declares a top-level key that is not tolerated (every key below sits under one)
// or a top-level pattern
const audits = (shape: Shape, tolerated: ReadonlySet<string>): boolean =>
  [...shape.keys].some((k) => k !== REASON_PARAM && !tolerated.has(k)) || shape.patterned

/**
 * The catalogue of a listing in the OpenAI shape: {@link extractDeclarations}, keeping the tools that declare
 * a property other than a tolerated name, each with its {@link diffKeys} prepared over its compiled check.
 * Built once per listing, so a call costs a lookup.
 *
 * @example
 * import { catalogueOf, toleratedOf } from 'toolstack/extend'
 * const c = catalogueOf(toleratedOf())([
 *   {
 *     type: 'function',
 *     function: {
 *       name: 'fs_read',
 *       parameters: {
 *         type: 'object',
 *         properties: { path: {}, opts: { type: 'object', properties: { encoding: {} } } },
 *       },
 *     },
 *   },
 *   { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: { reason: {} } } } },
 * ])
 * assert.deepStrictEqual([...c.keys()], ['fs_read'])
 * assert.deepStrictEqual(
 *   c
 *     .get('fs_read')
 *     ?.diff({ path: '/tmp', ffset: 3, opts: { encodng: 'utf8' } })
 *     .map((k) => k.path),
 *   ['ffset', 'opts.encodng'],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const catalogueOf =
  (tolerated: ReadonlySet<string>) =>
  (declarations: ReadonlyArray<ToolDeclaration> | ReadonlyArray<unknown>): Catalogue => {
    const out = new Map<string, Declared>()
    for (const [name, shape] of extractDeclarations(declarations)) {
      if (!audits(shape, tolerated)) continue
      const { keys } = shape
      const clean = cleanText(shape, tolerated)
      out.set(name, {
        name,
        keys,
        sorted: Object.freeze([...keys].sort()),
        diff: diffKeys(shape, tolerated),
        suggest: suggester(),
        generated: isGenerated(shape),
        ...(clean === undefined ? {} : { cleanText: clean }),
      })
    }
    return out
  }
