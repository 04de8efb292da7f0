// The watchdog over a server's process group (src/mcp/watchdog.ts), driven as the product meets it: a process
// that watches a group and then ends, outright or after `stop`. Each watcher is a real Node process running the
// source through tsx; each group a real detached Node process.
import type { ChildProcess } from 'node:child_process'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { isAlive } from '../support/processes.js'

const WATCHDOG = fileURLToPath(new URL('../../src/mcp/watchdog.ts', import.meta.url))
const started: Array<number> = []
const watchers: Array<ChildProcess> = []
afterEach(() => {
  for (const w of watchers.splice(0)) w.kill('SIGKILL')
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
})

// a group of its own: one process that ignores nothing and never ends
const group = (): number => {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore', detached: true })
  c.unref()
  started.push(c.pid as number)
  return c.pid as number
}

// a process that watches `pgid`, says "watching", then waits; or stops watching and has nothing more to do; or
// just has nothing more to do
const watcher = (pgid: number, then: 'wait' | 'stop' | 'return'): Promise<ChildProcess> =>
  new Promise((resolve) => {
    const code = `
      import { watchGroup } from ${JSON.stringify(WATCHDOG)}
      const stop = watchGroup(${pgid}, 100)
      ${then === 'stop' ? 'stop()' : then === 'wait' ? 'setInterval(() => {}, 1000)' : ''}
      process.stdout.write('watching\\n')`
    const w = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: 'pipe' })
    watchers.push(w)
    w.stdout.once('data', () => resolve(w))
  })

const until = async (predicate: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25)))
    if (predicate()) return true
  return predicate()
}

// a process that watches every group of `watch`, stops watching those of `stop`, says "watching", and waits
const watching = (watch: ReadonlyArray<number>, stop: ReadonlyArray<number>): Promise<ChildProcess> =>
  new Promise((resolve) => {
    const code = `
      import { watchGroup } from ${JSON.stringify(WATCHDOG)}
      const stops = new Map(${JSON.stringify(watch)}.map((g) => [g, watchGroup(g, 100)]))
      for (const g of ${JSON.stringify(stop)}) stops.get(g)()
      setInterval(() => {}, 1000)
      process.stdout.write('watching\\n')`
    const w = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: 'pipe' })
    watchers.push(w)
    w.stdout.once('data', () => resolve(w))
  })

describe('watchGroup', () => {
  it.each([
    ['the middle one', [1]],
    ['the first and the last', [0, 2]],
    ['none', []],
  ])(
    'of several groups watched, ends those still watched when the process is killed outright; stopped: %s',
    async (_, stopAt) => {
      const groups = [group(), group(), group()]
      const stopped = stopAt.map((i) => groups[i] as number)
      const w = await watching(groups, stopped)
      w.kill('SIGKILL')
      const ended = groups.filter((g) => !stopped.includes(g))
      expect(await until(() => ended.every((g) => !isAlive(g)), 10_000)).toBe(true)
      expect(stopped.filter((g) => isAlive(g))).toEqual(stopped)
    },
    20_000,
  )

  it('ends the group when the process watching it is killed outright (SIGKILL: no exit event runs)', async () => {
    const pgid = group()
    const w = await watcher(pgid, 'wait')
    expect(isAlive(pgid)).toBe(true)
    w.kill('SIGKILL')
    expect(await until(() => !isAlive(pgid), 10_000)).toBe(true)
  }, 20_000)

  it('once stopped, leaves the group alone when the watching process ends', async () => {
    const pgid = group()
    const w = await watcher(pgid, 'stop')
    await new Promise((r) => w.once('exit', r))
    // past the watchdog's whole course (SIGTERM at once, SIGKILL a second later)
    expect(await until(() => !isAlive(pgid), 1_500)).toBe(false)
  }, 20_000)

  it('holds nothing that keeps the watching process running; a process that ends without ending the group ends it', async () => {
    const pgid = group()
    const w = await watcher(pgid, 'return')
    expect(await new Promise((r) => w.once('exit', r))).toBe(0)
    expect(await until(() => !isAlive(pgid), 10_000)).toBe(true)
  }, 20_000)
})
