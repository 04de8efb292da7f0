// The audit on its own thread, for real: the worker built into dist/ (npm test builds
// first), fed through the shared ring by the forwarding thread's end.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import type { Auditor } from '../../src/cli/auditor.js'
import { auditWorkerBeside, inlineAuditor, threadedAuditor } from '../../src/cli/auditor.js'
import type { Direction } from '../../src/cli/sidechannel.js'
import { root } from './support.js'

const worker = join(root, 'dist/esm/cli/auditworker.js')

const listReq = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })
const listRes = (id: number, keys: ReadonlyArray<string>): string =>
  JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [{ name: 'read', inputSchema: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])) } }] } })
const call = (id: number, args: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: args } })

interface Run {
  readonly auditor: Auditor
  readonly said: Array<string>
  readonly errors: Array<string>
  readonly holds: Array<boolean>
}

const started = (make: (io: Parameters<typeof threadedAuditor>[2]) => Auditor): Run => {
  const said: Array<string> = []
  const errors: Array<string> = []
  const holds: Array<boolean> = []
  const auditor = make({
    warn: (w: UnknownKeyWarning) => said.push(`${w.tool}#${w.id}:${w.unknownKeys.join(',')}`),
    err: (line) => errors.push(line),
    holdHost: (on) => holds.push(on),
  })
  return { auditor, said, errors, holds }
}

// What the proxy does: host lines always handed over; server lines only while wanted.
const play = async (run: Run, lines: ReadonlyArray<readonly [Direction, string]>): Promise<void> => {
  for (const [from, text] of lines) {
    if (from === 'host' || run.auditor.wantsServer()) run.auditor.feed(from, [Buffer.from(text + '\n')])
    // the forwarding thread's turns: room messages and warnings arrive between chunks
    await new Promise((r) => setImmediate(r))
  }
  run.auditor.end('host')
  run.auditor.end('server')
  await run.auditor.close(10_000)
}

describe('the audit on its own thread', () => {
  it('finds its module beside the command, .js built and .ts from sources', () => {
    expect(existsSync(worker)).toBe(true)
    expect(auditWorkerBeside(join(root, 'dist/esm/cli/main.js'))).toBe(worker)
    expect(auditWorkerBeside(join(root, 'src/cli/main.ts'))).toBe(join(root, 'src/cli/auditworker.ts'))
    expect(auditWorkerBeside(join(root, 'no/such/main.js'))).toBeUndefined()
    expect(auditWorkerBeside(undefined)).toBeUndefined()
  })

  it('warns as the inline audit does, reading the listing the server answered while it was awaited', async () => {
    const lines: ReadonlyArray<readonly [Direction, string]> = [
      ['host', call(0, { ffset: 1 })], // nothing listed yet: not audited
      ['host', listReq(1)],
      ['server', listRes(1, ['path', 'offset'])],
      ['host', call(2, { path: '/', ffset: 1 })],
      ['host', call(3, { path: '/', ffset: 2, lenght: 1 })],
      ['server', '{"jsonrpc":"2.0","id":3,"result":{}}'],
    ]
    const threaded = started((io) => threadedAuditor(worker, [], io))
    const inline = started((io) => inlineAuditor([], io))
    await play(threaded, lines)
    await play(inline, lines)
    expect(threaded.said).toEqual(['read#2:ffset', 'read#3:lenght'])
    expect(threaded.said).toEqual(inline.said)
    expect(threaded.errors).toEqual([])
  })

  it('holds the host while a tiny ring is full, lets go when there is room, and loses no call', async () => {
    const run = started((io) => threadedAuditor(worker, [], io, 64))
    const lines: Array<readonly [Direction, string]> = [
      ['host', listReq(1)],
      ['server', listRes(1, ['path'])],
    ]
    for (let i = 0; i < 200; i++) lines.push(['host', call(i + 10, { path: '/', [`k${i % 50}`]: i })])
    // a line longer than the whole ring still gets through, in pieces
    lines.push(['host', call(999, { path: 'x'.repeat(10_000), big: 1 })])
    // handed over at once, as a flood would be
    run.auditor.feed('host', [Buffer.from(lines[0]?.[1] + '\n')])
    await new Promise((r) => setTimeout(r, 200))
    expect(run.auditor.wantsServer()).toBe(true)
    run.auditor.feed('server', [Buffer.from(lines[1]?.[1] + '\n')])
    // the host's bytes as a recycling source gives them: cut anywhere, in one buffer
    // that is written over as soon as each feed returns
    const flood = Buffer.from(lines.slice(2).map(([, text]) => text + '\n').join(''))
    const reused = Buffer.alloc(37)
    for (let i = 0; i < flood.length; i += reused.length) {
      const n = flood.copy(reused, 0, i, i + reused.length)
      run.auditor.feed('host', [reused.subarray(0, n)])
      reused.fill(0x20)
    }
    await play(run, [])
    expect(run.holds[0]).toBe(true)
    expect(run.holds.at(-1)).toBe(false)
    expect(run.said).toEqual([...Array.from({ length: 50 }, (_, i) => `read#${i + 10}:k${i}`), 'read#999:big'])
  })

  it('wants the server’s lines as soon as a tools/list request was handed over, wherever chunks cut it', async () => {
    const run = started((io) => threadedAuditor(worker, [], io))
    const spellings = [listReq(7), listReq(7).replace('tools/list', 'tools\\/list'), listReq(7).replace('tools/list', '\\u0074ools/list')]
    let id = 100
    for (const spelled of spellings) {
      for (let cut = 1; cut < spelled.length; cut++) {
        const request = spelled.replace('"id":7', `"id":${++id}`)
        const at = cut + (request.length - spelled.length)
        // the last listing was read: nothing is awaited
        for (let i = 0; i < 400 && run.auditor.wantsServer(); i++) await new Promise((r) => setTimeout(r, 5))
        expect(run.auditor.wantsServer()).toBe(false)
        // an unfinished line before it, so the request starts mid-chunk
        run.auditor.feed('host', [Buffer.from(`{"jsonrpc":"2.0","method":"ping","id":"a"}\n${request.slice(0, at)}`)])
        // the audit reads each piece before the next comes; a middle piece has no newline
        const mid = at + Math.floor((request.length - at) / 2)
        for (const piece of [request.slice(at, mid), `${request.slice(mid)}\n`]) {
          await new Promise((r) => setTimeout(r, 4))
          if (piece !== '') run.auditor.feed('host', [Buffer.from(piece)])
        }
        expect(run.auditor.wantsServer(), `${request} cut at ${at}`).toBe(true)
        run.auditor.feed('server', [Buffer.from(listRes(id, ['path']) + '\n')])
      }
    }
    await play(run, [['host', call(1, { path: '/', pth: 1 })]])
    expect(run.said).toEqual(['read#1:pth'])
  })

  it('warns exactly as the inline audit does over a long random session, through a ring that cuts lines into pieces', async () => {
    const session = fc.sample(
      fc.array(
        fc.oneof(
          fc.tuple(fc.constant<Direction>('host'), fc.tuple(fc.nat(5), fc.dictionary(fc.constantFrom('path', 'offset', 'ffset', 'x', 'reason'), fc.jsonValue({ maxDepth: 1 }))).map(([i, a]) => call(i, a))),
          fc.tuple(fc.constant<Direction>('host'), fc.nat(3).map(listReq)),
          fc.tuple(fc.constant<Direction>('server'), fc.tuple(fc.nat(3), fc.subarray(['path', 'offset', 'x'])).map(([i, ks]) => listRes(i, ks))),
        ),
        { minLength: 300, maxLength: 300 },
      ),
      { numRuns: 1 },
    )[0] as ReadonlyArray<readonly [Direction, string]>
    const threaded = started((io) => threadedAuditor(worker, [], io, 256))
    const inline = started((io) => inlineAuditor([], io))
    await play(threaded, session)
    await play(inline, session)
    expect(inline.said.length).toBeGreaterThan(0)
    expect(threaded.said).toEqual(inline.said)
  })

  it('audits on the forwarding thread when the module is not there', async () => {
    const run = started((io) => threadedAuditor(join(root, 'no-such-worker.js'), [], io))
    await play(run, [
      ['host', listReq(1)],
      ['server', listRes(1, ['path'])],
      ['host', call(2, { pth: '/' })],
    ])
    expect(run.said).toEqual(['read#2:pth'])
  })

  it('says once that the audit stopped when its thread fails, and forwarding is never held', async () => {
    const broken = join(root, 'test/support/throwing-worker.mjs')
    const run = started((io) => threadedAuditor(broken, [], io))
    run.auditor.feed('host', [Buffer.from(listReq(1) + '\n')])
    for (let i = 0; i < 50 && run.errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20))
    run.auditor.feed('host', [Buffer.from(call(2, { pth: '/' }) + '\n')])
    await run.auditor.close(1000)
    expect(run.errors).toHaveLength(1)
    expect(run.errors[0]).toMatch(/^the audit stopped \(.*broken on purpose.*\); forwarding goes on, unaudited$/)
    expect(run.holds.filter((h) => h)).toEqual([])
    expect(run.auditor.wantsServer()).toBe(false)
  })
})
