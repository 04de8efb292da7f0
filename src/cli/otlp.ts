/**
 * `toolstack serve` and `toolstack proxy` over OTLP/HTTP: when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a per-signal
 * endpoint) is set, each `tools/call` becomes a span with the audit's warnings as its events, and the calls and
 * warnings are counted. The OpenTelemetry SDK and its OTLP/HTTP exporters are optional peers, imported by this
 * module only: program.ts loads it only when an endpoint is set, and says which packages to install when it
 * cannot. The exporters read the other `OTEL_*` variables themselves.
 *
 * @since 0.1.0
 */
import type { Attributes, Counter, Tracer } from '@opentelemetry/api'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import type { GatewayRecord } from '../mcp/index.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { MAX_ATTRIBUTE_CHARS, MAX_EVENTS_PER_WARNING, OTEL_NAMES, warningAttributes } from '../otel/index.js'
import { cut } from '../kernel/describe.js'
import { drawChange, drawFlag } from '../extend.js'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'

/** What the command does with its records when exporting. @since 0.1.0 */
export interface OtlpExport {
  /** A record of `toolstack serve`: a `call` ends its span; a `warning` waits for its call. */
  readonly record: (r: GatewayRecord) => void
  /** A warning of `toolstack proxy`, which sees calls but not their ends: a span of its own, at once. */
  readonly warning: (w: UnknownKeyWarning) => void
  /** Ends what is pending, sends everything, and stops the exporters (bounded in time). */
  readonly shutdown: () => Promise<void>
}

/** The signals to export (see `otlpSignals` in program.ts, which decides whether this module loads). @since 0.1.0 */
export interface OtlpSignals {
  readonly traces: boolean
  readonly metrics: boolean
}

// the most series per counter: a model chooses names and keys, a backend pays for every series
const MAX_SERIES = 1000
// the most calls whose warnings wait for the call's end (a warning is emitted before its call's record)
const MAX_PENDING = 1000

// OTEL_METRIC_EXPORT_INTERVAL when it is a delay a timer can keep (1 ms to 2^31 - 1), else the SDK's 60 s: a
// value out of range would make the reader throw, or Node fire its timer every millisecond
const exportInterval = (text: string | undefined): number => {
  const ms = Number(text)
  return Number.isInteger(ms) && ms >= 1 && ms <= 2 ** 31 - 1 ? ms : 60_000
}
// how long exiting waits for the last export (a collector that is down must not hold the command)
const SHUTDOWN_MS = 5000

// a counter whose attribute sets beyond MAX_SERIES are counted under `toolstack.other`
const boundedCounter = (counter: Counter) => {
  const seen = new Set<string>()
  return (attributes: Attributes): void => {
    const id = JSON.stringify(attributes)
    if (!seen.has(id) && seen.size >= MAX_SERIES) return counter.add(1, { 'toolstack.other': true })
    seen.add(id)
    counter.add(1, attributes)
  }
}

const bounded = (s: string): string => cut(s, MAX_ATTRIBUTE_CHARS)

/**
 * Starts exporting for `service` (the default `service.name`; `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`
 * win).
 *
 * @since 0.1.0
 */
export const startOtlp = (
  env: NodeJS.ProcessEnv,
  signals: OtlpSignals,
  service: string,
  version: string,
): OtlpExport => {
  const resource = resourceFromAttributes({ 'service.name': service, 'service.version': version }).merge(
    detectResources({ detectors: [envDetector] }),
  )
  const tracerProvider = signals.traces
    ? new BasicTracerProvider({
        resource,
        spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
      })
    : undefined
  const meterProvider = signals.metrics
    ? new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter: new OTLPMetricExporter(),
            exportIntervalMillis: exportInterval(env['OTEL_METRIC_EXPORT_INTERVAL']),
          }),
        ],
      })
    : undefined
  const tracer: Tracer | undefined = tracerProvider?.getTracer('toolstack', version)
  const meter = meterProvider?.getMeter('toolstack', version)
  const calls =
    meter === undefined
      ? undefined
      : boundedCounter(
          meter.createCounter('toolstack.tool.calls', {
            description: 'tools/call requests, by tool and outcome',
            unit: '{call}',
          }),
        )
  const warned =
    meter === undefined
      ? undefined
      : boundedCounter(
          meter.createCounter('toolstack.unknown_key.warnings', {
            description: 'Undeclared (tool, key) pairs reported, each once per audit (a session, or the proxy)',
            unit: '{warning}',
          }),
        )

  const drifted =
    meter === undefined
      ? undefined
      : boundedCounter(
          meter.createCounter('toolstack.definition.changes', {
            description:
              'Tool definitions changed since they were pinned (by what follows) or flagged when pinned, once per (tool, definition)',
            unit: '{definition}',
          }),
        )
  // a definition that changed or was flagged: a span of its own, its attributes what the stderr line says
  const definition = (r: Extract<GatewayRecord, { type: 'definition' }>): void => {
    const action = r._tag === 'DefinitionChanged' ? r.action : 'flagged'
    drifted?.({ 'toolstack.upstream': bounded(r.upstream), 'toolstack.definition.action': action })
    if (tracer === undefined) return
    const span = tracer.startSpan(`toolstack.definition ${bounded(r.tool)}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [OTEL_NAMES.toolName]: bounded(r.tool),
        'toolstack.upstream': bounded(r.upstream),
        'toolstack.definition.hash': r.hash,
        'toolstack.definition.action': action,
        ...(r._tag === 'DefinitionChanged' && r.pinned !== undefined
          ? { 'toolstack.definition.pinned': r.pinned }
          : {}),
        ...(r._tag === 'DefinitionChanged'
          ? { 'toolstack.definition.change': bounded(drawChange(r.change).join('; ')) }
          : {}),
        ...(r.flags.length === 0 ? {} : { 'toolstack.definition.flags': bounded(r.flags.map(drawFlag).join('; ')) }),
      },
    })
    span.end()
  }

  // warnings by their call, until its record ends its span; the oldest go out alone when too many wait
  const pending = new Map<string, Array<Attributes>>()
  // the calls whose span has ended, the latest MAX_PENDING: a warning that comes after its call (with a store, it
  // waits for the claim) goes out alone, never onto a later call's span
  const ended = new Set<string>()
  const callKey = (tool: string, id: string): string => `${tool}\u0000${id}`
  const alone = (tool: string, id: string, events: ReadonlyArray<Attributes>): void => {
    if (tracer === undefined) return
    const span = tracer.startSpan(`execute_tool ${bounded(tool)}`, {
      kind: SpanKind.INTERNAL,
      attributes: callAttributes(tool, id),
    })
    for (const a of events) span.addEvent(OTEL_NAMES.warningEvent, a)
    span.end()
  }
  const countWarning = (w: UnknownKeyWarning): void => {
    for (const k of w.unknownKeys.slice(0, MAX_EVENTS_PER_WARNING))
      warned?.({ [OTEL_NAMES.toolName]: bounded(w.tool), [OTEL_NAMES.key]: bounded(k) })
  }

  return {
    record: (r) => {
      if (r.type === 'warning') {
        countWarning(r)
        if (tracer === undefined) return
        const k = callKey(r.tool, r.id)
        if (ended.has(k)) return alone(r.tool, r.id, warningAttributes(r))
        const events = pending.get(k) ?? []
        pending.delete(k)
        pending.set(k, [...events, ...warningAttributes(r)])
        if (pending.size > MAX_PENDING) {
          const oldest = pending.keys().next()
          if (!oldest.done) {
            const [tool = '', id = ''] = oldest.value.split('\u0000')
            alone(tool, id, pending.get(oldest.value) ?? [])
            pending.delete(oldest.value)
          }
        }
        return
      }
      if (r.type === 'definition') return definition(r)
      if (r.type !== 'call') return
      // a model chooses the name it calls: unlisted names are counted under one name
      const name = r.listed ? bounded(r.tool) : '(unlisted)'
      calls?.({
        [OTEL_NAMES.toolName]: name,
        'toolstack.upstream': bounded(r.upstream),
        'toolstack.outcome': r.outcome,
      })
      if (tracer === undefined) return
      const k = callKey(r.tool, r.id)
      const events = pending.get(k) ?? []
      pending.delete(k)
      ended.add(k)
      if (ended.size > MAX_PENDING) ended.delete(ended.values().next().value as string)
      const end = Date.now()
      const span = tracer.startSpan(`execute_tool ${name}`, {
        kind: SpanKind.INTERNAL,
        startTime: end - r.ms,
        attributes: {
          ...callAttributes(r.tool, r.id),
          'toolstack.upstream': bounded(r.upstream),
          'toolstack.outcome': r.outcome,
        },
      })
      for (const a of events) span.addEvent(OTEL_NAMES.warningEvent, a)
      if (r.outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: r.outcome })
      span.end(end)
    },
    warning: (w) => {
      countWarning(w)
      alone(w.tool, w.id, warningAttributes(w))
    },
    shutdown: async () => {
      for (const [k, evs] of pending) {
        const [tool = '', id = ''] = k.split('\u0000')
        alone(tool, id, evs)
      }
      pending.clear()
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_MS)
        }),
      ])
      clearTimeout(timer)
    },
  }
}

const callAttributes = (tool: string, id: string): Attributes => ({
  'gen_ai.operation.name': 'execute_tool',
  [OTEL_NAMES.toolName]: bounded(tool),
  ...(id === '' ? {} : { [OTEL_NAMES.callId]: bounded(id) }),
})
