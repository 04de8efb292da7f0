/**
 * A warning in the Agents SDK's own trace: a custom span `toolstack.unknown_key` under the function span of
 * the tool call that carried the keys, made with the SDK's public tracing API, so the Traces dashboard (or
 * any trace processor) shows it where the call is. Not exported from the entry point.
 *
 * @since 0.1.0
 */
// from agents-core, not @openai/agents: loading the latter sets its default trace exporter, replacing the
// processors a user set (a side effect at import)
import { createCustomSpan, getCurrentSpan } from '@openai/agents-core'
import type { UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import type { WarningRecord } from '../adapter/warning.js'
import { WARNING_EVENT, recordingOptions, warningRecord } from '../adapter/warning.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The audit's options, and whether each warning is also a custom span in the run's trace.
 *
 * @since 0.1.0
 * @category model
 */
export interface AgentsAuditOptions extends UnknownKeyAuditOptions {
  /**
   * Each warning is also a custom span named `toolstack.unknown_key` under the tool call's function span, its
   * data the tool, the call id and the keys (cut and escaped; the keys only where the run's trace includes
   * sensitive data). Default `true`; with the SDK's tracing off, or no trace, nothing is recorded.
   */
  readonly telemetry?: boolean
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

// the SDK writes a call's arguments into its function span only when the run includes sensitive data
// (`traceIncludeSensitiveData`, on by default): without them, the keys the model wrote are left out too
const spanData = (
  w: UnknownKeyWarning,
  input: string,
): WarningRecord | Omit<WarningRecord, 'unknown_keys' | 'suggestions'> => {
  const r = warningRecord(w)
  if (input !== '') return r
  return {
    tool: r.tool,
    call_id: r.call_id,
    unknown_key_count: r.unknown_key_count,
    ...(r.via === undefined ? {} : { via: r.via }),
  }
}

// the SDK runs a function tool, and emits agent_tool_start, inside that call's function span; no parent is
// passed: the SDK's own trace provider reads the current span, which also works when the SDK was loaded twice
// (import and require), where a span of the other copy would not pass its `instanceof Span`
const traceWarning = (w: UnknownKeyWarning): void => {
  const current = getCurrentSpan()
  if (current === null || current.spanData.type !== 'function') return
  const span = createCustomSpan({ data: { name: WARNING_EVENT, data: spanData(w, current.spanData.input) } })
  span.start()
  span.end()
}

/**
 * The audit's options with each warning also traced (unless `telemetry: false`).
 *
 * @since 0.1.0
 * @category utils
 */
export const tracedOptions = (
  where: string,
  options: AgentsAuditOptions | undefined,
): UnknownKeyAuditOptions | undefined => recordingOptions(where, 'telemetry', options, traceWarning)
