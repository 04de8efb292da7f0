// Installable as users install: a fresh copy of the repository (no dist/, as a git
// clone is) is packed with `npm pack`, whose `prepare` script builds it; the tarball is
// installed into a new project, whose code then loads it with `import` and
// `require()` and runs its `toolstack` bin. A git install runs the same `prepare`.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const work = mkdtempSync(join(tmpdir(), 'toolstack-pack-'))
const clone = join(work, 'clone')
const user = join(work, 'user')
let tarball = ''
let packed: ReadonlyArray<string> = []

// what `git clone` would give: the files git knows (tracked, or new and not ignored)
const repositoryFiles = (): ReadonlyArray<string> =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(root, f)))

beforeAll(() => {
  for (const f of repositoryFiles()) {
    mkdirSync(dirname(join(clone, f)), { recursive: true })
    cpSync(join(root, f), join(clone, f))
  }
  expect(existsSync(join(clone, 'dist'))).toBe(false)
  // the dev dependencies prepare needs, as `npm install` would have put them
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
  const out = execFileSync(npm, ['pack', '--json', '--pack-destination', work], {
    cwd: clone,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const info = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>
  tarball = join(work, (info[0] as { filename: string }).filename)
  packed = (info[0] as { files: Array<{ path: string }> }).files.map((f) => f.path)
  mkdirSync(user)
  writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'user', version: '1.0.0', private: true }))
  execFileSync(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
    cwd: user,
    stdio: 'ignore',
  })
}, 240_000)

afterAll(() => rmSync(work, { recursive: true, force: true, maxRetries: 5 }))

const inUser = (args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, args, { cwd: user, encoding: 'utf8', timeout: 30_000 })

describe('the packed package, installed as a user installs it', () => {
  it('packs the built package, not only the README and package.json', () => {
    expect(packed).toContain('dist/esm/index.js')
    expect(packed).toContain('dist/cjs/index.js')
    expect(packed).toContain('dist/esm/index.d.ts')
    expect(packed).toContain('dist/esm/mcp/index.js')
    expect(packed).toContain('dist/esm/gateway/index.js')
    expect(packed).toContain('dist/esm/cli/main.js')
    expect(packed.some((f) => f.startsWith('src/') || f.startsWith('test/'))).toBe(false)
  })

  it('ships its LICENSE and the docs the README links to', () => {
    expect(packed).toContain('LICENSE')
    expect(readFileSync(join(user, 'node_modules', 'toolstack', 'LICENSE'), 'utf8')).toMatch(/^MIT License/)
    const linked = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/\]\((docs\/[^)#\s]+)/g)].map(
      (m) => m[1] as string,
    )
    expect(linked).toContain('docs/serve.md')
    for (const doc of linked) expect(packed, doc).toContain(doc)
  })

  it('loads with import and with require()', () => {
    const esm = inUser([
      '--input-type=module',
      '-e',
      "const t = await import('toolstack'); console.log(typeof t.withUnknownKeyAudit, typeof t.pipe)",
    ])
    expect(esm.stderr).toBe('')
    expect(esm.stdout.trim()).toBe('function undefined')
    const cjs = inUser(['-e', "const t = require('toolstack'); console.log(typeof t.withUnknownKeyAudit)"])
    expect(cjs.stderr).toBe('')
    expect(cjs.stdout.trim()).toBe('function')
  })

  it('loads toolstack/extend with import and with require()', () => {
    const esm = inUser([
      '--input-type=module',
      '-e',
      "const t = await import('toolstack/extend'); console.log(typeof t.batchOf, typeof t.withUnknownKeyAudit)",
    ])
    expect(esm.stderr).toBe('')
    expect(esm.stdout.trim()).toBe('function undefined')
    const cjs = inUser(['-e', "const t = require('toolstack/extend'); console.log(typeof t.batchOf)"])
    expect(cjs.stderr).toBe('')
    expect(cjs.stdout.trim()).toBe('function')
  })

  it('loads toolstack/gateway (the gateway) and toolstack/mcp (the adapters) apart, with import and require()', () => {
    const esm = inUser([
      '--input-type=module',
      '-e',
      "const g = await import('toolstack/gateway'); const m = await import('toolstack/mcp'); console.log(typeof g.startGateway, typeof m.startGateway, typeof m.toMcpServer)",
    ])
    expect(esm.stderr).toBe('')
    expect(esm.stdout.trim()).toBe('function undefined function')
    const cjs = inUser(['-e', "const g = require('toolstack/gateway'); console.log(typeof g.openStore)"])
    expect(cjs.stderr).toBe('')
    expect(cjs.stdout.trim()).toBe('function')
  })

  it('loads the Anthropic, Google and Claude Agent entry points without their SDKs (types only); the MCP SDK comes with toolstack', () => {
    for (const [subpath, name] of [
      ['toolstack/anthropic', 'executeToolUses'],
      ['toolstack/google', 'executeFunctionCalls'],
      ['toolstack/claude-agent', 'claudeAgentAudit'],
    ] as const) {
      const esm = inUser([
        '--input-type=module',
        '-e',
        `const m = await import('${subpath}'); console.log(typeof m.${name})`,
      ])
      expect(esm.stderr, subpath).toBe('')
      expect(esm.stdout.trim()).toBe('function')
      const cjs = inUser(['-e', `console.log(typeof require('${subpath}').${name})`])
      expect(cjs.stderr, subpath).toBe('')
      expect(cjs.stdout.trim()).toBe('function')
    }
    // a dependency: the command needs it, and a global install gets no optional peer
    expect(existsSync(join(user, 'node_modules', '@modelcontextprotocol', 'sdk'))).toBe(true)
    const mcp = inUser([
      '--input-type=module',
      '-e',
      "const m = await import('toolstack/gateway'); console.log(typeof m.startGateway)",
    ])
    expect(mcp.stderr).toBe('')
    expect(mcp.stdout.trim()).toBe('function')
  })

  it('an entry point whose framework is missing says which package, and the command that installs it, by import and by require', () => {
    for (const [subpath, needs, install] of [
      ['toolstack/ai-sdk', 'ai', 'ai'],
      ['toolstack/langchain', '@langchain/core', '@langchain/core'],
      ['toolstack/openai-agents', '@openai/agents-core (from @openai/agents)', '@openai/agents'],
    ] as const) {
      const said = `${subpath} needs ${needs}, which is not installed; install it: npm install ${install} (with a global toolstack: npm install -g ${install})`
      const esm = inUser([
        '--input-type=module',
        '-e',
        `await import('${subpath}').catch((e) => console.log(e.message))`,
      ])
      expect(esm.stdout.startsWith(said), esm.stdout + esm.stderr).toBe(true)
      const cjs = inUser(['-e', `try { require('${subpath}') } catch (e) { console.log(e.message) }`])
      expect(cjs.stdout.startsWith(said), cjs.stdout + cjs.stderr).toBe(true)
    }
    // what needs nothing optional still loads: the root, and the MCP entry point; and toolstack/otel, whose
    // @opentelemetry/api comes with prom-client (a dependency, for the gateway's /metrics)
    expect(inUser(['-e', "require('toolstack'); require('toolstack/mcp'); require('toolstack/otel')"]).status).toBe(0)
  })

  it('installed globally (what a host configuration with "command": "toolstack" runs), serves; a redis:// store names the package, which installed globally beside it is found', async () => {
    const prefix = join(work, 'global')
    const npmGlobal = (...args: ReadonlyArray<string>) =>
      execFileSync(npm, ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', ...args], {
        cwd: work,
        stdio: 'ignore',
        env: { ...process.env, npm_config_ignore_scripts: 'true' },
      })
    npmGlobal(tarball)
    const bin = join(prefix, 'bin', 'toolstack')
    const config = join(work, 'global.json')
    const whoami = join(root, 'test', 'mcp', 'fixtures', 'whoami-server.mjs')
    writeFileSync(config, JSON.stringify({ mcpServers: { who: { command: process.execPath, args: [whoami] } } }))
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'host', version: '1' } },
    })
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
    // a host: initializes, lists, and closes stdin once the listing is answered (or the command exits)
    const serve = (...more: ReadonlyArray<string>) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(bin, ['serve', '--config', config, ...more], { cwd: work, stdio: ['pipe', 'pipe', 'pipe'] })
        let stdout = ''
        let stderr = ''
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
        child.stdout.setEncoding('utf8').on('data', (s: string) => {
          stdout += s
          if (stdout.includes('"id":1')) child.stdin.end()
        })
        child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
        child.stdin.on('error', () => undefined)
        child.stdin.write(`${init}\n${initialized}\n${list}\n`)
        child.once('close', (status) => {
          clearTimeout(timer)
          resolve({ status, stdout, stderr })
        })
      })
    const served = await serve()
    const listed = served.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { id?: number; result?: { tools?: Array<{ name: string }> } })
      .find((m) => m.id === 1)
    expect(
      listed?.result?.tools?.map((t) => t.name),
      served.stderr,
    ).toContain('who_whoami')
    const noRedis = await serve('--store', 'redis://127.0.0.1:1')
    expect(noRedis.status).toBe(2)
    expect(noRedis.stderr).toContain(
      'a redis:// store needs the package redis, which is not installed; install it: npm install redis (with a global toolstack: npm install -g redis)',
    )
    npmGlobal('redis')
    const withRedis = await serve('--store', 'redis://127.0.0.1:1')
    expect(withRedis.stderr).not.toContain('needs the package redis')
    expect(withRedis.stderr).toContain('cannot be reached')
  }, 240_000)

  it('refuses a module that is not an entry point: what is not in exports stays internal', () => {
    const esm = inUser(['--input-type=module', '-e', "await import('toolstack/dist/esm/kernel/model.js')"])
    expect(esm.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/)
    const cjs = inUser(['-e', "require('toolstack/dist/cjs/steps/Batch.js')"])
    expect(cjs.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/)
  })

  it('runs its bin', () => {
    const bin = join(user, 'node_modules', '.bin', 'toolstack')
    expect(existsSync(bin)).toBe(true)
    const r = spawnSync(bin, ['--version'], { cwd: user, encoding: 'utf8', timeout: 30_000 })
    expect(r.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version,
    )
    expect(readdirSync(join(user, 'node_modules', 'toolstack', 'dist'))).toEqual(expect.arrayContaining(['esm', 'cjs']))
  })

  it('names in --help a doc that the installed package holds', () => {
    const r = spawnSync(join(user, 'node_modules', '.bin', 'toolstack'), ['serve', '--help'], {
      cwd: user,
      encoding: 'utf8',
      timeout: 30_000,
    })
    const named = /node_modules\/toolstack\/(docs\/[\w.-]+\.md)/.exec(r.stdout)?.[1]
    expect(named, r.stdout).toBe('docs/serve.md')
    expect(existsSync(join(user, 'node_modules', 'toolstack', named as string))).toBe(true)
  })
})
