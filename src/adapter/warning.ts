/**
 * A warning for a framework's own telemetry (a custom span in an Agents SDK trace, a custom event in
 * LangChain's callbacks): a plain record whose every name, id and key is cut and escaped, with at most
 * {@link MAX_RECORDED_KEYS} keys, so a model that sends a thousand 10 KB keys records a small record. And
 * the options of an adapter whose warnings also go there. Internal: not re-exported by any entry point.
 *
 * @since 0.1.0
 */
import type { UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import { warnToStderr } from '../combinators/UnknownKeys.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { describeValue, escapeControls, MAX_TELEMETRY_KEYS, telemetryText } from '../kernel/describe.js'
import { assertCallback } from '../kernel/options.js'
import { isRecord } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A warning as telemetry records it.
 *
 * @since 0.1.0
 * @category model
 */
// a type, not an interface: the frameworks take it as their `Record<string, …>` of data
export type WarningRecord = {
  readonly tool: string
  /** `''` when the call had no id. */
  readonly call_id: string
  /** The first {@link MAX_RECORDED_KEYS} undeclared keys, by path, sorted. */
  readonly unknown_keys: ReadonlyArray<string>
  /** How many undeclared keys the call carried, recorded or not. */
  readonly unknown_key_count: number
  readonly suggestions: ReadonlyArray<{ readonly key: string; readonly did_you_mean: string }>
  /** The layer that heard the call, when the warning names it. */
  readonly via?: string
}

/**
 * The name of the span or event a warning is recorded as.
 *
 * @since 0.1.0
 * @category model
 */
export const WARNING_EVENT = 'toolstack.unknown_key'

/**
 * The most keys (and suggestions) one record holds.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_RECORDED_KEYS = MAX_TELEMETRY_KEYS

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// shown by the frameworks' own tracing UIs, so escaped as well as cut
const shown = (s: string): string => escapeControls(telemetryText(s))

/**
 * A warning as a bounded record.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const warningRecord = (w: UnknownKeyWarning): WarningRecord => ({
  tool: shown(w.tool),
  call_id: shown(w.id),
  unknown_keys: w.unknownKeys.slice(0, MAX_RECORDED_KEYS).map(shown),
  unknown_key_count: w.unknownKeys.length,
  suggestions: w.suggestions
    .slice(0, MAX_RECORDED_KEYS)
    .map((s) => ({ key: shown(s.key), did_you_mean: shown(s.didYouMean) })),
  ...(w.via === undefined ? {} : { via: shown(w.via) }),
})

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Splits an adapter's boolean option (`telemetry`) from the audit's options, checked at the door; with
 * it on (`true` unless set), `record` sees each warning first, then the host's `onWarn` (by default one line
 * on stderr) runs as it would without it. `record` must not throw; if it does, `onWarn` still runs.
 *
 * @since 0.1.0
 * @category utils
 */
export const recordingOptions = (
  where: string,
  name: string,
  options: unknown,
  record: (warning: UnknownKeyWarning) => void,
): UnknownKeyAuditOptions | undefined => {
  // anything but a record is left to the audit, which names what is wrong with it
  if (!isRecord(options) || !(name in options)) return recordingIn(where, options, record)
  const { [name]: on, ...rest } = options
  if (on !== undefined && typeof on !== 'boolean')
    throw new TypeError(`${where}: option "${name}" must be a boolean, got ${describeValue(on)}`)
  return on === false ? (rest as UnknownKeyAuditOptions) : recordingIn(where, rest, record)
}

const recordingIn = (
  where: string,
  options: unknown,
  record: (warning: UnknownKeyWarning) => void,
): UnknownKeyAuditOptions | undefined => {
  if (!isRecord(options) && options !== undefined) return options as UnknownKeyAuditOptions
  const onWarn = options?.['onWarn']
  // checked here, as the audit would: the wrapper below is always a function
  assertCallback(where, 'onWarn', onWarn, 1)
  const host = (onWarn as UnknownKeyAuditOptions['onWarn']) ?? warnToStderr
  return {
    ...options,
    onWarn: (w) => {
      try {
        record(w)
      } catch {
        // telemetry adds no failure of its own, and does not silence the host's onWarn
      }
      return host(w)
    },
  }
}
