// `toolstack serve` from a person's first hour: the first listing holds the tools of upstreams that are still
// starting (as `npx -y` ones are), one line says how the start went, the terminal says every warning and refusal
// even with a log, and what upstreams write is collapsed. The command runs from source, as a separate process.
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { cliArgs, eventually, killAll, serverFilesystem, tempDir, track } from './support.js'

const SLOW = fileURLToPath(new URL('../mcp/fixtures/slow-server.mjs', import.meta.url))
const WHOAMI = fileURLToPath(new URL('../mcp/fixtures/whoami-server.mjs', import.meta.url))

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  await killAll()
  for (const c of cleanups.splice(0).reverse()) await c()
})

const workspace = (): string => {
  const { dir, remove } = tempDir()
  cleanups.push(remove)
  return dir
}

const configFile = (dir: string, config: unknown): string => {
  const file = join(dir, 'toolstack.json')
  writeFileSync(file, JSON.stringify(config))
  return file
}

const slow = (ms: number, env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [SLOW],
  env: { SLOW_MS: String(ms), ...env },
})

// a host over stdio: the gateway's stderr kept, its pid known
const host = async (args: ReadonlyArray<string>, capabilities: Record<string, unknown> = {}) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: cliArgs('serve', ...args),
    stderr: 'pipe',
    env: { ...(process.env as Record<string, string>), NO_COLOR: '1' },
  })
  let err = ''
  transport.stderr?.on('data', (b: Buffer) => (err += b.toString()))
  const client = new Client({ name: 'host', version: '1' }, { capabilities })
  await client.connect(transport)
  cleanups.push(() => client.close())
  return { client, stderr: () => err, pid: transport.pid }
}

const names = async (client: Client): Promise<ReadonlyArray<string>> =>
  (await client.listTools()).tools.map((t) => t.name).sort()

describe('toolstack serve: the start', () => {
  it('the first listing waits for an upstream still starting (3 s, beyond listWaitMs), and one line sums the start up with the pid', async () => {
    const dir = workspace()
    const file = configFile(dir, {
      mcpServers: { late: slow(3000), soon: slow(0, { SLOW_NAME: 'hello' }) },
      rules: [{ tool: '*', decision: 'allow' }],
    })
    const { client, stderr, pid } = await host(['--config', file])
    // what a host that lists once, and ignores list_changed, gets
    expect(await names(client)).toEqual(['late_deep', 'late_ping', 'soon_deep', 'soon_hello'])
    await eventually(() => stderr().includes('serving over stdio'), 10_000, 'the start summary')
    expect(stderr()).toContain(`toolstack serve: 2 upstreams, 4 tools, serving over stdio (pid ${pid})`)
    const call = await client.callTool({ name: 'late_ping', arguments: {} })
    expect(call.content).toEqual([{ type: 'text', text: 'pong' }])
  }, 60_000)

  it('an upstream that never answers holds the first listing for startupMs at most, and no later listing', async () => {
    const dir = workspace()
    const file = configFile(dir, {
      mcpServers: { hung: slow(600_000), soon: slow(0) },
      rules: [{ tool: '*', decision: 'allow' }],
      startupMs: 4000,
    })
    const { client, stderr } = await host(['--config', file])
    expect(await names(client)).toEqual(['soon_deep', 'soon_ping'])
    await eventually(() => stderr().includes('serving over stdio'), 10_000, 'the start summary')
    expect(stderr()).toContain('toolstack serve: 2 upstreams ("hung" still starting), 2 tools, serving over stdio')
    // the window is over: a listing no longer waits for the hung one (it would take 4 s more)
    const t0 = Date.now()
    expect(await names(client)).toEqual(['soon_deep', 'soon_ping'])
    expect(Date.now() - t0).toBeLessThan(3000)
  }, 60_000)

  it('over HTTP the port is bound before any upstream starts: a port in use exits 2 at once, and no upstream was started', async () => {
    const dir = workspace()
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())))
    const port = (taken.address() as AddressInfo).port
    const pidfile = join(dir, 'upstream.pid')
    const file = configFile(dir, {
      mcpServers: { who: { command: process.execPath, args: [WHOAMI], env: { WHOAMI_PIDFILE: pidfile } } },
    })
    const child = track(process.execPath, cliArgs('serve', '--config', file, '--http', `127.0.0.1:${port}`), {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    child.stderr?.on('data', (b: Buffer) => (err += b.toString()))
    const status = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(status).toBe(2)
    expect(err).toContain(`port ${port} on 127.0.0.1 is already in use`)
    expect(existsSync(pidfile)).toBe(false)
  }, 60_000)
})

describe('toolstack serve: the terminal', () => {
  const chatty = (dir: string) =>
    configFile(dir, {
      mcpServers: { fs: { command: process.execPath, args: [serverFilesystem, dir] } },
      rules: [
        { tool: 'fs_read_text_file', decision: 'allow' },
        { tool: 'fs_write_file', decision: 'ask', under: dir },
      ],
      log: join(dir, 'toolstack.jsonl'),
    })
  const misbehave = async (client: Client, dir: string) => {
    writeFileSync(join(dir, 'notes.txt'), 'one\n')
    await names(client)
    await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: 1 } })
    // a tool not listed is a JSON-RPC error to the host (MCP's "Unknown tool"), and a refusal on stderr
    await expect(client.callTool({ name: 'fs_delete_everything', arguments: {} })).rejects.toThrow(/no tool named/)
    await client.callTool({ name: 'fs_write_file', arguments: { path: join(dir, 'x.txt'), content: 'x' } })
  }

  it('with a log, stderr still says each warning, each refusal (a tool that is not listed included) and that no one could be asked', async () => {
    const dir = workspace()
    const { client, stderr } = await host(['--config', chatty(dir)])
    await misbehave(client, dir)
    await eventually(() => stderr().includes('NoOneToAsk'), 10_000, 'the last line')
    const lines = stderr().split('\n')
    expect(lines.some((l) => l.includes('fs_read_text_file call') && l.includes('"haed"'))).toBe(true)
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^toolstack serve: fs_delete_everything call \S+ refused: no tool of that name is listed \(unknown, misspelt, or hidden\)$/,
      ),
    )
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^toolstack serve: fs_write_file call \S+ refused by nobody \(NoOneToAsk: no one could be asked/,
      ),
    )
    // the allowed read is no line of its own, but the log has every record
    expect(lines.filter((l) => l.includes('fs_read_text_file call')).length).toBe(1)
    const logged = readFileSync(join(dir, 'toolstack.jsonl'), 'utf8')
    expect(logged).toContain('"outcome":"allowed","by":"rules"')
  }, 60_000)

  it('--quiet: the log gets every record, stderr only the start', async () => {
    const dir = workspace()
    const { client, stderr } = await host(['--config', chatty(dir), '--quiet'])
    await misbehave(client, dir)
    await eventually(
      () =>
        existsSync(join(dir, 'toolstack.jsonl')) &&
        readFileSync(join(dir, 'toolstack.jsonl'), 'utf8').includes('NoOneToAsk'),
      10_000,
      'the log',
    )
    await eventually(() => stderr().includes('serving over stdio'), 10_000, 'the start summary')
    expect(stderr().trim().split('\n')).toEqual([
      expect.stringMatching(/^toolstack serve: 1 upstream, \d+ tools, serving over stdio/),
    ])
  }, 60_000)

  it('upstream noise is collapsed: the roots message once, and a crashing upstream one line per back-off step, its trace cut to its end', async () => {
    const dir = workspace()
    const crash = 'for (let i = 0; i < 40; i++) console.error("frame " + i); process.exit(1)'
    const config = {
      mcpServers: {
        fs: { command: process.execPath, args: [serverFilesystem, dir] },
        bad: { command: process.execPath, args: ['-e', crash] },
      },
    }
    const file = configFile(dir, config)
    const { client, stderr, pid } = await host(['--config', file], { roots: {} })
    await names(client)
    // the filesystem server says it again at each start: a reload that restarts it
    writeFileSync(
      file,
      JSON.stringify({
        ...config,
        mcpServers: { ...config.mcpServers, fs: { ...config.mcpServers.fs, env: { X: '1' } } },
      }),
    )
    process.kill(pid as number, 'SIGHUP')
    await eventually(() => stderr().includes('restarted "fs"'), 15_000, 'the reload')
    await eventually(() => (stderr().match(/upstream "bad"/g) ?? []).length >= 3, 15_000, 'three failures')
    const lines = stderr().split('\n')
    expect(lines.filter((l) => l.includes('Failed to request initial roots'))).toHaveLength(1)
    const bad = lines.filter((l) => l.includes('upstream "bad"'))
    // one line per failed start, each with its restart; the trace's last lines quoted once, then "the same way"
    expect(bad.every((l) => /; restarts in \d+ ms$/.test(l))).toBe(true)
    expect(bad[0]).toContain('frame 39')
    expect(bad[0]).not.toContain('frame 30')
    expect(bad.slice(1).every((l) => l.includes('failed to start again, the same way'))).toBe(true)
    expect(lines.some((l) => l.includes('stderr: frame'))).toBe(false)
  }, 60_000)
})

describe('toolstack serve --http: connections', () => {
  it('under a file limit of 128, a client holding 200 connections cannot take the files the gateway needs: one past the cap is refused, said once, and a reload still starts its upstream', async () => {
    const dir = workspace()
    const upstream = (x: string) => ({
      mcpServers: { who: { command: process.execPath, args: [WHOAMI], env: { X: x } } },
    })
    const file = configFile(dir, upstream('1'))
    const child = track(
      '/bin/sh',
      [
        '-c',
        'ulimit -n 128 && exec "$0" "$@"',
        process.execPath,
        ...cliArgs('serve', '--config', file, '--http', '127.0.0.1:0'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    )
    let err = ''
    child.stderr?.on('data', (b: Buffer) => (err += b.toString()))
    await eventually(() => /listening on (\S+)/.test(err) || child.exitCode !== null, 30_000, 'the start')
    const url = new URL(/listening on (\S+)/.exec(err)?.[1] ?? '')
    const { connect } = await import('node:net')
    const held = Array.from({ length: 200 }, () => {
      const socket = connect(Number(url.port), url.hostname)
      socket.on('error', () => undefined)
      return socket
    })
    cleanups.push(() => held.forEach((s) => s.destroy()))
    await eventually(() => err.includes('connections are open, the most this server keeps'), 15_000, 'the refusal')
    // the gateway still has files to spare: a reload restarts its upstream, with new pipes
    writeFileSync(file, JSON.stringify(upstream('2')))
    child.kill('SIGHUP')
    await eventually(() => err.includes('restarted "who"'), 15_000, 'the reload')
    await eventually(() => (err.match(/upstream "who" (started|failed)/g) ?? []).length >= 2, 15_000, 'the restart')
    // started twice: at the start, and by the reload; never failed for want of a file
    expect(err.match(/upstream "who" (started|failed)/g)).toEqual(['upstream "who" started', 'upstream "who" started'])
    expect(err.match(/connections are open/g)).toHaveLength(1)
  }, 60_000)
})
