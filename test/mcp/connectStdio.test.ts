// connectStdio when the handshake fails: a clear error, and no process left behind.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { connectStdio } from '../../src/mcp/index.js'
import { isAlive } from '../support/processes.js'
import { tempDir } from './fixtures.js'

// Writes its pid, refuses `initialize` with a JSON-RPC error, and ignores both the end
// of its input and SIGTERM: only SIGKILL ends it.
const REFUSING_SERVER = `
import { writeFileSync } from 'node:fs'
writeFileSync(process.argv[2], String(process.pid))
process.on('SIGTERM', () => {})
let rest = ''
process.stdin.on('data', (b) => {
  const lines = (rest + b.toString()).split('\\n')
  rest = lines.pop() ?? ''
  for (const l of lines) {
    const m = JSON.parse(l)
    if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'no thanks' } }) + '\\n')
  }
})
process.stdin.on('end', () => setInterval(() => {}, 1000))
`

describe('connectStdio: a failed handshake', () => {
  it('rejects naming the command and the reason, and kills a server that will not go', async () => {
    const dir = tempDir()
    const script = join(dir, 'refusing.mjs')
    const pidFile = join(dir, 'pid')
    writeFileSync(script, REFUSING_SERVER)
    const connecting = connectStdio({ command: process.execPath, args: [script, pidFile], stderr: 'ignore', graceMs: 200 })
    await expect(connecting).rejects.toThrow(/^connectStdio: could not connect to ".*node.*": .*no thanks/)
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(pid).toBeGreaterThan(0)
    expect(isAlive(pid)).toBe(false)
  })

  it('rejects clearly when the command does not exist', async () => {
    const missing = join(tempDir(), 'no-such-server')
    await expect(connectStdio({ command: missing, stderr: 'ignore', graceMs: 200 })).rejects.toThrow(
      new RegExp(`^connectStdio: could not connect to "${missing.replaceAll('/', '\\/')}": .*ENOENT`),
    )
  })
})
