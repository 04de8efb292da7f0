// toolstack/otel with the real OpenTelemetry SDK registered: the audit's warnings and diagnostics as span
// events with the exact attributes, its counts as an observable counter equal to stats(), and nothing
// recorded when no SDK is registered.
import { context, metrics, trace } from '@opentelemetry/api'
import type { Attributes } from '@opentelemetry/api'
import type { DataPoint } from '@opentelemetry/sdk-metrics'
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { pipe } from 'fp-ts/lib/function.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ToolCall } from '../../src/index.js'
import { fromTools, readOnlyRules, sharedUnknownKeyAudit, withPolicy, withUnknownKeyAudit } from '../../src/index.js'
import {
  MAX_ATTRIBUTE_CHARS,
  MAX_EVENTS_PER_WARNING,
  UNKNOWN_KEY_CALLS,
  observeUnknownKeys,
  otelAudit,
  warningAttributes,
} from '../../src/otel/index.js'
import type { PolicyDiagnostic, UnknownKeyWarning } from '../../src/index.js'
import type { Sdk } from './sdk.js'
import { registerSdk } from './sdk.js'

const tool = (name: string) => ({
  declaration: {
    type: 'function' as const,
    function: {
      name,
      parameters: { type: 'object', properties: { path: { type: 'string' }, head: { type: 'number' } } },
    },
  },
  run: () => TE.right('ok'),
})

const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
})

const eventsOf = (sdk: Sdk, name: string) =>
  sdk
    .spans()
    .flatMap((s) => s.events.map((e) => ({ span: s.name, name: e.name, attributes: e.attributes as Attributes })))
    .filter((e) => e.name === name)

describe('otelAudit, with the SDK registered', () => {
  let sdk: Sdk
  beforeAll(() => {
    sdk = registerSdk()
  })
  afterAll(() => sdk.unregister())
  beforeEach(() => sdk.reset())

  it('adds one toolstack.unknown_key event per key to the active span, with the GenAI names', async () => {
    const tools = pipe(fromTools([tool('fs_read')]), withUnknownKeyAudit(otelAudit()))
    await tools.toolsForLlm()
    await trace.getTracer('host').startActiveSpan('execute_tool fs_read', async (span) => {
      await tools.executeToolCalls([call('call_1', 'fs_read', { path: '/a', haed: 1, zz: 2 })])()
      span.end()
    })
    expect(eventsOf(sdk, 'toolstack.unknown_key')).toEqual([
      {
        span: 'execute_tool fs_read',
        name: 'toolstack.unknown_key',
        attributes: {
          'gen_ai.tool.name': 'fs_read',
          'gen_ai.tool.call.id': 'call_1',
          'toolstack.key': 'haed',
          'toolstack.did_you_mean': 'head',
        },
      },
      {
        span: 'execute_tool fs_read',
        name: 'toolstack.unknown_key',
        attributes: { 'gen_ai.tool.name': 'fs_read', 'gen_ai.tool.call.id': 'call_1', 'toolstack.key': 'zz' },
      },
    ])
    expect(sdk.spans().map((s) => s.name)).toEqual(['execute_tool fs_read'])
  })

  it('names the layer (toolstack.via) when layers share one memory, and says each pair once', async () => {
    const shared = sharedUnknownKeyAudit(otelAudit())
    const tools = pipe(fromTools([tool('t')]), withUnknownKeyAudit(shared))
    await tools.toolsForLlm()
    await trace.getTracer('host').startActiveSpan('turn', async (span) => {
      await tools.executeToolCalls([call('c1', 't', { haed: 1 }), call('c2', 't', { haed: 1 })])()
      span.end()
    })
    expect(eventsOf(sdk, 'toolstack.unknown_key').map((e) => e.attributes)).toEqual([
      {
        'gen_ai.tool.name': 't',
        'gen_ai.tool.call.id': 'c1',
        'toolstack.key': 'haed',
        'toolstack.did_you_mean': 'head',
        'toolstack.via': 'stack',
      },
    ])
  })

  it('with no active span, the event goes on a short span of its own, so nothing is lost', async () => {
    const tools = pipe(fromTools([tool('t')]), withUnknownKeyAudit(otelAudit()))
    await tools.toolsForLlm()
    await tools.executeToolCalls([call('', 't', { x: 1 })])()
    const [span] = sdk.spans()
    expect(sdk.spans()).toHaveLength(1)
    expect(span?.name).toBe('toolstack.audit')
    expect(span?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['toolstack.unknown_key', { 'gen_ai.tool.name': 't', 'toolstack.key': 'x' }],
    ])
  })

  it('bounds what a model chooses: every value cut, at most a few events per call', async () => {
    const long = 'k'.repeat(10_000)
    const keys = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${long}${i}`, i]))
    const { onWarn } = otelAudit()
    onWarn({
      tool: long,
      id: long,
      unknownKeys: Object.keys(keys),
      keys: [],
      declaredKeys: [],
      suggestions: [],
      via: long,
    })
    const events = eventsOf(sdk, 'toolstack.unknown_key')
    expect(events).toHaveLength(MAX_EVENTS_PER_WARNING)
    for (const e of events)
      for (const v of Object.values(e.attributes))
        if (typeof v === 'string') expect(v.length).toBeLessThanOrEqual(MAX_ATTRIBUTE_CHARS + 1)
    expect(events.at(-1)?.attributes['toolstack.more_keys']).toBe(100 - MAX_EVENTS_PER_WARNING)
  })

  it('reports the audit and the policy diagnostics as toolstack.diagnostic events, each kind once', async () => {
    const audit = otelAudit()
    const audited = pipe(fromTools([tool('t')]), withUnknownKeyAudit(audit))
    const tools = pipe(audited, withPolicy({ rules: readOnlyRules('fs_'), onDiagnostic: audit.onDiagnostic }))
    await audited.executeToolCalls([call('c0', 't', {})])()
    await audited.executeToolCalls([call('c1', 't', {})])()
    await tools.toolsForLlm()
    await tools.toolsForLlm()
    const kinds = eventsOf(sdk, 'toolstack.diagnostic').map((e) => e.attributes['toolstack.diagnostic.kind'])
    expect(kinds.sort()).toEqual(['CalledBeforeListing', 'RulesNameNoTool'])
    for (const e of eventsOf(sdk, 'toolstack.diagnostic'))
      expect(e.attributes['toolstack.diagnostic.message']).toMatch(/^toolstack: /)
  })

  it('keeps the default stderr line too when asked (stderr: true), and only then', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      const w = { tool: 't', id: 'c', unknownKeys: ['x'], keys: [], declaredKeys: ['y'], suggestions: [] }
      otelAudit().onWarn(w)
      expect(write).not.toHaveBeenCalled()
      otelAudit({ stderr: true }).onWarn(w)
      otelAudit({ stderr: true }).onDiagnostic({ _tag: 'CalledBeforeListing' })
      expect(write.mock.calls.map((c) => String(c[0]))).toEqual([
        'toolstack: t call c carried undeclared argument key "x" (declared: "y")\n',
        expect.stringMatching(/^toolstack: .*\n$/),
      ])
    } finally {
      write.mockRestore()
    }
    expect(eventsOf(sdk, 'toolstack.unknown_key')).toHaveLength(2)
  })
})

describe('warningAttributes, whatever the warning', () => {
  // the spec, written apart: a value past MAX_ATTRIBUTE_CHARS is its first MAX_ATTRIBUTE_CHARS characters and '…'
  const cutTo = (s: string): string => (s.length > MAX_ATTRIBUTE_CHARS ? `${s.slice(0, MAX_ATTRIBUTE_CHARS)}…` : s)
  const text = fc.string({ maxLength: MAX_ATTRIBUTE_CHARS + 20 })

  it('one event per key, the first MAX_EVENTS_PER_WARNING, each naming the tool, the id and via when not empty, its hint, and the last how many were left out', () => {
    fc.assert(
      fc.property(
        text,
        fc.oneof(fc.constant(''), text),
        fc.option(fc.oneof(fc.constant(''), text), { nil: undefined }),
        fc.uniqueArray(fc.oneof(fc.constantFrom('a', 'b', 'c'), text), { maxLength: 40, size: 'max' }),
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd'), didYouMean: text }), { maxLength: 5 }),
        (tool, id, via, unknownKeys, suggestions) => {
          const w: UnknownKeyWarning = {
            tool,
            id,
            unknownKeys,
            keys: [],
            declaredKeys: [],
            suggestions,
            ...(via === undefined ? {} : { via }),
          }
          const shown = unknownKeys.slice(0, MAX_EVENTS_PER_WARNING)
          const expected = shown.map((key, i) => {
            const hint = suggestions.find((h) => h.key === key)
            return {
              'gen_ai.tool.name': cutTo(tool),
              ...(id === '' ? {} : { 'gen_ai.tool.call.id': cutTo(id) }),
              ...(via === undefined || via === '' ? {} : { 'toolstack.via': cutTo(via) }),
              'toolstack.key': cutTo(key),
              ...(hint === undefined ? {} : { 'toolstack.did_you_mean': cutTo(hint.didYouMean) }),
              ...(i === shown.length - 1 && unknownKeys.length > shown.length
                ? { 'toolstack.more_keys': unknownKeys.length - shown.length }
                : {}),
            }
          })
          expect(warningAttributes(w)).toStrictEqual(expected)
        },
      ),
    )
  })
})

describe('otelAudit: its span, its tracer, its stderr', () => {
  let sdk: Sdk
  beforeAll(() => {
    sdk = registerSdk()
  })
  afterAll(() => sdk.unregister())
  beforeEach(() => sdk.reset())

  const w = { tool: 't', id: 'c', unknownKeys: ['x'], keys: [], declaredKeys: ['y'], suggestions: [] }

  it('with no active span, its own span comes from the tracer given, else from the global tracer "toolstack"', () => {
    otelAudit({ tracer: trace.getTracer('host tracer') }).onWarn(w)
    otelAudit().onWarn(w)
    expect(sdk.spans().map((s) => [s.name, s.instrumentationScope.name])).toEqual([
      ['toolstack.audit', 'host tracer'],
      ['toolstack.audit', 'toolstack'],
    ])
  })

  it('an active span that records nothing gets no event, and no span of its own is made', () => {
    const notRecording = trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 0,
    })
    context.with(trace.setSpan(context.active(), notRecording), () => otelAudit().onWarn(w))
    expect(sdk.spans()).toEqual([])
  })

  it('writes a diagnostic’s line on stderr only with stderr: true, a policy’s as withPolicy writes it by default', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      const listed = (onDiagnostic?: (d: PolicyDiagnostic) => void) =>
        pipe(
          fromTools([tool('t')]),
          withPolicy({ rules: readOnlyRules('fs_'), ...(onDiagnostic === undefined ? {} : { onDiagnostic }) }),
        ).toolsForLlm()
      await listed()
      const byDefault = write.mock.calls.map((c) => String(c[0]))
      expect(byDefault).toHaveLength(1)
      write.mockClear()
      await listed(otelAudit().onDiagnostic)
      otelAudit().onDiagnostic({ _tag: 'CalledBeforeListing' })
      expect(write).not.toHaveBeenCalled()
      await listed(otelAudit({ stderr: true }).onDiagnostic)
      expect(write.mock.calls.map((c) => String(c[0]))).toEqual(byDefault)
    } finally {
      write.mockRestore()
    }
    expect(eventsOf(sdk, 'toolstack.diagnostic').map((e) => e.attributes['toolstack.diagnostic.kind'])).toEqual([
      'RulesNameNoTool',
      'CalledBeforeListing',
      'RulesNameNoTool',
    ])
  })
})

describe('observeUnknownKeys, with the SDK metrics', () => {
  const fresh = () => {
    const reader = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 3_600_000,
    })
    const provider = new MeterProvider({ readers: [reader] })
    const collect = async () => {
      const { resourceMetrics } = await reader.collect()
      const points = resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .filter((m) => m.descriptor.name === UNKNOWN_KEY_CALLS)
        .flatMap((m): ReadonlyArray<DataPoint<number>> => (m.dataPointType === DataPointType.SUM ? m.dataPoints : []))
      return new Map(
        points.map((p) => [
          `${String(p.attributes['gen_ai.tool.name'])} ${String(p.attributes['toolstack.key'])}`,
          p.value,
        ]),
      )
    }
    return { meter: provider.getMeter('test'), collect, provider }
  }

  const KEYS = ['path', 'head', 'haed', 'x', 'constructor', '__proto__']
  const batchArb = fc.array(
    fc.record({ tool: fc.constantFrom('a', 'b'), keys: fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 4 }) }),
    { maxLength: 6 },
  )

  it('counts each (tool, key) as stats() does, and as an independent count of the calls', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(batchArb, { maxLength: 5 }), async (batches) => {
        const { meter, collect, provider } = fresh()
        const tools = pipe(fromTools([tool('a'), tool('b')]), withUnknownKeyAudit({ onWarn: () => {} }))
        const stop = observeUnknownKeys(tools, { meter })
        await tools.toolsForLlm()
        const oracle = new Map<string, number>()
        let n = 0
        for (const batch of batches) {
          const calls = batch.map((c) => {
            const args: Record<string, unknown> = {}
            for (const k of c.keys) Object.defineProperty(args, k, { value: 1, enumerable: true })
            for (const k of c.keys)
              if (k !== 'path' && k !== 'head') oracle.set(`${c.tool} ${k}`, (oracle.get(`${c.tool} ${k}`) ?? 0) + 1)
            return call(`c${n++}`, c.tool, args)
          })
          await tools.executeToolCalls(calls)()
        }
        const seen = await collect()
        expect(seen).toEqual(oracle)
        expect(seen).toEqual(new Map(tools.stats().map((s) => [`${s.tool} ${s.key}`, s.calls])))
        stop()
        expect((await collect()).size).toBe(oracle.size === 0 ? 0 : oracle.size) // cumulative: the last values stay
        await provider.shutdown()
      }),
      { numRuns: 60 },
    )
  })

  it('stops observing when told to', async () => {
    const { meter, collect, provider } = fresh()
    const tools = pipe(fromTools([tool('a')]), withUnknownKeyAudit({ onWarn: () => {} }))
    const stop = observeUnknownKeys(tools, { meter, attributes: { 'toolstack.layer': 'stack' } })
    await tools.toolsForLlm()
    await tools.executeToolCalls([call('c', 'a', { x: 1 })])()
    expect(await collect()).toEqual(new Map([['a x', 1]]))
    stop()
    await tools.executeToolCalls([call('d', 'a', { x: 1 })])()
    expect((await collect()).get('a x')).toBe(1)
    await provider.shutdown()
  })
})

describe('observeUnknownKeys: its instrument and its series', () => {
  it('observes on the global meter "toolstack" by default: a counter of {call} that says what it counts, each point with the attributes given', async () => {
    const reader = new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 3_600_000,
    })
    const provider = new MeterProvider({ readers: [reader] })
    metrics.disable()
    metrics.setGlobalMeterProvider(provider)
    try {
      const tools = pipe(fromTools([tool('a')]), withUnknownKeyAudit({ onWarn: () => {} }))
      const stop = observeUnknownKeys(tools, { attributes: { 'toolstack.layer': 'stack' } })
      await tools.toolsForLlm()
      await tools.executeToolCalls([call('c', 'a', { x: 1 })])()
      const { resourceMetrics } = await reader.collect()
      stop()
      const [scope, ...others] = resourceMetrics.scopeMetrics
      expect(others).toEqual([])
      expect(scope?.scope.name).toBe('toolstack')
      const [metric] = scope?.metrics ?? []
      expect(metric?.descriptor).toMatchObject({ name: UNKNOWN_KEY_CALLS, unit: '{call}' })
      expect(metric?.descriptor.description).toMatch(/tool calls .* per \(tool, key\)/)
      expect(metric?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
        [{ 'toolstack.layer': 'stack', 'gen_ai.tool.name': 'a', 'toolstack.key': 'x' }, 1],
      ])
    } finally {
      metrics.disable()
      await provider.shutdown()
    }
  })
})

describe('with no OpenTelemetry SDK registered', () => {
  it('records nothing, and the calls go through as before', async () => {
    trace.disable()
    context.disable()
    metrics.disable()
    const sdkLess = pipe(fromTools([tool('t')]), withUnknownKeyAudit(otelAudit()))
    const stop = observeUnknownKeys(sdkLess)
    await sdkLess.toolsForLlm()
    const out = await sdkLess.executeToolCalls([call('c', 't', { x: 1 })])()
    expect(out).toEqual({ _tag: 'Right', right: [{ role: 'tool', tool_call_id: 'c', content: 'ok' }] })
    expect(trace.getActiveSpan()).toBeUndefined()
    // a provider registered now sees none of it
    const sdk = registerSdk()
    try {
      expect(sdk.spans()).toEqual([])
      expect((await sdk.collect()).filter((m) => m.descriptor.name === UNKNOWN_KEY_CALLS)).toEqual([])
    } finally {
      stop()
      await sdk.unregister()
    }
  })
})
