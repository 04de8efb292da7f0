// The page of `toolstack serve --http`, in a real browser: Debian's chromium, driven by Playwright's library
// (playwright-core, no browser download). A host over Streamable HTTP makes the calls a page has to show (a
// misspelled key, a tool that does not exist, a write its human answers "always allow"); the browser, scripts off,
// reads the page while the human is being asked, then takes the grant back; without the token, and from a page of
// another origin, it gets nothing done. Over an upstream that changes its tools once trusted
// (test/mcp/fixtures/rug-server.mjs) with drift "hold", it shows the definitions waiting and accepts one.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { chromium } from 'playwright-core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { cliArgs, eventually, killAll, root, serverFilesystem, tempDir, track } from './support.js'

const CHROMIUM = '/usr/bin/chromium'
const TOKEN = 'page-s3cret'
// a headless Chromium on a shared, offline machine: no sandbox (containers), no GPU, nothing fetched of its own
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

// one Chromium for the file, each test's pages in contexts of their own (no cookie, cache or credential shared);
// a missing browser fails the file, saying how to install it: it is never skipped
let chromiumBrowser: Browser | undefined
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's Chromium (sudo apt-get install -y chromium); .ci/run does`,
    )
  chromiumBrowser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS })
}, 60_000)
afterAll(async () => {
  await chromiumBrowser?.close()
})

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  await killAll()
  for (const c of cleanups.splice(0).reverse()) await c()
})

// a context of its own, closed after the test
const browser = async (options: {
  readonly credentials?: { readonly username: string; readonly password: string }
  readonly scripts: boolean
}): Promise<BrowserContext> => {
  const context = await (chromiumBrowser as Browser).newContext({
    javaScriptEnabled: options.scripts,
    ...(options.credentials === undefined ? {} : { httpCredentials: options.credentials }),
  })
  cleanups.push(() => context.close())
  return context
}

/** The text of the table under a section's heading (`#heard`, `#grants`, …). */
const section = (tab: Page, id: string): Promise<string> => tab.locator(`#${id} + table`).innerText()

/** A `toolstack serve --http` with a filesystem upstream and a file: store, and a host whose human answers "always". */
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
  expect(err).toContain(`(the page: ${new URL('/', mcp).href}; bearer token required`)
  // a host whose human answers "always allow", once `answer` lets them
  const asked: Array<string> = []
  let answer: Promise<void> = Promise.resolve()
  const host = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  host.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message)
    await answer
    return { action: 'accept', content: { action: 'always-allow' } } as never
  })
  await host.connect(
    new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
  )
  cleanups.push(() => host.close())
  await host.listTools()
  await host.callTool({ name: 'fs_read_text_file', arguments: { path: join(dir, 'notes.txt'), haed: 1 } })
  // a tool that does not exist: a JSON-RPC InvalidParams error, as MCP has it
  await expect(host.callTool({ name: 'fs_raed_file', arguments: {} })).rejects.toThrow(
    /there is no tool named "fs_raed_file"/,
  )
  /** A write, asked about; the human answers once `release` is called (at once without `hold`). */
  const write = (name: string, hold = false) => {
    let release = (): void => undefined
    if (hold) answer = new Promise<void>((resolve) => (release = resolve))
    const done = host.callTool({ name: 'fs_write_file', arguments: { path: join(dir, name), content: name } })
    return { done, release }
  }
  const stored = (): { grants: ReadonlyArray<unknown>; revoked?: ReadonlyArray<unknown> } =>
    existsSync(grants) ? JSON.parse(readFileSync(grants, 'utf8')) : { grants: [] }
  return { dir, stored, page: new URL('/', mcp).href, write, asked, err: () => err }
}

/** A write answered "always": the grant is in the store. */
const granted = async (g: Awaited<ReturnType<typeof gatewayWithCalls>>) => {
  await g.write('a.txt').done
  await eventually(() => g.stored().grants.length === 1, 10_000, 'the grant in the store')
}

const RUG = join(root, 'test/mcp/fixtures/rug-server.mjs')

/** A `toolstack serve --http` with drift "hold" over the rug server, a file: store, and a host that lists. */
const gatewayOverRug = async () => {
  const { dir, remove } = tempDir()
  cleanups.push(remove)
  const file = join(dir, 'toolstack.json')
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: { rg: { command: process.execPath, args: [RUG, join(dir, 'phase')] } },
      rules: [{ tool: '*', decision: 'allow' }],
      reasons: false,
      drift: 'hold',
      store: `file:${join(dir, 'store.json')}`,
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
  let told = 0
  const host = new Client({ name: 'host', version: '1' })
  await host.connect(
    new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
  )
  host.setNotificationHandler(ToolListChangedNotificationSchema, () => void (told += 1))
  cleanups.push(() => host.close())
  const names = async () => (await host.listTools()).tools.map((t) => t.name).sort()
  return { host, names, told: () => told, page: new URL('/', mcp).href, err: () => err }
}

describe('the page of toolstack serve --http, in Chromium', () => {
  it('with scripts off, shows the upstream, its tools, what the alarm heard, the open question, the decisions and the grant; Revoke takes it back everywhere', async () => {
    const g = await gatewayWithCalls()
    const context = await browser({ credentials: { username: 'me', password: TOKEN }, scripts: false })
    const tab = await context.newPage()

    // while the human is being asked, the page lists the question
    const w = g.write('a.txt', true)
    await eventually(() => g.asked.length === 1, 10_000, 'the question')
    const response = await tab.goto(g.page)
    expect(response?.status()).toBe(200)
    // nothing is loaded from elsewhere, and no script may run
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'")
    expect(await section(tab, 'questions')).toMatch(
      new RegExp(`fs_write_file\\s+\\S+\\s+fs\\s+${join(g.dir, 'a.txt')}`),
    )
    w.release()
    await w.done
    await eventually(() => g.stored().grants.length === 1, 10_000, 'the grant in the store')

    await tab.reload()
    expect(await section(tab, 'upstreams')).toMatch(/^fs\s+fs\s+up\s+\d+\s+\d+\s+0/m)
    expect(await tab.locator('#tools + details').innerText()).toContain('fs_read_text_file')
    // what the alarm heard: the tool, the key, its did-you-mean, the calls (counted within a second), the first call
    for (let i = 0; !/\bhaed\s+head\s+1\b/.test(await section(tab, 'heard')) && i < 50; i++) await tab.reload()
    expect(await section(tab, 'heard')).toMatch(/fs_read_text_file\s+haed\s+head\s+1\s+\S+\s+fs/)
    expect(await tab.locator('#questions + p').innerText()).toContain('no human is being asked')
    const decisions = await section(tab, 'decisions')
    expect(decisions).toMatch(/fs_raed_file\s+\S+\s+refused\s+no such tool listed/)
    expect(decisions).toMatch(/fs_write_file\s+\S+\s+allowed\s+the human \(asked\)/)
    expect(decisions).toMatch(/fs_read_text_file\s+\S+\s+allowed\s+the rules/)
    expect(await section(tab, 'grants')).toContain(`allow "fs_write_file" under ${g.dir}`)

    // a plain form, no script: the browser posts it, and comes back to the page
    await tab.getByRole('button', { name: 'Revoke' }).click()
    await tab.waitForURL(/\?revoked=[0-9a-f]{16}$/)
    expect(await tab.getByRole('status').innerText()).toMatch(
      /^The grant [0-9a-f]{16} was taken back: from the store, and from every session that held it/,
    )
    expect(await tab.locator('#grants + p').innerText()).toContain('No grant')
    // out of the store, and out of the session: the next write is asked about again
    expect(g.stored()).toMatchObject({ grants: [], revoked: [{ tool: 'fs_write_file' }] })
    await g.write('b.txt').done
    expect(g.asked).toHaveLength(2)
    expect(g.err()).toContain('toolstack serve: a grant was taken back (from the page): allow "fs_write_file"')
  }, 90_000)

  it('without the token the page is refused (401, asking for it as a password), and with a wrong one', async () => {
    const g = await gatewayWithCalls()
    await granted(g)
    const CHALLENGE = 'Basic realm="toolstack serve", charset="UTF-8"'
    // no token: the browser is asked for one, has none to give (headless, no prompt), and shows nothing
    const bare = await (await browser({ scripts: true })).newPage()
    const asked: Array<{ status: number; challenge: string | undefined }> = []
    bare.on('response', (r) => asked.push({ status: r.status(), challenge: r.headers()['www-authenticate'] }))
    await expect(bare.goto(g.page)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/)
    expect(asked).toStrictEqual([{ status: 401, challenge: CHALLENGE }])
    // a wrong token, or the token as the user name: asked again, the browser gives up and shows the refusal
    for (const credentials of [
      { username: 'me', password: 'wrong' },
      { username: TOKEN, password: '' },
    ]) {
      const tab = await (await browser({ scripts: true, credentials })).newPage()
      const response = await tab.goto(g.page)
      expect([response?.status(), response?.headers()['www-authenticate']]).toStrictEqual([401, CHALLENGE])
      const body = await tab.locator('body').innerText()
      expect(body).toContain('Unauthorized: the token is required (any user name, the token as the password)')
      expect(body).not.toContain('fs_write_file')
    }
    // the token in the address, as a user may type it: the page
    const tab = await (await browser({ scripts: false })).newPage()
    const withToken = new URL(g.page)
    withToken.username = 'me'
    withToken.password = TOKEN
    expect((await tab.goto(withToken.href))?.status()).toBe(200)
    expect(await section(tab, 'grants')).toContain('fs_write_file')
  }, 90_000)

  it('a page of another origin, in the same browser, cannot take a grant back: its post is refused (403), the grant stays', async () => {
    const g = await gatewayWithCalls()
    await granted(g)
    const context = await browser({ credentials: { username: 'me', password: TOKEN }, scripts: true })
    // the user has the page open (so the browser holds the credentials); the other page even knows the grant's id
    // and the CSRF token: the browser says where its post comes from, and that is enough to refuse it
    const tab = await context.newPage()
    await tab.goto(g.page)
    const id = await tab.locator('input[name="id"]').getAttribute('value')
    const csrf = await tab.locator('input[name="csrf"]').getAttribute('value')
    expect(id).toMatch(/^[0-9a-f]{16}$/)
    // another origin on the same machine: a page whose script posts the form to the gateway as soon as it loads
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(
        `<form id="f" method="post" action="${g.page}grants/revoke"><input name="id" value="${id}">` +
          `<input name="csrf" value="${csrf}"></form><script>document.getElementById('f').submit()</script>`,
      )
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => {
      evil.closeAllConnections()
      return new Promise<void>((resolve) => evil.close(() => resolve()))
    })
    const evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`
    const attack = await context.newPage()
    const posted = attack.waitForResponse((r) => r.url().endsWith('/grants/revoke'))
    await attack.goto(`${evilOrigin}/`)
    const refused = await posted
    expect((await refused.request().allHeaders())['origin']).toBe(evilOrigin)
    expect(refused.status()).toBe(403)
    expect(JSON.parse(await refused.text())).toMatchObject({
      error: { message: `Forbidden: Origin ${JSON.stringify(evilOrigin)} is not allowed` },
    })
    await tab.reload()
    expect(await section(tab, 'grants')).toContain('fs_write_file')
    expect(g.stored()).toMatchObject({ grants: [{ tool: 'fs_write_file' }] })
    expect(g.err()).not.toContain('taken back')
  }, 90_000)

  it('with scripts off, shows the definitions waiting (a held change, with what changed; a flagged newcomer); Accept serves the tool again and tells the host', async () => {
    const g = await gatewayOverRug()
    expect(await g.names()).toEqual(['rg_fetch_page', 'rg_notes_write', 'rg_rug', 'rg_search', 'rg_stats'])
    // the upstream changes its tools and says so; the changed ones are held
    await g.host.callTool({ name: 'rg_rug', arguments: {} })
    await eventually(() => g.told() > 0, 10_000, 'list_changed')
    expect(await g.names()).toEqual(['rg_helper', 'rg_rug', 'rg_stats'])

    const context = await browser({ credentials: { username: 'me', password: TOKEN }, scripts: false })
    const tab = await context.newPage()
    await tab.goto(g.page)
    const waiting = await section(tab, 'definitions')
    expect(waiting).toMatch(
      /rg_notes_write\s+rg\s+hidden until accepted\s+pinned sha256:\S+, now sha256:\S+\s+schema: keys added: mode/,
    )
    expect(waiting).toMatch(/rg_search\s+rg\s+hidden until accepted[\s\S]*other-tools/)
    expect(waiting).toMatch(/rg_helper\s+rg\s+served \(unchanged\)\s+instructs-model/)
    // a plain form, no script: the row's Accept button posts its hash, and the browser comes back to the page
    const told = g.told()
    await tab.locator('tr', { hasText: 'rg_notes_write' }).getByRole('button', { name: 'Accept' }).click()
    await tab.waitForURL(/\?accepted=sha256:[0-9a-f]{64}$/)
    expect(await tab.getByRole('status').innerText()).toMatch(
      /^The definition sha256:[0-9a-f]{12}… of "rg_notes_write" was accepted: it is the tool's pin now, in the store for every gateway on it, and the tool is served again\.$/,
    )
    expect(await section(tab, 'definitions')).not.toContain('rg_notes_write')
    // served again: the host is told, and lists it
    await eventually(() => g.told() > told, 10_000, 'list_changed after the acceptance')
    expect(await g.names()).toEqual(['rg_helper', 'rg_notes_write', 'rg_rug', 'rg_stats'])
    expect(g.err()).toMatch(/toolstack serve: the definition of "rg_notes_write" \(sha256:[0-9a-f]{64}\) is accepted/)
  }, 90_000)
})
