/**
 * `connectStdio`: starts an MCP server as a child process, connects a v1 `Client` to it over stdio, and
 * returns a `close` that reliably ends the process. This module exists to prevent processes left
 * behind by a test, a demo or a host that crashed mid-session.
 *
 * @since 0.1.0
 */
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { watchGroup } from './watchdog.js'
import type { Writable } from 'node:stream'
import { PassThrough } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import * as t from 'io-ts/lib/index.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { ClientCapabilities, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { STDERR_TAIL_CHARS, describeError, stderrEnd } from '../kernel/describe.js'
import { memberOf } from '../kernel/guards.js'
import { MAX_TIMER_MS, decodeOptions, refined, wholeNumber } from '../kernel/options.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How to start the server. It runs as the leader of a process group of its own, so `close` also ends what
 * it started (a wrapper such as `npx` or `sh -c`, and their children).
 *
 * @since 0.1.0
 * @category model
 */
export interface StdioServerCommand {
  readonly command: string
  readonly args?: ReadonlyArray<string>
  readonly cwd?: string
  /** Added to the SDK's small default environment (`HOME`, `PATH`, …), not to `process.env`. */
  readonly env?: Readonly<Record<string, string>>
  /**
   * The server's stderr: `'inherit'` (the default) copies it to this process's stderr as it arrives,
   * `'ignore'` drops it. Either way its last lines are kept (bounded) for the error if connecting fails.
   */
  readonly stderr?: 'inherit' | 'ignore'
  /**
   * Called with each line of the server's stderr, as well: without its line break, cut at 1,000 characters
   * (the rest of a longer line is dropped), not escaped. A throw is ignored.
   */
  readonly onStderrLine?: (line: string) => void
  /** How the client introduces itself. Default `{ name: 'toolstack', version: '0.1.0' }`. */
  readonly clientInfo?: { readonly name: string; readonly version: string }
  /** The capabilities the client declares (set its request handlers on `client` once connected). Default none. */
  readonly capabilities?: ClientCapabilities
  /**
   * Milliseconds `close` waits for the server's process group to exit once its input is closed, and again
   * after SIGTERM, before SIGKILL. Default 2000.
   */
  readonly graceMs?: number
  /** Aborting it while connecting ends the server (as `close` does) and rejects. */
  readonly signal?: AbortSignal
}

/**
 * A connected client and the way to end it.
 *
 * @since 0.1.0
 * @category model
 */
export interface StdioConnection {
  readonly client: Client
  /** The server's process id, while it runs. */
  readonly pid: number | undefined
  /**
   * Closes the client and ends the server's process group (the server runs as the leader of a group of its
   * own, so helpers it started end with it): its input closed, SIGTERM to the group after `graceMs`,
   * SIGKILL after `graceMs` more, then up to 5 s for it to go. Idempotent, never rejects.
   */
  readonly close: () => Promise<void>
}

// -------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------

const ServerProps = {
  command: refined('a non-empty string', (u): u is string => typeof u === 'string' && u !== ''),
  args: t.readonlyArray(t.string, 'an array of strings'),
  cwd: t.string,
  env: t.record(t.string, t.string, 'an object of strings'),
  stderr: t.keyof({ inherit: null, ignore: null }),
  onStderrLine: refined('a function', (u): u is (line: string) => void => typeof u === 'function'),
  clientInfo: t.type({ name: t.string, version: t.string }),
  capabilities: t.UnknownRecord,
  // setTimeout treats anything above 2^31 - 1 ms as 1 ms
  graceMs: wholeNumber(`a whole number of milliseconds between 0 and ${MAX_TIMER_MS}`, 0, MAX_TIMER_MS),
  signal: refined('an AbortSignal', (u): u is AbortSignal => u instanceof AbortSignal),
}

// names other MCP hosts and process APIs use, too unlike the real keys for suggestKey to suggest them
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['cmd', 'command'],
  ['argv', 'args'],
  ['arguments', 'args'],
  ['environment', 'env'],
])

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

const quote = (s: string): string => JSON.stringify(s)

// how much of the server's stderr is kept to quote (`stderrEnd` quotes its last lines)
const TAIL_BYTES = STDERR_TAIL_CHARS

// a line of a server's stderr is cut here, so a server that never writes a line break costs bounded memory
const MAX_LINE = 1000

/** Splits `chunk`s into lines for `onLine`: each cut at MAX_LINE characters, the rest of a longer one dropped. */
const lineSplitter = (onLine: (line: string) => void): ((chunk: Buffer) => void) => {
  const decoder = new StringDecoder('utf8')
  let pending = ''
  let dropping = false
  const emit = (line: string): void => {
    try {
      onLine(line)
    } catch {
      // the callback's failure is its own
    }
  }
  return (chunk) => {
    const parts = (pending + decoder.write(chunk)).split(/\r?\n/)
    pending = parts.pop() ?? ''
    for (const part of parts) {
      if (!dropping) emit(part.slice(0, MAX_LINE))
      dropping = false
    }
    if (!dropping && pending.length > MAX_LINE) {
      emit(pending.slice(0, MAX_LINE))
      dropping = true
    }
    if (dropping) pending = ''
  }
}

/** Keeps the last TAIL_BYTES of `stream`, passing each chunk to `forward` first; returns their formatter. */
const keepTail = (stream: NodeJS.ReadableStream, forward: ((chunk: Buffer) => void) | undefined): (() => string) => {
  let tail = Buffer.alloc(0)
  let seen = 0
  stream.on('data', (chunk: Buffer) => {
    forward?.(chunk)
    seen += chunk.length
    tail = Buffer.concat([tail, chunk.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES)
  })
  return () => stderrEnd(tail.toString('utf8').split(/\r?\n/), false, seen > tail.length)
}

const exitOf = (child: ChildProcess | undefined): string => {
  if (typeof child?.exitCode === 'number') return `; the server exited with code ${child.exitCode}`
  if (typeof child?.signalCode === 'string') return `; the server was ended by signal ${child.signalCode}`
  return ''
}

// A spawn ENOENT means no such command or no such cwd: Node reports the same error for both.
const notStarted = (e: unknown, cwd: string | undefined): string => {
  if (memberOf(e, 'code') !== 'ENOENT') return ''
  return cwd === undefined
    ? '; no such command: check its name and the PATH, or give its full path'
    : `; either the command or the cwd ${quote(cwd)} does not exist`
}

// ESRCH: no such process; EPERM: it exists but is not ours to signal, so it is alive; anything else
// (e.g. a non-numeric pid) is a bug here, and is rethrown
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    const code = (e as { code?: unknown }).code
    if (code === 'ESRCH') return false
    if (code === 'EPERM') return true
    throw e
  }
}

// not unref'd: the process waits for a close to finish, or a script that awaits close would exit before it
// (status 13, an unsettled top-level await), and a command before it sets its exit status
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const waitGone = async (pid: number, ms: number): Promise<void> => {
  const until = Date.now() + ms
  while (isAlive(pid) && Date.now() < until) await sleep(10)
}

// -------------------------------------------------------------------------------------
// transport
// -------------------------------------------------------------------------------------

const isToolsChanged = (m: JSONRPCMessage): boolean =>
  'method' in m && m.method === 'notifications/tools/list_changed' && !('id' in m)

/** The stdio transport of one server process, started in a process group of its own. */
interface GroupTransport extends Transport {
  /** The server's stderr, available before it starts, so no early line is lost. */
  readonly stderr: PassThrough
  readonly child: () => ChildProcess | undefined
}

// The SDK's StdioClientTransport starts the server in the gateway's own process group, so a helper the
// server starts (or an `sh -c` that ignores SIGTERM) outlives it. This one starts the server as the leader
// of a group of its own (`detached`), and ends the whole group: stdin closed, then after `graceMs` SIGTERM
// to the group, then after `graceMs` more SIGKILL.
const groupTransport = (
  command: string,
  options: {
    readonly args: ReadonlyArray<string>
    readonly env?: Readonly<Record<string, string>>
    readonly cwd?: string
  },
  graceMs: number,
): GroupTransport => {
  const stderr = new PassThrough()
  const buffer = new ReadBuffer()
  let child: ChildProcess | undefined
  let closing: Promise<void> | undefined
  let stopWatching: () => void = () => undefined
  // -pid names the group; a group is alive while any process in it is
  const group = (): number | undefined => (child?.pid === undefined ? undefined : -child.pid)
  const signal = (sig: NodeJS.Signals): void => {
    const g = group()
    if (g === undefined) return
    try {
      process.kill(g, sig)
    } catch {
      // the whole group is gone already
    }
  }
  const groupGone = async (ms: number): Promise<boolean> => {
    const g = group()
    if (g === undefined) return true
    await waitGone(g, ms)
    return !isAlive(g)
  }
  const transport: GroupTransport = {
    stderr,
    child: () => child,
    start: () =>
      new Promise<void>((resolve, reject) => {
        const c = spawn(command, [...options.args], {
          env: { ...getDefaultEnvironment(), ...options.env },
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        })
        child = c
        c.on('error', (e) => {
          reject(e)
          transport.onerror?.(e)
        })
        c.on('spawn', () => {
          // should this process be killed outright (no exit event runs), a watchdog ends the group
          if (c.pid !== undefined) stopWatching = watchGroup(c.pid, graceMs)
          resolve()
        })
        c.on('close', () => {
          // a server that ended with its whole group needs no watching (and its group id may be reused); one that
          // never started has no pid, and no watchdog
          if (c.pid !== undefined && !isAlive(-c.pid)) stopWatching()
          transport.onclose?.()
        })
        // a spawn that failed for want of a file (EMFILE) has no pipes: its 'error' above says why
        if ((c.stdin as Writable | undefined) === undefined) return
        c.stdin.on('error', (e) => transport.onerror?.(e))
        c.stdout.on('data', (chunk: Buffer) => {
          try {
            buffer.append(chunk)
          } catch (e) {
            // a message past the SDK's bound (10 MB): the connection cannot be trusted to resync
            transport.onerror?.(e as Error)
            void transport.close()
            return
          }
          // one tools/list_changed per chunk is handed on: the rest say nothing more, as the re-listing it causes
          // starts after the whole chunk is read; each would go through the SDK's checks (10⁵ in a burst: 90 MB of
          // RSS, where the bench's target is 50)
          let changed = false
          for (;;) {
            let message: JSONRPCMessage | null
            try {
              message = buffer.readMessage()
            } catch (e) {
              // a line that is not JSON-RPC: reported, and the next line read
              transport.onerror?.(e as Error)
              continue
            }
            if (message === null) break
            if (isToolsChanged(message)) {
              if (changed) continue
              changed = true
            }
            transport.onmessage?.(message)
          }
        })
        c.stderr.pipe(stderr)
      }),
    send: (message) =>
      new Promise<void>((resolve, reject) => {
        const stdin = child?.stdin
        if (stdin === undefined || stdin === null || stdin.destroyed) return reject(new Error('Not connected'))
        if (stdin.write(serializeMessage(message))) resolve()
        else stdin.once('drain', resolve)
      }),
    close: () =>
      (closing ??= (async () => {
        try {
          child?.stdin?.end()
          if (await groupGone(graceMs)) return
          signal('SIGTERM')
          if (await groupGone(graceMs)) return
          signal('SIGKILL')
          await groupGone(5000)
        } finally {
          stopWatching()
        }
      })()),
  }
  return transport
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * Starts `command` and connects a v1 `Client` to it over stdio. Rejects (after ending the process) when
 * the server cannot be started or does not complete the MCP handshake; the error includes how the
 * server exited and the end of its stderr. Rejects with a `TypeError`, before starting anything, for an
 * unknown or mistyped option or a missing `command`.
 *
 * @example
 * import { connectStdio, fromMcpClient } from 'toolstack/mcp'
 * import { createRequire } from 'node:module'
 * import { mkdtempSync, rmSync } from 'node:fs'
 * import { tmpdir } from 'node:os'
 * import { join } from 'node:path'
 * const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
 * const dir = mkdtempSync(join(tmpdir(), 'toolstack-'))
 * const fs = await connectStdio({ command: process.execPath, args: [server, dir], stderr: 'ignore' })
 * try {
 *   const listed = await fromMcpClient(fs.client).toolsForLlm()
 *   assert.ok(listed._tag === 'Right' && listed.right.length > 0)
 * } finally {
 *   await fs.close()
 *   rmSync(dir, { recursive: true, force: true })
 * }
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectStdio = async (server: StdioServerCommand): Promise<StdioConnection> => {
  const where = 'connectStdio'
  const opts = decodeOptions(where, ServerProps, server, '', ALIASES)
  const command = opts.command
  if (command === undefined) {
    throw new TypeError(
      `${where}: option "command" is required: the server's executable (for a Node server, process.execPath, with its script in args)`,
    )
  }
  const graceMs = opts.graceMs ?? 2000
  const transport = groupTransport(
    command,
    {
      args: opts.args ?? [],
      ...(opts.env !== undefined ? { env: opts.env } : {}),
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
    },
    graceMs,
  )
  // piped, not inherited, so the error can quote it; `stderr: 'inherit'` is copied here
  const copy = opts.stderr === 'ignore' ? undefined : (chunk: Buffer) => void process.stderr.write(chunk)
  const lines = opts.onStderrLine === undefined ? undefined : lineSplitter(opts.onStderrLine)
  const stderrTail = keepTail(
    transport.stderr,
    copy === undefined && lines === undefined
      ? undefined
      : (chunk) => {
          copy?.(chunk)
          lines?.(chunk)
        },
  )
  const client = new Client(
    opts.clientInfo ?? { name: 'toolstack', version: '0.1.0' },
    opts.capabilities === undefined ? {} : { capabilities: opts.capabilities as ClientCapabilities },
  )
  let closing: Promise<void> | undefined
  // the client's close closes the transport, which ends the server's whole process group
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await client.close().catch(() => undefined)
      await transport.close()
    })())

  // a server that never completes the handshake would hold its starter until the SDK's own timeout
  const onAbort = (): void => void close()
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    if (opts.signal?.aborted === true) throw new Error('aborted before it started')
    await client.connect(transport)
  } catch (e) {
    // read before close, which kills a server that is still running
    const child = transport.child()
    const context = child?.pid === undefined ? notStarted(e, opts.cwd) : exitOf(child) + stderrTail()
    await close()
    throw new Error(`${where}: could not connect to ${quote(command)}: ${describeError(e)}${context}`, { cause: e })
  } finally {
    opts.signal?.removeEventListener('abort', onAbort)
  }
  const pid = transport.child()?.pid
  return {
    client,
    get pid() {
      return pid !== undefined && isAlive(pid) ? pid : undefined
    },
    close,
  }
}
