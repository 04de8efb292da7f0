// A supervised upstream over real processes: one that fails its first start, one that
// is killed while it runs. The others keep working meanwhile (a registry test below).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { fromTools, registry } from '../../src/index.js'
import type { Upstream, UpstreamEvent } from '../../src/mcp/index.js'
import { serveHttp, superviseUpstream, toMcpServer } from '../../src/mcp/index.js'
import { isAlive, tempDir } from './fixtures.js'
import { cleanUpAfterEach } from './fixtures.js'

cleanUpAfterEach()
const FLAKY = fileURLToPath(new URL('./fixtures/flaky-server.mjs', import.meta.url))
const started: Array<Upstream> = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((u) => u.close()))
})

const supervise = (name: string, args: ReadonlyArray<string>, events: Array<UpstreamEvent>): Upstream => {
  const u = superviseUpstream(name, { command: process.execPath, args: [FLAKY, ...args] }, { backoffMs: 100, onEvent: (e) => void events.push(e) })
  started.push(u)
  return u
}

const until = async (done: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 20))
  }
}

const call = (name: string) => ({ id: '1', function: { name, arguments: '{"n":1}' } })

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
    expect(before._tag === 'Right' && before.right[0]?.content).toMatch(/^the upstream MCP server "flaky" is not running: it failed to start \(.*\); it is restarted in 1 s; the tool was not called$/)
    await until(() => u.isUp())
    expect(events.map((e) => e._tag)).toEqual(['Failed', 'Restarting', 'ToolsChanged', 'Started'])
    expect(changed).toBe(1)
    const after = await u.executeToolCalls([call('ping')])()
    expect(after._tag === 'Right' && after.right[0]?.content).toBe('pong {"n":1}')
  })

  it('one killed while it runs: its calls say so, the others keep working, and it comes back, its listeners told its tools are news', async () => {
    const events: Array<UpstreamEvent> = []
    const a = supervise('a', [], events)
    const b = supervise('b', [], [])
    await Promise.all([a.ready, b.ready])
    const both = registry([{ prefix: 'a', provider: a }, { prefix: 'b', provider: b }])
    expect((await both.toolsForLlm())._tag).toBe('Right')
    const pid = a.pid() as number
    process.kill(pid, 'SIGKILL')
    await until(() => !a.isUp())
    const during = await both.executeToolCalls([{ ...call('a_ping'), id: 'x' }, { ...call('b_ping'), id: 'y' }])()
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
    expect(events.map((e) => e._tag)).toEqual(['ToolsChanged', 'Started', 'Exited', 'Restarting', 'ToolsChanged', 'Started'])
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
      declaration: { type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } } },
      run: (args) => TE.right(`echo ${String(args['text'])}`),
    },
  ])

  it('reaches a URL with the headers given; there is no process, so no pid; every listener hears of its tools, one that throws costing the others nothing', async () => {
    const serving = await serveHttp(() => toMcpServer(echo, INFO), { port: 0, token: 't0ken' })
    const events: Array<UpstreamEvent> = []
    const u = superviseUpstream('web', { url: serving.url, headers: { Authorization: 'Bearer t0ken' } }, { onEvent: (e) => void events.push(e) })
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
    const u = superviseUpstream('web', { url: serving.url, headers: { Authorization: 'Bearer wrong' } }, { backoffMs: 40, maxBackoffMs: 100, onEvent: (e) => void events.push(e) })
    started.push(u)
    try {
      await u.ready
      expect(u.isUp()).toBe(false)
      await until(() => events.filter((e) => e._tag === 'Restarting').length >= 4)
      expect(events.flatMap((e) => (e._tag === 'Restarting' ? [e.inMs] : [])).slice(0, 4)).toEqual([40, 80, 100, 100])
      expect(events[0]?._tag).toBe('Failed')
      const out = await u.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{}' } }])()
      expect(out._tag === 'Right' && out.right[0]).toMatchObject({ is_error: true, tool_call_id: '1' })
      expect(out._tag === 'Right' && out.right[0]?.content).toMatch(/^the upstream MCP server "web" is not running: it failed to start \(.+\); it is restarted in 1 s; the tool was not called$/)
    } finally {
      await u.close()
      await serving.close()
    }
  })
})
