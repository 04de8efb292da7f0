/**
 * The audit's warnings and diagnostics as OpenTelemetry span events, through `@opentelemetry/api` only: with no
 * SDK registered every call below is the API's no-op, and nothing is recorded.
 *
 * @since 0.1.0
 */
import type { Attributes, Span, Tracer } from '@opentelemetry/api'
import { trace } from '@opentelemetry/api'
import type { IO } from 'fp-ts/lib/IO.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import type { AuditDiagnostic } from '../combinators/UnknownKeys.js'
import { diagnoseToStderr, drawAuditDiagnostic, warnToStderr } from '../combinators/UnknownKeys.js'
import type { PolicyDiagnostic } from '../combinators/Policy.js'
import { drawPolicyDiagnostic, isPolicyDiagnostic } from '../combinators/Policy.js'
import { cut, MAX_TELEMETRY_CHARS, MAX_TELEMETRY_KEYS, telemetryText } from '../kernel/describe.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A diagnostic any toolstack layer reports: the audit's and the policy's.
 *
 * @since 0.1.0
 * @category model
 */
export type AnyDiagnostic = AuditDiagnostic | PolicyDiagnostic

/**
 * The pair {@link otelAudit} returns: pass it as the options (or spread it into them) of `withUnknownKeyAudit`,
 * `sharedUnknownKeyAudit`, `withPolicy` (its `onDiagnostic`) or any adapter.
 *
 * @since 0.1.0
 * @category model
 */
export interface OtelAudit {
  readonly onWarn: (warning: UnknownKeyWarning) => void
  readonly onDiagnostic: (diagnostic: AnyDiagnostic) => void
}

/**
 * @since 0.1.0
 * @category model
 */
export interface OtelAuditOptions {
  /** The tracer for the span made when no span is active. Default: `trace.getTracer('toolstack')`, read per event. */
  readonly tracer?: Tracer
  /** Also write the default line on stderr, as without this option. Default `false`. */
  readonly stderr?: boolean
}

// -------------------------------------------------------------------------------------
// constants
// -------------------------------------------------------------------------------------

/**
 * The names used: the GenAI semantic conventions' for the tool and the call, `toolstack.*` for the rest.
 *
 * @since 0.1.0
 * @category constants
 */
export const OTEL_NAMES = {
  warningEvent: 'toolstack.unknown_key',
  diagnosticEvent: 'toolstack.diagnostic',
  /** The span made for an event when no span is active. */
  span: 'toolstack.audit',
  toolName: 'gen_ai.tool.name',
  callId: 'gen_ai.tool.call.id',
  key: 'toolstack.key',
  didYouMean: 'toolstack.did_you_mean',
  via: 'toolstack.via',
  moreKeys: 'toolstack.more_keys',
  diagnosticKind: 'toolstack.diagnostic.kind',
  diagnosticMessage: 'toolstack.diagnostic.message',
} as const

/**
 * The most characters of one attribute value taken from a model or an upstream (a name, a key, an id).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ATTRIBUTE_CHARS = MAX_TELEMETRY_CHARS

/**
 * The most events one warning adds (one per key); the last says how many keys were left out.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_EVENTS_PER_WARNING = MAX_TELEMETRY_KEYS

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * The attributes of each `toolstack.unknown_key` event a warning makes: one per reported key, at most
 * {@link MAX_EVENTS_PER_WARNING}, every value cut to {@link MAX_ATTRIBUTE_CHARS}.
 *
 * @example
 * import { warningAttributes } from 'toolstack/otel'
 *
 * const [only] = warningAttributes({
 *   tool: 'fs_read', id: 'call_1', unknownKeys: ['haed'], declaredKeys: ['head', 'path'],
 *   suggestions: [{ key: 'haed', didYouMean: 'head' }],
 * })
 * assert.deepStrictEqual(only, {
 *   'gen_ai.tool.name': 'fs_read', 'gen_ai.tool.call.id': 'call_1', 'toolstack.key': 'haed', 'toolstack.did_you_mean': 'head',
 * })
 *
 * @since 0.1.0
 * @category utils
 */
export const warningAttributes = (w: UnknownKeyWarning): ReadonlyArray<Attributes> => {
  const common: Attributes = { [OTEL_NAMES.toolName]: telemetryText(w.tool) }
  if (w.id !== '') common[OTEL_NAMES.callId] = telemetryText(w.id)
  if (typeof w.via === 'string' && w.via !== '') common[OTEL_NAMES.via] = telemetryText(w.via)
  const keys = w.unknownKeys.slice(0, MAX_EVENTS_PER_WARNING)
  return keys.map((key, i) => {
    const a: Attributes = { ...common, [OTEL_NAMES.key]: telemetryText(key) }
    const hint = w.suggestions.find((s) => s.key === key)
    if (hint !== undefined) a[OTEL_NAMES.didYouMean] = telemetryText(hint.didYouMean)
    if (i === keys.length - 1 && w.unknownKeys.length > keys.length)
      a[OTEL_NAMES.moreKeys] = w.unknownKeys.length - keys.length
    return a
  })
}

/**
 * The attributes of a `toolstack.diagnostic` event: its kind (`_tag`) and its line, cut.
 *
 * @since 0.1.0
 * @category utils
 */
export const diagnosticAttributes = (d: AnyDiagnostic): Attributes => ({
  [OTEL_NAMES.diagnosticKind]: d._tag,
  [OTEL_NAMES.diagnosticMessage]: cut(
    isPolicyDiagnostic(d) ? drawPolicyDiagnostic(d) : drawAuditDiagnostic(d),
    4 * MAX_ATTRIBUTE_CHARS,
  ),
})

// the active span, or, when there is none, a span of its own ended at once, so an event is never lost;
// with no SDK registered both are non-recording and nothing is built
const onSpan = (tracer: Tracer | undefined, add: (span: Span) => void): void => {
  const active = trace.getActiveSpan()
  if (active !== undefined) {
    if (active.isRecording()) add(active)
    return
  }
  const own = (tracer ?? trace.getTracer('toolstack')).startSpan(OTEL_NAMES.span)
  if (own.isRecording()) add(own)
  own.end()
}

const run = (effect: IO<void>): void => {
  try {
    effect()
  } catch {
    // stderr closed: the event is what was asked for
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * An `onWarn` that adds a `toolstack.unknown_key` event per reported key to the active span, and an
 * `onDiagnostic` that adds a `toolstack.diagnostic` event, each said once as the layers say them. When no
 * span is active, the event goes on a span of its own (`toolstack.audit`), started and ended at once, so
 * nothing is lost. With no OpenTelemetry SDK registered, nothing is recorded.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import { fromTools, withUnknownKeyAudit, withPolicy, defaultRules } from 'toolstack'
 * import { otelAudit } from 'toolstack/otel'
 *
 * const audit = otelAudit({ stderr: true }) // the events, and the default line on stderr too
 * const tools = pipe(
 *   fromTools([]),
 *   withUnknownKeyAudit(audit),
 *   withPolicy({ rules: defaultRules, onDiagnostic: audit.onDiagnostic }),
 * )
 * void tools
 *
 * @since 0.1.0
 * @category constructors
 */
export const otelAudit = (options?: OtelAuditOptions): OtelAudit => {
  const tracer = options?.tracer
  const stderr = options?.stderr === true
  return {
    onWarn: (w) => {
      onSpan(tracer, (span) => {
        for (const a of warningAttributes(w)) span.addEvent(OTEL_NAMES.warningEvent, a)
      })
      if (stderr) run(warnToStderr(w))
    },
    onDiagnostic: (d) => {
      onSpan(tracer, (span) => span.addEvent(OTEL_NAMES.diagnosticEvent, diagnosticAttributes(d)))
      if (stderr)
        run(
          isPolicyDiagnostic(d) ? () => void process.stderr.write(drawPolicyDiagnostic(d) + '\n') : diagnoseToStderr(d),
        )
    },
  }
}
