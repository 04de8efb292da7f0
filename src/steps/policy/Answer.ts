/**
 * Asking the human: what `onAsk` receives, what it may answer, and how an answer is decoded (`decodeAnswer`)
 * and remembered (`recordGrant`). Pure: the asking itself is done by `withPolicy`.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import * as t from 'io-ts/lib/index.js'
import type { Args, ToolCall } from '../../kernel/model.js'
import { REASON_PARAM } from '../../kernel/model.js'
import type { Decision, Rule } from './Rule.js'
import { decodeRule } from './Rule.js'
import type { Concern, Why } from './evaluate.js'
import type { DefinitionNotice } from '../pins/Review.js'
import { shortHash } from '../pins/Canonical.js'
import type { PathLocation } from '../../kernel/paths.js'
import type { Shown } from '../../kernel/describe.js'
import { bounded, cut, describeError, describeValue, escapeControls, firstOf, showText } from '../../kernel/describe.js'
import { hasOwn, own, ownCopy } from '../../kernel/guards.js'

// what a human is shown of a model's or a server's text (defined with the escaping, in the kernel)
export type { Shown } from '../../kernel/describe.js'
export { showText } from '../../kernel/describe.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How the human answered; or `unasked`: no human was asked about this call (a framework's approval bridge whose
 * framework did not ask), and it is refused as when `withPolicy` has no `onAsk` (`NoOneToAsk`), not as declined.
 *
 * @since 0.1.0
 * @category model
 */
export type PermissionAction = 'allow-once' | 'deny-once' | 'always-allow' | 'always-deny' | 'unasked'

/**
 * A rule to remember, as an answer may give it: `decision` may be left out, and is then taken from the
 * action.
 *
 * @since 0.1.0
 * @category model
 */
export type GrantRule = Omit<Rule, 'decision'> & { readonly decision?: Decision }

/**
 * What `onAsk` resolves to. `rule` matters only for `always-*` and defaults to the request's `suggestedRule`;
 * it is ignored for `*-once` and `unasked`.
 *
 * @since 0.1.0
 * @category model
 */
export interface PermissionAnswer {
  readonly action: PermissionAction
  readonly rule?: GrantRule
}

/**
 * One location of a call, as shown: the argument it came from, and where it points (in the form judged: the
 * path the server will resolve, with what the model sent when that differs) or why it could not be checked;
 * and what a human should look at first (`concern`).
 *
 * @since 0.1.0
 * @category model
 */
export type ShownLocation =
  | {
      readonly _tag: 'Known'
      readonly arg: Shown
      readonly path: Shown
      readonly sent?: Shown
      readonly concern: Concern
    }
  | { readonly _tag: 'Unknown'; readonly arg: Shown; readonly problem: string }

/**
 * One argument of a call, as shown: its key and its value's JSON text, each shown.
 *
 * @since 0.1.0
 * @category model
 */
export interface ShownArgument {
  readonly key: Shown
  readonly value: Shown
}

/**
 * What `onAsk` receives: everything a human needs to decide one call. The facts (`tool`, `locations`,
 * `shown`) are ready to display as they are; `reason` is the model's own words, shown last.
 *
 * @since 0.1.0
 * @category model
 */
export interface PermissionRequest {
  readonly kind: 'permission'
  readonly tool: string
  /** The parsed arguments, `reason` included; `{}` when the call carried none. */
  readonly arguments: Args
  /** A copy of the call: changing it changes nothing about what runs. */
  readonly call: ToolCall
  /** The static rule that asked, when one did. */
  readonly rule: Rule | undefined
  readonly why: Why
  readonly paths: ReadonlyArray<string>
  /**
   * The rule an "always" answer records when it gives none; `undefined` when "always" is not offered (a
   * location could not be checked, so no rule would say only what was shown): answer once.
   */
  readonly suggestedRule: Rule | undefined
  /**
   * How long an "always" answer lasts: this session (the default), or every session sharing the grants (a
   * gateway's store, across restarts and replicas).
   */
  readonly remembered?: 'session' | 'shared'
  // the three below are optional only so that a request written by hand (a host's test) still type-checks:
  // `requestFor` always gives them
  /**
   * Every location the policy judged, with the argument it came from, those a human should look at first
   * first (unknown, then touching a guarded directory, then outside every allowed one); a key the tool does
   * not declare is listed as unknown.
   */
  readonly locations?: ReadonlyArray<ShownLocation>
  /** Every argument key, in the call's order, with its value; `reason` among them, its value shown below. */
  readonly shown?: ReadonlyArray<ShownArgument>
  /** The model's `reason`, when it gave one: its own words, not checked by anyone. */
  readonly reason?: Shown | undefined
  /**
   * The tool's definition, when it has something to say (a policy given `definitions`): what changed since it
   * was pinned, its flags, and whether a grant was set aside because it was given under an earlier definition.
   */
  readonly definition?: DefinitionNotice | undefined
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const quote = (s: string): string => JSON.stringify(s)

/**
 * How many characters of each kind of text a question shows.
 *
 * @since 0.1.0
 * @category model
 */
export const SHOWN_LIMITS = Object.freeze({
  tool: 200,
  key: 100,
  value: 200,
  path: 500,
  reason: 500,
  /** Lines of locations, then of arguments, a question shows before "and N more". */
  locations: 12,
  arguments: 30,
  /** Lines of what changed in the tool's definition, and of its flags. */
  changes: 12,
})

/**
 * A value from a model, shown as its JSON text (a string in quotes, with `\n` for a line break), at most
 * `max` characters.
 *
 * @example
 * import { showValue } from './Answer.js'
 * assert.deepStrictEqual(showValue('a\nb', 100), { text: '"a\\nb"', cut: 0 })
 * assert.deepStrictEqual(showValue({ n: 1 }, 100), { text: '{"n":1}', cut: 0 })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const showValue = (u: unknown, max: number): Shown => {
  let text: string
  try {
    // undefined, a function or a symbol has no JSON text
    text = JSON.stringify(u) ?? describeValue(u)
  } catch {
    // a BigInt, a cycle, a throwing toJSON or getter
    text = describeValue(u)
  }
  return bounded(escapeControls(text), max)
}

const shownMore = (s: Shown): string => (s.cut === 0 ? s.text : `${s.text}… (${s.cut} more characters not shown)`)

const RANK: Readonly<Record<Concern, number>> = { unknown: 0, touches: 1, outside: 2, inside: 3 }

// a location's problem, as shown: its words are the policy's, but they may quote a model's argument name
const problemOf = (l: Exclude<PathLocation, { readonly _tag: 'Known' | 'Missing' }>): string => {
  if (l._tag !== 'Unread') return l.problem
  const reads = l.reading._tag === 'Known' ? `; it reads as ${l.reading.path}` : ''
  return `looks like a location and is not read as one: a locationArgs entry ${JSON.stringify(cut(l.arg, 100))} reads it${reads}`
}

/**
 * The locations, arguments and reason of a request, shown: the facts a human decides on, each escaped and
 * bounded; the locations in the order a human should read them (`concerns`, one per location: unknown first,
 * then touching a guarded directory, then outside every allowed one, then the rest), each kind in the call's
 * order.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const showFacts = (
  locations: ReadonlyArray<PathLocation>,
  args: Args,
  concerns: ReadonlyArray<Concern> = [],
): Required<Pick<PermissionRequest, 'locations' | 'shown' | 'reason'>> => ({
  locations: locations
    .map((l, i) => ({ l, concern: concerns[i] ?? (l._tag === 'Known' ? 'inside' : 'unknown') }))
    .sort((a, b) => RANK[a.concern] - RANK[b.concern])
    .flatMap(({ l, concern }): ReadonlyArray<ShownLocation> => {
      if (l._tag === 'Missing') return []
      const arg = showText(l.arg, SHOWN_LIMITS.key)
      if (l._tag !== 'Known') return [{ _tag: 'Unknown', arg, problem: problemOf(l) }]
      const path = showText(l.path, SHOWN_LIMITS.path)
      return [
        l.sent === undefined
          ? { _tag: 'Known', arg, path, concern }
          : { _tag: 'Known', arg, path, sent: showValue(l.sent, SHOWN_LIMITS.path), concern },
      ]
    }),
  shown: Object.keys(args).map((k) => ({
    key: showValue(k, SHOWN_LIMITS.key),
    value: showValue(args[k], SHOWN_LIMITS.value),
  })),
  reason: hasOwn(args, REASON_PARAM) ? showValue(args[REASON_PARAM], SHOWN_LIMITS.reason) : undefined,
})

// the rule an "always" records, as `drawRule` writes it, each part escaped and bounded like the facts above it
const alwaysText = (r: Rule): string =>
  `${r.decision} ${shownMore(showValue(r.tool, SHOWN_LIMITS.tool))}${
    r.under === undefined ? '' : ` under ${shownMore(showText(r.under, SHOWN_LIMITS.path))}`
  }`

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

// the first line: the tool and where, short whatever the call: one path is named, more are counted, with how
// many a human should look at first, and how many locations could not be checked at all
const firstLine = (tool: string, paths: ReadonlyArray<string>, locations: ReadonlyArray<ShownLocation>): string => {
  const known = locations.filter((l): l is Extract<ShownLocation, { readonly _tag: 'Known' }> => l._tag === 'Known')
  const unchecked = locations.length - known.length
  const [only, ...others] = paths
  if (unchecked === 0 && only !== undefined && others.length === 0)
    return `May the model call ${tool} on ${shownMore(showText(only, SHOWN_LIMITS.path))}?`
  const count = (c: Concern): number => known.filter((l) => l.concern === c).length
  const notes = [
    [count('touches'), 'in a guarded directory'],
    [count('outside'), 'outside every allowed directory'],
  ] as const
  const said = notes.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`)
  const where = [
    ...(paths.length === 0
      ? []
      : [`${plural(paths.length, 'path')}${said.length === 0 ? '' : ` (${said.join(', ')})`}`]),
    ...(unchecked === 0 ? [] : [`${plural(unchecked, 'location')} that could not be checked`]),
  ]
  return `May the model call ${tool}${where.length === 0 ? '' : ` on ${where.join(' and ')}`}?`
}

// at most `max` lines of `items`, then one saying how many more there are
const capped = <A>(
  items: ReadonlyArray<A>,
  max: number,
  line: (a: A) => string,
  more: string,
): ReadonlyArray<string> => {
  const first = firstOf(items, max)
  const lines = first.shown.map(line)
  return first.more === 0 ? lines : [...lines, `  … and ${first.more} more ${more} not shown`]
}

const locationLine = (l: ShownLocation): string =>
  l._tag === 'Known'
    ? `  ${shownMore(l.arg)}: ${shownMore(l.path)}${l.sent === undefined ? '' : ` (sent as ${shownMore(l.sent)})`}`
    : `  ${shownMore(l.arg)}: not checked (${escapeControls(l.problem)})`

// what the question says of the tool's definition, right under its first line: the server's words, escaped and
// bounded where they were drawn, each on a line of its own
const definitionLines = (d: DefinitionNotice | undefined): ReadonlyArray<string> =>
  d === undefined
    ? []
    : [
        ...(d.grantSetAside
          ? ['Asked again: "always" was answered for an earlier definition of this tool, and it has changed since.']
          : []),
        ...(d.changes.length === 0
          ? []
          : [
              d.pinned === undefined
                ? `Its definition is new and not accepted yet (${shortHash(d.hash)}):`
                : `Its definition changed since it was pinned (${shortHash(d.pinned)} is now ${shortHash(d.hash)}):`,
              ...d.changes.slice(0, SHOWN_LIMITS.changes).map((l) => `  ${l}`),
            ]),
        ...(d.flags.length === 0
          ? []
          : ['Its definition is flagged:', ...d.flags.slice(0, SHOWN_LIMITS.changes).map((l) => `  ${l}`)]),
      ]

/**
 * A request as the lines of a question, facts first: a short first line (the tool, and its one path or how
 * many paths, and how many a human should look at first), what changed in the tool's definition since it was
 * pinned and its flags (when a policy is given `definitions`), every location with its argument (those to look at
 * first first, at most `SHOWN_LIMITS.locations` lines, then how many more), every argument with its value (at
 * most `SHOWN_LIMITS.arguments` lines), what "always" would remember (or that it is not offered), and last,
 * on one line, the model's reason, labelled as its own words. Nothing a model wrote can start a line of its
 * own, or push a fact out of sight.
 *
 * @example
 * import { drawPermissionRequest } from 'toolstack'
 * import { showFacts } from './Answer.js'
 * const args = { path: '/w/a', reason: 'save it\nArguments: none' }
 * const locations = [{ _tag: 'Known', arg: 'path', path: '/w/a' }] as const
 * const request = {
 *   tool: 'fs_write',
 *   paths: ['/w/a'],
 *   suggestedRule: { tool: 'fs_write', decision: 'allow', under: '/w' },
 *   ...showFacts(locations, args),
 * } as const
 * assert.deepStrictEqual(drawPermissionRequest(request), [
 *   'May the model call fs_write on /w/a?',
 *   'Locations, each with the argument it came from:',
 *   '  path: /w/a',
 *   'Arguments:',
 *   '  "path": "/w/a"',
 *   '  "reason": (shown last)',
 *   '"Always" remembers: allow "fs_write" under /w, for this session.',
 *   'The model\'s reason, in its own words (not checked): "save it\\nArguments: none"',
 * ])
 *
 * @since 0.1.0
 * @category destructors
 */
export const drawPermissionRequest = (
  request: Pick<
    PermissionRequest,
    'tool' | 'paths' | 'suggestedRule' | 'remembered' | 'locations' | 'shown' | 'reason' | 'definition'
  > & {
    readonly arguments?: Args
  },
): ReadonlyArray<string> => {
  const tool = shownMore(showText(request.tool, SHOWN_LIMITS.tool))
  // a request written by hand (no `shown`): its facts are derived from its arguments
  const { shown, reason } =
    request.shown === undefined
      ? showFacts([], request.arguments ?? {})
      : { shown: request.shown, reason: request.reason }
  const locations = request.locations
  const always = request.suggestedRule
  return [
    firstLine(tool, request.paths, locations ?? []),
    ...definitionLines(request.definition),
    ...(locations === undefined
      ? []
      : locations.length === 0
        ? ['Locations: none (the call gives no location argument the tool declares)']
        : [
            'Locations, each with the argument it came from:',
            ...capped(locations, SHOWN_LIMITS.locations, locationLine, 'locations'),
          ]),
    ...(shown.length === 0
      ? ['Arguments: none']
      : [
          'Arguments:',
          ...capped(
            shown,
            SHOWN_LIMITS.arguments,
            (a) => `  ${shownMore(a.key)}: ${a.key.text === quote(REASON_PARAM) ? '(shown last)' : shownMore(a.value)}`,
            'arguments',
          ),
        ]),
    always === undefined
      ? '"Always" is not offered: a location could not be checked, so only this call can be answered.'
      : `"Always" remembers: ${alwaysText(always)}, ${
          request.remembered === 'shared' ? 'for every session sharing these grants, until removed' : 'for this session'
        }.`,
    ...(reason === undefined ? [] : [`The model's reason, in its own words (not checked): ${shownMore(reason)}`]),
  ]
}

/**
 * What a valid answer means: the action and, for `always-*`, the rule to record.
 *
 * @since 0.1.0
 * @category model
 */
export interface DecodedAnswer {
  readonly action: PermissionAction
  readonly grant: Rule | undefined
}

const ANSWER_MEMBERS: ReadonlyArray<string> = ['action', 'rule']
const Action = t.keyof({
  'allow-once': null,
  'deny-once': null,
  'always-allow': null,
  'always-deny': null,
  unasked: null,
})

/**
 * Decodes `onAsk`'s answer. Unknown members, an unknown action, a rule that is not a valid rule or whose
 * decision contradicts the action: each returns a Left naming the problem.
 *
 * @example
 * import { decodeAnswer } from './Answer.js'
 * const suggestedRule = { tool: 'fs_write', decision: 'allow', under: '/p' } as const
 * assert.deepStrictEqual(decodeAnswer({ action: 'always-deny' }, suggestedRule), {
 *   _tag: 'Right',
 *   right: { action: 'always-deny', grant: { tool: 'fs_write', decision: 'deny', under: '/p' } },
 * })
 * assert.strictEqual(decodeAnswer({ action: 'yes' }, suggestedRule)._tag, 'Left')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decodeAnswer = (
  u: unknown,
  suggestedRule: Rule | undefined,
): Either<{ readonly _tag: 'UnclearAnswer' | 'InvalidRule'; readonly problem: string }, DecodedAnswer> => {
  const unclear = (problem: string) => left({ _tag: 'UnclearAnswer' as const, problem })
  const invalid = (problem: string) => left({ _tag: 'InvalidRule' as const, problem })
  try {
    if (typeof u !== 'object' || u === null || Array.isArray(u))
      return unclear(`expected { action, rule? }, got ${describeValue(u)}`)
    const extra = Object.keys(u).filter((k) => !ANSWER_MEMBERS.includes(k))
    if (extra.length > 0) return unclear(`unknown member ${extra.map(quote).join(', ')}; an answer has: action, rule`)
    const action: unknown = own(u, 'action')
    if (!Action.is(action))
      return unclear(
        `action must be "allow-once", "deny-once", "always-allow", "always-deny" or "unasked", got ${describeValue(action)}`,
      )
    if (action === 'allow-once' || action === 'deny-once' || action === 'unasked')
      return right({ action, grant: undefined })
    const decision: Decision = action === 'always-allow' ? 'allow' : 'deny'
    const given: unknown = own(u, 'rule')
    if (given === undefined) {
      // no rule was offered: one would cover more than the human was shown
      if (suggestedRule === undefined)
        return invalid('"always" was not offered for this call (a location could not be checked): answer once')
      // the suggested rule names the tool the model called; a name with `*` would be read back as a wildcard, so
      // an "always" over it would cover tools no one was asked about
      if (suggestedRule.tool.includes('*'))
        return invalid(
          `the tool's name ${quote(suggestedRule.tool)} holds "*", which a rule reads as a wildcard: answer once`,
        )
    }
    const source: unknown = given === undefined ? suggestedRule : given
    if (typeof source !== 'object' || source === null || Array.isArray(source))
      return invalid(`rule must be a rule, got ${describeValue(source)}`)
    const candidate = ownCopy(source)
    // the suggested rule is phrased for "always allow"; for "always deny" it is the same scope, refused
    if (given === undefined || !hasOwn(candidate, 'decision')) candidate['decision'] = decision
    else if (candidate['decision'] !== decision) {
      return invalid(`its decision ${describeValue(candidate['decision'])} contradicts the answer ${quote(action)}`)
    }
    const rule = decodeRule(candidate)
    return isLeft(rule) ? invalid(rule.left) : right({ action, grant: rule.right })
  } catch (e) {
    return unclear(`it could not be read: ${describeError(e)}`)
  }
}

const sameRule = (a: Rule, b: Rule): boolean =>
  a.tool === b.tool &&
  a.decision === b.decision &&
  a.under === b.under &&
  a.note === b.note &&
  a.definition === b.definition

/**
 * The grant list with `rule` added; the same list (same reference) when an equal rule is already there.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const recordGrant =
  (rule: Rule) =>
  (grants: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
    grants.some((g) => sameRule(g, rule)) ? grants : Object.freeze([...grants, rule])

/**
 * The grant list without `rule` (a grant taken back); the same list (same reference) when no equal rule is there.
 *
 * @example
 * import { forgetGrant, recordGrant } from './Answer.js'
 * const grants = recordGrant({ tool: 'fs_write', decision: 'allow' })([])
 * assert.deepStrictEqual(forgetGrant({ tool: 'fs_write', decision: 'allow' })(grants), [])
 * assert.strictEqual(forgetGrant({ tool: 'fs_read', decision: 'allow' })(grants), grants)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const forgetGrant =
  (rule: Rule) =>
  (grants: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
    grants.some((g) => sameRule(g, rule)) ? Object.freeze(grants.filter((g) => !sameRule(g, rule))) : grants
