/**
 * `connectStdio`: starts an MCP server as a child process, connects a v1 `Client` to it over stdio, and
 * returns a `close` that reliably ends the process. This module exists to prevent processes left
 * behind by a test, a demo or a host that crashed mid-session.
 *
 * @since 0.1.0
 */
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import * as t from 'io-ts/lib/index.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { describeError, escapeControls } from '../kernel/describe.js'
import { memberOf } from '../kernel/guards.js'
import { decodeOptions, refined, wholeNumber } from '../kernel/options.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How to start the server. For `close` to end the server itself, start the server's own executable
 * (for a Node server: `process.execPath` and its script), not a wrapper such as `npx` or a shell,
 * whose children a kill does not reach.
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
  /** Milliseconds `close` waits for the server to exit on its own before killing it. Default 2000. */
  readonly graceMs?: number
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
   * Closes the client and the transport; if the process is still alive after `graceMs`, kills it
   * (SIGKILL) and waits up to 5 s for it to exit. Idempotent, never rejects.
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
  // setTimeout treats anything above 2^31 - 1 ms as 1 ms
  graceMs: wholeNumber('a whole number of milliseconds between 0 and 2147483647', 0, 2_147_483_647),
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

// how much of the server's stderr an error may quote: its last lines, within its last bytes
const TAIL_BYTES = 1024
const TAIL_LINES = 5

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
const keepTail = (stream: Readable, forward: ((chunk: Buffer) => void) | undefined): (() => string) => {
  let tail = Buffer.alloc(0)
  let seen = 0
  stream.on('data', (chunk: Buffer) => {
    forward?.(chunk)
    seen += chunk.length
    tail = Buffer.concat([tail, chunk.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES)
  })
  return () => {
    const lines = tail
      .toString('utf8')
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
    if (lines.length === 0) return ''
    // a hostile server's escape sequences must not reach the terminal that shows the error
    const shown = lines.slice(-TAIL_LINES).map(escapeControls).join(' | ')
    // earlier lines omitted, or the first line cut at its start
    const more = lines.length > TAIL_LINES ? '… | ' : seen > tail.length ? '…' : ''
    return `; the end of its stderr: ${more}${shown}`
  }
}

// The exit status is not in the SDK transport's API: it is read from the transport's private child
// process (`_process`); without it, the error omits the exit status.
const exitOf = (child: unknown): string => {
  const code = memberOf(child, 'exitCode')
  if (typeof code === 'number') return `; the server exited with code ${code}`
  const signal = memberOf(child, 'signalCode')
  if (typeof signal === 'string') return `; the server was ended by signal ${signal}`
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref())

const waitGone = async (pid: number, ms: number): Promise<void> => {
  const until = Date.now() + ms
  while (isAlive(pid) && Date.now() < until) await sleep(10)
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
  const transport = new StdioClientTransport({
    command,
    args: [...(opts.args ?? [])],
    ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
    ...(opts.env !== undefined ? { env: { ...opts.env } } : {}),
    // piped, not inherited, so the error can quote it; `stderr: 'inherit'` is forwarded by keepTail
    stderr: 'pipe',
  })
  // with stderr 'pipe' the SDK makes this stream at once, before the process starts
  const copy = opts.stderr === 'ignore' ? undefined : (chunk: Buffer) => void process.stderr.write(chunk)
  const lines = opts.onStderrLine === undefined ? undefined : lineSplitter(opts.onStderrLine)
  const stderrTail = keepTail(
    transport.stderr as Readable,
    copy === undefined && lines === undefined
      ? undefined
      : (chunk) => {
          copy?.(chunk)
          lines?.(chunk)
        },
  )
  const client = new Client(opts.clientInfo ?? { name: 'toolstack', version: '0.1.0' })
  let closing: Promise<void> | undefined

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      // the SDK's close ends stdin, then escalates to SIGTERM and SIGKILL at its own pace; it gets
      // `graceMs`, then whatever still runs is killed
      const closed = client.close().catch(() => undefined)
      await Promise.race([closed, sleep(graceMs)])
      if (pid !== undefined && isAlive(pid)) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone between the check and the kill
        }
        await waitGone(pid, 5000)
      }
      await Promise.race([closed, sleep(graceMs)])
    })())

  // the transport spawns the server as connect starts; the pid is read now because a failed handshake
  // clears it
  const connecting = client.connect(transport)
  const pid = transport.pid ?? undefined
  const child = memberOf(transport, '_process')
  try {
    await connecting
  } catch (e) {
    // read before close, which kills a server that is still running
    const context = pid === undefined ? notStarted(e, opts.cwd) : exitOf(child) + stderrTail()
    await close()
    throw new Error(`${where}: could not connect to ${quote(command)}: ${describeError(e)}${context}`, { cause: e })
  }
  return {
    client,
    get pid() {
      return pid !== undefined && isAlive(pid) ? pid : undefined
    },
    close,
  }
}
