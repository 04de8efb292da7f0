/**
 * `toolstack proxy`: a stdio MCP proxy that forwards every byte both ways, unchanged
 * and in order, and audits a parsed copy on the side.
 *
 * @since 0.1.0
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import type { Readable, Writable } from 'node:stream'
import type { UnknownKeyWarning } from '../UnknownKeys.js'
import { formatWarning } from '../UnknownKeys.js'
import type { Direction, SideChannel } from './sidechannel.js'
import { isAwaitingListing, newSideChannel, observe } from './sidechannel.js'
import { describeError } from '../internal/results.js'
import { warningRecord } from './check.js'

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
  readonly stdin: Readable
  readonly stdout: Writable
  readonly env: NodeJS.ProcessEnv
  /** Where a warning goes (stderr or the log file), already rendered. */
  readonly warn: (warning: UnknownKeyWarning) => void
  /** The proxy's own messages (a server that cannot be started). */
  readonly err: (line: string) => void
  /** Subscribes to a signal sent to the proxy; returns the unsubscribe. */
  readonly onSignal: (signal: NodeJS.Signals, handler: () => void) => () => void
}

// -------------------------------------------------------------------------------------
// forwarding
// -------------------------------------------------------------------------------------

const NEWLINE = 0x0a

/**
 * Forwards `source` to `sink` a completed line at a time, as raw bytes, pausing the
 * source while the sink is full; a last line without a newline is forwarded at the
 * end. After each write, and only when `wants(pieces)` says so, the text of the lines just
 * completed is handed to `onLines` (one string, lines separated by `\n`), so bytes
 * nobody reads are never joined or decoded.
 *
 * @since 0.1.0
 * @category forwarding
 */
export const relayLines = (
  source: Readable,
  sink: Writable,
  wants: (pieces: ReadonlyArray<Buffer>) => boolean,
  onLines: (text: string) => void,
  onEnd: () => void,
): void => {
  let pending: Array<Buffer> = []

  const write = (pieces: ReadonlyArray<Buffer>): void => {
    // a sink that is gone (the host closed its end) drops the bytes, but the source
    // keeps being read so the other process never blocks on a full pipe
    if (!sink.writable || sink.destroyed) return
    let ok = true
    if (pieces.length === 1) ok = sink.write(pieces[0] as Buffer)
    else {
      // one writev for a line that arrived in many chunks
      sink.cork()
      for (const p of pieces) ok = sink.write(p) && ok
      sink.uncork()
    }
    if (!ok && !source.isPaused()) {
      source.pause()
      const resume = (): void => {
        sink.off('close', resume)
        sink.off('drain', resume)
        source.resume()
      }
      sink.once('drain', resume)
      sink.once('close', resume)
    }
  }

  const read = (pieces: ReadonlyArray<Buffer>): void => {
    if (!wants(pieces)) return
    try {
      // a chunk is cut only after a newline, which never falls inside a UTF-8
      // sequence, so the text decodes as the sender wrote it
      onLines(pieces.length === 1 ? (pieces[0] as Buffer).toString('utf8') : Buffer.concat(pieces).toString('utf8'))
    } catch {
      // the side channel never costs a byte of forwarding
    }
  }

  source.on('data', (chunk: Buffer) => {
    const last = chunk.lastIndexOf(NEWLINE)
    if (last === -1) {
      pending.push(chunk)
      return
    }
    const whole = last === chunk.length - 1
    const lines = pending
    lines.push(whole ? chunk : chunk.subarray(0, last + 1))
    pending = whole ? [] : [chunk.subarray(last + 1)]
    write(lines)
    read(lines)
  })
  source.once('end', () => {
    if (pending.length > 0) {
      const rest = pending
      pending = []
      write(rest)
      read(rest)
    }
    onEnd()
  })
}

// -------------------------------------------------------------------------------------
// command
// -------------------------------------------------------------------------------------

const signalNumber = (signal: NodeJS.Signals): number => constants.signals[signal] ?? 0

const startError = (command: string, e: unknown): readonly [string, number] => {
  const code = typeof e === 'object' && e !== null ? (e as { readonly code?: unknown }).code : undefined
  if (code === 'ENOENT') return [`cannot start ${JSON.stringify(command)}: command not found`, 127]
  if (code === 'EACCES') return [`cannot start ${JSON.stringify(command)}: permission denied`, 126]
  return [`cannot start ${JSON.stringify(command)}: ${describeError(e)}`, 126]
}

// A line from the host is parsed only when it can hold "tools/list" or "tools/call":
// it contains "tools", or an escape that could spell it.
const mayConcernTools = (line: string): boolean => line.includes('tools') || line.includes('\\')

// The same question asked of the raw bytes, before anything is decoded or split: a
// chunk without either is none of the side channel's business. Lines that arrived in
// several pieces are decoded and asked line by line, since a piece boundary can cut a
// word in two.
const TOOLS = Buffer.from('tools')
const BACKSLASH = 0x5c
const mayConcernToolsBytes = (pieces: ReadonlyArray<Buffer>): boolean =>
  pieces.length !== 1 || (pieces[0] as Buffer).includes(TOOLS) || (pieces[0] as Buffer).includes(BACKSLASH)

/** Calls `f` with each non-empty line of `text`. */
const eachLine = (text: string, f: (line: string) => void): void => {
  let start = 0
  while (start < text.length) {
    let nl = text.indexOf('\n', start)
    if (nl === -1) nl = text.length
    if (nl > start) f(text.slice(start, nl))
    start = nl + 1
  }
}

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
    let state: SideChannel = newSideChannel(options.tolerate)
    const timers = new Set<NodeJS.Timeout>()
    const unsubscribe: Array<() => void> = []
    let finished = false
    let exitStatus: number | undefined
    let serverOutputDone = false

    const audit = (from: Direction, line: string): void => {
      let msg: unknown
      try {
        msg = JSON.parse(line)
      } catch {
        return
      }
      if (typeof msg !== 'object' || msg === null) return
      const [warnings, next] = observe(from, msg)(state)
      state = next
      for (const w of warnings) {
        try {
          io.warn(w)
        } catch {
          // a log that cannot be written changes nothing about the traffic
        }
      }
    }

    let child: ChildProcess
    try {
      child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'inherit'], env: io.env })
    } catch (e) {
      const [message, status] = startError(command, e)
      io.err(message)
      resolve(status)
      return
    }

    const finish = (status: number): void => {
      if (finished) return
      finished = true
      for (const t of timers) clearTimeout(t)
      for (const u of unsubscribe) u()
      io.stdin.pause()
      io.stdin.removeAllListeners('data')
      // the host may keep its end open; the proxy is done all the same
      io.stdin.destroy()
      if (io.stdout.writable && !io.stdout.destroyed) io.stdout.write('', () => resolve(status))
      else resolve(status)
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

    const fromHost = (line: string): void => {
      if (mayConcernTools(line)) audit('host', line)
    }
    const fromServer = (line: string): void => audit('server', line)
    relayLines(io.stdin, serverIn, mayConcernToolsBytes, (text) => eachLine(text, fromHost), closeServer)
    relayLines(
      serverOut,
      io.stdout,
      () => isAwaitingListing(state),
      (text) => eachLine(text, fromServer),
      () => {
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
