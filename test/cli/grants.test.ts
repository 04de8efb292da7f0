// `toolstack grants list|revoke`, run as a user runs it, over a file: store and a real redis-server, while a store
// opened here stands for a running gateway on the same backend: it stops holding the grant taken back.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { GatewayStore } from '../../src/gateway/index.js'
import { openStore } from '../../src/gateway/index.js'
import { startRedis } from '../support/redis.js'
import { blocksOf } from '../support/blocks.js'
import { eventually, killAll, runCli, tempDir } from './support.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  await killAll()
  for (const c of cleanups.splice(0).reverse()) await c()
})

interface Grant {
  readonly tool: string
  readonly decision: 'allow' | 'deny' | 'ask'
  readonly under?: string
  readonly note?: string
}

// a grant's id, written here from its definition: the first 16 hex digits of the SHA-256 of the grant as JSON, its
// members in the order tool, decision, under, note
const idOf = (g: Grant): string =>
  createHash('sha256')
    .update(
      JSON.stringify({
        tool: g.tool,
        decision: g.decision,
        ...(g.under === undefined ? {} : { under: g.under }),
        ...(g.note === undefined ? {} : { note: g.note }),
      }),
    )
    .digest('hex')
    .slice(0, 16)

const write: Grant = { tool: 'fs_write_file', decision: 'allow', under: '/srv/project' }
const mkdir: Grant = { tool: 'fs_create_directory', decision: 'allow' }
const hostile: Grant = { tool: 'x\u001b]0;owned\u0007\u202e' + 'y'.repeat(3000), decision: 'allow' }

const opened = async (url: string): Promise<GatewayStore> => {
  const store = await openStore(url)
  cleanups.push(() => store.close())
  return store
}

// list, revoke one, list again; the store opened here (a gateway) drops it
const listRevokeList = async (url: string, gateway: GatewayStore): Promise<void> => {
  const listed = await runCli(['grants', 'list', '--store', url])
  const out = listed.stdout.toString()
  expect(listed.status, listed.stderr).toBe(0)
  expect(out).toContain(`${idOf(write)}  allow fs_write_file under /srv/project\n`)
  expect(out).toContain(`${idOf(mkdir)}  allow fs_create_directory\n`)
  expect(out).toMatch(/^3 grants in .*; toolstack grants revoke ID takes one back$/m)
  // a hostile tool name is escaped and cut
  expect(out).toContain(`${idOf(hostile)}  allow x\\u001b]0;owned\\u0007\\u202e`)
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
  expect(Math.max(...out.split('\n').map((l) => l.length))).toBeLessThan(300)

  const json = await runCli(['grants', 'list', '--json', '--store', url])
  const records = json.stdout
    .toString()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
  expect(records).toContainEqual({ id: idOf(write), ...write })

  const revoked = await runCli(['grants', 'revoke', idOf(write), '--store', url])
  expect(revoked.status, revoked.stderr).toBe(0)
  expect(revoked.stdout.toString()).toMatch(/^took back [0-9a-f]{16} {2}allow fs_write_file under \/srv\/project from /)
  // the running gateway's store no longer holds it
  await eventually(() => !gateway.grants().some((g) => g.tool === write.tool), 10_000, 'the grant to leave the gateway')
  expect(gateway.grants().map((g) => g.tool)).toContain(mkdir.tool)

  const after = await runCli(['grants', 'list', '--store', url])
  expect(after.stdout.toString()).not.toContain(idOf(write))
  expect(after.stdout.toString()).toContain(idOf(mkdir))

  const unknown = await runCli(['grants', 'revoke', idOf(write), '--store', url])
  expect(unknown.status).toBe(1)
  expect(unknown.stderr).toContain(`has the id "${idOf(write)}"; toolstack grants list --store URL shows them`)
}

describe('toolstack grants', () => {
  it('over a file: store: lists, takes one back (the file and a gateway on it drop it), says an unknown id', async () => {
    const { dir, remove } = tempDir()
    cleanups.push(remove)
    const url = `file:${join(dir, 'grants.json')}`
    const gateway = await opened(url)
    for (const g of [write, mkdir, hostile]) gateway.addGrant(g)
    const path = join(dir, 'grants.json')
    await eventually(
      () => existsSync(path) && readFileSync(path, 'utf8').includes('fs_create_directory'),
      10_000,
      'the file',
    )
    await listRevokeList(url, gateway)
    const file = JSON.parse(readFileSync(join(dir, 'grants.json'), 'utf8')) as {
      grants: Array<Grant>
      revoked: Array<Grant>
    }
    expect(file.grants.map((g) => g.tool)).not.toContain(write.tool)
    expect(file.revoked).toEqual([write])
  }, 90_000)

  it('over a real Redis: lists, takes one back (a gateway on it is told), says an unknown id', async () => {
    const redis = await startRedis()
    cleanups.push(() => redis.stop())
    const url = `${redis.url}/0?prefix=t:`
    const gateway = await opened(url)
    for (const g of [write, mkdir, hostile]) gateway.addGrant(g)
    const other = await opened(url)
    await eventually(() => other.grants().length === 3, 10_000, 'the grants in Redis')
    await listRevokeList(url, gateway)
    // a store opened now reads what Redis holds
    const fresh = await opened(url)
    expect(
      fresh
        .grants()
        .map((g) => g.tool)
        .sort(),
    ).toEqual([mkdir.tool, hostile.tool].sort())

    // the lines docs/fleet.md shows, their Redis this test's and their id a grant's
    const documented = (blocksOf('docs/fleet.md', 'sh').find((b) => /^toolstack grants /m.test(b)) ?? '')
      .split('\n')
      .filter((l) => l.startsWith('toolstack grants '))
      .map((l) => [...l.slice('toolstack '.length).matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? ''))
    expect(documented.map((args) => args.slice(0, 2))).toEqual([
      ['grants', 'list'],
      ['grants', 'revoke'],
    ])
    const withOurs = (args: ReadonlyArray<string>): Array<string> =>
      args.map((a, i) => {
        if (args[i - 1] === '--store') return `${redis.url}${new URL(a).pathname}${new URL(a).search}`
        return args[1] === 'revoke' && i === 2 ? idOf(mkdir) : a
      })
    const [list = [], revoke = []] = documented
    const docs = await opened(withOurs(list)[withOurs(list).indexOf('--store') + 1] ?? '')
    docs.addGrant(mkdir)
    await new Promise((r) => setTimeout(r, 300))
    const shown = await runCli(withOurs(list))
    expect(shown.status, shown.stderr).toBe(0)
    expect(shown.stdout.toString()).toContain(idOf(mkdir))
    const taken = await runCli(withOurs(revoke))
    expect(taken.status, taken.stderr).toBe(0)
    expect(taken.stdout.toString()).toContain(`took back ${idOf(mkdir)}`)
  }, 120_000)

  it('a store that cannot be reached or read is an error, not an empty list; the password is never shown', async () => {
    const down = await runCli(['grants', 'list', '--store', 'redis://me:s3cret@127.0.0.1:1/0'])
    expect(down.status).toBe(2)
    expect(down.stderr).toMatch(
      /^toolstack grants: the store redis:\/\/127\.0\.0\.1:1\/0 cannot be reached .*; nothing was read or changed$/m,
    )
    expect(down.stdout.toString() + down.stderr).not.toContain('s3cret')
    const { dir, remove } = tempDir()
    cleanups.push(remove)
    writeFileSync(join(dir, 'grants.json'), '{"version":1,"grants":[{"tool":1}]}')
    const corrupt = await runCli(['grants', 'revoke', 'abc', '--store', `file:${join(dir, 'grants.json')}`])
    expect(corrupt.status).toBe(2)
    expect(corrupt.stderr).toMatch(/cannot be read: .*It is left as it is/)
    // a mistyped path is said, not listed as an empty store, and creates nothing
    const typo = join(dir, 'grnats.json')
    const mistyped = await runCli(['grants', 'list', '--store', `file:${typo}`])
    expect(mistyped.status).toBe(2)
    expect(mistyped.stderr).toContain(`toolstack grants: no store at ${typo}: a gateway writes it at its first listing`)
    expect(mistyped.stdout.toString()).toBe('')
    expect([existsSync(typo), existsSync(`${typo}.lock`)]).toEqual([false, false])
    const wrong = await runCli(['grants', 'list', '--store', 'postgres://x'])
    expect(wrong.status).toBe(2)
    const missing = await runCli(['grants', 'list'])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain("required option '--store <url>' not specified")
  }, 120_000)
})
