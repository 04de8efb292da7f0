// The pins every store keeps beside its grants: the first to record a pin or a change is the one to say it, an
// acceptance reaches the others, a grant keeps the definition it was given under, and a store opened again (a
// restart) reads what was kept. Run against each store on its real backend: memory, a file, a redis-server.
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { GatewayStore } from '../../src/gateway/index.js'
import { fileStore, memoryStore } from '../../src/gateway/index.js'
import { redisStore } from '../../src/gateway/stores/redisStore.js'
import type { RedisServer } from '../support/redis.js'
import { startRedis } from '../support/redis.js'
import { cleanUpAfterEach, tempDir } from '../mcp/fixtures.js'
import { until } from '../support/until.js'
import { pinOf } from '../support/pins.js'

cleanUpAfterEach()

const WRITE = pinOf({ name: 'fs_write', description: 'Writes a file.', inputSchema: { type: 'object' } })
const WRITE_2 = pinOf({ name: 'fs_write', description: 'Writes a file. Also mails it.' })
const READ = pinOf({ name: 'fs_read', description: 'Reads a file.' })

const opened: Array<GatewayStore> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()))
})

// two processes on one backend, and a third opened later (a restart)
type Open = () => Promise<GatewayStore>

const shared = (name: string, backend: () => Open): void => {
  describe(`${name}: pins shared by the processes on one store`, () => {
    it('the first to pin a tool says it; the other holds its pin; a restart reads it', async () => {
      const open = backend()
      const a = await open()
      const b = await open()
      expect(await a.pins.pin([WRITE, READ])).toEqual([true, true])
      expect(await a.pins.pin([WRITE])).toEqual([false])
      // B, listing the tool with another definition, pinned nothing: A's pin is the tool's
      expect(await b.pins.pin([WRITE_2])).toEqual([false])
      await until(() => b.pins.book().pins.get('fs_write')?.hash === WRITE.hash)
      const c = await open()
      await until(() => c.pins.book().pins.size === 2)
      expect(c.pins.book().pins.get('fs_write')).toEqual(WRITE)
      expect(await c.pins.pin([READ])).toEqual([false])
    })

    it('a change is said by the first to record it; accepted on one, it is the pin on every one', async () => {
      const open = backend()
      const a = await open()
      const b = await open()
      await a.pins.pin([WRITE])
      await until(() => b.pins.book().pins.has('fs_write'))
      expect(await a.pins.change(WRITE_2)).toBe(true)
      expect(await a.pins.change(WRITE_2)).toBe(false)
      expect(await b.pins.change(WRITE_2)).toBe(false)
      let told = 0
      a.pins.onPinsChanged(() => told++)
      await until(() => (b.pins.book().changes.get('fs_write') ?? []).length === 1)
      expect((await b.pins.accept('fs_write', WRITE_2.hash))._tag).toBe('Right')
      expect(b.pins.book().pins.get('fs_write')?.hash).toBe(WRITE_2.hash)
      await until(() => a.pins.book().pins.get('fs_write')?.hash === WRITE_2.hash)
      expect(a.pins.book().changes.has('fs_write')).toBe(false)
      expect(told).toBeGreaterThan(0)
      // accepting what is not waiting says why
      const no = await a.pins.accept('fs_write', WRITE.hash)
      expect(no).toEqual({ _tag: 'Left', left: expect.stringContaining('no changed definition of "fs_write"') })
      const c = await open()
      await until(() => c.pins.book().pins.get('fs_write')?.hash === WRITE_2.hash)
    })

    it('a grant keeps the definition it was given under', async () => {
      const open = backend()
      const a = await open()
      a.addGrant({ tool: 'fs_write', decision: 'allow', under: '/srv', definition: WRITE.hash })
      const c = await open()
      await until(() => c.grants().length === 1)
      expect(c.grants()).toEqual([{ tool: 'fs_write', decision: 'allow', under: '/srv', definition: WRITE.hash }])
    })
  })
}

describe('memoryStore: pins in this process', () => {
  it('pins once, records a change once, and accepts it', async () => {
    const s = memoryStore()
    expect(await s.pins.pin([WRITE])).toEqual([true])
    expect(await s.pins.change(WRITE_2)).toBe(true)
    expect(await s.pins.change(WRITE_2)).toBe(false)
    expect((await s.pins.accept('fs_write', WRITE_2.hash))._tag).toBe('Right')
    expect(s.pins.book().pins.get('fs_write')).toBe(WRITE_2)
  })
})

shared('fileStore', () => {
  const file = join(tempDir(), 'store.json')
  return async () => {
    const s = await fileStore(file)
    opened.push(s)
    return s
  }
})

let redis: RedisServer
let run = 0
beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis.stop()
})
shared('redisStore', () => {
  run++
  const prefix = `pins${run}:`
  return async () => {
    const s = await redisStore(`${redis.url}?prefix=${prefix}`, {})
    opened.push(s)
    return s
  }
})
