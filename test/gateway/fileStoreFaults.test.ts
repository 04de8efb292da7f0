// The file store when a write fails half-way, on a real directory: node:fs/promises' own functions are wrapped for
// one test (the real call made, or a failure returned in its place) and put back after. A failed write leaves the
// file as it was and no temporary file; the store says so once, keeps the grant, and writes it at its next try.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { fstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Rule } from '../../src/index.js'
import type { GatewayStore } from '../../src/gateway/index.js'
import { decodeStoreFile, encodeStoreFile, fileStore } from '../../src/gateway/index.js'
import { cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'
import { until } from '../support/until.js'
import { openUnder } from '../support/openFiles.js'
import { pinOf } from '../support/pins.js'

cleanUpAfterEach()

const WRITE: Rule = { tool: 'fs_write_file', decision: 'allow', under: '/srv/p' }
const MOVE: Rule = { tool: 'fs_move_file', decision: 'deny' }

const grantsIn = (file: string): ReadonlyArray<Rule> => {
  const d = decodeStoreFile(readFileSync(file, 'utf8'))
  if (d._tag === 'Left') throw new Error(d.left)
  return d.right.grants
}
// the file holds `n` grants (a file not written yet, or read mid-rename, does not)
const holds = (file: string, n: number) => (): boolean => {
  try {
    return grantsIn(file).length === n
  } catch {
    return false
  }
}

// what stays wrapped until the test ends
const undo: Array<() => void> = []
const opened: Array<GatewayStore> = []
afterEach(async () => {
  for (const u of undo.splice(0).reverse()) u()
  await Promise.all(opened.splice(0).map((s) => s.close()))
})

// the directory holds just `names` once the write in flight has let its lock and temporary file go: a write's
// rename lands before its lock is removed, so a listing made at once on a busy machine can still see the lock
const leaves = (dir: string, names: ReadonlyArray<string>): Promise<void> =>
  until(() => JSON.stringify(readdirSync(dir)) === JSON.stringify(names), undefined, `${dir} to hold ${names.join()}`)

// node:fs/promises' `rename`, replaced for this test (the named import the store holds follows the module's own)
const wrapRename = (by: (real: typeof fsp.rename) => typeof fsp.rename): void => {
  const real = fsp.rename
  fsp.rename = by(real)
  syncBuiltinESMExports()
  undo.push(() => {
    fsp.rename = real
    syncBuiltinESMExports()
  })
}

// FileHandle's `sync`, replaced for this test
const wrapSync = async (by: (real: FileHandle['sync']) => FileHandle['sync']): Promise<void> => {
  const probe = await fsp.open(process.execPath, 'r')
  const proto = Object.getPrototypeOf(probe) as { sync: FileHandle['sync'] }
  await probe.close()
  const real = proto.sync
  proto.sync = by(real)
  undo.push(() => {
    proto.sync = real
  })
}
const isDirectory = (h: FileHandle): boolean => fstatSync(h.fd).isDirectory()

const openStore = async (file: string, notices: Array<string>): Promise<GatewayStore> => {
  const store = await fileStore(file, { onNotice: (m) => void notices.push(m) })
  opened.push(store)
  return store
}

const OTHER: Rule = { tool: 'other', decision: 'allow' }
const key = (r: Rule): string => JSON.stringify([r.tool, r.decision, r.under ?? null])
const asSet = (rs: ReadonlyArray<Rule>): ReadonlySet<string> => new Set(rs.map(key))

const failure = (code: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: the test's failure`), { code })

const P = pinOf({ name: 'fs_write', description: 'Writes a file.' })
const P2 = pinOf({ name: 'fs_write', description: 'Writes a file. Also mails it.' })
const R = pinOf({ name: 'fs_read', description: 'Reads a file.' })
const S = pinOf({ name: 'fs_stat', description: 'Describes a file.' })

// the store's timers of its next try (1 s), held for the test to run by hand; every other timer is set as asked
const holdTries = (): Array<() => void> => {
  const tries: Array<() => void> = []
  const real = globalThis.setTimeout
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
    if (ms !== 1000) return real(f, ms)
    tries.push(f)
    // a timer that never runs in a test's time, for the store to unref and clear
    return real(() => undefined, 2 ** 31 - 1)
  }) as typeof setTimeout)
  undo.push(() => spy.mockRestore())
  return tries
}

describe('fileStore: a write that fails', () => {
  it('cannot be renamed into place: the file as it was, no temporary file; said once; written at the next try, and said once', async () => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const notices: Array<string> = []
    const store = await openStore(file, notices)
    store.addGrant(WRITE)
    await until(holds(file, 1))
    let failing = true
    let failed = 0
    wrapRename((real) => (from, to) => {
      if (!failing) return real(from, to)
      failed++
      return Promise.reject(failure('EXDEV'))
    })
    store.addGrant(MOVE)
    await until(() => notices.length === 1, undefined, 'the notice of a failed write')
    expect(notices[0]).toBe(
      `toolstack: the store ${JSON.stringify(file)}: it cannot be written (EXDEV: the test's failure); grants are kept in this process meanwhile and written when it can be`,
    )
    // its retry, a second later, may have failed too on a busy machine: still one notice
    expect(failed).toBeGreaterThanOrEqual(1)
    expect(notices).toHaveLength(1)
    await leaves(dir, ['grants.json'])
    expect(grantsIn(file)).toEqual([WRITE])
    expect(store.grants()).toEqual([WRITE, MOVE])
    // a grant added while it fails waits with the others, and no second notice is told
    store.addGrant({ tool: 'third', decision: 'allow' })
    await until(() => failed >= 2, undefined, 'the second failed write')
    // the file read again (another gateway wrote it) is not yet the store written again: nothing is told
    writeFileSync(file, encodeStoreFile([WRITE, OTHER]))
    await until(() => store.grants().length === 4, undefined, 'the grant read from the file')
    expect(notices).toHaveLength(1)
    failing = false
    await until(() => notices.length === 2, undefined, 'the notice that it is written again')
    expect(notices[1]).toBe(`toolstack: the store ${JSON.stringify(file)} is read and written again`)
    await until(holds(file, 4))
    expect(asSet(grantsIn(file))).toEqual(asSet([WRITE, OTHER, MOVE, { tool: 'third', decision: 'allow' }]))
    await leaves(dir, ['grants.json'])
    expect(notices).toHaveLength(2)
    // and a write that fails again is told again
    failing = true
    store.addGrant({ tool: 'fourth', decision: 'allow' })
    await until(() => notices.length === 3, undefined, 'the notice of the next failed write')
    expect(notices[2]).toContain(': it cannot be written (EXDEV')
  })

  it('cannot be flushed: the temporary file is closed and removed, the file as it was; written at the next try', async () => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const notices: Array<string> = []
    let failing = true
    await wrapSync(
      (real) =>
        function (this: FileHandle) {
          return failing && !isDirectory(this) ? Promise.reject(failure('EIO')) : real.call(this)
        },
    )
    const store = await openStore(file, notices)
    store.addGrant(WRITE)
    await until(() => notices.length === 1, undefined, 'the notice of a failed write')
    expect(notices[0]).toContain(': it cannot be written (EIO: the test')
    await leaves(dir, [])
    expect(openUnder(dir)).toEqual([])
    failing = false
    await until(() => notices.length === 2, undefined, 'the notice that it is written again')
    expect(grantsIn(file)).toEqual([WRITE])
    await leaves(dir, ['grants.json'])
  })

  it('flushes the temporary file before its rename and the directory after; a directory that cannot be flushed costs nothing', async () => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const notices: Array<string> = []
    const steps: Array<string> = []
    let directoryFails = false
    await wrapSync(
      (real) =>
        function (this: FileHandle) {
          const directory = isDirectory(this)
          steps.push(directory ? 'sync directory' : 'sync file')
          return directory && directoryFails ? Promise.reject(failure('EINVAL')) : real.call(this)
        },
    )
    wrapRename((real) => (from, to) => {
      steps.push('rename')
      return real(from, to)
    })
    const store = await openStore(file, notices)
    store.addGrant(WRITE)
    await until(holds(file, 1))
    await until(() => steps.length === 3, undefined, 'the directory flushed')
    expect(steps).toEqual(['sync file', 'rename', 'sync directory'])
    directoryFails = true
    store.addGrant(MOVE)
    await until(() => steps.length === 6, undefined, 'the second write')
    await store.close()
    expect(grantsIn(file)).toEqual([WRITE, MOVE])
    expect(notices).toEqual([])
    expect(openUnder(dir)).toEqual([])
  })
})

describe('fileStore: its next try', () => {
  it('is set only by a failed write, once however many fail before it runs; a store closed as it runs sets none after', async () => {
    const tries = holdTries()
    const file = join(tempDir(), 'grants.json')
    // only this store's writes fail (the test process may hold other stores, whose failures would set timers too)
    let failing = false
    let failed = 0
    wrapRename((real) => (from, to) => {
      if (!failing || to !== file) return real(from, to)
      failed++
      return Promise.reject(failure('EXDEV'))
    })
    const notices: Array<string> = []
    const store = await openStore(file, notices)
    // a write that succeeds: the pin is said once the write was made, and no next try is due
    expect(await store.pins.pin([P])).toEqual([true])
    expect(tries).toHaveLength(0)
    failing = true
    expect(await store.pins.pin([R])).toEqual([true])
    expect([failed, tries.length, notices.length]).toEqual([1, 1, 1])
    // a second failed write while the try is due sets no second timer; of a batch, only the pin first here is said
    expect(await store.pins.pin([R, S])).toEqual([false, true])
    expect([failed, tries.length, notices.length]).toEqual([2, 1, 1])
    failing = false
    ;(tries[0] as () => void)()
    await until(() => notices.length === 2, undefined, 'the notice that it is written again')
    expect(notices[1]).toBe(`toolstack: the store ${JSON.stringify(file)} is read and written again`)
    expect(tries).toHaveLength(1)
    expect(readFileSync(file, 'utf8')).toBe(encodeStoreFile([], [], store.pins.book()))
    expect([...store.pins.book().pins.keys()].sort()).toEqual(['fs_read', 'fs_stat', 'fs_write'])
    // failing again: one try due; it runs as the store closes, and neither it nor close's last try sets another
    failing = true
    store.addGrant(WRITE)
    await until(() => notices.length === 3, undefined, 'the notice of the next failed write')
    expect([failed, tries.length]).toEqual([3, 2])
    ;(tries[1] as () => void)()
    opened.splice(0)
    await store.close()
    expect([failed, tries.length]).toEqual([5, 2])
  })
})

describe('fileStore: what it holds', () => {
  it('keeps the process alive by nothing: its watcher, its wait for a change to settle and its timer of the next try are let go (unref)', async () => {
    const watchers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length
    const before = watchers()
    // every timer set meanwhile, with its delay (the store's: 50 ms after a change heard, 1 s before the next try)
    const timers: Array<readonly [number | undefined, NodeJS.Timeout]> = []
    const real = globalThis.setTimeout
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
      const t = real(f, ms)
      timers.push([ms, t])
      return t
    }) as typeof setTimeout)
    undo.push(() => spy.mockRestore())
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const notices: Array<string> = []
    const store = await openStore(file, notices)
    expect(watchers()).toBe(before)
    store.addGrant(WRITE)
    await until(holds(file, 1))
    // the store hears its own write
    await until(() => timers.some(([ms]) => ms === 50), undefined, 'the store to hear the file change')
    wrapRename(() => () => Promise.reject(failure('EXDEV')))
    store.addGrant(MOVE)
    await until(() => notices.length === 1, undefined, 'the notice of a failed write')
    const ours = timers.filter(([ms]) => ms === 50 || ms === 1000)
    expect(ours.filter(([ms]) => ms === 1000)).toHaveLength(1)
    expect(ours.map(([, t]) => t.hasRef())).toEqual(ours.map(() => false))
  })
})

describe('fileStore: closed while a write fails', () => {
  it('tries once more at close, then sets no timer for another try; what failed is written by that last try when it can be', async () => {
    const timers: Array<number | undefined> = []
    const real = globalThis.setTimeout
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
      timers.push(ms)
      return real(f, ms)
    }) as typeof setTimeout)
    undo.push(() => spy.mockRestore())
    let failing = true
    let failed = 0
    wrapRename((realRename) => (from, to) => {
      if (!failing) return realRename(from, to)
      failed++
      return Promise.reject(failure('EXDEV'))
    })
    const dir = tempDir()
    const one = join(dir, 'one.json')
    const notices: Array<string> = []
    const a = await fileStore(one, { onNotice: (m) => void notices.push(m) })
    a.addGrant(WRITE)
    await until(() => notices.length === 1, undefined, 'the notice of a failed write')
    const tries = failed
    const before = timers.length
    await a.close()
    expect(failed).toBe(tries + 1)
    expect(timers.slice(before).filter((ms) => ms === 1000)).toEqual([])
    expect(readdirSync(dir)).toEqual([])

    // a second store: its write fails, then the file can be written again, and close writes it
    const two = join(dir, 'two.json')
    const b = await fileStore(two, { onNotice: (m) => void notices.push(m) })
    b.addGrant(MOVE)
    await until(() => notices.length === 2, undefined, 'the notice of the second store')
    failing = false
    await b.close()
    expect(grantsIn(two)).toEqual([MOVE])
  })
})

describe('fileStore: its directory cannot be watched', () => {
  // node:fs's `watch`, replaced for this test
  const wrapWatch = (by: (real: typeof fs.watch) => typeof fs.watch): void => {
    const real = fs.watch
    fs.watch = by(real)
    syncBuiltinESMExports()
    undo.push(() => {
      fs.watch = real
      syncBuiltinESMExports()
    })
  }

  it('at start (no more watches to be had): said, and the store reads and writes the file as before', async () => {
    wrapWatch(() => () => {
      throw failure('ENOSPC')
    })
    const file = join(tempDir(), 'grants.json')
    writeFileSync(file, encodeStoreFile([WRITE]))
    const notices: Array<string> = []
    const store = await fileStore(file, { onNotice: (m) => void notices.push(m) })
    expect(notices).toEqual([
      `toolstack: the store ${JSON.stringify(file)}: its directory cannot be watched (ENOSPC: the test's failure), so grants written by another gateway reach this one at its next write; grants are kept in this process meanwhile and written when it can be`,
    ])
    expect(store.grants()).toEqual([WRITE])
    store.addGrant(MOVE)
    await store.close()
    expect(grantsIn(file)).toEqual([WRITE, MOVE])
  })

  it('with no watch, a write while the file cannot be read is said, naming why, and leaves the file as it is', async () => {
    wrapWatch(() => () => {
      throw failure('ENOSPC')
    })
    const file = join(tempDir(), 'grants.json')
    writeFileSync(file, encodeStoreFile([WRITE]))
    const notices: Array<string> = []
    const store = await openStore(file, notices)
    expect(notices).toHaveLength(1)
    // written: said, as the watch's notice was
    expect(await store.pins.pin([P])).toEqual([true])
    expect(notices[1]).toBe(`toolstack: the store ${JSON.stringify(file)} is read and written again`)
    writeFileSync(file, '{"version":1,"gr')
    expect(await store.pins.pin([R])).toEqual([true])
    expect(notices).toHaveLength(3)
    expect(notices[2]).toMatch(
      /^toolstack: the store ".*": it cannot be read \(it is not JSON \(.*\); a truncated or half-written file reads so\), so it is not written; grants are kept in this process meanwhile and written when it can be$/,
    )
    expect(readFileSync(file, 'utf8')).toBe('{"version":1,"gr')
    // mended: close's last try writes what waited
    writeFileSync(file, encodeStoreFile([WRITE]))
    opened.splice(0)
    await store.close()
    expect(readFileSync(file, 'utf8')).toBe(encodeStoreFile([WRITE], [], store.pins.book()))
  })

  it('hears only its own file: a neighbour named sets nothing; its own name, or no name (a platform may give none), reads the file again', async () => {
    // the store's listener, called by the test alone (the real watch made hears nothing)
    let heard: ((event: string, name: string | null) => void) | undefined
    wrapWatch(
      (real) =>
        ((dir: string, listener: (event: string, name: string | null) => void) => {
          heard = listener
          return real(dir, () => undefined)
        }) as unknown as typeof fs.watch,
    )
    // the timers of 50 ms set while the listener runs (synchronously: no other store's)
    const settles: Array<number> = []
    let hearing = false
    const real = globalThis.setTimeout
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
      if (hearing && ms === 50) settles.push(ms)
      return real(f, ms)
    }) as typeof setTimeout)
    undo.push(() => spy.mockRestore())
    const file = join(tempDir(), 'grants.json')
    const store = await openStore(file, [])
    const listener = heard as (event: string, name: string | null) => void
    const hear = (event: string, name: string | null): void => {
      hearing = true
      try {
        listener(event, name)
      } finally {
        hearing = false
      }
    }
    const told = (): Promise<void> => new Promise((done) => void store.onGrantsChanged(done))
    writeFileSync(file, encodeStoreFile([WRITE]))
    hear('change', 'neighbour.log')
    hear('rename', '.grants.json.4242.tmp')
    expect(settles).toHaveLength(0)
    const first = told()
    hear('change', 'grants.json')
    expect(settles).toHaveLength(1)
    await first
    expect(store.grants()).toEqual([WRITE])
    writeFileSync(file, encodeStoreFile([WRITE, MOVE]))
    const second = told()
    hear('rename', null)
    expect(settles).toHaveLength(2)
    await second
    expect(store.grants()).toEqual([WRITE, MOVE])
  })

  it('later (the watch fails): the watch is closed, and the store goes on', async () => {
    const watchers: Array<fs.FSWatcher> = []
    wrapWatch(
      (real) =>
        ((...args: Parameters<typeof fs.watch>) => {
          const w = real(...args)
          watchers.push(w)
          return w
        }) as typeof fs.watch,
    )
    const file = join(tempDir(), 'grants.json')
    const store = await fileStore(file)
    expect(watchers).toHaveLength(1)
    const w = watchers[0] as fs.FSWatcher
    let closed = false
    w.on('close', () => {
      closed = true
    })
    w.emit('error', failure('EIO'))
    await until(() => closed, undefined, 'the watch closed')
    store.addGrant(MOVE)
    await store.close()
    expect(grantsIn(file)).toEqual([MOVE])
  })
})

describe('fileStore: pins while the file cannot be written', () => {
  it('a pin or a change recorded first here is said by this process (it cannot learn whether the file had it)', async () => {
    const file = join(tempDir(), 'grants.json')
    const notices: Array<string> = []
    const store = await openStore(file, notices)
    expect(await store.pins.pin([P])).toEqual([true])
    wrapRename(() => () => Promise.reject(failure('EXDEV')))
    expect(await store.pins.change(P2)).toBe(true)
    expect(await store.pins.pin([R])).toEqual([true])
    expect(notices).toHaveLength(1)
  })
})
