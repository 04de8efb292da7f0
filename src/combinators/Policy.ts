/**
 * `withPolicy`: a permission check on every call. Static rules allow, deny or ask; asking goes to the
 * host's `onAsk`, one question at a time, and "always" answers become session grants. Allowed calls are
 * forwarded as judged; every other call gets an `is_error` result the model can act on. A batch never
 * fails. Locations are read only from the arguments a tool declares, in the last listing that went
 * through here.
 *
 * Built from `steps/policy/`: each call is judged (`judge`, then `byGrants`), a question is asked in
 * turn (`QuestionQueue`, `askHuman`) and its answer remembered (`recordGrant`); the allowed calls go
 * down as one batch, and the results are put back in the caller's order (the step `registry` shares);
 * the listing hides the tools a bare deny refuses (`withoutRefusedTools`). Its options are checked by
 * `steps/policy/options.ts`, and what it says of itself is `steps/policy/diagnostics.ts`. One file: over 500 lines
 * because the combinator is one closure (its refs, the judgement, asking in turn, the listing) and half of
 * the file is its options' and types' reference documentation.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import * as t from 'io-ts/lib/index.js'
import type { Args, ArgsProblem, Batch, BatchProvider, Provider, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { assertProvider } from '../kernel/model.js'
import { batchOf, runBatch } from '../steps/Batch.js'
import { noneAsEmpty } from '../steps/Args.js'
import type { Rule } from '../steps/policy/Rule.js'
import { decodeRules, matchesTool } from '../steps/policy/Rule.js'
import type { LocationScope, Roots } from '../kernel/paths.js'
import { unreadLocations } from '../kernel/paths.js'
import type { LocationResolver } from '../kernel/resolve.js'
import type { ProtectedFile } from '../steps/policy/evaluate.js'
import { decodeProtect, decodeResolver, decodeRoots, locationNames } from '../steps/policy/options.js'
import type { PolicyDiagnostic } from '../steps/policy/diagnostics.js'
import { drawPolicyDiagnostic } from '../steps/policy/diagnostics.js'
import type { Refusal } from '../steps/policy/Refusal.js'
import { drawRefusal } from '../steps/policy/Refusal.js'
import { recordGrant } from '../steps/policy/Answer.js'
import type { Question, Verdict } from '../steps/policy/Verdict.js'
import { byGrants, judge, plainArguments } from '../steps/policy/Verdict.js'
import type { QuestionQueue } from '../steps/policy/questions.js'
import { newQuestionQueue } from '../steps/policy/questions.js'
import type { OnAsk } from '../steps/policy/ask.js'
import { askHuman, callWithArguments } from '../steps/policy/ask.js'
import { declaredArguments, rulesNameNoTool, withoutRefusedTools } from '../steps/policy/listing.js'
import type { DefinitionNotice, Standing } from '../steps/pins/Review.js'
import { grantHolds, noticeOf } from '../steps/pins/Review.js'
import { definitionInRules } from '../steps/policy/Rule.js'
import type { Answered, Step } from '../steps/answer.js'
import { FORWARD, answerHere, readPositions, sendBelow } from '../steps/answer.js'
import { callIdOf, callNameOf, keepContext, stableArgumentsText } from '../kernel/calls.js'
import { memberOf } from '../kernel/guards.js'
import { describeError, describeValue } from '../kernel/describe.js'
import { assertCallback, callBack, decodeOptions } from '../kernel/options.js'
import { modify } from '../kernel/ref.js'

export type { PolicyDiagnostic } from '../steps/policy/diagnostics.js'
export { drawPolicyDiagnostic, isPolicyDiagnostic } from '../steps/policy/diagnostics.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface PolicyOptions {
  /** The static rules. `[]` is allowed and means: ask about every call. */
  readonly rules: ReadonlyArray<Rule>
  /** Asks the human; returns a Task, a Promise or the answer. Without it (headless) every ask is refused. */
  readonly onAsk?: OnAsk | undefined
  /** Grants to start the session with (rules, consulted only when the static rules ask). */
  readonly grants?: ReadonlyArray<Rule>
  /** Called with the whole grant list after each "always" answer, to persist it. */
  readonly onGrant?: (grants: ReadonlyArray<Rule>) => IO<void> | void
  /**
   * Grants held outside this provider (by other sessions, other processes): read again at each judgement and
   * each listing, besides this provider's own; each "always" answer is also given to `addGrant`.
   */
  readonly shared?: SharedGrants
  /** Tool-name prefix → directory that relative locations are resolved against. */
  readonly roots?: Roots
  /**
   * More argument names to read as locations, besides `LOCATION_ARGS`; a name written `!name` is not a
   * location (never read, never suspected, even one of `LOCATION_ARGS`). Only those a tool declares are read;
   * one it does not declare makes `under` rules fail closed, and so does a declared argument whose name looks
   * like a location (`LOCATION_WORDS`) that is neither read nor said not to be one.
   */
  readonly locationArgs?: ReadonlyArray<string>
  /**
   * How a location is put in the form compared with a rule's directory, for every tool or per tool:
   * `'lexical'` (the default: as written, in NFC and normal form), or `'filesystem'` where this process
   * shares the server's filesystem (symbolic links followed, a name mapped onto its NFC twin, case folded on
   * a volume that ignores it), as the gateway does for the servers it starts; or a resolver of one's own
   * (`filesystemResolver({ caseInsensitive: true })` from `toolstack/extend`).
   */
  readonly resolver?: 'lexical' | 'filesystem' | LocationResolver | ((tool: string) => LocationResolver)
  /**
   * Files no call may touch, each with what it is (the gateway's own configuration, store and log): a call
   * whose location is one, lies in one, or holds one is refused whatever the rules say, and so is a call
   * with a location that cannot be checked against them.
   */
  readonly protect?: ReadonlyArray<ProtectedFile>
  /** Leave tools refused by a bare deny rule out of the listing. Default `true`. */
  readonly filterTools?: boolean
  /**
   * Whose turn it is to be asked: questions wait in this queue, one at a time. Default:
   * one queue per `withPolicy(options)`, so every provider built from the same options
   * asks one human, in turn. Give each provider its own `newQuestionQueue()` when each
   * has its own human (one per session of a server).
   */
  readonly questions?: QuestionQueue
  /** Called once when the rules name none of the listed tools. Default: one line on stderr. */
  readonly onDiagnostic?: (diagnostic: PolicyDiagnostic) => IO<void> | void
  /** Called with the outcome of every call and who decided it (for a decision log). */
  readonly onDecision?: (decision: PolicyDecision) => IO<void> | void
  /**
   * Each tool's definition standing (a `withDefinitionPins` provider's `definitions`): an "always" answer
   * records the definition it was given under, and an allowing grant holds only while the tool's definition is
   * that one (else the call is asked again, saying the definition changed and how, or refused where no one can
   * be asked); every question shows what changed and the definition's flags; a call to a tool whose change is
   * refused (`drift: 'refuse'`) is refused without asking.
   */
  readonly definitions?: (tool: string) => Standing | undefined
}

/**
 * Grants kept outside one provider, so that an "always" answer given in one session applies in every other
 * (a gateway's store). `grants` is synchronous: it answers with what is known now, never waits.
 *
 * @since 0.1.0
 * @category model
 */
export interface SharedGrants {
  /** The grants known now; read at each judgement and each listing. */
  readonly grants: IO<ReadonlyArray<Rule>>
  /** Told each "always" answer, once this provider has recorded it. */
  readonly addGrant: (rule: Rule) => void
}

/**
 * The outcome of one call, and who decided: the static rules, a grant of this session, the human, or
 * nobody (a question no one could be asked).
 *
 * @since 0.1.0
 * @category model
 */
export interface PolicyDecision {
  readonly tool: string
  /** The call's id, `''` when it has none. */
  readonly id: string
  readonly outcome: 'allowed' | 'refused'
  readonly by: 'rules' | 'grant' | 'human' | 'nobody'
  /** Why it was refused: the refusal's tag. */
  readonly refusal?: Refusal['_tag']
}

/**
 * A provider plus the session's grants.
 *
 * @since 0.1.0
 * @category model
 */
export interface PolicyProvider<E> extends BatchProvider<E> {
  /** The grants held now: the initial ones, then each "always" answer, oldest first. */
  readonly grants: IO<ReadonlyArray<Rule>>
}

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
// combinator
// -------------------------------------------------------------------------------------

// callbacks are left to assertCallback, whose error names what a callback must be
const OptionsProps = {
  rules: t.unknown,
  onAsk: t.unknown,
  grants: t.unknown,
  onGrant: t.unknown,
  shared: t.unknown,
  roots: t.unknown,
  locationArgs: t.unknown,
  resolver: t.unknown,
  protect: t.unknown,
  filterTools: t.boolean,
  questions: t.unknown,
  onDiagnostic: t.unknown,
  onDecision: t.unknown,
  definitions: t.unknown,
}

const orThrow = <A>(where: string, e: Either<string, A>): A => {
  if (isLeft(e)) throw new TypeError(`${where}: ${e.left}`)
  return e.right
}

const isSharedGrants = (u: unknown): u is SharedGrants =>
  typeof memberOf(u, 'grants') === 'function' && typeof memberOf(u, 'addGrant') === 'function'

// the shared grants known now; a source that throws, or answers with something else than an array, adds none
const readShared = (shared: SharedGrants | undefined): ReadonlyArray<Rule> => {
  if (shared === undefined) return []
  try {
    const gs = shared.grants()
    return Array.isArray(gs) ? gs : []
  } catch {
    return []
  }
}

/** This provider's own grants, then the shared ones; the same array when no grant is shared. */
const heldGrants = (own: ReadonlyArray<Rule>, shared: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
  shared.length === 0 ? own : own.length === 0 ? shared : [...own, ...shared]

const isQueue = (u: unknown): u is QuestionQueue =>
  memberOf(u, '_tag') === 'QuestionQueue' &&
  typeof memberOf(u, 'inTurn') === 'function' &&
  typeof memberOf(u, 'asking') === 'function'

/**
 * Allows, denies or asks about each call. Allowed calls go to the inner provider as one batch, each the
 * same object the caller passed (same reference), or, when the policy judged object arguments, a call
 * carrying the plain copy it judged; every other call gets an `is_error` result stating who refused and
 * why. An `under` rule reads only the location arguments the tool declares in the last listing
 * (`toolsForLlm`) that went through the policy, and fails closed before one. Asking goes through
 * `onAsk`, one question at a time; "always" answers become grants. Never fails a batch; a failed
 * listing passes through.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import { withPolicy } from 'toolstack'
 * const inner = {
 *   toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [] }),
 *   executeToolCalls: (calls) => () =>
 *     Promise.resolve({
 *       _tag: 'Right',
 *       right: calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'done' })),
 *     }),
 * }
 * const tools = pipe(
 *   inner,
 *   withPolicy({
 *     rules: [
 *       { tool: 'rm', decision: 'deny', note: 'never delete' },
 *       { tool: 'ls', decision: 'allow' },
 *     ],
 *   }),
 * )
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
  const opts = decodeOptions(where, OptionsProps, options, '{ rules }')
  if (opts.rules === undefined) {
    throw new TypeError(`${where}: option "rules" is required (an array of rules; [] asks about every call)`)
  }
  const rules = orThrow(where, decodeRules(opts.rules, 'rules'))
  const bound = definitionInRules(rules, 'rules')
  if (bound !== undefined) throw new TypeError(`${where}: ${bound}`)
  const initialGrants =
    opts.grants === undefined ? Object.freeze([]) : orThrow(where, decodeRules(opts.grants, 'grants'))
  const roots = decodeRoots(where, opts.roots)
  const { names, notLocations } = locationNames(where, opts.locationArgs)
  const resolverOf = decodeResolver(where, opts.resolver)
  const protect = decodeProtect(where, opts.protect)
  assertCallback(where, 'onAsk', opts.onAsk, 1)
  assertCallback(where, 'onGrant', opts.onGrant, 1)
  assertCallback(where, 'onDiagnostic', opts.onDiagnostic, 1)
  assertCallback(where, 'onDecision', opts.onDecision, 1)
  assertCallback(where, 'definitions', opts.definitions, 1)
  const definitionsOf = opts.definitions as PolicyOptions['definitions']
  // a standing that cannot be read is none: the policy judges as without pins
  const standingOf = (tool: string): Standing | undefined => {
    try {
      return definitionsOf?.(tool)
    } catch {
      return undefined
    }
  }
  const onDecision = opts.onDecision as PolicyOptions['onDecision']
  const onDiagnostic =
    (opts.onDiagnostic as PolicyOptions['onDiagnostic']) ??
    ((d: PolicyDiagnostic) => {
      process.stderr.write(drawPolicyDiagnostic(d) + '\n')
    })
  const inert = rulesNameNoTool(rules)
  if (opts.questions !== undefined && !isQueue(opts.questions)) {
    throw new TypeError(
      `${where}: option "questions" must be a queue made by newQuestionQueue(), got ${describeValue(opts.questions)}`,
    )
  }
  const onGrant = opts.onGrant as PolicyOptions['onGrant']
  if (opts.shared !== undefined && !isSharedGrants(opts.shared)) {
    throw new TypeError(
      `${where}: option "shared" must be { grants, addGrant } (two functions), got ${describeValue(opts.shared)}`,
    )
  }
  const shared = opts.shared as SharedGrants | undefined
  // the human is told how long an "always" lasts: this session, or every session sharing the grants
  const ask =
    opts.onAsk === undefined ? undefined : askHuman(opts.onAsk as OnAsk, shared === undefined ? 'session' : 'shared')
  const filterTools = opts.filterTools ?? true
  // the tools an `under` rule names: a location they declare and the rules cannot read makes those rules
  // fail closed, which is said once per tool and argument
  const scopedRules = rules.filter((r) => r.under !== undefined).map((r) => matchesTool(r.tool))
  // one queue (one human) for every provider built from these options, unless a queue is given
  const questions: QuestionQueue = (opts.questions as QuestionQueue | undefined) ?? newQuestionQueue()

  return <E>(provider: Provider<E>): PolicyProvider<E> => {
    assertProvider(where, provider)
    const grants: IORef<ReadonlyArray<Rule>> = newIORef(initialGrants)()
    const inertReported: IORef<boolean> = newIORef(false)()
    // what has been said once: "tool\u0000arg" of each unread location, and whether a location went unresolved
    const said: IORef<ReadonlySet<string>> = newIORef<ReadonlySet<string>>(new Set())()
    const sayOnce = (key: string, d: PolicyDiagnostic): void => {
      const first = modify((s: ReadonlySet<string>): readonly [boolean, ReadonlySet<string>] =>
        s.has(key) ? [false, s] : [true, new Set([...s, key])],
      )(said)()
      if (first) callBack(onDiagnostic, d)
    }
    // each tool's resolver, told to say once that a location could not be resolved
    const noticing = (inner: LocationResolver): LocationResolver => ({
      resolve: (path) => {
        const r = inner.resolve(path)
        if (r.problem !== undefined) sayOnce('\u0000unresolved', { _tag: 'UnresolvedLocation', problem: r.problem })
        return r
      },
      ...(inner.forOneJudgement === undefined
        ? {}
        : { forOneJudgement: () => noticing((inner.forOneJudgement as () => LocationResolver)()) }),
    })
    const resolverFor = (tool: string): LocationResolver => noticing(resolverOf(tool))
    const judgeCall = judge({ rules, roots, resolverFor, protect })
    // each tool's declared argument names from the last listing that went through here;
    // undefined until then, and while undefined every `under` rule fails closed
    const declared: IORef<ReadonlyMap<string, ReadonlySet<string>> | undefined> = newIORef<
      ReadonlyMap<string, ReadonlySet<string>> | undefined
    >(undefined)()
    const scopeOf = (tool: string): LocationScope => ({ names, notLocations, declared: declared.read()?.get(tool) })
    const sendOn = sendBelow(runBatch(provider))
    // what grants judge now: this provider's own, and the shared ones read again each time
    const grantsNow = (): ReadonlyArray<Rule> => heldGrants(grants.read(), readShared(shared))
    // the grants that hold for a call to a tool of this standing: a deny always, an allow for its definition
    const grantsFor = (standing: Standing | undefined): ReadonlyArray<Rule> => {
      const all = grantsNow()
      return standing === undefined ? all : all.filter((g) => g.decision === 'deny' || grantHolds(g, standing))
    }
    // whether a grant that would have decided a question was set aside because the definition changed
    const setAside = (q: Question, standing: Standing | undefined): boolean =>
      standing !== undefined && byGrants(grantsNow(), roots)(q) !== undefined

    // each listed tool an `under` rule names, with a location it declares that the rules cannot read: said once
    const unread = (listed: ReadonlyMap<string, ReadonlySet<string>>): void => {
      if (scopedRules.length === 0) return
      for (const [tool, args] of listed) {
        if (!scopedRules.some((matches) => matches(tool))) continue
        for (const arg of unreadLocations({ names, notLocations, declared: args }))
          sayOnce(`${tool}\u0000${arg}`, { _tag: 'UnreadLocation', tool, arg })
      }
    }
    const diagnose = (listing: ReadonlyArray<ToolDeclaration>): void => {
      if (!inert(listing)) return
      const first = modify((done: boolean): readonly [boolean, boolean] => [!done, true])(inertReported)()
      if (!first) return
      const tools = listing.map(callNameOf).filter((n): n is string => n !== undefined)
      callBack(onDiagnostic, { _tag: 'RulesNameNoTool', patterns: rules.map((r) => r.tool), tools })
    }
    const tell = (call: unknown, tool: string, by: PolicyDecision['by'], refusal?: Refusal): void => {
      // no listener: no record made (the stack figures of docs/performance.md)
      if (onDecision === undefined) return
      callBack(onDecision, {
        tool,
        id: callIdOf(call),
        outcome: refusal === undefined ? 'allowed' : 'refused',
        by,
        ...(refusal === undefined ? {} : { refusal: refusal._tag }),
      })
    }
    const refuse = (call: unknown, tool: string, by: PolicyDecision['by'], r: Refusal): Answered => {
      tell(call, tool, by, r)
      return answerHere(call, drawRefusal(r))
    }
    // `pass` is how an allowed call is sent: unchanged, or carrying the copy of its arguments that was judged
    const allow = (call: unknown, tool: string, by: PolicyDecision['by'], pass: Step<'inner'>): Step<'inner'> => {
      tell(call, tool, by)
      return pass
    }
    const applyVerdict = (
      call: unknown,
      tool: string,
      by: PolicyDecision['by'],
      v: Verdict,
      pass: Step<'inner'>,
    ): Step<'inner'> => (v._tag === 'Refuse' ? refuse(call, tool, by, v.refusal) : allow(call, tool, by, pass))

    // an "always" answer records the definition it was given under, unless it names one
    const remember = (given: Rule, standing: Standing | undefined): void => {
      const rule =
        standing === undefined || given.definition !== undefined ? given : { ...given, definition: standing.hash }
      const all = modify((gs: ReadonlyArray<Rule>) => {
        const next = recordGrant(rule)(gs)
        return [next, next] as const
      })(grants)()
      callBack(onGrant, all)
      if (shared !== undefined) callBack(shared.addGrant, rule)
    }

    // the previous question may have granted this one, so the grants are read again in turn
    // no one to ask (no onAsk), or no one asked (onAsk answered `unasked`): refused by nobody
    const noOneToAsk = (q: Question, standing: Standing | undefined): Step<'inner'> =>
      refuse(q.call, q.tool, 'nobody', {
        _tag: 'NoOneToAsk',
        tool: q.tool,
        ...(setAside(q, standing) ? { definitionChanged: true } : {}),
      })

    const inTurn =
      (
        q: Question,
        args: NonNullable<Question['args']>,
        asking: NonNullable<typeof ask>,
        pass: Step<'inner'>,
        text: string | undefined,
        standing: Standing | undefined,
      ) =>
      async (): Promise<Step<'inner'>> => {
        const granted = byGrants(grantsFor(standing), roots)(q)
        if (granted !== undefined) return applyVerdict(q.call, q.tool, 'grant', granted, pass)
        const notice: DefinitionNotice | undefined = noticeOf(standing, setAside(q, standing))
        const answer = await asking(q, args, text, notice)
        if (isLeft(answer)) return refuse(q.call, q.tool, 'human', answer.left)
        const { action, grant } = answer.right
        if (action === 'unasked') return noOneToAsk(q, standing)
        if (grant !== undefined) remember(grant, standing)
        return action === 'allow-once' || action === 'always-allow'
          ? allow(q.call, q.tool, 'human', pass)
          : refuse(q.call, q.tool, 'human', { _tag: 'DeclinedByUser', tool: q.tool, remembered: grant })
      }

    // a Promise only when the human must be asked: most calls are settled at once
    const stepFor = (batch: Batch, call: unknown, i: number): Step<'inner'> | Promise<Step<'inner'>> => {
      const tool = callNameOf(call)
      if (tool === undefined) return refuse(call, '', 'rules', { _tag: 'MalformedCall' })
      // callNameOf reads a name only from an object
      const named = call as object
      const standing = standingOf(tool)
      // a changed definition whose calls are refused until an operator accepts it: nobody is asked
      if (standing?.action === 'refuse')
        return refuse(call, tool, 'rules', { _tag: 'DefinitionChanged', tool, standing })
      // arguments are read once, and only when the rules need them (a call allowed by its name alone goes on
      // unread): a string held as plain data is the same for every layer below, so the call goes on unchanged;
      // any other (object arguments, a getter, a Proxy) is judged as a plain copy of what was read, and that copy
      // is sent, so nothing can show the tool other values later
      let text: string | undefined
      let pass: Step<'inner'> = FORWARD
      let unreadable: ArgsProblem | undefined
      const argsOf = (): Either<ArgsProblem, Args> => {
        text = stableArgumentsText(call)
        const parsed = batch.argsAt(i)
        if (isLeft(parsed) || text !== undefined) return parsed
        const copy = plainArguments(parsed.right)
        if (isLeft(copy)) {
          unreadable = { _tag: 'Unreadable', message: copy.left }
          return left(unreadable)
        }
        const sent = keepContext(named, callWithArguments(named, tool, copy.right))
        pass = { _tag: 'Send', to: 'inner', call: sent, args: right(copy.right) }
        return copy
      }
      const verdict = judgeCall(named, tool, argsOf, scopeOf(tool))
      // arguments that cannot be copied are never sent on as they are, and the model is told why
      if (unreadable !== undefined)
        return refuse(call, tool, 'rules', { _tag: 'UnreadableArguments', tool, problem: unreadable })
      if (verdict._tag !== 'Ask') return applyVerdict(call, tool, 'rules', verdict, pass)
      const q = verdict.question
      const granted = byGrants(grantsFor(standing), roots)(q)
      if (granted !== undefined) return applyVerdict(call, tool, 'grant', granted, pass)
      if (ask === undefined) return noOneToAsk(q, standing)
      // the arguments the rules saw (q.args), with no arguments read as {}
      const readable = noneAsEmpty(q.parsed)
      if (isLeft(readable))
        return refuse(call, tool, 'nobody', { _tag: 'UnreadableArguments', tool, problem: readable.left })
      // asked from inside onAsk, this question would wait for the one it is part of
      if (questions.asking()) return refuse(call, tool, 'nobody', { _tag: 'AskedWhileAsking', tool })
      return questions.inTurn(inTurn(q, readable.right, ask, pass, text, standing))()
    }

    const executeBatch = (batch: Batch) => async (): Promise<Either<E, ReadonlyArray<ToolResult>>> => {
      const read = readPositions(batch.calls)
      if (isLeft(read)) return right(read.left)
      const { calls, unreadable } = read.right
      const steps: Array<Step<'inner'>> = []
      // questions of one batch are asked in the model's order
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]
        let step: Step<'inner'>
        try {
          const s = unreadable[i] ?? stepFor(batch, call, i)
          step = s instanceof Promise ? await s : s
        } catch (e) {
          // whatever goes wrong while judging or asking costs this call, not the batch
          const tool = callNameOf(call) ?? ''
          step = refuse(call, tool, 'human', { _tag: 'AskFailed', tool, error: describeError(e) })
        }
        steps.push(step)
      }
      return right(await sendOn(batch, calls, steps))
    }

    return {
      toolsForLlm: () =>
        provider.toolsForLlm().then((listed) => {
          if (typeof listed !== 'object' || listed === null || listed._tag !== 'Right') return listed
          try {
            if (Array.isArray(listed.right)) {
              const args = declaredArguments(listed.right)
              declared.write(args)()
              unread(args)
            }
          } catch {
            // a listing that cannot be read leaves the last one in place
          }
          try {
            diagnose(listed.right)
          } catch {
            // a diagnostic never costs a listing
          }
          if (!filterTools) return listed
          try {
            const kept = withoutRefusedTools([...rules, ...grantsNow()])(listed.right)
            return kept === listed.right ? listed : right(kept)
          } catch {
            return listed
          }
        }),
      executeToolCalls: (calls) => executeBatch(batchOf(calls)),
      executeBatch,
      grants: () => grants.read(),
    }
  }
}
