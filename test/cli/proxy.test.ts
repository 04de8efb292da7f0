import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { pathOf } from '../../src/index.js'
import { newSideChannel, observe } from '../../src/cli/sidechannel.js'
import type { SideChannel } from '../../src/cli/sidechannel.js'
import {
  FAKE_SERVER,
  cliArgs,
  descendants,
  eventually,
  isRunning,
  killAll,
  killTree,
  runCli,
  tempDir,
  track,
} from './support.js'

let tmp: ReturnType<typeof tempDir>
const pids: Array<number> = []
beforeEach(() => {
  tmp = tempDir()
})
afterEach(async () => {
  for (const p of pids.splice(0)) killTree(p)
  await killAll()
  tmp.remove()
})

// -------------------------------------------------------------------------------------
// the side channel, pure
// -------------------------------------------------------------------------------------

const tool = (name: string, ...keys: ReadonlyArray<string>): unknown => ({
  name,
  inputSchema: { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, { type: 'string' }])) },
})
const listReq = (id: unknown, cursor?: string): unknown => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/list',
  ...(cursor === undefined ? {} : { params: { cursor } }),
})
const listRes = (id: unknown, tools: ReadonlyArray<unknown>, nextCursor?: string): unknown => ({
  jsonrpc: '2.0',
  id,
  result: { tools, ...(nextCursor === undefined ? {} : { nextCursor }) },
})
const callReq = (id: unknown, name: string, args: unknown): unknown => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
})

type Step = readonly ['host' | 'server', unknown]
const play = (steps: ReadonlyArray<Step>): Array<string> => {
  let s: SideChannel = newSideChannel(['_meta'])
  const said: Array<string> = []
  for (const [from, msg] of steps) {
    const [ws, next] = observe(from, msg)(s)
    s = next
    for (const e of ws)
      said.push(
        e._tag === 'Warning'
          ? `${e.warning.tool}#${e.warning.id}:${e.warning.unknownKeys.join(',')}`
          : `unlisted ${e.tool}#${e.id}`,
      )
  }
  return said
}

describe('the side channel', () => {
  it('audits a call against the listed schema, tolerates reason, says each (tool, key) once', () => {
    expect(
      play([
        ['host', callReq(0, 'read', { ffset: 1 })], // never listed: not audited, and said
        ['host', callReq(1, 'read', { ffset: 1 })], // said once
        ['host', listReq(1)],
        ['server', listRes(1, [tool('read', 'path', 'offset')])],
        ['host', callReq(2, 'read', { path: '/', ffset: 1, reason: 'r' })],
        ['host', callReq(3, 'read', { path: '/', ffset: 1, lenght: 2, _meta: {} })], // _meta tolerated here
        ['host', callReq('x', 'other', { a: 1 })],
      ]),
    ).toEqual(['unlisted read#0', 'read#2:ffset', 'read#3:lenght'])
  })

  it('merges pages by nextCursor and swaps the cache in when the last page arrives', () => {
    expect(
      play([
        ['host', listReq(1)],
        ['server', listRes(1, [tool('a', 'x')], 'p2')],
        ['host', callReq(2, 'a', { y: 1 })], // listing not complete: nothing cached yet
        ['host', listReq(3, 'p2')],
        ['server', listRes(3, [tool('b', 'x'), tool('a', 'z')])],
        ['host', callReq(4, 'a', { y: 1 })],
        ['host', callReq(5, 'b', { y: 1 })],
      ]),
    ).toEqual(['unlisted a#2', 'a#4:y', 'b#5:y'])
  })

  it('keeps the old cache after list_changed until the next listing completes', () => {
    expect(
      play([
        ['host', listReq(1)],
        ['server', listRes(1, [tool('a', 'x')])],
        ['server', { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }],
        ['host', callReq(2, 'a', { y: 1 })],
        ['host', listReq(3)],
        ['server', listRes(3, [tool('a', 'x', 'y', 'z')], 'more')],
        ['host', callReq(4, 'a', { w: 1 })], // still the old cache: w is new, y was said
        ['host', listReq(5, 'more')],
        ['server', listRes(5, [])],
        ['host', callReq(6, 'a', { z: 1, v: 1 })],
      ]),
    ).toEqual(['a#2:y', 'a#4:w', 'a#6:v'])
  })

  it('keeps ids per direction and apart by type, and reads batches', () => {
    expect(
      play([
        ['host', [listReq(7), { jsonrpc: '2.0', method: 'notifications/initialized' }]],
        ['server', { jsonrpc: '2.0', id: 7, method: 'roots/list' }], // a server request with the same id
        ['host', listRes(7, [tool('fake', 'q')])], // the host's answer to it: not a listing
        ['server', listRes('7', [tool('wrong', 'q')])], // "7" is not 7
        ['server', listRes(8, [tool('wrong', 'q')])], // never asked for
        ['server', [listRes(7, [tool('a', 'x')])]],
        ['host', [callReq(9, 'a', { y: 1 }), callReq(10, 'fake', { y: 1 }), callReq(11, 'wrong', { y: 1 })]],
      ]),
    ).toEqual(['a#9:y'])
  })

  it('abandons a listing whose page failed, keeping the cache', () => {
    expect(
      play([
        ['host', listReq(1)],
        ['server', listRes(1, [tool('a', 'x')])],
        ['host', listReq(2)],
        ['server', { jsonrpc: '2.0', id: 2, error: { code: -1, message: 'no' } }],
        ['host', callReq(3, 'a', { y: 1 })],
      ]),
    ).toEqual(['a#3:y'])
  })
})

// -------------------------------------------------------------------------------------
// the proxy as a process, over a fake server
// -------------------------------------------------------------------------------------

interface Proxy {
  readonly child: ChildProcess
  readonly stdout: () => Buffer
  readonly stderr: () => string
  readonly send: (data: string | Buffer) => void
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly serverPid: () => number
  readonly pidFile: string
  readonly record: string
}

let servers = 0

const fakeServer = (): { readonly script: string; readonly record: string; readonly pidFile: string } => {
  const script = join(tmp.dir, 'fake-server.mjs')
  writeFileSync(script, FAKE_SERVER)
  const n = ++servers
  return { script, record: join(tmp.dir, `received-${n}.bin`), pidFile: join(tmp.dir, `server-${n}.pid`) }
}

const startProxy = (
  options: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = {},
  command?: ReadonlyArray<string>,
): Proxy => {
  const fake = fakeServer()
  const child = track(
    process.execPath,
    cliArgs('proxy', ...options, '--', ...(command ?? [process.execPath, fake.script, fake.record, fake.pidFile])),
    {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  if (child.pid !== undefined) pids.push(child.pid)
  const out: Array<Buffer> = []
  let err = ''
  child.stdout?.on('data', (b: Buffer) => out.push(b))
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s))
  child.stdin?.on('error', () => undefined)
  return {
    child,
    stdout: () => Buffer.concat(out),
    stderr: () => err,
    send: (data) => child.stdin?.write(data),
    exited: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal }))),
    serverPid: () => Number(readFileSync(fake.pidFile, 'utf8')),
    pidFile: fake.pidFile,
    record: fake.record,
  }
}

const line = (msg: unknown): string => JSON.stringify(msg) + '\n'
const emit = (bytes: string | Buffer): string => line({ fake: 'emit', b64: Buffer.from(bytes).toString('base64') })
// the fake writes its pid once its handlers are in place
const serverStarted = async (p: Proxy): Promise<void> =>
  eventually(() => existsSync(p.pidFile) && readFileSync(p.pidFile, 'utf8') !== '', 15_000, 'server start')

describe('toolstack proxy: bytes', () => {
  it(
    'forwards every byte both ways, unchanged and in order, odd lines and a 10 MB line included',
    { timeout: 60_000 },
    async () => {
      const big = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'x', params: { blob: 'é'.repeat(5 * 1024 * 1024) } })
      const odd = [
        'not json at all\n',
        '\n',
        '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"n"}]\n',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{"b":1}}}\r\n',
        '\r\n',
        '   {"spaced": true}   \n',
        '\u0000\u00ff\ud83d\ude00 bytes\n',
        big + '\n',
        '{"jsonrpc":"2.0","id":3,"result":{}}\n',
      ].join('')
      const fromHost = Buffer.concat([
        Buffer.from(odd),
        Buffer.from([0xc3, 0x28, 0x0a]),
        Buffer.from('final line without newline'),
      ])
      const fromServer = Buffer.concat([
        Buffer.from(odd.split('\n').reverse().join('\n')),
        Buffer.from('\nlast server line, no newline'),
      ])
      const emitFile = join(tmp.dir, 'emit.bin')
      writeFileSync(emitFile, fromServer)
      const p = startProxy([], { FAKE_EMIT_FILE: emitFile })
      // odd-sized pieces, so lines are split across chunks
      for (let i = 0; i < fromHost.length; i += 65_521) p.send(fromHost.subarray(i, i + 65_521))
      p.child.stdin?.end()
      const { code } = await p.exited
      expect(code).toBe(0)
      expect(readFileSync(p.record).equals(fromHost)).toBe(true)
      expect(p.stdout().length).toBe(fromServer.length)
      expect(p.stdout().equals(fromServer)).toBe(true)
      // a call came before any listing was answered: said once, and nothing else
      expect(p.stderr()).toMatch(
        /^toolstack proxy: the host called "a" \(call 2\) before any tools\/list was answered: [^\n]*\n$/,
      )
    },
  )

  it('reads a host input that is a file, not a pipe, through a stream, byte for byte', async () => {
    const fake = fakeServer()
    const input = join(tmp.dir, 'host-input.jsonl')
    const fromHost = Buffer.concat([
      Buffer.from(line(listReq(1))),
      Buffer.from('not json\n'.repeat(20_000)),
      Buffer.from(line(callReq(2, 'read', { path: '/', ffset: 1 }))),
      Buffer.from('no newline at the end'),
    ])
    writeFileSync(input, fromHost)
    const fd = openSync(input, 'r')
    const child = track(
      process.execPath,
      cliArgs('proxy', '--', process.execPath, fake.script, fake.record, fake.pidFile),
      {
        env: { ...process.env, NO_COLOR: '1' },
        stdio: [fd, 'pipe', 'pipe'],
      },
    )
    closeSync(fd)
    let err = ''
    child.stderr?.setEncoding('utf8').on('data', (t: string) => (err += t))
    child.stdout?.resume()
    const code = await new Promise((resolve) => child.once('close', resolve))
    expect(code).toBe(0)
    expect(readFileSync(fake.record).equals(fromHost)).toBe(true)
    expect(err).toMatch(
      /^toolstack proxy: the host called "read" \(call 2\) before any tools\/list was answered: [^\n]*\n$/,
    )
  })

  it(
    'forwards the server’s bytes unchanged while it reads them (a listing pending), lines split across chunks included',
    { timeout: 30_000 },
    async () => {
      const p = startProxy([])
      await serverStarted(p)
      p.send(line({ jsonrpc: '2.0', id: 'L', method: 'tools/list' }))
      const listing = line({
        jsonrpc: '2.0',
        id: 'L',
        result: { tools: [{ name: 'a', inputSchema: { type: 'object', properties: { b: {} } } }] },
      })
      const pieces = [
        'not json\n{"jsonrpc":"2.0","method":"notifications/progress"}\r\n',
        listing.slice(0, 17),
        listing.slice(17) + '\u0000\u00ff odd\n',
        '[{"jsonrpc":"2.0","id":"L","result":{}}]\n',
      ]
      for (const piece of pieces) p.send(emit(piece))
      const expected = Buffer.from(pieces.join(''))
      await eventually(() => p.stdout().length >= expected.length, 10_000, 'every emitted byte')
      expect(p.stdout().equals(expected)).toBe(true)
      // the listing was read on the way: a mangled call to the listed tool is reported
      p.send(line({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', arguments: { b: 1, bb: 2 } } }))
      await eventually(() => p.stderr().includes('"bb"'), 10_000, 'the warning')
      p.child.stdin?.end()
      expect((await p.exited).code).toBe(0)
    },
  )

  it('forwards bytes as they come, a line not held back until its newline', async () => {
    const p = startProxy([])
    await serverStarted(p)
    p.send(emit('{"a":1}\n{"b":'))
    await eventually(
      () => p.stdout().toString() === '{"a":1}\n{"b":',
      10_000,
      'the first line and the start of the second',
    )
    p.send(emit('2}\n'))
    await eventually(() => p.stdout().toString() === '{"a":1}\n{"b":2}\n', 10_000, 'second line')
    p.child.stdin?.end()
    expect((await p.exited).code).toBe(0)
  })
})

describe('toolstack proxy: warnings', () => {
  const listing = async (p: Proxy, id: number, tools: ReadonlyArray<unknown>): Promise<void> => {
    p.send(line(listReq(id)))
    p.send(emit(line(listRes(id, tools))))
    await eventually(() => p.stdout().toString().includes(`"id":${id},"result"`), 10_000, 'listing')
  }

  it('warns on stderr for a mangled call, once per (tool, key), reason tolerated, stdout untouched', async () => {
    const p = startProxy([])
    await serverStarted(p)
    p.send(line(callReq(1, 'read', { ffset: 1 }))) // not listed yet
    await listing(p, 2, [tool('read', 'path', 'offset')])
    p.send(line(callReq(3, 'read', { path: '/', ffset: 1, reason: 'r' })))
    p.send(line(callReq(4, 'read', { path: '/', ffset: 2 })))
    p.send('{"jsonrpc":"2.0","id":5,"method":"tools\\/call","params":{"name":"read","arguments":{"\\u006cenght":1}}}\n')
    p.send(line([callReq(6, 'read', { a: 1 }), callReq(7, 'read', { b: 1 })]))
    await eventually(() => p.stderr().split('\n').length > 5, 10_000, 'warnings')
    p.child.stdin?.end()
    expect((await p.exited).code).toBe(0)
    // the combinator's own sentence, whatever suggestion it ends with
    expect(
      p
        .stderr()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.replace(/ \(did you mean [^)]*\)$/, '')),
    ).toEqual([
      'toolstack proxy: the host called "read" (call 1) before any tools/list was answered: calls are audited only against a listing the proxy saw, so none is audited until then; reported once',
      'toolstack: read call 3 carried undeclared argument key "ffset" (declared: "offset", "path")',
      'toolstack: read call 5 carried undeclared argument key "lenght" (declared: "offset", "path")',
      'toolstack: read call 6 carried undeclared argument key "a" (declared: "offset", "path")',
      'toolstack: read call 7 carried undeclared argument key "b" (declared: "offset", "path")',
    ])
    expect(p.stdout().toString()).toBe(line(listRes(2, [tool('read', 'path', 'offset')])))
  })

  it('writes JSON Lines to --log FILE, each with its time and server, and nothing to stderr', async () => {
    const log = join(tmp.dir, 'warn.log')
    writeFileSync(log, 'earlier\n')
    const before = Date.now()
    const p = startProxy(['--log', log, '--json', '--tolerate', 'tolerated'])
    await serverStarted(p)
    p.send(line(listReq('L')))
    p.send(emit(line(listRes('L', [tool('read', 'path')]))))
    await eventually(() => p.stdout().toString().includes('"id":"L","result":{"tools":[{'), 10_000, 'listing')
    p.send(line(callReq('c', 'read', { path: '/', ffset: 1, tolerated: true })))
    await eventually(() => readFileSync(log, 'utf8').split('\n').length > 2, 10_000, 'log line')
    p.child.stdin?.end()
    expect((await p.exited).code).toBe(0)
    const [first, warning] = readFileSync(log, 'utf8').split('\n')
    expect(first).toBe('earlier')
    const record = JSON.parse(warning ?? '') as Record<string, unknown>
    const command = [process.execPath, join(tmp.dir, 'fake-server.mjs'), p.record, p.pidFile]
    expect(record).toEqual({
      type: 'warning',
      time: expect.any(String),
      server: command.join(' '),
      command,
      tool: 'read',
      id: 'c',
      unknownKeys: ['ffset'],
      keys: [{ path: 'ffset', key: 'ffset', place: [] }],
      declaredKeys: ['path'],
      suggestions: expect.any(Array),
    })
    expect(Date.parse(record['time'] as string)).toBeGreaterThanOrEqual(before - 1000)
    expect(Date.parse(record['time'] as string)).toBeLessThanOrEqual(Date.now())
    expect(p.stderr()).toBe('')
  })

  it('lets several proxies share one log: each line says when, and which server (--name)', async () => {
    const log = join(tmp.dir, 'shared.log')
    const proxies = [startProxy(['--log', log, '--name', 'alpha']), startProxy(['--log', log, '--name', 'beta'])]
    for (const [i, p] of proxies.entries()) {
      await serverStarted(p)
      p.send(line(listReq(1)))
      p.send(emit(line(listRes(1, [tool('read', 'path')]))))
      await eventually(() => p.stdout().toString().includes('"id":1,"result"'), 10_000, 'listing')
      p.send(line(callReq(2, 'read', { path: '/', [`from${i}`]: 1 })))
    }
    await eventually(() => readFileSync(log, 'utf8').split('\n').length > 2, 10_000, 'both log lines')
    for (const p of proxies) p.child.stdin?.end()
    for (const p of proxies) expect((await p.exited).code).toBe(0)
    const lines = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .sort((a, b) => a.slice(25).localeCompare(b.slice(25)))
    expect(lines.map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /, '<time> '))).toEqual([
      '<time> [alpha] toolstack: read call 2 carried undeclared argument key "from0" (declared: "path")',
      '<time> [beta] toolstack: read call 2 carried undeclared argument key "from1" (declared: "path")',
    ])
  })
})

describe('toolstack proxy: output a terminal can trust', () => {
  const evilTool = 'read\u001b]0;pwned\u0007'
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

  for (const options of [[], ['--log', 'LOG'], ['--json'], ['--json', '--log', 'LOG']]) {
    it(`escapes control characters from the traffic (${options.join(' ') || 'stderr'}), and keeps JSON exact`, async () => {
      const log = join(tmp.dir, 'evil.log')
      const p = startProxy(options.map((o) => (o === 'LOG' ? log : o)))
      await serverStarted(p)
      p.send(line(callReq('\u009b0', evilTool, {}))) // before any listing: the notice names the tool
      p.send(line(listReq(1)))
      p.send(emit(line(listRes(1, [tool(evilTool, 'path')]))))
      await eventually(() => p.stdout().toString().includes('"id":1,"result"'), 10_000, 'listing')
      p.send(line(callReq('\u007f1', evilTool, { path: '/', 'k\u001b[2J\n': 1 })))
      const said = (): string =>
        options.includes('--log') ? (existsSync(log) ? readFileSync(log, 'utf8') : '') : p.stderr()
      await eventually(() => said().split('\n').length > 2, 10_000, 'the warning')
      p.child.stdin?.end()
      expect((await p.exited).code).toBe(0)
      expect(said()).not.toMatch(raw)
      const lines = said()
        .split('\n')
        .filter((l) => l !== '')
      expect(lines).toHaveLength(2)
      if (options.includes('--json')) {
        const [notice, warning] = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
        expect(notice?.['message']).toContain(JSON.stringify(evilTool))
        // a key holding `[` is named by its path, ["…"], its control characters JSON-escaped
        expect(warning).toMatchObject({ tool: evilTool, id: '\u007f1', unknownKeys: [pathOf('', 'k\u001b[2J\n')] })
      } else
        expect(lines[1]).toContain(
          `toolstack: read\\u001b]0;pwned\\u0007 call \\u007f1 carried undeclared argument key ${JSON.stringify(pathOf('', 'k\u001b[2J\n'))}`,
        )
    })
  }
})

describe('toolstack proxy: bounded output, whatever the traffic', () => {
  // what the reviewer sent: a call before any listing with a 20,000-character name, then a call with 20,000
  // undeclared keys; once unbounded, a 20,191-character notice and a warning naming every key the audit found
  const longName = 'n\u009b31m' + 'A'.repeat(20_000)
  const manyKeys = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 1]))

  for (const options of [[], ['--json', '--log', 'LOG']]) {
    it(`says each in one short line (${options.join(' ') || 'stderr'}), the warning's record keeping the count`, async () => {
      const log = join(tmp.dir, 'bounded.log')
      const p = startProxy(options.map((o) => (o === 'LOG' ? log : o)))
      await serverStarted(p)
      p.send(line(callReq(1, longName, {})))
      p.send(line(listReq(2)))
      p.send(emit(line(listRes(2, [tool('echo', 'text')]))))
      await eventually(() => p.stdout().toString().includes('"id":2,"result"'), 10_000, 'listing')
      p.send(line(callReq(3, 'echo', { text: 'x', ...manyKeys })))
      const said = (): string =>
        options.includes('--log') ? (existsSync(log) ? readFileSync(log, 'utf8') : '') : p.stderr()
      await eventually(() => said().split('\n').length > 2, 15_000, 'the notice and the warning')
      p.child.stdin?.end()
      expect((await p.exited).code).toBe(0)
      const [notice, warning, ...rest] = said()
        .split('\n')
        .filter((l) => l !== '')
      expect(rest).toEqual([])
      // at most 1,206 characters for the name, and the sentence's words
      expect(notice?.length).toBeLessThan(1500)
      // 20 short keys of each list, and the sentence's words; 20 keys in the record, each in three places
      expect(warning?.length).toBeLessThan(options.includes('--json') ? 3000 : 1000)
      if (options.includes('--json')) {
        expect(JSON.parse(notice ?? '')).toMatchObject({
          type: 'notice',
          message: expect.stringContaining(`the host called "n\\u009b31m${'A'.repeat(195)}…" (call 1)`),
        })
        const record = JSON.parse(warning ?? '') as Record<string, unknown>
        expect(record).toMatchObject({ type: 'warning', tool: 'echo', id: '3' })
        // as many as the audit records of one call, far more than are shown
        expect(record['unknownKeyCount']).toBeGreaterThan(20)
        expect(record['unknownKeys']).toHaveLength(20)
        expect(record['keys']).toHaveLength(20)
      } else {
        expect(notice).toContain(`toolstack proxy: the host called "n\\u009b31m${'A'.repeat(195)}…" (call 1)`)
        expect(warning).toMatch(/^toolstack: echo call 3 carried undeclared argument keys "k0", "k1", /)
        expect(warning).toMatch(/" and \d+ more \(declared: "text"\)$/)
      }
    })
  }
})

describe('toolstack proxy: lines longer than --max-line-bytes', () => {
  it('forwards them byte for byte, audits the rest, and says once that it did not audit them', async () => {
    const p = startProxy(['--max-line-bytes', '1000'])
    await serverStarted(p)
    p.send(line(listReq(1)))
    p.send(emit(line(listRes(1, [tool('read', 'path')]))))
    await eventually(() => p.stdout().toString().includes('"id":1,"result"'), 10_000, 'listing')
    const long = (id: number): string => line(callReq(id, 'read', { path: 'x'.repeat(5000), [`long${id}`]: 1 }))
    const sent = [long(2), long(3), line(callReq(4, 'read', { path: '/', short: 1 }))]
    for (const l of sent) for (let i = 0; i < l.length; i += 777) p.send(l.slice(i, i + 777))
    await eventually(() => p.stderr().includes('"short"'), 10_000, 'the warning for the short call')
    p.child.stdin?.end()
    expect((await p.exited).code).toBe(0)
    expect(readFileSync(p.record, 'utf8')).toBe(
      line(listReq(1)) + emit(line(listRes(1, [tool('read', 'path')]))) + sent.join(''),
    )
    const said = p
      .stderr()
      .split('\n')
      .filter((l) => l !== '')
    expect(said).toEqual([
      `toolstack proxy: a line of ${long(2).length - 1} bytes from the host was forwarded but not audited: it is longer than --max-line-bytes (1000); longer lines are not mentioned again`,
      'toolstack: read call 4 carried undeclared argument key "short" (declared: "path")',
    ])
  })
})

describe('toolstack proxy: lifecycle', () => {
  it('ends with the server’s exit status when it crashes', async () => {
    const p = startProxy([])
    await serverStarted(p)
    p.send(line({ fake: 'exit', code: 3 }))
    expect((await p.exited).code).toBe(3)
  })

  it('ends soon after the server exits even when a process it started keeps its stdout open', async () => {
    const grandchildPid = join(tmp.dir, 'grandchild.pid')
    // the server leaves behind a process holding its stdout, then exits 4
    const server = `
      const { spawn } = require('node:child_process')
      const g = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: ['ignore', 'inherit', 'ignore'], detached: true })
      require('node:fs').writeFileSync(${JSON.stringify(grandchildPid)}, String(g.pid))
      g.unref()
      process.stdout.write('{"jsonrpc":"2.0","method":"hello"}\\n', () => process.exit(4))
    `
    const p = startProxy([], {}, [process.execPath, '-e', server])
    await eventually(
      () => existsSync(grandchildPid) && readFileSync(grandchildPid, 'utf8') !== '',
      15_000,
      'grandchild start',
    )
    const held = Number(readFileSync(grandchildPid, 'utf8'))
    pids.push(held)
    const t0 = Date.now()
    const { code } = await p.exited
    expect(code).toBe(4)
    // the server's output came through, and the proxy did not wait for the grandchild
    expect(p.stdout().toString()).toBe('{"jsonrpc":"2.0","method":"hello"}\n')
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(isRunning(held)).toBe(true)
  })

  it('ends with 128 + n when a signal killed the server', async () => {
    const p = startProxy([])
    await serverStarted(p)
    p.send(line({ fake: 'kill', signal: 'SIGKILL' }))
    expect((await p.exited).code).toBe(128 + 9)
  })

  it('closes the server’s stdin when the host goes away, and leaves no process behind', async () => {
    const p = startProxy([])
    await serverStarted(p)
    const server = p.serverPid()
    p.child.stdin?.end()
    expect((await p.exited).code).toBe(0)
    expect(isRunning(server)).toBe(false)
  })

  it('treats a host that closed its end of stdout as gone: the server is closed, the proxy ends, nothing is left behind', async () => {
    const p = startProxy([])
    await serverStarted(p)
    const server = p.serverPid()
    // the host stops reading but keeps stdin open; the server's next bytes hit a closed pipe
    p.child.stdout?.destroy()
    p.send(emit('{"after":"the host left"}\n'))
    expect((await p.exited).code).toBe(0)
    expect(isRunning(server)).toBe(false)
  })

  it('sends SIGTERM, then SIGKILL, to a server that ignores the end of its input', async () => {
    const term = startProxy(['--grace', '100'], { FAKE_IGNORE_EOF: '1' })
    const kill = startProxy(['--grace', '100'], { FAKE_IGNORE_EOF: '1', FAKE_IGNORE_TERM: '1' })
    await serverStarted(term)
    await serverStarted(kill)
    term.child.stdin?.end()
    kill.child.stdin?.end()
    expect((await term.exited).code).toBe(128 + 15)
    expect((await kill.exited).code).toBe(128 + 9)
  })

  it('passes SIGTERM and SIGINT on to the server', async () => {
    for (const [signal, n] of [
      ['SIGTERM', 15],
      ['SIGINT', 2],
    ] as const) {
      const p = startProxy([])
      await serverStarted(p)
      const server = p.serverPid()
      p.child.kill(signal)
      expect((await p.exited).code).toBe(128 + n)
      expect(isRunning(server)).toBe(false)
    }
  })

  const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
    Promise.race([
      promise,
      new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
    ])

  it('ends when its server ignores SIGTERM or SIGINT: the signal is passed on, then SIGKILL after the grace', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const p = startProxy(['--grace', '300'])
      await serverStarted(p)
      const server = p.serverPid()
      p.send(line({ fake: 'ignore', signal }))
      await eventually(
        () => p.stdout().toString().includes(`{"ignoring":"${signal}"}`),
        10_000,
        'the server to ignore it',
      )
      p.child.kill(signal)
      expect((await within(10_000, 'the proxy’s exit', p.exited)).code).toBe(128 + 9)
      expect(isRunning(server) && !isZombie(server)).toBe(false)
    }
  })

  // a server and a process it started, in its process group, which ignores SIGTERM
  const withGrandchild = (pidFile: string, extra = ''): string => `
    const { spawn } = require('node:child_process')
    const g = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' })
    require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(g.pid))
    ${extra}
    process.stdin.resume()
    process.stdin.on('end', () => process.exit(0))
  `

  // a proxy whose server started a grandchild that ignores SIGTERM, once the grandchild runs
  const proxyWithGrandchild = async (): Promise<{ readonly p: Proxy; readonly grandchild: number }> => {
    const grandchildPid = join(tmp.dir, 'grandchild.pid')
    const p = startProxy(['--grace', '300'], {}, [process.execPath, '-e', withGrandchild(grandchildPid)])
    await eventually(
      () => existsSync(grandchildPid) && readFileSync(grandchildPid, 'utf8') !== '',
      15_000,
      'grandchild start',
    )
    const grandchild = Number(readFileSync(grandchildPid, 'utf8'))
    pids.push(grandchild)
    return { p, grandchild }
  }

  it('leaves no process of its server’s group behind when the host closes stdin', async () => {
    const { p, grandchild } = await proxyWithGrandchild()
    p.child.stdin?.end()
    expect((await within(10_000, 'the proxy’s exit', p.exited)).code).toBe(0)
    expect(isRunning(grandchild) && !isZombie(grandchild)).toBe(false)
  })

  it('leaves no process of its server’s group behind when it is sent SIGTERM', async () => {
    const { p, grandchild } = await proxyWithGrandchild()
    p.child.kill('SIGTERM')
    expect((await within(10_000, 'the proxy’s exit', p.exited)).code).toBe(128 + 15)
    expect(isRunning(grandchild) && !isZombie(grandchild)).toBe(false)
  })

  it('leaves no process of its server’s group behind when it is killed outright (SIGKILL): its watchdog ends the group', async () => {
    const { p, grandchild } = await proxyWithGrandchild()
    p.child.kill('SIGKILL')
    expect((await within(10_000, 'the proxy’s exit', p.exited)).signal).toBe('SIGKILL')
    // the grandchild ignores SIGTERM: the watchdog's SIGKILL, a second later, ends it
    await eventually(() => !isRunning(grandchild) || isZombie(grandchild), 10_000, 'the group to end')
  })

  it('says clearly when the server cannot be started', async () => {
    const missing = await runCli(['proxy', '--', join(tmp.dir, 'no-such-server')])
    expect(missing.status).toBe(127)
    expect(missing.stderr.trim()).toBe(
      `toolstack proxy: cannot start ${JSON.stringify(join(tmp.dir, 'no-such-server'))}: command not found`,
    )
    const notExecutable = join(tmp.dir, 'server.sh')
    writeFileSync(notExecutable, '#!/bin/sh\n')
    chmodSync(notExecutable, 0o644)
    const denied = await runCli(['proxy', '--', notExecutable])
    expect(denied.status).toBe(126)
    expect(denied.stderr).toContain('permission denied')
    expect(missing.stdout.length + denied.stdout.length).toBe(0)
  })

  it('exits 2 on a usage error', async () => {
    expect((await runCli(['proxy'])).status).toBe(2)
    expect((await runCli(['proxy', '--grace', 'soon', '--', 'x'])).status).toBe(2)
    const log = await runCli(['proxy', '--log', join(tmp.dir, 'no/such/dir/log'), '--', 'true'])
    expect(log.status).toBe(2)
    expect(log.stderr).toContain('cannot open log')
  })

  it('leaves no process behind', () => {
    expect(descendants(process.pid).filter((p) => isRunning(p) && !isZombie(p))).toEqual([])
  })
})

const isZombie = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') === true
  } catch {
    return true
  }
}
