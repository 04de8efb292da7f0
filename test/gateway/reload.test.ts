// What a reload changes (diffConfigs), a pure step over two decoded configurations: examples, and a
// property against an oracle that compares entries by canonical JSON instead of structural equality.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GatewayConfig, GatewayServer } from '../../src/gateway/index.js'
import { decodeGatewayConfig, diffConfigs } from '../../src/gateway/index.js'

const read = (u: unknown): GatewayConfig => {
  const c = decodeGatewayConfig(u)
  if (c._tag === 'Left') throw new Error(c.left)
  return c.right
}

const BASE = {
  mcpServers: {
    fs: { command: 'node', args: ['fs.js', '/srv'], env: { A: '1', B: '2' } },
    mem: { command: 'node', args: ['mem.js'] },
    web: { url: 'http://127.0.0.1:1/mcp' },
  },
  rules: [{ tool: '*', decision: 'allow' }],
}
const withServer = (name: string, entry: unknown) => ({ ...BASE, mcpServers: { ...BASE.mcpServers, [name]: entry } })

describe('diffConfigs', () => {
  it('the same configuration, its members written in another order, changes nothing', () => {
    const reordered = {
      rules: BASE.rules,
      mcpServers: {
        web: { url: 'http://127.0.0.1:1/mcp' },
        mem: { args: ['mem.js'], command: 'node' },
        fs: { env: { B: '2', A: '1' }, args: ['fs.js', '/srv'], command: 'node' },
      },
    }
    expect(diffConfigs(read(BASE))(read(reordered))).toEqual({
      added: [],
      removed: [],
      restarted: [],
      changed: [],
      kept: ['web', 'mem', 'fs'],
      settings: [],
      listChanged: false,
    })
  })

  it('a default written out (stderr "log", required true) is the same entry as one without it', () => {
    const written = withServer('mem', { command: 'node', args: ['mem.js'], stderr: 'log', required: true })
    expect(diffConfigs(read(BASE))(read(written))).toMatchObject({ restarted: [], changed: [], listChanged: false })
    expect(diffConfigs(read(written))(read(BASE))).toMatchObject({ restarted: [], changed: [], listChanged: false })
  })

  it('a new argument, env value, stderr or timeout restarts that upstream only', () => {
    for (const entry of [
      { command: 'node', args: ['fs.js', '/tmp'], env: { A: '1', B: '2' } },
      { command: 'node', args: ['fs.js', '/srv'], env: { A: '1', B: '3' } },
      { command: 'node', args: ['fs.js', '/srv'], env: { A: '1', B: '2' }, stderr: 'ignore' },
      { command: 'node', args: ['fs.js', '/srv'], env: { A: '1', B: '2' }, timeout: 5000 },
    ]) {
      const change = diffConfigs(read(BASE))(read(withServer('fs', entry)))
      expect(change).toMatchObject({ restarted: ['fs'], kept: ['mem', 'web'], changed: [], listChanged: true })
    }
  })

  it("the configuration's timeout restarts the upstreams without one of their own", () => {
    const own = withServer('mem', { command: 'node', args: ['mem.js'], timeout: 100 })
    expect(diffConfigs(read(own))(read({ ...own, timeout: 9000 }))).toMatchObject({
      restarted: ['fs', 'web'],
      kept: ['mem'],
      settings: ['timeout'],
    })
  })

  it('a prefix or curation serves the upstream anew without restarting it; required alone is not news to a host', () => {
    const prefixed = withServer('mem', { command: 'node', args: ['mem.js'], prefix: 'memory' })
    expect(diffConfigs(read(BASE))(read(prefixed))).toMatchObject({
      changed: ['mem'],
      restarted: [],
      listChanged: true,
    })
    const curated = withServer('mem', { command: 'node', args: ['mem.js'], tools: { exclude: ['delete_*'] } })
    expect(diffConfigs(read(BASE))(read(curated))).toMatchObject({ changed: ['mem'], listChanged: true })
    const optional = withServer('mem', { command: 'node', args: ['mem.js'], required: false })
    expect(diffConfigs(read(BASE))(read(optional))).toMatchObject({ changed: ['mem'], listChanged: false })
  })

  it('names the servers added and removed, and the settings that differ; rules alone are not news to a host', () => {
    const next = {
      mcpServers: { fs: BASE.mcpServers.fs, web: BASE.mcpServers.web, git: { command: 'git-mcp' } },
      rules: [{ tool: '*', decision: 'ask' }],
      tolerate: ['trace'],
      log: '/tmp/x.jsonl',
    }
    expect(diffConfigs(read(BASE))(read(next))).toEqual({
      added: ['git'],
      removed: ['mem'],
      restarted: [],
      changed: [],
      kept: ['fs', 'web'],
      settings: ['rules', 'tolerate', 'log'],
      listChanged: true,
    })
    const rulesOnly = { ...BASE, rules: [{ tool: '*', decision: 'deny' }] }
    expect(diffConfigs(read(BASE))(read(rulesOnly))).toMatchObject({ settings: ['rules'], listChanged: false })
    expect(diffConfigs(read(BASE))(read({ ...BASE, reasons: false }))).toMatchObject({
      settings: ['reasons'],
      listChanged: true,
    }) // drift changes what a held tool's host is listed
    expect(diffConfigs(read(BASE))(read({ ...BASE, drift: 'hold' }))).toMatchObject({
      settings: ['drift'],
      listChanged: true,
    })
  })

  it('a server named __proto__ or constructor is an ordinary name', () => {
    const hostile = JSON.parse('{"mcpServers":{"__proto__":{"command":"a"},"constructor":{"command":"b"}}}') as unknown
    const after = JSON.parse('{"mcpServers":{"__proto__":{"command":"a2"},"toString":{"command":"c"}}}') as unknown
    expect(diffConfigs(read(hostile))(read(after))).toMatchObject({
      added: ['toString'],
      removed: ['constructor'],
      restarted: ['__proto__'],
    })
  })
})

// --- the property -------------------------------------------------------------------

// JSON with every object's keys sorted: equal for equal values whatever the order they were written in
const canonical = (u: unknown): string =>
  JSON.stringify(u, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )

const oracle = (before: GatewayConfig, after: GatewayConfig) => {
  const start = (c: GatewayConfig, s: GatewayServer) =>
    canonical([s.spec, s.stderr ?? 'log', s.timeout ?? c.timeout ?? null])
  const served = (s: GatewayServer) => canonical([s.prefix, s.tools ?? null, s.required ?? true])
  const find = (c: GatewayConfig, name: string) => c.servers.find((s) => s.name === name)
  const bucket = (s: GatewayServer): string => {
    const was = find(before, s.name)
    if (was === undefined) return 'added'
    if (start(before, was) !== start(after, s)) return 'restarted'
    return served(was) === served(s) ? 'kept' : 'changed'
  }
  const named = (b: string) => after.servers.filter((s) => bucket(s) === b).map((s) => s.name)
  const settings = (
    ['rules', 'tolerate', 'locationArgs', 'caseInsensitive', 'reasons', 'log', 'timeout', 'listWaitMs'] as const
  ).filter((k) => canonical(before[k] ?? null) !== canonical(after[k] ?? null))
  const seen = (s: GatewayServer): boolean => {
    const was = find(before, s.name)
    return was === undefined || canonical([was.prefix, was.tools ?? null]) !== canonical([s.prefix, s.tools ?? null])
  }
  return {
    added: named('added'),
    removed: before.servers.filter((s) => find(after, s.name) === undefined).map((s) => s.name),
    restarted: named('restarted'),
    changed: named('changed'),
    kept: named('kept'),
    settings,
    listChanged:
      after.servers.some((s) => bucket(s) === 'restarted' || seen(s)) ||
      before.servers.some((s) => find(after, s.name) === undefined) ||
      settings.includes('reasons'),
  }
}

const NAMES = ['fs', 'mem', '__proto__', 'constructor']
const maybe = <A>(key: string, arb: fc.Arbitrary<A>): fc.Arbitrary<ReadonlyArray<readonly [string, unknown]>> =>
  fc.option(arb, { nil: undefined }).map((v) => (v === undefined ? [] : [[key, v]]))

// an entry as a file would hold it; env a null-prototype object at times (fc.dictionary)
const rawEntry = (name: string): fc.Arbitrary<Record<string, unknown>> =>
  fc
    .tuple(
      maybe('args', fc.array(fc.constantFrom('-v', 'x', '/srv'), { maxLength: 2 })),
      maybe('env', fc.dictionary(fc.constantFrom('A', 'B'), fc.constantFrom('1', '2'))),
      maybe('prefix', fc.constantFrom(`${name}_a`, `${name}_b`)),
      maybe('tools', fc.record({ exclude: fc.constantFrom(['x'], ['y_*']) }, { requiredKeys: [] })),
      maybe('timeout', fc.constantFrom(100, 200)),
      maybe('required', fc.boolean()),
      maybe('stderr', fc.constantFrom('log', 'ignore')),
    )
    .chain((members) =>
      fc
        .constantFrom('node', 'python')
        .map((command): Record<string, unknown> => Object.fromEntries([['command', command], ...members.flat()])),
    )

const rawTop = fc.tuple(
  maybe('rules', fc.constantFrom([{ tool: '*', decision: 'allow' }], [{ tool: '*', decision: 'ask' }])),
  maybe('tolerate', fc.constantFrom(['trace'], [])),
  maybe('locationArgs', fc.constantFrom(['dir'])),
  maybe('caseInsensitive', fc.boolean()),
  maybe('reasons', fc.boolean()),
  maybe('log', fc.constantFrom('/a.jsonl', '/b.jsonl')),
  maybe('timeout', fc.constantFrom(100, 300)),
  maybe('listWaitMs', fc.constantFrom(10, 20)),
)

// the same value with every object's members in the reverse order
const reversed = (u: unknown): unknown =>
  Array.isArray(u)
    ? u.map(reversed)
    : u !== null && typeof u === 'object'
      ? Object.fromEntries(
          Object.entries(u)
            .reverse()
            .map(([k, v]) => [k, reversed(v)]),
        )
      : u

// per name: in the running configuration, in the new one, and the new entry the same (reordered) or another
const configs = fc
  .tuple(
    fc.tuple(
      ...NAMES.map((n) =>
        fc.record({
          before: fc.boolean(),
          after: fc.boolean(),
          same: fc.boolean(),
          was: rawEntry(n),
          is: rawEntry(n),
          served: fc.option(
            fc.constantFrom<Record<string, unknown>>({ prefix: `${n}_c` }, { tools: {} }, { required: false }),
          ),
        }),
      ),
    ),
    rawTop,
    rawTop,
  )
  .map(([plan, topBefore, topAfter]) => {
    const servers = (which: 'before' | 'after') =>
      Object.fromEntries(
        plan.flatMap((p, i) => {
          if (!p[which]) return []
          const entry = which === 'before' || p.same ? p.was : p.is
          // the same entry, reordered, with one of the members that serve it (not start it) set at times
          const shown = which === 'after' && p.same ? { ...(reversed(entry) as object), ...p.served } : entry
          return [[NAMES[i] as string, shown]]
        }),
      )
    // mcpServers needs a server: `fs` stands in when the plan has none
    const file = (which: 'before' | 'after', top: ReadonlyArray<ReadonlyArray<readonly [string, unknown]>>) => {
      const s = servers(which)
      return {
        mcpServers: Object.keys(s).length === 0 ? { fs: { command: 'node' } } : s,
        ...Object.fromEntries(top.flat()),
      }
    }
    return [read(file('before', topBefore)), read(file('after', topAfter))] as const
  })

describe('diffConfigs, whatever the two configurations', () => {
  it('agrees with the canonical-JSON oracle, and sorts every name into exactly one group', () => {
    fc.assert(
      fc.property(configs, ([before, after]) => {
        const change = diffConfigs(before)(after)
        expect(change).toEqual(oracle(before, after))
        const groups = [change.added, change.removed, change.restarted, change.changed, change.kept].flat()
        const all = new Set([...before.servers, ...after.servers].map((s) => s.name))
        expect([...groups].sort()).toEqual([...all].sort())
      }),
    )
  })

  it('a configuration against itself: everything kept, nothing changed', () => {
    fc.assert(
      fc.property(configs, ([config]) => {
        const change = diffConfigs(config)(config)
        expect(change.kept).toEqual(config.servers.map((s) => s.name))
        expect(change).toMatchObject({
          added: [],
          removed: [],
          restarted: [],
          changed: [],
          settings: [],
          listChanged: false,
        })
      }),
    )
  })
})
