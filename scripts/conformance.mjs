/* global fetch, AbortSignal */
// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against
// its reference "everything" server, directly and through `toolstack serve --http` fronting that server as its
// only upstream with `"prefix": ""`, as a user would. Prints each scenario's checks both ways, in the suite's
// own order, and exits 1 when a scenario that passes directly fails through the gateway (issue 37).
//
// The suite needs Node 22, the project runs on Node 20: the suite and a Node 22 binary (the registry's
// `node-<platform>-<arch>` package) are test tools, installed by this script into a cache directory outside
// the repository, never dependencies of the package. The reference server is not published on the registry:
// it is the conformance repository's examples/servers/typescript at tag v0.1.16, vendored in
// vendor/conformance-server/ and copied from there into the cache (checked by its SHA-256), where its
// dependencies are installed from its lockfile. Once installed, everything runs offline.
//
//   npm run conformance                    # build, then run both ways
//   TOOLSTACK_CONFORMANCE_HOME=DIR ...     # another cache directory
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const SUITE = { name: '@modelcontextprotocol/conformance', version: '0.1.16' }
const NODE = { name: `node-${process.platform}-${process.arch}`, version: '22.23.5' }
// examples/servers/typescript at tag v0.1.16 of github.com/modelcontextprotocol/conformance
const SERVER_TAG = 'v0.1.16'
const SERVER_SHA256 = {
  'everything-server.ts': '1b81d249da3ac9261980fc76401585446325f5a77e393fd87646f1d8bbfea680',
  'package-lock.json': '0197789dd7492a1ce2acce64e625dfc0563701341956fc8ce11f42811702b632',
}

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const home =
  process.env.TOOLSTACK_CONFORMANCE_HOME ?? join(homedir(), '.cache', 'toolstack', `conformance-${SUITE.version}`)
const toolsDir = join(home, 'tools')
const serverDir = join(home, 'server')
const say = (line) => console.log(`conformance: ${line}`)
const fail = (line, code = 2) => {
  console.error(`conformance: ${line}`)
  process.exit(code)
}

// -------------------------------------------------------------------------------------
// installing the test tools
// -------------------------------------------------------------------------------------

const versionAt = (dir) => {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version
  } catch {
    return undefined
  }
}
const suiteDir = join(toolsDir, 'node_modules', ...SUITE.name.split('/'))
const node22 = join(toolsDir, 'node_modules', NODE.name, 'bin', 'node')

const npm = (args, cwd) => {
  const run = spawnSync('npm', args, { cwd, stdio: 'inherit' })
  if (run.status !== 0) fail(`npm ${args.join(' ')} failed in ${cwd} (exit status ${run.status})`)
}

const installTools = () => {
  if (versionAt(suiteDir) === SUITE.version && versionAt(dirname(dirname(node22))) === NODE.version) return
  say(`installing ${SUITE.name}@${SUITE.version} and ${NODE.name}@${NODE.version} into ${toolsDir}`)
  mkdirSync(toolsDir, { recursive: true })
  if (!existsSync(join(toolsDir, 'package.json')))
    writeFileSync(join(toolsDir, 'package.json'), '{ "private": true }\n')
  // the Node binary is the package's content; no install script is needed
  npm(
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--save-exact',
      `${SUITE.name}@${SUITE.version}`,
      `${NODE.name}@${NODE.version}`,
    ],
    toolsDir,
  )
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

// the reference server, copied from the repository's vendored one where the cache has none, checked against the tag
const vendored = join(repo, 'vendor', 'conformance-server')
const installServer = () => {
  mkdirSync(serverDir, { recursive: true })
  for (const f of readdirSync(vendored))
    if (!existsSync(join(serverDir, f))) writeFileSync(join(serverDir, f), readFileSync(join(vendored, f)))
  for (const [file, expected] of Object.entries(SERVER_SHA256)) {
    const got = sha256(join(serverDir, file))
    if (got !== expected)
      fail(`${join(serverDir, file)} is not the file of tag ${SERVER_TAG} (SHA-256 ${got}, expected ${expected})`)
  }
  if (!existsSync(join(serverDir, 'node_modules', '.bin', 'tsx'))) {
    say(`installing the reference server's dependencies (npm ci in ${serverDir})`)
    npm(['ci', '--no-audit', '--no-fund'], serverDir)
  }
}

// -------------------------------------------------------------------------------------
// processes
// -------------------------------------------------------------------------------------

const freePort = () =>
  new Promise((resolvePort, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolvePort(port))
    })
  })

const started = []
// each process leads a group of its own, so whatever it started ends with it
const start = (name, command, args, options) => {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const out = []
  const keep = (chunk) => {
    out.push(chunk)
    if (out.length > 200) out.shift()
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const entry = { name, child, tail: () => Buffer.concat(out).toString('utf8').split('\n').slice(-20).join('\n') }
  started.push(entry)
  return entry
}
const stopAll = () => {
  for (const { child } of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    try {
      process.kill(-child.pid, 'SIGTERM')
    } catch {
      // already gone
    }
  }
}
process.on('exit', stopAll)
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130))

// until `url` answers (any status), at most `ms`
const waitFor = async (url, entry, ms = 60_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (entry.child.exitCode !== null) fail(`${entry.name} exited (status ${entry.child.exitCode}):\n${entry.tail()}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      await res.body?.cancel()
      if (res.status < 500) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  fail(`${entry.name} did not answer at ${url} within ${ms / 1000} s:\n${entry.tail()}`)
}

// -------------------------------------------------------------------------------------
// the suite
// -------------------------------------------------------------------------------------

// every server scenario (`--suite all`: the pending ones too), each scenario's checks read from its checks.json
const runSuite = (url, outDir) => {
  const run = spawnSync(
    node22,
    [join(suiteDir, 'dist', 'index.js'), 'server', '--url', url, '--suite', 'all', '-o', outDir],
    { cwd: outDir, encoding: 'utf8', maxBuffer: 1 << 26, timeout: 15 * 60_000 },
  )
  const order = [...(run.stdout ?? '').matchAll(/^=== Running scenario: (.+) ===$/gm)].map((m) => m[1])
  if (order.length === 0) fail(`the suite ran no scenario (exit status ${run.status}):\n${run.stdout}\n${run.stderr}`)
  const dirs = readdirSync(outDir)
  const results = new Map()
  for (const scenario of order) {
    const dir = dirs.find(
      (d) => d.startsWith(`server-${scenario}-`) && /\d{4}-\d\d-\d\dT/.test(d.slice(scenario.length + 8)),
    )
    const checks = dir === undefined ? undefined : JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8'))
    const count = (status) => (checks ?? []).filter((c) => c.status === status).length
    results.set(scenario, {
      ran: checks !== undefined,
      passed: count('SUCCESS'),
      failed: checks === undefined ? 1 : count('FAILURE'),
      warnings: count('WARNING'),
      failures: (checks ?? []).filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`),
    })
  }
  return { order, results }
}

const cell = (r) =>
  r === undefined
    ? 'not run'
    : `${r.passed} passed, ${r.failed} failed${r.warnings > 0 ? `, ${r.warnings} warnings` : ''}`
const totals = (results) => {
  let passed = 0
  let failed = 0
  let scenarios = 0
  for (const r of results.values()) {
    passed += r.passed
    failed += r.failed
    if (r.failed === 0) scenarios++
  }
  return { passed, failed, scenarios, of: results.size }
}

// -------------------------------------------------------------------------------------
// main
// -------------------------------------------------------------------------------------

installServer()
installTools()
if (!existsSync(join(repo, 'dist', 'esm', 'cli', 'main.js'))) fail('dist/ is not built: run npm run build first')

const work = mkdtempSync(join(tmpdir(), 'toolstack-conformance-'))
try {
  const serverPort = await freePort()
  // the reference server binds every interface; the preload keeps it on loopback
  const reference = start(
    'the reference server',
    node22,
    [
      '--import',
      join(repo, 'scripts', 'loopback.mjs'),
      join(serverDir, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      'everything-server.ts',
    ],
    { cwd: serverDir, env: { ...process.env, PORT: String(serverPort) } },
  )
  const referenceUrl = `http://localhost:${serverPort}/mcp`
  await waitFor(referenceUrl, reference)

  const config = join(work, 'toolstack.json')
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: { url: referenceUrl, prefix: '' } } }, null, 2))
  const gatewayPort = await freePort()
  const gateway = start(
    'toolstack serve',
    process.execPath,
    [join(repo, 'dist', 'esm', 'cli', 'main.js'), 'serve', '--config', config, '--http', `127.0.0.1:${gatewayPort}`],
    { cwd: work, env: { ...process.env, TOOLSTACK_TOKEN: '' } },
  )
  await waitFor(`http://127.0.0.1:${gatewayPort}/readyz`, gateway)

  say(
    `${SUITE.name}@${SUITE.version} on Node ${NODE.version}; reference server ${SERVER_TAG}; ${process.execPath} runs the gateway`,
  )
  const directOut = join(work, 'direct')
  const gatewayOut = join(work, 'gateway')
  mkdirSync(directOut)
  mkdirSync(gatewayOut)
  const direct = runSuite(referenceUrl, directOut)
  const through = runSuite(`http://localhost:${gatewayPort}/mcp`, gatewayOut)

  const width = Math.max(...direct.order.map((s) => s.length))
  console.log(`\n${'scenario'.padEnd(width)}  ${'directly'.padEnd(34)}  through toolstack serve`)
  const regressions = []
  for (const scenario of direct.order) {
    const d = direct.results.get(scenario)
    const g = through.results.get(scenario)
    const regressed = d.failed === 0 && (g === undefined || g.failed > 0)
    if (regressed) regressions.push(scenario)
    console.log(
      `${scenario.padEnd(width)}  ${cell(d).padEnd(34)}  ${cell(g)}${regressed ? '  ✗ fails only through the gateway' : ''}`,
    )
    for (const f of regressed ? (g?.failures ?? []) : []) console.log(`${' '.repeat(width)}    ${f.slice(0, 300)}`)
  }
  const td = totals(direct.results)
  const tg = totals(through.results)
  console.log(
    `\ndirectly: ${td.scenarios} of ${td.of} scenarios pass, ${td.passed} checks passed, ${td.failed} failed` +
      `\nthrough toolstack serve: ${tg.scenarios} of ${tg.of} scenarios pass, ${tg.passed} checks passed, ${tg.failed} failed`,
  )
  if (regressions.length > 0) {
    console.log(
      `conformance: ${regressions.length} scenario(s) pass directly but fail through the gateway: ${regressions.join(', ')}`,
    )
    process.exitCode = 1
  } else console.log('conformance: every scenario that passes directly passes through the gateway')
} finally {
  stopAll()
  rmSync(work, { recursive: true, force: true })
}
