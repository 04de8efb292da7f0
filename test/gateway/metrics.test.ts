// A gateway's metrics as a fold over its records: records in, values read back through the registry and the
// text a scrape gives; the label bounds whatever names and keys a model sends.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GatewayMetrics, GatewayRecord } from '../../src/gateway/index.js'
import { gatewayMetrics } from '../../src/gateway/index.js'

type Labels = Readonly<Record<string, string | number>>

/** The metric's series (the histogram's `_count` ones), each as its labels and value. */
const series = async (m: GatewayMetrics, name: string): Promise<ReadonlyArray<readonly [Labels, number]>> => {
  const metric = m.registry.getSingleMetric(name)
  if (metric === undefined) throw new Error(`no metric ${name}`)
  const { values } = await metric.get()
  return values
    .filter((v) => !('metricName' in v) || v.metricName === undefined || v.metricName === `${name}_count`)
    .map((v) => [v.labels as Labels, v.value] as const)
}

const call = (tool: string, outcome: 'ok' | 'error' | 'refused', over: Partial<GatewayRecord> = {}): GatewayRecord =>
  ({ type: 'call', upstream: 'fs', tool, listed: true, id: '1', outcome, ms: 20, ...over }) as GatewayRecord

const warning = (tool: string, unknownKeys: ReadonlyArray<string>): GatewayRecord => ({
  type: 'warning',
  upstream: 'fs',
  tool,
  unknownKeys,
  keys: [],
  declaredKeys: ['path'],
  id: '1',
  suggestions: [],
})

describe('gatewayMetrics: the fold', () => {
  it('counts definitions changed by what follows, and flagged ones, by upstream only (a server names its tools)', async () => {
    const m = await gatewayMetrics()
    const hash = `sha256:${'1'.repeat(64)}`
    const change = { added: ['mode'], removed: [], more: 0, schemaOtherwise: false, annotations: [] }
    const changed = (tool: string, action: 'warn' | 'hold'): GatewayRecord => ({
      type: 'definition',
      _tag: 'DefinitionChanged',
      upstream: 'rg',
      tool,
      pinned: hash,
      hash,
      change,
      flags: [],
      action,
    })
    m.record(changed('rg_a\u202e', 'warn'))
    m.record(changed('rg_b', 'warn'))
    m.record(changed('rg_c', 'hold'))
    m.record({ type: 'definition', _tag: 'DefinitionFlagged', upstream: 'rg', tool: 'rg_d', hash, flags: [] })
    expect(await series(m, 'toolstack_definition_changes_total')).toEqual([
      [{ upstream: 'rg', action: 'warn' }, 2],
      [{ upstream: 'rg', action: 'hold' }, 1],
      [{ upstream: 'rg', action: 'flagged' }, 1],
    ])
  })

  it('counts calls by upstream, tool and outcome, and times them by upstream and tool', async () => {
    const m = await gatewayMetrics()
    for (const r of [
      call('fs_read', 'ok'),
      call('fs_read', 'ok', { ms: 2_000 }),
      call('fs_read', 'error'),
      call('fs_move', 'refused'),
    ])
      m.record(r)
    expect(await series(m, 'toolstack_calls_total')).toStrictEqual([
      [{ upstream: 'fs', tool: 'fs_read', outcome: 'ok' }, 2],
      [{ upstream: 'fs', tool: 'fs_read', outcome: 'error' }, 1],
      [{ upstream: 'fs', tool: 'fs_move', outcome: 'refused' }, 1],
    ])
    expect(await series(m, 'toolstack_call_duration_seconds')).toStrictEqual([
      [{ upstream: 'fs', tool: 'fs_read' }, 3],
      [{ upstream: 'fs', tool: 'fs_move' }, 1],
    ])
    const text = await m.registry.getSingleMetricAsString('toolstack_call_duration_seconds')
    expect(text).toContain('toolstack_call_duration_seconds_sum{upstream="fs",tool="fs_read"} 2.04')
    expect(text).toContain('toolstack_call_duration_seconds_bucket{le="0.025",upstream="fs",tool="fs_read"} 2')
  })

  it('labels a tool the session was not listed (unknown), whatever its name', async () => {
    const m = await gatewayMetrics()
    m.record(call('fs_nope', 'refused', { listed: false }))
    m.record(call('\u001b]0;pwned\u0007', 'refused', { listed: false, upstream: '' }))
    expect(await series(m, 'toolstack_calls_total')).toStrictEqual([
      [{ upstream: 'fs', tool: '(unknown)', outcome: 'refused' }, 1],
      [{ upstream: '', tool: '(unknown)', outcome: 'refused' }, 1],
    ])
  })

  it('counts each undeclared key of a warning by tool and key; questions by answer; restarts by upstream', async () => {
    const m = await gatewayMetrics()
    m.record(warning('fs_read', ['haed', 'opts.encodng']))
    m.record(warning('fs_read', ['haed']))
    const decision = (by: string, outcome: string, refusal?: string): GatewayRecord =>
      ({ type: 'decision', upstream: 'fs', tool: 'fs_write', id: '1', by, outcome, refusal }) as GatewayRecord
    for (const d of [
      decision('human', 'allowed'),
      decision('human', 'allowed'),
      decision('human', 'refused', 'DeclinedByUser'),
      decision('human', 'refused', 'AskFailed'),
      decision('nobody', 'refused', 'NoOneToAsk'),
      // not questions
      decision('rules', 'allowed'),
      decision('rules', 'refused', 'DeniedByRule'),
      decision('grant', 'allowed'),
    ])
      m.record(d)
    m.record({ type: 'upstream', _tag: 'Restarting', upstream: 'fs', inMs: 500 })
    m.record({ type: 'upstream', _tag: 'Restarting', upstream: 'fs', inMs: 1000 })
    m.record({ type: 'upstream', _tag: 'Failed', upstream: 'fs', error: 'boom' })
    m.record({ type: 'diagnostic', message: 'nothing to count' })
    expect(await series(m, 'toolstack_undeclared_keys_total')).toStrictEqual([
      [{ tool: 'fs_read', key: 'haed' }, 2],
      [{ tool: 'fs_read', key: 'opts.encodng' }, 1],
    ])
    expect(await series(m, 'toolstack_questions_total')).toStrictEqual([
      [{ answer: 'allowed' }, 2],
      [{ answer: 'declined' }, 1],
      [{ answer: 'failed' }, 1],
      [{ answer: 'unasked' }, 1],
    ])
    expect(await series(m, 'toolstack_upstream_restarts_total')).toStrictEqual([[{ upstream: 'fs' }, 2]])
  })

  it('reads open sessions and each upstream up at each scrape', async () => {
    let open = 3
    let fsUp = true
    const m = await gatewayMetrics({
      sessions: () => open,
      readiness: () => ({
        ready: fsUp,
        upstreams: [
          { name: 'fs', up: fsUp, required: true },
          { name: 'ev', up: true, required: false },
        ],
      }),
    })
    const first = (await m.scrape()).body
    expect(first).toContain('toolstack_http_sessions 3\n')
    expect(first).toContain('toolstack_upstream_up{upstream="fs"} 1\n')
    open = 0
    fsUp = false
    const { body, contentType } = await m.scrape()
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(body).toContain('toolstack_http_sessions 0\n')
    expect(body).toContain('toolstack_upstream_up{upstream="fs"} 0\n')
    expect(body).toContain('toolstack_upstream_up{upstream="ev"} 1\n')
  })

  it("with stats, a gauge of the store's counts by tool and key, read at each scrape, bounded as the counters; none without", async () => {
    let counts = [
      { tool: 'fs_read', key: 'haed', calls: 3 },
      { tool: 'fs_read', key: 'pth', calls: 1 },
      { tool: 'fs_write', key: 'x\ny', calls: 2 },
    ]
    const m = await gatewayMetrics({ stats: () => Promise.resolve(counts), maxSeries: 2 })
    expect(await series(m, 'toolstack_undeclared_key_calls')).toEqual([
      [{ tool: 'fs_read', key: 'haed' }, 3],
      [{ tool: 'fs_read', key: 'pth' }, 1],
      [{ tool: '(other)', key: '(other)' }, 2],
    ])
    counts = [{ tool: 'fs_read', key: 'haed', calls: 4 }]
    expect(await series(m, 'toolstack_undeclared_key_calls')).toEqual([[{ tool: 'fs_read', key: 'haed' }, 4]])
    expect((await m.scrape()).body).toContain('toolstack_undeclared_key_calls{tool="fs_read",key="haed"} 4')
    const without = await gatewayMetrics()
    expect(without.registry.getSingleMetric('toolstack_undeclared_key_calls')).toBeUndefined()
  })

  it('says what the definition counter counts in its HELP line', async () => {
    const text = await (await gatewayMetrics()).registry.getSingleMetricAsString('toolstack_definition_changes_total')
    expect(text.split('\n')[0]).toBe(
      '# HELP toolstack_definition_changes_total Tool definitions changed since they were pinned (by what follows: ' +
        'warn, hold, refuse) or flagged when pinned (flagged), each said once per (tool, definition)',
    )
  })

  it('reads an upstream only from an entry with a string name: null, a nameless entry and a number name are passed by', async () => {
    const m = await gatewayMetrics({
      readiness: () => ({
        ready: true,
        upstreams: [null, { up: true }, { name: 7, up: true }, { name: 'fs', up: true }] as never,
      }),
    })
    expect(await series(m, 'toolstack_upstream_up')).toStrictEqual([[{ upstream: 'fs' }, 1]])
  })

  it('past maxSeries, a call and its time are counted under (other) for both upstream and tool', async () => {
    const m = await gatewayMetrics({ maxSeries: 1 })
    m.record(call('fs_read', 'ok'))
    m.record(call('fs_write', 'error', { upstream: 'git' }))
    expect(await series(m, 'toolstack_calls_total')).toStrictEqual([
      [{ upstream: 'fs', tool: 'fs_read', outcome: 'ok' }, 1],
      [{ upstream: '(other)', tool: '(other)', outcome: 'error' }, 1],
    ])
    expect(await series(m, 'toolstack_call_duration_seconds')).toStrictEqual([
      [{ upstream: 'fs', tool: 'fs_read' }, 1],
      [{ upstream: '(other)', tool: '(other)' }, 1],
    ])
  })

  it('a store that cannot answer stats leaves the values of the last scrape', async () => {
    let failing = false
    const m = await gatewayMetrics({
      stats: () =>
        failing ? Promise.reject(new Error('store down')) : Promise.resolve([{ tool: 'fs_read', key: 'k', calls: 2 }]),
    })
    expect(await series(m, 'toolstack_undeclared_key_calls')).toEqual([[{ tool: 'fs_read', key: 'k' }, 2]])
    failing = true
    expect(await series(m, 'toolstack_undeclared_key_calls')).toEqual([[{ tool: 'fs_read', key: 'k' }, 2]])
  })

  it('counts nothing for a diagnostic or a reload', async () => {
    const m = await gatewayMetrics()
    m.record({ type: 'diagnostic', message: 'x' })
    m.record({ type: 'reload', outcome: 'kept', problems: ['bad'] })
    const { body } = await m.scrape()
    expect(body.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toStrictEqual(['toolstack_http_sessions 0'])
  })

  it('each gateway has a registry of its own: two count apart', async () => {
    const [a, b] = await Promise.all([gatewayMetrics(), gatewayMetrics()])
    a.record(call('fs_read', 'ok'))
    expect(await series(a, 'toolstack_calls_total')).toHaveLength(1)
    expect(await series(b, 'toolstack_calls_total')).toHaveLength(0)
  })
})

describe('gatewayMetrics: label bounds, whatever a model sends', () => {
  const MAX = 3
  const name = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }))

  const valuesOf = (all: ReadonlyArray<readonly [Labels, number]>): ReadonlyArray<string> =>
    all.flatMap(([labels]) => Object.values(labels).map(String))

  it('warnings: at most maxSeries (tool, key) label sets and one (other); every value cut and without control characters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, fc.array(name, { maxLength: 5 })), { maxLength: 40 }), async (ws) => {
        const m = await gatewayMetrics({ maxSeries: MAX })
        for (const [tool, keys] of ws) m.record(warning(tool, keys))
        const all = await series(m, 'toolstack_undeclared_keys_total')
        const counted = all.reduce((n, [, v]) => n + v, 0)
        expect(all.length).toBeLessThanOrEqual(MAX + 1)
        expect(counted).toBe(ws.reduce((n, [, keys]) => n + keys.length, 0))
        for (const v of valuesOf(all)) {
          expect(v.length).toBeLessThanOrEqual(6 * 201)
          // eslint-disable-next-line no-control-regex
          expect(v).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
        }
      }),
      { numRuns: 50 },
    )
  })

  it('calls: at most maxSeries (upstream, tool) label sets and one (other), for each outcome', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(name, fc.boolean(), fc.constantFrom('ok', 'error', 'refused' as const)), { maxLength: 40 }),
        async (cs) => {
          const m = await gatewayMetrics({ maxSeries: MAX })
          for (const [tool, listed, outcome] of cs) m.record(call(tool, outcome, { listed }))
          const calls = await series(m, 'toolstack_calls_total')
          const pairs = new Set(calls.map(([l]) => JSON.stringify([l['upstream'], l['tool']])))
          expect(pairs.size).toBeLessThanOrEqual(MAX + 1)
          expect(calls.reduce((n, [, v]) => n + v, 0)).toBe(cs.length)
          expect((await series(m, 'toolstack_call_duration_seconds')).length).toBeLessThanOrEqual(MAX + 1)
          for (const v of valuesOf(calls)) expect(v.length).toBeLessThanOrEqual(6 * 201)
        },
      ),
      { numRuns: 50 },
    )
  })

  it('past the cap, a new pair is counted under (other); pairs seen before keep their labels', async () => {
    const m = await gatewayMetrics({ maxSeries: 2 })
    for (const k of ['a', 'b', 'c', 'a', 'd']) m.record(warning('fs_read', [k]))
    expect(await series(m, 'toolstack_undeclared_keys_total')).toStrictEqual([
      [{ tool: 'fs_read', key: 'a' }, 2],
      [{ tool: 'fs_read', key: 'b' }, 1],
      [{ tool: '(other)', key: '(other)' }, 2],
    ])
    const long = await gatewayMetrics()
    long.record(warning('fs_read', ['x'.repeat(10_000)]))
    expect(await series(long, 'toolstack_undeclared_keys_total')).toStrictEqual([
      [{ tool: 'fs_read', key: `${'x'.repeat(200)}…` }, 1],
    ])
  })
})
