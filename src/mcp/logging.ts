/**
 * MCP logging passed through a gateway: each host session's `logging/setLevel` filters what that host
 * receives, the upstreams are asked for the most verbose level any host asked for, and an upstream's
 * `notifications/message` reaches the hosts it concerns with its text escaped and bounded, as every text
 * from an upstream is.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import { cut, escapeControls } from '../kernel/describe.js'
import { isRecord } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The MCP log levels (RFC 5424's), from the most verbose to the most severe.
 *
 * @since 0.1.0
 * @category model
 */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const

/**
 * @since 0.1.0
 * @category model
 */
export type LogLevel = (typeof LOG_LEVELS)[number]

/**
 * The params of a `notifications/message`, as the gateway passes them on.
 *
 * @since 0.1.0
 * @category model
 */
export interface LogMessage {
  readonly level: LogLevel
  readonly logger?: string
  readonly data: unknown
}

/**
 * One host session's side of the logs: the level it asked for, and whether a message of a level is for it.
 *
 * @since 0.1.0
 * @category model
 */
export interface LogSession {
  /** Sets the session's level (`logging/setLevel`); the upstreams are told when the most verbose level changes. */
  readonly setLevel: (level: LogLevel) => void
  /**
   * Whether the session receives a message of `level`: every level until it sets one, then that level and above
   * (a level that is none of `LOG_LEVELS` counts as the most severe).
   */
  readonly wants: (level: string) => boolean
  /** The session ended: its level counts no more. */
  readonly close: IO<void>
}

/**
 * The logs of every host session of a gateway.
 *
 * @since 0.1.0
 * @category model
 */
export interface LogHub {
  /** A host session's side; `send` delivers a message to that host (on no call's stream). */
  readonly open: (send: (message: LogMessage) => void) => LogSession
  /** Sends `message` to every session that wants its level. */
  readonly broadcast: (message: LogMessage) => void
  /** The most verbose level any open session asked for; `undefined` while none asked. */
  readonly level: IO<LogLevel | undefined>
  /** Calls `listener` with the new level each time `level` changes; returns the unsubscribe function. */
  readonly onLevel: (listener: (level: LogLevel) => void) => IO<void>
}

// bounds on what an upstream may make a host receive in one message
const MAX_LOGGER = 200
const MAX_TEXT = 4_000
const MAX_JSON = 16_000
const MAX_DEPTH = 16

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const severity = (level: LogLevel): number => LOG_LEVELS.indexOf(level)

/**
 * Whether `level` is one of the MCP log levels.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const isLogLevel = (u: unknown): u is LogLevel => LOG_LEVELS.some((l) => l === u)

/**
 * The most verbose of `levels`; `undefined` when there is none.
 *
 * @example
 * import { mostVerbose } from './logging.js'
 * assert.strictEqual(mostVerbose(['error', 'info', 'warning']), 'info')
 * assert.strictEqual(mostVerbose([]), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const mostVerbose = (levels: Iterable<LogLevel>): LogLevel | undefined => {
  let best: LogLevel | undefined
  for (const l of levels) if (best === undefined || severity(l) < severity(best)) best = l
  return best
}

// every string escaped and cut; a value nested deeper than MAX_DEPTH becomes its description
const boundValue = (u: unknown, depth: number): unknown => {
  if (typeof u === 'string') return escapeControls(cut(u, MAX_TEXT))
  if (u === null || typeof u !== 'object') return u
  if (depth >= MAX_DEPTH) return '(nested too deep)'
  if (Array.isArray(u)) return u.map((v) => boundValue(v, depth + 1))
  return Object.fromEntries(
    Object.entries(u).map(([k, v]) => [escapeControls(cut(k, MAX_LOGGER)), boundValue(v, depth + 1)]),
  )
}

/**
 * An upstream's `notifications/message` params as a host receives them: its level kept, its `logger` and every
 * string of its `data` with control, format and separator characters escaped (`\uXXXX`) and cut; data whose
 * JSON is longer than 16,000 characters sent as that JSON, cut. `undefined` for params that are not a message.
 *
 * @example
 * import { boundLogMessage } from './logging.js'
 * assert.deepStrictEqual(boundLogMessage({ level: 'info', logger: 'db\u001b[2J', data: { line: 'a\u202eb' } }), {
 *   level: 'info',
 *   logger: 'db\\u001b[2J',
 *   data: { line: 'a\\u202eb' },
 * })
 * assert.strictEqual(boundLogMessage({ level: 'loud', data: 'x' }), undefined)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const boundLogMessage = (params: unknown): LogMessage | undefined => {
  if (!isRecord(params) || !isLogLevel(params['level'])) return undefined
  const logger = params['logger']
  let json: string | undefined
  try {
    json = JSON.stringify(params['data'])
  } catch {
    json = undefined
  }
  const data =
    json === undefined || json.length > MAX_JSON
      ? escapeControls(cut(json ?? '(unreadable)', MAX_JSON))
      : boundValue(params['data'], 0)
  return {
    level: params['level'],
    ...(typeof logger === 'string' ? { logger: escapeControls(cut(logger, MAX_LOGGER)) } : {}),
    data,
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A hub for the log levels and messages of a gateway's host sessions.
 *
 * @example
 * import { newLogHub } from './logging.js'
 * const hub = newLogHub()
 * const got: Array<string> = []
 * const a = hub.open((m) => got.push(`a ${m.level}`))
 * const b = hub.open((m) => got.push(`b ${m.level}`))
 * a.setLevel('error')
 * b.setLevel('info')
 * hub.broadcast({ level: 'warning', data: 'disk' })
 * assert.deepStrictEqual(got, ['b warning'])
 * assert.strictEqual(hub.level(), 'info')
 * b.close()
 * assert.strictEqual(hub.level(), 'error')
 *
 * @since 0.1.0
 * @category constructors
 */
export const newLogHub = (): LogHub => {
  interface Open {
    level: LogLevel | undefined
    readonly send: (message: LogMessage) => void
  }
  const sessions = new Set<Open>()
  const listeners = new Set<(level: LogLevel) => void>()
  let told: LogLevel | undefined
  const level = (): LogLevel | undefined =>
    mostVerbose([...sessions].flatMap((s) => (s.level === undefined ? [] : [s.level])))
  const changed = (): void => {
    const now = level()
    if (now === undefined || now === told) return
    told = now
    for (const l of [...listeners]) {
      try {
        l(now)
      } catch {
        // one listener that throws costs the others nothing
      }
    }
  }
  const wants = (s: Open, l: string): boolean =>
    s.level === undefined || !isLogLevel(l) || severity(l) >= severity(s.level)
  return {
    open: (send) => {
      const s: Open = { level: undefined, send }
      sessions.add(s)
      return {
        setLevel: (l) => {
          s.level = l
          changed()
        },
        wants: (l) => wants(s, l),
        // a second close changes nothing: the level is then undefined or the one told
        close: () => {
          sessions.delete(s)
          changed()
        },
      }
    },
    broadcast: (message) => {
      for (const s of [...sessions]) {
        if (!wants(s, message.level)) continue
        try {
          s.send(message)
        } catch {
          // a session that cannot be told costs the others nothing
        }
      }
    },
    level,
    onLevel: (listener) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
  }
}
