/**
 * `withUnknownKeyAudit`: reports, never blocks. It compares each call's argument keys with the
 * properties the tool declared, warns once per (tool, key), and forwards the same call object (same
 * reference) untouched.
 *
 * Built from the audit's pure steps (`steps/audit/`): a listing becomes a catalogue (`catalogueOf`:
 * `extractDeclarations` compiles each schema); a batch is checked call by call (`checkBatch`: `parseArgs`
 * through the batch, `diffKeys` over the schema, `firstSeen` on the seen-set) in one pure step over the
 * layer's state, applied to its ref at once; the warnings are emitted after the state is written.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import { isLeft } from 'fp-ts/lib/Either.js'
import * as t from 'io-ts/lib/index.js'
import type { Batch, BatchProvider, CallReads, Provider, ToolCall, ToolDeclaration } from '../kernel/model.js'
import { assertProvider } from '../kernel/model.js'
import { batchOf, readsBatches, runBatch } from '../steps/Batch.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import { catalogueOf, emptyCatalogue, toleratedOf } from '../steps/audit/Catalogue.js'
import type { PairStat, SeenSet } from '../steps/audit/SeenSet.js'
import { emptySeenSetOf, isFull, pairStats, DEFAULT_CAPACITY } from '../steps/audit/SeenSet.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { checkBatch, formatWarning } from '../steps/audit/Check.js'
import { batchSize } from '../kernel/calls.js'
import { assertCallback, callBack, decodeOptions, wholeNumber } from '../kernel/options.js'
import { modify } from '../kernel/ref.js'
import { describeValue } from '../kernel/describe.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Something about the audit itself, not about a call: reported once per instance, so a host learns
 * when the audit cannot do its job.
 *
 * @since 0.1.0
 * @category model
 */
export type AuditDiagnostic =
  /** Calls came before any listing went through this layer: nothing could be audited. */
  | { readonly _tag: 'CalledBeforeListing' }
  /** The listing held tools, but none declares a property: nothing is audited. */
  | { readonly _tag: 'NothingToAudit'; readonly tools: number }
  /** The seen-set holds its `capacity` pairs: new pairs are still reported, but no longer remembered. */
  | { readonly _tag: 'SeenSetFull'; readonly capacity: number }
  /** The listing was not an Either (a Promise-based provider used without fromAsync). */
  | { readonly _tag: 'ListingNotAnEither'; readonly got: string }
  /**
   * The runtime refuses code generated from strings (`new Function`): the audited tools' calls are walked by
   * the interpreter, which hears the same keys, more slowly.
   */
  | { readonly _tag: 'CodeGenerationRefused'; readonly tools: number }

/**
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditOptions {
  /**
   * Called for each call that carries undeclared keys not reported before. Default: one line on stderr.
   * May return an `IO`, or do its work at once.
   */
  readonly onWarn?: (warning: UnknownKeyWarning) => IO<void> | void
  /**
   * Names treated exactly like `reason`: never reported, declared or not (keys a host
   * framework injects, such as `_meta` or `toolCallId`). `reason` is always tolerated.
   */
  readonly tolerate?: ReadonlyArray<string>
  /** The most (tool, key) pairs remembered. Default {@link DEFAULT_CAPACITY}. */
  readonly maxPairs?: number
  /** Called once per kind of {@link AuditDiagnostic}. Default: one line on stderr. */
  readonly onDiagnostic?: (diagnostic: AuditDiagnostic) => IO<void> | void
  /**
   * One seen-set shared with other layers that hear the same calls (from {@link sharedUnknownKeyAudit}):
   * a pair one layer said is not said again by another, and each warning names its layer (`via`).
   */
  readonly memory?: AuditMemory
}

/**
 * The seen-set of layers that hear the same calls (an AI SDK middleware and an audited stack, say).
 * Opaque: made by {@link sharedUnknownKeyAudit}.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditMemory {
  readonly _tag: 'AuditMemory'
  readonly seen: IORef<SeenSet>
}

/**
 * Options for every layer that shares one memory: pass the same value to each.
 *
 * @since 0.1.0
 * @category model
 */
export interface SharedUnknownKeyAudit extends UnknownKeyAuditOptions {
  readonly memory: AuditMemory
}

/**
 * A provider plus what it audits now.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditedProvider<E> extends BatchProvider<E> {
  /** Sorted names of the tools whose calls are audited now (listed, with at least one declared property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Each remembered (tool, undeclared key) pair and how many audited calls carried it, by tool then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

/**
 * What one audit layer holds: the catalogue of the last successful listing, the seen-set, and which
 * diagnostics it has reported.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditState {
  /** `undefined` until a listing went through this layer. */
  readonly catalogue: Catalogue | undefined
  readonly seen: SeenSet
  readonly reported: ReadonlySet<AuditDiagnostic['_tag']>
}

/**
 * What a step emits once the state is written.
 *
 * @since 0.1.0
 * @category model
 */
export interface Emitted {
  readonly warnings: ReadonlyArray<UnknownKeyWarning>
  readonly diagnostics: ReadonlyArray<AuditDiagnostic>
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const NOTHING_EMITTED: Emitted = { warnings: [], diagnostics: [] }

const once = (s: AuditState, d: AuditDiagnostic): readonly [ReadonlyArray<AuditDiagnostic>, AuditState] =>
  s.reported.has(d._tag) ? [[], s] : [[d], { ...s, reported: new Set([...s.reported, d._tag]) }]

/**
 * A successful listing: the catalogue replaced wholesale; the seen-set kept.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const recordListing =
  (catalogue: Catalogue, tools: number) =>
  (s: AuditState): readonly [Emitted, AuditState] => {
    const next = { ...s, catalogue }
    const interpreted = [...catalogue.values()].filter((d) => !d.generated).length
    if (interpreted > 0) {
      const [diagnostics, after] = once(next, { _tag: 'CodeGenerationRefused', tools: interpreted })
      return [{ warnings: [], diagnostics }, after]
    }
    if (tools === 0 || catalogue.size > 0) return [NOTHING_EMITTED, next]
    const [diagnostics, after] = once(next, { _tag: 'NothingToAudit', tools })
    return [{ warnings: [], diagnostics }, after]
  }

/**
 * A batch, against `catalogue` (by default the last listing's): each call checked (`checkBatch`:
 * `parseArgs` through the batch, `diffKeys`, `firstSeen`); the warnings for pairs never reported before.
 * The catalogue is read, never replaced.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const auditBatch =
  (batch: CallReads, against?: Catalogue) =>
  (s: AuditState): readonly [Emitted, AuditState] => {
    const catalogue = against ?? s.catalogue
    if (catalogue === undefined) {
      const size = batchSize(batch.calls)
      if (isLeft(size) || size.right === 0) return [NOTHING_EMITTED, s]
      const [diagnostics, after] = once(s, { _tag: 'CalledBeforeListing' })
      return [{ warnings: [], diagnostics }, after]
    }
    const [warnings, seen] = checkBatch(catalogue, batch)(s.seen)
    const next: AuditState = seen === s.seen ? s : { ...s, seen }
    if (!isFull(seen)) return [warnings.length === 0 ? NOTHING_EMITTED : { warnings, diagnostics: [] }, next]
    const [diagnostics, after] = once(next, { _tag: 'SeenSetFull', capacity: seen.capacity })
    return [{ warnings, diagnostics }, after]
  }

/**
 * A listing that is not an Either: nothing changes but the diagnostic, reported once.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const notAnEither =
  (got: string) =>
  (s: AuditState): readonly [Emitted, AuditState] => {
    const [diagnostics, after] = once(s, { _tag: 'ListingNotAnEither', got })
    return [{ warnings: [], diagnostics }, after]
  }

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * A diagnostic in one line.
 *
 * @since 0.1.0
 * @category utils
 */
export const drawAuditDiagnostic = (d: AuditDiagnostic): string => `toolstack: ${diagnosticText(d)}`

const diagnosticText = (d: AuditDiagnostic): string => {
  switch (d._tag) {
    case 'CalledBeforeListing':
      return 'calls were made before any listing went through the audit, so they were not audited; list the tools (toolsForLlm) through the stack first'
    case 'NothingToAudit':
      return `the listing held ${d.tools} tool${d.tools === 1 ? '' : 's'}, but none declares a property, so no call is audited`
    case 'SeenSetFull':
      return `the audit remembers ${d.capacity} (tool, key) pairs, its most; a new pair is still reported each time, but no longer remembered or counted`
    case 'ListingNotAnEither':
      return `the provider's listing returned ${d.got}, not an Either, so nothing can be audited; a Promise-based provider is adapted with fromAsync(provider)`
    case 'CodeGenerationRefused':
      return (
        `this runtime refuses code generated from strings (new Function), so the calls of ${d.tools} ` +
        `tool${d.tools === 1 ? '' : 's'} are audited by the interpreter: the same keys are heard, more slowly`
      )
  }
}

/**
 * The default `onWarn`: one line on stderr.
 *
 * @since 0.1.0
 * @category utils
 */
export const warnToStderr =
  (w: UnknownKeyWarning): IO<void> =>
  () => {
    process.stderr.write(formatWarning(w) + '\n')
  }

/**
 * The default `onDiagnostic`: one line on stderr.
 *
 * @since 0.1.0
 * @category utils
 */
export const diagnoseToStderr =
  (d: AuditDiagnostic): IO<void> =>
  () => {
    process.stderr.write(drawAuditDiagnostic(d) + '\n')
  }

// -------------------------------------------------------------------------------------
// sessions
// -------------------------------------------------------------------------------------

/**
 * One audit's state and output, for whoever feeds it calls: `withUnknownKeyAudit` over a provider, and
 * the framework adapters over a framework's own tool calls. The state (`AuditState`) lives in one ref,
 * changed only by the pure steps `recordListing` and `auditBatch`, each applied in one synchronous step;
 * what they emit is emitted after the write. Nothing it does can throw.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditSession {
  /** The catalogue of a listing, with this session's tolerated names. */
  readonly readListing: (declarations: ReadonlyArray<unknown>) => Catalogue
  /** A listing went through: calls are audited against its catalogue from now on. */
  readonly recordListing: (catalogue: Catalogue, tools: number) => void
  /** A listing that was not an Either went through: reported once. */
  readonly notAnEither: (got: string) => void
  /** Audits a batch, or calls alone (`{ calls }`: each read once, none kept), against the last listing's catalogue. */
  readonly audit: (batch: CallReads) => void
  /** Audits one call against `catalogue` (the tools of that same request), not the last listing's. */
  readonly check: (catalogue: Catalogue, call: ToolCall) => void
  readonly auditedTools: IO<ReadonlyArray<string>>
  readonly stats: IO<ReadonlyArray<PairStat>>
}

const Capacity = wholeNumber('a whole number of at least 1', 1, Number.MAX_SAFE_INTEGER)

// callbacks are left to assertCallback, whose errors are clearer than a codec's
const OptionsProps = {
  onWarn: t.unknown,
  tolerate: t.readonlyArray(t.string),
  maxPairs: Capacity,
  onDiagnostic: t.unknown,
  memory: t.unknown,
}

const isAuditMemory = (u: unknown): u is AuditMemory =>
  typeof u === 'object' && u !== null && (u as { readonly _tag?: unknown })._tag === 'AuditMemory'

/**
 * The options, checked once up front (a `TypeError` naming the problem), and a maker of sessions that
 * share them. With a `memory`, every session reads and writes that one seen-set, and its warnings carry
 * `via` (the layer's name).
 *
 * @since 0.1.0
 * @category constructors
 */
export const auditSessions = (where: string, options?: UnknownKeyAuditOptions, via?: string): IO<AuditSession> => {
  const opts = decodeOptions(where, OptionsProps, options)
  assertCallback(where, 'onWarn', opts.onWarn, 1)
  assertCallback(where, 'onDiagnostic', opts.onDiagnostic, 1)
  if (opts.memory !== undefined && !isAuditMemory(opts.memory))
    throw new TypeError(
      `${where}: options.memory must come from sharedUnknownKeyAudit, got ${describeValue(opts.memory)}`,
    )
  const memory = opts.memory
  const named = (w: UnknownKeyWarning): UnknownKeyWarning =>
    memory === undefined || via === undefined ? w : { ...w, via }
  const onWarn = (opts.onWarn as UnknownKeyAuditOptions['onWarn']) ?? warnToStderr
  const onDiagnostic = (opts.onDiagnostic as UnknownKeyAuditOptions['onDiagnostic']) ?? diagnoseToStderr
  const ofListing = catalogueOf(toleratedOf(opts.tolerate))
  const initial: AuditState = {
    catalogue: undefined,
    seen: emptySeenSetOf(opts.maxPairs ?? DEFAULT_CAPACITY),
    reported: new Set(),
  }

  return () => {
    const state: IORef<AuditState> = newIORef(initial)()
    // emitted after the state is written, so a callback that lists or calls again sees the new state
    const emit = (out: Emitted): void => {
      for (const d of out.diagnostics) callBack(onDiagnostic, d)
      for (const w of out.warnings) callBack(onWarn, named(w))
    }
    // with a memory, the seen-set is the memory's: read and written in the same synchronous step
    const shared =
      (f: (s: AuditState) => readonly [Emitted, AuditState]) =>
      (s: AuditState): readonly [Emitted, AuditState] => {
        if (memory === undefined) return f(s)
        const [out, next] = f({ ...s, seen: memory.seen.read() })
        memory.seen.write(next.seen)()
        return [out, next]
      }
    const step = (f: (s: AuditState) => readonly [Emitted, AuditState]): void => {
      try {
        emit(modify(shared(f))(state)())
      } catch {
        // the audit adds no failure of its own
      }
    }
    return {
      readListing: (declarations) => {
        try {
          return ofListing(declarations)
        } catch {
          return emptyCatalogue
        }
      },
      recordListing: (catalogue, tools) => step(recordListing(catalogue, tools)),
      notAnEither: (got) => step(notAnEither(got)),
      audit: (batch) => step(auditBatch(batch)),
      check: (catalogue, call) => step(auditBatch(batchOf([call]), catalogue)),
      auditedTools: () => [...(state.read().catalogue ?? emptyCatalogue).keys()].sort(),
      stats: () => pairStats(memory === undefined ? state.read().seen : memory.seen.read()),
    }
  }
}

/**
 * One audit for layers that hear the same calls — the AI SDK middleware on the model and
 * `withUnknownKeyAudit` in the stack behind `toAiSdkTools`: pass the result to each as its options. They
 * share one seen-set, so a (tool, key) pair is said once, by the first layer that heard it, and each
 * warning's `via` names that layer. `stats` counts a call once per layer that heard it.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import * as TE from 'fp-ts/lib/TaskEither.js'
 * import { fromTools, sharedUnknownKeyAudit, withUnknownKeyAudit } from 'toolstack'
 * const said: Array<string> = []
 * const audit = sharedUnknownKeyAudit({ onWarn: (w) => void said.push(`${w.unknownKeys.join()} via ${w.via}`) })
 * const echo = fromTools([
 *   {
 *     declaration: { type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: {} } } } },
 *     run: (a) => TE.right(String(a.text)),
 *   },
 * ])
 * const one = pipe(echo, withUnknownKeyAudit(audit))
 * const two = pipe(echo, withUnknownKeyAudit(audit))
 * await one.toolsForLlm()
 * await two.toolsForLlm()
 * await one.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{"txet":"hi"}' } }])()
 * await two.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{"txet":"hi"}' } }])()
 * assert.deepStrictEqual(said, ['txet via stack'])
 *
 * @since 0.1.0
 * @category constructors
 */
export const sharedUnknownKeyAudit = (options?: UnknownKeyAuditOptions): SharedUnknownKeyAudit => {
  const where = 'sharedUnknownKeyAudit'
  // checks the options now, as each layer will
  auditSessions(where, options)
  const maxPairs = options?.maxPairs ?? DEFAULT_CAPACITY
  return { ...options, memory: { _tag: 'AuditMemory', seen: newIORef(emptySeenSetOf(maxPairs))() } }
}

// -------------------------------------------------------------------------------------
// combinator
// -------------------------------------------------------------------------------------

/**
 * Audits each call's argument keys against the tool's own declaration and warns once per (tool, key);
 * forwards every call, and the batch, as the same objects the caller passed (same reference), and
 * returns the inner results, Left or rejection, unchanged.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import { fromTools, withUnknownKeyAudit } from 'toolstack'
 * import * as TE from 'fp-ts/lib/TaskEither.js'
 * const said: Array<string> = []
 * const tools = pipe(
 *   fromTools([
 *     {
 *       declaration: {
 *         type: 'function',
 *         function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
 *       },
 *       run: (a) => TE.right(String(a.text)),
 *     },
 *   ]),
 *   withUnknownKeyAudit({
 *     onWarn: (w) => () => {
 *       said.push(w.unknownKeys.join())
 *     },
 *   }),
 * )
 * await tools.toolsForLlm()
 * await tools.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{"text":"hi","txet":"hi"}' } }])()
 * assert.deepStrictEqual(said, ['txet'])
 *
 * @since 0.1.0
 * @category combinators
 */
export const withUnknownKeyAudit = (
  options?: UnknownKeyAuditOptions,
): (<E>(provider: Provider<E>) => AuditedProvider<E>) => {
  const where = 'withUnknownKeyAudit'
  const newSession = auditSessions(where, options, 'stack')

  return <E>(provider: Provider<E>): AuditedProvider<E> => {
    assertProvider(where, provider)
    const session = newSession()
    const send = runBatch(provider)

    const onListing = (listing: unknown): void => {
      try {
        const tag =
          typeof listing === 'object' && listing !== null ? (listing as { readonly _tag?: unknown })._tag : undefined
        if (tag === 'Right') {
          const declarations = (listing as { readonly right: ReadonlyArray<ToolDeclaration> }).right
          session.recordListing(
            session.readListing(declarations),
            Array.isArray(declarations) ? declarations.length : 0,
          )
        } else if (tag !== 'Left') session.notAnEither(describeValue(listing))
      } catch {
        // a listing whose fields throw when read leaves the audit unchanged: it adds no failure of its own
      }
    }

    const audited = (reads: CallReads, batch: Batch) => () => {
      session.audit(reads)
      return send(batch)()
    }
    const executeBatch = (batch: Batch) => audited(batch, batch)
    // calls alone for a provider that parses them itself: no parse kept (flat figures, docs/performance.md)
    const executeToolCalls = readsBatches(provider)
      ? (calls: ReadonlyArray<ToolCall>) => executeBatch(batchOf(calls))
      : (calls: ReadonlyArray<ToolCall>) => audited({ calls }, batchOf(calls))

    return {
      toolsForLlm: () =>
        provider.toolsForLlm().then((listing) => {
          onListing(listing)
          return listing
        }),
      executeToolCalls,
      executeBatch,
      auditedTools: session.auditedTools,
      stats: session.stats,
    }
  }
}
