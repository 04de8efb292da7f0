/**
 * What a reload of the gateway's configuration changes: which upstreams are started, stopped, restarted or
 * only served differently, which of the gateway's settings differ, and whether a host may see a different
 * list of tools. A pure step over two checked configurations; the gateway applies it.
 *
 * @since 0.1.0
 */
import { hasOwn, isRecord } from '../kernel/guards.js'
import type { GatewayConfig, GatewayServer } from './config.js'
import { CONFIG_MEMBERS } from './config.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A member of the configuration outside `mcpServers`.
 *
 * @since 0.1.0
 * @category model
 */
export type GatewaySetting = Exclude<(typeof CONFIG_MEMBERS)[number], NotSettings>

// read only at start, or compared server by server: never a setting a reload reports
type NotSettings = 'mcpServers' | 'startupMs' | 'store'
const NOT_SETTINGS: ReadonlySet<string> = new Set<NotSettings>(['mcpServers', 'startupMs', 'store'])

/**
 * The difference between the running configuration and a new one, by server name. Each name is in exactly
 * one of `added`, `removed`, `restarted`, `changed` and `kept`.
 *
 * @since 0.1.0
 * @category model
 */
export interface ConfigChange {
  /** Only in the new configuration: started. */
  readonly added: ReadonlyArray<string>
  /** Only in the running one: stopped. */
  readonly removed: ReadonlyArray<string>
  /** In both, started differently (command, args, env, cwd, url, headers, stderr, sessions, or the timeout in force): restarted. */
  readonly restarted: ReadonlyArray<string>
  /** In both, started the same, but its prefix, tools or required differ: kept running, served anew. */
  readonly changed: ReadonlyArray<string>
  /** In both, the same. */
  readonly kept: ReadonlyArray<string>
  /** The settings outside `mcpServers` that differ, in the configuration's order. */
  readonly settings: ReadonlyArray<GatewaySetting>
  /**
   * Whether the tools a host is listed may differ: an upstream added, removed or restarted, a prefix or curation
   * changed, `reasons`, or `drift` (a held tool is listed again, or hidden).
   */
  readonly listChanged: boolean
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// a configuration value as JSON with each object's members in one order (their names sorted): two entries written
// in another order, or one decoded into a null-prototype object, read the same (node's isDeepStrictEqual tells
// those apart)
const canonical = (u: unknown): string | undefined =>
  JSON.stringify(u, (_key, v: unknown) =>
    isRecord(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  )

const isSame = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b)

const SETTINGS = CONFIG_MEMBERS.filter((k): k is GatewaySetting => !NOT_SETTINGS.has(k))

/**
 * Whether an upstream's host sessions each get an upstream session of their own: its `sessions`, else per host
 * for a `url` (a new session costs one HTTP exchange) and shared for a command (a process per host session would
 * be a surprise).
 *
 * @example
 * import { sessionsOf } from 'toolstack/gateway'
 * assert.strictEqual(sessionsOf({ name: 'w', prefix: 'w', spec: { url: 'http://127.0.0.1:1/mcp' } }), 'per-host')
 * assert.strictEqual(sessionsOf({ name: 'fs', prefix: 'fs', spec: { command: 'npx' } }), 'shared')
 *
 * @since 0.1.0
 * @category pure steps
 */
export const sessionsOf = (server: GatewayServer): 'per-host' | 'shared' =>
  server.sessions ?? (hasOwn(server.spec, 'url') ? 'per-host' : 'shared')

// what an upstream is started with: two entries with equal starts can share one running process
const startOf = (config: GatewayConfig, server: GatewayServer) => ({
  spec: server.spec,
  stderr: server.stderr ?? 'log',
  timeout: server.timeout ?? config.timeout,
  sessions: sessionsOf(server),
})

// what the registry and readiness read: a change here re-serves the upstream without restarting it
const servedOf = (server: GatewayServer) => ({
  prefix: server.prefix,
  tools: server.tools,
  required: server.required ?? true,
})

const isSeenDifferently = (before: GatewayServer, after: GatewayServer): boolean =>
  before.prefix !== after.prefix || !isSame(before.tools, after.tools)

/**
 * The difference between `before` (running) and `after` (the new configuration), compared structurally: an
 * entry written again with its members in another order is the same entry.
 *
 * @example
 * import { decodeGatewayConfig, diffConfigs } from 'toolstack/gateway'
 * const read = (u: unknown) => {
 *   const c = decodeGatewayConfig(u)
 *   if (c._tag === 'Left') throw new Error(c.left)
 *   return c.right
 * }
 * const before = read({ mcpServers: { a: { command: 'a' }, b: { command: 'b' } } })
 * const after = read({ mcpServers: { a: { command: 'a' }, b: { command: 'b', args: ['-v'] } }, reasons: false })
 * assert.deepStrictEqual(diffConfigs(before)(after), {
 *   added: [],
 *   removed: [],
 *   restarted: ['b'],
 *   changed: [],
 *   kept: ['a'],
 *   settings: ['reasons'],
 *   listChanged: true,
 * })
 *
 * @since 0.1.0
 * @category pure steps
 */
export const diffConfigs =
  (before: GatewayConfig) =>
  (after: GatewayConfig): ConfigChange => {
    // names are data: a Map, never a plain object's keys
    const old = new Map(before.servers.map((s) => [s.name, s]))
    const now = new Set(after.servers.map((s) => s.name))
    const added: Array<string> = []
    const restarted: Array<string> = []
    const changed: Array<string> = []
    const kept: Array<string> = []
    let seen = false
    for (const s of after.servers) {
      const was = old.get(s.name)
      if (was === undefined) added.push(s.name)
      else if (!isSame(startOf(before, was), startOf(after, s))) restarted.push(s.name)
      else if (!isSame(servedOf(was), servedOf(s))) {
        changed.push(s.name)
        seen ||= isSeenDifferently(was, s)
      } else kept.push(s.name)
    }
    const removed = before.servers.filter((s) => !now.has(s.name)).map((s) => s.name)
    const settings = SETTINGS.filter((k) => !isSame(before[k], after[k]))
    return {
      added,
      removed,
      restarted,
      changed,
      kept,
      settings,
      listChanged:
        seen ||
        added.length + removed.length + restarted.length > 0 ||
        settings.includes('reasons') ||
        settings.includes('drift'),
    }
  }
