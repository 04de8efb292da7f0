// One parse per call across the stack: Policy( UnknownKeys( Reasons( Registry ) ) )
// over a provider that does nothing, against one parse of the same arguments.
import { pipe } from 'fp-ts/lib/function.js'
import type { Provider, ToolCall } from 'toolstack'
import { registry, withPolicy, withReasons, withUnknownKeyAudit } from 'toolstack'
import { TYPICAL, bareProvider, freshCalls } from './audit.js'
import type { Figure } from './measure.js'
import { interleaved } from './measure.js'

let sink = 0
const parseAndList = (calls: ReadonlyArray<ToolCall>): void => {
  for (const c of calls) sink += Object.keys(JSON.parse(c.function.arguments as string) as object).length
}

const stackOver = (inner: Provider<never>) =>
  pipe(
    registry([{ prefix: 'fs', provider: inner }]),
    withReasons(),
    withUnknownKeyAudit({ onWarn: () => () => undefined, onDiagnostic: () => undefined }),
    withPolicy({ rules: [{ tool: 'fs_*', decision: 'allow' }] }),
  )

const WITHOUT_REASON = JSON.stringify({ ...(JSON.parse(TYPICAL) as object), reason: undefined })

export const stackFigures = async (quick: boolean): Promise<ReadonlyArray<Figure>> => {
  const figures: Array<Figure> = []
  for (const [label, args, target] of [
    ['calls without a reason', WITHOUT_REASON, 1.5],
    ['calls with a reason (stripped and re-serialised)', TYPICAL, 2.5],
  ] as const) {
    const stack = stackOver(bareProvider())
    const bare = bareProvider()
    await stack.toolsForLlm()
    const n = 1000
    let a: Array<ToolCall> = [],
      b: Array<ToolCall> = [],
      p: Array<ToolCall> = []
    const vary = (i: number) => args.replace('"offset":120', `"offset":${i}`)
    const r = await interleaved(
      quick ? 40 : 200,
      () => {
        a = freshCalls(n, 'fs_fs_search', vary)
        b = freshCalls(n, 'fs_search', vary)
        p = freshCalls(n, 'fs_search', vary)
      },
      [() => stack.executeToolCalls(a)(), () => bare.executeToolCalls(b)(), () => parseAndList(p)],
      ([ta, tb, tp]) => ((ta as number) - (tb as number)) / (tp as number),
    )
    figures.push({
      name: `stack added cost per call ÷ JSON.parse + keys, ${label}`,
      value: r.ratio,
      unit: 'ratio',
      ...(target === undefined ? {} : { target: { op: '<=' as const, value: target } }),
    })
  }
  if (sink === -1) console.log(sink)
  return figures
}
