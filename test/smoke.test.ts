// The built package, loaded in plain Node 20 (not under vitest) with `import` and
// with `require`, as a user's code would load it.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

const node = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 30_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const script = (load: string) => `
${load}
const { pipe } = require('fp-ts/lib/function.js')
const warned = []
const provider = {
  toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [{ type: 'function', function: { name: 't', parameters: { type: 'object', properties: { a: {} } } } }] }),
  executeToolCalls: (calls) => () => Promise.resolve({ _tag: 'Right', right: calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'ok' })) }),
}
const tools = pipe(provider, ts.withUnknownKeyAudit({ onWarn: (w) => () => warned.push(w.unknownKeys.join()) }))
tools.toolsForLlm().then(() => tools.executeToolCalls([{ id: '1', function: { name: 't', arguments: '{"a":1,"b":2}' } }])()).then((r) => {
  console.log(JSON.stringify({ warned, tag: r._tag, exports: Object.keys(ts).length }))
})`

describe('the built package in plain Node', () => {
  it('has been built (npm run test:integration builds it first)', () => {
    expect(existsSync(`${root}/dist/esm/index.js`), 'dist/ is missing: run `npm run build`').toBe(true)
    expect(existsSync(`${root}/dist/cjs/index.js`)).toBe(true)
    expect(existsSync(`${root}/dist/esm/index.d.ts`)).toBe(true)
  })

  it('loads with require()', () => {
    const r = node(['-e', script("const ts = require('toolstack')")])
    expect(r.stderr).toBe('')
    const out = JSON.parse(r.stdout) as { warned: Array<string>; tag: string; exports: number }
    expect(out.warned).toEqual(['b'])
    expect(out.tag).toBe('Right')
  })

  it('loads with import, giving the same exports', () => {
    const esm = node([
      '--input-type=module',
      '-e',
      `import * as ts from 'toolstack'; import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); ${script('')}`,
    ])
    expect(esm.stderr).toBe('')
    const cjs = node(['-e', script("const ts = require('toolstack')")])
    expect(JSON.parse(esm.stdout)).toEqual(JSON.parse(cjs.stdout))
  })

  it('does nothing at import: no output, no timer or handle keeping the process alive', () => {
    const r = node([
      '--input-type=module',
      '-e',
      "await import('toolstack'); const t = Date.now(); process.on('exit', () => console.log(Date.now() - t < 1000 ? 'exited' : 'lingered'))",
    ])
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe('exited\n')
  })

  it('runs the toolstack command from dist/, as npx would', () => {
    const version = node(['dist/esm/cli/main.js', '--version'])
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version: string }).version,
    )
    const body = JSON.stringify({
      tools: [
        {
          type: 'function',
          function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {}, offset: {} } } },
        },
      ],
      messages: [
        {
          role: 'assistant',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'fs_read', arguments: '{"path":"a","ffset":1}' } },
          ],
        },
      ],
    })
    const r = spawnSync(process.execPath, ['dist/esm/cli/main.js', 'audit', '--json', '--fail-on-warn', '-'], {
      cwd: root,
      input: body,
      encoding: 'utf8',
    })
    expect(r.status).toBe(1)
    const first = JSON.parse(r.stdout.split('\n')[0] ?? '') as Record<string, unknown>
    expect(first).toMatchObject({ type: 'warning', tool: 'fs_read', id: 'c1', unknownKeys: ['ffset'] })
  })

  it('runs the proxy from dist/', async () => {
    // a server that answers the listing and reads the rest
    const server = [
      "const rl = require('node:readline').createInterface({ input: process.stdin })",
      "rl.on('line', (l) => { const m = JSON.parse(l); if (m.method === 'tools/list') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'read', inputSchema: { type: 'object', properties: { path: {} } } }] } }) + '\\n') })",
    ].join('\n')
    const proxy = spawn(
      process.execPath,
      ['dist/esm/cli/main.js', 'proxy', '--json', '--', process.execPath, '-e', server],
      { cwd: root },
    )
    let out = ''
    let err = ''
    proxy.stderr.setEncoding('utf8').on('data', (t: string) => (err += t))
    const listed = new Promise<void>((resolve) =>
      proxy.stdout.setEncoding('utf8').on('data', (t: string) => {
        out += t
        if (out.includes('\n')) resolve()
      }),
    )
    proxy.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
    await listed
    proxy.stdin.end(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"/","pth":1}}}\n',
    )
    const status = await new Promise<number | null>((resolve) => proxy.once('close', resolve))
    expect(status).toBe(0)
    expect(out).toContain('"id":1,"result"')
    expect(JSON.parse(err.trim()) as unknown).toMatchObject({
      type: 'warning',
      tool: 'read',
      id: '2',
      unknownKeys: ['pth'],
    })
  })

  // the library (and fp-ts, io-ts under it) loads only for what needs it: not for
  // --version or help, and not for a proxy until the host says something about tools
  it('loads the library only when a command needs it', async () => {
    const probe = join(mkdtempSync(join(tmpdir(), 'toolstack-smoke-')), 'probe.mjs')
    writeFileSync(
      probe,
      "import { createRequire } from 'node:module'\nconst r = createRequire(import.meta.url)\nprocess.on('exit', () => process.stderr.write('\\nloaded=' + JSON.stringify(Object.keys(r.cache)) + '\\n'))\n",
    )
    const loaded = (stderr: string): Array<string> =>
      JSON.parse(/loaded=(.*)/.exec(stderr)?.[1] ?? 'null') as Array<string>
    const usesLibrary = (files: ReadonlyArray<string>): boolean => files.some((f) => /[\\/](fp-ts|io-ts)[\\/]/.test(f))
    expect(
      usesLibrary(loaded(node(['--import', pathToFileURL(probe).href, 'dist/esm/cli/main.js', '--version']).stderr)),
    ).toBe(false)
    expect(
      usesLibrary(loaded(node(['--import', pathToFileURL(probe).href, 'dist/esm/cli/main.js', '--help']).stderr)),
    ).toBe(false)
    const session = (lines: string): Promise<string> =>
      new Promise((resolve) => {
        const server =
          "process.stdin.on('data', (b) => process.stdout.write(b)); process.stdin.on('end', () => process.exit(0))"
        const p = spawn(
          process.execPath,
          [
            '--import',
            pathToFileURL(probe).href,
            'dist/esm/cli/main.js',
            'proxy',
            '--',
            process.execPath,
            '-e',
            server,
          ],
          { cwd: root },
        )
        let err = ''
        p.stderr.setEncoding('utf8').on('data', (t: string) => (err += t))
        p.stdout.resume()
        p.once('close', () => resolve(err))
        p.stdin.end(lines)
      })
    expect(usesLibrary(loaded(await session('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')))).toBe(
      false,
    )
    expect(usesLibrary(loaded(await session('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')))).toBe(true)
    rmSync(dirname(probe), { recursive: true, force: true })
  })
})

// Each framework adapter's subpath, from dist/, with `import` and with `require`: the
// same exports both ways, a call that works, and nothing done at import.
const ADAPTERS: ReadonlyArray<{ readonly subpath: string; readonly probe: string }> = [
  {
    subpath: 'toolstack/ai-sdk',
    probe: `
const said = []
const mw = m.unknownKeyAuditMiddleware({ onWarn: (w) => { said.push(w.unknownKeys.join()) } })
const result = { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input: '{"a":1,"b":2}' }] }
const params = { prompt: [], tools: [{ type: 'function', name: 't', inputSchema: { type: 'object', properties: { a: {} } } }] }
mw.wrapGenerate({ doGenerate: async () => result, params }).then((r) => console.log(JSON.stringify({ same: r === result, said, exports: Object.keys(m).sort() })))`,
  },
  {
    subpath: 'toolstack/openai',
    probe: `
const calls = m.fromResponsesCalls([{ type: 'function_call', id: 'fc', call_id: 'c1', name: 't', arguments: '{"a":1,"b":2}' }])
const [out] = m.toFunctionCallOutputs([{ role: 'tool', tool_call_id: calls[0].id, content: 'b', is_error: true }])
const [msg] = m.toToolMessages([{ role: 'tool', tool_call_id: 'c1', content: 'b', structured_content: {} }])
console.log(JSON.stringify({ same: out.output === 'Error: b' && Object.keys(msg).length === 3, said: [msg.content], exports: Object.keys(m).sort() }))`,
  },
  {
    subpath: 'toolstack/openai-agents',
    probe: `
const said = []
const invoke = async () => 'ran'
const t = { type: 'function', name: 't', description: '', strict: false, parameters: { type: 'object', properties: { a: {} } }, invoke, needsApproval: async () => false, isEnabled: async () => true }
const { tools } = m.auditAgentsTools([t], { onWarn: (w) => { said.push(w.unknownKeys.join()) } })
tools[0].invoke({}, '{"a":1,"b":2}').then((r) => console.log(JSON.stringify({ same: r === 'ran', said, exports: Object.keys(m).sort() })))`,
  },
  {
    subpath: 'toolstack/anthropic',
    probe: `
const said = []
const mw = m.unknownKeyAuditMiddleware({ onWarn: (w) => { said.push(w.unknownKeys.join()) } })
const message = { content: [{ type: 'tool_use', id: 't1', name: 't', input: { a: 1, b: 2 } }] }
const response = new Response('{}')
const body = { tools: [{ name: 't', input_schema: { type: 'object', properties: { a: {} } } }] }
const ctx = { options: { method: 'post', path: '/v1/messages', body }, parse: async () => message }
mw({ body: '' }, async () => response, ctx).then((r) => console.log(JSON.stringify({ same: r === response, said, exports: Object.keys(m).sort() })))`,
  },
  {
    subpath: 'toolstack/google',
    probe: `
const said = []
const reply = { candidates: [{ content: { parts: [{ functionCall: { id: 'c1', name: 't', args: { a: 1, b: 2 } } }] } }] }
const response = new Response(JSON.stringify(reply))
const audited = m.unknownKeyAuditFetch({ onWarn: (w) => { said.push(w.unknownKeys.join()) }, fetch: async () => response })
const body = JSON.stringify({ tools: [{ functionDeclarations: [{ name: 't', parametersJsonSchema: { type: 'object', properties: { a: {} } } }] }] })
audited('http://127.0.0.1:1/v1beta/models/g:generateContent', { method: 'POST', body }).then((r) => console.log(JSON.stringify({ same: r === response, said, exports: Object.keys(m).sort() })))`,
  },
  {
    subpath: 'toolstack/claude-agent',
    probe: `
const said = []
const listing = { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 't', inputSchema: { type: 'object', properties: { a: {} } } }] } }
const instance = { connect: async (transport) => { await transport.send(listing) } }
m.claudeAgentAudit({ mcpServers: { n: { type: 'sdk', name: 'n', instance } }, onWarn: (w) => { said.push(w.unknownKeys.join()) } }).then(async (audit) => {
  await audit.mcpServers.n.instance.connect({ send: async () => {} })
  const input = { hook_event_name: 'PreToolUse', tool_name: 'mcp__n__t', tool_input: { a: 1, b: 2 }, tool_use_id: 'c1' }
  const out = await audit.preToolUse.hooks[0](input, 'c1', {})
  console.log(JSON.stringify({ same: Object.keys(out).length === 0, said, exports: Object.keys(m).sort() }))
})`,
  },
  {
    subpath: 'toolstack/otel',
    probe: `
const audit = m.otelAudit()
audit.onWarn({ tool: 't', id: 'c1', unknownKeys: ['b'], declaredKeys: ['a'], suggestions: [] })
audit.onDiagnostic({ _tag: 'CalledBeforeListing' })
const stop = m.observeUnknownKeys({ stats: () => [{ tool: 't', key: 'b', calls: 1, firstId: 'c1' }] })
const said = m.warningAttributes({ tool: 't', id: 'c1', unknownKeys: ['b'], declaredKeys: ['a'], suggestions: [] }).map((a) => a['toolstack.key'])
console.log(JSON.stringify({ same: stop() === undefined, said, exports: Object.keys(m).sort() }))`,
  },
  {
    subpath: 'toolstack/langchain',
    probe: `
const said = []
const audit = new m.UnknownKeyAuditHandler([{ name: 't', schema: { type: 'object', properties: { a: {} } } }], { onWarn: (w) => { said.push(w.unknownKeys.join()) } })
audit.handleToolStart({}, '{"a":1,"b":2}', 'run', undefined, undefined, undefined, 't', 'c1')
console.log(JSON.stringify({ same: m.permissiveSchema({ type: 'object', additionalProperties: false }).additionalProperties === undefined, said, exports: Object.keys(m).sort() }))`,
  },
]

describe('the framework adapters, built, in plain Node', () => {
  for (const { subpath, probe } of ADAPTERS) {
    it(`${subpath} loads with require() and with import, with the same exports, and works`, () => {
      const cjs = node(['-e', `const m = require('${subpath}')\n${probe}`])
      expect(cjs.stderr).toBe('')
      const esm = node(['--input-type=module', '-e', `import * as m from '${subpath}'\n${probe}`])
      expect(esm.stderr).toBe('')
      const [a, b] = [
        JSON.parse(cjs.stdout) as Record<string, unknown>,
        JSON.parse(esm.stdout) as Record<string, unknown>,
      ]
      expect(a).toEqual(b)
      expect(a['same']).toBe(true)
      expect(a['said']).toEqual(['b'])
      expect((a['exports'] as ReadonlyArray<string>).length).toBeGreaterThan(2)
    })

    it(`${subpath} does nothing at import`, () => {
      const r = node([
        '--input-type=module',
        '-e',
        `await import('${subpath}'); const t = Date.now(); process.on('exit', () => console.log(Date.now() - t < 1000 ? 'exited' : 'lingered'))`,
      ])
      expect(r.stderr).toBe('')
      expect(r.stdout).toBe('exited\n')
    })
  }
})

describe('toolstack/openai-agents at load', () => {
  it('leaves the trace processors an app set as they are, when loaded by require after @openai/agents by import', () => {
    const probe = `
import { setTraceProcessors, setTracingDisabled, withTrace } from '@openai/agents'
import { createRequire } from 'node:module'
let hits = 0
const noop = async () => {}
setTracingDisabled(false)
setTraceProcessors([{ onTraceStart: async () => void hits++, onTraceEnd: noop, onSpanStart: noop, onSpanEnd: noop, shutdown: noop, forceFlush: noop }])
createRequire(import.meta.url)('toolstack/openai-agents')
await withTrace('t', async () => {})
console.log(JSON.stringify({ hits }))
`
    const r = node(['--input-type=module', '-e', probe])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim().split('\n').at(-1)).toBe('{"hits":1}')
  })
})
