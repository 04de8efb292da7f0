/**
 * The rule engine: one pure function from rules and a call to a decision. Every rule is evaluated and the
 * strongest wins, so the order rules are written in never matters.
 *
 * @since 0.1.0
 */
import type { Decision, Rule } from './Rule.js'
import { matchesTool, strength } from './Rule.js'
import type { LocationScope, PathLocation, Roots } from '../../kernel/paths.js'
import { commonDirectory, isInside, locate, locationWithin, parentDirectory, rootFor } from '../../kernel/paths.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why a decision was reached: a rule fired on its own terms (`rule`), nothing matched (`no-match`), or a
 * location could not be read, so an `under` rule failed closed (`unevaluable-path`).
 *
 * @since 0.1.0
 * @category model
 */
export type Why = 'rule' | 'no-match' | 'unevaluable-path'

interface EvaluationOf<D extends Decision, R extends Rule | undefined> {
  readonly decision: D
  /** The rule that decided, when one did: always, unless the human is asked because none did. */
  readonly rule: R
  readonly why: Why
  /** The call's locations that could be read, absolute and normalised, without repeats. */
  readonly paths: ReadonlyArray<string>
  /** Every location `locate` found, each with the argument it came from (or why it is unknown). */
  readonly locations: ReadonlyArray<PathLocation>
  /**
   * The rule an "always allow" answer would record: this tool, under the deepest directory holding every path
   * the call names (each path's own directory), never above the tool's root.
   */
  readonly suggestedRule: Rule
}

/**
 * What `evaluate` returns for one call. An allow or a deny is always some rule's; an "ask" may be a rule's,
 * or no rule's at all.
 *
 * @since 0.1.0
 * @category model
 */
export type Evaluation = EvaluationOf<'ask', Rule | undefined> | EvaluationOf<'allow' | 'deny', Rule>

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

interface Fired {
  readonly rule: Rule
  /** It fired only because a location was unknown, not because one was inside. */
  readonly failedClosed: boolean
}

/**
 * Whether a rule fires for a call to a tool it matches, given the call's locations. Allow-with-under needs
 * every location inside; deny and ask with under fire on any location inside or unknown.
 */
const fire = (rule: Rule, locations: ReadonlyArray<PathLocation>): Fired | 'blocked-by-unknown' | undefined => {
  if (rule.under === undefined) return { rule, failedClosed: false }
  const where = locations.map(locationWithin(rule.under))
  if (rule.decision === 'allow') {
    if (where.every((c) => c === 'inside')) return { rule, failedClosed: false }
    return where.includes('unknown') ? 'blocked-by-unknown' : undefined
  }
  if (where.includes('inside')) return { rule, failedClosed: false }
  return where.includes('unknown') ? { rule, failedClosed: true } : undefined
}

const depth = (dir: string | undefined): number =>
  dir === undefined ? -1 : dir.split('/').filter((s) => s !== '').length

const canonical = (r: Rule): string => JSON.stringify([r.tool, r.decision, r.under ?? null, r.note ?? null])

const textually = (a: string, b: string): number => {
  if (a < b) return -1
  return a > b ? 1 : 0
}

/**
 * A total order on fired rules, so the rule reported is the same whatever order the rules came in: stronger
 * first, then one that fired on its own terms, then the more specific (deeper `under`, exact name, longer
 * glob), then a fixed textual order.
 */
const compareFired = (a: Fired, b: Fired): number =>
  strength(b.rule.decision) - strength(a.rule.decision) ||
  Number(a.failedClosed) - Number(b.failedClosed) ||
  depth(b.rule.under) - depth(a.rule.under) ||
  Number(b.rule.tool.endsWith('*') === false) - Number(a.rule.tool.endsWith('*') === false) ||
  b.rule.tool.length - a.rule.tool.length ||
  textually(canonical(a.rule), canonical(b.rule))

// The rule an "always" answer records (see `suggestedRule`): each path contributes the directory it is in, so
// the next file beside it is covered too.
const suggest = (
  tool: string,
  locations: ReadonlyArray<PathLocation>,
  paths: ReadonlyArray<string>,
  roots: Roots,
): Rule => {
  if (locations.every((l) => l._tag === 'Missing')) return { tool, decision: 'allow' }
  const root = rootFor(roots, tool)
  const holding = commonDirectory(paths.map(parentDirectory))
  // a location that cannot be read still belongs somewhere: the tool's root, or, at the least, only clean
  // absolute paths (an allow under "/" never covers a ".." path)
  const under =
    holding === undefined
      ? (root ?? '/')
      : root !== undefined && holding !== root && isInside(holding, root)
        ? root
        : holding
  return { tool, decision: 'allow', under }
}

/**
 * Decides one call. Every rule whose `tool` matches is evaluated; the strongest that fires wins (deny > ask >
 * allow); no rule firing means ask. The call's locations are read by `locate` with `scope`: give it the
 * tool's declared arguments (as `withPolicy` does), so that a key the tool does not declare decides nothing.
 *
 * @example
 * import { evaluate } from 'toolstack/extend'
 * const rules = [
 *   { tool: 'fs_*', decision: 'allow', under: '/p' },
 *   { tool: 'fs_write', decision: 'deny', under: '/p/.git', note: 'history is read-only' },
 * ] as const
 * assert.strictEqual(evaluate(rules, 'fs_write', { path: 'src/a.ts' }, { fs_: '/p' }).decision, 'allow')
 * assert.strictEqual(evaluate(rules, 'fs_write', { path: '/p/.git/HEAD' }, {}).decision, 'deny')
 * const e = evaluate(rules, 'fs_write', { path: '/elsewhere/a' }, {})
 * assert.deepStrictEqual([e.decision, e.why, e.suggestedRule.under], ['ask', 'no-match', '/elsewhere'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const evaluate = (
  rules: ReadonlyArray<Rule>,
  tool: string,
  args: unknown,
  roots: Roots = {},
  scope?: LocationScope,
): Evaluation => {
  const locations = locate(args, tool, roots, scope)
  const paths = [...new Set(locations.flatMap((l) => (l._tag === 'Known' ? [l.path] : [])))]
  let best: Fired | undefined
  let blocked = false
  for (const rule of rules) {
    if (!matchesTool(rule.tool)(tool)) continue
    const f = fire(rule, locations)
    if (f === undefined) continue
    if (f === 'blocked-by-unknown') {
      blocked = true
      continue
    }
    if (best === undefined || compareFired(f, best) < 0) best = f
  }
  const suggestedRule = suggest(tool, locations, paths, roots)
  if (best === undefined)
    return {
      decision: 'ask',
      rule: undefined,
      why: blocked ? 'unevaluable-path' : 'no-match',
      paths,
      locations,
      suggestedRule,
    }
  return {
    decision: best.rule.decision,
    rule: best.rule,
    why: best.failedClosed ? 'unevaluable-path' : 'rule',
    paths,
    locations,
    suggestedRule,
  }
}

/**
 * The decision when it does not depend on the call's arguments: when no rule that matches `tool` has an
 * `under`, the strongest matching rule decides (deny > ask > allow) and no match means ask, exactly as
 * {@link evaluate} would decide. `undefined` when a matching rule has an `under`, so only `evaluate` can
 * tell. The rules are read once, when `decisionByName(rules)` is called.
 *
 * @example
 * import { decisionByName } from './evaluate.js'
 * const byName = decisionByName([
 *   { tool: 'fs_*', decision: 'allow' },
 *   { tool: 'web_*', decision: 'allow', under: '/srv' },
 * ])
 * assert.strictEqual(byName('fs_read'), 'allow')
 * assert.strictEqual(byName('web_get'), undefined)
 * assert.strictEqual(byName('shell'), 'ask')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decisionByName = (rules: ReadonlyArray<Rule>): ((tool: string) => Decision | undefined) => {
  const compiled = rules.map((rule) => ({
    matches: matchesTool(rule.tool),
    scoped: rule.under !== undefined,
    strength: strength(rule.decision),
  }))
  return (tool) => {
    let best = 0
    for (const rule of compiled) {
      if (!rule.matches(tool)) continue
      if (rule.scoped) return undefined
      if (rule.strength > best) best = rule.strength
    }
    return best === 3 ? 'deny' : best === 1 ? 'allow' : 'ask'
  }
}

/**
 * {@link decisionByName} for one tool.
 *
 * @example
 * import { decisionWithoutArgs } from './evaluate.js'
 * assert.strictEqual(decisionWithoutArgs([{ tool: 'fs_*', decision: 'allow' }], 'fs_read'), 'allow')
 * assert.strictEqual(decisionWithoutArgs([{ tool: 'fs_*', decision: 'allow', under: '/srv' }], 'fs_read'), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decisionWithoutArgs = (rules: ReadonlyArray<Rule>, tool: string): Decision | undefined =>
  decisionByName(rules)(tool)
