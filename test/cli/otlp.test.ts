// `toolstack serve` and `toolstack proxy` export OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a receiver of
// our own on 127.0.0.1 decodes what the real exporters send (JSON, their default) and checks the spans, their
// warning events and the counters, from the built command driven by a real SDK client over stdio.
import { createServer } from 'node:http'
import type { IncomingHttpHeaders, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { until } from '../support/until.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js')

interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

// OTLP/JSON values, as the exporters write them
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number }
type KeyValue = { key: string; value: AnyValue }
const valueOf = (v: AnyValue): unknown =>
  v.stringValue ?? (v.intValue === undefined ? undefined : Number(v.intValue)) ?? v.boolValue ?? v.doubleValue
const attrs = (kvs: ReadonlyArray<KeyValue> | undefined): Record<string, unknown> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

interface Span {
  readonly name: string
  readonly attributes: Record<string, unknown>
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Record<string, unknown> }>
  readonly resource: Record<string, unknown>
}
interface Point {
  readonly metric: string
  readonly attributes: Record<string, unknown>
  readonly value: number
}

let received: Array<Received> = []
let server: Server
let endpoint = ''

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
      })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  received = []
})

const spans = (): Array<Span> =>
  received
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) =>
      (
        r.body as {
          resourceSpans: Array<{
            resource: { attributes: Array<KeyValue> }
            scopeSpans: Array<{
              spans: Array<{
                name: string
                attributes: Array<KeyValue>
                events?: Array<{ name: string; attributes: Array<KeyValue> }>
              }>
            }>
          }>
        }
      ).resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) =>
          ss.spans.map((s) => ({
            name: s.name,
            attributes: attrs(s.attributes),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
            resource: attrs(rs.resource.attributes),
          })),
        ),
      ),
    )

const points = (): Array<Point> =>
  received
    .filter((r) => r.path === '/v1/metrics')
    .flatMap((r) =>
      (
        r.body as {
          resourceMetrics: Array<{
            scopeMetrics: Array<{
              metrics: Array<{
                name: string
                sum?: { dataPoints: Array<{ attributes: Array<KeyValue>; asInt?: number | string; asDouble?: number }> }
              }>
            }>
          }>
        }
      ).resourceMetrics.flatMap((rm) =>
        rm.scopeMetrics.flatMap((sm) =>
          sm.metrics.flatMap((m) =>
            (m.sum?.dataPoints ?? []).map((p) => ({
              metric: m.name,
              attributes: attrs(p.attributes),
              value: Number(p.asInt ?? p.asDouble),
            })),
          ),
        ),
      ),
    )

const otelEnv = (): Record<string, string> => ({
  ...(process.env as Record<string, string>),
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_HEADERS: 'x-otlp-test=yes',
  OTEL_SERVICE_NAME: 'gateway-under-test',
})

const run = async (args: ReadonlyArray<string>, env: Record<string, string>, tool: string) => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [main, ...args], env, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (c: Buffer) => void (stderr += c.toString('utf8')))
  const client = new Client({ name: 'otlp-test', version: '1' })
  await client.connect(transport)
  await client.listTools()
  const call = (id: number, args: Record<string, unknown>) =>
    client.callTool({ name: tool, arguments: args }).then(() => id)
  await call(1, { message: 'hi', mesage: 1 })
  await call(2, { message: 'hi', mesage: 1, zz: 2 })
  await call(3, { message: 'hi' })
  await client.close()
  return () => stderr
}

describe('toolstack serve with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let dir = ''
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolstack-otlp-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))

  it('sends a span per tools/call with the warnings as events, and counts calls and warnings', async () => {
    const config = join(dir, 'toolstack.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
        rules: [{ tool: 'ev_*', decision: 'allow' }],
        log: join(dir, 'toolstack.jsonl'),
        listWaitMs: 30_000,
      }),
    )
    await run(['serve', '--config', config], otelEnv(), 'ev_echo')
    await until(
      () => spans().length >= 3 && points().some((p) => p.metric === 'toolstack.tool.calls'),
      40_000,
      'the export',
    )
    expect(received.every((r) => r.headers['x-otlp-test'] === 'yes')).toBe(true)
    expect(received.every((r) => String(r.headers['content-type']).startsWith('application/json'))).toBe(true)
    const calls = spans().filter((s) => s.name === 'execute_tool ev_echo')
    expect(calls).toHaveLength(3)
    for (const s of calls) {
      expect(s.resource['service.name']).toBe('gateway-under-test')
      expect(s.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'ev_echo',
        'toolstack.upstream': 'ev',
        'toolstack.outcome': 'ok',
      })
    }
    const ids = calls.map((s) => s.attributes['gen_ai.tool.call.id'])
    expect(new Set(ids).size).toBe(3)
    // the first call said `mesage`, the second only `zz` (each pair once), the third nothing
    const events = calls.map((s) => s.events.map((e) => e.attributes))
    expect(events).toContainEqual([
      {
        'gen_ai.tool.name': 'ev_echo',
        'gen_ai.tool.call.id': expect.any(String),
        'toolstack.key': 'mesage',
        'toolstack.did_you_mean': 'message',
      },
    ])
    expect(events).toContainEqual([
      { 'gen_ai.tool.name': 'ev_echo', 'gen_ai.tool.call.id': expect.any(String), 'toolstack.key': 'zz' },
    ])
    expect(events).toContainEqual([])
    for (const s of calls)
      for (const e of s.events) {
        expect(e.name).toBe('toolstack.unknown_key')
        expect(e.attributes['gen_ai.tool.call.id']).toBe(s.attributes['gen_ai.tool.call.id'])
      }
    const latest = (metric: string, a: Record<string, unknown>) =>
      points()
        .filter((p) => p.metric === metric && Object.entries(a).every(([k, v]) => p.attributes[k] === v))
        .at(-1)?.value
    expect(latest('toolstack.tool.calls', { 'gen_ai.tool.name': 'ev_echo', 'toolstack.outcome': 'ok' })).toBe(3)
    expect(latest('toolstack.unknown_key.warnings', { 'gen_ai.tool.name': 'ev_echo', 'toolstack.key': 'mesage' })).toBe(
      1,
    )
    expect(latest('toolstack.unknown_key.warnings', { 'gen_ai.tool.name': 'ev_echo', 'toolstack.key': 'zz' })).toBe(1)
  }, 90_000)
})

describe('toolstack proxy with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('sends each warning as a span with its events, and counts the warnings', async () => {
    // the SDK client's JSON-RPC ids: initialize 0, tools/list 1, the calls 2, 3 and 4
    await run(['proxy', '--', process.execPath, EVERYTHING, 'stdio'], otelEnv(), 'echo')
    await until(() => spans().length >= 2 && points().length > 0, 40_000, 'the export')
    const said = spans().map((s) => [s.name, s.resource['service.name'], s.events.map((e) => [e.name, e.attributes])])
    expect(said).toEqual([
      [
        'execute_tool echo',
        'gateway-under-test',
        [
          [
            'toolstack.unknown_key',
            {
              'gen_ai.tool.name': 'echo',
              'gen_ai.tool.call.id': '2',
              'toolstack.key': 'mesage',
              'toolstack.did_you_mean': 'message',
            },
          ],
        ],
      ],
      [
        'execute_tool echo',
        'gateway-under-test',
        [['toolstack.unknown_key', { 'gen_ai.tool.name': 'echo', 'gen_ai.tool.call.id': '3', 'toolstack.key': 'zz' }]],
      ],
    ])
    expect(
      points()
        .filter((p) => p.metric === 'toolstack.unknown_key.warnings')
        .map((p) => [p.attributes['toolstack.key'], p.value]),
    ).toEqual([
      ['mesage', 1],
      ['zz', 1],
    ])
  }, 90_000)

  it('cuts what a model chose: a key of 5,000 characters is exported as 256 and an ellipsis', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main, 'proxy', '--', process.execPath, EVERYTHING, 'stdio'],
      env: otelEnv(),
    })
    const client = new Client({ name: 'otlp-test', version: '1' })
    await client.connect(transport)
    await client.listTools()
    const long = 'k'.repeat(5000)
    await client.callTool({ name: 'echo', arguments: { message: 'hi', [long]: 1 } })
    await client.close()
    await until(() => spans().length >= 1 && points().length > 0, 40_000, 'the export')
    const key = spans()[0]?.events[0]?.attributes['toolstack.key']
    expect(key).toBe(`${'k'.repeat(256)}…`)
    expect(points().map((p) => p.attributes['toolstack.key'])).toEqual([key])
  }, 90_000)

  it('without an endpoint, exports nothing and says nothing about OpenTelemetry', async () => {
    const env = { ...(process.env as Record<string, string>) }
    delete env['OTEL_EXPORTER_OTLP_ENDPOINT']
    const stderr = await run(['proxy', '--', process.execPath, EVERYTHING, 'stdio'], env, 'echo')
    await new Promise((r) => setTimeout(r, 500))
    expect(received).toEqual([])
    expect(stderr()).not.toMatch(/OpenTelemetry|OTEL/)
  }, 90_000)
})

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set and no OpenTelemetry installed', () => {
  it('names the packages to install, and the proxy forwards as ever', () => {
    // the built package installed alone, with only its own dependencies beside it
    const dir = mkdtempSync(join(tmpdir(), 'toolstack-nootel-'))
    try {
      const pkg = join(dir, 'node_modules', 'toolstack')
      mkdirSync(pkg, { recursive: true })
      cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true })
      cpSync(join(root, 'package.json'), join(pkg, 'package.json'))
      for (const dep of ['commander', 'fp-ts', 'io-ts'])
        symlinkSync(join(root, 'node_modules', dep), join(dir, 'node_modules', dep))
      const whoami = join(root, 'test', 'mcp', 'fixtures', 'whoami-server.mjs')
      const init = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }
      const r = spawnSync(
        process.execPath,
        [join(pkg, 'dist/esm/cli/main.js'), 'proxy', '--', process.execPath, whoami],
        {
          cwd: dir,
          input: JSON.stringify(init) + '\n',
          encoding: 'utf8',
          timeout: 30_000,
          env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
        },
      )
      expect(r.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT is set, but the OpenTelemetry SDK could not be loaded')
      for (const p of [
        '@opentelemetry/api',
        '@opentelemetry/sdk-trace-base',
        '@opentelemetry/exporter-trace-otlp-http',
        '@opentelemetry/exporter-metrics-otlp-http',
      ])
        expect(r.stderr).toContain(p)
      // the command that installs them, for a local and for a global toolstack
      expect(r.stderr).toMatch(
        /install it: npm install @opentelemetry\/api .* \(with a global toolstack: npm install -g @opentelemetry\/api /,
      )
      expect(JSON.parse(r.stdout.split('\n')[0] ?? '')).toMatchObject({
        id: 0,
        result: { serverInfo: { name: 'whoami' } },
      })
      expect(r.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
    }
  }, 60_000)
})

describe('startOtlp in process', () => {
  it('a warning that comes after its call has ended goes out on a span of its own, never on a later call with that id', async () => {
    const { startOtlp } = await import('../../src/cli/otlp.js')
    // the SDK's exporters read the process's environment, as in the command
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_METRIC_EXPORT_INTERVAL: '-1' }
    Object.assign(process.env, env)
    const otlp = (() => {
      try {
        return startOtlp(process.env, { traces: ['otlp'], metrics: true }, 'toolstack-test', '0.0.0')
      } finally {
        for (const k of Object.keys(env)) delete process.env[k]
      }
    })()
    const call = {
      type: 'call',
      upstream: 'up',
      tool: 'fs_read',
      listed: true,
      id: 'mcp_2_0',
      outcome: 'ok',
      ms: 1,
    } as const
    otlp.record(call)
    // with a store, the warning is recorded once its pair is claimed: after its call's record
    otlp.record({
      type: 'warning',
      upstream: 'up',
      tool: 'fs_read',
      keys: [],
      id: 'mcp_2_0',
      unknownKeys: ['late'],
      declaredKeys: ['path'],
      suggestions: [],
    })
    otlp.record(call)
    await otlp.shutdown()
    const read = spans().filter((s) => s.name === 'execute_tool fs_read')
    expect(read).toHaveLength(3)
    const withEvents = read.filter((s) => s.events.length > 0)
    expect(withEvents).toHaveLength(1)
    expect(withEvents[0]?.attributes['toolstack.outcome']).toBeUndefined()
    expect(withEvents[0]?.events.map((e) => e.attributes['toolstack.key'])).toEqual(['late'])
    // an interval the SDK would refuse (-1) fell back to its default: the export ran
    expect(points().some((p) => p.metric === 'toolstack.tool.calls')).toBe(true)
  })

  it('a definition that changed is a span of its own with what changed, and is counted by what follows', async () => {
    const { startOtlp } = await import('../../src/cli/otlp.js')
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }
    Object.assign(process.env, env)
    const otlp = (() => {
      try {
        return startOtlp(process.env, { traces: ['otlp'], metrics: true }, 'toolstack-test', '0.0.0')
      } finally {
        for (const k of Object.keys(env)) delete process.env[k]
      }
    })()
    const hash = `sha256:${'2'.repeat(64)}`
    otlp.record({
      type: 'definition',
      _tag: 'DefinitionChanged',
      upstream: 'rg',
      tool: 'rg_notes_write',
      pinned: `sha256:${'1'.repeat(64)}`,
      hash,
      change: { added: ['mode'], removed: [], more: 0, schemaOtherwise: false, annotations: [] },
      flags: [],
      action: 'hold',
    })
    await otlp.shutdown()
    const said = spans().filter((s) => s.name === 'toolstack.definition rg_notes_write')
    expect(said).toHaveLength(1)
    expect(said[0]?.attributes).toMatchObject({
      'gen_ai.tool.name': 'rg_notes_write',
      'toolstack.upstream': 'rg',
      'toolstack.definition.hash': hash,
      'toolstack.definition.action': 'hold',
      'toolstack.definition.change': 'schema: keys added: mode',
    })
    expect(points().some((p) => p.metric === 'toolstack.definition.changes')).toBe(true)
  })
})

// a port of 127.0.0.1 nothing listens on: taken, then let go
const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port
      s.close(() => resolve(port))
    })
  })

describe('a collector that refuses connections', () => {
  it('costs the exit no wait for the exporter’s retries (it cost 5 s)', async () => {
    const { startOtlp } = await import('../../src/cli/otlp.js')
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}` }
    Object.assign(process.env, env)
    const otlp = (() => {
      try {
        return startOtlp(process.env, { traces: ['otlp'], metrics: true }, 'toolstack-test', '0.0.0')
      } finally {
        for (const k of Object.keys(env)) delete process.env[k]
      }
    })()
    otlp.record({ type: 'call', upstream: 'up', tool: 'fs_read', listed: true, id: '1', outcome: 'ok', ms: 1 })
    const started = Date.now()
    await otlp.shutdown()
    // the event waited on is the shutdown itself; the bound is generous (the probe gives up after 0.5 s)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('the command exits at once when its host leaves, whatever the collector', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolstack-otlp-'))
    try {
      const config = join(dir, 'toolstack.json')
      writeFileSync(
        config,
        JSON.stringify({ mcpServers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
      )
      const env = { ...otelEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}` }
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, 'serve', '--config', config],
        env,
        stderr: 'pipe',
      })
      const client = new Client({ name: 'otlp-test', version: '1' })
      await client.connect(transport)
      await client.callTool({ name: 'ev_echo', arguments: { message: 'hi' } })
      const pid = transport.pid as number
      const exited = new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          try {
            process.kill(pid, 0)
          } catch {
            clearInterval(poll)
            resolve()
          }
        }, 20)
      })
      const started = Date.now()
      // the host closes its end: the gateway stops its upstream and exports what it holds
      await transport.close()
      await exited
      expect(Date.now() - started).toBeLessThan(4_000)
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
    }
  }, 60_000)
})

describe('OTEL_TRACES_EXPORTER', () => {
  it('console: each span on stderr, as the SDK’s console exporter shows it, escaped; stdout stays the MCP channel', async () => {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), OTEL_TRACES_EXPORTER: 'console' }
    delete env['OTEL_EXPORTER_OTLP_ENDPOINT']
    const stderr = await run(['proxy', '--', process.execPath, EVERYTHING, 'stdio'], env, 'echo')
    await until(() => /name: 'execute_tool echo'/.test(stderr()))
    // the calls worked (run made them over stdout), the spans are where they belong, and nothing left for a collector
    expect(stderr()).toMatch(/toolstack\.unknown_key/)
    expect(stderr()).toMatch(/'toolstack\.key': 'mesage'/)
    expect(stderr()).toMatch(/'service\.name': 'toolstack-proxy'/)
    expect(received).toEqual([])
  }, 90_000)

  it('none: no span is sent, the counters still are; a name it has no exporter for is said and ignored', async () => {
    const env = {
      ...otelEnv(),
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'otlp,prometheus',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
    }
    const stderr = await run(['proxy', '--', process.execPath, EVERYTHING, 'stdio'], env, 'echo')
    await until(() => points().length > 0, 40_000, 'the export')
    await new Promise((r) => setTimeout(r, 500))
    expect(spans()).toEqual([])
    expect(stderr()).toContain('OTEL_METRICS_EXPORTER=prometheus: not an exporter this command has')
  }, 90_000)
})

describe('OTEL_TRACES_EXPORTER=console in process', () => {
  it('writes each span where it is told (stderr in the command), every line escaped, a hostile name cut', async () => {
    const { startOtlp } = await import('../../src/cli/otlp.js')
    const written: Array<string> = []
    const otlp = startOtlp(process.env, { traces: ['console'], metrics: false }, 'toolstack-test', '0.0.0', (t) => {
      written.push(t)
    })
    const tool = 'fs_read\u001b]0;owned\u0007\u202e\u2028' + 'x'.repeat(5000)
    otlp.record({ type: 'call', upstream: 'up', tool, listed: true, id: 'c\u009b1', outcome: 'ok', ms: 3 })
    await otlp.shutdown()
    const text = written.join('')
    expect(text).toMatch(/name: 'execute_tool fs_read\\x1B\]0;owned\\x07\\u202e\\u2028x+…'/)
    expect(text).toMatch(/'toolstack\.outcome': 'ok'/)
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u202e]/)
    expect(text.length).toBeLessThan(3_000)
  })
})
