/**
 * What the policy says about itself, once each (see `PolicyDiagnostic`), and how it is drawn: one line,
 * escaped and bounded, for a terminal or a log.
 *
 * @since 0.1.0
 */
import { cut, escapeControls } from '../../kernel/describe.js'

/**
 * Something about the policy itself, each said once per provider:
 * - `RulesNameNoTool`: the rules name none of the listed tools (e.g. `defaultRules` behind a registry
 *   prefix), so every call will be asked about or refused;
 * - `UnreadLocation` (once per tool and argument): a listed tool declares an argument whose name looks like a
 *   location and that is not read as one, while an `under` rule names the tool, so those rules fail closed
 *   for every call to it;
 * - `UnresolvedLocation`: a location could not be resolved on the filesystem (a loop of links, a directory
 *   that cannot be read, a name with a twin equal to it in NFC), so it was judged unknown: the rules fail
 *   closed on it.
 *
 * @since 0.1.0
 * @category model
 */
export type PolicyDiagnostic =
  | {
      readonly _tag: 'RulesNameNoTool'
      /** The rules' tool patterns. */
      readonly patterns: ReadonlyArray<string>
      /** Some of the listed names, to compare with. */
      readonly tools: ReadonlyArray<string>
    }
  | { readonly _tag: 'UnreadLocation'; readonly tool: string; readonly arg: string }
  | { readonly _tag: 'UnresolvedLocation'; readonly problem: string }

const POLICY_DIAGNOSTICS: ReadonlySet<string> = new Set(['RulesNameNoTool', 'UnreadLocation', 'UnresolvedLocation'])

/**
 * Whether a diagnostic is the policy's (the others are the audit's).
 *
 * @since 0.1.0
 * @category utils
 */
export const isPolicyDiagnostic = <D extends { readonly _tag: string }>(
  d: D | PolicyDiagnostic,
): d is PolicyDiagnostic => POLICY_DIAGNOSTICS.has(d._tag)

/**
 * A diagnostic in one line, escaped and bounded (tool and argument names come from a server).
 *
 * @since 0.1.0
 * @category utils
 */
export const drawPolicyDiagnostic = (d: PolicyDiagnostic): string => {
  const name = (x: string): string => escapeControls(JSON.stringify(cut(x, 200)))
  const few = (xs: ReadonlyArray<string>): string => xs.slice(0, 4).map(name).join(', ') + (xs.length > 4 ? ', …' : '')
  switch (d._tag) {
    case 'RulesNameNoTool':
      return (
        `toolstack: the policy's rules (${few(d.patterns)}) name none of the listed tools (${few(d.tools)}), ` +
        "so every call will be asked about or refused; behind a registry, name tools with their prefix (readOnlyRules('fs_'))"
      )
    case 'UnreadLocation':
      return (
        `toolstack: ${name(d.tool)} declares ${name(d.arg)}, which looks like a location but is not read as one, ` +
        `so its "under" rules fail closed on every call; add ${name(d.arg)} to locationArgs to read it, ` +
        `or ${name(`!${d.arg}`)} if it is not a location`
      )
    case 'UnresolvedLocation':
      return (
        `toolstack: a location ${escapeControls(cut(d.problem, 300))}, ` +
        'so it was judged unknown and the rules failed closed on it (later ones are not said)'
      )
  }
}
