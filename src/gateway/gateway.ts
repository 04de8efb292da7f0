/**
 * The gateway behind `toolstack serve`: several upstream MCP servers under one namespace, served to a
 * host as one MCP server with the whole stack on every session (the audit, a `reason` on every call,
 * and a permission policy that asks the host's own human). The configuration uses the `mcpServers`
 * shape hosts already use.
 *
 * One file: over 500 lines because `startGateway` is one closure over what runs now (upstreams, sessions, the
 * store, grants, what the page shows), which a reload replaces in one step; its pieces are the modules beside it
 * (config, reload, catalog, listed, observed, heard, the stores).
 *
 * @since 0.1.0
 */
import { resolve as resolvePath } from 'node:path'
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { Either } from 'fp-ts/lib/Either.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Batch, Provider } from '../kernel/model.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import type { AuditDiagnostic, AuditedProvider } from '../combinators/UnknownKeys.js'
import { drawAuditDiagnostic, sharedUnknownKeyAudit, withUnknownKeyAudit } from '../combinators/UnknownKeys.js'
import { withReasons } from '../combinators/Reasons.js'
import { registry } from '../combinators/Registry.js'
import type { PolicyDecision, PolicyDiagnostic, SharedGrants } from '../combinators/Policy.js'
import { drawPolicyDiagnostic, withPolicy } from '../combinators/Policy.js'
import type { PinnedProvider } from '../combinators/Pins.js'
import { newPinMemory, withDefinitionPins } from '../combinators/Pins.js'
import type { DefinitionEvent } from '../steps/pins/Events.js'
import type { ServerOf, Standing } from '../steps/pins/Review.js'
import type { Pin } from '../steps/pins/Definition.js'
import type { McpTool } from '../mcp/client.js'
import type { Rule } from '../steps/policy/Rule.js'
import { drawRule, isBareDeny, matchesTool } from '../steps/policy/Rule.js'
import type { QuestionQueue } from '../steps/policy/questions.js'
import type { OnAsk } from '../steps/policy/ask.js'
import { newQuestionQueue } from '../steps/policy/questions.js'
import type { ProtectedFile } from '../steps/policy/evaluate.js'
import type { LocationResolver } from '../kernel/resolve.js'
import { filesystemResolver, lexicalResolver } from '../kernel/resolve.js'
import { cut, escapeControls } from '../kernel/describe.js'
import { hasOwn } from '../kernel/guards.js'
import { longestTagOf, namespaceOf } from '../kernel/longest.js'
import type { McpSession } from '../mcp/server.js'
import type { Readiness } from '../mcp/serve.js'
import { toMcpServer } from '../mcp/server.js'
import type { Upstream, UpstreamEvent, UpstreamStatus } from './upstream.js'
import { superviseUpstream } from './upstream.js'
import { curated, isServed, newListedNames, onlyListed, recordListed } from './listed.js'
import type { ObservedCall } from './observed.js'
import { markReached, newReached, observeCalls } from './observed.js'
import { answerSendable } from '../mcp/sendable.js'
import type { Heard, Pending, RecentDecision } from './heard.js'
import { answered, asked, emptyHeard, hearCounts, hearWarning, noPending, remember } from './heard.js'
import type { Catalog } from './catalog.js'
import { newCatalog, replaceableCatalog } from './catalog.js'
import type { ConfigChange } from './reload.js'
import { diffConfigs, sessionsOf } from './reload.js'
import type { ListedNames } from './listed.js'
import type { GatewayStore, PairCount } from './stores/store.js'
import { openStore, storeFileOf } from './stores/openStore.js'
import { grantId } from './stores/store.js'
import { mergeGrants } from './stores/memoryStore.js'
import { newLogHub } from '../mcp/logging.js'
import { forgetGrant, showText } from '../steps/policy/Answer.js'
import type { GatewayConfig, GatewayServer } from './config.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

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
   * next calls by the new rules, tolerate, locationArgs, caseInsensitive, reasons and curation, and are told `list_changed`
   * when their tools may differ. Records a `reload` record; reloads run one at a time.
   */
  readonly reload: (config: GatewayConfig) => Promise<ConfigChange>
  /** The store's counts of calls per (tool, undeclared key), summed over every process sharing it; `[]` without a store. */
  readonly stats: () => Promise<ReadonlyArray<PairCount>>
  /**
   * Resolves once every upstream of the first configuration has listed its tools or failed to start, or once
   * `startupMs` has passed (for a start summary). Until then, a listing waits for the upstreams still starting.
   */
  readonly started: Promise<void>
  /** Each upstream of the configuration in force, in its order, with the tools it serves under its prefix. */
  readonly status: IO<ReadonlyArray<GatewayUpstreamStatus>>
  /** The grants held now: the store's, or without a store each open session's own. */
  readonly grants: IO<ReadonlyArray<HeldGrant>>
  /**
   * Takes back the grant named `id` (its `grantId`): from the store (and so from every process sharing it) and from
   * every session that holds it, whose next call is judged without it; a diagnostic says so, naming `by`. Returns
   * the rule taken back, `undefined` when no grant has that id.
   */
  readonly revokeGrant: (id: string, by: string) => Rule | undefined
  /** What the audit heard in this process: each undeclared (tool, key) pair, with its calls and first call. */
  readonly heard: IO<Heard>
  /** The guard's latest decisions in this process, oldest first (at most `MAX_RECENT`). */
  readonly recent: IO<ReadonlyArray<RecentDecision>>
  /** The questions put to a host's human in this process and not answered yet. */
  readonly pending: IO<Pending>
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
 * A grant a running gateway holds: an "always" answer, as a rule.
 *
 * @since 0.1.0
 * @category model
 */
export interface HeldGrant {
  readonly rule: Rule
  /** Its `grantId`: how it is named to take it back. */
  readonly id: string
  /** How many open sessions hold it as their own answer (with a store, every session also reads the store's). */
  readonly sessions: number
  /** Whether it is in the gateway's store (shared by every session, and every process on the store). */
  readonly stored: boolean
}

/**
 * One upstream of a running gateway, as a start summary or a page shows it.
 *
 * @since 0.1.0
 * @category model
 */
export interface GatewayUpstreamStatus {
  readonly name: string
  readonly prefix: string
  readonly required: boolean
  readonly state: UpstreamStatus['state']
  readonly pid?: number
  readonly restarts: number
  readonly why?: string
  /** The tools it serves (its configuration's `tools` applied), by the names hosts call them. */
  readonly tools: ReadonlyArray<{ readonly name: string; readonly description?: string }>
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

// lines upstreams write to stderr that say nothing wrong, each said once per upstream with why (the reference
// filesystem server asks for roots when it starts: the gateway can answer only once a host with roots has called)
const HARMLESS: ReadonlyArray<{ readonly pattern: RegExp; readonly why: string }> = [
  {
    pattern: /^Failed to request initial roots from client/,
    why:
      'harmless: it asks for the roots of a host before any host with roots has called it, and keeps its ' +
      'own directories; said once',
  },
]
// how often a session's counts may be read and sent to the store (each read costs O(pairs))
const COUNTS_EVERY_MS = 1_000
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

// what the gateway knows of one session, to tell it `list_changed` when grants from elsewhere change its listing,
// and to take a grant back from it: its listener, the human's "always" answers it keeps across reloads, how many
// of those were taken back (each builds its stack again: the policy holds its own copy), and the names its stack
// was last listed; one immutable record in a ref, replaced in one step
interface SessionState {
  readonly listener: IO<void> | undefined
  readonly grants: ReadonlyArray<Rule>
  readonly taken: number
  readonly listed: ListedNames | undefined
}
type SessionLink = IORef<SessionState>

// a grant taken back from one session: the same state when it held none of them
const withoutGrants =
  (removed: ReadonlyArray<Rule>) =>
  (s: SessionState): SessionState => {
    const grants = removed.reduce((gs, r) => forgetGrant(r)(gs), s.grants)
    return grants === s.grants ? s : { ...s, grants, taken: s.taken + 1 }
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
  const file = config.store === undefined ? undefined : storeFileOf(config.store)
  const store = file === undefined ? undefined : at(file)
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
 * Opens the store, starts every upstream at once, waits until each has started or failed (a failed one keeps
 * being restarted), or `listWaitMs` has passed, and returns a gateway whose `newServer` makes a server for one
 * host session, with a stack of its own: `registry` over the upstreams, then `withReasons` (unless `reasons` is
 * false), `withUnknownKeyAudit`, and `withPolicy` asking the session's human through elicitation. Until every
 * upstream has listed or failed once (`started`), or `startupMs` has passed, a listing waits for those still
 * starting. `reload` applies a new configuration without dropping a session (docs/serve.md, "Reloading").
 *
 * @since 0.1.0
 * @category constructors
 */
export const startGateway = async (
  config: GatewayConfig,
  record: (record: GatewayRecord) => void,
  info: { readonly name: string; readonly version: string } = { name: 'toolstack', version: '0.1.0' },
  files: GatewayFiles = {},
): Promise<Gateway> => {
  // what a page shows, kept from the records as they pass: what the alarm heard, the guard's latest decisions
  let heard: Heard = emptyHeard
  let recent: ReadonlyArray<RecentDecision> = []
  const onRecord = (r: GatewayRecord): void => {
    if (r.type === 'warning') heard = hearWarning(r, r.upstream, Date.now())(heard)
    else if (r.type === 'decision') {
      const { tool, id, upstream, outcome, by, refusal } = r
      recent = remember({
        time: Date.now(),
        tool,
        id,
        upstream,
        outcome,
        by,
        ...(refusal === undefined ? {} : { refusal }),
      })(recent)
    } else if (r.type === 'call' && !r.listed && r.outcome === 'refused') {
      const { tool, id, upstream } = r
      recent = remember({ time: Date.now(), tool, id, upstream, outcome: 'refused', by: 'unlisted' })(recent)
    }
    record(r)
  }
  // the questions open now, each under a number of its own
  let pending: Pending = noPending
  let questionsAsked = 0
  const trackedWhileOpen =
    (ask: OnAsk, upstreamOf: (tool: string) => string): OnAsk =>
    async (request) => {
      const n = ++questionsAsked
      const { tool, paths } = request
      pending = asked(n, { since: Date.now(), tool, id: request.call.id, upstream: upstreamOf(tool), paths })(pending)
      try {
        const answer = ask(request)
        return await (typeof answer === 'function' ? answer() : answer)
      } finally {
        pending = answered(n)(pending)
      }
    }
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
  // what an upstream says that is no trouble is said once per upstream, with why
  const saidHarmless = new Set<string>()
  const upstreamEvent = (e: UpstreamEvent): void => {
    if (e._tag === 'Stderr') {
      const known = HARMLESS.findIndex((h) => h.pattern.test(e.line))
      if (known >= 0) {
        const key = `${e.upstream}\u0000${known}`
        if (saidHarmless.has(key)) return
        saidHarmless.add(key)
        return onRecord({ type: 'upstream', ...e, line: `${e.line} (${HARMLESS[known]?.why ?? ''})` })
      }
    }
    onRecord({ type: 'upstream', ...e })
  }
  const startUpstream = (c: GatewayConfig, s: GatewayServer): Upstream => {
    const timeout = s.timeout ?? c.timeout
    const upstream = superviseUpstream(s.name, s.spec, {
      onEvent: upstreamEvent,
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
  const waitReady = async (upstreams: ReadonlyArray<Pick<Upstream, 'ready'>>, ms: number): Promise<void> => {
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

  // what sessions are served from; one ref, replaced whole by a reload, so a session sees one configuration
  const serving = (c: GatewayConfig, upstreams: ReadonlyMap<string, Upstream>): Serving => {
    // a command upstream runs here and shares this filesystem: its locations are judged where they lead, case
    // folded where the volume ignores case (or where the configuration says the server's does)
    const onThisMachine = filesystemResolver({ caseInsensitive: c.caseInsensitive ?? 'detect' })
    const asWritten = lexicalResolver({ caseInsensitive: c.caseInsensitive === true })
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
  let current = serving(config, first)
  // The start-up window: until every upstream has listed or failed once, or startupMs has passed, a listing waits
  // for the upstreams still starting, so a host that lists once (and ignores list_changed) gets their tools; one
  // that hangs holds no listing past the window. The gateway serves meanwhile: a host's initialize is answered.
  const startupMs = config.startupMs ?? 30_000
  const startupEnds = Date.now() + startupMs
  let startingUp = true
  const started = waitReady([...first.values()], startupMs).then(() => {
    startingUp = false
  })
  // as before the window existed: the gateway resolves once each upstream has started or failed, or listWaitMs has
  // passed (a host's initialize waits no longer than that; its first listing waits for the window)
  await waitReady([...first.values()], config.listWaitMs ?? 2_000)
  const startupWait = async (): Promise<void> => {
    if (!startingUp) return
    const starting = [...current.upstreams.values()].filter((u) => u.status().state === 'starting')
    if (starting.length > 0)
      await waitReady(
        starting.map((u) => ({ ready: u.settled() })),
        startupEnds - Date.now(),
      )
  }
  // replaced by each reload, with each session's subscriptions
  const catalog = replaceableCatalog(catalogOf(config, first))

  // With a store: grants are the store's, read at each judgement, and each "always" answer goes to it; a pair is
  // said by the session that claims it first; counts reach the store after each call, off its path.
  let sharedSeen: ReadonlyArray<Rule> = store?.grants() ?? []
  // a grant taken back leaves every session that holds it as its own too (its policy keeps a copy): their stacks
  // are built again, at their next listing or call
  const takeBack = (removed: ReadonlyArray<Rule>): void => {
    for (const link of links) link.modify(withoutGrants(removed))()
  }
  // grants changed (an answer here, one taken back, or either from elsewhere): each session whose listing they change
  // is told
  const grantsMoved = (taken: ReadonlyArray<Rule> = []): void => {
    const before = sharedSeen
    const after = store?.grants() ?? []
    sharedSeen = after
    const removed = [...before.filter((g) => forgetGrant(g)(after) === after), ...taken]
    const owned = new Map([...links].map((l) => [l, l.read().grants] as const))
    takeBack(removed)
    if (before === after && removed.length === 0) return
    const rules = current.config.rules
    for (const link of [...links]) {
      const { listed, listener, grants } = link.read()
      const names = listed?.read()
      if (names === undefined || listener === undefined) continue
      const was = [...rules, ...(owned.get(link) ?? []), ...before]
      const is = [...rules, ...grants, ...after]
      if (!listingDiffers(names, was, is)) continue
      try {
        listener()
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  // the grants held now: the store's, or without one each session's own; with how many sessions hold each as theirs
  const heldGrants = (): ReadonlyArray<HeldGrant> => {
    const own = [...links].flatMap((l) => l.read().grants)
    const all = mergeGrants(store?.grants() ?? [], own)
    return all.map((rule) => ({
      rule,
      id: grantId(rule),
      sessions: [...links].filter((l) => l.read().grants.some((g) => grantId(g) === grantId(rule))).length,
      stored: store !== undefined,
    }))
  }
  const revokeGrant = (id: string, by: string): Rule | undefined => {
    const held = heldGrants().find((h) => h.id === id)
    if (held === undefined) return undefined
    store?.revokeGrant(held.rule)
    grantsMoved([held.rule])
    diagnose(`toolstack serve: a grant was taken back (${by}): ${showText(drawRule(held.rule), 500).text}`)
    return held.rule
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
  const offGrants = store === undefined ? () => undefined : store.onGrantsChanged(() => grantsMoved())
  // a definition accepted (here, or by another replica): a held tool is served again, so every host re-lists
  const offPins = pins.onPinsChanged(notify)
  // a warning's keys are said only once the store says this process is the first to claim them; the call
  // does not wait for it
  const warnClaimed = (s: GatewayStore, w: UnknownKeyWarning, upstream: string): void =>
    void Promise.all(w.unknownKeys.map((k) => s.claim(w.tool, k).catch(() => true)))
      .then((claimed) => {
        const keys = w.unknownKeys.filter((_, i) => claimed[i] === true)
        if (keys.length === 0) return
        // a Set: a warning carries up to MAX_FOUND keys, and `includes` per key would be quadratic in them
        const mine = new Set(keys)
        const suggestions = w.suggestions.filter((x) => mine.has(x.key))
        const reported = w.keys.filter((k) => mine.has(k.path))
        onRecord({ type: 'warning', upstream, ...w, unknownKeys: keys, keys: reported, suggestions })
      })
      // a record that cannot be written is lost, as a log write that fails is; nothing rejects unhandled
      .catch(() => undefined)
  // the audit counts each session's calls per pair; what they gained goes to the store after the calls, off their
  // path. Reading the counts costs O(pairs), and a model chooses how many pairs there are: so they are read only
  // when the session's seen-set changed (a call with no undeclared key leaves it the same object), and at most
  // once every COUNTS_EVERY_MS, however many calls come
  const counted = (deltas: ReadonlyArray<PairCount>): void => {
    heard = hearCounts(deltas)(heard)
    store?.addCounts(deltas)
  }
  const countedTo = (
    addCounts: (deltas: ReadonlyArray<PairCount>) => void,
    audited: AuditedProvider<unknown>,
  ): Provider<unknown> => {
    let sent: ReadonlyMap<string, number> = new Map()
    let timer: NodeJS.Timeout | undefined
    let last = 0
    // read after calls only, at most once a second: a repeated pair is counted in its own cell of the same
    // seen-set, so the set being the same object says nothing about its counts
    const flush = (): void => {
      timer = undefined
      last = Date.now()
      try {
        const [deltas, next] = countDeltas(sent, audited.stats())
        sent = next
        if (deltas.length > 0) addCounts(deltas)
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

  const stackOf = (
    now: Serving,
    session: McpSession,
    questions: QuestionQueue,
    link: SessionLink,
  ): Provider<unknown> => {
    const listed = newListedNames()
    link.modify((s) => ({ ...s, listed }))()
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
      countedTo(counted, audited),
      // a result too deep to be sent is an error, answered and logged as one
      answerSendable,
      // what comes back from under the policy reached its upstream; the rest was refused above
      markReached(reached),
      withPolicy({
        rules: now.config.rules,
        locationArgs: now.config.locationArgs,
        resolver: now.resolverOf,
        protect: now.protect,
        onAsk: session.askHuman === undefined ? undefined : trackedWhileOpen(session.askHuman, now.upstreamOf),
        questions,
        grants: link.read().grants,
        // a grant holds for the definition it was given under; a question shows what changed and the flags
        definitions: now.pinned.definitions,
        onGrant: (grants) => link.modify((s) => ({ ...s, grants }))(),
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
  // locationArgs, caseInsensitive, reasons and curation judge it from then on. Its question queue and its "always" answers (the
  // grants) are kept; its audit's seen-set and listed names are not: a misspelling already said is said once
  // more, and the new stack lists before its first call.
  const stackFor = (session: McpSession, link: SessionLink): Provider<unknown> => {
    // one host, one human: a call that would be asked about while its question is open is refused at once (the
    // host's own elicitation handler may be the caller, and would wait for itself)
    const questions = newQuestionQueue({ whileOpen: 'refuse' })
    let built: { readonly from: Serving; readonly taken: number; readonly stack: Provider<unknown> } | undefined
    const stackNow = (): Provider<unknown> => {
      const now = current
      const { taken } = link.read()
      if (built?.from === now && built.taken === taken) return built.stack
      const stack = stackOf(now, session, questions, link)
      built = { from: now, taken, stack }
      return stack
    }
    return {
      toolsForLlm: () => startupWait().then(() => stackNow().toolsForLlm()),
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
      const link: SessionLink = newIORef<SessionState>({
        listener: undefined,
        grants: [],
        taken: 0,
        listed: undefined,
      })()
      // what the gateway fronts now, said to each host as it initializes
      const fronts = current.config.servers.map((s) => ({
        name: s.name,
        server: current.upstreams.get(s.name)?.client()?.getServerVersion(),
      }))
      const server = toMcpServer((session) => stackFor(session, link), gatewayInfo(info, fronts), {
        toolsChanged: (listener) => {
          const off = toolsChanged(listener)
          link.modify((s) => ({ ...s, listener }))()
          links.add(link)
          return () => {
            links.delete(link)
            off()
          }
        },
        rootsChanged,
        // what an upstream still starting lists is waited for too, as its tools are
        resources: {
          ...catalog.resources,
          list: () => startupWait().then(catalog.resources.list),
          listTemplates: () => startupWait().then(catalog.resources.listTemplates),
          read: (uri) => startupWait().then(() => catalog.resources.read(uri)),
        },
        prompts: {
          ...catalog.prompts,
          list: () => startupWait().then(catalog.prompts.list),
          get: (name, args) => startupWait().then(() => catalog.prompts.get(name, args)),
        },
        completions: (params) => startupWait().then(() => catalog.complete(params)),
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
    started,
    grants: heldGrants,
    revokeGrant,
    heard: () => heard,
    recent: () => recent,
    pending: () => pending,
    status: () => {
      const now = current
      return now.config.servers.map((s): GatewayUpstreamStatus => {
        const st = (now.upstreams.get(s.name) as Upstream).status()
        const served = s.tools === undefined ? () => true : isServed(s.tools)
        return {
          name: s.name,
          prefix: s.prefix,
          required: s.required ?? true,
          state: st.state,
          ...(st.pid === undefined ? {} : { pid: st.pid }),
          restarts: st.restarts,
          ...(st.why === undefined ? {} : { why: st.why }),
          tools: st.tools
            .filter((d) => served(d.function.name))
            .map((d) => ({
              name: namespaceOf(s.prefix) + d.function.name,
              ...(typeof d.function.description === 'string' ? { description: d.function.description } : {}),
            })),
        }
      })
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
