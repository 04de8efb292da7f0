/**
 * The listing a model is shown under a policy: a tool that a bare deny refuses
 * whatever its arguments is left out, so the model is not offered what it can never
 * use.
 *
 * @since 0.1.0
 */
import type { ToolDeclaration } from '../model.js'
import type { Rule } from './Rule.js'
import { isBareDeny, matchesTool } from './Rule.js'
import { callNameOf } from '../internal/calls.js'

/**
 * The declarations no bare deny among `rules` refuses, in order; the very same array
 * when none is refused. A declaration without a readable name is kept: the policy
 * does not judge what it cannot name.
 *
 * @example
 * import { withoutRefusedTools } from 'toolstack'
 * const listing = [{ type: 'function', function: { name: 'rm' } }, { type: 'function', function: { name: 'ls' } }] as const
 * assert.deepStrictEqual(withoutRefusedTools([{ tool: 'rm', decision: 'deny' }])(listing).map((d) => d.function.name), ['ls'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const withoutRefusedTools =
  (rules: ReadonlyArray<Rule>) =>
  (declarations: ReadonlyArray<ToolDeclaration>): ReadonlyArray<ToolDeclaration> => {
    const refused = rules.filter(isBareDeny)
    // Stryker disable next-line ConditionalExpression: a shortcut; with nothing refused the filter keeps every declaration and the same array is answered below
    if (refused.length === 0) return declarations
    const kept = declarations.filter((d) => {
      const name = callNameOf(d)
      return name === undefined || !refused.some((r) => matchesTool(r.tool)(name))
    })
    return kept.length === declarations.length ? declarations : kept
  }

/**
 * Whether the rules name none of the listed tools: the listing holds tools, there are
 * rules, and not one of their patterns matches a listed name (as happens with
 * `defaultRules` behind a registry prefix). Then every call is asked about or refused,
 * whatever the rules were meant to allow.
 *
 * @example
 * import { defaultRules, rulesNameNoTool } from 'toolstack'
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
