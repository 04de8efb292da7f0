// A supervised upstream over real processes: one that fails its first start, one that
// is killed while it runs. The others keep working meanwhile (a registry test below).
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Provider, ToolResult } from '../../src/index.js'
import { fromTools, registry } from '../../src/index.js'
import type { Upstream, UpstreamEvent } from '../../src/gateway/index.js'
import { serveHttp, toMcpServer } from '../../src/mcp/index.js'
import { MAX_LEFT_OUT_NAMED, superviseUpstream } from '../../src/gateway/index.js'
import { isAlive, linked, tempDir } from '../mcp/fixtures.js'
import { cleanUpAfterEach } from '../mcp/fixtures.js'
import { until } from '../support/until.js'

cleanUpAfterEach()
const FLAKY = fileURLToPath(new URL('../mcp/fixtures/flaky-server.mjs', import.meta.url))
const started: Array<Upstream> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(started.splice(0).map((u) => u.close()))
})

const supervise = (name: string, args: ReadonlyArray<string>, events: Array<UpstreamEvent>): Upstream => {
  const u = superviseUpstream(
    name,
    { command: process.execPath, args: [FLAKY, ...args] },
    { backoffMs: 100, onEvent: (e) => void events.push(e) },
  )
  started.push(u)
  return u
}

const call = (name: string) => ({ id: '1', function: { name, arguments: '{"n":1}' } })

/** What is written to this process's stderr from now on, in place of writing it. */
const captureStderr = (): Array<string> => {
  const written: Array<string> = []
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(Buffer.from(chunk).toString())
    return true
  })
  return written
}

describe('superviseUpstream', () => {
  it('one that fails to start: lists nothing, answers calls naming it, and is restarted; its tools come back, and listeners hear of it', async () => {
    const events: Array<UpstreamEvent> = []
    const u = supervise('flaky', [join(tempDir(), 'marker')], events)
    let changed = 0
    u.onToolsChanged(() => {
      changed++
    })
    await u.ready
    expect(events.map((e) => e._tag).slice(0, 2)).toEqual(['Failed', 'Restarting'])
    expect(await u.toolsForLlm()).toEqual({ _tag: 'Right', right: [] })
    const before = await u.executeToolCalls([call('ping')])()
    expect(before._tag === 'Right' && before.right[0]?.content).toMatch(
      /^the upstream MCP server "flaky" is not running: it failed to start \(.*\); it is restarted in 1 s; the tool was not called$/,
    )
    await until(() => u.isUp())
    expect(events.map((e) => e._tag)).toEqual(['Failed', 'Restarting', 'ToolsChanged', 'Started'])
    expect(changed).toBe(1)
    const after = await u.executeToolCalls([call('ping')])()
    expect(after._tag === 'Right' && after.right[0]?.content).toBe('pong {"n":1}')
  })

  it('one killed while it runs: its calls say so, the others keep working, and it comes back, its listeners not told (its tools are the same)', async () => {
    const events: Array<UpstreamEvent> = []
    const a = supervise('a', [], events)
    const b = supervise('b', [], [])
    await Promise.all([a.ready, b.ready])
    const both = registry([
      { prefix: 'a', provider: a },
      { prefix: 'b', provider: b },
    ])
    expect((await both.toolsForLlm())._tag).toBe('Right')
    const pid = a.pid() as number
    process.kill(pid, 'SIGKILL')
    await until(() => !a.isUp())
    const during = await both.executeToolCalls([
      { ...call('a_ping'), id: 'x' },
      { ...call('b_ping'), id: 'y' },
    ])()
    expect(during._tag === 'Right' && during.right.map((r) => [r.is_error === true, r.content.slice(0, 40)])).toEqual([
      [true, 'the upstream MCP server "a" is not runni'],
      [false, 'pong {"n":1}'],
    ])
    // the listing stays whole: its tools are still listed while it is down
    const listed = await both.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right.map((d) => d.function.name)).toEqual(['a_ping', 'b_ping'])
    await until(() => a.isUp())
    expect(a.pid()).not.toBe(pid)
    expect(isAlive(pid)).toBe(false)
    expect(events.map((e) => e._tag)).toEqual(['ToolsChanged', 'Started', 'Exited', 'Restarting', 'Started'])
    const back = await both.executeToolCalls([call('a_ping')])()
    expect(back._tag === 'Right' && back.right[0]?.content).toBe('pong {"n":1}')
  })

  it('close stops it for good: no restart, no process left', async () => {
    const events: Array<UpstreamEvent> = []
    const u = supervise('c', [], events)
    await u.ready
    const pid = u.pid() as number
    await u.close()
    await new Promise((r) => setTimeout(r, 300))
    expect(isAlive(pid)).toBe(false)
    expect(events.map((e) => e._tag)).toEqual(['ToolsChanged', 'Started'])
  })
})

describe('superviseUpstream over Streamable HTTP', () => {
  const INFO = { name: 'upstream-under-test', version: '0.0.0' }
  const echo = fromTools([
    {
      declaration: {
        type: 'function',
        function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
      },
      run: (args) => TE.right(`echo ${String(args['text'])}`),
    },
  ])

  it('reaches a URL with the headers given; there is no process, so no pid; every listener hears of its tools, one that throws costing the others nothing', async () => {
    const serving = await serveHttp(() => toMcpServer(echo, INFO), { port: 0, token: 't0ken' })
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'web',
      { url: serving.url, headers: { Authorization: 'Bearer t0ken' } },
      { onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    const heard: Array<string> = []
    u.onToolsChanged(() => {
      throw new Error('a listener that throws')
    })
    u.onToolsChanged(() => void heard.push('second'))
    const unsubscribe = u.onToolsChanged(() => void heard.push('gone'))
    unsubscribe()
    try {
      await u.ready
      expect(u.isUp()).toBe(true)
      expect(u.pid()).toBeUndefined()
      expect(events.map((e) => e._tag)).toEqual(['ToolsChanged', 'Started'])
      expect(events[0]).toEqual({ _tag: 'ToolsChanged', upstream: 'web', tools: 1 })
      expect(heard).toEqual(['second'])
      const listed = await u.toolsForLlm()
      expect(listed._tag === 'Right' && listed.right.map((d) => d.function.name)).toEqual(['echo'])
      const out = await u.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{"text":"hi"}' } }])()
      expect(out._tag === 'Right' && out.right[0]?.content).toBe('echo hi')
      // listing again with the same tools is no change
      expect(heard).toEqual(['second'])
    } finally {
      await u.close()
      await serving.close()
    }
  })

  it('is restarted with a back-off that doubles each time, up to maxBackoffMs', async () => {
    const serving = await serveHttp(() => toMcpServer(echo, INFO), { port: 0, token: 't0ken' })
    const events: Array<UpstreamEvent> = []
    // the wrong token: every start fails
    const u = superviseUpstream(
      'web',
      { url: serving.url, headers: { Authorization: 'Bearer wrong' } },
      { backoffMs: 40, maxBackoffMs: 100, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    try {
      await u.ready
      expect(u.isUp()).toBe(false)
      await until(() => events.filter((e) => e._tag === 'Restarting').length >= 4)
      expect(events.flatMap((e) => (e._tag === 'Restarting' ? [e.inMs] : [])).slice(0, 4)).toEqual([40, 80, 100, 100])
      expect(events[0]?._tag).toBe('Failed')
      const out = await u.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{}' } }])()
      expect(out._tag === 'Right' && out.right[0]).toMatchObject({ is_error: true, tool_call_id: '1' })
      expect(out._tag === 'Right' && out.right[0]?.content).toMatch(
        /^the upstream MCP server "web" is not running: it failed to start \(.+\); it is restarted in 1 s; the tool was not called$/,
      )
    } finally {
      await u.close()
      await serving.close()
    }
  })
})

// ------------------------------------------------------------------------------------
// exact events, what reaches the upstream, and when its tools count as changed
// ------------------------------------------------------------------------------------

const WHOAMI = fileURLToPath(new URL('../mcp/fixtures/whoami-server.mjs', import.meta.url))
const FAULTY = fileURLToPath(new URL('../mcp/fixtures/faulty-server.mjs', import.meta.url))

const decl = (name: string, properties: Record<string, unknown> = { text: { type: 'string' } }) => ({
  type: 'function' as const,
  function: { name, parameters: { type: 'object', properties } },
})

/** A provider whose listing the test changes (or breaks) at will, served over HTTP; `change` tells the hosts. */
const changing = async (first: ReadonlyArray<ReturnType<typeof decl>>) => {
  const state = { tools: first, broken: false, hang: false }
  const listeners = new Set<() => void>()
  const provider: Provider<string> = {
    // hang: the listing answers only once hang is off again
    toolsForLlm: async () => {
      while (state.hang) await new Promise((r) => setTimeout(r, 50))
      return state.broken ? left('the listing broke') : right(state.tools)
    },
    executeToolCalls: (calls) =>
      TE.right(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: `ran ${c.function.name}` }))),
  }
  const made: Array<Server> = []
  const serving = await serveHttp(
    () => {
      const server = toMcpServer(
        provider,
        { name: 'changing', version: '0.0.0' },
        { toolsChanged: (l) => (listeners.add(l), () => void listeners.delete(l)) },
      )
      made.push(server)
      return server
    },
    { port: 0 },
  )
  return {
    state,
    made,
    serving,
    change: () => {
      for (const l of listeners) l()
    },
  }
}

const withoutMs = (events: ReadonlyArray<UpstreamEvent>) =>
  events.map((e) => {
    if (e._tag !== 'Started') return e
    expect(e.ms).toBeGreaterThanOrEqual(0)
    expect(e.ms).toBeLessThan(20_000)
    const { ms: _ms, ...rest } = e
    return rest
  })

describe('superviseUpstream: events and what it says', () => {
  it('a command that cannot start: Failed saying why, Restarting in 500 ms by default; down, no pid, every call answered naming it', async () => {
    const missing = join(tempDir(), 'no-such-server')
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream('gone', { command: missing }, { onEvent: (e) => void events.push(e) })
    started.push(u)
    await u.ready
    const why = `connectStdio: could not connect to ${JSON.stringify(missing)}: spawn ${missing} ENOENT; no such command: check its name and the PATH, or give its full path`
    expect(events).toStrictEqual([
      { _tag: 'Failed', upstream: 'gone', error: why },
      { _tag: 'Restarting', upstream: 'gone', inMs: 500 },
    ])
    expect(u.isUp()).toBe(false)
    expect(u.pid()).toBeUndefined()
    expect(u.name).toBe('gone')
    expect(await u.toolsForLlm()).toStrictEqual({ _tag: 'Right', right: [] })
    const said = `the upstream MCP server "gone" is not running: it failed to start (${why}); it is restarted in 1 s; the tool was not called`
    expect(await u.executeToolCalls([call('a'), { ...call('b'), id: '2' }])()).toStrictEqual({
      _tag: 'Right',
      right: [
        { role: 'tool', tool_call_id: '1', content: said, is_error: true },
        { role: 'tool', tool_call_id: '2', content: said, is_error: true },
      ],
    })
    await u.close()
    // closing one that is down is fine, and so is closing it again
    await u.close()
  })

  it('while down, a batch whose size cannot be read is one refusal, and a position that cannot be read is answered naming it', async () => {
    const u = superviseUpstream('gone', { command: join(tempDir(), 'no-such-server') }, { backoffMs: 60_000 })
    started.push(u)
    await u.ready
    const unsized = await u.executeBatch({ calls: 'not calls' as never, argsAt: () => right({}) })()
    expect(unsized).toStrictEqual({
      _tag: 'Right',
      right: [
        {
          role: 'tool',
          tool_call_id: '',
          content:
            'this batch of tool calls could not be read: expected an array of tool calls, got the string "not calls"; no call was run',
          is_error: true,
        },
      ],
    })
    const calls = [call('a'), call('b')]
    const trap = new Proxy(calls, {
      get: (target, key, receiver) => {
        if (key === '1') throw new Error('no peeking')
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    const out = await u.executeBatch({ calls: trap, argsAt: () => right({}) })()
    expect(
      out._tag === 'Right' && out.right.map((r) => [r.tool_call_id, r.is_error, r.content.split(':')[0]]),
    ).toStrictEqual([
      ['1', true, 'the upstream MCP server "gone" is not running'],
      ['', true, 'the tool call at position 1 of the batch could not be read (no peeking), so it was not run'],
    ])
  })

  it('a command that starts: Started with its tools, how long it took and its pid; what it was given reaches it; stderr ignored by default', async () => {
    const dir = tempDir()
    const events: Array<UpstreamEvent> = []
    const written = captureStderr()
    const env = { WHOAMI_A: 'from the spec', WHOAMI_STDERR: 'not shown\n' }
    const u = superviseUpstream(
      'who',
      { command: process.execPath, args: [WHOAMI, 'arg'], cwd: dir, env },
      { onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await u.ready
    const pid = u.pid()
    expect(typeof pid).toBe('number')
    expect(withoutMs(events)).toStrictEqual([
      { _tag: 'ToolsChanged', upstream: 'who', tools: 1 },
      { _tag: 'Started', upstream: 'who', tools: 1, pid },
    ])
    const out = await u.executeToolCalls([{ id: 'w', function: { name: 'whoami', arguments: '{}' } }])()
    const me = JSON.parse(out._tag === 'Right' ? (out.right[0]?.content ?? '') : '') as {
      argv: Array<string>
      cwd: string
      env: unknown
      clientInfo: unknown
      pid: number
      stderr: unknown
    }
    expect(me.argv).toStrictEqual(['arg'])
    expect(me.cwd).toBe(dir)
    expect(me.env).toStrictEqual({ WHOAMI_A: 'from the spec', hasPath: true })
    expect(me.clientInfo).toStrictEqual({ name: 'toolstack', version: '0.1.0' })
    expect(me.pid).toBe(pid)
    await u.close()
    expect(written.join('')).not.toContain('not shown')
  })

  it('a command with nothing else: no arguments, no environment of its own, this cwd; stderr inherited when asked', async () => {
    const file = join(tempDir(), 'whoami')
    writeFileSync(
      file,
      `#!${process.execPath}\nprocess.stderr.write('whoami starts\\n')\nawait import(${JSON.stringify(WHOAMI)})\n`,
    )
    chmodSync(file, 0o755)
    const written = captureStderr()
    const u = superviseUpstream('who', { command: file }, { stderr: 'inherit' })
    started.push(u)
    await u.ready
    expect(u.isUp()).toBe(true)
    const out = await u.executeToolCalls([{ id: 'w', function: { name: 'whoami', arguments: '{}' } }])()
    const me = JSON.parse(out._tag === 'Right' ? (out.right[0]?.content ?? '') : '') as {
      argv: Array<string>
      cwd: string
      env: unknown
      stderr: unknown
    }
    expect(me.argv).toStrictEqual([])
    expect(me.cwd).toBe(process.cwd())
    expect(me.env).toStrictEqual({ WHOAMI_A: null, hasPath: true })
    await vi.waitFor(() => expect(written.join('')).toContain('whoami starts\n'))
  })

  it('closed while it starts: it does not come up, and its process is gone once ready', async () => {
    const pidFile = join(tempDir(), 'pid')
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'late',
      { command: process.execPath, args: [WHOAMI], env: { WHOAMI_PIDFILE: pidFile } },
      { onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await u.close()
    await u.ready
    expect(u.isUp()).toBe(false)
    expect(u.pid()).toBeUndefined()
    expect(events.map((e) => e._tag)).not.toContain('Started')
    expect(isAlive(Number(readFileSync(pidFile, 'utf8')))).toBe(false)
  })

  it('closed while a start that fails is under way: no restart is scheduled', async () => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'gone',
      { command: join(tempDir(), 'no-such-server') },
      { onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await u.close()
    await u.ready
    expect(events.map((e) => e._tag)).toStrictEqual(['Failed'])
  })

  it('a call before the first start has finished is answered saying so', async () => {
    const u = superviseUpstream('early', { command: process.execPath, args: [WHOAMI] })
    started.push(u)
    expect(await u.executeToolCalls([call('whoami')])()).toStrictEqual({
      _tag: 'Right',
      right: [
        {
          role: 'tool',
          tool_call_id: '1',
          content: 'the upstream MCP server "early" is not running: it has not started yet; the tool was not called',
          is_error: true,
        },
      ],
    })
    await u.ready
    expect(u.isUp()).toBe(true)
  })

  it('one that exits: Exited, then Restarting; down, no pid, and its calls say it exited and when it is tried again', async () => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'who',
      { command: process.execPath, args: [WHOAMI] },
      { backoffMs: 60_000, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await u.ready
    const pid = u.pid() as number
    process.kill(pid, 'SIGKILL')
    await until(() => !u.isUp())
    expect(u.pid()).toBeUndefined()
    expect(withoutMs(events)).toStrictEqual([
      { _tag: 'ToolsChanged', upstream: 'who', tools: 1 },
      { _tag: 'Started', upstream: 'who', tools: 1, pid },
      { _tag: 'Exited', upstream: 'who' },
      { _tag: 'Restarting', upstream: 'who', inMs: 60_000 },
    ])
    const out = await u.executeToolCalls([call('whoami')])()
    expect(out._tag === 'Right' && out.right[0]?.content).toBe(
      'the upstream MCP server "who" is not running: it exited; it is restarted in 60 s; the tool was not called',
    )
  })

  it('close cancels a restart that is pending: it is not tried again', async () => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'gone',
      { command: join(tempDir(), 'no-such-server') },
      { backoffMs: 50, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await u.ready
    await u.close()
    await new Promise((r) => setTimeout(r, 300))
    expect(events.map((e) => e._tag)).toStrictEqual(['Failed', 'Restarting'])
  })

  it("a restart that is pending does not keep the process alive (its timer is unref'd)", async () => {
    const keepingAlive = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const before = keepingAlive()
    const u = superviseUpstream('gone', { command: join(tempDir(), 'no-such-server') }, { backoffMs: 60_000 })
    started.push(u)
    await u.ready
    expect(u.isUp()).toBe(false)
    expect(keepingAlive()).toBe(before)
  })

  it('the per-request timeout reaches its calls', async () => {
    const u = superviseUpstream('faulty', { command: process.execPath, args: [FAULTY] }, { timeout: 300 })
    started.push(u)
    await u.ready
    const t0 = Date.now()
    const out = await u.executeToolCalls([{ id: 'h', function: { name: 'hang', arguments: '{}' } }])()
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(out._tag === 'Right' && out.right[0]?.is_error).toBe(true)
    expect(out._tag === 'Right' && out.right[0]?.content).toBe(
      'the MCP server did not answer within 300 ms, so the call was cancelled; the tool may or may not have run',
    )
  })
})

/** An upstream over a changing server, with its events and its listener's calls counted. */
const watching = async (first: ReadonlyArray<ReturnType<typeof decl>>) => {
  const up = await changing(first)
  const events: Array<UpstreamEvent> = []
  const u = superviseUpstream('web', { url: up.serving.url }, { onEvent: (e) => void events.push(e) })
  started.push(u)
  const heard = { count: 0 }
  u.onToolsChanged(() => void heard.count++)
  return { up, events, u, heard }
}

describe('superviseUpstream: when its tools count as changed', () => {
  it('a new listing is news when a name, a schema or the count changed, not when the same tools come again; the server saying so re-lists', async () => {
    const { up, events, u, heard } = await watching([decl('a'), decl('b')])
    try {
      await u.ready
      expect(withoutMs(events)).toStrictEqual([
        { _tag: 'ToolsChanged', upstream: 'web', tools: 2 },
        { _tag: 'Started', upstream: 'web', tools: 2 },
      ])
      expect(heard.count).toBe(1)
      // the upstream hears of this client as toolstack 0.1.0
      expect(up.made.map((s) => s.getClientVersion())).toStrictEqual([{ name: 'toolstack', version: '0.1.0' }])
      const names = async () => {
        const listed = await u.toolsForLlm()
        return listed._tag === 'Right' ? listed.right.map((d) => d.function.name) : []
      }
      const steps: Array<[string, Array<ReturnType<typeof decl>>, number]> = [
        ['the same tools again', [decl('a'), decl('b')], 1],
        ["the second one's schema changed", [decl('a'), decl('b', { text: { type: 'number' } })], 2],
        ['the second one renamed, its schema kept', [decl('a'), decl('c', { text: { type: 'number' } })], 3],
        ['the first one renamed', [decl('z'), decl('c', { text: { type: 'number' } })], 4],
        ['one more', [decl('z'), decl('c', { text: { type: 'number' } }), decl('d')], 5],
        ['the last one gone', [decl('z'), decl('c', { text: { type: 'number' } })], 6],
        ['all gone', [], 7],
        ['all gone again', [], 7],
      ]
      for (const [what, tools, expected] of steps) {
        up.state.tools = tools
        expect([what, await names(), heard.count]).toStrictEqual([what, tools.map((d) => d.function.name), expected])
      }
      expect(
        events.filter((e) => e._tag === 'ToolsChanged').map((e) => e._tag === 'ToolsChanged' && e.tools),
      ).toStrictEqual([2, 2, 2, 2, 3, 2, 0])
      // a listing that fails while it runs leaves the last good one
      up.state.tools = [decl('kept')]
      await names()
      up.state.broken = true
      expect(await names()).toStrictEqual(['kept'])
      up.state.broken = false
      // the server says its tools changed: the upstream re-lists without being asked
      up.state.tools = [decl('pushed')]
      const before = heard.count
      up.change()
      await until(() => heard.count > before)
      expect(events.at(-1)).toStrictEqual({ _tag: 'ToolsChanged', upstream: 'web', tools: 1 })
    } finally {
      await u.close()
      await up.serving.close()
    }
  })

  it('one with no tools at its first start: Started, and no ToolsChanged (the listing was empty and still is)', async () => {
    const { up, events, u, heard } = await watching([])
    try {
      await u.ready
      expect(withoutMs(events)).toStrictEqual([{ _tag: 'Started', upstream: 'web', tools: 0 }])
      expect(heard.count).toBe(0)
    } finally {
      await u.close()
      await up.serving.close()
    }
  })

  it('once closed, it hears no more from its server: a change announced afterwards is not listed again', async () => {
    const { up, events, u, heard } = await watching([decl('a')])
    try {
      await u.ready
      // while it runs, the server saying so is heard
      up.state.tools = [decl('b')]
      up.change()
      await until(() => heard.count === 2)
      await u.close()
      up.state.tools = [decl('c')]
      up.change()
      await new Promise((r) => setTimeout(r, 300))
      expect(heard.count).toBe(2)
      expect(events.map((e) => e._tag)).toStrictEqual(['ToolsChanged', 'Started', 'ToolsChanged'])
      expect(await u.toolsForLlm()).toStrictEqual(right([decl('b')]))
    } finally {
      await u.close()
      await up.serving.close()
    }
  })

  it('a listing that fails at start is a failed start, not an exit', async () => {
    const up = await changing([decl('a')])
    up.state.broken = true
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'web',
      { url: up.serving.url },
      { backoffMs: 60_000, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    try {
      await u.ready
      expect(events.map((e) => e._tag)).toStrictEqual(['Failed', 'Restarting'])
      expect(events[0]?._tag === 'Failed' && events[0].error).toMatch(/the listing broke/)
      expect(events[1]).toStrictEqual({ _tag: 'Restarting', upstream: 'web', inMs: 60_000 })
      expect(u.isUp()).toBe(false)
    } finally {
      await u.close()
      await up.serving.close()
    }
  })
})

describe('superviseUpstream: back-off by default (a fake clock for its timer)', () => {
  it('starts at 500 ms and doubles each time, up to 30 s; the message rounds it up to whole seconds', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'gone',
      { command: join(tempDir(), 'no-such-server') },
      { onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    try {
      await u.ready
      const delays = () => events.flatMap((e) => (e._tag === 'Restarting' ? [e.inMs] : []))
      const said = async () => {
        const out = await u.executeToolCalls([call('x')])()
        return out._tag === 'Right' ? (out.right[0]?.content.match(/restarted in (\d+) s/)?.[1] ?? '') : ''
      }
      const seconds = [await said()]
      while (delays().length < 9) {
        const count = delays().length
        vi.advanceTimersByTime(delays().at(-1) ?? 0)
        while (delays().length === count) await new Promise((r) => setImmediate(r))
        seconds.push(await said())
      }
      expect(delays()).toStrictEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
      expect(seconds).toStrictEqual(['1', '1', '2', '4', '8', '16', '30', '30', '30'])
    } finally {
      vi.useRealTimers()
    }
  })

  it('a back-off that is not whole seconds is said rounded up, and the first one is not capped', async () => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'gone',
      { command: join(tempDir(), 'no-such-server') },
      { backoffMs: 61_001, maxBackoffMs: 1000, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await u.ready
    expect(events.at(-1)).toStrictEqual({ _tag: 'Restarting', upstream: 'gone', inMs: 61_001 })
    const out = await u.executeToolCalls([call('x')])()
    expect(
      out._tag === 'Right' && out.right[0]?.content.endsWith('; it is restarted in 62 s; the tool was not called'),
    ).toBe(true)
  })
})

// ------------------------------------------------------------------------------------
// bounds: a burst of list_changed, a hung listing, a flapping server
// ------------------------------------------------------------------------------------

const STORM = fileURLToPath(new URL('../mcp/fixtures/storm-server.mjs', import.meta.url))

describe('superviseUpstream: bounded', () => {
  const textOf = (out: Either<never, ReadonlyArray<ToolResult>>): string =>
    out._tag === 'Right' ? String(out.right[0]?.content) : ''

  it('10,000 list_changed in a burst: at most two re-listings (one in flight, one after it)', async () => {
    const u = superviseUpstream('storm', { command: process.execPath, args: [STORM] })
    started.push(u)
    await u.ready
    const before = Number(
      textOf(await u.executeToolCalls([{ id: 'l', function: { name: 'lists', arguments: '{}' } }])()),
    )
    expect(before).toBe(1)
    const sent = await u.executeToolCalls([{ id: 's', function: { name: 'storm', arguments: '{"n":10000}' } }])()
    expect(textOf(sent)).toBe('sent 10000')
    // quiet once the count stops moving
    let last = -1
    let now = before
    while (now !== last) {
      last = now
      await new Promise((r) => setTimeout(r, 300))
      now = Number(textOf(await u.executeToolCalls([{ id: 'l', function: { name: 'lists', arguments: '{}' } }])()))
    }
    expect(now - before).toBeGreaterThanOrEqual(1)
    expect(now - before).toBeLessThanOrEqual(2)
  }, 30_000)

  it('a flapping upstream keeps its back-off: it doubles across short runs, and a start that fails is not news to listeners', async () => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'flap',
      { command: process.execPath, args: [STORM, 'flap'] },
      { backoffMs: 50, maxBackoffMs: 400, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    let heard = 0
    u.onToolsChanged(() => void heard++)
    await until(() => events.filter((e) => e._tag === 'Restarting').length >= 4, 20_000)
    await u.close()
    expect(events.flatMap((e) => (e._tag === 'Restarting' ? [e.inMs] : [])).slice(0, 4)).toStrictEqual([
      50, 100, 200, 400,
    ])
    // the same two tools after every restart: listeners heard once, at the first start
    expect(events.filter((e) => e._tag === 'ToolsChanged')).toHaveLength(1)
    expect(heard).toBe(1)
  }, 30_000)

  it('the back-off starts again from backoffMs after a run of stableMs', async () => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'flap',
      { command: process.execPath, args: [STORM, 'flap'] },
      // up for 150 ms and more each run (from its first listing), so a run of 50 ms counts as stable
      { backoffMs: 50, stableMs: 50, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    await until(() => events.filter((e) => e._tag === 'Restarting').length >= 3, 20_000)
    await u.close()
    expect(events.flatMap((e) => (e._tag === 'Restarting' ? [e.inMs] : [])).slice(0, 3)).toStrictEqual([50, 50, 50])
  }, 30_000)

  it('close ends a server still in its handshake, and resolves once it is gone (not at the SDK timeout)', async () => {
    const pidFile = join(tempDir(), 'pid')
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'stuck',
      { command: process.execPath, args: [STORM, 'stubborn', pidFile] },
      { onEvent: (e) => void events.push(e) },
    )
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 25))
    const pid = Number(readFileSync(pidFile, 'utf8'))
    expect(isAlive(pid)).toBe(true)
    const t0 = Date.now()
    await u.close()
    expect(isAlive(pid)).toBe(false)
    // its input closed, SIGTERM after 2 s (ignored), SIGKILL after 2 s more
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(events.map((e) => e._tag)).not.toContain('Restarting')
  }, 20_000)

  it('a listing waits listWaitMs at most for an upstream that does not answer, and returns the tools it had', async () => {
    const up = await changing([decl('a')])
    const u = superviseUpstream('web', { url: up.serving.url }, { listWaitMs: 200 })
    started.push(u)
    try {
      await u.ready
      up.state.hang = true
      const t0 = Date.now()
      const listed = await u.toolsForLlm()
      expect(Date.now() - t0).toBeLessThan(1500)
      expect(listed).toStrictEqual(right([decl('a')]))
    } finally {
      up.state.hang = false
      await u.close()
      await up.serving.close()
    }
  })
})

describe('superviseUpstream: a hostile server', () => {
  const HOSTILE = fileURLToPath(new URL('../mcp/fixtures/hostile-listing-server.mjs', import.meta.url))
  const hostile = (args: ReadonlyArray<string>, options: Parameters<typeof superviseUpstream>[2] = {}) => {
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream(
      'h',
      { command: process.execPath, args: [HOSTILE, ...args] },
      { backoffMs: 60_000, ...options, onEvent: (e) => void events.push(e) },
    )
    started.push(u)
    return { u, events }
  }

  it("one tool whose schema nests 3,000 levels deep costs only that tool: it starts, and its other tools reach a host through the gateway's stack", async () => {
    const { u, events } = hostile(['deep', '3000'], { stderr: 'log' })
    await u.ready
    // each event that reports the listing says what it left out, and why
    const leftOut = {
      leftOut: [{ name: 'deep', why: 'its input schema or annotations nest deeper than 100 levels' }],
      leftOutCount: 1,
    }
    expect(withoutMs(events)).toStrictEqual([
      { _tag: 'ToolsChanged', upstream: 'h', tools: 1, ...leftOut },
      { _tag: 'Started', upstream: 'h', tools: 1, pid: u.pid(), ...leftOut },
    ])
    const host = await linked(toMcpServer(registry([{ prefix: 'h', provider: u }]), { name: 'gw', version: '0' }))
    try {
      const { tools } = await host.client.listTools()
      expect(tools.map((t) => t.name)).toStrictEqual(['h_echo'])
      const out = await host.client.callTool({ name: 'h_echo', arguments: { text: 'still here' } })
      expect(out).toStrictEqual({ content: [{ type: 'text', text: 'still here' }] })
    } finally {
      await host.close()
    }
  })

  it(`names at most MAX_LEFT_OUT_NAMED (${MAX_LEFT_OUT_NAMED}) of the tools a listing left out, and counts them all`, async () => {
    const { u, events } = hostile(['deep', '200', String(MAX_LEFT_OUT_NAMED + 5)])
    await u.ready
    const started = events.find((e) => e._tag === 'Started')
    expect(started?._tag === 'Started' && started.leftOut?.map((t) => t.name)).toStrictEqual([
      'deep',
      ...Array.from({ length: MAX_LEFT_OUT_NAMED - 1 }, (_, i) => `deep_${i + 2}`),
    ])
    expect(started?._tag === 'Started' && started.leftOutCount).toBe(MAX_LEFT_OUT_NAMED + 5)
  })

  it('one that crashes at its first listing: the failure quotes the end of its stderr, escaped, once; a call and its status say it too', async () => {
    const { u, events } = hostile(['crash-list'], { stderr: 'log' })
    await u.ready
    const why =
      'tools/list failed on page 1: the connection to the MCP server is closed; the end of its stderr: ' +
      'hostile: starting | FATAL: cannot open /var/db/tools.sqlite (EACCES) \\u001b]0;owned\\u0007'
    // the lines it held while starting are quoted, not said again one by one
    expect(events).toStrictEqual([
      { _tag: 'Failed', upstream: 'h', error: why },
      { _tag: 'Restarting', upstream: 'h', inMs: 60_000 },
    ])
    expect(u.status()).toStrictEqual({ state: 'down', tools: [], restarts: 0, why })
    const out = await u.executeToolCalls([call('h_echo')])()
    expect(out._tag === 'Right' && out.right[0]?.content).toBe(
      `the upstream MCP server "h" is not running: it failed to start (${why}); it is restarted in 60 s; the tool was not called`,
    )
  })

  it('whatever its stderr mode, a failed start quotes its last five lines, saying earlier ones were left out', async () => {
    const end =
      '; the end of its stderr: … | noise 4 | noise 5 | noise 6 | noise 7 | ' +
      'FATAL: cannot open /var/db/tools.sqlite (EACCES) \\u001b]0;owned\\u0007'
    for (const stderr of ['ignore', 'inherit', 'log'] as const) {
      if (stderr === 'inherit') captureStderr()
      const { u, events } = hostile(['crash-list', '7'], { stderr })
      await u.ready
      expect([stderr, events[0]]).toStrictEqual([
        stderr,
        {
          _tag: 'Failed',
          upstream: 'h',
          error: `tools/list failed on page 1: the connection to the MCP server is closed${end}`,
        },
      ])
      await u.close()
    }
  })

  it("its stderr once it is up: each line an event with 'log', none with 'ignore'", async () => {
    const heard = async (stderr: 'ignore' | 'log') => {
      const events: Array<UpstreamEvent> = []
      const u = superviseUpstream(
        'who',
        { command: process.execPath, args: [WHOAMI], env: { WHOAMI_STDERR: 'said on a call\n' } },
        { stderr, onEvent: (e) => void events.push(e) },
      )
      started.push(u)
      await u.ready
      await u.executeToolCalls([{ id: 'w', function: { name: 'whoami', arguments: '{}' } }])()
      if (stderr === 'log') await until(() => events.some((e) => e._tag === 'Stderr'))
      else await new Promise((r) => setTimeout(r, 300))
      return events.filter((e) => e._tag === 'Stderr')
    }
    expect(await heard('log')).toStrictEqual([{ _tag: 'Stderr', upstream: 'who', line: 'said on a call' }])
    expect(await heard('ignore')).toStrictEqual([])
  })
})
