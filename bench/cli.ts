// Benchmarks for the `toolstack` command, measured side by side in one run (medians of
// interleaved rounds): the proxy against a bare relay (a Node process that pipes both
// ways, in the same place) and against the server alone, and the audit against just
// parsing the same JSON Lines (readline + JSON.parse).
//
//   npm run build && npx tsx bench/cli.ts   (BENCH_ONLY=<regexp> picks sections, --quick is smaller)
//   sections: latency, flood, rtt-1mb, flow-1mb, s2h, startup, audit, memory
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

// The command as it ships: dist/ (`npm run bench` builds it first; run `npm run build`
// before running this file on its own).
const MAIN = join(root, 'dist/esm/cli/main.js')

const seconds = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e9
const MB = 1024 * 1024

// -------------------------------------------------------------------------------------
// processes
// -------------------------------------------------------------------------------------

const LISTING = JSON.stringify({
  jsonrpc: '2.0',
  id: 'L',
  result: {
    tools: [
      {
        name: 'fs_read',
        inputSchema: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } },
      },
      {
        name: 'fs_write',
        inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
      },
      { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    ],
  },
})

// A server for throughput: "ready" at start; answers a first "list-me" chunk with the
// listing; counts what it receives and says "done" at EOF; on "flood N SIZE" writes N
// lines of SIZE bytes, then "done".
const SINK_SERVER = `
process.stdout.write('ready\\n')
let bytes = 0
let first = true
process.stdin.on('data', (b) => {
  bytes += b.length
  if (!first) return
  first = false
  const head = b.subarray(0, 32).toString()
  if (head.startsWith('list-me\\n')) process.stdout.write(${JSON.stringify(LISTING + '\n')})
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

// For latency and start-up: answers initialize and tools/list, echoes anything else
// back as it comes.
const ECHO_SERVER = `
process.stdin.on('data', (b) => {
  if (b.length < 4096 && b.includes('"method":"initialize"')) {
    const id = JSON.parse(b.toString().split('\\n')[0]).id
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'echo', version: '1' } } }) + '\\n')
  } else if (b.length < 4096 && b.includes('"method":"tools/list"')) process.stdout.write(${JSON.stringify(LISTING + '\n')})
  else process.stdout.write(b)
})
process.stdin.on('end', () => process.exit(0))
`

// The bare relay the proxy is measured against: the same topology, bytes only.
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
    via === 'proxy'
      ? [MAIN, 'proxy', '--', ...serverArgs]
      : via === 'relay'
        ? [join(dir, 'relay.mjs'), ...serverArgs]
        : serverArgs.slice(1)
  const child = spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'ignore'], cwd: root })
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

// host → server: tools/list first, so that every tools/call that follows is audited
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

// The mean round trip of `n` audited calls, one at a time, after a listing: a request
// goes out, its echo comes back, the next goes out.
const roundTrips = async (
  dir: string,
  via: Via,
  n: number,
  call: (i: number) => string,
  warmup: number,
): Promise<number> => {
  const r = start(dir, via, 'echo.mjs')
  const listed = r.waitFor('"id":"L","result"')
  r.child.stdin?.write('{"jsonrpc":"2.0","id":"L","method":"tools/list"}\n')
  await listed
  let t0 = process.hrtime.bigint()
  for (let i = 0; i < warmup + n; i++) {
    if (i === warmup) t0 = process.hrtime.bigint()
    const back = r.waitFor(`"id":${i}}`)
    r.child.stdin?.write(call(i))
    await back
  }
  const s = seconds(t0)
  await stop(r)
  return s / n
}

const smallCall = (i: number): string =>
  JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } }, id: i }) +
  '\n'
const bigText = 'y'.repeat(MB - 120)
const bigCall = (i: number): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: bigText } },
    id: i,
  }) + '\n'

// From spawn to the answer to `initialize`.
const startUp = async (dir: string, via: Via): Promise<number> => {
  const t0 = process.hrtime.bigint()
  const r = start(dir, via, 'echo.mjs')
  const answered = r.waitFor('"serverInfo"')
  r.child.stdin?.write(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n',
  )
  await answered
  const s = seconds(t0)
  await stop(r)
  return s
}

const runOnce = (args: ReadonlyArray<string>): Promise<number> =>
  new Promise((resolve) => {
    const t0 = process.hrtime.bigint()
    spawn(process.execPath, [...args], { stdio: 'ignore', cwd: root }).once('exit', () => resolve(seconds(t0)))
  })

// -------------------------------------------------------------------------------------
// audit
// -------------------------------------------------------------------------------------

const writeSessions = async (file: string, mb: number): Promise<number> => {
  const out = createWriteStream(file)
  const tools = [
    {
      type: 'function',
      function: {
        name: 'fs_read',
        parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } } },
      },
    },
    {
      type: 'function',
      function: { name: 'web_get', parameters: { type: 'object', properties: { url: { type: 'string' } } } },
    },
  ]
  let size = 0
  let lines = 0
  for (let s = 0; size < mb * MB; s++) {
    const messages: Array<unknown> = [{ role: 'user', content: 'Read the files and summarise them, please.' }]
    for (let turn = 0; turn < 12; turn++) {
      const id = `call_${s}_${turn}`
      const read = turn % 2 === 0
      const args = read
        ? { path: `/srv/file${turn}.txt`, ...(turn % 4 === 0 ? { ffset: turn } : {}) }
        : { url: `https://example.com/${turn}` }
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id, type: 'function', function: { name: read ? 'fs_read' : 'web_get', arguments: JSON.stringify(args) } },
        ],
      })
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
  await runAudit(
    [file],
    { json: true, failOnWarn: false, tolerate: [] },
    { stdin: new PassThrough(), out: () => undefined, err: () => undefined, outColor: off, errColor: off },
  )
  return seconds(t0)
}

// Both sides of the audit's figure run on this one thread: their CPU time is the work
// each does, whatever else the machine is running meanwhile.
const cpuSeconds = async (f: () => Promise<unknown>): Promise<number> => {
  const t0 = process.cpuUsage()
  await f()
  const u = process.cpuUsage(t0)
  return (u.user + u.system) / 1e6
}

// The peak RSS of `toolstack audit --json FILE`, as shipped, in MB.
const peakRss = (file: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'data:text/javascript,process.on("exit",()=>process.stderr.write("maxrss="+process.resourceUsage().maxRSS+"\\n"))',
        MAIN,
        'audit',
        '--json',
        file,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        cwd: root,
      },
    )
    let err = ''
    child.stderr?.setEncoding('utf8').on('data', (t: string) => (err += t))
    child.once('error', reject)
    child.once('close', () => {
      const m = /maxrss=(\d+)/.exec(err)
      if (m === null) reject(new Error(`no maxrss in: ${err.slice(-500)}`))
      else resolve(Number(m[1]) / 1024)
    })
  })

// -------------------------------------------------------------------------------------
// run
// -------------------------------------------------------------------------------------

const atLeast = (value: number) => ({ op: '>=', value }) as const
const atMost = (value: number) => ({ op: '<=', value }) as const
const rate = (n: number): string => Math.round(n).toLocaleString('en-US')

/**
 * The command's figures. `only` picks sections by name (see the head of this file).
 */
export const runCliBench = async (
  quick = false,
  only: RegExp = new RegExp(process.env['BENCH_ONLY'] ?? '.'),
  log: (s: string) => void = () => undefined,
): Promise<ReadonlyArray<Figure>> => {
  const rounds = quick ? 3 : 7
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-bench-'))
  const out: Array<Figure> = []
  try {
    writeFileSync(join(dir, 'sink.mjs'), SINK_SERVER)
    writeFileSync(join(dir, 'echo.mjs'), ECHO_SERVER)
    writeFileSync(join(dir, 'relay.mjs'), RELAY)

    // each round runs every contender once, in an order that turns round by round
    const sideBySide = async <V extends Via>(
      label: string,
      vias: ReadonlyArray<V>,
      run: (via: V) => Promise<number>,
      n = rounds,
    ): Promise<Record<V, Array<number>>> => {
      const t = Object.fromEntries(vias.map((v) => [v, [] as Array<number>])) as Record<V, Array<number>>
      await run(vias[0] as V) // warm-up: file cache, JIT of the bench itself
      for (let i = 0; i < n; i++) {
        const order = vias.map((_, k) => vias[(k + i) % vias.length] as V)
        for (const via of order) t[via].push(await run(via))
        log(`${label}: round ${i + 1}: ${order.map((v) => `${v} ${(t[v].at(-1) ?? 0).toFixed(6)} s`).join(', ')}`)
      }
      return t
    }
    const diffs = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): Array<number> =>
      a.map((x, i) => x - (b[i] ?? 0))

    if (only.test('latency')) {
      const n = quick ? 300 : 1000
      const t = await sideBySide('latency', ['direct', 'relay', 'proxy'], (via) =>
        roundTrips(dir, via, n, smallCall, 100),
      )
      out.push({
        name: 'proxy: latency added per audited tools/call round trip, over a bare relay (µs)',
        value: median(diffs(t.proxy, t.relay)) * 1e6,
        unit: 'µs',
        target: atMost(60),
        note: `round trip: direct ${(median(t.direct) * 1e6).toFixed(0)} µs, bare relay ${(median(t.relay) * 1e6).toFixed(0)} µs, proxy ${(median(t.proxy) * 1e6).toFixed(0)} µs`,
      })
    }
    if (only.test('flood')) {
      const n = quick ? 50_000 : 200_000
      const small = Buffer.from(
        Array.from(
          { length: n },
          (_, i) =>
            JSON.stringify({
              jsonrpc: '2.0',
              id: i,
              method: 'tools/call',
              params: { name: 'fs_read', arguments: { path: `/srv/${i}`, ffset: i } },
            }) + '\n',
        ).join(''),
      )
      const t = await sideBySide('flood', ['relay', 'proxy'], (via) => hostToServer(dir, via, small))
      out.push({
        name: `proxy: audited small tools/call per second, host → server (${n / 1000}k, each audited)`,
        value: n / median(t.proxy),
        unit: '/s',
        target: atLeast(20_000),
        note: `a bare relay moves ${rate(n / median(t.relay))}/s (proxy ÷ relay ${(median(t.relay) / median(t.proxy)).toFixed(2)})`,
      })
    }
    if (only.test('rtt-1mb')) {
      const n = quick ? 5 : 20
      const t = await sideBySide('1 MB round trip', ['relay', 'proxy'], (via) => roundTrips(dir, via, n, bigCall, 3))
      out.push({
        name: 'proxy: time added to the round trip of a 1 MB tools/call, over a bare relay (ms)',
        value: median(diffs(t.proxy, t.relay)) * 1e3,
        unit: 'ms',
        target: atMost(10),
        note: `round trip: bare relay ${(median(t.relay) * 1e3).toFixed(1)} ms, proxy ${(median(t.proxy) * 1e3).toFixed(1)} ms`,
      })
    }
    if (only.test('flow-1mb')) {
      const n = quick ? 30 : 100
      const large = Buffer.from(
        Array.from(
          { length: n },
          (_, i) =>
            JSON.stringify({
              jsonrpc: '2.0',
              id: i,
              method: 'tools/call',
              params: { name: 'fs_write', arguments: { path: '/x', content: 'y'.repeat(MB - 120) } },
            }) + '\n',
        ).join(''),
      )
      const t = await sideBySide('1 MB flow', ['relay', 'proxy'], (via) => hostToServer(dir, via, large))
      const ratios = t.proxy.map((p, i) => (t.relay[i] ?? 0) / p)
      out.push({
        name: 'proxy: back-to-back 1 MB tools/call, each audited: throughput ÷ a bare relay',
        value: median(ratios),
        unit: 'ratio',
        target: atLeast(0.5),
        note: `proxy ${(large.length / MB / median(t.proxy)).toFixed(0)} MB/s, bare relay ${(large.length / MB / median(t.relay)).toFixed(0)} MB/s`,
      })
    }
    if (only.test('s2h')) {
      const n = quick ? 50_000 : 200_000
      const t = await sideBySide('server→host', ['relay', 'proxy'], (via) => serverToHost(dir, via, n, 200))
      const ratios = t.proxy.map((p, i) => (t.relay[i] ?? 0) / p)
      out.push({
        name: `proxy: server → host, ${n / 1000}k small responses: throughput ÷ a bare relay`,
        value: median(ratios),
        unit: 'ratio',
        note: `proxy ${rate(n / median(t.proxy))}/s, bare relay ${rate(n / median(t.relay))}/s`,
      })
    }
    if (only.test('startup')) {
      const v = { bare: [] as Array<number>, version: [] as Array<number> }
      for (let i = 0; i < (quick ? 5 : 15); i++) {
        v.bare.push(await runOnce(['-e', '']))
        v.version.push(await runOnce([MAIN, '--version']))
      }
      const t = await sideBySide('start-up', ['direct', 'proxy'], (via) => startUp(dir, via), quick ? 5 : 15)
      out.push({
        name: 'proxy: initialize answered, time added to the server alone (ms)',
        value: median(diffs(t.proxy, t.direct)) * 1e3,
        unit: 'ms',
        target: atMost(50),
        note: `server alone ${(median(t.direct) * 1e3).toFixed(0)} ms, through the proxy ${(median(t.proxy) * 1e3).toFixed(0)} ms (a bare \`node -e ""\` takes ${(median(v.bare) * 1e3).toFixed(0)} ms: the proxy is a Node process that starts before its server)`,
      })
      out.push({
        name: '`toolstack --version`, time added to a bare `node -e ""` (ms)',
        value: median(diffs(v.version, v.bare)) * 1e3,
        unit: 'ms',
        note: `bare node ${(median(v.bare) * 1e3).toFixed(0)} ms, toolstack --version ${(median(v.version) * 1e3).toFixed(0)} ms`,
      })
    }
    if (only.test('audit')) {
      const mb = quick ? 10 : 50
      const file = join(dir, 'sessions.jsonl')
      const lines = await writeSessions(file, mb)
      const ratios: Array<number> = []
      const wall = { audit: [] as Array<number>, parse: [] as Array<number> }
      await justParse(file)
      await audit(file)
      for (let i = 0; i < rounds; i++) {
        const order = i % 2 === 0 ? (['parse', 'audit'] as const) : (['audit', 'parse'] as const)
        const cpu = { audit: 0, parse: 0 }
        for (const which of order)
          cpu[which] = await cpuSeconds(async () =>
            wall[which].push(await (which === 'audit' ? audit(file) : justParse(file))),
          )
        ratios.push(cpu.parse / cpu.audit)
        log(`audit: round ${i + 1}: just parsing ${cpu.parse.toFixed(3)} s CPU, audit ${cpu.audit.toFixed(3)} s CPU`)
      }
      out.push({
        name: `audit, ${mb} MB of JSON Lines: throughput ÷ readline + JSON.parse (CPU time)`,
        value: median(ratios),
        unit: 'ratio',
        target: atLeast(0.8),
        note: `${lines.toLocaleString('en-US')} requests; wall clock: audit ${(mb / median(wall.audit)).toFixed(0)} MB/s, just parsing ${(mb / median(wall.parse)).toFixed(0)} MB/s`,
      })
    }
    if (only.test('memory')) {
      const big = quick ? 200 : 1024
      const smallFile = join(dir, 'small.jsonl')
      const bigFile = join(dir, 'big.jsonl')
      await writeSessions(smallFile, 50)
      await writeSessions(bigFile, big)
      const small = await peakRss(smallFile)
      const large = await peakRss(bigFile)
      rmSync(bigFile)
      out.push({
        name: `audit: peak RSS on ${big >= 1024 ? `${big / 1024} GB` : `${big} MB`} of JSON Lines (MB)`,
        value: large,
        unit: 'MB',
        note: `${small.toFixed(0)} MB on 50 MB of the same sessions (what grows is the set of distinct calls, a few dozen bytes each)`,
      })
      // input that is not JSON Lines: no line break in 200 MB
      const binary = join(dir, 'blob.bin')
      const block = Buffer.alloc(MB, 0xa5)
      for (let i = 0; i < 200; i++) writeFileSync(binary, block, { flag: 'a' })
      out.push({
        name: 'audit: peak RSS on 200 MB of binary, not JSON Lines (MB)',
        value: await peakRss(binary),
        unit: 'MB',
        note: 'the line is passed over once longer than --max-line-bytes (64 MiB)',
      })
      rmSync(binary)
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (isMain) {
  const figures = await runCliBench(process.argv.includes('--quick'), undefined, (s) => process.stderr.write(s + '\n'))
  for (const f of figures) console.log(render(f))
}
