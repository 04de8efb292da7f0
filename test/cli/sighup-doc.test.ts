// docs/serve.md's way to reload a gateway started in the background: run the command itself (not through npx, whose
// `$!` is npm's), and `kill -HUP $!` reaches the gateway, whose start summary names that same pid.
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { blocksOf } from '../support/blocks.js'
import { eventually, isRunning, killTree, root, tempDir } from './support.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c()
})

describe('docs/serve.md: SIGHUP to a gateway started in the background', () => {
  it('$! of the documented line is the gateway, named by its start summary, and kill -HUP $! reloads it', async () => {
    const block = blocksOf('docs/serve.md', 'sh').find((b) => /kill -HUP \$!/.test(b)) ?? ''
    expect(block).toMatch(/^\.\/node_modules\/\.bin\/toolstack serve .*&$/m)
    const { dir, remove } = tempDir()
    cleanups.push(remove)
    // the command as a project installs it: node_modules/.bin/toolstack, a link to the package's bin
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true })
    // (npm makes a bin's file executable when it installs the package: so does this test)
    chmodSync(join(root, 'dist/esm/cli/main.js'), 0o755)
    symlinkSync(join(root, 'dist/esm/cli/main.js'), join(dir, 'node_modules', '.bin', 'toolstack'))
    writeFileSync(
      join(dir, 'toolstack.json'),
      JSON.stringify({
        mcpServers: { who: { command: process.execPath, args: [join(root, 'test/mcp/fixtures/whoami-server.mjs')] } },
      }),
    )
    // the block as written, but for its port (a free one) and what this test needs to see: $!, and a wait
    const script = block
      .replace(/--http \d+/, '--http 127.0.0.1:0')
      .replace(/^kill -HUP \$!$/m, 'echo "bg=$!"\nsleep 3\nkill -HUP $!\necho sent\nwait')
    const shell = spawn('bash', ['-c', script], {
      cwd: dir,
      env: { ...process.env, PATH: `${join(dir, 'node_modules', '.bin')}:${process.env['PATH'] ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    cleanups.push(() => killTree(shell.pid as number))
    let out = ''
    let err = ''
    shell.stdout.on('data', (b: Buffer) => (out += b.toString()))
    shell.stderr.on('data', (b: Buffer) => (err += b.toString()))
    await eventually(() => /pid \d+\)$/m.test(err) && /^bg=\d+$/m.test(out), 30_000, 'the start summary')
    const background = Number(/^bg=(\d+)$/m.exec(out)?.[1])
    const summarized = Number(/pid (\d+)\)$/m.exec(err)?.[1])
    expect(summarized).toBe(background)
    await eventually(() => /reloaded: nothing changed/.test(err), 15_000, 'the reload')
    expect(isRunning(background)).toBe(true)
    killTree(shell.pid as number)
    await eventually(() => !isRunning(background), 5_000, 'the gateway to end')
  }, 60_000)
})
