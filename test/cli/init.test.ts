// `toolstack init`, run as a user runs it: from a command, from the host configuration it finds (HOME and the
// working directory are the test's), from --from; never replacing a file without --force; and what it writes is a
// configuration `toolstack check` accepts, and whose upstream starts and lists.
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, serverFilesystem, tempDir } from './support.js'

const cleanups: Array<() => void> = []
afterEach(async () => {
  await killAll()
  for (const c of cleanups.splice(0).reverse()) c()
})

const fresh = (): string => {
  const { dir, remove } = tempDir()
  cleanups.push(remove)
  return dir
}

// the CLI in `cwd`, with HOME (where the user's hosts keep their files) there too unless given
const inDir = (cwd: string, args: ReadonlyArray<string>, home = cwd) =>
  runCli(args, { cwd, env: { ...process.env, NO_COLOR: '1', HOME: home, XDG_CONFIG_HOME: join(home, '.config') } })

describe('toolstack init', () => {
  it('from a command: writes a starter that toolstack check accepts and starts; never replaces it without --force', async () => {
    const dir = fresh()
    const made = await inDir(dir, ['init', '--', process.execPath, serverFilesystem, dir])
    expect(made.status, made.stderr).toBe(0)
    expect(made.stdout.toString()).toMatch(/^wrote toolstack\.json from the command line: 1 upstream \("filesystem"\)/m)
    const written = readFileSync(join(dir, 'toolstack.json'), 'utf8')
    const config = JSON.parse(written) as { mcpServers: Record<string, unknown>; rules: Array<{ tool: string }> }
    expect(config.mcpServers).toEqual({ filesystem: { command: process.execPath, args: [serverFilesystem, dir] } })
    expect(config.rules).toContainEqual({ tool: 'filesystem_list_directory', decision: 'allow' })

    // what check says of it: valid, and the server starts and lists
    const checked = await inDir(dir, ['check', 'toolstack.json'])
    expect(checked.status, checked.stdout.toString()).toBe(0)
    expect(checked.stdout.toString()).toMatch(/^ok {4}upstream "filesystem": started \(pid \d+\), listed \d+ tools/m)

    // a second init leaves the file as it is, and says how to replace it
    const again = await inDir(dir, ['init', '--name', 'files', '--', process.execPath, serverFilesystem, dir])
    expect(again.status).toBe(2)
    expect(again.stderr).toContain('toolstack init: toolstack.json exists; it is left as it is (--force replaces it')
    expect(readFileSync(join(dir, 'toolstack.json'), 'utf8')).toBe(written)
    const forced = await inDir(dir, [
      'init',
      '--force',
      '--name',
      'files',
      '--',
      process.execPath,
      serverFilesystem,
      dir,
    ])
    expect(forced.status, forced.stderr).toBe(0)
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'toolstack.json'), 'utf8')).mcpServers)).toEqual(['files'])
  })

  it('from the host configurations it finds: the project’s first, a proxied entry unwrapped, the rest said', async () => {
    const home = fresh()
    const project = join(home, 'project')
    mkdirSync(join(project, '.vscode'), { recursive: true })
    mkdirSync(join(home, '.cursor'), { recursive: true })
    // VS Code's shape: "servers", with a "type"
    writeFileSync(
      join(project, '.vscode', 'mcp.json'),
      JSON.stringify({
        servers: {
          'my files': {
            type: 'stdio',
            command: 'toolstack',
            args: ['proxy', '--log', '/tmp/x.log', '--', process.execPath, serverFilesystem, project],
          },
          web: { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } },
          off: { command: 'npx', disabled: true },
          gateway: { command: 'toolstack', args: ['serve', '--config', 'toolstack.json'] },
          odd: { command: 'node', args: ['x.js'], envFile: '.env', sampling: { x: 1 } },
        },
        inputs: [],
      }),
    )
    writeFileSync(join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: { a: { command: 'a' } } }))
    const made = await inDir(project, ['init'], home)
    expect(made.status, made.stderr).toBe(0)
    expect(made.stdout.toString()).toContain(
      `from VS Code (this project)'s ${join(project, '.vscode', 'mcp.json')}: 3 upstreams`,
    )
    expect(made.stderr).toContain(
      `toolstack init: also found Cursor's ${join(home, '.cursor', 'mcp.json')} (use --from to take it)`,
    )
    expect(made.stderr).toContain('left out "off": the host has it disabled')
    expect(made.stderr).toContain('left out "gateway": it is a toolstack gateway already')
    expect(made.stderr).toContain('"odd": not copied: "sampling"')
    const config = JSON.parse(readFileSync(join(project, 'toolstack.json'), 'utf8')) as Record<string, unknown>
    expect(config['mcpServers']).toEqual({
      'my files': { command: process.execPath, args: [serverFilesystem, project], prefix: 'my_files' },
      web: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } },
      odd: { command: 'node', args: ['x.js'] },
    })
    // the file is valid (check's first line); "web" and "odd" cannot start here, which check says too
    const checked = await inDir(project, ['check', 'toolstack.json'], home)
    const lines = checked.stdout.toString().split('\n')
    expect(lines[0]).toBe('ok    toolstack.json: a valid configuration: 3 upstreams, 10 rules')
    expect(lines).toContainEqual(expect.stringMatching(/^ok {4}upstream "my files": started/))
    expect(checked.status).toBe(1)
  })

  it('--from a file; nothing found; a file that is not one; hostile names escaped', async () => {
    const dir = fresh()
    const none = await inDir(dir, ['init'])
    expect(none.status).toBe(2)
    expect(none.stderr).toMatch(
      /found no host configuration \(.*\.mcp\.json.*\); give one with --from FILE, or a server/,
    )
    writeFileSync(join(dir, 'bad.json'), '{')
    const bad = await inDir(dir, ['init', '--from', 'bad.json'])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toMatch(/cannot read bad\.json: /)
    writeFileSync(
      join(dir, 'host.json'),
      JSON.stringify({ mcpServers: { 'evil\u001b]0;x\u0007': { command: 'node' }, 'no\u009bcmd': { args: [] } } }),
    )
    const made = await inDir(dir, ['init', '--from', 'host.json', '--out', 'out.json'])
    expect(made.status, made.stderr).toBe(0)
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(made.stdout.toString() + made.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    expect(made.stderr).toContain('left out "no\\u009bcmd": it has neither a command nor a url')
    const both = await inDir(dir, ['init', '--from', 'host.json', '--', 'node'])
    expect(both.status).toBe(2)
    expect(both.stderr).toContain('give either --from FILE or a COMMAND, not both')
  })
})

describe('toolstack init: what it writes, and from what', () => {
  const modeOf = (path: string): number => statSync(path).mode & 0o777
  const host = {
    mcpServers: {
      github: {
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-github'],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_SECRET' },
      },
      remote: { url: 'https://x.example/mcp', headers: { Authorization: 'Bearer SECRET2' } },
    },
  }

  it('writes a file holding env or headers readable by its owner only (mode 600), and says so', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'host.json'), JSON.stringify(host), { mode: 0o600 })
    const made = await inDir(dir, ['init', '--from', 'host.json', '--out', 'gw.json'])
    expect(made.status, made.stderr).toBe(0)
    expect(readFileSync(join(dir, 'gw.json'), 'utf8')).toContain('ghp_SECRET')
    expect(modeOf(join(dir, 'gw.json'))).toBe(0o600)
    expect(made.stdout.toString()).toMatch(/^wrote gw\.json \(mode 600: it holds env and headers\) from /m)
    // without them, the mode any new file gets here (the umask's), as one the test writes itself
    writeFileSync(join(dir, 'plain.json'), '')
    const plain = await inDir(dir, ['init', '--out', 'cmd.json', '--', 'node', 'server.js'])
    expect(plain.status, plain.stderr).toBe(0)
    expect(modeOf(join(dir, 'cmd.json'))).toBe(modeOf(join(dir, 'plain.json')))
    expect(plain.stdout.toString()).toMatch(/^wrote cmd\.json from the command line/m)
  })

  it('with --force, keeps the mode of the file it replaces, and says when that lets others read env or headers', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'host.json'), JSON.stringify(host))
    writeFileSync(join(dir, 'mine.json'), '{}')
    chmodSync(join(dir, 'mine.json'), 0o640)
    const made = await inDir(dir, ['init', '--from', 'host.json', '--out', 'mine.json', '--force'])
    expect(made.status, made.stderr).toBe(0)
    expect(modeOf(join(dir, 'mine.json'))).toBe(0o640)
    expect(made.stdout.toString()).toMatch(/^wrote mine\.json \(mode 640, kept: it holds env and headers\) from /m)
    expect(made.stderr).toContain(
      'toolstack init: mine.json holds env and headers, and its mode (640, kept by --force) lets others read it: chmod 600 mine.json',
    )
    chmodSync(join(dir, 'mine.json'), 0o600)
    const again = await inDir(dir, ['init', '--from', 'host.json', '--out', 'mine.json', '--force'])
    expect(again.status, again.stderr).toBe(0)
    expect(modeOf(join(dir, 'mine.json'))).toBe(0o600)
    expect(again.stderr).not.toContain('chmod')
  })

  it('keeps a server named "__proto__": its name is data', async () => {
    const dir = fresh()
    writeFileSync(
      join(dir, 'proto.json'),
      '{"mcpServers":{"__proto__":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv"]},' +
        '"other":{"command":"node","args":["x.js"]}}}',
    )
    const made = await inDir(dir, ['init', '--from', 'proto.json', '--out', 'gw.json'])
    expect(made.status, made.stderr).toBe(0)
    expect(made.stdout.toString()).toContain('2 upstreams ("__proto__", "other")')
    const written = readFileSync(join(dir, 'gw.json'), 'utf8')
    expect(Object.keys((JSON.parse(written) as { mcpServers: object }).mcpServers)).toEqual(['__proto__', 'other'])
    writeFileSync(join(dir, 'alone.json'), '{"mcpServers":{"__proto__":{"command":"node","args":["x.js"]}}}')
    const alone = await inDir(dir, ['init', '--from', 'alone.json', '--out', 'alone-gw.json'])
    expect(alone.status, alone.stderr).toBe(0)
    expect(readFileSync(join(dir, 'alone-gw.json'), 'utf8')).toContain('"__proto__": {')
  })

  it('reads a file that starts with a BOM; says a file with comments or trailing commas must be plain JSON', async () => {
    const dir = fresh()
    writeFileSync(join(dir, 'bom.json'), '\ufeff{"mcpServers":{"a":{"command":"node"}}}')
    const bom = await inDir(dir, ['init', '--from', 'bom.json', '--out', 'bom-gw.json'])
    expect(bom.status, bom.stderr).toBe(0)
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'bom-gw.json'), 'utf8')).mcpServers)).toEqual(['a'])
    writeFileSync(join(dir, 'jsonc.json'), '{\n // my servers\n "servers":{"a":{"command":"node",},},\n}')
    const jsonc = await inDir(dir, ['init', '--from', 'jsonc.json', '--out', 'jsonc-gw.json'])
    expect(jsonc.status).toBe(2)
    expect(jsonc.stderr).toMatch(
      /^toolstack init: cannot read jsonc\.json: it must be plain JSON \(comments and trailing commas are not read\): \S/,
    )
    // a file that cannot be read at all is not called bad JSON
    const missing = await inDir(dir, ['init', '--from', 'missing.json'])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain('cannot read missing.json: ENOENT')
    expect(missing.stderr).not.toContain('plain JSON')
  })

  it('never writes over the host configuration it reads, even with --force (a link to it included)', async () => {
    const dir = fresh()
    const text = JSON.stringify(host)
    writeFileSync(join(dir, 'host.json'), text)
    symlinkSync(join(dir, 'host.json'), join(dir, 'link.json'))
    linkSync(join(dir, 'host.json'), join(dir, 'hard.json'))
    for (const out of ['host.json', './host.json', 'link.json', 'hard.json']) {
      const made = await inDir(dir, ['init', '--from', 'host.json', '--out', out, '--force'])
      expect(made.status).toBe(2)
      expect(made.stderr).toContain(
        `toolstack init: ${out} is the host configuration being read (host.json): a starter written there would ` +
          "replace the host's own; nothing written (--out FILE writes elsewhere)",
      )
      expect(readFileSync(join(dir, 'host.json'), 'utf8')).toBe(text)
    }
    // nor the one it found by itself
    writeFileSync(join(dir, '.mcp.json'), text)
    const found = await inDir(dir, ['init', '--out', '.mcp.json', '--force'])
    expect(found.status).toBe(2)
    expect(found.stderr).toContain(`.mcp.json is the host configuration being read (${join(dir, '.mcp.json')})`)
    expect(readFileSync(join(dir, '.mcp.json'), 'utf8')).toBe(text)
  })
})
