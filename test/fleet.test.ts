// docs/fleet.md's configuration blocks agree with each other and with the gateway: the balancer sticks
// sessions by the header the gateway names them with and probes its readiness; the collector receives where
// the replicas export. The replicas' command line is run by test/cli/serve-fleet.test.ts, and the redis-cli
// lines by test/gateway/redisStore.test.ts.
import { describe, expect, it } from 'vitest'
import { blocksOf } from './support/blocks.js'

const fleetBlocks = (lang: string): Array<string> => blocksOf('docs/fleet.md', lang)
const replicas = (): string => fleetBlocks('sh')[0] ?? ''
const exported = (name: string): string | undefined => new RegExp(`^export ${name}=(.*)$`, 'm').exec(replicas())?.[1]

describe('docs/fleet.md', () => {
  it('the balancer sticks a session to the replica that named it, and probes /readyz on the replicas’ port', () => {
    const [haproxy = ''] = fleetBlocks('haproxy')
    const lines = haproxy.split('\n').map((l) => l.trim())
    // learnt from the response that opens the session, matched on every request after
    expect(lines).toContain('stick store-response res.hdr(mcp-session-id)')
    expect(lines).toContain('stick match req.hdr(mcp-session-id)')
    expect(lines).toContain('option httpchk GET /readyz')
    // a session id is a UUID: 36 characters fit the table's keys
    expect(Number(/stick-table type string len (\d+)/.exec(haproxy)?.[1])).toBeGreaterThanOrEqual(36)
    // a stuck entry lives as long as an idle session (serveHttp's default idle timeout)
    expect(/expire 30m\b/.test(haproxy)).toBe(true)
    const port = /--http [^\s:]+:(\d+)/.exec(replicas())?.[1]
    const servers = lines.filter((l) => l.startsWith('server '))
    expect(servers.length).toBeGreaterThanOrEqual(2)
    for (const s of servers) expect(s).toMatch(new RegExp(`^server \\w+ [\\d.]+:${port} check$`))

    // a complete file: a frontend hosts reach, whose address is the one the replicas accept as Host
    expect(lines).toContain('default_backend toolstack')
    const bind = /^bind :(\d+)$/m.exec(lines.join('\n'))?.[1]
    expect(/--allowed-host ([\w.-]+):(\d+)/.exec(replicas())?.[2]).toBe(bind)
    // the install step names the optional peer a redis:// store loads
    expect(replicas()).toMatch(/^npm install -g toolstack redis$/m)
  })

  it('the collector receives OTLP/HTTP where the replicas export, into every pipeline', () => {
    const [yaml = ''] = fleetBlocks('yaml')
    const endpoint = new URL(exported('OTEL_EXPORTER_OTLP_ENDPOINT') ?? '')
    expect(endpoint.protocol).toBe('http:')
    expect(yaml).toMatch(new RegExp(`^ {4}protocols:\\n {6}http:\\n {8}endpoint: 0\\.0\\.0\\.0:${endpoint.port}$`, 'm'))
    // what the commands export (src/cli/otlp.ts): spans with the warnings as events, and counters
    for (const signal of ['traces', 'metrics'])
      expect(yaml).toMatch(new RegExp(`^ {4}${signal}:\\n {6}receivers: \\[otlp\\]\\n {6}exporters: \\[debug\\]$`, 'm'))
    expect(yaml).toMatch(/^exporters:\n {2}debug: \{\}$/m)
  })

  it('every replica names itself, and the redis-cli lines use the store URL’s prefix', () => {
    expect(exported('OTEL_RESOURCE_ATTRIBUTES')).toMatch(/^service\.instance\.id=[\w-]+$/)
    expect(exported('TOOLSTACK_TOKEN')).toBeDefined()
    const url = /--store '([^']+)'/.exec(replicas())?.[1] ?? ''
    const prefix = new URL(url).searchParams.get('prefix')
    const cli = fleetBlocks('sh').find((b) => /^redis-cli /m.test(b)) ?? ''
    const keys = [...cli.matchAll(/^redis-cli \w+ (\S+)$/gm)].map((m) => m[1])
    expect(keys.length).toBe(3)
    for (const k of keys) expect(k?.startsWith(prefix ?? '?')).toBe(true)
  })
})
