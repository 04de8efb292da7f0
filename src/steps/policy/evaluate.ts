/**
 * The rule engine: a call's locations read once, in the form the server will resolve them (`locateCall`),
 * then one pure function from rules and those locations to a decision (`decide`). Every rule is evaluated and
 * the strongest wins, so the order rules are written in never matters.
 *
 * @since 0.1.0
 */
import type { Decision, Rule } from './Rule.js'
import { matchesTool, strength } from './Rule.js'
import type { LocationScope, PathLocation, Reading, Roots } from '../../kernel/paths.js'
import {
  LOCATION_ARGS,
  commonDirectory,
  isInside,
  locate,
  parentDirectory,
  rootFor,
  standing,
} from '../../kernel/paths.js'
import type { LocationResolver } from '../../kernel/resolve.js'
import { lexicalResolver } from '../../kernel/resolve.js'

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

/**
 * What a human should look at first in one location: one that could not be checked (`unknown`), one that
 * lies in or holds the directory of a deny or ask rule for this tool (`touches`), one outside every
 * directory an allow rule for this tool names (`outside`), or one of the rest (`inside`).
 *
 * @since 0.1.0
 * @category model
 */
export type Concern = 'unknown' | 'touches' | 'outside' | 'inside'

/**
 * A call's locations, read once and in the form compared: each known path resolved (`resolver`), and the
 * same resolver for a rule's directory (`dir`, remembered for the call), so both sides are alike.
 *
 * @since 0.1.0
 * @category model
 */
export interface Located {
  readonly tool: string
  readonly locations: ReadonlyArray<PathLocation>
  /** A clean absolute directory (a rule's `under`, a root) in the form the locations are in. */
  readonly dir: (directory: string) => string
  /**
   * Whether the tool declares a location argument the rules read: `false` only when its declaration is known
   * and declares none, so a call with no location cannot be pointed anywhere.
   */
  readonly declaresLocations: boolean
}

interface EvaluationOf<D extends Decision, R extends Rule | undefined> {
  readonly decision: D
  /** The rule that decided, when one did: always, unless the human is asked because none did. */
  readonly rule: R
  readonly why: Why
  /** The call's locations that could be read, in the form compared, without repeats. */
  readonly paths: ReadonlyArray<string>
  /** Every location `locate` found, each with the argument it came from (or why it is unknown). */
  readonly locations: ReadonlyArray<PathLocation>
  /** For each of `locations`, what a human should look at first. */
  readonly concerns: ReadonlyArray<Concern>
  /**
   * The rule an "always allow" answer would record: this tool, under the deepest directory holding every path
   * the call names (each path's own directory), never above the tool's root. `undefined` when "always" is not
   * offered: a location could not be read, so no rule could say what was shown.
   */
  readonly suggestedRule: Rule | undefined
}

/**
 * What `evaluate` returns for one call. An allow or a deny is always some rule's; an "ask" may be a rule's,
 * or no rule's at all.
 *
 * @since 0.1.0
 * @category model
 */
export type Evaluation = EvaluationOf<'ask', Rule | undefined> | EvaluationOf<'allow' | 'deny', Rule>

/**
 * A file no call may touch, and what it is, in words for the refusal.
 *
 * @since 0.1.0
 * @category model
 */
export interface ProtectedFile {
  readonly path: string
  readonly what: string
}

/**
 * What the protected files say about a call: one is touched (by a known location, inside it or holding it),
 * or a location could not be checked against them (why, per location).
 *
 * @since 0.1.0
 * @category model
 */
export type Guarded =
  | { readonly _tag: 'Touches'; readonly arg: string; readonly file: ProtectedFile }
  | { readonly _tag: 'Unchecked'; readonly unevaluable: ReadonlyArray<string> }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const LEXICAL: LocationResolver = lexicalResolver()

type Known = Extract<Reading, { readonly _tag: 'Known' }>

// a reading with its path in the resolved form; `sent` keeps what the model wrote, and `forms` the other ways
// the location reaches the filesystem (as written, the link it ends on, the links it passes through)
const resolvedReading =
  (resolver: LocationResolver) =>
  (r: Reading): Reading => {
    if (r._tag !== 'Known') return r
    const { path, entry, through, problem } = resolver.resolve(r.path)
    // where the filesystem cannot say where it leads, the guard fails closed
    if (problem !== undefined) return { _tag: 'Unknown', arg: r.arg, problem: `could not be resolved: ${problem}` }
    const sent = r.sent ?? r.path
    const forms = {
      ...(r.path === path ? {} : { written: r.path }),
      ...(entry === undefined || entry === path ? {} : { link: entry }),
      ...(through === undefined ? {} : { through }),
    }
    return {
      _tag: 'Known',
      arg: r.arg,
      path,
      ...(sent === path ? {} : { sent }),
      ...(Object.keys(forms).length === 0 ? {} : { forms }),
    }
  }

/**
 * A call's locations (`locate`, with `scope`), each known path resolved by `resolver` (default: lexical), with
 * the other ways it reaches the filesystem kept (`LocationForms`); and the resolver kept for the rules'
 * directories.
 *
 * @example
 * import { locateCall } from './evaluate.js'
 * const located = locateCall('fs_read', { path: 'a/./b' }, { '': '/w' })
 * assert.deepStrictEqual(located.locations, [{ _tag: 'Known', arg: 'path', path: '/w/a/b', sent: 'a/./b' }])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const locateCall = (
  tool: string,
  args: unknown,
  roots: Roots,
  scope?: LocationScope,
  given: LocationResolver = LEXICAL,
): Located => {
  const resolver = given.forOneJudgement?.() ?? given
  const resolve = resolvedReading(resolver)
  const locations = locate(args, tool, roots, scope).map((l): PathLocation => {
    if (l._tag === 'Unread') return { ...l, reading: resolve(l.reading) }
    return l._tag === 'Missing' ? l : resolve(l)
  })
  const dirs = new Map<string, string>()
  const dir = (d: string): string => {
    let out = dirs.get(d)
    if (out === undefined) dirs.set(d, (out = resolver.resolve(d).path))
    return out
  }
  const declared = scope?.declared
  const names = scope?.names ?? LOCATION_ARGS
  return { tool, locations, dir, declaresLocations: declared === undefined || names.some((n) => declared.has(n)) }
}

// Where a known location stands against a directory `under` (as written; `dir` resolves it). It is inside when
// where it leads and the link it ends on both are (a path spelled through /proc/self/root, or through a link
// from elsewhere, is judged where it leads). It touches the directory when any way it reaches the filesystem
// lies in it or holds it: where it leads, the link it ends on, the path as written (against the directory as
// written), or a link it passes through on the way.
const inside = (located: Located, under: string, l: Known): boolean => {
  const dir = located.dir(under)
  return isInside(dir, l.path) && (l.forms?.link === undefined || isInside(dir, l.forms.link))
}

const touching = (located: Located, under: string, l: Known): boolean => {
  const dir = located.dir(under)
  const f = l.forms
  return (
    standing(dir, l.path) !== 'outside' ||
    (f?.link !== undefined && standing(dir, f.link) !== 'outside') ||
    (f?.written !== undefined && standing(under, f.written) !== 'outside') ||
    (f?.through ?? []).some((t) => isInside(dir, t))
  )
}

interface Fired {
  readonly rule: Rule
  /** It fired only because a location was unknown, not because one was inside. */
  readonly failedClosed: boolean
}

/**
 * Whether a rule fires for a call to a tool it matches, given the call's locations. Allow-with-under needs
 * every location inside; deny and ask with under fire on any location inside, holding the directory (a move
 * or a delete of a parent carries it along), or unknown.
 */
const fire = (rule: Rule, located: Located): Fired | 'blocked-by-unknown' | undefined => {
  const under = rule.under
  if (under === undefined) return { rule, failedClosed: false }
  const { locations } = located
  const unknown = locations.some((l) => l._tag !== 'Known')
  if (rule.decision === 'allow') {
    if (locations.every((l) => l._tag === 'Known' && inside(located, under, l))) return { rule, failedClosed: false }
    return unknown ? 'blocked-by-unknown' : undefined
  }
  if (locations.some((l) => l._tag === 'Known' && touching(located, under, l))) return { rule, failedClosed: false }
  return unknown ? { rule, failedClosed: true } : undefined
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
// the next file beside it is covered too. Offered only when every location is a known path, or when the tool
// takes none: a grant must not cover more than the human was shown.
const suggest = (located: Located, paths: ReadonlyArray<string>, roots: Roots): Rule | undefined => {
  const { tool, locations } = located
  if (locations.some((l) => l._tag !== 'Known' && l._tag !== 'Missing')) return undefined
  if (locations.some((l) => l._tag === 'Missing'))
    return located.declaresLocations ? undefined : { tool, decision: 'allow' }
  const given = rootFor(roots, tool)
  const root = given === undefined ? undefined : located.dir(given)
  const holding = commonDirectory(paths.map(parentDirectory)) as string
  const under = root !== undefined && holding !== root && isInside(holding, root) ? root : holding
  return { tool, decision: 'allow', under }
}

// what a human should look at first in each location (see `Concern`), against every rule for this tool
const concernsOf = (rules: ReadonlyArray<Rule>, located: Located): ReadonlyArray<Concern> => {
  const scoped = rules.filter((r) => r.under !== undefined && matchesTool(r.tool)(located.tool))
  const allows = scoped.filter((r) => r.decision === 'allow')
  const guards = scoped.filter((r) => r.decision !== 'allow')
  return located.locations.map((l): Concern => {
    if (l._tag !== 'Known') return 'unknown'
    if (guards.some((r) => touching(located, r.under as string, l))) return 'touches'
    if (allows.length > 0 && !allows.some((r) => inside(located, r.under as string, l))) return 'outside'
    return 'inside'
  })
}

/**
 * Decides one call from its located arguments. Every rule whose `tool` matches is evaluated; the strongest
 * that fires wins (deny > ask > allow); no rule firing means ask.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decide = (rules: ReadonlyArray<Rule>, located: Located, roots: Roots = {}): Evaluation => {
  const { tool, locations } = located
  const paths = [...new Set(locations.flatMap((l) => (l._tag === 'Known' ? [l.path] : [])))]
  let best: Fired | undefined
  let blocked = false
  for (const rule of rules) {
    if (!matchesTool(rule.tool)(tool)) continue
    const f = fire(rule, located)
    if (f === undefined) continue
    if (f === 'blocked-by-unknown') {
      blocked = true
      continue
    }
    if (best === undefined || compareFired(f, best) < 0) best = f
  }
  const common = {
    paths,
    locations,
    concerns: concernsOf(rules, located),
    suggestedRule: suggest(located, paths, roots),
  }
  if (best === undefined)
    return { decision: 'ask', rule: undefined, why: blocked ? 'unevaluable-path' : 'no-match', ...common }
  return {
    decision: best.rule.decision,
    rule: best.rule,
    why: best.failedClosed ? 'unevaluable-path' : 'rule',
    ...common,
  }
}

/**
 * Decides one call: `decide` over `locateCall`. The call's locations are read with `scope`: give it the
 * tool's declared arguments (as `withPolicy` does), so that a key the tool does not declare decides nothing;
 * and with `resolver` where the policy shares the server's filesystem (`filesystemResolver`).
 *
 * @example
 * import { evaluate } from 'toolstack/extend'
 * const rules = [
 *   { tool: 'fs_*', decision: 'allow', under: '/p' },
 *   { tool: 'fs_write', decision: 'deny', under: '/p/.git', note: 'history is read-only' },
 * ] as const
 * assert.strictEqual(evaluate(rules, 'fs_write', { path: 'src/a.ts' }, { fs_: '/p' }).decision, 'allow')
 * assert.strictEqual(evaluate(rules, 'fs_write', { path: '/p/.git/HEAD' }, {}).decision, 'deny')
 * // a call on a parent reaches the denied directory too (a move or a delete of it carries it along)
 * assert.strictEqual(evaluate(rules, 'fs_write', { path: '/p' }, {}).decision, 'deny')
 * const e = evaluate(rules, 'fs_write', { path: '/elsewhere/a' }, {})
 * assert.deepStrictEqual([e.decision, e.why, e.suggestedRule?.under], ['ask', 'no-match', '/elsewhere'])
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
  resolver?: LocationResolver,
): Evaluation => decide(rules, locateCall(tool, args, roots, scope, resolver), roots)

/**
 * What the protected files say about a call (see `Guarded`), or `undefined` when none is touched and every
 * location was checked. A location the rules do not read (`Unread`) is checked by what it reads as; one that
 * plainly names a place off this machine (`Elsewhere`), a key the tool does not declare (the server does not
 * take it; the rules fail closed on it), or no location at all, cannot touch a file here.
 *
 * @example
 * import { guardFiles, locateCall } from './evaluate.js'
 * const files = [{ path: '/etc/toolstack/grants.json', what: 'the store of grants' }]
 * const touch = guardFiles(files)(locateCall('fs_move', { source: '/etc/toolstack' }, {}))
 * assert.deepStrictEqual(touch, { _tag: 'Touches', arg: 'source', file: files[0] })
 * assert.strictEqual(guardFiles(files)(locateCall('fs_read', { path: '/srv/a' }, {})), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const guardFiles =
  (files: ReadonlyArray<ProtectedFile>) =>
  (located: Located): Guarded | undefined => {
    const unevaluable: Array<string> = []
    for (const l of located.locations) {
      const r = l._tag === 'Unread' ? l.reading : l
      // nothing here, plainly elsewhere, or a key the server does not take (the rules ask about it)
      if (r._tag === 'Missing' || r._tag === 'Elsewhere') continue
      if (r._tag === 'Unknown') {
        if (r.undeclared !== true) unevaluable.push(`${r.arg} ${r.problem}`)
        continue
      }
      for (const file of files) if (touching(located, file.path, r)) return { _tag: 'Touches', arg: r.arg, file }
    }
    return unevaluable.length === 0 ? undefined : { _tag: 'Unchecked', unevaluable }
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
