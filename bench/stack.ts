// One parse per call across the stack: Policy( UnknownKeys( Reasons( Registry ) ) )
// over a provider that does nothing, against one parse of the same arguments.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipe } from 'fp-ts/lib/function.js'
import type { Provider, Rule, ToolCall } from 'toolstack'
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
  figures.push(await resolvingFigure(quick))
  if (sink === -1) console.log(sink)
  return figures
}

// What judging a call where it leads costs (the gateway does it for every tool of a command upstream): a
// policy whose under rules and protected files are resolved on this filesystem, against the same policy
// judging as written, per call with one path five deep through a link. The gateway's own tools/call takes
// a few milliseconds (see the serve figures), so the target keeps this under a few per cent of it.
const resolvingFigure = async (quick: boolean): Promise<Figure> => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-bench-')))
  try {
    mkdirSync(join(root, 'src', 'a', 'b'), { recursive: true })
    mkdirSync(join(root, 'x', 'secret'), { recursive: true })
    symlinkSync(join(root, 'src'), join(root, 'code'))
    const rules: ReadonlyArray<Rule> = [
      { tool: 'fs_*', decision: 'allow', under: root },
      { tool: 'fs_*', decision: 'deny', under: join(root, 'x', 'secret') },
      { tool: 'fs_*', decision: 'deny', under: join(root, '.git') },
      { tool: 'fs_write', decision: 'ask', under: join(root, 'docs') },
    ]
    const protect = ['toolstack.json', 'grants.json', 'grants.json.lock'].map((f) => ({
      path: join(root, '.ts', f),
      what: f,
    }))
    const decls = [
      {
        type: 'function' as const,
        function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {} } } },
      },
    ]
    const policy = (resolver: 'lexical' | 'filesystem') => withPolicy({ rules, protect, resolver })(bareProvider(decls))
    const [onDisk, asWritten] = [policy('filesystem'), policy('lexical')]
    await Promise.all([onDisk.toolsForLlm(), asWritten.toolsForLlm()])
    const n = 200
    const path = (i: number) => JSON.stringify({ path: join(root, 'code', 'a', 'b', `f${i}.ts`) })
    let a: Array<ToolCall> = [],
      b: Array<ToolCall> = []
    const r = await interleaved(
      quick ? 20 : 100,
      () => {
        a = freshCalls(n, 'fs_read', path)
        b = freshCalls(n, 'fs_read', path)
      },
      [() => onDisk.executeToolCalls(a)(), () => asWritten.executeToolCalls(b)()],
      ([ta, tb]) => ((ta as number) - (tb as number)) / n / 1000,
    )
    return {
      name: 'policy: judging a call where it leads (filesystem resolver), added µs per call',
      value: r.ratio,
      unit: 'µs',
      target: { op: '<=', value: 100 },
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
