/**
 * The audit's counts as an OpenTelemetry observable counter, through `@opentelemetry/api` only.
 *
 * @since 0.1.0
 */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api'
import { metrics } from '@opentelemetry/api'
import type { IO } from 'fp-ts/lib/IO.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import { telemetryText } from '../kernel/describe.js'
import { OTEL_NAMES } from './events.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Anything with the audit's counts: an `AuditedProvider`, an adapter's audit, an `AuditSession`.
 *
 * @since 0.1.0
 * @category model
 */
export interface HasStats {
  readonly stats: IO<ReadonlyArray<PairStat>>
}

/**
 * @since 0.1.0
 * @category model
 */
export interface ObserveOptions {
  /** Default: `metrics.getMeter('toolstack')`. */
  readonly meter?: Meter
  /** Added to every observation, to tell two audits apart on one meter (e.g. `{ 'toolstack.layer': 'stack' }`). */
  readonly attributes?: Attributes
}

// -------------------------------------------------------------------------------------
// constants
// -------------------------------------------------------------------------------------

/**
 * The counter's name: audited calls that carried an undeclared key, per (`gen_ai.tool.name`, `toolstack.key`).
 *
 * @since 0.1.0
 * @category constants
 */
export const UNKNOWN_KEY_CALLS = 'toolstack.unknown_key.calls'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Observes an audit's `stats()` as the cumulative counter {@link UNKNOWN_KEY_CALLS}, one series per remembered
 * (tool, key) pair: read only when the SDK collects, so a call costs nothing more, and counts from many
 * processes add up in any backend. The series are as many as the seen-set's pairs (bounded by `maxPairs`),
 * names cut to `MAX_ATTRIBUTE_CHARS`. Returns the function that stops observing.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import { fromTools, withUnknownKeyAudit } from 'toolstack'
 * import { observeUnknownKeys } from 'toolstack/otel'
 *
 * const tools = pipe(fromTools([]), withUnknownKeyAudit({ onWarn: () => {} }))
 * const stop = observeUnknownKeys(tools) // the global meter provider's meter; a no-op with no SDK
 * stop()
 *
 * @since 0.1.0
 * @category constructors
 */
export const observeUnknownKeys = (audited: HasStats, options?: ObserveOptions): (() => void) => {
  const meter = options?.meter ?? metrics.getMeter('toolstack')
  const extra = options?.attributes ?? {}
  const counter = meter.createObservableCounter(UNKNOWN_KEY_CALLS, {
    description: 'Audited tool calls that carried an argument key the tool does not declare, per (tool, key)',
    unit: '{call}',
  })
  const observe = (result: ObservableResult): void => {
    for (const s of audited.stats()) {
      result.observe(s.calls, {
        ...extra,
        [OTEL_NAMES.toolName]: telemetryText(s.tool),
        [OTEL_NAMES.key]: telemetryText(s.key),
      })
    }
  }
  counter.addCallback(observe)
  return () => counter.removeCallback(observe)
}
