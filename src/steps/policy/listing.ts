/**
 * The listing a model is shown under a policy: a tool that a bare deny refuses whatever its arguments is left
 * out, so the model is not offered what it can never use. Also what the policy keeps of a listing: each
 * tool's declared argument names, the only ones it reads locations from.
 *
 * @since 0.1.0
 */
import type { ToolDeclaration } from '../../kernel/model.js'
import type { Rule } from './Rule.js'
import { isBareDeny, matchesTool } from './Rule.js'
import { callNameOf } from '../../kernel/calls.js'
import { memberOf } from '../../kernel/guards.js'

/**
 * The declarations no bare deny among `rules` refuses, in order; the same array (same reference) when none is
 * refused. A declaration without a readable name is kept: the policy does not judge what it cannot name.
 *
 * @example
 * import { withoutRefusedTools } from './listing.js'
 * const listing = [
 *   { type: 'function', function: { name: 'rm' } },
 *   { type: 'function', function: { name: 'ls' } },
 * ] as const
 * assert.deepStrictEqual(
 *   withoutRefusedTools([{ tool: 'rm', decision: 'deny' }])(listing).map((d) => d.function.name),
 *   ['ls'],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const withoutRefusedTools =
  (rules: ReadonlyArray<Rule>) =>
  (declarations: ReadonlyArray<ToolDeclaration>): ReadonlyArray<ToolDeclaration> => {
    const refused = rules.filter(isBareDeny)
    const kept = declarations.filter((d) => {
      const name = callNameOf(d)
      return name === undefined || !refused.some((r) => matchesTool(r.tool)(name))
    })
    return kept.length === declarations.length ? declarations : kept
  }

/**
 * Whether the rules name none of the listed tools: the listing holds tools, there are rules, and not one of
 * their patterns matches a listed name (as happens with `defaultRules` behind a registry prefix). Then every
 * call is asked about or refused, whatever the rules were meant to allow.
 *
 * @example
 * import { defaultRules } from 'toolstack'
 * import { rulesNameNoTool } from './listing.js'
 * const listing = [{ type: 'function', function: { name: 'fs_read_file' } }] as const
 * assert.strictEqual(rulesNameNoTool(defaultRules)(listing), true)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const rulesNameNoTool =
  (rules: ReadonlyArray<Rule>) =>
  (declarations: ReadonlyArray<ToolDeclaration>): boolean => {
    const names = declarations.map(callNameOf).filter((n): n is string => n !== undefined)
    if (names.length === 0 || rules.length === 0) return false
    const patterns = rules.map((r) => matchesTool(r.tool))
    return !names.some((n) => patterns.some((matches) => matches(n)))
  }

// the keys of a declaration's top-level `parameters.properties`; undefined when the declaration cannot be
// read (a throwing getter, a Proxy)
const declaredKeys = (d: unknown): ReadonlySet<string> | undefined => {
  try {
    const unreadable = {}
    const parameters = memberOf(memberOf(d, 'function', unreadable), 'parameters', unreadable)
    if (parameters === unreadable) return undefined
    const properties = memberOf(parameters, 'properties', unreadable)
    if (properties === unreadable) return undefined
    // a schema without properties declares no argument
    return typeof properties === 'object' && properties !== null && !Array.isArray(properties)
      ? new Set(Object.keys(properties))
      : new Set()
  } catch {
    return undefined
  }
}

/**
 * Each listed tool's declared argument names: the keys of its `parameters.properties` (top level only; none
 * when it has no `properties`). A tool listed twice, or whose declaration cannot be read, is left out: which
 * declaration it runs with is not known, so its locations are not either.
 *
 * @example
 * import { declaredArguments } from './listing.js'
 * const listing = [
 *   {
 *     type: 'function',
 *     function: { name: 'move_file', parameters: { type: 'object', properties: { source: {}, destination: {} } } },
 *   },
 * ] as const
 * assert.deepStrictEqual([...(declaredArguments(listing).get('move_file') ?? [])], ['source', 'destination'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const declaredArguments = (
  declarations: ReadonlyArray<ToolDeclaration>,
): ReadonlyMap<string, ReadonlySet<string>> => {
  const out = new Map<string, ReadonlySet<string>>()
  const unsure = new Set<string>()
  for (const d of declarations) {
    const name = callNameOf(d)
    if (name === undefined) continue
    if (out.has(name) || unsure.has(name)) {
      unsure.add(name)
      out.delete(name)
      continue
    }
    const keys = declaredKeys(d)
    if (keys === undefined) unsure.add(name)
    else out.set(name, keys)
  }
  return out
}
