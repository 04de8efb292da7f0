/**
 * The gateway behind `toolstack serve`: several upstream MCP servers under one namespace, served to a
 * host as one MCP server with the whole stack on every session (the audit, a `reason` on every call,
 * and a permission policy that asks the host's own human). The configuration uses the `mcpServers`
 * shape hosts already use.
 *
 * @since 0.1.0
 */
import { resolve as resolvePath } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Either } from 'fp-ts/lib/Either.js'
import type { IO } from 'fp-ts/lib/IO.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Batch, Provider } from '../kernel/model.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import type { SeenSet } from '../steps/audit/SeenSet.js'
import type { AuditDiagnostic, AuditedProvider } from '../combinators/UnknownKeys.js'
import { drawAuditDiagnostic, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../combinators/UnknownKeys.js'
import { withReasons } from '../combinators/Reasons.js'
import { registry } from '../combinators/Registry.js'
import type { PolicyDecision, PolicyDiagnostic, SharedGrants } from '../combinators/Policy.js'
import { drawPolicyDiagnostic, withPolicy } from '../combinators/Policy.js'
import type { PinnedProvider } from '../combinators/Pins.js'
import { newPinMemory, withDefinitionPins } from '../combinators/Pins.js'
import type { DefinitionEvent } from '../steps/pins/Events.js'
import type { DriftAction, ServerOf, Standing } from '../steps/pins/Review.js'
import type { Pin } from '../steps/pins/Definition.js'
import type { McpTool } from './client.js'
import { locationNames } from '../steps/policy/options.js'
import type { Rule } from '../steps/policy/Rule.js'
import { decodeRules, isBareDeny, isToolGlob, matchesTool } from '../steps/policy/Rule.js'
import type { QuestionQueue } from '../steps/policy/questions.js'
import { newQuestionQueue } from '../steps/policy/questions.js'
import type { ProtectedFile } from '../steps/policy/evaluate.js'
import type { LocationResolver } from '../kernel/resolve.js'
import { filesystemResolver, lexicalResolver } from '../kernel/resolve.js'
import { cut, describeValue, escapeControls } from '../kernel/describe.js'
import { hasOwn, isRecord } from '../kernel/guards.js'
import { MAX_TIMER_MS, didYouMean } from '../kernel/options.js'
import { longestTagOf, namespaceOf } from '../kernel/longest.js'
import type { McpSession } from './server.js'
import type { Readiness } from './serve.js'
import { toMcpServer } from './server.js'
import type { Upstream, UpstreamEvent, UpstreamSpec } from './upstream.js'
import { superviseUpstream } from './upstream.js'
import type { Curation } from './listed.js'
import { curated, newListedNames, onlyListed, recordListed } from './listed.js'
import type { ObservedCall } from './observed.js'
import { markReached, newReached, observeCalls } from './observed.js'
import type { Catalog } from './catalog.js'
import { newCatalog, replaceableCatalog } from './catalog.js'
import type { ConfigChange } from './reload.js'
import { diffConfigs, sessionsOf } from './reload.js'
import type { ListedNames } from './listed.js'
import type { GatewayStore, PairCount } from './store.js'
import { openStore, storeKindOf } from './openStore.js'
import { newLogHub } from './logging.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One upstream server: its key in `mcpServers`, the prefix its tools are published under, and how to
 * start or reach it.
 *
 * @since 0.1.0
 * @category model
 */
export interface GatewayServer {
  readonly name: string
  readonly prefix: string
  readonly spec: UpstreamSpec
  /** Which of its tools are served (by their own names); all when absent. */
  readonly tools?: Curation
  /** Milliseconds each request to it may take; the configuration's `timeout` when absent. */
  readonly timeout?: number
  /** Whether the gateway is ready (`/readyz`) only while it is up. Default true. */
  readonly required?: boolean
  /** A command's stderr: each line a record (`'log'`, the default), copied to the gateway's, or dropped. */
  readonly stderr?: 'log' | 'inherit' | 'ignore'
  /**
   * Whether each host session gets an upstream session of its own for its calls (`'per-host'`: for a command, a
   * process of its own), or all share one (`'shared'`). Default: per host for a `url`, shared for a command.
   */
  readonly sessions?: 'per-host' | 'shared'
}

/**
 * A checked gateway configuration.
 *
 * @since 0.1.0
 * @category model
 */
export interface GatewayConfig {
  readonly servers: ReadonlyArray<GatewayServer>
  /** The policy's rules; absent in the file means every call is allowed. */
  readonly rules: ReadonlyArray<Rule>
  readonly tolerate: ReadonlyArray<string>
  /** More argument names the policy reads as locations (where a tool declares them), besides `LOCATION_ARGS`. */
  readonly locationArgs: ReadonlyArray<string>
  readonly reasons: boolean
  /** Where the JSON Lines log goes, if anywhere. */
  readonly log: string | undefined
  /** Milliseconds each request to an upstream may take, unless its entry says otherwise (the SDK's 60 s when absent). */
  readonly timeout?: number
  /**
   * Milliseconds the gateway waits for slow upstreams, at start and on each listing, before it serves what is
   * ready; a late upstream's tools are announced (`list_changed`) when they arrive. Default 2 000.
   */
  readonly listWaitMs?: number
  /**
   * What the gateway remembers beyond one session (`memory`, `file:PATH`, `redis://…`; see `openStore`). Absent:
   * each session keeps its own grants and says each pair once, as without a store. Read at start only.
   */
  readonly store?: string
  /**
   * What follows when a tool's definition differs from the one pinned at its first listing (kept in the store):
   * `warn` (the default: served as it comes, and said), `hold` (the tool is hidden until an operator accepts
   * the new definition) or `refuse` (listed as pinned, its calls refused until then).
   */
  readonly drift?: DriftAction
}

/**
 * A record the gateway logs; warnings, decisions, calls and upstream events name their upstream.
 *
 * @since 0.1.0
 * @category model
 */
export type GatewayRecord =
  | ({ readonly type: 'warning'; readonly upstream: string } & UnknownKeyWarning)
  | ({ readonly type: 'decision'; readonly upstream: string } & PolicyDecision)
  | ({ readonly type: 'call'; readonly upstream: string } & ObservedCall)
  | ({ readonly type: 'upstream' } & UpstreamEvent)
  | { readonly type: 'diagnostic'; readonly message: string }
  /** A tool's definition changed since it was pinned, or was flagged when pinned: said once per (tool, definition). */
  | ({ readonly type: 'definition'; readonly upstream: string } & DefinitionEvent)
  /** A reload: what it changed, or why the running configuration was kept. */
  | ({ readonly type: 'reload'; readonly outcome: 'reloaded' } & ConfigChange)
  | { readonly type: 'reload'; readonly outcome: 'kept'; readonly problems: ReadonlyArray<string> }

/**
 * A running gateway.
 *
 * @since 0.1.0
 * @category model
 */
export interface Gateway {
  /** The upstreams running now, in the configuration's order (a reload replaces some). */
  readonly upstreams: ReadonlyArray<Upstream>
  /** A server for one host session, with a stack of its own. */
  readonly newServer: () => Server
  /** Each upstream's state; ready when every required upstream is up (for `serveHttp`'s `/readyz`). */
  readonly readiness: () => Readiness
  /**
   * Applies a new configuration to the running gateway (see `diffConfigs`): upstreams added are started,
   * removed ones stopped, those started differently restarted, the others kept running; sessions judge their
   * next calls by the new rules, tolerate, locationArgs, reasons and curation, and are told `list_changed`
   * when their tools may differ. Records a `reload` record; reloads run one at a time.
   */
  readonly reload: (config: GatewayConfig) => Promise<ConfigChange>
  /** The store's counts of calls per (tool, undeclared key), summed over every process sharing it; `[]` without a store. */
  readonly stats: () => Promise<ReadonlyArray<PairCount>>
  /**
   * Each tool's definition standing at the last listing, with its upstream: its hash and its pin's, what changed
   * and what follows (`action`: for `hold` and `refuse`, until accepted), and its flags. For the page and the
   * command that show what waits for an operator.
   */
  readonly definitions: () => ReadonlyArray<DefinitionStanding>
  /**
   * An operator accepts `hash` as `tool`'s definition: it becomes the tool's pin in the store (for every replica),
   * a held tool is served again and hosts are told `list_changed`. A Left says why not (no such definition waits).
   */
  readonly acceptDefinition: (tool: string, hash: string) => Promise<Either<string, Pin>>
  /** Stops every upstream, then closes the store. */
  readonly close: () => Promise<void>
}

/**
 * A tool's definition standing in a gateway, with the upstream it comes from.
 *
 * @since 0.1.0
 * @category model
 */
export interface DefinitionStanding extends Standing {
  readonly upstream: string
}

/**
 * Where the gateway's own files are, besides those its configuration names (`store`, `log`): no call may
 * touch any of them.
 *
 * @since 0.1.0
 * @category model
 */
export interface GatewayFiles {
  /** The configuration file it was started from (and reloads). */
  readonly config?: string
  /** The log, when it is given apart from the configuration (`--log`); the configuration's `log` otherwise. */
  readonly log?: string
}

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

const ALPHABET = /^[A-Za-z0-9_-]+$/
// how often a session's counts may be read and sent to the store (each read costs O(pairs))
const COUNTS_EVERY_MS = 1_000
const TOP = [
  'mcpServers',
  'rules',
  'tolerate',
  'locationArgs',
  'reasons',
  'log',
  'timeout',
  'listWaitMs',
  'store',
  'drift',
]
const COMMAND = ['command', 'args', 'env', 'cwd', 'prefix', 'tools', 'timeout', 'required', 'stderr', 'sessions']
const URL_MEMBERS = ['url', 'headers', 'prefix', 'tools', 'timeout', 'required', 'sessions']

const decodeMs = (at: string, u: unknown): Either<string, number | undefined> =>
  u === undefined || (Number.isSafeInteger(u) && (u as number) >= 1 && (u as number) <= MAX_TIMER_MS)
    ? right(u as number | undefined)
    : left(`${at} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${describeValue(u)}`)
const CURATION = ['include', 'exclude']

const unknownMembers = (at: string, u: object, known: ReadonlyArray<string>): string | undefined => {
  const extra = Object.keys(u).filter((k) => !known.includes(k))
  if (extra.length === 0) return undefined
  const names = extra.map((k) => JSON.stringify(k)).join(', ')
  return `${at} has unknown member${extra.length > 1 ? 's' : ''} ${names} (known: ${known.join(', ')})${didYouMean(known, extra, new Map())}`
}

const stringRecord = (at: string, u: unknown): Either<string, Readonly<Record<string, string>>> => {
  if (!isRecord(u)) return left(`${at} must be an object of strings, got ${describeValue(u)}`)
  for (const [k, v] of Object.entries(u))
    if (typeof v !== 'string') return left(`${at}.${k} must be a string, got ${describeValue(v)}`)
  return right(u as Readonly<Record<string, string>>)
}

const decodeGlobs = (at: string, u: unknown): Either<string, ReadonlyArray<string> | undefined> =>
  u === undefined || (Array.isArray(u) && u.every((g) => typeof g === 'string' && isToolGlob(g)))
    ? right(u)
    : left(`${at} must be an array of tool names or globs ("read_*", "*"), got ${describeValue(u)}`)

const decodeCuration = (at: string, u: unknown): Either<string, Curation | undefined> => {
  if (u === undefined) return right(undefined)
  if (!isRecord(u)) return left(`${at} must be an object { include?, exclude? }, got ${describeValue(u)}`)
  const extra = unknownMembers(at, u, CURATION)
  if (extra !== undefined) return left(extra)
  const include = decodeGlobs(`${at}.include`, u['include'])
  if (isLeft(include)) return include
  const exclude = decodeGlobs(`${at}.exclude`, u['exclude'])
  if (isLeft(exclude)) return exclude
  return right({
    ...(include.right === undefined ? {} : { include: include.right }),
    ...(exclude.right === undefined ? {} : { exclude: exclude.right }),
  })
}

const decodeServer = (name: string, u: unknown): Either<string, GatewayServer> => {
  const at = `mcpServers.${name}`
  if (!isRecord(u)) return left(`${at} must be an object { command, args?, env? } or { url }, got ${describeValue(u)}`)
  const prefix = hasOwn(u, 'prefix') ? u['prefix'] : name
  // "" keeps the upstream's own names (at most one upstream may have it: both would own every name)
  if (typeof prefix !== 'string' || (prefix !== '' && !ALPHABET.test(prefix))) {
    return left(
      `${at}.prefix must be letters, digits, "_" and "-", or "" to keep the server's own names` +
        (hasOwn(u, 'prefix') ? '' : ` (it defaults to the server's key, ${JSON.stringify(name)}; give one)`) +
        `, got ${describeValue(prefix)}`,
    )
  }
  const tools = decodeCuration(`${at}.tools`, u['tools'])
  if (isLeft(tools)) return tools
  const timeout = decodeMs(`${at}.timeout`, u['timeout'])
  if (isLeft(timeout)) return timeout
  const required = u['required']
  if (required !== undefined && typeof required !== 'boolean')
    return left(`${at}.required must be true or false, got ${describeValue(required)}`)
  const sessions = u['sessions']
  if (sessions !== undefined && sessions !== 'per-host' && sessions !== 'shared')
    return left(`${at}.sessions must be "per-host" or "shared", got ${describeValue(sessions)}`)
  const curation = {
    ...(sessions === undefined ? {} : { sessions: sessions as 'per-host' | 'shared' }),
    ...(tools.right === undefined ? {} : { tools: tools.right }),
    ...(timeout.right === undefined ? {} : { timeout: timeout.right }),
    ...(required === undefined ? {} : { required }),
  }
  if (hasOwn(u, 'url')) {
    const extra = unknownMembers(at, u, URL_MEMBERS)
    if (extra !== undefined) return left(extra)
    const url = u['url']
    if (typeof url !== 'string' || !/^https?:\/\//.test(url))
      return left(`${at}.url must be an http(s) URL, got ${describeValue(url)}`)
    const headers = u['headers'] === undefined ? right({}) : stringRecord(`${at}.headers`, u['headers'])
    if (isLeft(headers)) return headers
    return right({ name, prefix, spec: { url, headers: headers.right }, ...curation })
  }
  const extra = unknownMembers(at, u, COMMAND)
  if (extra !== undefined) return left(extra)
  const command = u['command']
  if (typeof command !== 'string' || command === '')
    return left(`${at}.command must be a non-empty string (or give a url), got ${describeValue(command)}`)
  const args = u['args'] ?? []
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))
    return left(`${at}.args must be an array of strings, got ${describeValue(args)}`)
  const env = u['env'] === undefined ? right(undefined) : stringRecord(`${at}.env`, u['env'])
  if (isLeft(env)) return env
  const cwd = u['cwd']
  if (cwd !== undefined && typeof cwd !== 'string') return left(`${at}.cwd must be a string, got ${describeValue(cwd)}`)
  const stderr = u['stderr']
  if (stderr !== undefined && stderr !== 'log' && stderr !== 'inherit' && stderr !== 'ignore')
    return left(`${at}.stderr must be "log", "inherit" or "ignore", got ${describeValue(stderr)}`)
  return right({
    name,
    prefix,
    spec: {
      command,
      args,
      ...(env.right === undefined ? {} : { env: env.right }),
      ...(cwd === undefined ? {} : { cwd }),
    },
    ...curation,
    ...(stderr === undefined ? {} : { stderr }),
  })
}

/**
 * Reads a gateway configuration: every member is checked, and every problem is a line of the Left naming
 * the field (with "did you mean" for a misspelt member), so one run names them all and a bad file never
 * starts half a gateway.
 *
 * @example
 * import { decodeGatewayConfig } from 'toolstack/mcp'
 * const ok = decodeGatewayConfig({
 *   mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'] } },
 * })
 * assert.ok(ok._tag === 'Right' && ok.right.servers[0]?.prefix === 'fs')
 * assert.deepStrictEqual(decodeGatewayConfig({ mcpServers: { fs: { comand: 'npx' } } }), {
 *   _tag: 'Left',
 *   left:
 *     'mcpServers.fs has unknown member "comand" (known: command, args, env, cwd, prefix, tools, timeout, required, ' +
 *     'stderr, sessions); did you mean "command"?',
 * })
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeGatewayConfig = (u: unknown): Either<string, GatewayConfig> => {
  if (!isRecord(u)) return left(`the configuration must be a JSON object with "mcpServers", got ${describeValue(u)}`)
  // every member is checked, so that one run names every problem (one per line)
  const problems: Array<string> = []
  const problem = (message: string | undefined): void => void (message === undefined || problems.push(message))
  problem(unknownMembers('the configuration', u, TOP))
  const mcpServers = u['mcpServers']
  const servers: Array<GatewayServer> = []
  if (!isRecord(mcpServers) || Object.keys(mcpServers).length === 0)
    problem(`mcpServers must be an object with at least one server, got ${describeValue(mcpServers)}`)
  else {
    const prefixes = new Map<string, string>()
    for (const [name, spec] of Object.entries(mcpServers)) {
      const s = decodeServer(name, spec)
      if (isLeft(s)) {
        problem(s.left)
        continue
      }
      const before = prefixes.get(s.right.prefix)
      if (before !== undefined)
        problem(`mcpServers.${before} and mcpServers.${name} both use the prefix ${JSON.stringify(s.right.prefix)}`)
      prefixes.set(s.right.prefix, name)
      servers.push(s.right)
    }
  }
  const rules =
    u['rules'] === undefined
      ? right<string, ReadonlyArray<Rule>>([{ tool: '*', decision: 'allow' }])
      : decodeRules(u['rules'], 'rules')
  if (isLeft(rules)) problem(rules.left)
  const tolerate = u['tolerate'] ?? []
  if (!Array.isArray(tolerate) || !tolerate.every((t) => typeof t === 'string'))
    problem(`tolerate must be an array of strings, got ${describeValue(tolerate)}`)
  const locationArgs = u['locationArgs'] ?? []
  try {
    locationNames('locationArgs', locationArgs)
  } catch (e) {
    // the policy's own check, so the file and withPolicy agree on what a name may be
    problem((e as Error).message.replace(/^locationArgs: option "locationArgs"/, 'locationArgs'))
  }
  const reasons = u['reasons'] ?? true
  if (typeof reasons !== 'boolean') problem(`reasons must be true or false, got ${describeValue(reasons)}`)
  const log = u['log']
  if (log !== undefined && (typeof log !== 'string' || log === ''))
    problem(`log must be a file path, got ${describeValue(log)}`)
  const timeout = decodeMs('timeout', u['timeout'])
  if (isLeft(timeout)) problem(timeout.left)
  const listWaitMs = decodeMs('listWaitMs', u['listWaitMs'])
  if (isLeft(listWaitMs)) problem(listWaitMs.left)
  const store = u['store']
  const storeKind = store === undefined ? undefined : storeKindOf(store)
  if (storeKind?._tag === 'Left') problem(`store ${storeKind.left}`)
  const drift = u['drift']
  if (drift !== undefined && drift !== 'warn' && drift !== 'hold' && drift !== 'refuse')
    problem(`drift must be "warn", "hold" or "refuse", got ${describeValue(drift)}`)
  if (problems.length > 0 || isLeft(rules) || isLeft(timeout) || isLeft(listWaitMs)) return left(problems.join('\n'))
  // each member below was checked above, and any problem returned: the casts only restate those checks
  return right({
    servers,
    rules: rules.right,
    tolerate: tolerate as ReadonlyArray<string>,
    locationArgs: locationArgs as ReadonlyArray<string>,
    reasons: reasons as boolean,
    log: log as string | undefined,
    ...(timeout.right === undefined ? {} : { timeout: timeout.right }),
    ...(listWaitMs.right === undefined ? {} : { listWaitMs: listWaitMs.right }),
    ...(store === undefined ? {} : { store: store as string }),
    ...(drift === undefined ? {} : { drift: drift as DriftAction }),
  })
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

// the configuration sessions are served from, and the upstreams it runs
interface Serving {
  readonly config: GatewayConfig
  readonly upstreams: ReadonlyMap<string, Upstream>
  readonly namespace: Provider<unknown>
  /** The layer that pins the upstreams' definitions (under the reasons): each tool's standing, for the policy. */
  readonly pinned: PinnedProvider<unknown>
  readonly upstreamOf: (tool: string) => string
  /** How a tool's locations are resolved: on this filesystem for a command's tools (it shares it), else as written. */
  readonly resolverOf: (tool: string) => LocationResolver
  /** The gateway's own files, which no call may touch. */
  readonly protect: ReadonlyArray<ProtectedFile>
}

// what a session keeps across reloads: one question at a time, and the human's "always" answers
interface SessionKept {
  readonly questions: QuestionQueue
  grants: ReadonlyArray<Rule>
}

// with a store, what the gateway knows of one session, to tell it `list_changed` when grants from elsewhere
// change its listing: its listener, its own grants, and the names its stack was last listed
interface SessionLink {
  listener: IO<void> | undefined
  kept: SessionKept | undefined
  listed: ListedNames | undefined
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

/**
 * The files no call may touch: the configuration, the log, and a `file:` store with its lock, each made
 * absolute against the working directory, in a configuration's terms.
 *
 * @example
 * import { ownFiles } from './gateway.js'
 * const config = { servers: [], rules: [], tolerate: [], locationArgs: [], reasons: true, log: '/var/log/ts.jsonl', store: 'file:/srv/grants.json' }
 * assert.deepStrictEqual(
 *   ownFiles(config, { config: '/etc/ts.json' }).map((f) => f.path),
 *   ['/etc/ts.json', '/var/log/ts.jsonl', '/srv/grants.json', '/srv/grants.json.lock'],
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const ownFiles = (config: GatewayConfig, files: GatewayFiles = {}): ReadonlyArray<ProtectedFile> => {
  const at = (p: string): string => resolvePath(p)
  const log = files.log ?? config.log
  const store =
    config.store === undefined || !config.store.startsWith('file:')
      ? undefined
      : at(config.store.startsWith('file://') ? fileURLToPath(config.store) : config.store.slice('file:'.length))
  return [
    ...(files.config === undefined ? [] : [{ path: at(files.config), what: "the gateway's configuration" }]),
    ...(log === undefined ? [] : [{ path: at(log), what: "the gateway's log" }]),
    ...(store === undefined
      ? []
      : [
          { path: store, what: "the gateway's store of grants" },
          { path: `${store}.lock`, what: "the lock of the gateway's store" },
        ]),
  ]
}

/**
 * The `serverInfo` a host is given: the gateway's name and version, and a description of what it fronts, each
 * upstream by its key with the name and version its server gave (an upstream's text, escaped and cut), or "not
 * running".
 *
 * @example
 * import { gatewayInfo } from './gateway.js'
 * assert.deepStrictEqual(
 *   gatewayInfo({ name: 'toolstack', version: '0.1.0' }, [
 *     { name: 'ev', server: { name: 'everything', version: '2.0.0' } },
 *     { name: 'fs', server: undefined },
 *   ]),
 *   {
 *     name: 'toolstack',
 *     version: '0.1.0',
 *     title: 'toolstack gateway',
 *     description: 'toolstack serve, a gateway in front of: ev (everything 2.0.0), fs (not running)',
 *   },
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const gatewayInfo = (
  info: { readonly name: string; readonly version: string },
  fronts: ReadonlyArray<{
    readonly name: string
    readonly server: { readonly name: string; readonly version: string } | undefined
  }>,
): { readonly name: string; readonly version: string; readonly title: string; readonly description: string } => {
  const shown = (s: string): string => escapeControls(cut(s, 200))
  const each = fronts.map(
    (f) =>
      `${f.name} (${f.server === undefined ? 'not running' : `${shown(f.server.name)} ${shown(f.server.version)}`})`,
  )
  return {
    name: info.name,
    version: info.version,
    title: 'toolstack gateway',
    description: `toolstack serve, a gateway in front of: ${each.join(', ')}`,
  }
}

/** Whether the listing of `names` differs under `before` and `after`: a bare deny hides a tool from it. */
const listingDiffers = (
  names: ReadonlySet<string>,
  before: ReadonlyArray<Rule>,
  after: ReadonlyArray<Rule>,
): boolean => {
  const hides = (rules: ReadonlyArray<Rule>) => {
    const denies = rules.filter(isBareDeny).map((r) => matchesTool(r.tool))
    return (name: string): boolean => denies.some((matches) => matches(name))
  }
  const [was, is] = [hides(before), hides(after)]
  for (const n of names) if (was(n) !== is(n)) return true
  return false
}

/**
 * The calls each pair gained since `sent` (the counts already sent), and the counts sent after these; pairs
 * are looked up by tool and key.
 */
const countDeltas = (
  sent: ReadonlyMap<string, number>,
  stats: ReadonlyArray<PairCount>,
): readonly [ReadonlyArray<PairCount>, ReadonlyMap<string, number>] => {
  const deltas: Array<PairCount> = []
  let next: Map<string, number> | undefined
  for (const p of stats) {
    const k = JSON.stringify([p.tool, p.key])
    const calls = p.calls - (sent.get(k) ?? 0)
    if (calls <= 0) continue
    deltas.push({ tool: p.tool, key: p.key, calls })
    ;(next ??= new Map(sent)).set(k, p.calls)
  }
  return [deltas, next ?? sent]
}

/**
 * Starts every upstream at once, waits until each has started or failed (a failed one keeps being
 * restarted), or `listWaitMs` has passed, and returns a gateway whose `newServer` makes a server for one host session, with a
 * stack of its own: `registry` over the upstreams, then `withReasons` (unless `reasons` is false),
 * `withUnknownKeyAudit`, and `withPolicy` asking the session's human through elicitation.
 * `reload` applies a new configuration without dropping a session (docs/serve.md, "Reloading").
 *
 * @since 0.1.0
 * @category constructors
 */
export const startGateway = async (
  config: GatewayConfig,
  onRecord: (record: GatewayRecord) => void,
  info: { readonly name: string; readonly version: string } = { name: 'toolstack', version: '0.1.0' },
  files: GatewayFiles = {},
): Promise<Gateway> => {
  const diagnose = (message: string): void => onRecord({ type: 'diagnostic', message })
  // opened before any upstream starts: a store that cannot be opened (a corrupt file) starts nothing
  const store = config.store === undefined ? undefined : await openStore(config.store, { onNotice: (m) => diagnose(m) })
  // the gateway's pins: in its store (shared by its replicas, kept across restarts), else in this process
  const pins = store?.pins ?? newPinMemory()
  const links = new Set<SessionLink>()
  // each session's listener, subscribed to every running upstream, and to each one a reload starts
  const subscriptions = new Map<IO<void>, Map<Upstream, IO<void>>>()
  const subscribe = (listener: IO<void>, upstream: Upstream): void =>
    void subscriptions.get(listener)?.set(upstream, upstream.onToolsChanged(listener))
  const notify = (): void => {
    for (const l of [...subscriptions.keys()]) {
      try {
        l()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  // logs passed through: each host session's level, the most verbose of them asked of every upstream
  const logs = newLogHub()
  const startUpstream = (c: GatewayConfig, s: GatewayServer): Upstream => {
    const timeout = s.timeout ?? c.timeout
    const upstream = superviseUpstream(s.name, s.spec, {
      onEvent: (e) => onRecord({ type: 'upstream', ...e }),
      listWaitMs: c.listWaitMs ?? 2_000,
      stderr: s.stderr ?? 'log',
      sessionPerHost: sessionsOf(s) === 'per-host',
      // a message of the shared session while no call is in flight there: every host may be concerned
      onLog: logs.broadcast,
      ...(timeout === undefined ? {} : { timeout }),
    })
    const level = logs.level()
    if (level !== undefined) upstream.setLogLevel(level)
    for (const listener of subscriptions.keys()) subscribe(listener, upstream)
    return upstream
  }
  const offLevel = logs.onLevel((level) => {
    for (const u of current.upstreams.values()) u.setLogLevel(level)
  })
  const stopUpstream = async (upstream: Upstream | undefined): Promise<void> => {
    if (upstream === undefined) return
    for (const offs of subscriptions.values()) {
      offs.get(upstream)?.()
      offs.delete(upstream)
    }
    await upstream.close()
  }
  // a hung upstream does not hold the others back: serve what is ready; a late one's tools are announced
  const waitReady = async (upstreams: ReadonlyArray<Upstream>, ms: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all(upstreams.map((u) => u.ready)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms)
        timer.unref()
      }),
    ])
    clearTimeout(timer)
  }
  // resources and prompts over a configuration's upstreams, shared by every session (no policy or audit: those
  // are about tool calls)
  const catalogOf = (c: GatewayConfig, upstreams: ReadonlyMap<string, Upstream>): Catalog =>
    newCatalog(
      c.servers.map((s) => {
        const timeout = s.timeout ?? c.timeout
        return {
          name: s.name,
          prefix: s.prefix,
          upstream: upstreams.get(s.name) as Upstream,
          ...(timeout === undefined ? {} : { timeout }),
        }
      }),
      { diagnose, listWaitMs: c.listWaitMs ?? 2_000 },
    )

  // a command upstream runs here and shares this filesystem: its locations are judged where they lead
  const onThisMachine = filesystemResolver()
  const asWritten = lexicalResolver()
  // what sessions are served from; one ref, replaced whole by a reload, so a session sees one configuration
  const serving = (c: GatewayConfig, upstreams: ReadonlyMap<string, Upstream>): Serving => {
    // records name the upstream the registry routes to: longest prefix (`fs_x_read` is `fs_x`'s, not `fs`'s)
    const serverOf = longestTagOf(c.servers, (s) => namespaceOf(s.prefix))
    const upstreamOf = (tool: string): string => serverOf(tool)?.name ?? ''
    // a tool's upstream and its own name there: a renaming is looked for within one upstream, and a description
    // naming another upstream's tool is flagged
    const ownName = (tool: string): ServerOf | undefined => {
      const s = serverOf(tool)
      return s === undefined ? undefined : { server: s.name, name: tool.slice(namespaceOf(s.prefix).length) }
    }
    // an upstream's tools by name, read once per listing it made (its list is replaced whole)
    const byName = new WeakMap<ReadonlyArray<McpTool>, ReadonlyMap<string, McpTool>>()
    const annotationsOf = (tool: string): unknown => {
      const own = ownName(tool)
      const tools = own === undefined ? undefined : upstreams.get(own.server)?.tools()
      if (own === undefined || tools === undefined) return undefined
      let named = byName.get(tools)
      if (named === undefined) {
        named = new Map(tools.map((t) => [t.name, t]))
        byName.set(tools, named)
      }
      return named.get(own.name)?.annotations
    }
    const pinned = withDefinitionPins({
      drift: c.drift ?? 'warn',
      memory: pins,
      onDefinition: (e: DefinitionEvent) => onRecord({ type: 'definition', upstream: upstreamOf(e.tool), ...e }),
      serverOf: ownName,
      annotationsOf,
    })(
      registry(
        c.servers.map((s) => {
          const upstream = upstreams.get(s.name) as Upstream
          return { prefix: s.prefix, provider: s.tools === undefined ? upstream : curated(s.tools)(upstream) }
        }),
      ),
    )
    return {
      config: c,
      upstreams,
      upstreamOf,
      pinned,
      resolverOf: (tool) => {
        const spec = serverOf(tool)?.spec
        return spec !== undefined && hasOwn(spec, 'command') ? onThisMachine : asWritten
      },
      protect: ownFiles(c, files),
      // shared by every session; per-session state (seen-set, listed names) is built in stackOf
      namespace: c.reasons ? withReasons()(pinned) : pinned,
    }
  }
  const first = new Map(config.servers.map((s) => [s.name, startUpstream(config, s)]))
  await waitReady([...first.values()], config.listWaitMs ?? 2_000)
  let current = serving(config, first)
  // replaced by each reload, with each session's subscriptions
  const catalog = replaceableCatalog(catalogOf(config, first))

  // With a store: grants are the store's, read at each judgement, and each "always" answer goes to it; a pair is
  // said by the session that claims it first; counts reach the store after each call, off its path.
  let sharedSeen: ReadonlyArray<Rule> = store?.grants() ?? []
  // grants changed (an answer here, or from elsewhere): each session whose listing they change is told
  const grantsMoved = (): void => {
    if (store === undefined) return
    const before = sharedSeen
    const after = store.grants()
    sharedSeen = after
    if (before === after) return
    const rules = current.config.rules
    for (const link of [...links]) {
      const names = link.listed?.read()
      if (names === undefined || link.listener === undefined) continue
      const own = [...rules, ...(link.kept?.grants ?? [])]
      if (!listingDiffers(names, [...own, ...before], [...own, ...after])) continue
      try {
        link.listener()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  const shared: SharedGrants | undefined =
    store === undefined
      ? undefined
      : {
          grants: store.grants,
          addGrant: (rule) => {
            store.addGrant(rule)
            grantsMoved()
          },
        }
  const offGrants = store === undefined ? () => undefined : store.onGrantsChanged(grantsMoved)
  // a definition accepted (here, or by another replica): a held tool is served again, so every host re-lists
  const offPins = pins.onPinsChanged(notify)
  // a warning's keys are said only once the store says this process is the first to claim them; the call
  // does not wait for it
  const warnClaimed = (s: GatewayStore, w: UnknownKeyWarning, upstream: string): void =>
    void Promise.all(w.unknownKeys.map((k) => s.claim(w.tool, k).catch(() => true)))
      .then((claimed) => {
        const keys = w.unknownKeys.filter((_, i) => claimed[i] === true)
        if (keys.length === 0) return
        const suggestions = w.suggestions.filter((x) => keys.includes(x.key))
        const reported = w.keys.filter((k) => keys.includes(k.path))
        onRecord({ type: 'warning', upstream, ...w, unknownKeys: keys, keys: reported, suggestions })
      })
      // a record that cannot be written is lost, as a log write that fails is; nothing rejects unhandled
      .catch(() => undefined)
  // the audit counts each session's calls per pair; what they gained goes to the store after the calls, off their
  // path. Reading the counts costs O(pairs), and a model chooses how many pairs there are: so they are read only
  // when the session's seen-set changed (a call with no undeclared key leaves it the same object), and at most
  // once every COUNTS_EVERY_MS, however many calls come
  const countedTo = (s: GatewayStore, audited: AuditedProvider<unknown>, seen: IO<SeenSet>): Provider<unknown> => {
    let sent: ReadonlyMap<string, number> = new Map()
    let read = seen()
    let timer: NodeJS.Timeout | undefined
    let last = 0
    const flush = (): void => {
      timer = undefined
      const now = seen()
      if (now === read) return
      read = now
      last = Date.now()
      try {
        const [deltas, next] = countDeltas(sent, audited.stats())
        sent = next
        if (deltas.length > 0) s.addCounts(deltas)
      } catch {
        // counts that cannot be read or sent cost no call
      }
    }
    const after = <A>(run: () => A): A => {
      const out = run()
      if (timer === undefined) {
        timer = setTimeout(flush, Math.max(0, last + COUNTS_EVERY_MS - Date.now()))
        timer.unref()
      }
      return out
    }
    return {
      toolsForLlm: audited.toolsForLlm,
      executeToolCalls: (calls) => () => after(audited.executeToolCalls(calls)),
      executeBatch: (batch: Batch) => () => after(audited.executeBatch(batch)),
    }
  }

  const stackOf = (now: Serving, session: McpSession, kept: SessionKept, link: SessionLink): Provider<unknown> => {
    const listed = newListedNames()
    link.listed = listed
    const reached = newReached()
    // the session's seen-set in a memory of its own, so the counts above can tell by reference that it changed
    const audit = sharedUnknownKeyAudit({
      tolerate: now.config.tolerate,
      // a memory's warnings name their layer; here there is one layer, so the record is the plain warning
      onWarn: ({ via: _, ...w }) =>
        store === undefined
          ? onRecord({ type: 'warning', upstream: now.upstreamOf(w.tool), ...w })
          : warnClaimed(store, w, now.upstreamOf(w.tool)),
      onDiagnostic: (d: AuditDiagnostic) => diagnose(drawAuditDiagnostic(d)),
    })
    const audited = pipe(now.namespace, recordListed(listed), withUnknownKeyAudit(audit))
    return pipe(
      store === undefined ? audited : countedTo(store, audited, audit.memory.seen.read),
      // what comes back from under the policy reached its upstream; the rest was refused above
      markReached(reached),
      withPolicy({
        rules: now.config.rules,
        locationArgs: now.config.locationArgs,
        resolver: now.resolverOf,
        protect: now.protect,
        onAsk: session.askHuman,
        questions: kept.questions,
        grants: kept.grants,
        // a grant holds for the definition it was given under; a question shows what changed and the flags
        definitions: now.pinned.definitions,
        onGrant: (grants) => {
          kept.grants = grants
        },
        ...(shared === undefined ? {} : { shared }),
        onDecision: (d) => onRecord({ type: 'decision', upstream: now.upstreamOf(d.tool), ...d }),
        onDiagnostic: (d: PolicyDiagnostic) => diagnose(drawPolicyDiagnostic(d)),
      }),
      // outermost: a call to a tool the session was not listed (unknown, or hidden) is never asked about
      onlyListed(listed),
      // one 'call' record per call, with its outcome and time (the log's, and the metrics')
      observeCalls(listed, reached, (c) => onRecord({ type: 'call', upstream: now.upstreamOf(c.tool), ...c })),
    )
  }

  // A session's stack is built again, at its next listing or call, after a reload: the new rules, tolerate,
  // locationArgs, reasons and curation judge it from then on. Its question queue and its "always" answers (the
  // grants) are kept; its audit's seen-set and listed names are not: a misspelling already said is said once
  // more, and the new stack lists before its first call.
  const stackFor = (session: McpSession, link: SessionLink): Provider<unknown> => {
    // one host, one human: a call that would be asked about while its question is open is refused at once (the
    // host's own elicitation handler may be the caller, and would wait for itself)
    const kept: SessionKept = { questions: newQuestionQueue({ whileOpen: 'refuse' }), grants: [] }
    link.kept = kept
    let built: { readonly from: Serving; readonly stack: Provider<unknown> } | undefined
    const stackNow = (): Provider<unknown> => {
      const now = current
      if (built?.from === now) return built.stack
      const stack = stackOf(now, session, kept, link)
      built = { from: now, stack }
      return stack
    }
    return {
      toolsForLlm: () => stackNow().toolsForLlm(),
      executeToolCalls: (calls) => () => stackNow().executeToolCalls(calls)(),
    }
  }

  const toolsChanged = (listener: IO<void>): IO<void> => {
    subscriptions.set(listener, new Map())
    for (const upstream of current.upstreams.values()) subscribe(listener, upstream)
    return () => {
      for (const off of subscriptions.get(listener)?.values() ?? []) off()
      subscriptions.delete(listener)
    }
  }

  // a host's roots changed: every upstream may have read them (relay.ts routes roots/list to a host)
  const rootsChanged = (): void => {
    for (const u of current.upstreams.values()) u.rootsChanged()
  }

  const readiness = (): Readiness => {
    const now = current
    const states = now.config.servers.map((s) => ({
      name: s.name,
      up: (now.upstreams.get(s.name) as Upstream).isUp(),
      required: s.required ?? true,
    }))
    return { ready: states.every((s) => s.up || !s.required), upstreams: states }
  }

  // reloads and the close run one at a time, in order
  let queue: Promise<unknown> = Promise.resolve()
  let closed = false
  const inTurn = <A>(step: () => Promise<A>): Promise<A> => {
    const run = queue.then(step)
    queue = run.catch(() => undefined)
    return run
  }

  const reload = (next: GatewayConfig): Promise<ConfigChange> =>
    inTurn(async () => {
      if (closed) throw new Error('the gateway is closed')
      const before = current
      if (next.store !== config.store)
        diagnose(
          'toolstack serve: the configuration names another store; the store opened at start is kept until the gateway restarts',
        )
      const change = diffConfigs(before.config)(next)
      // stopped before their successors start: two copies of one server may not share its files
      await Promise.all([...change.removed, ...change.restarted].map((n) => stopUpstream(before.upstreams.get(n))))
      const fresh = new Set([...change.added, ...change.restarted])
      const upstreams = new Map(
        next.servers.map((s) => [
          s.name,
          fresh.has(s.name) ? startUpstream(next, s) : (before.upstreams.get(s.name) as Upstream),
        ]),
      )
      current = serving(next, upstreams)
      catalog.replace(catalogOf(next, upstreams))
      await waitReady(
        [...fresh].map((n) => upstreams.get(n) as Upstream),
        next.listWaitMs ?? 2_000,
      )
      onRecord({ type: 'reload', outcome: 'reloaded', ...change })
      if (change.listChanged) notify()
      return change
    })

  return {
    get upstreams() {
      return [...current.upstreams.values()]
    },
    readiness,
    newServer: () => {
      const link: SessionLink = { listener: undefined, kept: undefined, listed: undefined }
      // what the gateway fronts now, said to each host as it initializes
      const fronts = current.config.servers.map((s) => ({
        name: s.name,
        server: current.upstreams.get(s.name)?.client()?.getServerVersion(),
      }))
      const server = toMcpServer((session) => stackFor(session, link), gatewayInfo(info, fronts), {
        toolsChanged: (listener) => {
          const off = toolsChanged(listener)
          if (store === undefined) return off
          link.listener = listener
          links.add(link)
          return () => {
            links.delete(link)
            off()
          }
        },
        rootsChanged,
        resources: catalog.resources,
        prompts: catalog.prompts,
        completions: catalog.complete,
        logging: logs,
      })
      // the host session's own upstream sessions end with it
      const previous = server.onclose
      server.onclose = () => {
        previous?.()
        for (const u of current.upstreams.values()) u.endSession(server)
      }
      return server
    },
    reload,
    stats: () => (store === undefined ? Promise.resolve([]) : store.stats()),
    definitions: () => {
      const now = current
      return now.pinned.standings().map((s) => ({ ...s, upstream: now.upstreamOf(s.tool) }))
    },
    acceptDefinition: async (tool, hash) => {
      const accepted = await current.pinned.accept(tool, hash)
      if (accepted._tag === 'Right')
        diagnose(
          `toolstack serve: the definition of ${JSON.stringify(cut(escapeControls(tool), 200))} (${accepted.right.hash}) is accepted`,
        )
      return accepted
    },
    close: () =>
      inTurn(async () => {
        closed = true
        offGrants()
        offPins()
        offLevel()
        catalog.close()
        await Promise.all([...current.upstreams.values()].map(stopUpstream))
        await store?.close()
      }),
  }
}
