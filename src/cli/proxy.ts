/**
 * `toolstack proxy`: a stdio MCP proxy that forwards every byte both ways, unchanged
 * and in order, and audits a copy on a thread of its own.
 *
 * @since 0.1.0
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import type { UnknownKeyWarning } from '../index.js'
import { formatWarning } from '../index.js'
import { threadedAuditor as startAuditor } from './auditor.js'
import type { ChunkSource } from './source.js'
import { readableSource } from './source.js'
import { describeError } from '../internal/describe.js'
import { warningRecord } from './check.js'
import { LF as NEWLINE } from './bytes.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ProxyOptions {
  /** Milliseconds between closing the server's stdin and SIGTERM, and between SIGTERM and SIGKILL. */
  readonly graceMs: number
  /** Argument names never reported, besides `reason`. */
  readonly tolerate: ReadonlyArray<string>
}

/**
 * The effects the proxy needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface ProxyIO {
  /** The host's bytes: a stream, or a source that recycles its buffers (see `hostSource`). */
  readonly stdin: Readable | ChunkSource
  readonly stdout: Writable
  readonly env: NodeJS.ProcessEnv
  /** Where a warning goes (stderr or the log file), already rendered. */
  readonly warn: (warning: UnknownKeyWarning) => void
  /** The proxy's own messages (a server that cannot be started). */
  readonly err: (line: string) => void
  /** Subscribes to a signal sent to the proxy; returns the unsubscribe. */
  readonly onSignal: (signal: NodeJS.Signals, handler: () => void) => () => void
  /**
   * The module the audit's thread runs (`auditworker.js` beside the command); without
   * it the audit runs on the forwarding thread.
   */
  readonly auditWorker?: string | undefined
}

// -------------------------------------------------------------------------------------
// forwarding
// -------------------------------------------------------------------------------------

/**
 * Pauses a source while any reason holds it: `hold(why, true)` pauses it, and it
 * resumes once every reason let go.
 *
 * @since 0.1.0
 * @category forwarding
 */
export const valveFor = (source: { readonly pause: () => unknown; readonly resume: () => unknown }): ((why: string, on: boolean) => void) => {
  const holds = new Set<string>()
  return (why, on) => {
    if (on) {
      holds.add(why)
      source.pause()
    } else if (holds.delete(why) && holds.size === 0) source.resume()
  }
}

/**
 * Forwards `source` to `sink` chunk by chunk, as raw bytes, as each arrives, holding
 * the source (through `hold`) while the sink is full. Each chunk is handed to `tap`
 * once its bytes were handed to the sink, and released to the source once the sink
 * has written them.
 *
 * @since 0.1.0
 * @category forwarding
 */
export const relayChunks = (
  source: ChunkSource,
  sink: Writable,
  hold: (why: string, on: boolean) => void,
  tap: (chunk: Buffer) => void,
  onEnd: () => void,
): void => {
  let full = false
  const drained = (): void => {
    sink.off('close', drained)
    sink.off('drain', drained)
    full = false
    hold('sink', false)
  }

  source.start((chunk, release) => {
    // a sink that is gone (the host closed its end) drops the bytes, but the source
    // keeps being read so the other process never blocks on a full pipe
    if (!sink.writable || sink.destroyed) release()
    else if (!sink.write(chunk, release) && !full) {
      full = true
      hold('sink', true)
      sink.once('drain', drained)
      sink.once('close', drained)
    }
    try {
      tap(chunk)
    } catch {
      // the audit never costs a byte of forwarding
    }
  }, onEnd)
}

/**
 * `relayChunks` for a stream whose tap wants whole lines: each line, once its newline
 * has arrived (or the source ended), is handed to `tap` after its bytes were
 * forwarded, as the pieces it arrived in.
 *
 * @since 0.1.0
 * @category forwarding
 */
export const relayLines = (
  source: Readable,
  sink: Writable,
  hold: (why: string, on: boolean) => void,
  tap: (pieces: ReadonlyArray<Buffer>) => void,
  onEnd: () => void,
): void => {
  let pending: Array<Buffer> = []
  relayChunks(
    readableSource(source),
    sink,
    hold,
    (chunk) => {
      const last = chunk.lastIndexOf(NEWLINE)
      if (last === -1) {
        pending.push(chunk)
        return
      }
      const whole = last === chunk.length - 1
      const lines = pending
      lines.push(whole ? chunk : chunk.subarray(0, last + 1))
      pending = whole ? [] : [chunk.subarray(last + 1)]
      tap(lines)
    },
    () => {
      if (pending.length > 0) {
        const rest = pending
        pending = []
        try {
          tap(rest)
        } catch {
          // as above
        }
      }
      onEnd()
    },
  )
}

// -------------------------------------------------------------------------------------
// command
// -------------------------------------------------------------------------------------

// How long the proxy's end waits for the audit to finish what it was handed.
const AUDIT_GRACE_MS = 2000

const signalNumber = (signal: NodeJS.Signals): number => constants.signals[signal] ?? 0

const startError = (command: string, e: unknown): readonly [string, number] => {
  const code = typeof e === 'object' && e !== null ? (e as { readonly code?: unknown }).code : undefined
  if (code === 'ENOENT') return [`cannot start ${JSON.stringify(command)}: command not found`, 127]
  if (code === 'EACCES') return [`cannot start ${JSON.stringify(command)}: permission denied`, 126]
  return [`cannot start ${JSON.stringify(command)}: ${describeError(e)}`, 126]
}

const isChunkSource = (s: Readable | ChunkSource): s is ChunkSource => (s as Partial<ChunkSource>)._tag === 'ChunkSource'

/**
 * Runs `command args…` as an MCP server behind the proxy and returns the exit status
 * the proxy should end with: the server's own (128 + n when a signal ended it), 127
 * when the command does not exist, 126 when it cannot be run.
 *
 * @since 0.1.0
 * @category command
 */
export const runProxy = (command: string, args: ReadonlyArray<string>, options: ProxyOptions, io: ProxyIO): Promise<number> =>
  new Promise<number>((resolve) => {
    const timers = new Set<NodeJS.Timeout>()
    const unsubscribe: Array<() => void> = []
    let finished = false
    let exitStatus: number | undefined
    let serverOutputDone = false

    let child: ChildProcess
    try {
      child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'inherit'], env: io.env })
    } catch (e) {
      const [message, status] = startError(command, e)
      io.err(message)
      resolve(status)
      return
    }

    const host = isChunkSource(io.stdin) ? io.stdin : readableSource(io.stdin)
    const holdHost = valveFor(host)
    const auditor = startAuditor(io.auditWorker, options.tolerate, { warn: io.warn, err: io.err, holdHost: (on) => holdHost('audit', on) })

    const finish = (status: number): void => {
      if (finished) return
      finished = true
      for (const t of timers) clearTimeout(t)
      for (const u of unsubscribe) u()
      // the host may keep its end open; the proxy is done all the same
      host.destroy()
      // the warnings for the last calls come before the proxy ends
      void auditor.close(AUDIT_GRACE_MS).then(() => {
        if (io.stdout.writable && !io.stdout.destroyed) io.stdout.write('', () => resolve(status))
        else resolve(status)
      })
    }

    const later = (ms: number, f: () => void): void => {
      const t = setTimeout(() => {
        timers.delete(t)
        f()
      }, ms)
      timers.add(t)
    }

    const maybeFinish = (): void => {
      if (exitStatus !== undefined && serverOutputDone) finish(exitStatus)
    }

    let closing = false
    const closeServer = (): void => {
      if (closing) return
      closing = true
      if (!child.stdin?.destroyed) child.stdin?.end()
      later(options.graceMs, () => {
        child.kill('SIGTERM')
        later(options.graceMs, () => child.kill('SIGKILL'))
      })
    }

    child.once('error', (e) => {
      if (child.pid === undefined) {
        const [message, status] = startError(command, e)
        io.err(message)
        finish(status)
      }
    })
    child.once('exit', (code, signal) => {
      exitStatus = code ?? (signal === null ? 1 : 128 + signalNumber(signal))
      // a grandchild holding the server's stdout open must not hold the proxy too
      later(1000, () => finish(exitStatus as number))
      maybeFinish()
    })

    const serverIn = child.stdin as Writable
    const serverOut = child.stdout as Readable
    serverIn.on('error', () => {
      // EPIPE once the server is gone: its exit decides what happens next
    })
    io.stdout.on('error', () => {
      // the host went away: treat it as end of input
      closeServer()
    })

    // the host's bytes go to the audit as they came: it finds the lines itself
    relayChunks(host, serverIn, holdHost, (chunk) => auditor.feed('host', [chunk]), () => {
      auditor.end('host')
      closeServer()
    })
    relayLines(
      serverOut,
      io.stdout,
      valveFor(serverOut),
      (pieces) => {
        if (auditor.wantsServer()) auditor.feed('server', pieces)
      },
      () => {
        auditor.end('server')
        serverOutputDone = true
        maybeFinish()
      },
    )

    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      unsubscribe.push(
        io.onSignal(signal, () => {
          if (exitStatus === undefined) child.kill(signal)
        }),
      )
    }
  })

/**
 * The warning as a line: the combinator's own sentence, or JSON.
 *
 * @since 0.1.0
 * @category command
 */
export const renderWarning = (json: boolean) => (w: UnknownKeyWarning): string =>
  json
    ? warningRecord(w)
    : formatWarning(w)
