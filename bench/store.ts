// `toolstack serve --http --store redis://…` beside the same gateway with the default memory store, measured
// side by side in one run against a real redis-server the bench starts: the latency a tools/call gains. Each
// call carries an undeclared key, so every call is counted and the first one claims its pair: the store's
// whole write path runs, off the call's path. Skipped, saying so, when redis-server is not on PATH.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { fetchWithOwnSignal } from '../src/mcp/fetch.js'
import type { Figure } from './measure.js'
import { median } from './measure.js'
import type { Started } from './peers.js'
import { echoConfig, endGroup, freePorts, startGroup, strays, untilListening } from './peers.js'
import type { RedisServer } from '../test/support/redis.js'
import { hasRedisServer, startRedis } from '../test/support/redis.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const MAIN = join(root, 'dist/esm/cli/main.js')

export const storeFigures = async (quick: boolean): Promise<ReadonlyArray<Figure>> => {
  if (!hasRedisServer()) {
    console.log('  (skipped: redis-server is not on PATH, so the --store redis:// figure is not measured)')
    return []
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-bench-store-'))
  let redis: RedisServer | undefined
  const started: Array<Started> = []
  const clients: Array<Client> = []
  try {
    redis = await startRedis()
    const { config } = echoConfig(dir)
    const ports = await freePorts(2)
    const stores: ReadonlyArray<ReadonlyArray<string>> = [[], ['--store', `${redis.url}?prefix=bench:`]]
    for (const [i, extra] of stores.entries())
      started.push(
        startGroup(process.execPath, [MAIN, 'serve', '--config', config, '--http', `127.0.0.1:${ports[i]}`, ...extra]),
      )
    await Promise.all(started.map((s, i) => untilListening(s, ports[i] as number, `serve ${i}`)))
    for (const port of ports) {
      const client = new Client({ name: 'bench', version: '1' })
      // 4,400 calls on one connection: the SDK's one signal would warn at every call past 1,500 (docs/mcp.md)
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { fetch: fetchWithOwnSignal() }),
      )
      clients.push(client)
      await client.listTools()
    }
    const [memory, shared] = clients as [Client, Client]
    const once = async (client: Client, n: number): Promise<number> => {
      const t0 = process.hrtime.bigint()
      const r = await client.callTool({ name: 'ec_ping', arguments: { n, undeclared: true } })
      if (r.isError === true) throw new Error(`ec_ping failed: ${JSON.stringify(r.content)}`)
      return Number(process.hrtime.bigint() - t0) / 1000
    }
    // pairs of calls, each gateway first in turn: the difference within a pair, whose median is the figure,
    // is shaken less by a busy machine than the difference of two medians
    const calls = quick ? 200 : 2000
    const warm = quick ? 50 : 200
    const added: Array<number> = []
    const times: [Array<number>, Array<number>] = [[], []]
    for (let i = 0; i < warm + calls; i++) {
      const first = i % 2 === 0
      const a = first ? await once(memory, i) : 0
      const b = await once(shared, i)
      const m = first ? a : await once(memory, i)
      if (i < warm) continue
      added.push(b - m)
      times[0].push(m)
      times[1].push(b)
    }
    return [
      {
        name: 'serve --http --store redis://: latency added per tools/call over the memory store',
        value: median(added),
        unit: 'µs',
        target: { op: '<=', value: 50 },
        note: `memory ${median(times[0]).toFixed(0)} µs, redis ${median(times[1]).toFixed(0)} µs (medians of ${calls} calls each, in interleaved pairs; each call counted, off the call's path)`,
      },
    ]
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)))
    await Promise.all(started.map((s) => endGroup(s.child)))
    const left = strays(dir)
    if (left > 0) console.error(`store: ${left} processes of this run outlived their gateway, killed`)
    await redis?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { render } = await import('./measure.js')
  for (const f of await storeFigures(process.argv.includes('--quick'))) console.log(render(f))
}
