// The gateway over real upstream servers (the reference filesystem server and an echo
// server that says what it received), served to a real SDK Client in process.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { right } from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Provider, ToolDeclaration } from '../../src/index.js'
import type { Gateway, GatewayRecord } from '../../src/gateway/index.js'
import { serveHttp, toMcpServer } from '../../src/mcp/index.js'
import { decodeGatewayConfig, gatewayMetrics, startGateway } from '../../src/gateway/index.js'
import { FILESYSTEM_SERVER, tempDir } from '../mcp/fixtures.js'
import { cleanUpAfterEach } from '../mcp/fixtures.js'
import { until } from '../support/until.js'

cleanUpAfterEach()
const ECHO = fileURLToPath(new URL('../mcp/fixtures/flaky-server.mjs', import.meta.url))
const WHOAMI = fileURLToPath(new URL('../mcp/fixtures/whoami-server.mjs', import.meta.url))
const running: Array<Gateway> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((g) => g.close()))
})

const start = async (dir: string, extra: Record<string, unknown> = {}) => {
  const records: Array<GatewayRecord> = []
  const config = decodeGatewayConfig({
    mcpServers: {
      fs: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] },
      echo: { command: process.execPath, args: [ECHO], prefix: 'ec' },
    },
    rules: [
      { tool: 'fs_read_text_file', decision: 'allow' },
      { tool: 'ec_*', decision: 'allow' },
      { tool: 'fs_write_file', decision: 'ask', under: dir },
      { tool: 'fs_move_file', decision: 'deny', note: 'nothing moves' },
    ],
    listWaitMs: 30_000,
    ...extra,
  })
  if (config._tag === 'Left') throw new Error(config.left)
  const gateway = await startGateway(config.right, (r) => void records.push(r))
  running.push(gateway)
  return { gateway, records }
}

const host = async (gateway: Gateway, elicit?: (message: string) => unknown) => {
  const client = new Client(
    { name: 'host', version: '1' },
    elicit === undefined ? {} : { capabilities: { elicitation: {} } },
  )
  if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params.message) as never)
  const [c, s] = InMemoryTransport.createLinkedPair()
  await gateway.newServer().connect(s)
  await client.connect(c)
  return client
}

const text = (r: Record<string, unknown>): string => JSON.stringify(r['content'])

// a call to a tool that does not exist is a JSON-RPC error (InvalidParams), as MCP has it; its message
const unknownTool = async (p: Promise<unknown>): Promise<string> => {
  const e: unknown = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  if (!(e instanceof McpError) || e.code !== -32602)
    throw new Error(`expected an InvalidParams error, got ${String(e)}`)
  return e.message
}

describe('the gateway', () => {
  it('serves every upstream under its prefix, each tool with reason; reason never reaches the upstream; a misspelling is logged once, naming the upstream', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes.txt'), 'one\ntwo\nthree\n')
    const { gateway, records } = await start(dir)
    const client = await host(gateway)
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names).toContain('fs_read_text_file')
    expect(names).toContain('ec_ping')
    expect(tools.every((t) => Object.keys(t.inputSchema.properties ?? {}).includes('reason'))).toBe(true)
    const pong = await client.callTool({ name: 'ec_ping', arguments: { n: 1, reason: 'checking the echo' } })
    expect(text(pong)).toBe(JSON.stringify([{ type: 'text', text: 'pong {"n":1}' }]))
    for (const id of [1, 2])
      await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: id } })
    const warnings = records.filter((r) => r.type === 'warning')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      upstream: 'fs',
      tool: 'fs_read_text_file',
      unknownKeys: ['haed'],
      suggestions: [{ key: 'haed', didYouMean: 'head' }],
    })
    expect(
      records
        .filter((r) => r.type === 'upstream' && r._tag !== 'Stderr')
        .map((r) => r.type === 'upstream' && [r._tag, r.upstream])
        .sort(),
    ).toEqual([
      ['Started', 'echo'],
      ['Started', 'fs'],
      ['ToolsChanged', 'echo'],
      ['ToolsChanged', 'fs'],
    ])
    await client.close()
  })

  it('a denied call is isError; an ask goes to the host\'s human, and "always" leaves a grant the next call uses; no elicitation, no running', async () => {
    const dir = tempDir()
    const { gateway, records } = await start(dir)
    const asked: Array<string> = []
    const answers = [
      { action: 'accept', content: { action: 'allow-once' } },
      { action: 'accept', content: { action: 'always-allow' } },
    ]
    const client = await host(gateway, (m) => {
      asked.push(m)
      return answers.shift() ?? { action: 'decline' }
    })
    const denied = await client.callTool({
      name: 'fs_move_file',
      arguments: { source: join(dir, 'a'), destination: join(dir, 'b') },
    })
    expect(denied.isError).toBe(true)
    expect(text(denied)).toMatch(/nothing moves/)
    const write = (name: string) =>
      client.callTool({
        name: 'fs_write_file',
        arguments: { path: join(dir, name), content: 'x', reason: 'the user asked' },
      })
    expect((await write('a.txt')).isError).toBeFalsy()
    await write('b.txt')
    await write('c.txt')
    expect(asked).toHaveLength(2)
    expect(asked[0]).toMatch(/\nThe model's reason, in its own words \(not checked\): "the user asked"$/)
    expect(
      records.filter((r) => r.type === 'decision').map((r) => r.type === 'decision' && [r.tool, r.outcome, r.by]),
    ).toEqual([
      ['fs_move_file', 'refused', 'rules'],
      ['fs_write_file', 'allowed', 'human'],
      ['fs_write_file', 'allowed', 'human'],
      ['fs_write_file', 'allowed', 'grant'],
    ])
    const headless = await host(gateway)
    const refused = await headless.callTool({
      name: 'fs_write_file',
      arguments: { path: join(dir, 'd.txt'), content: 'x' },
    })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toMatch(/no one is available to give it/)
    await client.close()
    await headless.close()
  })
})

describe('decodeGatewayConfig', () => {
  it.each([
    [[], 'the configuration must be a JSON object with "mcpServers", got an array'],
    [{ mcpServers: {} }, 'mcpServers must be an object with at least one server, got an object'],
    [
      { mcpServers: { fs: { command: 'x' } }, rulez: [] },
      'the configuration has unknown member "rulez" (known: mcpServers, rules, tolerate, locationArgs, caseInsensitive, reasons, log, timeout, listWaitMs, startupMs, store, drift); did you mean "rules"?',
    ],
    [
      { mcpServers: { fs: { args: ['a'] } } },
      'mcpServers.fs.command must be a non-empty string (or give a url), got undefined',
    ],
    [
      { mcpServers: { 'my.fs': { command: 'x' } } },
      'mcpServers.my.fs.prefix must be letters, digits, "_" and "-", or "" to keep the server\'s own names (it defaults to the server\'s key, "my.fs"; give one), got the string "my.fs"',
    ],
    [
      { mcpServers: { a: { command: 'x', prefix: 'p' }, b: { command: 'y', prefix: 'p' } } },
      'mcpServers.a and mcpServers.b both use the prefix "p"',
    ],
    [{ mcpServers: { a: { url: 'ftp://x' } } }, 'mcpServers.a.url must be an http(s) URL, got the string "ftp://x"'],
    [{ mcpServers: { a: { command: 'x', env: { A: 1 } } } }, 'mcpServers.a.env.A must be a string, got number 1'],
    [
      { mcpServers: { a: { command: 'x' } }, rules: [{ tool: 'a_*', decision: 'alow' }] },
      'rules[0].decision must be "allow", "deny" or "ask", got the string "alow"',
    ],
    [{ mcpServers: { a: { command: 'x' } }, reasons: 'yes' }, 'reasons must be true or false, got the string "yes"'],
    [
      { mcpServers: { a: { command: 'x' } }, caseInsensitive: 'detect' },
      'caseInsensitive must be true or false, got the string "detect"',
    ],
    [null, 'the configuration must be a JSON object with "mcpServers", got null'],
    [{ rules: [] }, 'mcpServers must be an object with at least one server, got undefined'],
    [{ mcpServers: [{ command: 'x' }] }, 'mcpServers must be an object with at least one server, got an array'],
    [
      { mcpServers: { fs: { command: 'x' } }, rulez: [], lgo: 'x' },
      'the configuration has unknown members "rulez", "lgo" (known: mcpServers, rules, tolerate, locationArgs, caseInsensitive, reasons, log, timeout, listWaitMs, startupMs, store, drift); did you mean "rules" for "rulez", "log" for "lgo"?',
    ],
    [
      { mcpServers: { fs: 'npx' } },
      'mcpServers.fs must be an object { command, args?, env? } or { url }, got the string "npx"',
    ],
    [
      { mcpServers: { fs: { command: 'x', prefix: 'f.s' } } },
      'mcpServers.fs.prefix must be letters, digits, "_" and "-", or "" to keep the server\'s own names, got the string "f.s"',
    ],
    [
      { mcpServers: { a: { command: 'x', prefix: '' }, b: { url: 'http://127.0.0.1:1/mcp', prefix: '' } } },
      'mcpServers.a and mcpServers.b both use the prefix ""',
    ],
    [
      { mcpServers: { fs: { command: 'x', prefix: 7 } } },
      'mcpServers.fs.prefix must be letters, digits, "_" and "-", or "" to keep the server\'s own names, got number 7',
    ],
    [
      { mcpServers: { fs: { command: '' } } },
      'mcpServers.fs.command must be a non-empty string (or give a url), got the string ""',
    ],
    [
      { mcpServers: { fs: { command: 'x', comand: 'y', arg: [] } } },
      'mcpServers.fs has unknown members "comand", "arg" (known: command, args, env, cwd, prefix, tools, timeout, required, stderr, sessions); did you mean "command" for "comand", "args" for "arg"?',
    ],
    [
      { mcpServers: { fs: { url: 'https://x', command: 'y' } } },
      'mcpServers.fs has unknown member "command" (known: url, headers, prefix, tools, timeout, required, sessions)',
    ],
    [{ mcpServers: { a: { url: 7 } } }, 'mcpServers.a.url must be an http(s) URL, got number 7'],
    [
      { mcpServers: { a: { url: 'see https://x' } } },
      'mcpServers.a.url must be an http(s) URL, got the string "see https://x"',
    ],
    // an array of one URL reads as that URL once made a string: it is no URL all the same
    [{ mcpServers: { a: { url: ['https://x'] } } }, 'mcpServers.a.url must be an http(s) URL, got an array'],
    [
      { mcpServers: { a: { url: 'https://x', headers: ['Authorization'] } } },
      'mcpServers.a.headers must be an object of strings, got an array',
    ],
    [
      { mcpServers: { a: { url: 'https://x', headers: { Authorization: 1 } } } },
      'mcpServers.a.headers.Authorization must be a string, got number 1',
    ],
    [
      { mcpServers: { a: { command: 'x', args: 'a b' } } },
      'mcpServers.a.args must be an array of strings, got the string "a b"',
    ],
    [
      { mcpServers: { a: { command: 'x', args: ['a', 1] } } },
      'mcpServers.a.args must be an array of strings, got an array',
    ],
    [{ mcpServers: { a: { command: 'x', env: null } } }, 'mcpServers.a.env must be an object of strings, got null'],
    [{ mcpServers: { a: { command: 'x', cwd: 1 } } }, 'mcpServers.a.cwd must be a string, got number 1'],
    [{ mcpServers: { a: { command: 'x' } }, rules: { tool: '*' } }, 'rules must be an array of rules, got an object'],
    [
      { mcpServers: { a: { command: 'x' } }, tolerate: 'x' },
      'tolerate must be an array of strings, got the string "x"',
    ],
    [{ mcpServers: { a: { command: 'x' } }, tolerate: ['x', 1] }, 'tolerate must be an array of strings, got an array'],
    [{ mcpServers: { a: { command: 'x' } }, log: '' }, 'log must be a file path, got the string ""'],
    [
      { mcpServers: { a: { command: 'x' } }, locationArgs: 'src' },
      'locationArgs must be an array of argument names (non-empty strings; "!name" for a name that is not a location), added to path, paths, source, destination, from, to, file, files, target, directory, dir, uri, url; got the string "src"',
    ],
    [
      { mcpServers: { a: { command: 'x' } }, locationArgs: ['src', ''] },
      'locationArgs must be an array of argument names (non-empty strings; "!name" for a name that is not a location), added to path, paths, source, destination, from, to, file, files, target, directory, dir, uri, url; got an array',
    ],
    [
      { mcpServers: { a: { command: 'x' } }, locationArgs: ['cwd', '!cwd'] },
      'locationArgs both reads and refuses "cwd": keep "cwd" or "!cwd"',
    ],
    [{ mcpServers: { a: { command: 'x' } }, log: 1 }, 'log must be a file path, got number 1'],
    [
      { mcpServers: { a: { command: 'x', tools: ['read_*'] } } },
      'mcpServers.a.tools must be an object { include?, exclude? }, got an array',
    ],
    [
      { mcpServers: { a: { url: 'https://x', tools: { include: ['*read'] } } } },
      'mcpServers.a.tools.include must be an array of tool names or globs ("read_*", "*"), got an array',
    ],
    [
      { mcpServers: { a: { command: 'x', tools: { exclude: 'write_*' } } } },
      'mcpServers.a.tools.exclude must be an array of tool names or globs ("read_*", "*"), got the string "write_*"',
    ],
    [
      { mcpServers: { a: { command: 'x', tools: { inclde: [] } } } },
      'mcpServers.a.tools has unknown member "inclde" (known: include, exclude); did you mean "include"?',
    ],
    [
      { mcpServers: { a: { command: 'x', timeout: 0 } } },
      'mcpServers.a.timeout must be a whole number of milliseconds from 1 to 2147483647, got number 0',
    ],
    [
      { mcpServers: { a: { command: 'x' } }, listWaitMs: '2s' },
      'listWaitMs must be a whole number of milliseconds from 1 to 2147483647, got the string "2s"',
    ],
    [
      { mcpServers: { a: { command: 'x' } }, timeout: 2 ** 31 },
      'timeout must be a whole number of milliseconds from 1 to 2147483647, got number 2147483648',
    ],
    [
      { mcpServers: { a: { command: 'x', required: 'yes' } } },
      'mcpServers.a.required must be true or false, got the string "yes"',
    ],
    [
      { mcpServers: { a: { command: 'x', stderr: 'pipe' } } },
      'mcpServers.a.stderr must be "log", "inherit" or "ignore", got the string "pipe"',
    ],
    [
      { mcpServers: { a: { command: 'x' } }, drift: 'block' },
      'drift must be "warn", "hold" or "refuse", got the string "block"',
    ],
  ])('refuses %j: %s', (config, message) => {
    expect(decodeGatewayConfig(config)).toEqual({ _tag: 'Left', left: message })
  })

  it('keeps drift, and leaves it out when absent (warn)', () => {
    const held = decodeGatewayConfig({ mcpServers: { a: { command: 'x' } }, drift: 'hold' })
    expect(held._tag === 'Right' && held.right.drift).toBe('hold')
    const plain = decodeGatewayConfig({ mcpServers: { a: { command: 'x' } } })
    expect(plain._tag === 'Right' && 'drift' in plain.right).toBe(false)
  })

  it('names every problem in one run, one per line, in the order of the members', () => {
    const decoded = decodeGatewayConfig({
      mcpServers: { fs: { comand: 'npx' }, ev: { command: 'x', prefix: 'p' }, mem: { command: 'y', prefix: 'p' } },
      rules: [{ tool: 'x', decision: 'alow' }],
      tolerate: 'reason',
      reasons: 'yes',
      lgo: 'x',
    })
    expect(decoded).toStrictEqual({
      _tag: 'Left',
      left: [
        'the configuration has unknown member "lgo" (known: mcpServers, rules, tolerate, locationArgs, caseInsensitive, reasons, log, timeout, listWaitMs, startupMs, store, drift); did you mean "log"?',
        'mcpServers.fs has unknown member "comand" (known: command, args, env, cwd, prefix, tools, timeout, required, stderr, sessions); did you mean "command"?',
        'mcpServers.ev and mcpServers.mem both use the prefix "p"',
        'rules[0].decision must be "allow", "deny" or "ask", got the string "alow"',
        'tolerate must be an array of strings, got the string "reason"',
        'reasons must be true or false, got the string "yes"',
      ].join('\n'),
    })
  })

  it('keeps what was given: a prefix, headers, env, cwd, rules, tolerated names, case folded, reasons off, a log', () => {
    const c = decodeGatewayConfig({
      mcpServers: {
        files: { command: 'npx', prefix: 'fs', cwd: '/srv' },
        web: { url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer t' }, prefix: 'w' },
      },
      rules: [{ tool: 'fs_*', decision: 'ask' }],
      tolerate: ['why'],
      locationArgs: ['src'],
      caseInsensitive: true,
      reasons: false,
      log: '/tmp/gateway.log',
    })
    expect(c).toEqual({
      _tag: 'Right',
      right: {
        servers: [
          { name: 'files', prefix: 'fs', spec: { command: 'npx', args: [], cwd: '/srv' } },
          {
            name: 'web',
            prefix: 'w',
            spec: { url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer t' } },
          },
        ],
        rules: [{ tool: 'fs_*', decision: 'ask' }],
        tolerate: ['why'],
        locationArgs: ['src'],
        caseInsensitive: true,
        reasons: false,
        log: '/tmp/gateway.log',
      },
    })
    const files = c._tag === 'Right' ? c.right.servers[0] : undefined
    expect(files?.spec).not.toHaveProperty('env')
  })

  it('fills what was left out: the prefix from the key, every call allowed, reasons on', () => {
    const c = decodeGatewayConfig({
      mcpServers: {
        fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'], env: { X: '1' } },
        web: { url: 'https://example.org/mcp' },
      },
    })
    expect(c).toEqual({
      _tag: 'Right',
      right: {
        servers: [
          {
            name: 'fs',
            prefix: 'fs',
            spec: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'], env: { X: '1' } },
          },
          { name: 'web', prefix: 'web', spec: { url: 'https://example.org/mcp', headers: {} } },
        ],
        rules: [{ tool: '*', decision: 'allow' }],
        tolerate: [],
        locationArgs: [],
        reasons: true,
        log: undefined,
      },
    })
  })
})

// ------------------------------------------------------------------------------------
// what each record names, the diagnostics, the options, and tools that change upstream
// ------------------------------------------------------------------------------------

const gatewayOf = async (config: Record<string, unknown>, info?: { name: string; version: string }) => {
  // not about slow starts unless a test says so: on a busy machine, wait for every upstream
  const decoded = decodeGatewayConfig({ listWaitMs: 30_000, ...config })
  if (decoded._tag === 'Left') throw new Error(decoded.left)
  const records: Array<GatewayRecord> = []
  const gateway = await (info === undefined
    ? startGateway(decoded.right, (r) => void records.push(r))
    : startGateway(decoded.right, (r) => void records.push(r), info))
  running.push(gateway)
  return { gateway, records }
}

const bare = (name: string): ToolDeclaration => ({
  type: 'function',
  function: { name, parameters: { type: 'object' } },
})

/** An upstream over HTTP whose tools the test changes; `change` has it tell its clients. */
const changingUpstream = async () => {
  const state: { tools: ReadonlyArray<ToolDeclaration> } = { tools: [bare('bare')] }
  const listeners = new Set<() => void>()
  const provider: Provider<never> = {
    toolsForLlm: () => Promise.resolve(right(state.tools)),
    executeToolCalls: (calls) =>
      TE.right(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'ran' }))),
  }
  const serving = await serveHttp(
    () =>
      toMcpServer(
        provider,
        { name: 'up', version: '0' },
        { toolsChanged: (l) => (listeners.add(l), () => void listeners.delete(l)) },
      ),
    { port: 0 },
  )
  return {
    serving,
    state,
    change: () => {
      for (const l of listeners) l()
    },
  }
}

const twoEchoes = {
  a: { command: process.execPath, args: [ECHO] },
  b: { command: process.execPath, args: [ECHO], prefix: 'bee' },
}

describe('the gateway: records and options', () => {
  it('sessions "per-host" for a command: each host session has a process of its own, ended with it; "shared": one for all', async () => {
    const pidOf = async (client: Client): Promise<number> => {
      const r = await client.callTool({ name: 'who_whoami', arguments: {} })
      return (JSON.parse((r.content as Array<{ readonly text: string }>)[0]?.text ?? '{}') as { pid: number }).pid
    }
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    const perHost = await gatewayOf({
      mcpServers: { who: { command: process.execPath, args: [WHOAMI], sessions: 'per-host' } },
    })
    const a = await host(perHost.gateway)
    const b = await host(perHost.gateway)
    await Promise.all([a.listTools(), b.listTools()])
    const [pa, pb] = await Promise.all([pidOf(a), pidOf(b)])
    expect(pa).not.toBe(pb)
    expect(await pidOf(a)).toBe(pa)
    // the gateway's own process (it lists) is a third
    const listing = perHost.gateway.upstreams[0]?.pid()
    expect([pa, pb]).not.toContain(listing)
    await a.close()
    await until(() => !alive(pa), 30_000, "the first host's upstream process to end")
    expect(alive(pb)).toBe(true)
    await b.close()

    const shared = await gatewayOf({ mcpServers: { who: { command: process.execPath, args: [WHOAMI] } } })
    const c = await host(shared.gateway)
    const d = await host(shared.gateway)
    await Promise.all([c.listTools(), d.listTools()])
    const [pc, pd] = await Promise.all([pidOf(c), pidOf(d)])
    expect(pc).toBe(pd)
    expect(pc).toBe(shared.gateway.upstreams[0]?.pid())
    await c.close()
    await d.close()
  })

  it('is ready when it resolves: every upstream has started; it says who it is (toolstack 0.1.0 by default)', async () => {
    const { gateway } = await gatewayOf({ mcpServers: twoEchoes })
    expect(gateway.upstreams.map((u) => [u.name, u.isUp()])).toStrictEqual([
      ['a', true],
      ['b', true],
    ])
    const client = await host(gateway)
    expect(client.getServerVersion()).toStrictEqual({
      name: 'toolstack',
      version: '0.1.0',
      title: 'toolstack gateway',
      description: 'toolstack serve, a gateway in front of: a (flaky 0.0.0), b (flaky 0.0.0)',
    })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toStrictEqual(['a_ping', 'bee_ping'])
    await client.close()
    await gateway.close()
    expect(gateway.upstreams.map((u) => u.isUp())).toStrictEqual([false, false])
  })

  it('says the name and version it is given', async () => {
    const { gateway } = await gatewayOf({ mcpServers: { a: twoEchoes.a } }, { name: 'my-gateway', version: '7.0.0' })
    const client = await host(gateway)
    expect(client.getServerVersion()).toMatchObject({ name: 'my-gateway', version: '7.0.0' })
    await client.close()
  })

  it('each decision and warning names the upstream of its tool; a tool of no upstream is refused before the policy; a tolerated key is no warning', async () => {
    const { gateway, records } = await gatewayOf({
      mcpServers: twoEchoes,
      rules: [
        { tool: 'a_*', decision: 'allow' },
        { tool: 'bee_*', decision: 'deny', note: 'not b' },
      ],
      tolerate: ['why'],
    })
    const client = await host(gateway)
    await client.listTools()
    await client.callTool({ name: 'a_ping', arguments: { n: 1, reason: 'r', why: 'tolerated' } })
    await client.callTool({ name: 'bee_ping', arguments: { n: 1, reason: 'r' } })
    await client.callTool({ name: 'a_ping', arguments: { n: 2, reason: 'r', nn: 3 } })
    const nope = await unknownTool(client.callTool({ name: 'nope_ping', arguments: { reason: 'r' } }))
    expect(nope).toContain('there is no tool named "nope_ping"; the available tools are')
    expect(
      records
        .filter((r) => r.type === 'decision')
        .map((r) => r.type === 'decision' && [r.upstream, r.tool, r.outcome, r.by]),
    ).toStrictEqual([
      ['a', 'a_ping', 'allowed', 'rules'],
      ['b', 'bee_ping', 'refused', 'rules'],
      ['a', 'a_ping', 'allowed', 'rules'],
    ])
    const warnings = records.filter((r) => r.type === 'warning')
    expect(warnings.map((r) => r.type === 'warning' && [r.upstream, r.tool, r.unknownKeys])).toStrictEqual([
      ['a', 'a_ping', ['nn']],
    ])
    expect(records.filter((r) => r.type === 'diagnostic')).toStrictEqual([])
    await client.close()
  })

  it('an unknown tool, even under a known prefix, is refused as the host named it, without a question, before any listing too', async () => {
    const { gateway, records } = await gatewayOf({ mcpServers: twoEchoes, rules: [] })
    const asked: Array<string> = []
    const client = await host(gateway, (m) => {
      asked.push(m)
      return { action: 'accept', content: { action: 'allow-once' } }
    })
    // no tools/list first: the session is listed on its first call
    const nope = await unknownTool(client.callTool({ name: 'a_pong', arguments: {} }))
    expect(nope).toBe('MCP error -32602: there is no tool named "a_pong"; the available tools are "a_ping", "bee_ping"')
    // a listed tool is still asked about under rules: []
    expect((await client.callTool({ name: 'a_ping', arguments: { n: 1 } })).isError).toBeFalsy()
    expect(asked).toHaveLength(1)
    expect(records.filter((r) => r.type === 'decision').map((r) => r.type === 'decision' && r.tool)).toStrictEqual([
      'a_ping',
    ])
    await client.close()
  })

  it('tools.include and tools.exclude: a hidden tool is never listed, and a call to it is refused unasked and never reaches its upstream', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes.txt'), 'notes\n')
    const { gateway } = await gatewayOf({
      mcpServers: {
        fs: {
          command: process.execPath,
          args: [FILESYSTEM_SERVER, dir],
          tools: { include: ['read_*', 'list_directory', 'write_file'], exclude: ['read_media_file', 'write_*'] },
        },
        ec: { command: process.execPath, args: [ECHO], tools: { exclude: ['*'] } },
      },
      rules: [],
    })
    const asked: Array<string> = []
    const client = await host(gateway, (m) => {
      asked.push(m)
      return { action: 'accept', content: { action: 'allow-once' } }
    })
    const names = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(names).toStrictEqual(['fs_list_directory', 'fs_read_file', 'fs_read_multiple_files', 'fs_read_text_file'])
    for (const name of ['fs_write_file', 'fs_read_media_file', 'ec_ping']) {
      const r = await unknownTool(client.callTool({ name, arguments: { path: join(dir, 'x.txt'), content: 'x' } }))
      expect(r).toContain(`there is no tool named "${name}"`)
    }
    expect(asked).toStrictEqual([])
    expect(existsSync(join(dir, 'x.txt'))).toBe(false)
    // a served tool is asked about and runs
    const read = await client.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt') } })
    expect(text(read)).toContain('notes')
    expect(asked).toHaveLength(1)
    await client.close()
  })

  it('an upstream that never answers holds nothing back: the gateway starts within listWaitMs and lists the others once startupMs is over', async () => {
    const STORM = fileURLToPath(new URL('../mcp/fixtures/storm-server.mjs', import.meta.url))
    const t0 = Date.now()
    const { gateway } = await gatewayOf({
      mcpServers: { a: twoEchoes.a, stuck: { command: process.execPath, args: [STORM, 'hang'] } },
      listWaitMs: 1000,
      startupMs: 3000,
    })
    // the start waits listWaitMs for the hung one, not the SDK's 60 s
    expect(Date.now() - t0).toBeLessThan(6000)
    // on a loaded machine the good one may take longer than listWaitMs to start: the bound is about the hung one
    await until(() => gateway.upstreams.find((u) => u.name === 'a')?.isUp() === true, 20_000)
    const client = await host(gateway)
    const t1 = Date.now()
    const { tools } = await client.listTools()
    expect(Date.now() - t1).toBeLessThan(4000)
    expect(tools.map((t) => t.name)).toStrictEqual(['a_ping'])
    expect((await client.callTool({ name: 'a_ping', arguments: { n: 1 } })).isError).toBeFalsy()
    await client.close()
  })

  it('a result nested too deep to be sent (8,000 levels) is answered with an error, and logged as one; 900 levels are sent', async () => {
    const SLOW = fileURLToPath(new URL('../mcp/fixtures/slow-server.mjs', import.meta.url))
    const { gateway, records } = await gatewayOf({
      mcpServers: { deep: { command: process.execPath, args: [SLOW], env: { SLOW_MS: '0' } } },
    })
    const client = await host(gateway)
    await client.listTools()
    const deep = await client.callTool({ name: 'deep_deep', arguments: { depth: 8000 } })
    expect(deep.isError).toBe(true)
    expect(text(deep)).toContain(
      'the tool ran, but its result could not be sent to the host: it is nested more than 1000 levels deep',
    )
    const fine = await client.callTool({ name: 'deep_deep', arguments: { depth: 900 } })
    expect(fine.isError).toBeFalsy()
    let nested: unknown = fine.structuredContent
    for (let i = 0; i < 900; i++) nested = (nested as { a: unknown }).a
    expect(nested).toBe(1)
    expect(records.filter((r) => r.type === 'call').map((r) => r.type === 'call' && r.outcome)).toEqual(['error', 'ok'])
    await client.close()
  })

  it("timeout: a gateway default, and an upstream's own, reach its calls", async () => {
    const FAULTY = fileURLToPath(new URL('../mcp/fixtures/faulty-server.mjs', import.meta.url))
    const { gateway } = await gatewayOf({
      mcpServers: {
        slow: { command: process.execPath, args: [FAULTY] },
        quick: { command: process.execPath, args: [FAULTY], timeout: 200 },
      },
      timeout: 600,
    })
    const client = await host(gateway)
    await client.listTools()
    const hang = async (name: string) => {
      const t0 = Date.now()
      const r = await client.callTool({ name, arguments: {} })
      return [Date.now() - t0, text(r)] as const
    }
    const [quickMs, quick] = await hang('quick_hang')
    expect(quick).toContain('did not answer within 200 ms')
    expect(quickMs).toBeLessThan(2000)
    const [, slow] = await hang('slow_hang')
    expect(slow).toContain('did not answer within 600 ms')
    await client.close()
  })

  it('readiness: each upstream, up or not; ready once every required one is up', async () => {
    const gone = { command: join(tempDir(), 'no-such-server') }
    const strict = await gatewayOf({ mcpServers: { a: twoEchoes.a, gone } })
    expect(strict.gateway.readiness()).toStrictEqual({
      ready: false,
      upstreams: [
        { name: 'a', up: true, required: true },
        { name: 'gone', up: false, required: true },
      ],
    })
    const lenient = await gatewayOf({ mcpServers: { a: twoEchoes.a, gone: { ...gone, required: false } } })
    expect(lenient.gateway.readiness()).toStrictEqual({
      ready: true,
      upstreams: [
        { name: 'a', up: true, required: true },
        { name: 'gone', up: false, required: false },
      ],
    })
  })

  it("stderr: each line of an upstream's stderr is a record by default ('log'); 'ignore' drops them", async () => {
    const dir = tempDir()
    const fs = { command: process.execPath, args: [FILESYSTEM_SERVER, dir] }
    const logged = await gatewayOf({ mcpServers: { fs } })
    await until(() => logged.records.some((r) => r.type === 'upstream' && r._tag === 'Stderr'))
    expect(logged.records.filter((r) => r.type === 'upstream' && r._tag === 'Stderr')).toContainEqual({
      type: 'upstream',
      _tag: 'Stderr',
      upstream: 'fs',
      line: 'Secure MCP Filesystem Server running on stdio',
    })
    const quiet = await gatewayOf({ mcpServers: { fs: { ...fs, stderr: 'ignore' } } })
    await new Promise((r) => setTimeout(r, 300))
    expect(quiet.records.filter((r) => r.type === 'upstream' && r._tag === 'Stderr')).toStrictEqual([])
  })

  it('reasons off: no tool asks for a reason', async () => {
    const { gateway } = await gatewayOf({ mcpServers: { a: twoEchoes.a }, reasons: false })
    const client = await host(gateway)
    const { tools } = await client.listTools()
    expect(tools.map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {})])).toStrictEqual([['a_ping', ['n']]])
    await client.close()
  })

  it('diagnostics go to the log: a listing with nothing to audit, and rules that name no tool', async () => {
    const { serving } = await changingUpstream()
    try {
      const { gateway, records } = await gatewayOf({
        mcpServers: { web: { url: serving.url } },
        rules: [{ tool: 'zz_*', decision: 'allow' }],
        reasons: false,
      })
      const client = await host(gateway)
      await client.listTools()
      expect(records.filter((r) => r.type === 'diagnostic')).toStrictEqual([
        {
          type: 'diagnostic',
          message: 'toolstack: the listing held 1 tool, but none declares a property, so no call is audited',
        },
        {
          type: 'diagnostic',
          message:
            'toolstack: the policy\'s rules ("zz_*") name none of the listed tools ("web_bare"), so every call will be asked about or refused; behind a registry, name tools with their prefix (readOnlyRules(\'fs_\'))',
        },
      ])
      await client.close()
    } finally {
      await serving.close()
    }
  })

  it("a change of an upstream's tools reaches every connected host as tools/list_changed, and only while it is connected", async () => {
    const { serving, state, change } = await changingUpstream()
    try {
      const { gateway } = await gatewayOf({ mcpServers: { web: { url: serving.url } } })
      const heard: Array<string> = []
      const hostHearing = async (name: string) => {
        const client = await host(gateway)
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.push(name))
        return client
      }
      const one = await hostHearing('one')
      const two = await hostHearing('two')
      state.tools = [bare('first')]
      change()
      await until(() => heard.length === 2)
      expect(heard.sort()).toStrictEqual(['one', 'two'])
      await two.close()
      heard.length = 0
      state.tools = [bare('second')]
      change()
      await until(() => heard.length === 1)
      await new Promise((r) => setTimeout(r, 50))
      expect(heard).toStrictEqual(['one'])
      expect((await one.listTools()).tools.map((t) => t.name)).toStrictEqual(['web_second'])
      await one.close()
    } finally {
      await serving.close()
    }
  })

  it('"prefix": "" serves an upstream\'s tools under their own names, beside a prefixed one, each call routed to its own', async () => {
    const records: Array<GatewayRecord> = []
    const config = decodeGatewayConfig({
      mcpServers: {
        bare: { command: process.execPath, args: [ECHO], prefix: '' },
        ec: { command: process.execPath, args: [ECHO] },
      },
    })
    if (config._tag === 'Left') throw new Error(config.left)
    const gateway = await startGateway(config.right, (r) => void records.push(r))
    running.push(gateway)
    const client = await host(gateway)
    expect((await client.listTools()).tools.map((t) => t.name)).toStrictEqual(['ping', 'ec_ping'])
    await client.callTool({ name: 'ping', arguments: { nn: 1 } })
    await client.callTool({ name: 'ec_ping', arguments: { nn: 1 } })
    expect(records.flatMap((r) => (r.type === 'call' ? [[r.tool, r.upstream]] : []))).toEqual([
      ['ping', 'bare'],
      ['ec_ping', 'ec'],
    ])
    await client.close()
  })

  it('names the upstream the call went to when one prefix starts another: the longest, as the registry routes', async () => {
    const records: Array<GatewayRecord> = []
    const config = decodeGatewayConfig({
      mcpServers: {
        short: { command: process.execPath, args: [ECHO], prefix: 'ec' },
        long: { command: process.execPath, args: [ECHO], prefix: 'ec_x' },
      },
    })
    if (config._tag === 'Left') throw new Error(config.left)
    const gateway = await startGateway(config.right, (r) => void records.push(r))
    running.push(gateway)
    const client = await host(gateway)
    await client.callTool({ name: 'ec_x_ping', arguments: { n: 1, nn: 2, reason: 'r' } })
    await client.callTool({ name: 'ec_ping', arguments: { n: 1, nn: 2, reason: 'r' } })
    expect(
      records.flatMap((r) => (r.type === 'warning' || r.type === 'decision' ? [[r.type, r.tool, r.upstream]] : [])),
    ).toEqual([
      ['decision', 'ec_x_ping', 'long'],
      ['warning', 'ec_x_ping', 'long'],
      ['decision', 'ec_ping', 'short'],
      ['warning', 'ec_ping', 'short'],
    ])
    await client.close()
  })

  it('a session that ends unsubscribes from every upstream, so a long-running gateway keeps no closed session', async () => {
    const { gateway } = await gatewayOf({ mcpServers: twoEchoes })
    // every upstream's subscriptions, counted through its own onToolsChanged
    const live = new Set<object>()
    for (const u of gateway.upstreams) {
      const subscribe = u.onToolsChanged
      vi.spyOn(u, 'onToolsChanged').mockImplementation((listener) => {
        const subscription = {}
        live.add(subscription)
        const off = subscribe(listener)
        return () => {
          live.delete(subscription)
          off()
        }
      })
    }
    const one = await host(gateway)
    const two = await host(gateway)
    expect(live.size).toBe(4)
    await two.close()
    expect(live.size).toBe(2)
    await one.close()
    expect(live.size).toBe(0)
  })
})

describe('the gateway: metrics, in process', () => {
  it("gatewayMetrics over startGateway's records and serveHttp's sessions: a restart, calls by outcome, an unknown tool, the session open", async () => {
    const dir = tempDir()
    const config = decodeGatewayConfig({
      // fails its first start, then serves `ping`
      mcpServers: { echo: { command: process.execPath, args: [ECHO, join(dir, 'started')], prefix: 'ec' } },
      rules: [{ tool: 'ec_ping', decision: 'allow' }],
      listWaitMs: 30_000,
    })
    if (config._tag === 'Left') throw new Error(config.left)
    let sessions = (): number => 0
    const metrics = await gatewayMetrics({ sessions: () => sessions() })
    const gateway = await startGateway(config.right, metrics.record)
    running.push(gateway)
    await until(() => gateway.readiness().ready, 15_000)
    const serving = await serveHttp(gateway.newServer, { port: 0, metrics: metrics.scrape })
    sessions = serving.sessions
    const client = new Client({ name: 'host', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(serving.url)))
    try {
      await client.callTool({ name: 'ec_ping', arguments: { n: 1 } })
      await unknownTool(client.callTool({ name: 'ec_nope', arguments: {} }))
      const body = await (await fetch(serving.url.replace('/mcp', '/metrics'))).text()
      expect(body).toContain('toolstack_upstream_restarts_total{upstream="echo"} 1\n')
      expect(body).toContain('toolstack_calls_total{upstream="echo",tool="ec_ping",outcome="ok"} 1\n')
      expect(body).toContain('toolstack_calls_total{upstream="echo",tool="(unknown)",outcome="refused"} 1\n')
      expect(body).toContain('toolstack_http_sessions 1\n')
    } finally {
      await client.close()
      await serving.close()
    }
  })
})

describe('decodeGatewayConfig: exactly what is kept', () => {
  it('leaves out what was not given (no env, no cwd), with nothing undefined in its place', () => {
    expect(
      decodeGatewayConfig({ mcpServers: { fs: { command: 'npx' }, web: { url: 'http://x/mcp' } }, log: 'g.log' }),
    ).toStrictEqual({
      _tag: 'Right',
      right: {
        servers: [
          { name: 'fs', prefix: 'fs', spec: { command: 'npx', args: [] } },
          { name: 'web', prefix: 'web', spec: { url: 'http://x/mcp', headers: {} } },
        ],
        rules: [{ tool: '*', decision: 'allow' }],
        tolerate: [],
        locationArgs: [],
        reasons: true,
        log: 'g.log',
      },
    })
  })
})
