// The audit's own figures: its cost against the parse it cannot avoid, against a bare
// provider, against what users would pick instead, and as the seen-set grows.
import { Ajv } from 'ajv'
import { z } from 'zod'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from 'toolstack'
import { emptySeenSetOf, firstSeen, withUnknownKeyAudit } from 'toolstack'
import type { Figure } from './measure.js'
import { interleaved, median, timeOnce } from './measure.js'

const TYPICAL_ARGS = {
  path: '/home/user/projects/toolstack/src/UnknownKeys.ts',
  offset: 120,
  length: 40,
  encoding: 'utf-8',
  follow_symlinks: false,
  query: 'withUnknownKeyAudit smoke alarm, not a valve',
  context_lines: 3,
  max_matches: 25,
  case_sensitive: true,
  reason: 'Reading the audit to check how the seen-set grows',
}
export const TYPICAL = JSON.stringify(TYPICAL_ARGS)
const BIG = JSON.stringify({ path: '/tmp/big.txt', content: 'x'.repeat(1024 * 1024 - 40) })

const declaration = (name: string, keys: ReadonlyArray<string>): ToolDeclaration => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])) } },
})

const DECLS: ReadonlyArray<ToolDeclaration> = [
  declaration(
    'fs_search',
    Object.keys(TYPICAL_ARGS).filter((k) => k !== 'reason'),
  ),
  declaration('fs_write', ['path', 'content']),
]

/** A provider that does nothing but answer: so what is timed is the layer above it. */
export const bareProvider = (decls: ReadonlyArray<ToolDeclaration> = DECLS): Provider<never> => {
  let results: ReadonlyArray<ToolResult> = []
  return {
    toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: decls }),
    executeToolCalls: (calls) => () => {
      if (results.length !== calls.length)
        results = calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: '' }))
      return Promise.resolve({ _tag: 'Right', right: results })
    },
  }
}

/** Fresh call objects every round: a memo keyed by the call must not make a parse free. */
export const freshCalls = (n: number, name: string, args: (i: number) => string): Array<ToolCall> =>
  Array.from({ length: n }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: args(i) } }))

let sink = 0
const parseAndList = (calls: ReadonlyArray<ToolCall>): void => {
  for (const c of calls) sink += Object.keys(JSON.parse(c.function.arguments as string) as object).length
}

// room for the million pairs the flat-cost figure remembers
const quiet = withUnknownKeyAudit({ onWarn: () => () => undefined, onDiagnostic: () => undefined, maxPairs: 2_000_000 })

export const auditFigures = async (quick: boolean): Promise<ReadonlyArray<Figure>> => {
  const figures: Array<Figure> = []
  const rounds = quick ? 40 : 200

  // 1. at the floor: the audit's added cost per call ÷ one parse (+ key listing)
  {
    const audited = quiet(bareProvider())
    const bare = bareProvider()
    await audited.toolsForLlm()
    const n = 1000
    let a: Array<ToolCall> = [],
      b: Array<ToolCall> = [],
      p: Array<ToolCall> = []
    const r = await interleaved(
      rounds,
      () => {
        // distinct strings too, so nothing can be cached by identity
        a = freshCalls(n, 'fs_search', (i) => TYPICAL.replace('"offset":120', `"offset":${i}`))
        b = freshCalls(n, 'fs_search', (i) => TYPICAL.replace('"offset":120', `"offset":${i}`))
        p = freshCalls(n, 'fs_search', (i) => TYPICAL.replace('"offset":120', `"offset":${i}`))
      },
      [() => audited.executeToolCalls(a)(), () => bare.executeToolCalls(b)(), () => parseAndList(p)],
      ([ta, tb, tp]) => ((ta as number) - (tb as number)) / (tp as number),
    )
    figures.push({
      name: `audit added cost per call ÷ JSON.parse + keys (${TYPICAL.length}-byte arguments)`,
      value: r.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1.15 },
      note: `one parse of those arguments: ${((r.times[2] as number) / n).toFixed(0)} ns`,
    })
  }
  {
    const audited = quiet(bareProvider())
    const bare = bareProvider()
    await audited.toolsForLlm()
    let a: Array<ToolCall> = [],
      b: Array<ToolCall> = [],
      p: Array<ToolCall> = []
    const r = await interleaved(
      quick ? 10 : 30,
      () => {
        a = freshCalls(1, 'fs_write', () => BIG.slice(0, -2) + 'a"}')
        b = freshCalls(1, 'fs_write', () => BIG.slice(0, -2) + 'b"}')
        p = freshCalls(1, 'fs_write', () => BIG.slice(0, -2) + 'c"}')
      },
      [() => audited.executeToolCalls(a)(), () => bare.executeToolCalls(b)(), () => parseAndList(p)],
      ([ta, tb, tp]) => ((ta as number) - (tb as number)) / (tp as number),
    )
    figures.push({
      name: 'audit added cost per call ÷ JSON.parse + keys (1 MB arguments)',
      value: r.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1.05 },
    })
  }

  // 2. audited ÷ bare executeToolCalls, 100-call batch, over a provider that parses
  // its arguments as a real one must
  {
    const parsing: Provider<never> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: DECLS }),
      executeToolCalls: (calls) => () =>
        Promise.resolve({
          _tag: 'Right',
          right: calls.map((c) => ({
            role: 'tool' as const,
            tool_call_id: c.id,
            content: String(Object.keys(JSON.parse(c.function.arguments as string) as object).length),
          })),
        }),
    }
    const audited = quiet(parsing)
    await audited.toolsForLlm()
    let a: Array<ToolCall> = [],
      b: Array<ToolCall> = []
    const r = await interleaved(
      rounds,
      () => {
        a = freshCalls(100, 'fs_search', () => TYPICAL)
        b = freshCalls(100, 'fs_search', () => TYPICAL)
      },
      [() => audited.executeToolCalls(a)(), () => parsing.executeToolCalls(b)()],
      ([ta, tb]) => (ta as number) / (tb as number),
    )
    figures.push({
      name: 'audited ÷ bare executeToolCalls (100 calls, provider parses its arguments)',
      value: r.ratio,
      unit: 'ratio',
    })
  }

  // 3. ahead of what users would pick instead (each including its parse)
  {
    const keys = Object.keys(TYPICAL_ARGS)
    const ajv = new Ajv()
    const validate = ajv.compile({
      type: 'object',
      properties: Object.fromEntries(keys.map((k) => [k, {}])),
      additionalProperties: false,
    })
    const zod = z.strictObject(Object.fromEntries(keys.map((k) => [k, z.unknown()])))
    const audited = quiet(bareProvider())
    await audited.toolsForLlm()
    let a: Array<ToolCall> = [],
      j: Array<ToolCall> = [],
      zc: Array<ToolCall> = []
    const r = await interleaved(
      rounds,
      () => {
        a = freshCalls(1000, 'fs_search', () => TYPICAL)
        j = freshCalls(1000, 'fs_search', () => TYPICAL)
        zc = freshCalls(1000, 'fs_search', () => TYPICAL)
      },
      [
        () => audited.executeToolCalls(a)(),
        () => {
          for (const c of j) sink += validate(JSON.parse(c.function.arguments as string)) ? 1 : 0
        },
        () => {
          for (const c of zc) sink += zod.safeParse(JSON.parse(c.function.arguments as string)).success ? 1 : 0
        },
      ],
      ([ta, tj]) => (ta as number) / (tj as number),
    )
    const rz = (r.times[0] as number) / (r.times[2] as number)
    figures.push({
      name: 'audit (with its parse) ÷ ajv compiled, additionalProperties:false (with parse)',
      value: r.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1 },
    })
    figures.push({
      name: 'audit (with its parse) ÷ zod 4 strictObject().safeParse (with parse)',
      value: rz,
      unit: 'ratio',
      target: { op: '<=', value: 1 },
    })
  }

  // 3a. nested: an edit_file-like call with 10 array elements of 4 keys each; the audit
  // walks every element (the added cost ÷ one parse), and against ajv with
  // additionalProperties:false at every level (each with its parse)
  {
    const editSchema = (closed: boolean) => ({
      type: 'object',
      properties: {
        path: { type: 'string' },
        dryRun: { type: 'boolean' },
        edits: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              oldText: { type: 'string' },
              newText: { type: 'string' },
              line: { type: 'number' },
              replaceAll: { type: 'boolean' },
            },
            ...(closed ? { additionalProperties: false } : {}),
          },
        },
      },
      ...(closed ? { additionalProperties: false } : {}),
    })
    const decls: ReadonlyArray<ToolDeclaration> = [
      { type: 'function', function: { name: 'edit_file', parameters: editSchema(false) } },
    ]
    const nested = (i: number): string =>
      JSON.stringify({
        path: '/home/user/project/src/index.ts',
        edits: Array.from({ length: 10 }, (_, j) => ({
          oldText: `old ${i}`,
          newText: `new ${j}`,
          line: j,
          replaceAll: false,
        })),
      })
    const audited = quiet(bareProvider(decls))
    const bare = bareProvider(decls)
    await audited.toolsForLlm()
    const n = 1000
    let a: Array<ToolCall> = [],
      b: Array<ToolCall> = [],
      p: Array<ToolCall> = []
    const r = await interleaved(
      rounds,
      () => {
        a = freshCalls(n, 'edit_file', nested)
        b = freshCalls(n, 'edit_file', nested)
        p = freshCalls(n, 'edit_file', nested)
      },
      [() => audited.executeToolCalls(a)(), () => bare.executeToolCalls(b)(), () => parseAndList(p)],
      ([ta, tb, tp]) => ((ta as number) - (tb as number)) / (tp as number),
    )
    figures.push({
      name: `nested: audit added cost per call ÷ JSON.parse + keys (10 elements of 4 keys, ${nested(0).length} bytes)`,
      value: r.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1.5 },
    })
    const validate = new Ajv().compile(editSchema(true))
    let j: Array<ToolCall> = []
    const rj = await interleaved(
      rounds,
      () => {
        a = freshCalls(n, 'edit_file', nested)
        j = freshCalls(n, 'edit_file', nested)
      },
      [
        () => audited.executeToolCalls(a)(),
        () => {
          for (const c of j) sink += validate(JSON.parse(c.function.arguments as string)) ? 1 : 0
        },
      ],
      ([ta, tj]) => (ta as number) / (tj as number),
    )
    figures.push({
      name: 'nested: audit (with its parse) ÷ ajv compiled, additionalProperties:false at every level (with parse)',
      value: rj.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1 },
    })
  }

  // 3b. a model that keeps sending a key already reported: 20 tools, one call in ten
  // carrying it, so the audit counts it where ajv rejects it
  {
    const tools = Array.from({ length: 20 }, (_, t) => ({
      name: `tool_${t}`,
      keys: Object.keys(TYPICAL_ARGS)
        .filter((k) => k !== 'reason')
        .slice(0, 4 + (t % 6)),
    }))
    const decls = tools.map((t) => declaration(t.name, t.keys))
    const ajv = new Ajv()
    const validators = new Map(
      tools.map((t) => [
        t.name,
        ajv.compile({
          type: 'object',
          properties: Object.fromEntries(t.keys.map((k) => [k, {}])),
          additionalProperties: false,
        }),
      ]),
    )
    const argsFor = (i: number): [string, string] => {
      const t = tools[i % tools.length] as { name: string; keys: ReadonlyArray<string> }
      const args: Record<string, unknown> = {}
      for (const k of t.keys) args[k] = (TYPICAL_ARGS as Record<string, unknown>)[k]
      args['offset'] = i
      if (i % 10 === 0) args['ffset'] = i
      return [t.name, JSON.stringify(args)]
    }
    const mixed = (n: number): Array<ToolCall> =>
      Array.from({ length: n }, (_, i) => {
        const [name, args] = argsFor(i)
        return { id: `c${i}`, type: 'function', function: { name, arguments: args } }
      })
    const audited = quiet(bareProvider(decls))
    await audited.toolsForLlm()
    await audited.executeToolCalls(mixed(1000))() // every pair reported once, before the rounds
    let a: Array<ToolCall> = [],
      j: Array<ToolCall> = []
    const r = await interleaved(
      rounds,
      () => {
        a = mixed(1000)
        j = mixed(1000)
      },
      [
        () => audited.executeToolCalls(a)(),
        () => {
          for (const c of j)
            sink += (validators.get(c.function.name) as (u: unknown) => boolean)(
              JSON.parse(c.function.arguments as string),
            )
              ? 1
              : 0
        },
      ],
      ([ta, tj]) => (ta as number) / (tj as number),
    )
    figures.push({
      name: 'audit ÷ ajv (with parse), 20 tools, 1 call in 10 repeating a reported key',
      value: r.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1 },
    })
  }

  // 4. flat under a key-inventing model: a batch of 1,000 calls, each with a fresh
  // undeclared key, at 1,000,000 pairs seen ÷ at 5,000
  {
    const small = quiet(bareProvider())
    const large = quiet(bareProvider())
    await small.toolsForLlm()
    await large.toolsForLlm()
    let next = 0
    const inventing = (n: number) => freshCalls(n, 'fs_write', () => `{"path":"a","k${next++}":1}`)
    const fill = async (p: Provider<never>, pairs: number) => {
      for (let done = 0; done < pairs; done += 10_000)
        await p.executeToolCalls(inventing(Math.min(10_000, pairs - done)))()
    }
    const big = quick ? 200_000 : 1_000_000
    await fill(small, 5_000)
    await fill(large, big)
    let s: Array<ToolCall> = [],
      l: Array<ToolCall> = []
    const r = await interleaved(
      quick ? 10 : 30,
      () => {
        s = inventing(1000)
        l = inventing(1000)
      },
      [() => small.executeToolCalls(s)(), () => large.executeToolCalls(l)()],
      ([ts, tl]) => (tl as number) / (ts as number),
    )
    figures.push({
      name: `batch of 1,000 new pairs at ${big.toLocaleString('en-US')} pairs seen ÷ at 5,000`,
      value: r.ratio,
      unit: 'ratio',
      target: { op: '<=', value: 1.5 },
    })
  }

  // 5. memory per remembered pair, the key string itself excluded (measured apart, the
  // same strings made the same way)
  {
    const gc = (globalThis as { gc?: () => void }).gc
    if (gc !== undefined) {
      const n = quick ? 100_000 : 500_000
      const keyOf = (i: number): string => `key_${i}`
      const heapDelta = async (build: () => unknown): Promise<number> => {
        gc()
        gc()
        const before = process.memoryUsage().heapUsed
        const kept = await build()
        gc()
        gc()
        const after = process.memoryUsage().heapUsed
        if (kept === null) console.log('unreachable')
        return after - before
      }
      const keys = (await heapDelta(() => Array.from({ length: n }, (_, i) => keyOf(i)))) / n - 4 // one array slot each
      const seenOnly = await heapDelta(() => {
        let seen = emptySeenSetOf(n)
        for (let i = 0; i < n; i++) seen = firstSeen('fs_write', [keyOf(i)])(seen)[1]
        return seen
      })
      figures.push({
        name: `memory per remembered pair: the seen-set alone, one tool (key of ~${keyOf(n >> 1).length} chars excluded)`,
        value: seenOnly / n - keys,
        unit: 'bytes',
        target: { op: '<=', value: 100 },
      })
      const instance = quiet(bareProvider())
      await instance.toolsForLlm()
      const whole = await heapDelta(async () => {
        // the calls are garbage once audited; what stays is the instance's memory of them
        for (let done = 0; done < n; done += 1000) {
          const batch = Array.from({ length: 1000 }, (_, j) => ({
            id: 'c',
            function: { name: 'fs_write', arguments: { path: 'a', [keyOf(done + j)]: 1 } },
          }))
          await instance.executeToolCalls(batch)()
        }
        return instance
      })
      figures.push({
        name: 'memory per remembered pair: a whole audited instance (seen-set and counts)',
        value: whole / n - keys,
        unit: 'bytes',
        target: { op: '<=', value: 100 },
        note: `each key string costs ${keys.toFixed(0)} bytes more`,
      })
    }
  }

  // 6. memory per remembered pair when the model sends 10 KB ids and 10 KB keys: the
  // seen-set keeps bounded copies, never a slice that holds the whole string alive
  {
    const gc = (globalThis as { gc?: () => void }).gc
    if (gc !== undefined) {
      const n = quick ? 2_000 : 10_000
      const long = 'x'.repeat(10_000)
      const instance = quiet(bareProvider())
      await instance.toolsForLlm()
      gc()
      gc()
      const before = process.memoryUsage().heapUsed
      for (let done = 0; done < n; done += 100) {
        const batch = Array.from({ length: 100 }, (_, j) => ({
          id: `${done + j}${long}`,
          function: { name: 'fs_write', arguments: `{"path":"a","${done + j}${long}":1}` },
        }))
        await instance.executeToolCalls(batch)()
      }
      gc()
      gc()
      const per = (process.memoryUsage().heapUsed - before) / n
      if (instance.stats().length !== n) throw new Error('bench: not every pair was remembered')
      figures.push({
        name: 'memory per remembered pair with 10 KB ids and 10 KB keys',
        value: per,
        unit: 'bytes',
        target: { op: '<=', value: 2048 },
      })
    }
  }

  if (sink === -1) console.log(sink)
  void median
  void timeOnce
  return figures
}
