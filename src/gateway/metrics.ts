/**
 * A gateway's metrics in the Prometheus text format, for `GET /metrics`: a fold over its records (calls,
 * warnings, questions, restarts), plus two gauges read at each scrape (open sessions, upstreams up). A model
 * chooses the tools it calls and the keys it sends, so every label value is cut and escaped, a tool the
 * session was not listed is `(unknown)`, and the label sets a model can grow are capped.
 *
 * `prom-client` is loaded when metrics are made, not with this module: a gateway served over stdio never loads
 * it. Each gateway has a registry of its own, never prom-client's global one.
 *
 * @since 0.1.0
 */
import type { Registry } from 'prom-client'
import { cut, escapeControls } from '../kernel/describe.js'
import type { GatewayRecord } from './gateway.js'
import type { Readiness } from '../mcp/serve.js'
import type { PairCount } from './stores/store.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What `GET /metrics` answers.
 *
 * @since 0.1.0
 * @category model
 */
export interface MetricsText {
  readonly contentType: string
  readonly body: string
}

/**
 * @since 0.1.0
 * @category model
 */
export interface GatewayMetricsOptions {
  /** How many sessions are open now (`serveHttp`'s `sessions`); read at each scrape. */
  readonly sessions?: () => number
  /** The gateway's `readiness`; each upstream's `up` is read at each scrape. */
  readonly readiness?: () => Readiness
  /** The gateway's `stats` (its store's counts, summed over every process sharing it); read at each scrape. */
  readonly stats?: () => Promise<ReadonlyArray<PairCount>>
  /**
   * The most label sets of calls (upstream, tool) and of warnings (tool, key) each; past it, new ones are
   * counted under `(other)`. Default 1 000.
   */
  readonly maxSeries?: number
}

/**
 * A gateway's metrics: `record` folds a record in (give it every record, e.g. from `startGateway`'s
 * `onRecord`), `scrape` renders them all.
 *
 * @since 0.1.0
 * @category model
 */
export interface GatewayMetrics {
  readonly record: (record: GatewayRecord) => void
  readonly scrape: () => Promise<MetricsText>
  /** The registry they are in, e.g. to merge with an application's own. */
  readonly registry: Registry
}

// the label value of a tool the session was not listed, and of what is counted past a cap
const UNKNOWN_TOOL = '(unknown)'
const OTHER = '(other)'

// a label value is cut at this many characters (then escaped)
const MAX_LABEL = 200
// seconds: a call that asks the human can take minutes
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// a label value from text a model or an upstream chose: cut, control characters escaped
const labelValue = (s: string): string => escapeControls(cut(s, MAX_LABEL))

/** What a question's decision says of the human's answer; `undefined` for a decision no one was asked about. */
const answerLabel = (r: Extract<GatewayRecord, { type: 'decision' }>): string | undefined => {
  if (r.by === 'nobody') return 'unasked'
  if (r.by !== 'human') return undefined
  if (r.outcome === 'allowed') return 'allowed'
  return r.refusal === 'DeclinedByUser' ? 'declined' : 'failed'
}

// a set of label sets that stops growing at `max`: whether `key` is (now) in it
const admit =
  (max: number) =>
  (seen: Set<string>, key: string): boolean => {
    if (seen.has(key)) return true
    if (seen.size >= max) return false
    seen.add(key)
    return true
  }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Makes a gateway's metrics, in a registry of their own, and loads `prom-client` to do so:
 *
 * - `toolstack_calls_total{upstream, tool, outcome}`: calls, `outcome` one of `ok`, `error`, `refused`;
 * - `toolstack_call_duration_seconds{upstream, tool}`: a histogram of the calls' time;
 * - `toolstack_undeclared_keys_total{tool, key}`: undeclared-key warnings (each once per session, tool and key);
 * - `toolstack_questions_total{answer}`: questions to the human, `answer` one of `allowed`, `declined`,
 *   `failed` (no answer, or one that could not be read), `unasked` (no one could be asked);
 * - `toolstack_upstream_restarts_total{upstream}`; `toolstack_upstream_up{upstream}` (1 or 0);
 * - `toolstack_http_sessions`: the sessions open now;
 * - with `stats`, `toolstack_undeclared_key_calls{tool, key}`: calls that carried each undeclared key, as the store
 *   sums them over every process sharing it (a gauge read at each scrape).
 *
 * @example
 * import { gatewayMetrics } from 'toolstack/gateway'
 * const metrics = await gatewayMetrics({ sessions: () => 2 })
 * metrics.record({ type: 'call', upstream: 'fs', tool: 'fs_read', listed: true, id: '1', outcome: 'ok', ms: 3 })
 * const { body } = await metrics.scrape()
 * assert.ok(body.includes('toolstack_calls_total{upstream="fs",tool="fs_read",outcome="ok"} 1'))
 * assert.ok(body.includes('toolstack_http_sessions 2'))
 *
 * @since 0.1.0
 * @category constructors
 */
export const gatewayMetrics = async (options: GatewayMetricsOptions = {}): Promise<GatewayMetrics> => {
  const prom = await import('prom-client')
  const registry = new prom.Registry()
  const registers = [registry]
  const admitted = admit(options.maxSeries ?? 1_000)
  const callSeries = new Set<string>()
  const warningSeries = new Set<string>()

  const calls = new prom.Counter({
    name: 'toolstack_calls_total',
    help: 'Tool calls by upstream, tool and outcome (ok, error: the upstream answered with an error or failed, refused: the gateway answered)',
    labelNames: ['upstream', 'tool', 'outcome'] as const,
    registers,
  })
  const latency = new prom.Histogram({
    name: 'toolstack_call_duration_seconds',
    help: 'Time of a tool call through the gateway, questions to the human included',
    labelNames: ['upstream', 'tool'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const warnings = new prom.Counter({
    name: 'toolstack_undeclared_keys_total',
    help: 'Undeclared argument keys the audit warned of, once per session, tool and key',
    labelNames: ['tool', 'key'] as const,
    registers,
  })
  const questions = new prom.Counter({
    name: 'toolstack_questions_total',
    help: 'Questions to the human by answer (allowed, declined, failed, unasked: no one could be asked)',
    labelNames: ['answer'] as const,
    registers,
  })
  const definitions = new prom.Counter({
    name: 'toolstack_definition_changes_total',
    help:
      'Tool definitions changed since they were pinned (by what follows: warn, hold, refuse) or flagged when ' +
      'pinned (flagged), each said once per (tool, definition)',
    labelNames: ['upstream', 'action'] as const,
    registers,
  })
  const restarts = new prom.Counter({
    name: 'toolstack_upstream_restarts_total',
    help: 'Restarts of an upstream server',
    labelNames: ['upstream'] as const,
    registers,
  })
  const { sessions, readiness, stats } = options
  const maxSeries = options.maxSeries ?? 1_000
  if (stats !== undefined)
    new prom.Gauge({
      name: 'toolstack_undeclared_key_calls',
      help: "Calls that carried an undeclared key, by tool and key, summed by the gateway's store over every process sharing it",
      labelNames: ['tool', 'key'] as const,
      registers,
      async collect() {
        let counts: ReadonlyArray<PairCount>
        try {
          counts = await stats()
        } catch {
          // a store that cannot answer now leaves the last values
          return
        }
        this.reset()
        // the same bound as the counters': past it, the rest is summed under (other)
        let other = 0
        counts.forEach((c, i) => {
          if (i < maxSeries) this.set({ tool: labelValue(c.tool), key: labelValue(c.key) }, c.calls)
          else other += c.calls
        })
        if (other > 0) this.set({ tool: OTHER, key: OTHER }, other)
      },
    })
  new prom.Gauge({
    name: 'toolstack_http_sessions',
    help: 'HTTP sessions open now',
    registers,
    collect() {
      if (sessions !== undefined) this.set(sessions())
    },
  })
  new prom.Gauge({
    name: 'toolstack_upstream_up',
    help: 'Whether an upstream server is up (1) or not (0)',
    labelNames: ['upstream'] as const,
    registers,
    collect() {
      const upstreams = readiness?.()['upstreams']
      this.reset()
      if (!Array.isArray(upstreams)) return
      for (const u of upstreams as ReadonlyArray<{ readonly name?: unknown; readonly up?: unknown }>)
        if (typeof u?.name === 'string') this.set({ upstream: labelValue(u.name) }, u.up === true ? 1 : 0)
    },
  })

  const record = (r: GatewayRecord): void => {
    switch (r.type) {
      case 'call': {
        const tool = r.listed ? labelValue(r.tool) : UNKNOWN_TOOL
        const upstream = labelValue(r.upstream)
        const pair = admitted(callSeries, JSON.stringify([upstream, tool]))
          ? { upstream, tool }
          : { upstream: OTHER, tool: OTHER }
        calls.inc({ ...pair, outcome: r.outcome })
        latency.observe(pair, r.ms / 1000)
        return
      }
      case 'warning':
        for (const k of r.unknownKeys) {
          const tool = labelValue(r.tool)
          const key = labelValue(k)
          warnings.inc(
            admitted(warningSeries, JSON.stringify([tool, key])) ? { tool, key } : { tool: OTHER, key: OTHER },
          )
        }
        return
      case 'decision': {
        const answer = answerLabel(r)
        if (answer !== undefined) questions.inc({ answer })
        return
      }
      case 'upstream':
        if (r._tag === 'Restarting') restarts.inc({ upstream: labelValue(r.upstream) })
        return
      case 'definition':
        // by upstream only: a server chooses its tools' names, and how many definitions it shows
        definitions.inc({
          upstream: labelValue(r.upstream),
          action: r._tag === 'DefinitionChanged' ? r.action : 'flagged',
        })
        return
    }
    // a diagnostic or a reload counts nothing; a new kind of record fails to compile here until it is placed above
    const countsNothing: 'diagnostic' | 'reload' = r.type
    void countsNothing
  }

  return {
    record: (r) => {
      try {
        record(r)
      } catch {
        // a metric that cannot be counted must not fail the call it counts
      }
    },
    scrape: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
    registry,
  }
}
