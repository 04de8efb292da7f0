// connectStdio against a server that says how it was started (fixtures/whoami-server.mjs):
// what reaches the process (arguments, cwd, environment, clientInfo, stderr), its pid
// while it runs and after, and close: idempotent, waiting graceMs for a server that will
// not go before killing it, and a failed handshake that leaves no process.
import { chmodSync, existsSync, fstatSync, readFileSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import type { StdioConnection, StdioServerCommand } from '../../src/mcp/index.js'
import { connectStdio } from '../../src/mcp/index.js'
import { isAlive } from '../support/processes.js'
import { cleanUpAfterEach, tempDir } from './fixtures.js'

cleanUpAfterEach()
const WHOAMI = fileURLToPath(new URL('./fixtures/whoami-server.mjs', import.meta.url))

const open: Array<StdioConnection> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(open.splice(0).map((c) => c.close()))
})

const start = async (command: StdioServerCommand): Promise<StdioConnection> => {
  const conn = await connectStdio(command)
  open.push(conn)
  return conn
}

interface Whoami {
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
  readonly env: { readonly WHOAMI_A: string | null; readonly hasPath: boolean }
  readonly clientInfo: unknown
  readonly pid: number
  readonly stderr: { readonly dev: number; readonly ino: number; readonly rdev: number }
}

const whoami = async (conn: StdioConnection): Promise<Whoami> => {
  const r = await conn.client.callTool({ name: 'whoami', arguments: {} })
  return JSON.parse((r.content as Array<{ text: string }>)[0]?.text ?? 'null') as Whoami
}

const identity = (s: { dev: number; ino: number; rdev: number }) => ({ dev: s.dev, ino: s.ino, rdev: s.rdev })

/** What is written to this process's stderr from now on, in place of writing it (afterEach restores it). */
const captureStderr = (): Array<string> => {
  const written: Array<string> = []
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(Buffer.from(chunk).toString())
    return true
  })
  return written
}

/** An executable that runs the whoami server: a command that needs no arguments. */
const executable = (): string => {
  const file = join(tempDir(), 'whoami')
  writeFileSync(file, `#!${process.execPath}\nawait import(${JSON.stringify(WHOAMI)})\n`)
  chmodSync(file, 0o755)
  return file
}

describe('connectStdio: what reaches the server', () => {
  it('the arguments, cwd, environment (added to the default one), clientInfo given; stderr ignored', async () => {
    const written = captureStderr()
    const dir = tempDir()
    const conn = await start({
      command: process.execPath,
      args: [WHOAMI, 'one', 'two words'],
      cwd: dir,
      env: { WHOAMI_A: 'a value', WHOAMI_STDERR: 'not shown\n' },
      stderr: 'ignore',
      clientInfo: { name: 'my-host', version: '9.9.9' },
    })
    const me = await whoami(conn)
    expect(me.argv).toStrictEqual(['one', 'two words'])
    expect(me.cwd).toBe(dir)
    expect(me.env).toStrictEqual({ WHOAMI_A: 'a value', hasPath: true })
    expect(me.clientInfo).toStrictEqual({ name: 'my-host', version: '9.9.9' })
    // a pipe (its end is kept for an error), not this process's stderr
    expect(me.stderr).not.toStrictEqual(identity(fstatSync(2)))
    await conn.close()
    expect(written.join('')).not.toContain('not shown')
  })

  it("by default: no arguments, this process's cwd, the default environment only, clientInfo toolstack 0.1.0, stderr shown here", async () => {
    process.env['WHOAMI_A'] = 'not passed on'
    const written = captureStderr()
    try {
      const conn = await start({ command: executable() })
      const me = await whoami(conn)
      expect(me.argv).toStrictEqual([])
      expect(me.cwd).toBe(process.cwd())
      expect(me.env).toStrictEqual({ WHOAMI_A: null, hasPath: true })
      expect(me.clientInfo).toStrictEqual({ name: 'toolstack', version: '0.1.0' })
    } finally {
      delete process.env['WHOAMI_A']
    }
    // once connected too, as it comes
    const shouting = await start({
      command: process.execPath,
      args: [WHOAMI],
      env: { WHOAMI_STDERR: '\x1b[1mcalled\n' },
    })
    await whoami(shouting)
    await vi.waitFor(() => expect(written.join('')).toContain('\x1b[1mcalled\n'))
  })
})

describe('connectStdio: pid and close', () => {
  it("pid is the server's while it runs and undefined once closed; close twice is one close, and the process is gone", async () => {
    const conn = await start({ command: process.execPath, args: [WHOAMI], stderr: 'ignore' })
    const me = await whoami(conn)
    expect(conn.pid).toBe(me.pid)
    expect(isAlive(me.pid)).toBe(true)
    const first = conn.close()
    expect(first).toBeInstanceOf(Promise)
    expect(conn.close()).toBe(first)
    await first
    expect(isAlive(me.pid)).toBe(false)
    expect(conn.pid).toBeUndefined()
  })

  it('a server that ignores the end of its input and SIGTERM: killed after graceMs, not before, and gone when close resolves', async () => {
    const conn = await start({
      command: process.execPath,
      args: [WHOAMI],
      env: { WHOAMI_STUBBORN: '1' },
      stderr: 'ignore',
      graceMs: 300,
    })
    const pid = (await whoami(conn)).pid
    const t0 = performance.now()
    await conn.close()
    const took = performance.now() - t0
    expect(isAlive(pid)).toBe(false)
    expect(took).toBeGreaterThanOrEqual(295)
    // the SDK's own close would wait 2000 ms before even a SIGTERM
    expect(took).toBeLessThan(1900)
  })

  it('a server that ignores the end of its input and SIGTERM: SIGTERM after graceMs, SIGKILL after graceMs more, gone when close resolves', async () => {
    const conn = await start({
      command: process.execPath,
      args: [WHOAMI],
      env: { WHOAMI_STUBBORN: '1' },
      stderr: 'ignore',
      graceMs: 300,
    })
    const pid = (await whoami(conn)).pid
    const t0 = performance.now()
    await conn.close()
    const took = performance.now() - t0
    expect(isAlive(pid)).toBe(false)
    expect(took).toBeGreaterThanOrEqual(595)
    expect(took).toBeLessThan(3000)
  }, 15_000)

  it("a group that stays taken once the server is gone (another user's now: EPERM to every signal): close gives up on it after 5 s", async () => {
    const conn = await start({ command: process.execPath, args: [WHOAMI], stderr: 'ignore', graceMs: 100 })
    const pid = (await whoami(conn)).pid
    const kill = process.kill.bind(process)
    vi.spyOn(process, 'kill').mockImplementation((target, signal) => {
      if (target === -pid) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' })
      return kill(target, signal)
    })
    const t0 = performance.now()
    await conn.close()
    const took = performance.now() - t0
    vi.restoreAllMocks()
    expect(took).toBeGreaterThanOrEqual(4990)
    expect(took).toBeLessThan(8000)
    expect(isAlive(pid)).toBe(false)
  }, 15_000)

  it('ends the whole process group: a helper the server started, and a shell that ignores SIGTERM', async () => {
    const pidFile = join(tempDir(), 'helper.pid')
    const node = JSON.stringify(process.execPath)
    const helper = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
    const conn = await start({
      command: 'sh',
      args: ['-c', `trap '' TERM; ${node} -e ${JSON.stringify(helper)} & ${node} ${JSON.stringify(WHOAMI)}`],
      stderr: 'ignore',
      graceMs: 200,
    })
    const server = (await whoami(conn)).pid
    const shell = conn.pid as number
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 25))
    const helperPid = Number(readFileSync(pidFile, 'utf8'))
    expect([isAlive(shell), isAlive(server), isAlive(helperPid)]).toStrictEqual([true, true, true])
    await conn.close()
    expect([isAlive(shell), isAlive(server), isAlive(helperPid)]).toStrictEqual([false, false, false])
  }, 15_000)

  it('a process killed outright (SIGKILL) while connected leaves no process of the server’s group: its watchdog ends it', async () => {
    const pidFile = join(tempDir(), 'helper.pid')
    const node = JSON.stringify(process.execPath)
    // the helper reads no input, so the end of the server's input does not end it
    const helper = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
    const code = `
      import { connectStdio } from ${JSON.stringify(fileURLToPath(new URL('../../src/mcp/index.ts', import.meta.url)))}
      await connectStdio({
        command: 'sh',
        args: ['-c', ${JSON.stringify(`${node} -e ${JSON.stringify(helper)} & ${node} ${JSON.stringify(WHOAMI)}`)}],
        stderr: 'ignore',
        graceMs: 200,
      })
      process.stdout.write('connected\\n')
      setInterval(() => {}, 1000)`
    const host = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: 'pipe' })
    onTestFinished(() => void host.kill('SIGKILL'))
    // connected, or (a mistake here) failed: either way the test goes on and says so
    await new Promise((r) => {
      host.stdout.once('data', r)
      host.once('exit', r)
    })
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 25))
    const helperPid = Number(readFileSync(pidFile, 'utf8'))
    onTestFinished(() => {
      if (isAlive(helperPid)) process.kill(helperPid, 'SIGKILL')
    })
    expect(isAlive(helperPid)).toBe(true)
    host.kill('SIGKILL')
    for (let i = 0; i < 400 && isAlive(helperPid); i++) await new Promise((r) => setTimeout(r, 25))
    expect(isAlive(helperPid)).toBe(false)
  }, 20_000)

  it('graceMs is 2000 by default', async () => {
    const conn = await start({
      command: process.execPath,
      args: [WHOAMI],
      env: { WHOAMI_STUBBORN: '1' },
      stderr: 'ignore',
    })
    const pid = (await whoami(conn)).pid
    const t0 = performance.now()
    await conn.close()
    const took = performance.now() - t0
    expect(isAlive(pid)).toBe(false)
    // SIGTERM after 2000 ms, SIGKILL after 2000 more
    expect(took).toBeGreaterThanOrEqual(3990)
    expect(took).toBeLessThan(6000)
  }, 15_000)
})

describe('connectStdio: a failed start', () => {
  it('a refused handshake: rejects naming the command and the reason, keeps the cause, and kills a server that will not go', async () => {
    const pidFile = join(tempDir(), 'pid')
    const error = await connectStdio({
      command: process.execPath,
      args: [WHOAMI],
      env: { WHOAMI_REFUSE: '1', WHOAMI_STUBBORN: '1', WHOAMI_PIDFILE: pidFile },
      stderr: 'ignore',
      graceMs: 200,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error?.cause).toBeInstanceOf(Error)
    const cause = error?.cause as Error
    expect(cause.message).toMatch(/no thanks/)
    expect(error?.message).toBe(
      `connectStdio: could not connect to ${JSON.stringify(process.execPath)}: ${cause.message}`,
    )
    expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false)
  })

  it('pid: a process that is not ours to signal (EPERM) is alive, one that is gone (ESRCH) is not, and any other failure is thrown', async () => {
    const conn = await start({ command: process.execPath, args: [WHOAMI], stderr: 'ignore' })
    const me = await whoami(conn)
    const failWith = (code: string) =>
      vi.spyOn(process, 'kill').mockImplementation(() => {
        throw Object.assign(new Error(code), { code })
      })
    failWith('EPERM')
    expect(conn.pid).toBe(me.pid)
    failWith('ESRCH')
    expect(conn.pid).toBeUndefined()
    failWith('EINVAL')
    expect(() => conn.pid).toThrow('EINVAL')
    vi.restoreAllMocks()
    expect(conn.pid).toBe(me.pid)
  })

  it('a command that does not exist: rejects saying so', async () => {
    const missing = join(tempDir(), 'no-such-server')
    const error = await connectStdio({ command: missing, stderr: 'ignore', graceMs: 200 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toBe(
      `connectStdio: could not connect to ${JSON.stringify(missing)}: spawn ${missing} ENOENT; no such command: check its name and the PATH, or give its full path`,
    )
    expect((error?.cause as NodeJS.ErrnoException).code).toBe('ENOENT')
  })
})
