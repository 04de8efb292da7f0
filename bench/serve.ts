// `toolstack serve`'s figures, measured side by side in one run: the latency a
// tools/call round trip gains through the gateway over calling the upstream directly
// with the SDK; the gateway's start to its first tools/list answer, against the
// slowest upstream's own start; the memory an idle HTTP session holds, and 200
// sessions at once, each answered.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { serveHttp } from 'toolstack/mcp'
import { decodeGatewayConfig, startGateway } from 'toolstack/gateway'
import type { Figure } from './measure.js'
import { median } from './measure.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const require = createRequire(import.meta.url)
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const ECHO = join(root, 'test/mcp/fixtures/flaky-server.mjs')
const RELAY = join(root, 'bench/fixtures/sdk-relay.mjs')

const connect = async (command: string, args: ReadonlyArray<string>): Promise<Client> => {
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(new StdioClientTransport({ command, args: [...args], stderr: 'ignore' }))
  return client
}

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6

// 1. a round trip through the gateway against the same upstream called directly, and
// through a plain SDK relay (bench/fixtures/sdk-relay.mjs): the relay is the floor of any
// gateway built on the SDK's Server and Client, so the gateway's own share is what it
// adds beyond the relay
const latency = async (dir: string, calls: number): Promise<ReadonlyArray<Figure>> => {
  const config = join(dir, 'echo.json')
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [ECHO], prefix: 'ec' } } }),
  )
  const direct = await connect(process.execPath, [ECHO])
  const relay = await connect(process.execPath, [RELAY, process.execPath, ECHO])
  const gateway = await connect(process.execPath, [main, 'serve', '--config', config])
  try {
    await gateway.listTools()
    const once = async (client: Client, name: string): Promise<number> => {
      const t0 = process.hrtime.bigint()
      await client.callTool({ name, arguments: { n: 1 } })
      return ms(t0)
    }
    const rounds: ReadonlyArray<readonly [Client, string]> = [
      [direct, 'ping'],
      [relay, 'ping'],
      [gateway, 'ec_ping'],
    ]
    for (let i = 0; i < 50; i++) await Promise.all(rounds.map(([c, name]) => once(c, name)))
    const times: Array<Array<number>> = [[], [], []]
    for (let i = 0; i < calls; i++) {
      // one at a time, each starting first in turn, so none waits on another
      for (let k = 0; k < 3; k++) {
        const j = (i + k) % 3
        const [client, name] = rounds[j] as readonly [Client, string]
        ;(times[j] as Array<number>).push(await once(client, name))
      }
    }
    const [d, r, g] = times as [Array<number>, Array<number>, Array<number>]
    const added = (over: ReadonlyArray<number>): number => median(g.map((t, i) => t - (over[i] as number))) * 1000
    const µs = (xs: ReadonlyArray<number>): string => (median(xs) * 1000).toFixed(0)
    return [
      {
        name: 'serve: latency added per tools/call round trip, gateway vs the upstream called directly',
        value: added(d),
        unit: 'µs',
        target: { op: '<=', value: 300 },
        note: `direct ${µs(d)} µs, through a plain SDK relay ${µs(r)} µs, through the gateway ${µs(g)} µs (median of ${calls})`,
      },
      {
        name: "serve: the same, beyond a plain SDK relay (the gateway's own share)",
        value: added(r),
        unit: 'µs',
      },
    ]
  } finally {
    await direct.close()
    await relay.close()
    await gateway.close()
  }
}

// 2. the gateway's start to its first tools/list answer, against each upstream alone,
// and against both started at once by a plain client: on a small machine two Node
// servers starting together slow each other, which no gateway can undo, so the second
// figure is the gateway's own share
const startUp = async (dir: string, rounds: number): Promise<ReadonlyArray<Figure>> => {
  const config = join(dir, 'two.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        fs: { command: process.execPath, args: [FILESYSTEM, dir] },
        ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
    }),
  )
  const firstList = async (command: string, args: ReadonlyArray<string>): Promise<number> => {
    const t0 = process.hrtime.bigint()
    const client = await connect(command, args)
    await client.listTools()
    const t = ms(t0)
    await client.close()
    return t
  }
  const slowest: Array<number> = []
  const together: Array<number> = []
  const gateways: Array<number> = []
  await firstList(process.execPath, [FILESYSTEM, dir]) // file cache
  for (let r = 0; r < rounds; r++) {
    const fs = await firstList(process.execPath, [FILESYSTEM, dir])
    const ev = await firstList(process.execPath, [EVERYTHING, 'stdio'])
    const t0 = process.hrtime.bigint()
    await Promise.all([
      firstList(process.execPath, [FILESYSTEM, dir]),
      firstList(process.execPath, [EVERYTHING, 'stdio']),
    ])
    together.push(ms(t0))
    gateways.push(await firstList(process.execPath, [main, 'serve', '--config', config]))
    slowest.push(Math.max(fs, ev))
  }
  const beyond = (base: ReadonlyArray<number>): number => median(gateways.map((g, i) => g - (base[i] as number)))
  return [
    {
      name: 'serve: start to first tools/list answer, beyond the slowest upstream alone',
      value: beyond(slowest),
      unit: 'ms',
      target: { op: '<=', value: 150 },
      note: `slowest upstream alone ${median(slowest).toFixed(0)} ms, both at once by a plain client ${median(together).toFixed(0)} ms, the gateway over both ${median(gateways).toFixed(0)} ms (median of ${rounds})`,
    },
    {
      name: "serve: the same, beyond both upstreams started at once by a plain client (the gateway's own share)",
      value: beyond(together),
      unit: 'ms',
    },
  ]
}

// the sessions are opened by another process, so only the gateway's side is counted
const LOAD = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
const clients = []
const open = async (url, n, list) => {
  for (let i = 0; i < n; i++) {
    const c = new Client({ name: 'load', version: '1' })
    await c.connect(new StreamableHTTPClientTransport(new URL(url)))
    if (list) await c.listTools()
    clients.push(c)
  }
}
const [url, n] = [process.argv[2], Number(process.argv[3])]
process.stdin.setEncoding('utf8')
let buffered = ''
process.stdin.on('data', async (chunk) => {
  buffered += chunk
  const lines = buffered.split('\\n')
  buffered = lines.pop()
  for (const line of lines) {
    if (line === 'open') await open(url, n, false)
    if (line === 'list') for (const c of clients) await c.listTools()
    if (line === 'call') {
      const answers = await Promise.all(clients.map((c, i) => c.callTool({ name: 'ec_ping', arguments: { n: i } })))
      process.stdout.write('answered ' + answers.filter((a, i) => a.content?.[0]?.text === 'pong {"n":' + i + '}').length + '\\n')
      continue
    }
    if (line === 'close') {
      await Promise.all(clients.splice(0).map(async (c) => { await c.transport?.terminateSession?.(); await c.close() }))
    }
    process.stdout.write('done ' + line + '\\n')
  }
})
`

// 3. memory per idle HTTP session (initialized, not yet listing), the same after each
// listed the tools of two real upstreams, and n sessions held, each call answered
export const sessions = async (dir: string, n: number): Promise<ReadonlyArray<Figure>> => {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
  const config = decodeGatewayConfig({
    mcpServers: {
      ec: { command: process.execPath, args: [ECHO] },
      fs: { command: process.execPath, args: [FILESYSTEM, dir] },
      ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    },
  })
  if (config._tag === 'Left') throw new Error(config.left)
  const gateway = await startGateway(config.right, () => undefined)
  const serving = await serveHttp(gateway.newServer, { port: 0 })
  const loader = join(root, 'bench', '.load-sessions.mjs')
  writeFileSync(loader, LOAD)
  const child = spawn(process.execPath, [loader, serving.url, String(n)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    cwd: root,
  })
  let out = ''
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString()
  })
  const step = async (line: string, reply: string): Promise<void> => {
    out = ''
    child.stdin.write(line + '\n')
    while (!out.includes(reply)) {
      if (child.exitCode !== null) throw new Error(`the load process ended: ${out}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  const heap = (): number => {
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }
  try {
    // a first round warms what every session shares (code, caches), then is let go
    await step('open', 'done open')
    await step('list', 'done list')
    await step('close', 'done close')
    await new Promise((r) => setTimeout(r, 200))
    const empty = heap()
    await step('open', 'done open')
    const held = serving.sessions()
    const idle = (heap() - empty) / held
    await step('list', 'done list')
    const listed = (heap() - empty) / held
    await step('call', 'answered')
    const answered = Number(/answered (\d+)/.exec(out)?.[1] ?? 0)
    return [
      {
        name: "serve: memory per idle HTTP session (the gateway's heap)",
        value: idle / 1024,
        unit: 'KB',
        target: { op: '<=', value: 50 },
        note: `${held} sessions held`,
      },
      {
        name: 'serve: memory per HTTP session once it listed 28 tools of three upstreams',
        value: listed / 1024,
        unit: 'KB',
      },
      {
        name: `serve: ${n} concurrent HTTP sessions, each call answered`,
        value: answered / n,
        unit: 'ratio',
        target: { op: '>=', value: 1 },
      },
    ]
  } finally {
    child.kill()
    rmSync(loader, { force: true })
    await serving.close()
    await gateway.close()
  }
}

export const serveFigures = async (quick: boolean): Promise<ReadonlyArray<Figure>> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-bench-serve-'))
  try {
    return [
      ...(await latency(dir, quick ? 200 : 1000)),
      ...(await startUp(dir, quick ? 3 : 5)),
      ...(await sessions(dir, 200)),
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { render } = await import('./measure.js')
  for (const f of await serveFigures(process.argv.includes('--quick'))) console.log(render(f))
}
