// The real OpenTelemetry 2.x SDK, registered as a host registers it: a tracer provider with an in-memory
// exporter, the async-hooks context manager, a meter provider whose reader the test collects by hand.
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import type { MetricData } from '@opentelemetry/sdk-metrics'
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics'

export interface Sdk {
  readonly spans: () => ReadonlyArray<ReadableSpan>
  readonly reset: () => void
  readonly meterProvider: MeterProvider
  /** Collects now and returns every metric the readers hold. */
  readonly collect: () => Promise<ReadonlyArray<MetricData>>
  readonly unregister: () => Promise<void>
}

export const registerSdk = (): Sdk => {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  trace.setGlobalTracerProvider(tracerProvider)
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  })
  const meterProvider = new MeterProvider({ readers: [reader] })
  metrics.setGlobalMeterProvider(meterProvider)
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    meterProvider,
    collect: async () => {
      const { resourceMetrics } = await reader.collect()
      return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
    },
    unregister: async () => {
      trace.disable()
      context.disable()
      metrics.disable()
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}
