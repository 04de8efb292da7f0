// serveStdio as a host meets it: the built `toolstack serve` over stdio, a real process with a real upstream, fed
// raw lines a well-behaved SDK client would never write. A line over 10 MiB, a line that is not JSON, JSON that is
// not a JSON-RPC 2.0 message: each is answered with a JSON-RPC error (under its id when it can be read), said once
// on stderr (escaped, bounded) and in the log, and the next request is served by the same, living process.
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { isAlive } from '../support/processes.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const WHOAMI = fileURLToPath(new URL('./fixtures/whoami-server.mjs', import.meta.url))
const MiB = 1024 * 1024

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

interface Answer {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string }
}

const exited = (child: ChildProcessWithoutNullStreams): boolean => child.exitCode !== null || child.signalCode !== null

/** The gateway over stdio, with one upstream; every line it writes on stdout kept, parsed, in order. */
const gateway = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-serve-stdio-'))
  const log = join(dir, 'toolstack.jsonl')
  const config = join(dir, 'toolstack.json')
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { w: { command: process.execPath, args: [WHOAMI] } }, log, listWaitMs: 30_000 }),
  )
  const child = spawn(process.execPath, [main, 'serve', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] })
  const answers: Array<Answer> = []
  let stderr = ''
  let rest = ''
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n')
    rest = parts.pop() ?? ''
    for (const p of parts) answers.push(JSON.parse(p) as Answer)
  })
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')))
  // EPIPE once the gateway is gone (the old code's exit): what the test then waits for says so
  child.stdin.on('error', () => undefined)
  cleanups.push(async () => {
    child.stdin.end()
    const gone = new Promise<void>((resolve) => (exited(child) ? resolve() : child.once('exit', () => resolve())))
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await gone
    clearTimeout(timer)
    expect(isAlive(child.pid as number)).toBe(false)
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
  })

  const write = (...lines: ReadonlyArray<string | object>): void =>
    void child.stdin.write(lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join(''))
  /** Resolves with the answer under `id` once it comes; rejects at once if the gateway exits first. */
  const answerTo = async (id: string | number, ms = 20_000): Promise<Answer> => {
    const end = Date.now() + ms
    for (;;) {
      const found = answers.find((a) => a.id === id)
      if (found !== undefined) return found
      if (exited(child))
        throw new Error(`the gateway exited (${child.exitCode ?? child.signalCode}) before answering ${id}`)
      if (Date.now() > end) throw new Error(`no answer to ${id} within ${ms} ms`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  write({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-host', version: '1' } },
  })
  expect((await answerTo('init')).result).toMatchObject({ serverInfo: { name: 'toolstack' } })
  write({ jsonrpc: '2.0', method: 'notifications/initialized' })
  const diagnostics = (): ReadonlyArray<string> => stderr.split('\n').filter((l) => l.includes(' answered -32'))
  const logged = (): ReadonlyArray<Record<string, unknown>> =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r['type'] === 'diagnostic' && String(r['message']).includes(' answered -32'))
  return { child, answers, write, answerTo, diagnostics, logged, stderr: () => stderr }
}

const ping = (id: string | number) => ({ jsonrpc: '2.0', id, method: 'ping' })

const refusalOf = (code: number) => ({ jsonrpc: '2.0', error: { code, message: expect.any(String) as string } })

// a tools/call whose arguments hold `bytes` bytes of text: the id placed first (after jsonrpc), last (as the SDK's
// client writes a request), or in the middle, where it cannot be read without the rest
const bigCall = (id: string | number, bytes: number, at: 'first' | 'last' | 'middle'): string => {
  const params = { name: 'w_whoami', arguments: { text: 'z'.repeat(bytes) } }
  const message =
    at === 'first'
      ? { jsonrpc: '2.0', id, method: 'tools/call', params }
      : at === 'last'
        ? { method: 'tools/call', params, jsonrpc: '2.0', id }
        : { method: 'tools/call', id, params, jsonrpc: '2.0' }
  return JSON.stringify(message)
}

describe('toolstack serve over stdio: a line over 10 MiB', () => {
  it('is skipped to its line break and answered -32600 under its id when it can be read; the next request is answered; the process lives', async () => {
    const g = await gateway()
    g.write(bigCall(2, 11 * MiB, 'first'))
    expect(await g.answerTo(2)).toStrictEqual({ ...refusalOf(-32600), id: 2 })
    g.write(ping(3))
    expect((await g.answerTo(3)).result).toStrictEqual({})
    // the SDK client's order (id last); then one whose id is in the middle: answered under null
    g.write(bigCall('big-4', 11 * MiB, 'last'))
    expect(await g.answerTo('big-4')).toStrictEqual({ ...refusalOf(-32600), id: 'big-4' })
    const before = g.answers.length
    g.write(bigCall(5, 11 * MiB, 'middle'), ping(6))
    await g.answerTo(6)
    expect(g.answers.slice(before)).toStrictEqual([
      { ...refusalOf(-32600), id: null },
      { jsonrpc: '2.0', id: 6, result: {} },
    ])
    // one write that holds a request, a line over the bound and a request: both requests answered
    g.write(ping(7), bigCall(8, 10 * MiB + 1, 'first'), ping(9))
    expect((await g.answerTo(9)).result).toStrictEqual({})
    expect((await g.answerTo(7)).result).toStrictEqual({})
    expect((await g.answerTo(8)).error?.code).toBe(-32600)
    // a line of exactly 10 MiB is still read and served: the server's own answer (no such method), not a -32600
    const padded = (pad: number) =>
      JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'no/such', params: { pad: 'z'.repeat(pad) } })
    const exact = padded(10 * MiB - Buffer.byteLength(padded(0)))
    expect(Buffer.byteLength(exact)).toBe(10 * MiB)
    g.write(exact)
    expect((await g.answerTo(10)).error?.code).toBe(-32601)
    expect(exited(g.child)).toBe(false)
    g.write({ jsonrpc: '2.0', id: 11, method: 'tools/list' })
    expect((await g.answerTo(11)).result).toMatchObject({ tools: [expect.objectContaining({ name: 'w_whoami' })] })
    // each line over the bound said once, in a bounded line; none of its 10 MiB reaches stderr or the log
    expect(g.diagnostics()).toHaveLength(4)
    for (const line of g.diagnostics()) {
      expect(line).toMatch(/^toolstack serve: a line of \d+ bytes, over the 10485760 a message may take, was skipped/)
      expect(line.length).toBeLessThan(1200)
    }
    expect(g.stderr().length).toBeLessThan(20_000)
    expect(g.logged()).toHaveLength(4)
  })
})

describe('toolstack serve over stdio: lines that are not JSON-RPC 2.0', () => {
  // each line, and what it is answered (`result`: served, as the SDK's HTTP transport serves a batch's members)
  const cases: ReadonlyArray<readonly [string, string | object, ReadonlyArray<Answer>]> = [
    ['not JSON', '{not json', [{ ...refusalOf(-32700), id: null }]],
    ['a fractional id', { jsonrpc: '2.0', id: 2.5, method: 'tools/list' }, [{ ...refusalOf(-32600), id: null }]],
    ['a null id', { jsonrpc: '2.0', id: null, method: 'tools/list' }, [{ ...refusalOf(-32600), id: null }]],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'tools/list' }, [{ ...refusalOf(-32600), id: null }]],
    ['JSON-RPC 1.0', { jsonrpc: '1.0', id: 3, method: 'tools/list' }, [{ ...refusalOf(-32600), id: 3 }]],
    [
      'a batch of one request',
      [{ jsonrpc: '2.0', id: 4, method: 'tools/list' }],
      [{ jsonrpc: '2.0', id: 4, result: expect.objectContaining({ tools: expect.any(Array) }) as unknown }],
    ],
    [
      'a batch with one member that is not JSON-RPC 2.0',
      [ping(41), { id: 42, method: 'ping' }],
      [
        { ...refusalOf(-32600), id: 42 },
        { jsonrpc: '2.0', id: 41, result: {} },
      ],
    ],
    ['an empty batch', [], [{ ...refusalOf(-32600), id: null }]],
    ['a method that is a number', { jsonrpc: '2.0', id: 5, method: 42 }, [{ ...refusalOf(-32600), id: 5 }]],
    [
      'params that are a string',
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: 'nope' },
      [{ ...refusalOf(-32600), id: 8 }],
    ],
    [
      'a string id with control characters',
      { jsonrpc: '2.0', id: 's\u001b]0;T\u0007', method: 7 },
      [{ ...refusalOf(-32600), id: 's\u001b]0;T\u0007' }],
    ],
    ['a number', '42', [{ ...refusalOf(-32600), id: null }]],
    ['null', 'null', [{ ...refusalOf(-32600), id: null }]],
    // its id is one of the server's own requests: answered under it, the host would take it for its own request 13's
    ['a malformed response', { jsonrpc: '2.0', id: 13, result: 'not an object' }, [{ ...refusalOf(-32600), id: null }]],
  ]

  it('each is answered with its error, under its id when it has a valid one; the next request is answered', async () => {
    const g = await gateway()
    for (const [i, [name, line, expected]] of cases.entries()) {
      const from = g.answers.length
      g.write(line, ping(`after-${i}`))
      await g.answerTo(`after-${i}`)
      for (const a of expected) if (a.id !== null && a.id !== undefined) await g.answerTo(a.id as string | number)
      const got = g.answers.slice(from).filter((a) => a.id !== `after-${i}`)
      expect(got, name).toHaveLength(expected.length)
      expect(got, name).toStrictEqual(expect.arrayContaining([...expected]))
    }
    g.write({ jsonrpc: '2.0', id: 99, method: 'tools/list' })
    expect((await g.answerTo(99)).result).toMatchObject({ tools: [expect.objectContaining({ name: 'w_whoami' })] })
    expect(exited(g.child)).toBe(false)
    // one diagnostic a line answered with an error, escaped: no control character of the id reaches the terminal
    expect(g.diagnostics()).toHaveLength(cases.filter(([, , e]) => e.some((a) => a.error !== undefined)).length)
    expect([...g.stderr()].filter((c) => (c < ' ' && c !== '\n') || c === '\u007f')).toStrictEqual([])
    expect(g.stderr()).toContain('"s\\u001b]0;T\\u0007"')
    expect(g.logged()).toHaveLength(g.diagnostics().length)
  })
})
