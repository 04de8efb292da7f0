// The file store does only what a change needs, on a real directory: what changes nothing writes nothing (with
// another process holding the lock, a write would wait two seconds and say so), listeners are told once per change
// from elsewhere and not after they unsubscribe, and a file that swapped one grant for another is read as it is.
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import fsp from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Rule } from '../../src/index.js'
import type { GatewayStore } from '../../src/gateway/index.js'
import { decodeStoreFile, encodeStoreFile, fileStore } from '../../src/gateway/index.js'
import type { Pin } from '../../src/extend.js'
import { cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'
import { until } from '../support/until.js'
import { pinOf } from '../support/pins.js'

cleanUpAfterEach()

const WRITE: Rule = { tool: 'fs_write_file', decision: 'allow', under: '/srv/p' }
const MOVE: Rule = { tool: 'fs_move_file', decision: 'deny' }

const P = pinOf({ name: 'fs_write', description: 'Writes a file.' })
const P2 = pinOf({ name: 'fs_write', description: 'Writes a file. Also mails it.' })
const R = pinOf({ name: 'fs_read', description: 'Reads a file.' })

const grantsIn = (file: string): ReadonlyArray<Rule> => {
  const d = decodeStoreFile(readFileSync(file, 'utf8'))
  if (d._tag === 'Left') throw new Error(d.left)
  return d.right.grants
}

const undo: Array<() => void> = []
const opened: Array<GatewayStore> = []
afterEach(async () => {
  for (const u of undo.splice(0).reverse()) u()
  await Promise.all(opened.splice(0).map((s) => s.close()))
})
const open = async (file: string, notices?: Array<string>): Promise<GatewayStore> => {
  const s = await fileStore(file, notices === undefined ? {} : { onNotice: (m) => void notices.push(m) })
  opened.push(s)
  return s
}

// every rename into `file`, counted (the real rename made)
const countRenames = (file: string): { readonly n: number } => {
  const count = { n: 0 }
  const real = fsp.rename
  fsp.rename = (from, to) => {
    if (to === file) count.n++
    return real(from, to)
  }
  syncBuiltinESMExports()
  undo.push(() => {
    fsp.rename = real
    syncBuiltinESMExports()
  })
  return count
}

describe('fileStore: what changes nothing writes nothing', () => {
  it('with another process holding the lock: a grant held, a grant not held taken back, a pin or a change known, the pin accepted again all answer at once; close tells nothing', async () => {
    const file = join(tempDir(), 'grants.json')
    const first = await fileStore(file)
    first.addGrant(WRITE)
    expect(await first.pins.pin([P])).toEqual([true])
    expect(await first.pins.change(P2)).toBe(true)
    await first.close()
    // opened again: all it holds is what the file holds
    const notices: Array<string> = []
    const store = await open(file, notices)
    expect(store.pins.book().changes.get('fs_write')).toEqual([P2])
    // another process holds the lock from now on: any write would wait for it two seconds, then say so
    writeFileSync(`${file}.lock`, '4242\n')
    store.addGrant({ ...WRITE })
    store.revokeGrant(MOVE)
    expect(await store.pins.pin([P])).toEqual([false])
    expect(notices).toEqual([])
    expect(await store.pins.change(P2)).toBe(false)
    expect(notices).toEqual([])
    expect(await store.pins.accept('fs_write', P.hash)).toEqual({ _tag: 'Right', right: P })
    expect(notices).toEqual([])
    opened.splice(0)
    await store.close()
    expect(notices).toEqual([])
  })

  it('a file unreadable for a while, then mended holding all the store holds: said each way, never written', async () => {
    const file = join(tempDir(), 'grants.json')
    writeFileSync(file, encodeStoreFile([WRITE]))
    const renames = countRenames(file)
    const notices: Array<string> = []
    const store = await open(file, notices)
    writeFileSync(file, '{"version":1,"gr')
    await until(() => notices.length === 1, undefined, 'the notice of a file that cannot be read')
    expect(notices[0]).toContain(`the store ${JSON.stringify(file)}: it cannot be read (it is not JSON (`)
    writeFileSync(file, encodeStoreFile([WRITE]))
    await until(() => notices.length === 2, undefined, 'the notice that it is read again')
    expect(notices[1]).toBe(`toolstack: the store ${JSON.stringify(file)} is read and written again`)
    expect(store.grants()).toEqual([WRITE])
    opened.splice(0)
    await store.close()
    expect(renames.n).toBe(0)
    expect(notices).toHaveLength(2)
  })

  it('two stores granting the same: the file is written once', async () => {
    const file = join(tempDir(), 'grants.json')
    const renames = countRenames(file)
    const a = await open(file)
    const b = await open(file)
    a.addGrant(WRITE)
    b.addGrant({ ...WRITE })
    await Promise.all([a.close(), b.close()])
    expect(grantsIn(file)).toEqual([WRITE])
    expect(renames.n).toBe(1)
  })
})

describe('fileStore: a lock held past its wait', () => {
  it('a write gives up after its wait (two seconds): said, naming the lock; written at the next try once the lock is gone', async () => {
    const file = join(tempDir(), 'grants.json')
    const notices: Array<string> = []
    const store = await open(file, notices)
    writeFileSync(`${file}.lock`, '4242\n')
    // resolved once the write gave up
    expect(await store.pins.pin([P])).toEqual([true])
    expect(notices).toEqual([
      `toolstack: the store ${JSON.stringify(file)}: its lock ${JSON.stringify(`${file}.lock`)} is held by another process; grants are kept in this process meanwhile and written when it can be`,
    ])
    expect(existsSync(file)).toBe(false)
    unlinkSync(`${file}.lock`)
    await until(() => notices.length === 2, undefined, 'the notice that it is written again')
    expect(notices[1]).toBe(`toolstack: the store ${JSON.stringify(file)} is read and written again`)
    expect(readFileSync(file, 'utf8')).toBe(encodeStoreFile([], [], store.pins.book()))
  })
})

describe('fileStore: who is told', () => {
  it('once per change from elsewhere: not for its own writes, nor after unsubscribing', async () => {
    const file = join(tempDir(), 'grants.json')
    const a = await open(file)
    const b = await open(file)
    let grantsHeard = 0
    let pinsHeard = 0
    a.onGrantsChanged(() => void grantsHeard++)
    a.pins.onPinsChanged(() => void pinsHeard++)
    let unsubscribedHeard = 0
    a.onGrantsChanged(() => void unsubscribedHeard++)()
    a.pins.onPinsChanged(() => void unsubscribedHeard++)()
    // A's own write, which A reads again when its watch hears it
    a.addGrant(WRITE)
    await until(() => b.grants().length === 1, undefined, 'B to learn the grant')
    // B's: one grant, one pin
    b.addGrant(MOVE)
    expect(await b.pins.pin([R])).toEqual([true])
    await until(() => a.grants().length === 2 && a.pins.book().pins.has('fs_read'), undefined, "A to learn B's writes")
    expect(grantsHeard).toBe(1)
    expect(pinsHeard).toBe(1)
    expect(unsubscribedHeard).toBe(0)
  })

  it('a file that swapped one grant for another (one taken back, one added elsewhere) is read as it is', async () => {
    const file = join(tempDir(), 'grants.json')
    writeFileSync(file, encodeStoreFile([WRITE]))
    const a = await open(file)
    const b = await open(file)
    let heard = 0
    a.onGrantsChanged(() => void heard++)
    b.revokeGrant(WRITE)
    b.addGrant(MOVE)
    await until(() => a.grants()[0]?.tool === MOVE.tool, undefined, 'A to hold what the file holds')
    expect(a.grants()).toEqual([MOVE])
    expect(heard).toBeGreaterThan(0)
  })

  it('a grant held only because the file held it, lost by another writer’s rename, is written back', async () => {
    const file = join(tempDir(), 'grants.json')
    writeFileSync(file, encodeStoreFile([WRITE]))
    const a = await open(file)
    // another writer's rename replaced the file with what it had read before WRITE was in it
    const other = `${file}.other`
    writeFileSync(other, encodeStoreFile([MOVE]))
    await fsp.rename(other, file)
    await until(() => {
      try {
        return grantsIn(file).length === 2
      } catch {
        return false
      }
    })
    expect(new Set(grantsIn(file).map((g) => g.tool))).toEqual(new Set([WRITE.tool, MOVE.tool]))
    expect(a.grants()).toHaveLength(2)
  })

  it('a pin held only because the file held it, lost by another writer’s rename, is written back', async () => {
    const file = join(tempDir(), 'grants.json')
    writeFileSync(file, JSON.stringify({ version: 1, grants: [WRITE], pins: [P] }))
    const a = await open(file)
    expect(a.pins.book().pins.get('fs_write')).toEqual(P)
    // another writer's rename replaced the file with what it had read before P was in it
    const other = `${file}.other`
    writeFileSync(other, encodeStoreFile([WRITE]))
    await fsp.rename(other, file)
    const pinsIn = (): ReadonlyArray<Pin> | undefined => {
      try {
        const d = decodeStoreFile(readFileSync(file, 'utf8'))
        return d._tag === 'Right' ? d.right.pins : undefined
      } catch {
        return undefined
      }
    }
    await until(() => pinsIn() !== undefined, undefined, 'the pin written back')
    expect(pinsIn()).toEqual([P])
    expect(grantsIn(file)).toEqual([WRITE])
  })
})

describe('fileStore: what it refuses', () => {
  it('a path that is a directory cannot be read: refused at start, naming why', async () => {
    const dir = tempDir()
    await expect(fileStore(dir)).rejects.toThrow(
      `the store ${JSON.stringify(dir)} cannot be read: EISDIR: illegal operation on a directory, read`,
    )
  })
})

describe('fileStore: its watch', () => {
  it('a neighbour file written again and again does not hold back a change of the store’s own file', async () => {
    const dir = tempDir()
    const file = join(dir, 'grants.json')
    const a = await open(file)
    const b = await open(file)
    // a file beside it, written every few milliseconds until the test ends
    let writing = true
    const neighbour = join(dir, 'neighbour.log')
    void (async () => {
      for (let i = 0; writing; i++) {
        writeFileSync(neighbour, String(i))
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
    undo.push(() => {
      writing = false
    })
    a.addGrant(WRITE)
    await until(() => b.grants().length === 1, undefined, 'B to learn the grant')
    expect(b.grants()).toEqual([WRITE])
  })
})
