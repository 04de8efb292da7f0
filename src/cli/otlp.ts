/**
 * `toolstack serve` and `toolstack proxy` over OTLP/HTTP: when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a per-signal
 * endpoint) is set, each `tools/call` becomes a span with the audit's warnings as its events, and the calls and
 * warnings are counted. `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` choose the exporters as the SDK defines
 * them (`otlp`, `console` for spans, `none`). The OpenTelemetry SDK and its OTLP/HTTP exporters are optional peers,
 * imported by this module only: program.ts loads it only when something is to be exported, and says which packages
 * to install when it cannot. The exporters read the other `OTEL_*` variables themselves.
 *
 * @since 0.1.0
 */
import { connect } from 'node:net'
import { inspect } from 'node:util'
import type { Attributes, Counter, Tracer } from '@opentelemetry/api'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import type { GatewayRecord } from '../gateway/index.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { MAX_EVENTS_PER_WARNING, OTEL_NAMES, warningAttributes } from '../otel/index.js'
import { escapeControls, telemetryText } from '../kernel/describe.js'
import { drawChange, drawFlag } from '../extend.js'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
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

/**
 * What to export, and where (see `otlpSignals` in program.ts, which reads it from the environment and decides whether
 * this module loads).
 *
 * @since 0.1.0
 */
export interface OtlpSignals {
  /** Where spans go: an OTLP/HTTP collector, and or this process's stderr (`OTEL_TRACES_EXPORTER=console`). */
  readonly traces: ReadonlyArray<'otlp' | 'console'>
  /** Whether the counters go to an OTLP/HTTP collector. */
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
// how long exiting waits for the last export (a collector that is slow must not hold the command)
const SHUTDOWN_MS = 5000
// how long a connection to the collector may take to be refused, at exit, before the export is waited for: the
// exporter retries a refused connection with back-off, so a collector that is not there would cost the whole
// SHUTDOWN_MS (the command's exit time is the target this serves)
const PROBE_MS = 500

// the OTLP/HTTP endpoint of a signal, as the exporter reads it: the signal's own URL, else the general one with the
// signal's path, else the SDK's default (localhost:4318)
const endpointOf = (env: NodeJS.ProcessEnv, signal: 'TRACES' | 'METRICS'): URL | undefined => {
  const own = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim()
  const any = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim()
  try {
    return new URL(
      own !== undefined && own !== '' ? own : any !== undefined && any !== '' ? any : 'http://localhost:4318',
    )
  } catch {
    return undefined
  }
}

// resolves true when nothing listens at `url` (the connection is refused, or the name does not resolve), false when
// something answers or the probe takes longer than PROBE_MS (a collector far away, or a firewall that drops)
const refuses = (url: URL): Promise<boolean> =>
  new Promise((resolve) => {
    const port = Number(url.port !== '' ? url.port : url.protocol === 'https:' ? 443 : 80)
    const socket = connect({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port })
    const done = (refused: boolean): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve(refused)
    }
    const timer = setTimeout(() => done(false), PROBE_MS)
    socket.once('connect', () => done(false))
    socket.once('error', (e: NodeJS.ErrnoException) =>
      done(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(e.code ?? '')),
    )
  })

// a span as the SDK's ConsoleSpanExporter shows it (the same members), written to `write` instead of stdout, which is
// the MCP channel of `serve` and `proxy`; each line escaped (util.inspect escapes the controls inside strings, not
// direction marks and separators)
const consoleExporter = (write: (text: string) => void): SpanExporter => {
  const micros = ([s, ns]: readonly [number, number]): number => Math.round(s * 1e6 + ns / 1e3)
  const info = (span: ReadableSpan) => ({
    resource: { attributes: span.resource.attributes },
    instrumentationScope: span.instrumentationScope,
    traceId: span.spanContext().traceId,
    parentSpanContext: span.parentSpanContext,
    name: span.name,
    id: span.spanContext().spanId,
    kind: span.kind,
    timestamp: micros(span.startTime),
    duration: micros(span.duration),
    attributes: span.attributes,
    status: span.status,
    events: span.events,
    links: span.links,
  })
  return {
    export: (spans, done) => {
      for (const span of spans) {
        try {
          write(inspect(info(span), { depth: 3, colors: false }).split('\n').map(escapeControls).join('\n') + '\n')
        } catch {
          // stderr closed: the span is dropped, the call is not affected
        }
      }
      // ExportResultCode.SUCCESS (from @opentelemetry/core, which is not a peer of this package)
      done({ code: 0 })
    },
    shutdown: () => Promise.resolve(),
  }
}

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
  stderr: (text: string) => void = (text) => void process.stderr.write(text),
): OtlpExport => {
  const resource = resourceFromAttributes({ 'service.name': service, 'service.version': version }).merge(
    detectResources({ detectors: [envDetector] }),
  )
  // as the SDK configures them from OTEL_TRACES_EXPORTER: OTLP in batches, the console at once
  const tracerProvider =
    signals.traces.length > 0
      ? new BasicTracerProvider({
          resource,
          spanProcessors: signals.traces.map((to) =>
            to === 'otlp'
              ? new BatchSpanProcessor(new OTLPTraceExporter())
              : new SimpleSpanProcessor(consoleExporter(stderr)),
          ),
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
  // the collectors this process sends to over OTLP, read when the exporters read theirs
  const collectors = [
    ...(signals.traces.includes('otlp') ? [endpointOf(env, 'TRACES')] : []),
    ...(signals.metrics ? [endpointOf(env, 'METRICS')] : []),
  ].filter((u): u is URL => u !== undefined)
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
    drifted?.({ 'toolstack.upstream': telemetryText(r.upstream), 'toolstack.definition.action': action })
    if (tracer === undefined) return
    const span = tracer.startSpan(`toolstack.definition ${telemetryText(r.tool)}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        [OTEL_NAMES.toolName]: telemetryText(r.tool),
        'toolstack.upstream': telemetryText(r.upstream),
        'toolstack.definition.hash': r.hash,
        'toolstack.definition.action': action,
        ...(r._tag === 'DefinitionChanged' && r.pinned !== undefined
          ? { 'toolstack.definition.pinned': r.pinned }
          : {}),
        ...(r._tag === 'DefinitionChanged'
          ? { 'toolstack.definition.change': telemetryText(drawChange(r.change).join('; ')) }
          : {}),
        ...(r.flags.length === 0
          ? {}
          : { 'toolstack.definition.flags': telemetryText(r.flags.map(drawFlag).join('; ')) }),
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
    const span = tracer.startSpan(`execute_tool ${telemetryText(tool)}`, {
      kind: SpanKind.INTERNAL,
      attributes: callAttributes(tool, id),
    })
    for (const a of events) span.addEvent(OTEL_NAMES.warningEvent, a)
    span.end()
  }
  const countWarning = (w: UnknownKeyWarning): void => {
    for (const k of w.unknownKeys.slice(0, MAX_EVENTS_PER_WARNING))
      warned?.({ [OTEL_NAMES.toolName]: telemetryText(w.tool), [OTEL_NAMES.key]: telemetryText(k) })
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
      const name = r.listed ? telemetryText(r.tool) : '(unlisted)'
      calls?.({
        [OTEL_NAMES.toolName]: name,
        'toolstack.upstream': telemetryText(r.upstream),
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
          'toolstack.upstream': telemetryText(r.upstream),
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
      // when every collector refuses a connection, the last export cannot be delivered, and the exit does not wait
      // for the exporter's retries
      const unreachable =
        collectors.length === 0
          ? new Promise<void>(() => undefined)
          : Promise.all(collectors.map(refuses)).then((all) =>
              all.every(Boolean) ? undefined : new Promise<void>(() => undefined),
            )
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]),
        unreachable,
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
  [OTEL_NAMES.toolName]: telemetryText(tool),
  ...(id === '' ? {} : { [OTEL_NAMES.callId]: telemetryText(id) }),
})
