// A real SDK client gets exactly what it gets connected directly, through the proxy,
// from the real reference servers.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HOST_CONFIG } from '../../src/cli/hostConfig.js'
import { cliArgs, descendants, killTree, root, serverEverything, serverFilesystem, tempDir } from './support.js'

const require = createRequire(import.meta.url)

let tmp: ReturnType<typeof tempDir>
const open: Array<{ readonly client: Client; readonly transport: StdioClientTransport }> = []
beforeEach(() => {
  tmp = tempDir()
})
afterEach(async () => {
  for (const { client, transport } of open.splice(0)) {
    const pid = transport.pid
    const tree = pid === null ? [] : [pid, ...descendants(pid)]
    await client.close().catch(() => undefined)
    for (const p of tree) killTree(p)
  }
  tmp.remove()
})

const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

interface Connected {
  readonly client: Client
  readonly notes: Array<unknown>
  /** Closes the client, waits for the process's stderr to end, and returns it all. */
  readonly stderrAtEnd: () => Promise<string>
}

const connect = async (server: ReadonlyArray<string>, proxied: boolean): Promise<Connected> => {
  const args = proxied ? cliArgs('proxy', '--', process.execPath, ...server) : [...server]
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: root, stderr: 'pipe' })
  let err = ''
  transport.stderr?.on('data', (b: Buffer) => (err += b.toString()))
  // the proxy's audit runs on its own thread: a warning can follow the call's response,
  // so stderr is read once the process is done
  const ended = new Promise<void>((resolve) =>
    transport.stderr === null ? resolve() : transport.stderr.once('end', resolve),
  )
  const client = new Client(
    { name: 'test-host', version: '1.0.0' },
    { capabilities: { sampling: {}, roots: { listChanged: true }, elicitation: {} } },
  )
  const notes: Array<unknown> = []
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    model: 'test-model',
    role: 'assistant',
    content: { type: 'text', text: `sampled ${JSON.stringify(req.params.messages[0]?.content)}` },
  }))
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: 'file:///srv/project', name: 'project' }],
  }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }))
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void notes.push(n))
  client.setNotificationHandler(ToolListChangedNotificationSchema, async (n) => void notes.push(n))
  client.fallbackNotificationHandler = async (n) => void notes.push(n)
  open.push({ client, transport })
  await client.connect(transport)
  const stderrAtEnd = async (): Promise<string> => {
    await client.close().catch(() => undefined)
    await Promise.race([ended, settle(10_000)])
    return err
  }
  return { client, notes, stderrAtEnd }
}

describe('toolstack proxy with a real SDK client', () => {
  it(
    'server-everything: same tools, results, notifications and server-to-client requests as direct',
    { timeout: 60_000 },
    async () => {
      const session = async (proxied: boolean): Promise<{ readonly transcript: unknown; readonly stderr: string }> => {
        const { client, notes, stderrAtEnd } = await connect([serverEverything, 'stdio'], proxied)
        // the server registers tools that depend on the client's capabilities, then
        // asks for roots, after initialisation
        await settle(1000)
        const progress: Array<unknown> = []
        const transcript = {
          server: client.getServerVersion(),
          capabilities: client.getServerCapabilities(),
          instructions: client.getInstructions(),
          tools: await client.listTools(),
          prompts: await client.listPrompts(),
          resources: await client.listResources(),
          templates: await client.listResourceTemplates(),
          echo: await client.callTool({ name: 'echo', arguments: { message: 'hello é 😀' } }),
          mangled: await client.callTool({ name: 'echo', arguments: { message: 'x', mesage: 'y', reason: 'why' } }),
          sum: await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }),
          image: await client.callTool({ name: 'get-tiny-image', arguments: {} }),
          structured: await client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } }),
          sampling: await client.callTool({
            name: 'trigger-sampling-request',
            arguments: { prompt: 'hi', maxTokens: 5 },
          }),
          roots: await client.callTool({ name: 'get-roots-list', arguments: {} }),
          env: await client.callTool({ name: 'get-env', arguments: {} }),
          long: await client.callTool(
            { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
            undefined,
            { onprogress: (p) => void progress.push(p) },
          ),
          unknownTool: await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: unknown) => String(e)),
          prompt: await client.getPrompt({ name: 'simple-prompt' }).catch((e: unknown) => String(e)),
          progress,
          ping: await client.ping(),
        }
        await settle(200)
        return { transcript: { ...transcript, notes }, stderr: await stderrAtEnd() }
      }
      const direct = await session(false)
      const proxied = await session(true)
      // The server sends its last progress notification and its answer from racing
      // timers, and the SDK drops progress that arrives after the answer, so even two
      // direct sessions can differ there: progress is compared as what it must be (the
      // steps in order, none missing but possibly the last), the rest exactly.
      const withoutProgress = (t: unknown): unknown => ({ ...(t as object), progress: undefined })
      expect(withoutProgress(proxied.transcript)).toEqual(withoutProgress(direct.transcript))
      for (const { transcript } of [direct, proxied]) {
        const steps = (transcript as { progress: Array<{ progress: number; total: number }> }).progress
        expect(steps.map((p) => p.progress)).toEqual([1, 2, 3].slice(0, steps.length))
        expect(steps.length).toBeGreaterThanOrEqual(2)
      }
      const t = direct.transcript as {
        sampling: unknown
        roots: unknown
        progress: Array<unknown>
        notes: Array<{ method: string }>
      }
      // the exchanges did happen: not two identical failures
      expect(JSON.stringify(t.sampling)).toContain('sampled')
      expect(JSON.stringify(t.roots)).toContain('file:///srv/project')
      expect(t.progress.length).toBeGreaterThan(0)
      expect(t.notes.map((n) => n.method)).toContain('notifications/tools/list_changed')
      // the proxy said its piece on stderr, once, and only through the proxy
      const warnings = proxied.stderr.split('\n').filter((l) => l.startsWith('toolstack:'))
      expect(warnings).toEqual([
        expect.stringMatching(
          /^toolstack: echo call \d+ carried undeclared argument key "mesage" \(declared: "message"\)( \(did you mean message\?\))?$/,
        ),
      ])
      expect(direct.stderr).not.toContain('toolstack:')
    },
  )

  it('server-filesystem on a temp dir: same results as direct', { timeout: 60_000 }, async () => {
    const dir = join(tmp.dir, 'srv')
    mkdirSync(join(dir, 'sub'), { recursive: true })
    writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n')
    const stderr: Array<string> = []
    const session = async (proxied: boolean): Promise<unknown> => {
      const { client, stderrAtEnd } = await connect([serverFilesystem, dir], proxied)
      const out = {
        tools: await client.listTools(),
        allowed: await client.callTool({ name: 'list_allowed_directories', arguments: {} }),
        read: await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'a.txt'), head: 1 } }),
        write: await client.callTool({ name: 'write_file', arguments: { path: join(dir, 'w.txt'), content: 'x' } }),
        outside: await client.callTool({ name: 'read_text_file', arguments: { path: '/etc/passwd' } }),
        search: await client.callTool({ name: 'search_files', arguments: { path: dir, pattern: '*.txt' } }),
        list: await client.callTool({ name: 'list_directory', arguments: { path: dir } }),
        mangled: await client.callTool({
          name: 'read_text_file',
          arguments: { path: join(dir, 'a.txt'), tail: 1, ofset: 2 },
        }),
      }
      stderr.push(await stderrAtEnd())
      return out
    }
    const direct = await session(false)
    const proxied = await session(true)
    expect(proxied).toEqual(direct)
    expect(JSON.stringify(direct)).toContain('alpha')
    expect(stderr[0]).not.toContain('toolstack:')
    expect(stderr[1]).toMatch(
      /toolstack: read_text_file call \d+ carried undeclared argument key "ofset" \(declared: "head", "path", "tail"\)/,
    )
    expect(stderr[1]?.match(/toolstack:/g)).toHaveLength(1)
  })

  it(
    'server-filesystem edit_file through the proxy: a key misspelled in every edit is named once by its path',
    { timeout: 60_000 },
    async () => {
      const dir = join(tmp.dir, 'nested')
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'a.txt'), 'alpha\n')
      const { client, stderrAtEnd } = await connect([serverFilesystem, dir], true)
      await client.listTools()
      const edits = [
        { oldtext: 'alpha', newText: 'beta' },
        { oldtext: 'alpha', newText: 'gamma' },
      ]
      for (const id of [1, 2])
        await client.callTool({ name: 'edit_file', arguments: { path: join(dir, 'a.txt'), edits, dryRun: id === 1 } })
      const said = (await stderrAtEnd()).split('\n').filter((l) => l.startsWith('toolstack:'))
      expect(said).toEqual([
        expect.stringMatching(
          /^toolstack: edit_file call \d+ carried undeclared argument key "edits\[\]\.oldtext" \(declared: "dryRun", "edits", "path"\) \(did you mean edits\[\]\.oldText\?\)$/,
        ),
      ])
      expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('alpha\n')
    },
  )

  // The configuration the help and the README show, run as a host would run it, with
  // `toolstack` the built dist/'s bin, each `npx -y PACKAGE` the bin of the package
  // installed here, and its directory a temporary one.
  it(
    'the host configuration in the help runs: the tools of the official filesystem server, audited',
    { timeout: 60_000 },
    async () => {
      const entry = (
        JSON.parse(HOST_CONFIG) as { mcpServers: Record<string, { command: string; args: Array<string> }> }
      ).mcpServers['filesystem']
      const argv = [entry?.command ?? '', ...(entry?.args ?? [])]
      const binOf = (pkg: string): string => {
        const dir = pkg === 'toolstack' ? root : dirname(require.resolve(`${pkg}/package.json`))
        const bin = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin
        return join(dir, Object.values(bin)[0] ?? '')
      }
      expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(HOST_CONFIG)
      const local: Array<string> = []
      for (let i = 0; i < argv.length; i++) {
        if (argv[i] === 'toolstack') local.push(process.execPath, binOf('toolstack'))
        else if (argv[i] === 'npx' && argv[i + 1] === '-y') {
          local.push(process.execPath, binOf(argv[i + 2] ?? ''))
          i += 2
        } else local.push(argv[i] ?? '')
      }
      const dir = join(tmp.dir, 'projects')
      mkdirSync(dir)
      writeFileSync(join(dir, 'a.txt'), 'alpha\n')
      expect(local.at(-1)).toBe('/path/to/project')
      local[local.length - 1] = dir
      expect(local.filter((a) => a === process.execPath)).toHaveLength(2)

      const transport = new StdioClientTransport({
        command: local[0] ?? '',
        args: local.slice(1),
        cwd: root,
        stderr: 'pipe',
      })
      let err = ''
      transport.stderr?.on('data', (b: Buffer) => (err += b.toString()))
      const ended = new Promise<void>((resolve) =>
        transport.stderr === null ? resolve() : transport.stderr.once('end', resolve),
      )
      const client = new Client({ name: 'test-host', version: '1.0.0' })
      open.push({ client, transport })
      await client.connect(transport)
      const tools = (await client.listTools()).tools.map((t) => t.name)
      expect(tools).toContain('read_text_file')
      const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'a.txt'), heda: 1 } })
      expect(JSON.stringify(read)).toContain('alpha')
      await client.close()
      await Promise.race([ended, settle(10_000)])
      expect(err).toMatch(/toolstack: read_text_file call \d+ carried undeclared argument key "heda"/)
    },
  )
})
