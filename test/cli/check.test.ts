// `toolstack check CONFIG`, run as a user runs it, over real upstream processes (the reference filesystem server
// from npm and the fixtures): every problem of a bad file at once; each upstream started, listed (its tool count
// what an SDK client of ours counts) and stopped; the exit status says which.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { isRunning, killAll, root, runCli, serverFilesystem, tempDir } from './support.js'

const fixture = (name: string): string => join(root, 'test/mcp/fixtures', name)

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  await killAll()
  for (const c of cleanups.splice(0).reverse()) await c()
})

// how many tools a server lists, asked by the SDK's own client (the oracle)
const listedBySdk = async (command: string, args: ReadonlyArray<string>): Promise<number> => {
  const client = new Client({ name: 'oracle', version: '1' })
  await client.connect(new StdioClientTransport({ command, args: [...args], stderr: 'ignore' }))
  try {
    return (await client.listTools()).tools.length
  } finally {
    await client.close()
  }
}

const configIn = (dir: string, config: unknown): string => {
  const file = join(dir, 'toolstack.json')
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config))
  return file
}

const pidsIn = (text: string): Array<number> => [...text.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]))

describe('toolstack check', () => {
  it('starts each upstream, says its tool count, stops it, and exits 0 when all is good', async () => {
    const { dir, remove } = tempDir()
    cleanups.push(remove)
    const config = configIn(dir, {
      mcpServers: {
        fs: { command: process.execPath, args: [serverFilesystem, dir] },
        who: { command: process.execPath, args: [fixture('whoami-server.mjs')] },
      },
      rules: [{ tool: 'fs_read_text_file', decision: 'allow' }],
      store: 'redis://user:s3cret@127.0.0.1:1/0',
    })
    const [fsTools, whoTools] = await Promise.all([
      listedBySdk(process.execPath, [serverFilesystem, dir]),
      listedBySdk(process.execPath, [fixture('whoami-server.mjs')]),
    ])
    const run = await runCli(['check', config])
    const out = run.stdout.toString()
    expect(run.status, out + run.stderr).toBe(0)
    expect(out).toMatch(
      new RegExp(`^ok {4}upstream "fs": started \\(pid \\d+\\), listed ${fsTools} tools in \\d+ ms as fs_\\*$`, 'm'),
    )
    expect(out).toMatch(
      new RegExp(
        `^ok {4}upstream "who": started \\(pid \\d+\\), listed ${whoTools} tools? in \\d+ ms as who_\\*$`,
        'm',
      ),
    )
    expect(out).toContain('ok    2 upstreams stopped')
    expect(out).toContain(`toolstack check: all good: ${fsTools + whoTools} tools from 2 upstreams`)
    // the store is named without its password, and not opened (nothing listens on port 1)
    expect(out).toContain('store redis://***@127.0.0.1:1/0 (not opened)')
    expect(out).not.toContain('s3cret')
    // every upstream process it started is gone when it has exited
    const pids = pidsIn(out)
    expect(pids).toHaveLength(2)
    expect(pids.filter(isRunning)).toEqual([])
  })

  it('names every problem of a bad file at once, starts nothing, and exits 2', async () => {
    const { dir, remove } = tempDir()
    cleanups.push(remove)
    const pidFile = join(dir, 'started')
    const config = configIn(dir, {
      mcpServers: {
        fs: { comand: 'npx' },
        ok: { command: process.execPath, args: [fixture('whoami-server.mjs')], env: { WHOAMI_PIDFILE: pidFile } },
      },
      rules: [{ tool: 'x', decision: 'alow' }],
      timeout: -1,
    })
    const run = await runCli(['check', config])
    const out = run.stdout.toString()
    expect(run.status).toBe(2)
    const fails = out.split('\n').filter((l) => l.startsWith('FAIL'))
    expect(fails).toHaveLength(3)
    expect(out).toContain('did you mean "command"?')
    expect(out).toContain('rules[0].decision')
    expect(out).toContain('timeout must be a whole number')
    expect(out).toContain('toolstack check: 3 problems; nothing was started')
    expect(existsSync(pidFile)).toBe(false)
  })

  it('says an upstream that fails to start, or does not list in time, escaped and bounded, and exits 1', async () => {
    const { dir, remove } = tempDir()
    cleanups.push(remove)
    const hostile = 'bad\u001b]0;owned\u0007' + 'x'.repeat(5000)
    const config = configIn(dir, {
      mcpServers: {
        [hostile]: {
          command: process.execPath,
          args: ['-e', `process.stderr.write('\\u001b[2J' + 'y'.repeat(9000)); process.exit(3)`],
          prefix: 'bad',
        },
        slow: { command: process.execPath, args: [fixture('slow-server.mjs')], env: { SLOW_MS: '60000' } },
        who: {
          command: process.execPath,
          args: [fixture('whoami-server.mjs')],
          env: { WHOAMI_PIDFILE: join(dir, 'who.pid'), WHOAMI_STUBBORN: '1' },
        },
      },
      startupMs: 1500,
    })
    const started = Date.now()
    const run = await runCli(['check', config])
    const out = run.stdout.toString()
    expect(run.status, out).toBe(1)
    // the window is the configuration's, not the 30 s default
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(out).toMatch(/^FAIL {2}upstream "bad\\u001b\]0;owned\\u0007x+…": did not start: .*exited with code 3.*y+…$/m)
    expect(out).toMatch(/^FAIL {2}upstream "slow": started, but did not list its tools within the start-up window$/m)
    expect(out).toMatch(/^ok {4}upstream "who": started/m)
    expect(out).toContain('toolstack check: 2 problems')
    // nothing raw reaches the terminal, and no line is longer than its bound
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    expect(Math.max(...out.split('\n').map((l) => l.length))).toBeLessThan(1_200)
    // even an upstream that ignores SIGTERM and the end of its input is stopped
    const who = Number(readFileSync(join(dir, 'who.pid'), 'utf8'))
    expect(pidsIn(out)).toEqual([who])
    expect(isRunning(who)).toBe(false)
  })

  it('an unreadable file, and a missing argument', async () => {
    const missing = await runCli(['check', '/nonexistent/toolstack.json'])
    expect(missing.status).toBe(2)
    expect(missing.stdout.toString()).toMatch(
      /^FAIL {2}cannot read the configuration "\/nonexistent\/toolstack.json": ENOENT/m,
    )
    const none = await runCli(['check'])
    expect(none.status).toBe(2)
    expect(none.stderr).toContain("missing required argument 'config'")
  })
})
