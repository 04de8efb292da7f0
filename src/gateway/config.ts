/**
 * The configuration of `toolstack serve`: the `mcpServers` shape hosts already use, with the rules, the store and
 * the bounds, read from untrusted JSON into a `GatewayConfig` with every problem named at once.
 *
 * @since 0.1.0
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import { locationNames } from '../steps/policy/options.js'
import type { Rule } from '../steps/policy/Rule.js'
import { decodeRules, isToolGlob } from '../steps/policy/Rule.js'
import { describeValue } from '../kernel/describe.js'
import { hasOwn, isRecord } from '../kernel/guards.js'
import { MAX_TIMER_MS, didYouMean } from '../kernel/options.js'
import type { UpstreamSpec } from './upstream.js'
import type { DriftAction } from '../steps/pins/Review.js'
import type { Curation } from './listed.js'
import { storeKindOf } from './stores/openStore.js'

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
  /**
   * Whether the policy folds case before comparing locations: `true` where the servers' volumes ignore case
   * (and detection, which needs a name with a letter, cannot tell), `false` never; absent: detected per volume
   * for a command upstream, never for a `url` one.
   */
  readonly caseInsensitive?: boolean
  readonly reasons: boolean
  /** Where the JSON Lines log goes, if anywhere. */
  readonly log: string | undefined
  /** Milliseconds each request to an upstream may take, unless its entry says otherwise (the SDK's 60 s when absent). */
  readonly timeout?: number
  /**
   * Milliseconds a listing waits for an upstream that is slow to list again (and a reload for the upstreams it
   * starts) before it serves what is ready; a late upstream's tools are announced (`list_changed`) when they
   * arrive. Default 2 000.
   */
  readonly listWaitMs?: number
  /**
   * Milliseconds from the gateway's start during which a listing waits for the upstreams still starting (launched,
   * not yet listed), so that the first listing has their tools; one that does not answer within it never delays a
   * listing beyond it. Default 30 000.
   */
  readonly startupMs?: number
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

// -------------------------------------------------------------------------------------
// decoding
// -------------------------------------------------------------------------------------

const ALPHABET = /^[A-Za-z0-9_-]+$/
/**
 * Every member of the configuration, in the order its errors name them.
 *
 * @since 0.1.0
 * @category decoding
 */
export const CONFIG_MEMBERS = [
  'mcpServers',
  'rules',
  'tolerate',
  'locationArgs',
  'caseInsensitive',
  'reasons',
  'log',
  'timeout',
  'listWaitMs',
  'startupMs',
  'store',
  'drift',
] as const
const TOP: ReadonlyArray<string> = CONFIG_MEMBERS
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
  const args = u['args'] === undefined ? [] : u['args']
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
 * import { decodeGatewayConfig } from 'toolstack/gateway'
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
  const failed = (e: Either<string, unknown>): void => void (isLeft(e) && problems.push(e.left))
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
  failed(rules)
  // a member written as null is refused like any other wrong type, not read as absent
  const tolerate = u['tolerate'] === undefined ? [] : u['tolerate']
  if (!Array.isArray(tolerate) || !tolerate.every((t) => typeof t === 'string'))
    problem(`tolerate must be an array of strings, got ${describeValue(tolerate)}`)
  const locationArgs = u['locationArgs'] === undefined ? [] : u['locationArgs']
  try {
    locationNames('locationArgs', locationArgs)
  } catch (e) {
    // the policy's own check, so the file and withPolicy agree on what a name may be
    problem((e as Error).message.replace('locationArgs: option "locationArgs"', 'locationArgs'))
  }
  const caseInsensitive = u['caseInsensitive']
  if (caseInsensitive !== undefined && typeof caseInsensitive !== 'boolean')
    problem(`caseInsensitive must be true or false, got ${describeValue(caseInsensitive)}`)
  const reasons = u['reasons'] === undefined ? true : u['reasons']
  if (typeof reasons !== 'boolean') problem(`reasons must be true or false, got ${describeValue(reasons)}`)
  const log = u['log']
  if (log !== undefined && (typeof log !== 'string' || log === ''))
    problem(`log must be a file path, got ${describeValue(log)}`)
  const timeout = decodeMs('timeout', u['timeout'])
  failed(timeout)
  const listWaitMs = decodeMs('listWaitMs', u['listWaitMs'])
  failed(listWaitMs)
  const startupMs = decodeMs('startupMs', u['startupMs'])
  failed(startupMs)
  const store = u['store']
  const storeKind = store === undefined ? undefined : storeKindOf(store)
  if (storeKind?._tag === 'Left') problem(`store ${storeKind.left}`)
  const drift = u['drift']
  if (drift !== undefined && drift !== 'warn' && drift !== 'hold' && drift !== 'refuse')
    problem(`drift must be "warn", "hold" or "refuse", got ${describeValue(drift)}`)
  if (problems.length > 0 || isLeft(rules) || isLeft(timeout) || isLeft(listWaitMs) || isLeft(startupMs))
    return left(problems.join('\n'))
  // each member below was checked above, and any problem returned: the casts only restate those checks
  return right({
    servers,
    rules: rules.right,
    tolerate: tolerate as ReadonlyArray<string>,
    locationArgs: locationArgs as ReadonlyArray<string>,
    ...(caseInsensitive === undefined ? {} : { caseInsensitive: caseInsensitive as boolean }),
    reasons: reasons as boolean,
    log: log as string | undefined,
    ...(timeout.right === undefined ? {} : { timeout: timeout.right }),
    ...(listWaitMs.right === undefined ? {} : { listWaitMs: listWaitMs.right }),
    ...(startupMs.right === undefined ? {} : { startupMs: startupMs.right }),
    ...(drift === undefined ? {} : { drift: drift as DriftAction }),
    ...(store === undefined ? {} : { store: store as string }),
  })
}
