/**
 * `connectStdio`: start an MCP server as a child process, connect a v1 `Client` to it
 * over stdio, and get back a `close` that ends the process for sure. A process left
 * behind by a test, a demo or a host that crashed mid-session is the failure this
 * module exists to prevent.
 *
 * @since 0.1.0
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { describeError } from '../internal/describe.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How to start the server. To be sure `close` ends the server itself, start the
 * server's own executable (for a Node server: `process.execPath` and its script), not
 * a wrapper such as `npx` or a shell, whose children a kill does not reach.
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
  /** The server's stderr. Default `'inherit'`. */
  readonly stderr?: 'inherit' | 'ignore'
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
   * Closes the client and the transport; if the process is still alive after
   * `graceMs`, kills it (SIGKILL) and waits up to 5 s for it to be gone. Idempotent,
   * never rejects.
   */
  readonly close: () => Promise<void>
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

// ESRCH: no such process; EPERM: it exists but is not ours to signal, so it is alive;
// anything else (a pid that is no number) is a mistake here, and thrown
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
  // Stryker disable next-line EqualityOperator: one more 10 ms wait at the very deadline is no promise
  while (isAlive(pid) && Date.now() < until) await sleep(10)
}

// -------------------------------------------------------------------------------------
// constructor
// -------------------------------------------------------------------------------------

/**
 * Starts `command` and connects a v1 `Client` to it over stdio. Rejects (after ending
 * the process) when the server cannot be started or does not complete the MCP
 * handshake.
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
  const graceMs = server.graceMs ?? 2000
  const transport = new StdioClientTransport({
    command: server.command,
    args: [...(server.args ?? [])],
    // Stryker disable next-line ConditionalExpression: the SDK takes cwd: undefined as no cwd
    ...(server.cwd !== undefined ? { cwd: server.cwd } : {}),
    // Stryker disable next-line ConditionalExpression: the SDK takes env: undefined as no env
    ...(server.env !== undefined ? { env: { ...server.env } } : {}),
    stderr: server.stderr ?? 'inherit',
  })
  const client = new Client(server.clientInfo ?? { name: 'toolstack', version: '0.1.0' })
  let pid: number | undefined
  let closing: Promise<void> | undefined

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      // the SDK's own close ends stdin, then escalates to SIGTERM and SIGKILL at its
      // own pace; it is given `graceMs`, and whatever still runs after that is killed
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

  // the transport spawns the server as the connection starts: its pid is read before
  // the handshake can fail, since a failed handshake clears it
  const connecting = client.connect(transport)
  pid = transport.pid ?? undefined
  try {
    await connecting
    // Stryker disable next-line LogicalOperator: the transport spawns as connect begins, so transport.pid is pid already; this only keeps a later SDK that spawns later right
    pid = transport.pid ?? pid
  } catch (e) {
    await close()
    throw new Error(`connectStdio: could not connect to ${JSON.stringify(server.command)}: ${describeError(e)}`, { cause: e })
  }
  return {
    client,
    get pid() {
      // Stryker disable next-line ConditionalExpression: a connection is returned only once the spawn succeeded, so pid is a number here; the test is for the compiler
      return pid !== undefined && isAlive(pid) ? pid : undefined
    },
    close,
  }
}
