// `toolstack serve --http` (resumable streams, as by default, and with --no-resume) beside the npm
// peers hosts already run, `mcp-proxy` and `supergateway`, each relaying the same upstream (the echo
// fixture's `ping`) to the same SDK client over Streamable HTTP: the latency of one tools/call, calls
// one at a time and each gateway first in turn, and the calls per second of 8 clients at once, the
// gateways measured in turn in rotating blocks. toolstack runs with the audit, reasons and a policy on
// (a rule allows the tool); the peers only relay.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import type { Server } from 'node:net'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Figure } from './measure.js'
import { median } from './measure.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const MAIN = join(root, 'dist/esm/cli/main.js')
const ECHO = join(root, 'test/mcp/fixtures/flaky-server.mjs')
const MCP_PROXY = join(root, 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs')
const SUPERGATEWAY = join(root, 'node_modules/supergateway/dist/index.js')

// -------------------------------------------------------------------------------------
// processes
// -------------------------------------------------------------------------------------

const bound = (): Promise<Server> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => resolve(s))
  })

/** `n` distinct free ports on loopback: each bound on 0 (all at once, so none is handed out twice), read, let go. */
export const freePorts = async (n: number): Promise<ReadonlyArray<number>> => {
  const servers = await Promise.all(Array.from({ length: n }, bound))
  const ports = servers.map((s) => {
    const address = s.address()
    return typeof address === 'object' && address !== null ? address.port : 0
  })
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  return ports
}

export interface Started {
  readonly child: ChildProcess
  /** The last lines it wrote to stderr, for a message when it fails. */
  readonly tail: () => string
}

/** Starts a command as the leader of a process group of its own, so it ends with everything it started. */
export const startGroup = (command: string, args: ReadonlyArray<string>): Started => {
  const child = spawn(command, [...args], { detached: true, stdio: ['ignore', 'ignore', 'pipe'], cwd: root })
  let tail = ''
  child.stderr?.on('data', (b: Buffer) => {
    tail = (tail + b.toString()).slice(-2000)
  })
  return { child, tail: () => tail }
}

const exited = (child: ChildProcess, ms: number): Promise<boolean> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(true)
    : new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms)
        child.once('exit', () => {
          clearTimeout(timer)
          resolve(true)
        })
      })

/** SIGTERM to the group, a grace, then SIGKILL to the group (a leader gone may leave members behind). */
export const endGroup = async (child: ChildProcess): Promise<void> => {
  const pid = child.pid
  if (pid === undefined) return
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(-pid, s)
    } catch {
      // the group is gone
    }
  }
  signal('SIGTERM')
  await exited(child, 3000)
  signal('SIGKILL')
}

/** Processes whose command line mentions `marker` (a path unique to this run); SIGKILLs them, returns how many. */
export const strays = (marker: string): number => {
  let n = 0
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) {
        n++
        process.kill(Number(pid), 'SIGKILL')
      }
    } catch {
      // it ended meanwhile, or it is not ours to read
    }
  }
  return n
}

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })

/** Waits until `port` accepts connections, or throws with the process's stderr. */
export const untilListening = async (p: Started, port: number, name: string, ms = 20_000): Promise<void> => {
  const until = Date.now() + ms
  while (!(await listening(port))) {
    if (p.child.exitCode !== null || Date.now() > until) throw new Error(`${name} did not start: ${p.tail()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

// the CPU time a process has used, in ms (utime + stime, fields 14 and 15 of /proc/PID/stat, in ticks of 10 ms)
const cpuMs = (pid: number | undefined): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
  }
}

const connectHttp = async (url: string): Promise<Client> => {
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  return client
}

// -------------------------------------------------------------------------------------
// the gateways
// -------------------------------------------------------------------------------------

interface Gateway {
  readonly name: string
  readonly tool: string
  readonly url: string
  readonly started: Started
}

/**
 * Writes in `dir` a gateway configuration over the echo fixture (`ec_ping`, allowed by a rule); returns its
 * path and the fixture's marker argument. The marker exists, so the fixture serves at once; it names this
 * run's directory, so a process this run left behind can be found.
 */
export const echoConfig = (dir: string): { readonly config: string; readonly marker: string } => {
  const marker = join(dir, 'marker')
  writeFileSync(marker, 'serve')
  const config = join(dir, 'toolstack.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { echo: { command: process.execPath, args: [ECHO, marker], prefix: 'ec' } },
      rules: [{ tool: 'ec_ping', decision: 'allow' }],
    }),
  )
  return { config, marker }
}

// each started gateway is pushed on `into` at once, so a failed start still ends them all
const startAll = async (dir: string, into: Array<Gateway>): Promise<void> => {
  const { config, marker } = echoConfig(dir)
  const [a, b, c, d] = (await freePorts(4)) as [number, number, number, number]
  const gateways: ReadonlyArray<Gateway> = [
    {
      name: 'toolstack',
      tool: 'ec_ping',
      url: `http://127.0.0.1:${a}/mcp`,
      started: startGroup(process.execPath, [MAIN, 'serve', '--config', config, '--http', `127.0.0.1:${a}`]),
    },
    {
      // streams a host cannot resume, as supergateway's (mcp-proxy's are resumable, as toolstack's by default)
      name: 'toolstack --no-resume',
      tool: 'ec_ping',
      url: `http://127.0.0.1:${d}/mcp`,
      started: startGroup(process.execPath, [
        MAIN,
        'serve',
        '--config',
        config,
        '--http',
        `127.0.0.1:${d}`,
        '--no-resume',
      ]),
    },
    {
      name: 'mcp-proxy',
      tool: 'ping',
      url: `http://127.0.0.1:${b}/mcp`,
      started: startGroup(process.execPath, [
        MCP_PROXY,
        '--host',
        '127.0.0.1',
        '--port',
        String(b),
        '--server',
        'stream',
        '--',
        process.execPath,
        ECHO,
        marker,
      ]),
    },
    {
      // --stateful: without it supergateway starts an upstream for every request
      name: 'supergateway',
      tool: 'ping',
      url: `http://127.0.0.1:${c}/mcp`,
      started: startGroup(process.execPath, [
        SUPERGATEWAY,
        '--stdio',
        `${process.execPath} ${ECHO} ${marker}`,
        '--outputTransport',
        'streamableHttp',
        '--stateful',
        '--port',
        String(c),
        '--logLevel',
        'none',
      ]),
    },
  ]
  into.push(...gateways)
  await Promise.all(gateways.map((g, i) => untilListening(g.started, [a, d, b, c][i] as number, g.name)))
}

// -------------------------------------------------------------------------------------
// figures
// -------------------------------------------------------------------------------------

const CONCURRENT = 8

const callOnce = async (client: Client, tool: string, n: number): Promise<void> => {
  const r = await client.callTool({ name: tool, arguments: { n } })
  if (r.isError === true) throw new Error(`${tool} failed: ${JSON.stringify(r.content)}`)
}

export const peerFigures = async (quick: boolean): Promise<ReadonlyArray<Figure>> => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-bench-peers-'))
  const gateways: Array<Gateway> = []
  const clients: Array<Array<Client>> = []
  try {
    await startAll(dir, gateways)
    for (const g of gateways) {
      const cs: Array<Client> = []
      clients.push(cs)
      await Promise.all(Array.from({ length: CONCURRENT }, async () => cs.push(await connectHttp(g.url))))
      await (cs[0] as Client).listTools()
    }
    const k = gateways.length

    // 1. one call at a time, each gateway first in turn, so none waits on another
    const calls = quick ? 100 : 1000
    const warm = quick ? 20 : 50
    const times: Array<Array<number>> = gateways.map(() => [])
    for (let i = 0; i < warm + calls; i++) {
      for (let j = 0; j < k; j++) {
        const g = (i + j) % k
        const t0 = process.hrtime.bigint()
        await callOnce((clients[g] as Array<Client>)[0] as Client, (gateways[g] as Gateway).tool, i)
        if (i >= warm) (times[g] as Array<number>).push(Number(process.hrtime.bigint() - t0) / 1000)
      }
    }
    const latency = times.map(median)

    // 2. 8 clients calling as fast as each is answered, for a fixed time; the gateways in turn, in blocks
    // whose order rotates, so a slow moment of the machine does not fall on one gateway only
    const blocks = quick ? 3 : 5
    const blockMs = quick ? 600 : 2000
    const rates: Array<Array<number>> = gateways.map(() => [])
    // the gateway process's own CPU per call (its upstreams not counted): less shaken by a busy machine than
    // the wall clock, so it says which gateway does more work per call
    const cpu = gateways.map(() => ({ ms: 0, calls: 0 }))
    const block = async (g: number, ms: number): Promise<number> => {
      const pid = (gateways[g] as Gateway).started.child.pid
      const cpu0 = cpuMs(pid)
      const until = Date.now() + ms
      const t0 = process.hrtime.bigint()
      const counts = await Promise.all(
        (clients[g] as Array<Client>).map(async (c, i) => {
          let n = 0
          while (Date.now() < until) await callOnce(c, (gateways[g] as Gateway).tool, i * 1e6 + n++)
          return n
        }),
      )
      const n = counts.reduce((a, b) => a + b, 0)
      const used = cpu[g] as { ms: number; calls: number }
      used.ms += cpuMs(pid) - cpu0
      used.calls += n
      return n / (Number(process.hrtime.bigint() - t0) / 1e9)
    }
    for (let g = 0; g < k; g++) await block(g, 200) // warm-up
    for (const c of cpu) Object.assign(c, { ms: 0, calls: 0 })
    for (let b = 0; b < blocks; b++) {
      for (let j = 0; j < k; j++) {
        const g = (b + j) % k
        ;(rates[g] as Array<number>).push(await block(g, blockMs))
      }
    }
    const rate = rates.map(median)

    const [ts, plain, ...peers] = gateways.map((g, i) => ({
      name: g.name,
      latency: latency[i] as number,
      rate: rate[i] as number,
      cpu: (cpu[i] as { ms: number; calls: number }).ms / Math.max(1, (cpu[i] as { ms: number; calls: number }).calls),
    }))
    const fastest = peers.reduce((a, b) => (b.latency < a.latency ? b : a))
    const busiest = peers.reduce((a, b) => (b.rate > a.rate ? b : a))
    const self = ts as { readonly latency: number; readonly rate: number }
    const each = (f: (x: NonNullable<typeof ts>) => string): string =>
      [ts, plain, ...peers].map((x) => x !== undefined && f(x)).join(', ')
    return [
      {
        // the target: within 10 % of the faster peer (the maintainers' answer to a closing note)
        name: 'serve --http: median tools/call latency (audit, reasons, policy on), within 10 % of the faster npm peer',
        value: self.latency,
        unit: 'µs',
        target: { op: '<=', value: Math.round(fastest.latency * 1.1) },
        note: `${each((x) => `${x.name} ${x.latency.toFixed(0)} µs`)} (median of ${calls}, interleaved)`,
      },
      {
        name: 'serve --http --no-resume: the same latency, within 10 % of the faster npm peer',
        value: (plain as { readonly latency: number }).latency,
        unit: 'µs',
        target: { op: '<=', value: Math.round(fastest.latency * 1.1) },
        note: 'no priming event and no event kept, as supergateway',
      },
      {
        name: `serve --http: tools/call per second, ${CONCURRENT} clients at once, vs the busier npm peer`,
        value: self.rate,
        unit: 'calls/s',
        target: { op: '>=', value: Math.round(busiest.rate) },
        note: `${each((x) => `${x.name} ${x.rate.toFixed(0)}/s`)} (median of ${blocks} blocks of ${blockMs} ms each); the gateway process's CPU per call: ${each((x) => `${x.name} ${(x.cpu * 1000).toFixed(0)} µs`)}`,
      },
    ]
  } finally {
    await Promise.all(clients.flat().map((c) => c.close().catch(() => undefined)))
    await Promise.all(gateways.map((g) => endGroup(g.started.child)))
    const left = strays(dir)
    if (left > 0) console.error(`peers: ${left} processes of this run outlived their gateway, killed`)
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { render } = await import('./measure.js')
  for (const f of await peerFigures(process.argv.includes('--quick'))) console.log(render(f))
}
