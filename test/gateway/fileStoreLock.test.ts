// The file store's lock (PATH.lock, created exclusively) on a real directory, with a clock the test moves by hand:
// how long a write waits for another gateway's lock, when a lock is old enough to be taken over, the wait between
// tries, and that the lock file is gone after, whatever the step did.
import { existsSync, readFileSync, readdirSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { LockClock } from '../../src/gateway/stores/fileStore.js'
import { withLock } from '../../src/gateway/stores/fileStore.js'
import { cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'
import { openUnder } from '../support/openFiles.js'

cleanUpAfterEach()

// a clock at `start` that each wait moves on by `step` ms (the wait asked for when `step` is undefined); `during`
// runs at each wait, given the waits so far
const handClock = (
  start: number,
  step?: number,
  during: (waits: ReadonlyArray<number>) => void = () => undefined,
): LockClock & { readonly waits: ReadonlyArray<number>; readonly at: () => number } => {
  let now = start
  const waits: Array<number> = []
  return {
    now: () => now,
    sleep: (ms) => {
      waits.push(ms)
      now += step ?? ms
      during(waits)
      return Promise.resolve()
    },
    waits,
    at: () => now,
  }
}

// a lock file another process holds, last written at `mtimeMs` (whole seconds, so the file system keeps it exactly)
const OTHERS = '4242\n'
const heldBy = (lock: string, mtimeMs: number): void => {
  writeFileSync(lock, OTHERS)
  utimesSync(lock, mtimeMs / 1000, mtimeMs / 1000)
}
const T0 = 1_800_000_000_000

describe('withLock', () => {
  it('a free lock: the step runs holding it (the pid in the file), and it is gone after; no wait, no descriptor left', async () => {
    const dir = tempDir()
    const file = join(dir, 'store.json')
    const clock = handClock(T0)
    let during = ''
    const got = await withLock(
      file,
      () => {
        during = readFileSync(`${file}.lock`, 'utf8')
        return Promise.resolve(7)
      },
      clock,
    )
    expect(got).toEqual({ held: true, value: 7 })
    expect(during).toBe(`${process.pid}\n`)
    expect(clock.waits).toEqual([])
    expect(readdirSync(dir)).toEqual([])
    expect(openUnder(dir)).toEqual([])
  })

  it('a step that throws: the rejection is the step’s, and the lock is let go', async () => {
    const dir = tempDir()
    const file = join(dir, 'store.json')
    await expect(withLock(file, () => Promise.reject(new Error('step failed')), handClock(T0))).rejects.toThrow(
      'step failed',
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it('a lock that cannot be made for another reason than being held (no directory) rejects at once', async () => {
    const file = join(tempDir(), 'gone', 'store.json')
    const clock = handClock(T0)
    let ran = false
    await expect(
      withLock(
        file,
        () => {
          ran = true
          return Promise.resolve()
        },
        clock,
      ),
    ).rejects.toMatchObject({ code: 'ENOENT' })
    expect(ran).toBe(false)
    expect(clock.waits).toEqual([])
  })

  it('a lock another process holds: the step waits for it, between 10 and 30 ms a try, spread, and never takes it', async () => {
    const dir = tempDir()
    const file = join(dir, 'store.json')
    const lock = `${file}.lock`
    heldBy(lock, T0)
    const seen: Array<string> = []
    // each wait moves the clock 1 ms, so the wait bound is never reached; the other process lets go at the 60th
    const clock = handClock(T0, 1, (waits) => {
      seen.push(readFileSync(lock, 'utf8'))
      if (waits.length === 60) unlinkSync(lock)
    })
    let held = ''
    const got = await withLock(
      file,
      () => {
        held = readFileSync(lock, 'utf8')
        return Promise.resolve('done')
      },
      clock,
    )
    expect(got).toEqual({ held: true, value: 'done' })
    expect(clock.waits).toHaveLength(60)
    expect(seen.slice(0, 59).every((s) => s === OTHERS)).toBe(true)
    expect(clock.waits.every((ms) => ms >= 10 && ms < 30)).toBe(true)
    expect(Math.max(...clock.waits) - Math.min(...clock.waits)).toBeGreaterThan(1)
    expect(held).toBe(`${process.pid}\n`)
    expect(existsSync(lock)).toBe(false)
  })

  it('a lock held past 2 s of the clock: it gives up (the step never runs), and leaves the lock as it is', async () => {
    const dir = tempDir()
    const file = join(dir, 'store.json')
    const lock = `${file}.lock`
    heldBy(lock, T0)
    // each wait moves the clock 500 ms: it tries at 0, 500, 1000, 1500 and 2000 ms (not past the bound), gives up at 2500
    const clock = handClock(T0, 500)
    let ran = false
    const got = await withLock(
      file,
      () => {
        ran = true
        return Promise.resolve()
      },
      clock,
    )
    expect(got).toEqual({ held: false })
    expect(ran).toBe(false)
    expect(clock.waits).toHaveLength(5)
    expect(readFileSync(lock, 'utf8')).toBe(OTHERS)
    expect(openUnder(dir)).toEqual([])
  })

  it('a lock last written more than 10 s ago (its process died) is taken over at once; one written 10 s ago is waited for', async () => {
    const dir = tempDir()
    const file = join(dir, 'store.json')
    const lock = `${file}.lock`
    heldBy(lock, T0)
    const stale = handClock(T0 + 10_001)
    let held = ''
    const got = await withLock(
      file,
      () => {
        held = readFileSync(lock, 'utf8')
        return Promise.resolve(1)
      },
      stale,
    )
    expect(got).toEqual({ held: true, value: 1 })
    expect(stale.waits).toEqual([])
    expect(held).toBe(`${process.pid}\n`)
    expect(existsSync(lock)).toBe(false)

    heldBy(lock, T0)
    // 10 s old is not yet stale: it waits (and the clock, moving 1 ms a wait, makes it stale at the next try)
    const fresh = handClock(T0 + 10_000, 1)
    expect(await withLock(file, () => Promise.resolve(2), fresh)).toEqual({ held: true, value: 2 })
    expect(fresh.waits).toHaveLength(1)
    expect(existsSync(lock)).toBe(false)
  })
})
