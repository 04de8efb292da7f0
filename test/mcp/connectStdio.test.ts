// connectStdio when the handshake fails: a clear error, and no process left behind.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { StdioServerCommand } from '../../src/mcp/index.js'
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
    const connecting = connectStdio({
      command: process.execPath,
      args: [script, pidFile],
      stderr: 'ignore',
      graceMs: 200,
    })
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

// What connectStdio rejects with; a connection that was made after all is closed.
const failure = (server: StdioServerCommand): Promise<Error> =>
  connectStdio(server).then(
    async (conn) => {
      await conn.close()
      return new Error('connected')
    },
    (e: unknown) => e as Error,
  )

// A real server that dies before the handshake: `node -e SCRIPT`, this test's own Node.
const dying = (script: string, rest: Partial<StdioServerCommand> = {}): Promise<Error> =>
  failure({ command: process.execPath, args: ['-e', script], stderr: 'ignore', graceMs: 200, ...rest })

const NODE = JSON.stringify(process.execPath)

describe('connectStdio: a server that exits before the handshake', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('says its exit code and the end of its stderr, even with stderr ignored', async () => {
    const e = await dying(`console.error('boom'); process.exit(3)`)
    expect(e.message).toBe(
      `connectStdio: could not connect to ${NODE}: MCP error -32000: Connection closed; the server exited with code 3; the end of its stderr: boom`,
    )
  })

  it('onStderrLine: each line of its stderr, without its break, cut at 1,000 characters, the rest of a longer one dropped', async () => {
    const lines: Array<string> = []
    const script = [
      `process.stderr.write('one\\r\\ntw')`,
      `setTimeout(() => process.stderr.write('o\\n' + 'x'.repeat(2500)), 20)`,
      `setTimeout(() => process.stderr.write('y'.repeat(10) + '\\n\\u001b]0;t\\u0007\\néé\\n'), 40)`,
      `setTimeout(() => process.exit(3), 80)`,
    ].join(';')
    await dying(script, {
      onStderrLine: (l) => {
        lines.push(l)
        // a throwing callback costs the others nothing
        throw new Error('not mine')
      },
    })
    expect(lines).toStrictEqual(['one', 'two', 'x'.repeat(1000), '\u001b]0;t\u0007', 'éé'])
  })

  it('refuses an onStderrLine that is not a function', async () => {
    await expect(connectStdio({ command: process.execPath, onStderrLine: 'log' as never })).rejects.toThrow(
      /onStderrLine must be a function/,
    )
  })

  it('says the signal that ended it, and nothing of a stderr it left empty', async () => {
    const e = await dying(`process.kill(process.pid, 'SIGKILL')`)
    expect(e.message).toBe(
      `connectStdio: could not connect to ${NODE}: MCP error -32000: Connection closed; the server was ended by signal SIGKILL`,
    )
  })

  it('a shell that finds no such command: its "not found" is in the error', async () => {
    // (not mcp-server-filesystem itself: npx puts node_modules/.bin, which has it, on the PATH)
    const e = await failure({
      command: 'sh',
      args: ['-c', 'mcp-server-toolstack-none'],
      stderr: 'ignore',
      graceMs: 200,
    })
    expect(e.message).toMatch(
      /^connectStdio: could not connect to "sh": MCP error -32000: Connection closed; the server exited with code 127; the end of its stderr: .*mcp-server-toolstack-none: .*not found$/,
    )
  })

  it('keeps the last 5 lines that are not blank, each escaped: no control character reaches a terminal', async () => {
    const e = await dying(
      `for (let i = 0; i < 10; i++) process.stderr.write('line ' + i + '\\r\\n  \\n'); process.stderr.write('\\x1b]0;owned\\x07\\x1b[2J\\u202e'); process.exit(1)`,
    )
    expect(e.message).toBe(
      `connectStdio: could not connect to ${NODE}: MCP error -32000: Connection closed; the server exited with code 1; the end of its stderr: … | line 6 | line 7 | line 8 | line 9 | \\u001b]0;owned\\u0007\\u001b[2J\\u202e`,
    )
    // eslint-disable-next-line no-control-regex
    expect(e.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/)
  })

  it('five lines are all of it, with nothing left out', async () => {
    const e = await dying(`process.stderr.write('a\\nb\\nc\\nd\\ne\\n'); process.exit(1)`)
    expect(e.message).toMatch(/; the end of its stderr: a \| b \| c \| d \| e$/)
  })

  it('keeps at most the last 1024 bytes of it', async () => {
    const e = await dying(`process.stderr.write('y'.repeat(10000) + 'x'.repeat(5000) + '\\n'); process.exit(1)`)
    expect(e.message).toBe(
      `connectStdio: could not connect to ${NODE}: MCP error -32000: Connection closed; the server exited with code 1; the end of its stderr: …${'x'.repeat(1023)}`,
    )
  })

  it('stderr "inherit" (the default) still shows the server\'s stderr here, as it came; "ignore" does not', async () => {
    const written: Array<string> = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(Buffer.from(chunk).toString())
      return true
    })
    const shown = await dying(`process.stderr.write('\\x1b[1mloud\\n'); process.exit(2)`, { stderr: 'inherit' })
    const quiet = await dying(`process.stderr.write('hush\\n'); process.exit(2)`, { stderr: 'ignore' })
    vi.restoreAllMocks()
    expect(written.join('')).toContain('\x1b[1mloud\n')
    expect(written.join('')).not.toContain('hush')
    expect(shown.message).toMatch(/the end of its stderr: \\u001b\[1mloud$/)
    expect(quiet.message).toMatch(/the end of its stderr: hush$/)
  })

  it('a command that does not exist: the spawn error, and what to check', async () => {
    const missing = join(tempDir(), 'mcp-server-filesystem')
    const e = await failure({ command: missing, stderr: 'ignore', graceMs: 200 })
    expect(e.message).toBe(
      `connectStdio: could not connect to ${JSON.stringify(missing)}: spawn ${missing} ENOENT; no such command: check its name and the PATH, or give its full path`,
    )
  })

  it('a cwd that does not exist is named too, for it fails the same way', async () => {
    const nowhere = join(tempDir(), 'nowhere')
    const e = await failure({ command: process.execPath, cwd: nowhere, stderr: 'ignore', graceMs: 200 })
    expect(e.message).toBe(
      `connectStdio: could not connect to ${NODE}: spawn ${process.execPath} ENOENT; either the command or the cwd ${JSON.stringify(nowhere)} does not exist`,
    )
  })
})

describe('connectStdio: options', () => {
  const refusal = (u: unknown): Promise<Error> => failure(u as StdioServerCommand)

  it.each([
    [
      { cmd: 'mcp-server-filesystem' },
      'connectStdio: unknown option "cmd" (known options: command, args, cwd, env, stderr, onStderrLine, clientInfo, capabilities, graceMs, signal); did you mean "command"?',
    ],
    [
      { command: 'x', stdErr: 'ignore' },
      'connectStdio: unknown option "stdErr" (known options: command, args, cwd, env, stderr, onStderrLine, clientInfo, capabilities, graceMs, signal); did you mean "stderr"?',
    ],
    [
      { command: 'x', argv: [], arguments: [], environment: {}, grace: 1, zzz: 1 },
      'connectStdio: unknown options "argv", "arguments", "environment", "grace", "zzz" (known options: command, args, cwd, env, stderr, onStderrLine, clientInfo, capabilities, graceMs, signal); did you mean "args" for "argv", "args" for "arguments", "env" for "environment", "graceMs" for "grace"?',
    ],
    [
      {},
      'connectStdio: option "command" is required: the server\'s executable (for a Node server, process.execPath, with its script in args)',
    ],
    [
      undefined,
      'connectStdio: option "command" is required: the server\'s executable (for a Node server, process.execPath, with its script in args)',
    ],
    ['npx', 'connectStdio: options must be an object, got the string "npx"'],
    [{ command: '' }, 'connectStdio: command must be a non-empty string, got the string ""'],
    [{ command: 1 }, 'connectStdio: command must be a non-empty string, got number 1'],
    [{ command: 'x', args: 'a b' }, 'connectStdio: args must be an array of strings, got the string "a b"'],
    [{ command: 'x', env: { A: 1 } }, 'connectStdio: env.A must be string, got number 1'],
    [{ command: 'x', stderr: 'pipe' }, 'connectStdio: stderr must be "inherit" | "ignore", got the string "pipe"'],
    [{ command: 'x', clientInfo: { name: 'h' } }, 'connectStdio: clientInfo.version must be string, got undefined'],
    [
      { command: 'x', graceMs: 1.5 },
      'connectStdio: graceMs must be a whole number of milliseconds between 0 and 2147483647, got number 1.5',
    ],
    [
      { command: 'x', graceMs: -1 },
      'connectStdio: graceMs must be a whole number of milliseconds between 0 and 2147483647, got number -1',
    ],
    [
      { command: 'x', graceMs: 2 ** 31 },
      'connectStdio: graceMs must be a whole number of milliseconds between 0 and 2147483647, got number 2147483648',
    ],
  ])('refuses %j with a TypeError that says what to do, before starting anything', async (u, message) => {
    const e = await refusal(u)
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe(message)
  })

  it('any other spawn failure is said as it came, with no hint', async () => {
    const file = join(tempDir(), 'not-executable')
    writeFileSync(file, '')
    const e = await failure({ command: file, stderr: 'ignore', graceMs: 200 })
    expect(e.message).toBe(`connectStdio: could not connect to ${JSON.stringify(file)}: spawn ${file} EACCES`)
  })

  it('takes graceMs 0 and 2147483647', async () => {
    // a command that does not exist: the options were taken, the spawn failed
    for (const graceMs of [0, 2_147_483_647]) {
      const e = await refusal({ command: join(tempDir(), 'none'), stderr: 'ignore', graceMs })
      expect(e.message).toMatch(/ENOENT/)
    }
  })
})

describe('connectStdio: a flood of tools/list_changed', () => {
  const STORM = fileURLToPath(new URL('./fixtures/storm-server.mjs', import.meta.url))

  it('hands the client one of those that come in one read, not each: 10,000 in one write are a few', async () => {
    const conn = await connectStdio({ command: process.execPath, args: [STORM, 'burst'], stderr: 'ignore' })
    try {
      let told = 0
      conn.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        told++
      })
      // the answer is written after the flood, so every list_changed has been read when it comes
      const sent = await conn.client.callTool({ name: 'storm', arguments: { n: 10_000 } })
      expect(sent.content).toStrictEqual([{ type: 'text', text: 'sent 10000' }])
      expect(told).toBeGreaterThanOrEqual(1)
      // one per chunk read from the pipe (64 KB, about 1,000 of them); each of the 10,000 without the coalescing
      expect(told).toBeLessThanOrEqual(100)
      const lists = await conn.client.callTool({ name: 'lists', arguments: {} })
      expect(lists.content).toStrictEqual([{ type: 'text', text: '0' }])
    } finally {
      await conn.close()
    }
  })
})
