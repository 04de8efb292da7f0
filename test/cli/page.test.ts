// The page of `toolstack serve --http`, in a real browser: Debian's chromium, driven by Playwright's library
// (playwright-core, no browser download). A host over Streamable HTTP makes the calls a page has to show (a
// misspelled key, a tool that does not exist, a write its human answers "always allow"); the browser, scripts off,
// reads the page and takes the grant back; without the token, and from another site, it gets nothing done.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { BrowserContext } from 'playwright-core'
import { chromium } from 'playwright-core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { cliArgs, eventually, killAll, serverFilesystem, tempDir, track } from './support.js'

const CHROMIUM = '/usr/bin/chromium'
const TOKEN = 'page-s3cret'
// what .ci/run and the brief ask of a headless Chromium on a shared, offline machine
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  killAll()
})

// a browser of its own, with an empty profile, closed after the test
const browser = async (options: {
  readonly credentials?: { readonly username: string; readonly password: string }
  readonly scripts: boolean
}): Promise<BrowserContext> => {
  const profile = mkdtempSync(join(tmpdir(), 'toolstack-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: FLAGS,
    javaScriptEnabled: options.scripts,
    ...(options.credentials === undefined ? {} : { httpCredentials: options.credentials }),
  })
  cleanups.push(async () => {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return context
}

const gatewayWithCalls = async () => {
  const { dir, remove } = tempDir()
  cleanups.push(remove)
  writeFileSync(join(dir, 'notes.txt'), 'one\ntwo\n')
  const grants = join(dir, 'grants.json')
  const file = join(dir, 'toolstack.json')
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: { fs: { command: process.execPath, args: [serverFilesystem, dir] } },
      rules: [
        { tool: 'fs_read_text_file', decision: 'allow' },
        { tool: 'fs_write_file', decision: 'ask', under: dir },
      ],
      store: `file:${grants}`,
    }),
  )
  const child = track(process.execPath, cliArgs('serve', '--config', file, '--http', '127.0.0.1:0'), {
    env: { ...process.env, TOOLSTACK_TOKEN: TOKEN, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()))
  await eventually(() => /listening on (\S+)/.test(err) || child.exitCode !== null, 30_000, 'the gateway')
  const mcp = /listening on (\S+)/.exec(err)?.[1] ?? ''
  const page = new URL('/', mcp).href
  // a host whose human answers "always allow"
  const asked: Array<string> = []
  const host = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  host.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message)
    return { action: 'accept', content: { action: 'always-allow' } } as never
  })
  await host.connect(
    new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
  )
  cleanups.push(() => host.close())
  await host.listTools()
  const read = await host.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: 1 } })
  await host.callTool({ name: 'fs_raed_file', arguments: {} })
  await host.callTool({ name: 'fs_write_file', arguments: { path: join(dir, 'a.txt'), content: 'a' } })
  expect(asked).toHaveLength(1)
  await eventually(
    () => existsSync(grants) && readFileSync(grants, 'utf8').includes('fs_write_file'),
    10_000,
    'the grant',
  )
  return { dir, grants, page, host, asked, err: () => err, readId: (read as { content: unknown }).content }
}

describe('the page of toolstack serve --http, in Chromium', () => {
  it('with scripts off, shows the upstreams, their tools, what the alarm heard, the decisions and the grant; Revoke takes it back everywhere', async () => {
    const g = await gatewayWithCalls()
    const context = await browser({ credentials: { username: 'me', password: TOKEN }, scripts: false })
    const tab = await context.newPage()
    const response = await tab.goto(g.page)
    expect(response?.status()).toBe(200)
    // nothing is loaded from elsewhere, and no script may run
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'")
    const upstreams = await tab.locator('#upstreams + table').innerText()
    expect(upstreams).toMatch(/fs\s+fs\s+up/)
    expect(await tab.locator('#tools + details').innerText()).toContain('fs_read_text_file')
    const heard = await tab.locator('#heard + table').innerText()
    expect(heard).toMatch(/fs_read_text_file\s+haed\s+head\s+1\s+mcp_\S+\s+fs/)
    const decisions = await tab.locator('#decisions + table').innerText()
    expect(decisions).toMatch(/fs_raed_file\s+\S+\s+refused\s+no such tool listed/)
    expect(decisions).toMatch(/fs_write_file\s+\S+\s+allowed\s+the human \(asked\)/)
    expect(decisions).toMatch(/fs_read_text_file\s+\S+\s+allowed\s+the rules/)
    const grants = tab.locator('#grants + table')
    expect(await grants.innerText()).toContain(`allow "fs_write_file" under ${g.dir}`)

    // a plain form, no script: the browser posts it, and comes back to the page
    await tab.getByRole('button', { name: 'Revoke' }).click()
    await tab.waitForURL(/\?revoked=[0-9a-f]{16}$/)
    expect(await tab.getByRole('status').innerText()).toMatch(/^The grant [0-9a-f]{16} was taken back/)
    expect(await tab.locator('#grants + p').innerText()).toContain('No grant')
    // out of the store, and out of the session: the next write is asked about again
    expect(JSON.parse(readFileSync(g.grants, 'utf8'))).toMatchObject({
      grants: [],
      revoked: [{ tool: 'fs_write_file' }],
    })
    await g.host.callTool({ name: 'fs_write_file', arguments: { path: join(g.dir, 'b.txt'), content: 'b' } })
    expect(g.asked).toHaveLength(2)
    expect(g.err()).toContain('toolstack serve: a grant was taken back (from the page): allow "fs_write_file"')
  }, 90_000)

  it('without the token the page is refused (401, asking for it), and with a wrong one', async () => {
    const g = await gatewayWithCalls()
    const bare = await (await browser({ scripts: true })).newPage()
    const response = await bare.goto(g.page)
    expect(response?.status()).toBe(401)
    expect(response?.headers()['www-authenticate']).toBe('Basic realm="toolstack serve", charset="UTF-8"')
    expect(await bare.content()).not.toContain('fs_write_file')
    // a wrong password: the browser is refused again, and gives up
    const wrong = await (await browser({ credentials: { username: 'me', password: 'wrong' }, scripts: true })).newPage()
    await expect(wrong.goto(g.page)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/)
  }, 90_000)

  it('a page of another site, in the same browser, cannot take a grant back: its post is refused (403), the grant stays', async () => {
    const g = await gatewayWithCalls()
    const context = await browser({ credentials: { username: 'me', password: TOKEN }, scripts: true })
    // the user has the page open (so the browser holds the credentials) and knows the grant's id
    const tab = await context.newPage()
    await tab.goto(g.page)
    const id = await tab.locator('input[name="id"]').getAttribute('value')
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    // another site: a page whose script posts the form to the gateway as soon as it loads
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(
        `<form id="f" method="post" action="${g.page}grants/revoke"><input name="id" value="${id}">` +
          `<input name="csrf" value="guessed"></form><script>document.getElementById('f').submit()</script>`,
      )
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => evil.close(() => resolve())))
    const attack = await context.newPage()
    attack.on('response', (r) => console.log('RESP', r.status(), r.url()))
    attack.on('request', (r) => console.log('REQ', r.method(), r.url(), JSON.stringify(r.headers())))
    attack.on('requestfailed', (r) => console.log('FAIL', r.url(), r.failure()?.errorText))
    const posted = attack.waitForResponse((r) => r.url().endsWith('/grants/revoke'))
    await attack.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`)
    expect((await posted).status()).toBe(403)
    await tab.reload()
    expect(await tab.locator('#grants + table').innerText()).toContain('fs_write_file')
    expect(JSON.parse(readFileSync(g.grants, 'utf8'))).toMatchObject({ grants: [{ tool: 'fs_write_file' }] })
  }, 90_000)
})
