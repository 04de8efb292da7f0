// Benchmarks for the `toolstack` command, as ratios measured side by side in one run
// (median of interleaved rounds): the proxy against a bare pipe through a `cat`-like
// Node relay in the same place, and the audit against just parsing the same JSON Lines
// (readline + JSON.parse).
//
//   npm run build && npx tsx bench/cli.ts   (BENCH_ONLY=<regexp> picks sections, --quick is smaller)
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { PassThrough } from 'node:stream'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { runAudit } from '../src/cli/audit.js'
import { paletteFor } from '../src/cli/color.js'
import type { Figure } from './measure.js'
import { median, render } from './measure.js'

const root = fileURLToPath(new URL('..', import.meta.url))

// The proxy as it ships: dist/ (`npm run bench` builds it first; run `npm run build`
// before running this file on its own). Its audit thread loads from dist/ too, as it
// would for a user; only the time after the server said "ready" is measured.
const proxyArgv = (): Array<string> => [join(root, 'dist/esm/cli/main.js')]

const seconds = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e9

// -------------------------------------------------------------------------------------
// processes
// -------------------------------------------------------------------------------------

// A server for throughput: "ready" at start; answers a first "list-me" chunk with a
// tools/list response; counts what it receives and says "done" at EOF; on
// "flood N SIZE" writes N lines of SIZE bytes, then "done".
const SINK_SERVER = `
process.stdout.write('ready\\n')
let bytes = 0
let first = true
const listing = JSON.stringify({ jsonrpc: '2.0', id: 'L', result: { tools: [
  { name: 'fs_read', inputSchema: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } } },
  { name: 'fs_write', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } },
] } }) + '\\n'
process.stdin.on('data', (b) => {
  bytes += b.length
  if (!first) return
  first = false
  const head = b.subarray(0, 32).toString()
  if (head.startsWith('list-me\\n')) process.stdout.write(listing)
  if (head.startsWith('flood ')) {
    const [, n, size] = b.toString().trim().split(' ').map(Number)
    const line = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x'.repeat(Math.max(0, size - 70)) }] } }) + '\\n')
    let i = 0
    const pump = () => {
      while (i < n) {
        i++
        if (!process.stdout.write(line)) return void process.stdout.once('drain', pump)
      }
      process.stdout.write('done\\n')
    }
    pump()
  }
})
process.stdin.on('end', () => process.stdout.write('done ' + bytes + '\\n', () => process.exit(0)))
`

// Echoes each chunk back at once: for latency.
const ECHO_SERVER = `
process.stdout.write('ready\\n')
process.stdin.on('data', (b) => process.stdout.write(b))
process.stdin.on('end', () => process.exit(0))
`

// The bare pipe the proxy is measured against: the same topology, bytes only.
const RELAY = `
import { spawn } from 'node:child_process'
const [cmd, ...args] = process.argv.slice(2)
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] })
process.stdin.pipe(child.stdin)
child.stdout.pipe(process.stdout)
child.on('exit', (code) => process.stdout.write('', () => process.exit(code ?? 1)))
`

type Via = 'proxy' | 'relay' | 'direct'

interface Running {
  readonly child: ChildProcess
  readonly waitFor: (text: string) => Promise<void>
}

const start = (dir: string, via: Via, server: string): Running => {
  const serverArgs = [process.execPath, join(dir, server)]
  const argv =
    via === 'proxy' ? [...proxyArgv(), 'proxy', '--', ...serverArgs] : via === 'relay' ? [join(dir, 'relay.mjs'), ...serverArgs] : serverArgs.slice(1)
  const child = spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'inherit'], cwd: root })
  let tail = ''
  let waiters: Array<{ readonly text: string; readonly resolve: () => void }> = []
  child.stdout?.on('data', (b: Buffer) => {
    if (waiters.length === 0) return
    tail = (tail + b.toString('latin1', Math.max(0, b.length - 4096))).slice(-4096)
    waiters = waiters.filter((w) => {
      if (!tail.includes(w.text)) return true
      tail = ''
      w.resolve()
      return false
    })
  })
  return { child, waitFor: (text) => new Promise<void>((resolve) => waiters.push({ text, resolve })) }
}

const stop = async (r: Running): Promise<void> => {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return
  const exited = new Promise((res) => r.child.once('exit', res))
  r.child.stdin?.end()
  const t = setTimeout(() => r.child.kill('SIGKILL'), 5000)
  await exited
  clearTimeout(t)
}

const writeAll = (r: Running, data: Buffer): Promise<void> =>
  new Promise((resolve) => {
    const stdin = r.child.stdin
    if (stdin === null) return resolve()
    const chunk = 64 * 1024
    let i = 0
    const pump = (): void => {
      while (i < data.length) {
        const ok = stdin.write(data.subarray(i, i + chunk))
        i += chunk
        if (!ok) return void stdin.once('drain', pump)
      }
      resolve()
    }
    pump()
  })

// host → server: tools/list first, so that every tools/call of the flood is audited
const hostToServer = async (dir: string, via: Via, data: Buffer): Promise<number> => {
  const r = start(dir, via, 'sink.mjs')
  await r.waitFor('ready\n')
  const listed = r.waitFor('"id":"L","result"')
  r.child.stdin?.write('list-me\n{"jsonrpc":"2.0","id":"L","method":"tools/list"}\n')
  await listed
  const done = r.waitFor('done ')
  const t0 = process.hrtime.bigint()
  await writeAll(r, data)
  r.child.stdin?.end()
  await done
  const s = seconds(t0)
  await stop(r)
  return s
}

// server → host: a flood of responses
const serverToHost = async (dir: string, via: Via, n: number, size: number): Promise<number> => {
  const r = start(dir, via, 'sink.mjs')
  await r.waitFor('ready\n')
  const done = r.waitFor('done\n')
  const t0 = process.hrtime.bigint()
  r.child.stdin?.write(`flood ${n} ${size}\n`)
  await done
  const s = seconds(t0)
  await stop(r)
  return s
}

const roundTrip = async (dir: string, via: Via, n: number): Promise<number> => {
  const r = start(dir, via, 'echo.mjs')
  await r.waitFor('ready\n')
  const msg = (i: number): string =>
    JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } }, id: i }) + '\n'
  let t0 = process.hrtime.bigint()
  const warmup = 100
  for (let i = 0; i < warmup + n; i++) {
    if (i === warmup) t0 = process.hrtime.bigint()
    const back = r.waitFor(`"id":${i}}`)
    r.child.stdin?.write(msg(i))
    await back
  }
  const s = seconds(t0)
  await stop(r)
  return s / n
}

// -------------------------------------------------------------------------------------
// audit
// -------------------------------------------------------------------------------------

const writeSessions = async (file: string, mb: number): Promise<number> => {
  const out = createWriteStream(file)
  const tools = [
    { type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } } } },
    { type: 'function', function: { name: 'web_get', parameters: { type: 'object', properties: { url: { type: 'string' } } } } },
  ]
  let size = 0
  let lines = 0
  for (let s = 0; size < mb * 1024 * 1024; s++) {
    const messages: Array<unknown> = [{ role: 'user', content: 'Read the files and summarise them, please.' }]
    for (let turn = 0; turn < 12; turn++) {
      const id = `call_${s}_${turn}`
      const read = turn % 2 === 0
      const args = read ? { path: `/srv/file${turn}.txt`, ...(turn % 4 === 0 ? { ffset: turn } : {}) } : { url: `https://example.com/${turn}` }
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: read ? 'fs_read' : 'web_get', arguments: JSON.stringify(args) } }] })
      messages.push({ role: 'tool', tool_call_id: id, content: 'lorem ipsum dolor sit amet '.repeat(4) })
      const line = JSON.stringify({ model: 'gpt-x', tools, messages }) + '\n'
      size += line.length
      lines++
      if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()))
    }
  }
  await new Promise<void>((r) => out.end(() => r()))
  return lines
}

const justParse = (file: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity })
    let n = 0
    rl.on('line', (l) => {
      if (JSON.parse(l) !== null) n++
    })
    rl.once('error', reject)
    rl.once('close', () => resolve(seconds(t0) + n * 0))
  })

const audit = async (file: string): Promise<number> => {
  const off = paletteFor(false, {})
  const t0 = process.hrtime.bigint()
  await runAudit([file], { json: true, failOnWarn: false, tolerate: [] }, { stdin: new PassThrough(), out: () => undefined, err: () => undefined, outColor: off, errColor: off })
  return seconds(t0)
}

// -------------------------------------------------------------------------------------
// run
// -------------------------------------------------------------------------------------

const atLeast = (value: number) => ({ op: '>=', value }) as const

/**
 * The CLI's figures: proxy throughput as a ratio to a bare pipe (both directions,
 * small and 1 MB messages), messages per second and MB/s, added latency per round
 * trip, and audit throughput as a ratio to just parsing. `only` picks sections by name
 * (h2s, s2h, h2s-1mb, s2h-1mb, latency, audit).
 */
export const runCliBench = async (quick = false, only: RegExp = /./, log: (s: string) => void = () => undefined): Promise<ReadonlyArray<Figure>> => {
  const rounds = quick ? 3 : 5
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-bench-'))
  const out: Array<Figure> = []
  try {
    writeFileSync(join(dir, 'sink.mjs'), SINK_SERVER)
    writeFileSync(join(dir, 'echo.mjs'), ECHO_SERVER)
    writeFileSync(join(dir, 'relay.mjs'), RELAY)

    const pairs = async (label: string, run: (via: Via) => Promise<number>): Promise<{ ratio: number; proxy: number; relay: number }> => {
      const ratios: Array<number> = []
      const proxyT: Array<number> = []
      const relayT: Array<number> = []
      await run('relay') // warm-up: file cache, JIT of the bench itself
      for (let i = 0; i < rounds; i++) {
        const order: ReadonlyArray<Via> = i % 2 === 0 ? ['relay', 'proxy'] : ['proxy', 'relay']
        const t = new Map<Via, number>()
        for (const via of order) t.set(via, await run(via))
        const p = t.get('proxy') as number
        const r = t.get('relay') as number
        proxyT.push(p)
        relayT.push(r)
        ratios.push(r / p)
        log(`${label}: round ${i + 1}: bare pipe ${r.toFixed(3)} s, proxy ${p.toFixed(3)} s`)
      }
      return { ratio: median(ratios), proxy: median(proxyT), relay: median(relayT) }
    }

    const smallCount = quick ? 50_000 : 200_000
    const largeCount = quick ? 30 : 100
    const largeSize = 1024 * 1024
    const MB = 1024 * 1024

    if (only.test('h2s')) {
      const small = Buffer.from(
        Array.from(
          { length: smallCount },
          (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'fs_read', arguments: { path: `/srv/${i}`, ffset: i } } }) + '\n',
        ).join(''),
      )
      const h = await pairs('host→server', (via) => hostToServer(dir, via, small))
      out.push({
        name: `proxy host→server, ${smallCount / 1000}k tools/call, each audited: throughput / bare pipe`,
        value: h.ratio,
        unit: 'ratio',
        target: atLeast(0.9),
        note: `proxy ${Math.round(smallCount / h.proxy).toLocaleString('en-US')} msg/s, bare pipe ${Math.round(smallCount / h.relay).toLocaleString('en-US')} msg/s`,
      })
    }
    if (only.test('s2h')) {
      const s = await pairs('server→host', (via) => serverToHost(dir, via, smallCount, 200))
      out.push({
        name: `proxy server→host, ${smallCount / 1000}k responses: throughput / bare pipe`,
        value: s.ratio,
        unit: 'ratio',
        target: atLeast(0.9),
        note: `proxy ${Math.round(smallCount / s.proxy).toLocaleString('en-US')} msg/s, bare pipe ${Math.round(smallCount / s.relay).toLocaleString('en-US')} msg/s`,
      })
    }
    if (only.test('h2s-1mb')) {
      const large = Buffer.from(
        Array.from(
          { length: largeCount },
          (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'fs_write', arguments: { path: '/x', content: 'y'.repeat(largeSize - 120) } } }) + '\n',
        ).join(''),
      )
      const b = await pairs('host→server 1 MB', (via) => hostToServer(dir, via, large))
      out.push({
        name: 'proxy host→server, 1 MB tools/call, each audited: throughput / bare pipe',
        value: b.ratio,
        unit: 'ratio',
        target: atLeast(0.9),
        note: `proxy ${(large.length / MB / b.proxy).toFixed(0)} MB/s, bare pipe ${(large.length / MB / b.relay).toFixed(0)} MB/s`,
      })
    }
    if (only.test('s2h-1mb')) {
      const b = await pairs('server→host 1 MB', (via) => serverToHost(dir, via, largeCount, largeSize))
      out.push({
        name: 'proxy server→host, 1 MB responses: throughput / bare pipe',
        value: b.ratio,
        unit: 'ratio',
        target: atLeast(0.9),
        note: `proxy ${((largeCount * largeSize) / MB / b.proxy).toFixed(0)} MB/s, bare pipe ${((largeCount * largeSize) / MB / b.relay).toFixed(0)} MB/s`,
      })
    }
    if (only.test('latency')) {
      const n = quick ? 500 : 2000
      const lat = { proxy: [] as Array<number>, direct: [] as Array<number>, relay: [] as Array<number> }
      for (let i = 0; i < rounds; i++) {
        const order = i % 2 === 0 ? (['direct', 'relay', 'proxy'] as const) : (['proxy', 'relay', 'direct'] as const)
        for (const via of order) lat[via].push(await roundTrip(dir, via, n))
        log(`latency: round ${i + 1}: ${order.map((v) => `${v} ${((lat[v].at(-1) ?? 0) * 1e6).toFixed(1)} µs`).join(', ')}`)
      }
      const direct = median(lat.direct) * 1e6
      out.push({
        name: 'proxy: latency added per round trip (echo server, vs direct)',
        value: median(lat.proxy) * 1e6 - direct,
        unit: 'µs',
        note: `direct ${direct.toFixed(0)} µs; a bare relay adds ${(median(lat.relay) * 1e6 - direct).toFixed(0)} µs`,
      })
    }
    if (only.test('audit')) {
      const mb = quick ? 10 : 50
      const file = join(dir, 'sessions.jsonl')
      const lines = await writeSessions(file, mb)
      const ratios: Array<number> = []
      const auditT: Array<number> = []
      const parseT: Array<number> = []
      await justParse(file)
      for (let i = 0; i < rounds; i++) {
        let p: number
        let a: number
        if (i % 2 === 0) {
          p = await justParse(file)
          a = await audit(file)
        } else {
          a = await audit(file)
          p = await justParse(file)
        }
        ratios.push(p / a)
        auditT.push(a)
        parseT.push(p)
        log(`audit: round ${i + 1}: just parsing ${p.toFixed(3)} s, audit ${a.toFixed(3)} s`)
      }
      out.push({
        name: `audit, ${mb} MB of JSON Lines: throughput / readline + JSON.parse`,
        value: median(ratios),
        unit: 'ratio',
        target: atLeast(0.8),
        note: `${lines.toLocaleString('en-US')} requests; audit ${(mb / median(auditT)).toFixed(0)} MB/s (reading 256 KiB at a time), just parsing ${(mb / median(parseT)).toFixed(0)} MB/s (readline's 64 KiB)`,
      })
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (isMain) {
  const only = process.env['BENCH_ONLY']
  const figures = await runCliBench(process.argv.includes('--quick'), only === undefined ? /./ : new RegExp(only), (s) => process.stderr.write(s + '\n'))
  for (const f of figures) console.log(render(f))
}
