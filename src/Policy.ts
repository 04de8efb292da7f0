/**
 * `withPolicy`: did the human agree to this call? Static rules allow, deny or ask;
 * asking goes to the host's `onAsk`, one question at a time, and "always" answers
 * become session grants. Allowed calls are forwarded untouched; everything else is
 * answered with an `is_error` result the model can act on. A batch never fails.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import type { Task } from 'fp-ts/lib/Task.js'
import * as t from 'io-ts/lib/index.js'
import type { Args, ArgsProblem } from './Args.js'
import { drawArgsProblem, noneAsEmpty } from './Args.js'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from './Provider.js'
import { assertProvider } from './Provider.js'
import type { ArgsAt } from './internal/argsMemo.js'
import { argsOfBatch, handDownFrom } from './internal/argsMemo.js'
import { assertCallback, decodeOptions, describeValue } from './internal/options.js'
import { answerFor, callIdOf, callNameOf, describeError, errorResult, failAll } from './internal/results.js'
import type { Decision, Rule } from './policy/Rule.js'
import { decodeRule, decodeRules, drawRule, isBareDeny, matchesTool } from './policy/Rule.js'
import type { Evaluation, Why } from './policy/evaluate.js'
import { decisionWithoutArgs, evaluate } from './policy/evaluate.js'
import type { Roots } from './policy/paths.js'
import { locate, normalizeAbsolute } from './policy/paths.js'
import { hasOwn, own } from './internal/guards.js'

export type { Decision, Rule } from './policy/Rule.js'
export { RULE_MEMBERS, RuleCodec, decodeRule, decodeRules, drawRule, isBareDeny, isToolGlob, matchesTool } from './policy/Rule.js'
export type { Evaluation, Why } from './policy/evaluate.js'
export { decisionWithoutArgs, evaluate } from './policy/evaluate.js'
export type { Containment, PathLocation, Roots } from './policy/paths.js'
export {
  LOCATION_ARGS,
  absolutise,
  commonDirectory,
  containment,
  isInside,
  locate,
  normalizeAbsolute,
  rootFor,
} from './policy/paths.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How the human answered.
 *
 * @since 0.1.0
 * @category model
 */
export type PermissionAction = 'allow-once' | 'deny-once' | 'always-allow' | 'always-deny'

/**
 * A rule to remember, as an answer may give it: `decision` may be left out, and is
 * then taken from the action.
 *
 * @since 0.1.0
 * @category model
 */
export type GrantRule = Omit<Rule, 'decision'> & { readonly decision?: Decision }

/**
 * What `onAsk` resolves to. `rule` matters only for `always-*` and defaults to the
 * request's `suggestion`; it is ignored for `*-once`.
 *
 * @since 0.1.0
 * @category model
 */
export interface PermissionAnswer {
  readonly action: PermissionAction
  readonly rule?: GrantRule
}

/**
 * What `onAsk` is handed: everything a human needs to decide one call.
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
  /** The rule an "always" answer records when it gives none. */
  readonly suggestion: Rule
}

/**
 * @since 0.1.0
 * @category model
 */
export interface PolicyOptions {
  /** The static rules. `[]` is allowed and means: ask about every call. */
  readonly rules: ReadonlyArray<Rule>
  /** Asks the human. Without it the policy is headless: every ask is refused. */
  readonly onAsk?: (request: PermissionRequest) => Task<PermissionAnswer>
  /** Grants to start the session with (rules, consulted only when the static rules ask). */
  readonly grants?: ReadonlyArray<Rule>
  /** Told the whole grant list after each "always" answer, to persist it. */
  readonly onGrant?: (grants: ReadonlyArray<Rule>) => IO<void>
  /** Tool-name prefix → directory that relative locations are resolved against. */
  readonly roots?: Roots
  /** Leave tools refused by a bare deny rule out of the listing. Default `true`. */
  readonly filterTools?: boolean
}

/**
 * A provider plus the session's grants.
 *
 * @since 0.1.0
 * @category model
 */
export interface PolicyProvider<E> extends Provider<E> {
  /** The grants held now: the initial ones, then each "always" answer, oldest first. */
  readonly grants: IO<ReadonlyArray<Rule>>
}

/**
 * Why a call was not run. Rendered for the model by `drawRefusal`.
 *
 * @since 0.1.0
 * @category model
 */
export type Refusal =
  | { readonly _tag: 'MalformedCall' }
  | { readonly _tag: 'DeniedByRule'; readonly tool: string; readonly rule: Rule; readonly unevaluable: ReadonlyArray<string> }
  | { readonly _tag: 'DeniedByGrant'; readonly tool: string; readonly rule: Rule }
  | { readonly _tag: 'DeclinedByUser'; readonly tool: string; readonly remembered: Rule | undefined }
  | { readonly _tag: 'NoOneToAsk'; readonly tool: string }
  | { readonly _tag: 'UnreadableArguments'; readonly tool: string; readonly problem: ArgsProblem }
  | { readonly _tag: 'AskFailed'; readonly tool: string; readonly error: string }
  | { readonly _tag: 'UnclearAnswer'; readonly tool: string; readonly problem: string }
  | { readonly _tag: 'InvalidRule'; readonly tool: string; readonly problem: string }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The read-only tools of the reference MCP filesystem server
 * (`@modelcontextprotocol/server-filesystem`), each annotated `readOnlyHint: true`
 * there. Exact names, not verb globs: a name is a server's claim, and `get_*` would
 * also trust a `get_and_delete`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const READ_ONLY_TOOLS: ReadonlyArray<string> = Object.freeze([
  'read_file',
  'read_text_file',
  'read_media_file',
  'read_multiple_files',
  'list_directory',
  'list_directory_with_sizes',
  'directory_tree',
  'search_files',
  'get_file_info',
  'list_allowed_directories',
])

/**
 * `defaultRules` for tools published under a namespace, e.g. `readOnlyRules('fs_')`
 * behind `registry([{ prefix: 'fs', provider }])`.
 *
 * @example
 * import { readOnlyRules } from 'toolstack'
 * assert.deepStrictEqual(readOnlyRules('fs_')[0], { tool: 'fs_read_file', decision: 'allow' })
 *
 * @since 0.1.0
 * @category constructors
 */
export const readOnlyRules = (prefix: string): ReadonlyArray<Rule> => {
  if (typeof prefix !== 'string' || prefix.includes('*')) {
    throw new TypeError(`readOnlyRules: prefix must be a string without "*", got ${describeValue(prefix)}`)
  }
  return Object.freeze(READ_ONLY_TOOLS.map((name): Rule => Object.freeze({ tool: prefix + name, decision: 'allow' })))
}

/**
 * A small read-only set: allow each of `READ_ONLY_TOOLS`, by exact name, anywhere.
 * Everything else matches no rule and is asked about.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultRules: ReadonlyArray<Rule> = readOnlyRules('')

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const quote = (s: string): string => JSON.stringify(s)

/**
 * A refusal in words a model can act on: who refused, why, and what to do instead.
 *
 * @example
 * import { drawRefusal } from 'toolstack'
 * assert.strictEqual(
 *   drawRefusal({ _tag: 'DeniedByRule', tool: 'fs_write', rule: { tool: 'fs_write', decision: 'deny', note: 'the repo is read-only' }, unevaluable: [] }),
 *   'The permission policy refused this call to "fs_write" (rule: deny "fs_write"). Reason: the repo is read-only. It was not run; do not retry it as is.',
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const drawRefusal = (r: Refusal): string => {
  switch (r._tag) {
    case 'MalformedCall':
      return 'The permission policy could not read this tool call, so it was not run. Send a call with an id and a function { name, arguments }.'
    case 'DeniedByRule': {
      const reason = r.rule.note === undefined ? 'none was given' : r.rule.note
      const unchecked =
        r.unevaluable.length === 0
          ? ''
          : ` Its location could not be checked (${r.unevaluable.join('; ')}), so the rule applied to be safe; a call with a clean absolute path may be treated differently.`
      return `The permission policy refused this call to ${quote(r.tool)} (rule: ${drawRule(r.rule)}). Reason: ${reason}.${unchecked} It was not run; do not retry it as is.`
    }
    case 'DeniedByGrant':
      return `The user has refused calls like this to ${quote(r.tool)} for this session (rule: ${drawRule(r.rule)}${r.rule.note === undefined ? '' : `; ${r.rule.note}`}). It was not run; do not retry it, and ask the user if you need it.`
    case 'DeclinedByUser':
      return r.remembered === undefined
        ? `The user declined this call to ${quote(r.tool)}. It was not run; do not retry it unchanged, and ask the user how to proceed.`
        : `The user declined this call to ${quote(r.tool)} and refused calls like it for this session (rule: ${drawRule(r.remembered)}). It was not run; do not retry it, and ask the user how to proceed.`
    case 'NoOneToAsk':
      return `This call to ${quote(r.tool)} needs the user's permission, and no one is available to give it, so it was not run. Use a tool the policy allows, or ask the user to allow ${quote(r.tool)}.`
    case 'UnreadableArguments':
      return `This call to ${quote(r.tool)} needs the user's permission, but it cannot be shown to them: ${drawArgsProblem(r.problem)}. It was not run; send the arguments as a JSON object.`
    case 'AskFailed':
      return `This call to ${quote(r.tool)} needs the user's permission, and asking failed (${r.error}), so it was not run. Try again later, or ask the user to allow it.`
    case 'UnclearAnswer':
      return `This call to ${quote(r.tool)} needs the user's permission, and the answer could not be understood (${r.problem}), so it was not run. Ask the user again.`
    case 'InvalidRule':
      return `This call to ${quote(r.tool)} was answered "always", but the rule to remember is invalid (${r.problem}), so nothing was remembered and the call was not run. Ask the user again.`
  }
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
const Action = t.keyof({ 'allow-once': null, 'deny-once': null, 'always-allow': null, 'always-deny': null })

const ownCopy = (o: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(o)) {
    // defineProperty: `__proto__` is a member name like any other
    Object.defineProperty(out, k, { value: (o as Record<string, unknown>)[k], enumerable: true, writable: true, configurable: true })
  }
  return out
}

/**
 * Reads `onAsk`'s answer. Unknown members, an unknown action, a rule that is not a
 * valid rule or whose decision contradicts the action: each is a Left saying which.
 *
 * @example
 * import { decodeAnswer } from 'toolstack'
 * const suggestion = { tool: 'fs_write', decision: 'allow', under: '/p' } as const
 * assert.deepStrictEqual(decodeAnswer({ action: 'always-deny' }, suggestion), {
 *   _tag: 'Right',
 *   right: { action: 'always-deny', grant: { tool: 'fs_write', decision: 'deny', under: '/p' } },
 * })
 * assert.strictEqual(decodeAnswer({ action: 'yes' }, suggestion)._tag, 'Left')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const decodeAnswer = (
  u: unknown,
  suggestion: Rule,
): Either<{ readonly _tag: 'UnclearAnswer' | 'InvalidRule'; readonly problem: string }, DecodedAnswer> => {
  const unclear = (problem: string) => left({ _tag: 'UnclearAnswer' as const, problem })
  const invalid = (problem: string) => left({ _tag: 'InvalidRule' as const, problem })
  try {
    if (typeof u !== 'object' || u === null || Array.isArray(u)) return unclear(`expected { action, rule? }, got ${describeValue(u)}`)
    const extra = Object.keys(u).filter((k) => !ANSWER_MEMBERS.includes(k))
    if (extra.length > 0) return unclear(`unknown member ${extra.map(quote).join(', ')}; an answer has: action, rule`)
    const action: unknown = own(u, 'action')
    if (!Action.is(action)) return unclear(`action must be "allow-once", "deny-once", "always-allow" or "always-deny", got ${describeValue(action)}`)
    if (action === 'allow-once' || action === 'deny-once') return right({ action, grant: undefined })
    const decision: Decision = action === 'always-allow' ? 'allow' : 'deny'
    const given: unknown = own(u, 'rule')
    const source: unknown = given === undefined ? suggestion : given
    if (typeof source !== 'object' || source === null || Array.isArray(source)) return invalid(`rule must be a rule, got ${describeValue(source)}`)
    const candidate = ownCopy(source)
    // the suggestion is phrased for "always allow"; for "always deny" it is the same
    // scope, refused
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

const sameRule = (a: Rule, b: Rule): boolean => a.tool === b.tool && a.decision === b.decision && a.under === b.under && a.note === b.note

/**
 * The grant list with `rule` remembered; the very same list when an equal rule is
 * already there.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const recordGrant =
  (rule: Rule) =>
  (grants: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
    grants.some((g) => sameRule(g, rule)) ? grants : Object.freeze([...grants, rule])

// -------------------------------------------------------------------------------------
// combinator
// -------------------------------------------------------------------------------------

// callbacks are checked by assertCallback, which says what a callback must be, as
// every combinator does
const OptionsProps = {
  rules: t.unknown,
  onAsk: t.unknown,
  grants: t.unknown,
  onGrant: t.unknown,
  roots: t.unknown,
  filterTools: t.boolean,
}

const orThrow = <A>(where: string, e: Either<string, A>): A => {
  if (isLeft(e)) throw new TypeError(`${where}: ${e.left}`)
  return e.right
}

const decodeRoots = (where: string, u: unknown): Roots => {
  if (u === undefined) return {}
  if (typeof u !== 'object' || u === null || Array.isArray(u)) {
    throw new TypeError(`${where}: roots must be an object mapping a tool-name prefix to a directory, got ${describeValue(u)}`)
  }
  const out: Record<string, string> = {}
  for (const [prefix, dir] of Object.entries(u)) {
    const clean = typeof dir === 'string' ? normalizeAbsolute(dir) : left('is not a string')
    if (isLeft(clean)) {
      throw new TypeError(`${where}: roots[${quote(prefix)}] must be an absolute POSIX path without "..", NUL, backslash or "~", got ${describeValue(dir)}`)
    }
    Object.defineProperty(out, prefix, { value: clean.right, enumerable: true })
  }
  return Object.freeze(out)
}

const copyArguments = (raw: unknown): ToolCall['function']['arguments'] => {
  if (typeof raw === 'string') return raw
  if (typeof raw !== 'object' || raw === null) return ''
  try {
    return structuredClone(raw) as Args
  } catch {
    return ownCopy(raw)
  }
}

const copyCall = (call: object, tool: string, raw: unknown): ToolCall => {
  let type: unknown
  try {
    type = (call as { readonly type?: unknown }).type
  } catch {
    type = undefined
  }
  return {
    id: callIdOf(call),
    ...(type === 'function' ? { type: 'function' as const } : {}),
    function: { name: tool, arguments: copyArguments(raw) },
  }
}

type Settled = { readonly _tag: 'result'; readonly result: ToolResult } | { readonly _tag: 'forward' }

interface Pending {
  readonly _tag: 'pending'
  readonly call: object
  readonly tool: string
  readonly raw: unknown
  readonly parsed: Either<ArgsProblem, Args>
  /** What the rules see: `{}` for no arguments, `undefined` for unreadable ones. */
  readonly args: Args | undefined
  readonly verdict: Evaluation
}

const FORWARD: Settled = { _tag: 'forward' }

/**
 * Allows, denies or asks about each call. Allowed calls go to the inner provider as
 * one batch, each the very object the caller passed; every other call is answered
 * with an `is_error` result saying who refused and why. Asking goes through `onAsk`,
 * one question at a time; "always" answers become grants. Never fails a batch; a
 * failed listing passes through.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import { withPolicy } from 'toolstack'
 * const inner = {
 *   toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [] }),
 *   executeToolCalls: (calls) => () => Promise.resolve({ _tag: 'Right', right: calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'done' })) }),
 * }
 * const tools = pipe(inner, withPolicy({ rules: [{ tool: 'rm', decision: 'deny', note: 'never delete' }, { tool: 'ls', decision: 'allow' }] }))
 * const out = await tools.executeToolCalls([
 *   { id: '1', function: { name: 'ls', arguments: '{}' } },
 *   { id: '2', function: { name: 'rm', arguments: '{"path":"/"}' } },
 * ])()
 * assert.strictEqual(out._tag === 'Right' && out.right[0]?.content, 'done')
 * assert.strictEqual(out._tag === 'Right' && out.right[1]?.is_error, true)
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPolicy = (options: PolicyOptions): (<E>(provider: Provider<E>) => PolicyProvider<E>) => {
  const where = 'withPolicy'
  const opts = decodeOptions(where, OptionsProps, options)
  if (opts.rules === undefined) {
    throw new TypeError(`${where}: option "rules" is required (an array of rules; [] asks about every call)`)
  }
  const rules = orThrow(where, decodeRules(opts.rules, 'rules'))
  const initialGrants = opts.grants === undefined ? Object.freeze([]) : orThrow(where, decodeRules(opts.grants, 'grants'))
  const roots = decodeRoots(where, opts.roots)
  assertCallback(where, 'onAsk', opts.onAsk, 1)
  assertCallback(where, 'onGrant', opts.onGrant, 1)
  const onAsk = opts.onAsk as PolicyOptions['onAsk']
  const onGrant = opts.onGrant as PolicyOptions['onGrant']
  const filterTools = opts.filterTools ?? true
  // One human answers for every provider built from these options, so they share
  // one queue of questions: a promise chain, each question starting when the last
  // one settled.
  const questions: IORef<Promise<void>> = newIORef<Promise<void>>(Promise.resolve())()
  const oneAtATime = <A>(ask: () => Promise<A>): Promise<A> => {
    const turn = questions.read().then(ask)
    const settled = turn.then(
      () => undefined,
      () => undefined,
    )
    questions.write(settled)()
    return turn
  }

  return <E>(provider: Provider<E>): PolicyProvider<E> => {
    assertProvider(where, provider)
    const grants: IORef<ReadonlyArray<Rule>> = newIORef(initialGrants)()
    // the static rules never change, so a tool's name-only decision is computed once
    const byName = new Map<string, boolean>()
    const allowedByName = (tool: string): boolean => {
      let allowed = byName.get(tool)
      if (allowed === undefined) {
        allowed = decisionWithoutArgs(rules, tool) === 'allow'
        if (byName.size < 4096) byName.set(tool, allowed)
      }
      return allowed
    }

    const refuse = (call: unknown, r: Refusal): Settled => ({ _tag: 'result', result: errorResult(call, drawRefusal(r)) })

    const unevaluable = (p: Pending): ReadonlyArray<string> =>
      p.verdict.why !== 'unevaluable-path'
        ? []
        : locate(p.args, p.tool, roots).flatMap((l) =>
            l._tag === 'Unknown' ? [`${l.arg} ${l.problem}`] : l._tag === 'Missing' ? ['it names no path, from or to'] : [],
          )

    const granted = (p: Pending): Settled | undefined => {
      const g = evaluate(grants.read(), p.tool, p.args, roots)
      if (g.rule === undefined || g.decision === 'ask') return undefined
      return g.decision === 'allow' ? FORWARD : refuse(p.call, { _tag: 'DeniedByGrant', tool: p.tool, rule: g.rule })
    }

    const remember = (rule: Rule): void => {
      // read-compute-write in one synchronous step
      grants.write(recordGrant(rule)(grants.read()))()
      const all = grants.read()
      try {
        onGrant?.(all)()
      } catch {
        // a host callback that throws changes nothing about a tool call
      }
    }

    const askHuman = async (p: Pending, ask: NonNullable<PolicyOptions['onAsk']>, args: Args): Promise<Settled> => {
      const again = granted(p)
      if (again !== undefined) return again
      let request: PermissionRequest
      try {
        request = {
          kind: 'permission',
          tool: p.tool,
          arguments: args,
          call: copyCall(p.call, p.tool, p.raw),
          rule: p.verdict.rule,
          why: p.verdict.why,
          paths: p.verdict.paths,
          suggestion: p.verdict.suggestion,
        }
      } catch (e) {
        // arguments that throw when copied cannot be shown to a human: this call only is refused
        return refuse(p.call, { _tag: 'AskFailed', tool: p.tool, error: `the call could not be shown to the human (${describeError(e)})` })
      }
      let answer: unknown
      try {
        const task: unknown = ask(request)
        if (typeof task !== 'function') throw new TypeError(`it returned ${describeValue(task)}, not a Task (a function returning a Promise)`)
        answer = await (task as Task<unknown>)()
      } catch (e) {
        return refuse(p.call, { _tag: 'AskFailed', tool: p.tool, error: `onAsk failed: ${describeError(e)}` })
      }
      const decoded = decodeAnswer(answer, p.verdict.suggestion)
      if (isLeft(decoded)) return refuse(p.call, { ...decoded.left, tool: p.tool })
      const { action, grant } = decoded.right
      if (grant !== undefined) remember(grant)
      return action === 'allow-once' || action === 'always-allow'
        ? FORWARD
        : refuse(p.call, { _tag: 'DeclinedByUser', tool: p.tool, remembered: grant })
    }

    const settleAsk = async (p: Pending): Promise<Settled> => {
      const first = granted(p)
      if (first !== undefined) return first
      if (onAsk === undefined) return refuse(p.call, { _tag: 'NoOneToAsk', tool: p.tool })
      if (p.args === undefined) {
        return refuse(p.call, { _tag: 'UnreadableArguments', tool: p.tool, problem: isLeft(p.parsed) ? p.parsed.left : { _tag: 'Absent' } })
      }
      const args = p.args
      // the previous question may have granted this one: `askHuman` looks again
      return oneAtATime(() => askHuman(p, onAsk, args))
    }

    const classify = (argsAt: ArgsAt, i: number, call: unknown): Settled | Pending => {
      const tool = callNameOf(call)
      if (tool === undefined || typeof call !== 'object' || call === null) return refuse(call, { _tag: 'MalformedCall' })
      // allowed whatever its arguments say: not parsed here, so the layer below that
      // needs the arguments parses them, once
      if (allowedByName(tool)) return FORWARD
      const raw: unknown = (call as { readonly function: { readonly arguments?: unknown } }).function.arguments
      const parsed = argsAt(i, call, raw)
      const readable = noneAsEmpty(parsed)
      const args = isLeft(readable) ? undefined : readable.right
      const verdict = evaluate(rules, tool, args, roots)
      const pending: Pending = { _tag: 'pending', call, tool, raw, parsed, args, verdict }
      if (verdict.decision !== 'deny') return pending
      return verdict.rule === undefined
        ? refuse(call, { _tag: 'MalformedCall' })
        : refuse(call, { _tag: 'DeniedByRule', tool, rule: verdict.rule, unevaluable: unevaluable(pending) })
    }

    const runBatch = async (calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
      let list: ReadonlyArray<unknown>
      try {
        list = Array.from(calls as ReadonlyArray<unknown>)
      } catch {
        list = []
      }
      // keyed by the caller's very array: a layer above may have parsed it already
      const argsAt = list.length === 0 ? undefined : argsOfBatch(calls)
      const settled: Array<Settled> = []
      for (let i = 0; i < list.length; i++) {
        const call = list[i]
        let s: Settled | Pending
        try {
          s = classify(argsAt as ArgsAt, i, call)
        } catch {
          s = refuse(call, { _tag: 'MalformedCall' })
        }
        if (s._tag !== 'pending') {
          settled.push(s)
          continue
        }
        // questions of one batch are asked in the model's order
        try {
          settled.push(s.verdict.decision === 'allow' ? FORWARD : await settleAsk(s))
        } catch (e) {
          // whatever goes wrong while asking costs this call, not the batch
          settled.push(refuse(call, { _tag: 'AskFailed', tool: s.tool, error: describeError(e) }))
        }
      }
      // every call allowed: the inner provider gets the caller's very array
      // list is the caller's calls read once, so when every one is allowed the caller's
      // very array goes down
      if (Array.isArray(calls) && settled.every((s) => s._tag === 'forward')) {
        return list.length === 0 ? [] : answerFor(calls, () => provider.executeToolCalls(calls)())
      }
      const origin: Array<number> = []
      settled.forEach((s, i) => {
        if (s._tag === 'forward') origin.push(i)
      })
      const batch = origin.map((i) => list[i] as ToolCall)
      // the layers below read the same arguments: hand them the parses made here or above
      handDownFrom(calls, batch, origin)
      // nothing allowed, nothing sent: the inner provider never sees an empty batch
      const answers = batch.length === 0 ? [] : await answerFor(batch, () => provider.executeToolCalls(batch)())
      let next = 0
      return settled.map((s) => (s._tag === 'result' ? s.result : (answers[next++] as ToolResult)))
    }

    return {
      toolsForLlm: () =>
        provider.toolsForLlm().then((listed) => {
          if (!filterTools || listed._tag !== 'Right') return listed
          const refused = [...rules, ...grants.read()].filter(isBareDeny)
          if (refused.length === 0) return listed
          try {
            const kept = listed.right.filter((d: ToolDeclaration) => {
              const name = callNameOf(d)
              return name === undefined || !refused.some((r) => matchesTool(r.tool)(name))
            })
            return kept.length === listed.right.length ? listed : right(kept)
          } catch {
            return listed
          }
        }),
      executeToolCalls: (calls) => () =>
        runBatch(calls).then(
          (results) => right(results),
          // unreachable by construction; kept so a bug here still answers every call
          (e: unknown) => {
            try {
              return right(failAll(calls, `the permission policy failed: ${describeError(e)}`))
            } catch {
              return right([])
            }
          },
        ),
      grants: () => grants.read(),
    }
  }
}
