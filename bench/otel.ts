// With OpenTelemetry registered (the 2.x SDK, the async-hooks context manager, an active span, spans kept in
// memory), the audit's added cost per call ÷ one parse, against the same audit with no SDK: side by side in
// one run, on the typical call of the first figure (no undeclared key: what nearly every call is).
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { ToolCall } from 'toolstack'
import { withUnknownKeyAudit } from 'toolstack'
import { otelAudit } from 'toolstack/otel'
import { TYPICAL, bareProvider, freshCalls } from './audit.js'
import type { Figure } from './measure.js'
import { median, timeOnce } from './measure.js'

let sink = 0
const parseAndList = (calls: ReadonlyArray<ToolCall>): void => {
  for (const c of calls) sink += Object.keys(JSON.parse(c.function.arguments as string) as object).length
}

export const otelFigures = async (quick: boolean): Promise<ReadonlyArray<Figure>> => {
  const rounds = quick ? 40 : 200
  const n = 1000
  const quiet = withUnknownKeyAudit({ onWarn: () => undefined, onDiagnostic: () => undefined })(bareProvider())
  const traced = withUnknownKeyAudit(otelAudit())(bareProvider())
  const bare = bareProvider()
  await quiet.toolsForLlm()
  await traced.toolsForLlm()
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  // registered only while this figure runs, so the other figures run with none
  const off = (): void => {
    trace.disable()
    context.disable()
  }
  const on = (): void => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    trace.setGlobalTracerProvider(provider)
  }
  const args = (i: number): string => TYPICAL.replace('"offset":120', `"offset":${i}`)
  let calls: Array<Array<ToolCall>> = []
  // inside an active span, as a traced agent loop runs its tools
  const inSpan = (run: () => Promise<unknown>) => () =>
    trace.getTracer('bench').startActiveSpan('execute_tool fs_search', async (span) => {
      await run()
      span.end()
    })
  // the audit's added cost is audited − bare in each setting: with the SDK, the bare provider runs with it too,
  // so what the SDK costs every promise is not counted as the audit's
  // interleaved rounds as in measure.ts, with the SDK registered around its contenders only, outside the timing
  const contenders: ReadonlyArray<readonly [() => unknown, boolean]> = [
    [() => quiet.executeToolCalls(calls[0] as Array<ToolCall>)(), false],
    [() => bare.executeToolCalls(calls[1] as Array<ToolCall>)(), false],
    [inSpan(() => traced.executeToolCalls(calls[2] as Array<ToolCall>)()), true],
    [inSpan(() => bare.executeToolCalls(calls[3] as Array<ToolCall>)()), true],
    [() => parseAndList(calls[4] as Array<ToolCall>), false],
  ]
  const ratios: Array<number> = []
  const sums = contenders.map(() => [] as Array<number>)
  const warmup = Math.max(3, rounds >> 3)
  for (let round = 0; round < warmup + rounds; round++) {
    calls = contenders.map(() => freshCalls(n, 'fs_search', args))
    const t = new Array<number>(contenders.length).fill(0)
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + round) % contenders.length
      const [run, registered] = contenders[i] as readonly [() => unknown, boolean]
      if (registered) on()
      try {
        t[i] = await timeOnce(run)
      } finally {
        if (registered) off()
      }
    }
    if (round < warmup) continue
    const [tq, tb, to, tbo, tp] = t as [number, number, number, number, number]
    ratios.push((to - tbo - (tq - tb)) / tp)
    t.forEach((x, i) => sums[i]?.push(x))
  }
  const [mq, mb, mo, mbo, mp] = sums.map(median) as [number, number, number, number, number]
  await provider.shutdown()
  return [
    {
      name: 'with OpenTelemetry registered: rise of the audit added cost per call ÷ JSON.parse + keys',
      value: median(ratios),
      unit: 'ratio',
      target: { op: '<=', value: 0.05 },
      note:
        `added ÷ parse: ${((mq - mb) / mp).toFixed(3)} with no SDK, ${((mo - mbo) / mp).toFixed(3)} with the SDK and an active span ` +
        `(${n} calls of ${TYPICAL.length} bytes; ${sink > 0 ? 'parsed' : ''})`,
    },
  ]
}
