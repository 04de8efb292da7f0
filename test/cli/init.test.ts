// `toolstack init`, run as a user runs it: from a command, from the host configuration it finds (HOME and the
// working directory are the test's), from --from; never replacing a file without --force; and what it writes is a
// configuration `toolstack check` accepts, and whose upstream starts and lists.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
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
