// `toolstack serve`, run as a host runs it: the built command, real upstream servers,
// a real SDK Client over stdio and over Streamable HTTP.
import { spawn, spawnSync } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { isAlive } from '../support/processes.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const require = createRequire(import.meta.url)
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-serve-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }))
  writeFileSync(join(dir, 'notes.txt'), 'one\ntwo\nthree\n')
  return dir
}

const configFile = (dir: string, config: unknown): string => {
  const file = join(dir, 'toolstack.json')
  writeFileSync(file, JSON.stringify(config))
  return file
}

const gatewayConfig = (dir: string) => ({
  mcpServers: {
    fs: { command: process.execPath, args: [FILESYSTEM, dir] },
    ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
  },
  rules: [
    { tool: 'fs_read_text_file', decision: 'allow' },
    { tool: 'ev_*', decision: 'allow' },
    { tool: 'fs_write_file', decision: 'ask', under: dir },
    { tool: 'fs_move_file', decision: 'deny', note: 'nothing moves here' },
  ],
  log: join(dir, 'toolstack.jsonl'),
  // these tests are not about slow starts: on a busy machine, wait for every upstream
  listWaitMs: 30_000,
})

const records = (dir: string): Array<Record<string, unknown>> =>
  existsSync(join(dir, 'toolstack.jsonl'))
    ? readFileSync(join(dir, 'toolstack.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : []

/** The body of an initialize request, as a host sends it first. */
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
})

/** Waits until `done`, running `step` (if any) between checks. */
const until = async (done: () => boolean, ms = 15_000, step?: () => Promise<void>): Promise<void> => {
  const end = Date.now() + ms
  await step?.()
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, step === undefined ? 25 : 250))
    await step?.()
  }
}

const text = (r: Record<string, unknown>): string => JSON.stringify(r['content'])

const overStdio = async (file: string, elicit?: (message: string) => unknown): Promise<Client> => {
  const client = new Client(
    { name: 'host', version: '1' },
    elicit === undefined ? {} : { capabilities: { elicitation: {} } },
  )
  if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params.message) as never)
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [main, 'serve', '--config', file], stderr: 'ignore' }),
  )
  cleanups.push(() => client.close())
  return client
}

describe('toolstack serve, over stdio', () => {
  it('serves both upstreams under their prefixes with reason; an image comes back an image; a misspelling is logged once, with its upstream and the time', async () => {
    const dir = workspace()
    const client = await overStdio(configFile(dir, gatewayConfig(dir)))
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toEqual(
      expect.arrayContaining(['fs_read_text_file', 'fs_write_file', 'ev_echo', 'ev_get-tiny-image']),
    )
    expect(tools.every((t) => Object.keys(t.inputSchema.properties ?? {}).includes('reason'))).toBe(true)
    const image = await client.callTool({ name: 'ev_get-tiny-image', arguments: { reason: 'show the logo' } })
    expect((image.content as Array<{ type: string }>).map((b) => b.type)).toEqual(['text', 'image', 'text'])
    const echo = await client.callTool({ name: 'ev_echo', arguments: { message: 'hi', reason: 'say hi' } })
    expect(text(echo)).toContain('Echo: hi')
    for (const n of [1, 2])
      await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: n } })
    const warnings = records(dir).filter((r) => r['type'] === 'warning')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      upstream: 'fs',
      tool: 'fs_read_text_file',
      unknownKeys: ['haed'],
      suggestions: [{ key: 'haed', didYouMean: 'head' }],
    })
    expect(Number.isNaN(Date.parse(String(warnings[0]?.['time'])))).toBe(false)
  }, 60_000)

  it.runIf(existsSync('/dev/full'))(
    'a log it cannot write (a full disk): said once on stderr, and every call still answered',
    async () => {
      const dir = workspace()
      const file = configFile(dir, {
        mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } },
        rules: [{ tool: '*', decision: 'allow' }],
        log: '/dev/full',
        listWaitMs: 30_000,
      })
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [main, 'serve', '--config', file],
        stderr: 'pipe',
      })
      let stderr = ''
      transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')))
      const client = new Client({ name: 'host', version: '1' })
      await client.connect(transport)
      cleanups.push(() => client.close())
      for (const n of [1, 2, 3]) {
        const r = await client.callTool({
          name: 'fs_read_text_file',
          arguments: { path: join(dir, 'notes.txt'), haed: n },
        })
        expect(text(r)).toContain('one')
      }
      await until(() => stderr.includes('cannot write to the log'))
      expect(stderr.split('\n').filter((l) => l.includes('cannot write to the log'))).toEqual([
        'toolstack serve: cannot write to the log (ENOSPC: no space left on device, write); records it does not take are lost from it',
      ])
    },
    60_000,
  )

  it("a key misspelled inside an upstream tool's array elements is logged once, by its path", async () => {
    const dir = workspace()
    const client = await overStdio(
      configFile(dir, { ...gatewayConfig(dir), rules: [{ tool: '*', decision: 'allow' }] }),
    )
    await client.listTools()
    const edits = [
      { oldtext: 'one', newText: '1' },
      { oldtext: 'two', newText: '2' },
    ]
    for (const dryRun of [true, false])
      await client.callTool({
        name: 'fs_edit_file',
        arguments: { path: join(dir, 'notes.txt'), edits, dryRun, reason: 'fix the list' },
      })
    await until(() => records(dir).some((r) => r['type'] === 'warning'))
    const warnings = records(dir).filter((r) => r['type'] === 'warning')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      upstream: 'fs',
      tool: 'fs_edit_file',
      unknownKeys: ['edits[].oldtext'],
      suggestions: [{ key: 'edits[].oldtext', didYouMean: 'edits[].oldText' }],
    })
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('one\ntwo\nthree\n')
  }, 60_000)

  // the gateway over stdio with its stderr kept, listed once, closed after the test
  const servedWithStderr = async (
    config: string,
  ): Promise<{ readonly client: Client; readonly stderr: () => string }> => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [main, 'serve', '--config', config],
      stderr: 'pipe',
    })
    let text = ''
    transport.stderr?.on('data', (b: Buffer) => (text += b.toString()))
    const client = new Client({ name: 'host', version: '1' })
    await client.connect(transport)
    cleanups.push(() => client.close())
    await client.listTools()
    return { client, stderr: () => text }
  }

  it('without a log, stderr says the warning and the refusal once each, not every call the rules allowed', async () => {
    const dir = workspace()
    const config = gatewayConfig(dir) as Record<string, unknown>
    delete config['log']
    const { client, stderr } = await servedWithStderr(configFile(dir, config))
    for (const n of [1, 2, 3])
      await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: n } })
    await client.callTool({
      name: 'fs_move_file',
      arguments: { source: join(dir, 'notes.txt'), destination: join(dir, 'b.txt') },
    })
    await until(() => stderr().includes('fs_move_file'))
    expect(stderr().match(/carried undeclared argument key "haed"/g)).toHaveLength(1)
    expect(stderr()).toMatch(/fs_move_file call \S+ refused by rules/)
    expect(stderr()).not.toContain('allowed by rules')
    // each call's record goes to the log only: the decision line already says what matters
    expect(stderr()).not.toMatch(/call \S+ (ok|error|refused) in /)
  }, 60_000)

  it('a call with 20,000 undeclared keys: one short warning line on stderr, and one short log record that keeps the count', async () => {
    const dir = workspace()
    const config = {
      mcpServers: { ev: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      rules: [{ tool: '*', decision: 'allow' }],
      log: join(dir, 'toolstack.jsonl'),
      listWaitMs: 30_000,
    }
    const { client, stderr } = await servedWithStderr(configFile(dir, config))
    const keys = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 1]))
    await client.callTool({ name: 'ev_echo', arguments: { message: 'hi', reason: 'say hi', ...keys } })
    await until(() => stderr().includes('carried undeclared') && records(dir).some((r) => r['type'] === 'warning'))
    // once unbounded: a line and a record naming every key the audit found (188,981 and 1,026,843 characters
    // before the audit stopped at 1,000 keys)
    const warningLine =
      stderr()
        .split('\n')
        .find((l) => l.includes('carried undeclared')) ?? ''
    expect(warningLine).toMatch(/^toolstack: ev_echo call \S+ carried undeclared argument keys "k0", "k1", /)
    expect(warningLine).toMatch(/" and \d+ more \(declared: /)
    expect(warningLine.length).toBeLessThan(1000)
    const logged = readFileSync(join(dir, 'toolstack.jsonl'), 'utf8')
      .split('\n')
      .find((l) => l.includes('"type":"warning"'))
    expect(logged?.length).toBeLessThan(4000)
    const record = JSON.parse(logged ?? '') as Record<string, unknown>
    expect(record).toMatchObject({ upstream: 'ev', tool: 'ev_echo' })
    // as many as the audit records of one call, far more than are shown; the line says the same number
    expect(record['unknownKeyCount']).toBeGreaterThan(20)
    expect(warningLine).toContain(` and ${Number(record['unknownKeyCount']) - 20} more (declared: `)
    expect(record['unknownKeys']).toHaveLength(20)
    expect(record['keys']).toHaveLength(20)
  }, 60_000)

  it("a denied call is isError; an ask goes to the host's elicitation (allow-once, then always), and a host without it gets the refusal", async () => {
    const dir = workspace()
    const file = configFile(dir, gatewayConfig(dir))
    const answers = [
      { action: 'accept', content: { action: 'allow-once' } },
      { action: 'accept', content: { action: 'always-allow' } },
    ]
    const asked: Array<string> = []
    const client = await overStdio(file, (m) => {
      asked.push(m)
      return answers.shift() ?? { action: 'decline' }
    })
    const denied = await client.callTool({
      name: 'fs_move_file',
      arguments: { source: join(dir, 'notes.txt'), destination: join(dir, 'x.txt') },
    })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toContain('nothing moves here')
    for (const name of ['a.txt', 'b.txt', 'c.txt']) {
      const r = await client.callTool({
        name: 'fs_write_file',
        arguments: { path: join(dir, name), content: name, reason: 'the user asked' },
      })
      expect(r.isError).toBeFalsy()
    }
    expect(asked).toHaveLength(2)
    expect(readFileSync(join(dir, 'c.txt'), 'utf8')).toBe('c.txt')
    const headless = await overStdio(file)
    const refused = await headless.callTool({
      name: 'fs_write_file',
      arguments: { path: join(dir, 'd.txt'), content: 'x' },
    })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain('no one is available to give it')
  }, 60_000)

  it('an upstream killed mid-session: its calls say so, the other still works, it comes back with the same tools, and the host is not told of a change', async () => {
    const dir = workspace()
    const client = await overStdio(configFile(dir, gatewayConfig(dir)))
    let changed = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++)
    await client.listTools()
    const started = () =>
      records(dir).filter((r) => r['type'] === 'upstream' && r['_tag'] === 'Started' && r['upstream'] === 'ev')
    const pid = started()[0]?.['pid'] as number
    expect(isAlive(pid)).toBe(true)
    const before = changed
    process.kill(pid, 'SIGKILL')
    await until(() => records(dir).some((r) => r['_tag'] === 'Exited'))
    const down = await client.callTool({ name: 'ev_echo', arguments: { message: 'hi' } })
    expect(down.isError).toBe(true)
    expect(text(down)).toContain('the upstream MCP server \\"ev\\" is not running')
    const fs = await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt') } })
    expect(fs.isError).toBeFalsy()
    await until(() => started().length === 2)
    await client.listTools()
    // the same tools under the same names: nothing for the host to list again
    await new Promise((r) => setTimeout(r, 300))
    expect(changed).toBe(before)
    const back = await client.callTool({ name: 'ev_echo', arguments: { message: 'back' } })
    expect(text(back)).toContain('Echo: back')
  }, 60_000)

  it('a bad configuration is refused with the field named and status 2, and nothing is started', async () => {
    const dir = workspace()
    const bad = configFile(dir, {
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] }, ev: { comand: 'npx' } },
    })
    const r = spawnSync(process.execPath, [main, 'serve', '--config', bad], { encoding: 'utf8', timeout: 30_000 })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('mcpServers.ev has unknown member "comand"')
    // not even the good upstream was started
    expect(spawnSync('pgrep', ['-f', dir], { encoding: 'utf8' }).stdout.trim()).toBe('')
  })
})

describe('toolstack serve: a host that goes away', () => {
  it('the host closing its stdout is an orderly stop: status 0, no stack trace, no upstream left', async () => {
    const dir = workspace()
    const file = configFile(dir, { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } } })
    const child = spawn(process.execPath, [main, 'serve', '--config', file], { stdio: ['pipe', 'pipe', 'pipe'] })
    cleanups.push(() => void child.kill('SIGKILL'))
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const request = (id: number, method: string, params: unknown = {}) =>
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n')
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')))
    request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'h', version: '1' },
    })
    await until(() => out.includes('"id":1'))
    // the host stops reading, then asks something: the reply meets a closed pipe
    child.stdout.destroy()
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n')
    request(2, 'tools/list')
    expect(await exited).toBe(0)
    expect(stderr).not.toMatch(/EPIPE|Error|at .+:\d+:\d+/)
    expect(spawnSync('pgrep', ['-f', dir], { encoding: 'utf8' }).stdout.trim()).toBe('')
  })
})

describe('toolstack serve: the policy judges the arguments the server runs on', () => {
  // the filesystem server may reach the whole base; the rules allow only the project
  const decoyed = () => {
    const base = mkdtempSync(join(tmpdir(), 'toolstack-decoy-'))
    cleanups.push(() => rmSync(base, { recursive: true, force: true, maxRetries: 5 }))
    const project = join(base, 'project')
    const outside = join(base, 'outside')
    for (const d of [project, outside]) mkdirSync(d)
    writeFileSync(join(project, 'notes.txt'), 'notes\n')
    writeFileSync(join(outside, 'secret.txt'), 'top secret\n')
    const file = configFile(base, {
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, base] } },
      rules: [{ tool: 'fs_*', decision: 'allow', under: project }],
      log: join(base, 'toolstack.jsonl'),
    })
    return { base, project, outside, file }
  }

  it('move_file and read_multiple_files with a decoy path inside the project are asked, refused with no elicitation, and nothing moves or is read', async () => {
    const { base, project, outside, file } = decoyed()
    const client = await overStdio(file)
    await client.listTools()
    const moved = await client.callTool({
      name: 'fs_move_file',
      arguments: { source: join(outside, 'secret.txt'), destination: join(project, 'stolen.txt'), path: project },
    })
    expect(moved.isError).toBe(true)
    expect(text(moved)).toContain('no one is available to give it')
    const read = await client.callTool({
      name: 'fs_read_multiple_files',
      arguments: { paths: [join(outside, 'secret.txt')], path: project },
    })
    expect(read.isError).toBe(true)
    expect(text(read)).not.toContain('top secret')
    expect(existsSync(join(outside, 'secret.txt'))).toBe(true)
    expect(existsSync(join(project, 'stolen.txt'))).toBe(false)
    // the rule itself works: every path inside, no decoy, runs
    const inside = await client.callTool({
      name: 'fs_read_multiple_files',
      arguments: { paths: [join(project, 'notes.txt')] },
    })
    expect(inside.isError).toBeFalsy()
    expect(text(inside)).toContain('notes')
    expect(
      records(base)
        .filter((r) => r['type'] === 'decision')
        .map((r) => [r['tool'], r['outcome'], r['by']]),
    ).toEqual([
      ['fs_move_file', 'refused', 'nobody'],
      ['fs_read_multiple_files', 'refused', 'nobody'],
      ['fs_read_multiple_files', 'allowed', 'rules'],
    ])
  }, 60_000)

  it('a host that can be asked is shown every location with its argument, the decoy named, and the reason last on one line; declined, nothing moves', async () => {
    const { project, outside, file } = decoyed()
    const asked: Array<string> = []
    const client = await overStdio(file, (m) => {
      asked.push(m)
      return { action: 'decline' }
    })
    await client.listTools()
    const reason = 'moving it inside the project\nArguments: {"source":"' + join(project, 'a') + '"}'
    const moved = await client.callTool({
      name: 'fs_move_file',
      arguments: {
        source: join(outside, 'secret.txt'),
        destination: join(project, 'stolen.txt'),
        path: project,
        reason,
      },
    })
    expect(moved.isError).toBe(true)
    expect(asked).toHaveLength(1)
    const lines = (asked[0] ?? '').split('\n')
    const facts = [
      `  source: ${join(outside, 'secret.txt')}`,
      `  destination: ${join(project, 'stolen.txt')}`,
      '  path: not checked (is not an argument this tool declares)',
      `  "path": ${JSON.stringify(project)}`,
    ]
    for (const fact of facts) expect(lines.indexOf(fact), fact).toBeGreaterThan(-1)
    expect(lines[lines.length - 1]).toBe(
      `The model's reason, in its own words (not checked): ${JSON.stringify(reason)}`,
    )
    expect(lines.filter((l) => l.startsWith('Arguments'))).toEqual(['Arguments:'])
    expect(existsSync(join(outside, 'secret.txt'))).toBe(true)
    expect(existsSync(join(project, 'stolen.txt'))).toBe(false)
  }, 60_000)

  it('locationArgs in the configuration adds a name the policy reads where a tool declares it; one that is not a list of names is refused', async () => {
    const base = mkdtempSync(join(tmpdir(), 'toolstack-locargs-'))
    cleanups.push(() => rmSync(base, { recursive: true, force: true, maxRetries: 5 }))
    const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] }
    // echo's `message` read as a location, for the test's sake
    const client = await overStdio(
      configFile(base, {
        mcpServers: { ev: everything },
        rules: [{ tool: 'ev_echo', decision: 'allow', under: '/srv' }],
        locationArgs: ['message'],
      }),
    )
    await client.listTools()
    expect((await client.callTool({ name: 'ev_echo', arguments: { message: '/srv/a' } })).isError).toBeFalsy()
    const outside = await client.callTool({ name: 'ev_echo', arguments: { message: '/etc/a' } })
    expect(outside.isError).toBe(true)
    expect(text(outside)).toContain('no one is available to give it')
    const bad = configFile(base, { mcpServers: { ev: everything }, locationArgs: 'message' })
    const r = spawnSync(process.execPath, [main, 'serve', '--config', bad], { encoding: 'utf8', timeout: 30_000 })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('locationArgs must be an array of argument names')
  }, 60_000)
})

describe('toolstack serve --http', () => {
  const serveHttpCommand = async (
    file: string,
    listen: string,
    env: Record<string, string> = {},
    extra: ReadonlyArray<string> = [],
  ) => {
    const child = spawn(process.execPath, [main, 'serve', '--config', file, '--http', listen, ...extra], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve()
          child.once('exit', () => resolve())
          child.kill('SIGTERM')
        }),
    )
    let err = ''
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString()
    })
    await until(() => /listening on (\S+)/.test(err) || child.exitCode !== null, 30_000)
    return { child, url: /listening on (\S+)/.exec(err)?.[1] ?? '', stderr: () => err }
  }

  it('a real client lists and calls over Streamable HTTP with the token; a wrong token and a foreign Origin are refused', async () => {
    const dir = workspace()
    const { url } = await serveHttpCommand(configFile(dir, gatewayConfig(dir)), '127.0.0.1:0', {
      TOOLSTACK_TOKEN: 's3cret',
    })
    const client = new Client({ name: 'host', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer s3cret' } } }),
    )
    cleanups.push(() => client.close())
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ev_get-tiny-image')
    const image = await client.callTool({ name: 'ev_get-tiny-image', arguments: {} })
    expect((image.content as Array<{ type: string }>)[1]?.type).toBe('image')
    const post = (headers: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: INIT,
      })
    expect((await post({ Authorization: 'Bearer wrong' })).status).toBe(401)
    expect((await post({ Authorization: 'Bearer s3cret', Origin: 'http://evil.example' })).status).toBe(403)
  }, 60_000)

  it('--allowed-host: that name is accepted as Host (with or without the port) and as an Origin; others still 403', async () => {
    const dir = workspace()
    const file = configFile(dir, { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } } })
    const { url } = await serveHttpCommand(file, '127.0.0.1:0', {}, ['--allowed-host', 'MCP.example'])
    const port = new URL(url).port
    // node:http sends the Host it is given (fetch would not)
    const post = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          },
          (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          },
        )
        req.on('error', reject)
        req.end(INIT)
      })
    expect(await post({ host: `mcp.example:${port}` })).toBe(200)
    expect(await post({ host: 'mcp.example' })).toBe(200)
    expect(await post({ host: `mcp.example:${port}`, origin: `http://mcp.example:${port}` })).toBe(200)
    expect(await post({ host: 'mcp.example', origin: 'https://mcp.example' })).toBe(200)
    expect(await post({ host: `other.example:${port}` })).toBe(403)
    expect(await post({ host: `mcp.example:${port}`, origin: 'https://evil.example' })).toBe(403)
  }, 60_000)

  it('--no-resume: an answer opens its stream, with no priming event before it; without it, one does', async () => {
    const dir = workspace()
    const file = configFile(dir, gatewayConfig(dir))
    // the first event of an initialize answer's stream, as the host reads it
    const firstEvent = async (url: string): Promise<string> => {
      const answer = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      })
      return (await answer.text()).split('\n\n')[0] ?? ''
    }
    const plain = await serveHttpCommand(file, '127.0.0.1:0', {}, ['--no-resume'])
    expect(await firstEvent(plain.url)).toMatch(/^event: message\ndata: \{.*"id":0\}$/)
    const resumable = await serveHttpCommand(file, '127.0.0.1:0')
    expect(await firstEvent(resumable.url)).toMatch(/^id: \S+\nretry: 1000\ndata: $/)
  }, 60_000)

  it('--allowed-host refuses what is not NAME[:PORT], and applies to --http only: status 2, saying so', () => {
    const dir = workspace()
    // a good configuration: the options are refused before any upstream starts
    const file = configFile(dir, { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } } })
    const run = (args: ReadonlyArray<string>) =>
      spawnSync(process.execPath, [main, 'serve', '--config', file, ...args], { encoding: 'utf8', timeout: 30_000 })
    const bad = run(['--http', '127.0.0.1:0', '--allowed-host', 'evil.example/\u001b[2J'])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain(
      '--allowed-host expects NAME[:PORT], e.g. mcp.example or 192.168.1.5:8931, got "evil.example/\\u001b[2J"',
    )
    const stdio = run(['--allowed-host', 'mcp.example'])
    expect(stdio.status).toBe(2)
    expect(stdio.stderr).toContain('--allowed-host applies to --http only')
    const both = run(['--max-sessions', '5', '--idle-timeout', '60000', '--no-resume'])
    expect(both.status).toBe(2)
    expect(both.stderr).toContain('--max-sessions, --idle-timeout, --no-resume apply to --http only')
    const zero = run(['--http', '127.0.0.1:0', '--max-sessions', '0'])
    expect(zero.status).toBe(2)
    expect(zero.stderr).toContain('expected a whole number of sessions, from 1 to 1000000')
  })

  it('--max-sessions: one session more is a 503 with Retry-After; /healthz and /readyz answer probes', async () => {
    const dir = workspace()
    const file = configFile(dir, { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } } })
    const { url } = await serveHttpCommand(file, '127.0.0.1:0', {}, ['--max-sessions', '1'])
    const post = () =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: INIT,
      })
    expect((await post()).status).toBe(200)
    const second = await post()
    expect(second.status).toBe(503)
    expect(second.headers.get('retry-after')).toBe('5')
    const alive = await fetch(url.replace('/mcp', '/healthz'))
    expect([alive.status, await alive.json()]).toStrictEqual([200, { status: 'alive' }])
    const ready = await fetch(url.replace('/mcp', '/readyz'))
    expect([ready.status, await ready.json()]).toStrictEqual([
      200,
      { ready: true, upstreams: [{ name: 'fs', up: true, required: true }] },
    ])
  }, 60_000)

  it('GET /metrics (with the token): calls by upstream, tool and outcome, undeclared keys, questions, sessions, upstreams up; each call in the log', async () => {
    const dir = workspace()
    const file = configFile(dir, {
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } },
      rules: [
        { tool: 'fs_read_text_file', decision: 'allow' },
        { tool: 'fs_move_file', decision: 'deny' },
        { tool: 'fs_write_file', decision: 'ask' },
      ],
      log: join(dir, 'toolstack.jsonl'),
      listWaitMs: 30_000,
    })
    const { url } = await serveHttpCommand(file, '127.0.0.1:0', { TOOLSTACK_TOKEN: 's3cret' })
    const auth = { Authorization: 'Bearer s3cret' }
    const client = new Client({ name: 'host', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }))
    cleanups.push(() => client.close())
    const notes = join(dir, 'notes.txt')
    const calls: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
      ['fs_read_text_file', { path: notes }, false],
      ['fs_read_text_file', { path: notes, haed: 1 }, false],
      ['fs_read_text_file', { path: join(dir, 'absent.txt') }, true],
      ['fs_move_file', { source: notes, destination: join(dir, 'b.txt') }, true],
      ['fs_write_file', { path: join(dir, 'c.txt'), content: 'x' }, true],
    ]
    for (const [name, args, isError] of calls)
      expect((await client.callTool({ name, arguments: args })).isError === true).toBe(isError)
    // a name that is not listed is a JSON-RPC error, as MCP has it
    await expect(client.callTool({ name: 'fs_\u001b]0;nope', arguments: {} })).rejects.toThrow('there is no tool named')
    const metricsAt = url.replace('/mcp', '/metrics')
    expect((await fetch(metricsAt)).status).toBe(401)
    const scraped = await fetch(metricsAt, { headers: auth })
    expect(scraped.status).toBe(200)
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const body = await scraped.text()
    const value = (series: string): number | undefined => {
      const line = body.split('\n').find((l) => l.startsWith(`${series} `))
      return line === undefined ? undefined : Number(line.slice(series.length + 1))
    }
    expect(value('toolstack_calls_total{upstream="fs",tool="fs_read_text_file",outcome="ok"}')).toBe(2)
    expect(value('toolstack_calls_total{upstream="fs",tool="fs_read_text_file",outcome="error"}')).toBe(1)
    expect(value('toolstack_calls_total{upstream="fs",tool="fs_move_file",outcome="refused"}')).toBe(1)
    expect(value('toolstack_calls_total{upstream="fs",tool="fs_write_file",outcome="refused"}')).toBe(1)
    expect(value('toolstack_calls_total{upstream="fs",tool="(unknown)",outcome="refused"}')).toBe(1)
    expect(value('toolstack_call_duration_seconds_count{upstream="fs",tool="fs_read_text_file"}')).toBe(3)
    expect(value('toolstack_undeclared_keys_total{tool="fs_read_text_file",key="haed"}')).toBe(1)
    expect(value('toolstack_questions_total{answer="unasked"}')).toBe(1)
    expect(value('toolstack_http_sessions')).toBe(1)
    expect(value('toolstack_upstream_up{upstream="fs"}')).toBe(1)
    // the name a model made up is not a label
    expect(body).not.toContain('nope')
    const logged = records(dir).filter((r) => r['type'] === 'call')
    expect(logged.map((r) => [r['tool'], r['listed'], r['outcome']])).toEqual([
      ['fs_read_text_file', true, 'ok'],
      ['fs_read_text_file', true, 'ok'],
      ['fs_read_text_file', true, 'error'],
      ['fs_move_file', true, 'refused'],
      ['fs_write_file', true, 'refused'],
      ['fs_\u001b]0;nope', false, 'refused'],
    ])
  }, 60_000)

  it('prom-client is loaded for --http only: a gateway over stdio never loads it', async () => {
    const dir = workspace()
    const probe = join(dir, 'probe.mjs')
    writeFileSync(
      probe,
      "import { createRequire } from 'node:module'\nconst r = createRequire(import.meta.url)\nprocess.on('exit', () => process.stderr.write('\\nprom=' + Object.keys(r.cache).some((f) => f.includes('prom-client')) + '\\n'))\n",
    )
    const file = configFile(dir, { mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir] } } })
    const args = ['--import', pathToFileURL(probe).href, main, 'serve', '--config', file]
    // stdin closed at once: the host has gone, the gateway stops
    const stdio = spawnSync(process.execPath, args, { input: '', encoding: 'utf8', timeout: 30_000 })
    expect(stdio.stderr).toContain('prom=false')
    const http = spawn(process.execPath, [...args, '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    http.stderr.on('data', (b: Buffer) => (err += b.toString()))
    const closed = new Promise<void>((resolve) => http.once('close', () => resolve()))
    cleanups.push(() => {
      if (http.exitCode === null) http.kill('SIGKILL')
    })
    await until(() => err.includes('listening on') || http.exitCode !== null, 30_000)
    http.kill('SIGTERM')
    await closed
    expect(err).toContain('prom=true')
  }, 60_000)

  it('a port in use is refused with status 2 and a clear message', async () => {
    const dir = workspace()
    const file = configFile(dir, gatewayConfig(dir))
    const { url } = await serveHttpCommand(file, '127.0.0.1:0')
    const port = new URL(url).port
    const second = spawnSync(process.execPath, [main, 'serve', '--config', file, '--http', `127.0.0.1:${port}`], {
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(second.status).toBe(2)
    expect(second.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`)
  }, 60_000)
})

describe('the host entries in docs/serve.md and the README', () => {
  // the JSON blocks of a page, in order
  const jsonBlocks = (file: string): Array<unknown> =>
    [...readFileSync(join(root, file), 'utf8').matchAll(/^```json\n([\s\S]*?)^```$/gm)].map(
      (m) => JSON.parse(m[1] ?? '') as unknown,
    )

  it('run exactly as written, with the configuration shown, against the locally installed servers', async () => {
    const dir = workspace()
    const [config, claude, vscode] = jsonBlocks('docs/serve.md') as [
      Record<string, unknown>,
      { mcpServers: Record<string, { command: string; args: Array<string> }> },
      { servers: Record<string, { command: string; args: Array<string> }> },
    ]
    // the configuration as shown, its paths pointed at a temporary folder
    const file = join(dir, 'toolstack.json')
    writeFileSync(
      file,
      JSON.stringify(config)
        .replaceAll('/srv/project', dir)
        .replaceAll('/var/log/toolstack.jsonl', join(dir, 'toolstack.jsonl')),
    )
    // `toolstack` on the PATH, as a global install puts it
    const bin = join(dir, 'bin')
    const { chmodSync } = await import('node:fs')
    mkdirSync(bin)
    writeFileSync(join(bin, 'toolstack'), `#!/bin/sh\nexec "${process.execPath}" "${main}" "$@"\n`)
    chmodSync(join(bin, 'toolstack'), 0o755)
    // the README shows the very same entry
    expect(jsonBlocks('README.md')).toContainEqual(claude)
    for (const entry of [claude.mcpServers['toolstack'], vscode.servers['toolstack']]) {
      expect(entry).toBeDefined()
      if (entry === undefined) continue
      const client = new Client({ name: 'host', version: '1' })
      await client.connect(
        new StdioClientTransport({
          command: entry.command,
          args: entry.args.map((a) => a.replace('/path/to/toolstack.json', file)),
          env: { PATH: `${bin}:${process.env['PATH'] ?? ''}` },
          stderr: 'ignore',
        }),
      )
      cleanups.push(() => client.close())
      // npx may take longer than listWaitMs to start a server: its tools come with a list_changed, so a
      // host lists again; here, until both are there
      let names: Array<string> = []
      await until(
        () => names.includes('fs_read_text_file') && names.includes('ev_echo'),
        60_000,
        async () => {
          names = (await client.listTools()).tools.map((t) => t.name)
        },
      )
      // as the page says: a read inside the project runs; a write is asked about, and this host cannot be asked
      const read = await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt') } })
      expect(read.isError).toBeFalsy()
      expect(text(read)).toContain('one')
      const write = await client.callTool({
        name: 'fs_write_file',
        arguments: { path: join(dir, 'new.txt'), content: 'x' },
      })
      expect(write.isError).toBe(true)
      expect(text(write)).toContain("needs the user's permission, and no one is available to give it")
      expect(existsSync(join(dir, 'new.txt'))).toBe(false)
    }
  }, 90_000)
})
