/**
 * `toolstack init`: a starter configuration for `toolstack serve`, with read-only rules (the tools whose names say
 * they read are allowed; every other call is asked about), its upstreams taken from a host's configuration (the
 * `mcpServers` of Claude Desktop, Claude Code, Cursor or Windsurf; the `servers` of VS Code's `mcp.json`) or from
 * the command line. It never replaces a file unless told to.
 *
 * @since 0.1.0
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { basename, join } from 'node:path'
import type { GatewayConfig } from '../gateway/index.js'
import { decodeGatewayConfig, readOnlyRules } from '../gateway/index.js'
import { describeError, isRecord, kindOf, plural, shown } from './text.js'

type Rule = GatewayConfig['rules'][number]

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A host configuration `init` looks for, where that host keeps it.
 *
 * @since 0.1.0
 * @category model
 */
export interface HostConfigFile {
  readonly host: string
  readonly path: string
}

/**
 * One upstream, as the gateway's configuration writes it.
 *
 * @since 0.1.0
 * @category model
 */
export type StarterServer =
  | {
      readonly command: string
      readonly args?: ReadonlyArray<string>
      readonly env?: Readonly<Record<string, string>>
      readonly cwd?: string
      readonly prefix?: string
    }
  | { readonly url: string; readonly headers?: Readonly<Record<string, string>>; readonly prefix?: string }

/**
 * A starter configuration, and what was left out of it (each a line to say).
 *
 * @since 0.1.0
 * @category model
 */
export interface Starter {
  readonly config: {
    readonly mcpServers: Readonly<Record<string, StarterServer>>
    readonly rules: ReadonlyArray<Rule>
  }
  readonly notes: ReadonlyArray<string>
}

// -------------------------------------------------------------------------------------
// host configurations
// -------------------------------------------------------------------------------------

/**
 * Where hosts keep their MCP servers, the project's own first (in `cwd`), then the user's (in `home`).
 *
 * @example
 * import { hostConfigFiles } from './init.js'
 * const found = hostConfigFiles('/home/me', '/work/app', 'linux', {}).map((f) => f.path)
 * assert.strictEqual(found[0], '/work/app/.mcp.json')
 * assert.ok(found.includes('/home/me/.config/Claude/claude_desktop_config.json'))
 *
 * @since 0.1.0
 */
export const hostConfigFiles = (
  home: string,
  cwd: string,
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
): ReadonlyArray<HostConfigFile> => {
  const claudeDesktop =
    platform === 'darwin'
      ? join(home, 'Library', 'Application Support', 'Claude')
      : platform === 'win32'
        ? join(env['APPDATA'] ?? join(home, 'AppData', 'Roaming'), 'Claude')
        : join(env['XDG_CONFIG_HOME'] ?? join(home, '.config'), 'Claude')
  return [
    { host: 'Claude Code (this project)', path: join(cwd, '.mcp.json') },
    { host: 'Cursor (this project)', path: join(cwd, '.cursor', 'mcp.json') },
    { host: 'VS Code (this project)', path: join(cwd, '.vscode', 'mcp.json') },
    { host: 'Claude Desktop', path: join(claudeDesktop, 'claude_desktop_config.json') },
    { host: 'Cursor', path: join(home, '.cursor', 'mcp.json') },
    { host: 'Windsurf', path: join(home, '.codeium', 'windsurf', 'mcp_config.json') },
  ]
}

// -------------------------------------------------------------------------------------
// the starter
// -------------------------------------------------------------------------------------

// the reference filesystem server, by its package's name in the command line (an unscoped look-alike is someone
// else's package, and its tools are not the reference server's)
const isReferenceFilesystem = (s: StarterServer): boolean =>
  'command' in s &&
  [s.command, ...(s.args ?? [])].some((a) => /(^|[\\/])@modelcontextprotocol[\\/]server-filesystem(@|[\\/]|$)/.test(a))

/**
 * The read-only rules of a starter: for each upstream that is the reference filesystem server, its tools that only
 * read, by exact name under its prefix (`readOnlyRules`); no rule names any other tool, so every other call is asked
 * about. Exact names, not verb globs: a name is a server's claim, and `get_*` would also trust a `get_and_delete`.
 *
 * @example
 * import { starterRules } from './init.js'
 * const rules = starterRules({
 *   fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'] },
 *   gh: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], prefix: 'git_hub' },
 * })
 * assert.ok(rules.some((r) => r.tool === 'fs_read_text_file' && r.decision === 'allow'))
 * assert.ok(rules.every((r) => r.tool.startsWith('fs_')))
 *
 * @since 0.1.0
 */
export const starterRules = (servers: Readonly<Record<string, StarterServer>>): ReadonlyArray<Rule> =>
  Object.entries(servers).flatMap(([name, s]) =>
    isReferenceFilesystem(s) ? readOnlyRules(`${s.prefix ?? name}_`) : [],
  )

const PREFIX = /^[A-Za-z0-9_-]+$/
const MAX_PREFIX = 32

// a prefix for `name`: itself when it is one, else its letters and digits (`my server` is `my_server`); never one
// already taken
const prefixFor = (name: string, taken: ReadonlySet<string>): string => {
  const base =
    PREFIX.test(name) && name.length <= MAX_PREFIX
      ? name
      : name
          .replace(/[^A-Za-z0-9_-]+/g, '_')
          .slice(0, MAX_PREFIX)
          .replace(/^_+|_+$/g, '') || 'server'
  let p = base
  for (let i = 2; taken.has(p); i++) p = `${base}_${i}`
  return p
}

// a note for each upstream no rule allows a tool of
const unruled = (servers: Readonly<Record<string, StarterServer>>): ReadonlyArray<string> =>
  Object.entries(servers)
    .filter(([, s]) => !isReferenceFilesystem(s))
    .map(
      ([name]) =>
        `no rule allows a tool of ${shown(JSON.stringify(name))}: each of its calls is asked about (answer "always" to grant one, ` +
        'or add { "tool": "PREFIX_NAME", "decision": "allow" } rules for the tools that only read)',
    )

const strings = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((a) => typeof a === 'string')
const stringRecord = (u: unknown): u is Readonly<Record<string, string>> =>
  isRecord(u) && Object.values(u).every((v) => typeof v === 'string')

// a host's entry of `toolstack proxy [options] -- COMMAND ARGS`: the server it runs
const unwrapProxy = (command: string, args: ReadonlyArray<string>): readonly [string, ReadonlyArray<string>] => {
  const isToolstack = basename(command).replace(/\.(cmd|exe)$/, '') === 'toolstack'
  const dash = args.indexOf('--')
  if (!isToolstack || args[0] !== 'proxy' || dash < 0 || dash === args.length - 1) return [command, args]
  return [args[dash + 1] as string, args.slice(dash + 2)]
}

// the members of a host's entry the gateway reads (what else a host keeps, such as `disabled` or `type`, is not
// the gateway's)
const KEPT = ['command', 'args', 'env', 'cwd', 'url', 'headers']
const HOST_ONLY = ['type', 'disabled', 'autoApprove', 'alwaysAllow', 'envFile', 'transport', 'description']

// one host entry as an upstream, or why it is left out
const serverOf = (name: string, u: unknown): StarterServer | string => {
  if (!isRecord(u)) return `it is ${kindOf(u)}, not an object`
  if (u['disabled'] === true) return 'the host has it disabled'
  if (typeof u['url'] === 'string') {
    if (!/^https?:\/\//.test(u['url'])) return 'its url is not http(s)'
    return { url: u['url'], ...(stringRecord(u['headers']) ? { headers: u['headers'] } : {}) }
  }
  if (typeof u['command'] !== 'string' || u['command'] === '') return 'it has neither a command nor a url'
  const rawArgs = u['args'] ?? []
  if (!strings(rawArgs)) return 'its args are not strings'
  const [command, args] = unwrapProxy(u['command'], rawArgs)
  if (command === '') return 'the server it runs behind toolstack proxy has no command'
  if (basename(command).replace(/\.(cmd|exe)$/, '') === 'toolstack' && args[0] === 'serve')
    return `it is a toolstack gateway already (${name})`
  return {
    command,
    ...(args.length === 0 ? {} : { args }),
    ...(stringRecord(u['env']) ? { env: u['env'] } : {}),
    ...(typeof u['cwd'] === 'string' ? { cwd: u['cwd'] } : {}),
  }
}

/**
 * A starter configuration from a host's configuration (`{ "mcpServers": … }`, or VS Code's `{ "servers": … }`):
 * each entry's command (unwrapped when it is `toolstack proxy -- …`) or URL, a prefix where its name is not one,
 * and `readOnlyRules`. An entry that cannot be served (disabled, a gateway already, neither command nor URL) is left
 * out with a note; so are the members only the host reads.
 *
 * @example
 * import { starterFromHost } from './init.js'
 * const { config, notes } = starterFromHost({
 *   mcpServers: {
 *     'my files': { command: 'toolstack', args: ['proxy', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/srv'] },
 *   },
 * })
 * assert.deepStrictEqual(config.mcpServers, {
 *   'my files': { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'], prefix: 'my_files' },
 * })
 * assert.strictEqual(config.rules[0]?.tool, 'my_files_read_file')
 * assert.deepStrictEqual(notes, [])
 *
 * @since 0.1.0
 */
export const starterFromHost = (host: unknown): Starter | string => {
  if (!isRecord(host)) return `it must be a JSON object with "mcpServers", got ${kindOf(host)}`
  const entries = isRecord(host['mcpServers'])
    ? host['mcpServers']
    : isRecord(host['servers'])
      ? host['servers']
      : undefined
  if (entries === undefined) return 'it has no "mcpServers" (nor "servers", as VS Code writes it)'
  // a Map, then Object.fromEntries (which defines own members): a keyed assignment of a server named "__proto__"
  // would set the object's prototype instead, and the server would vanish from what is written
  const servers = new Map<string, StarterServer>()
  const notes: Array<string> = []
  const taken = new Set<string>()
  for (const [name, entry] of Object.entries(entries)) {
    const s = serverOf(name, entry)
    if (typeof s === 'string') {
      notes.push(`left out ${shown(JSON.stringify(name))}: ${shown(s)}`)
      continue
    }
    const dropped = isRecord(entry) ? Object.keys(entry).filter((k) => !KEPT.includes(k) && !HOST_ONLY.includes(k)) : []
    if (dropped.length > 0)
      notes.push(
        `${shown(JSON.stringify(name))}: not copied: ${dropped.map((k) => shown(JSON.stringify(k))).join(', ')}`,
      )
    const prefix = prefixFor(name, taken)
    taken.add(prefix)
    servers.set(name, prefix === name ? s : { ...s, prefix })
  }
  if (servers.size === 0)
    return `it names no server that can be served${notes.length === 0 ? '' : ` (${notes.join('; ')})`}`
  const mcpServers = Object.fromEntries(servers)
  return { config: { mcpServers, rules: starterRules(mcpServers) }, notes: [...notes, ...unruled(mcpServers)] }
}

/**
 * A short name for a server started by `command args`: its package's (`@modelcontextprotocol/server-filesystem` is
 * `filesystem`), or its command's.
 *
 * @example
 * import { nameFor } from './init.js'
 * assert.strictEqual(nameFor('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/srv']), 'filesystem')
 * assert.strictEqual(nameFor('uvx', ['mcp-server-git']), 'git')
 * assert.strictEqual(nameFor('node', ['/srv/node_modules/@modelcontextprotocol/server-memory/dist/index.js']), 'memory')
 * assert.strictEqual(nameFor('/usr/local/bin/my-tool', []), 'my-tool')
 *
 * @since 0.1.0
 */
export const nameFor = (command: string, args: ReadonlyArray<string>): string => {
  const runner = ['npx', 'uvx', 'pnpx', 'bunx', 'pipx', 'docker', 'node', 'python', 'python3', 'deno', 'bun']
  const program = runner.includes(basename(command)) ? (args.find((a) => !a.startsWith('-')) ?? command) : command
  // a package's path names it by its folder: `…/server-filesystem/dist/index.js` is `server-filesystem`
  const segments = program
    .replace(/(.)@[^@/\\]*$/, '$1')
    .split(/[/\\]/)
    .filter((p) => p !== '' && !/^(dist|build|lib|src|bin|(index|main|cli|server)\.[cm]?[jt]s)$/.test(p))
  const name = (segments[segments.length - 1] ?? '')
    .replace(/\.([cm]?[jt]s|py|exe|cmd)$/, '')
    .replace(/^(mcp-server-|server-)|(-mcp-server|-mcp|-server)$/g, '')
  return name === '' ? 'server' : name
}

/**
 * A starter configuration for one server started by `command args`, named `name` (by default `nameFor`'s).
 *
 * @since 0.1.0
 */
export const starterFromCommand = (command: string, args: ReadonlyArray<string>, name?: string): Starter => {
  const key = name ?? nameFor(command, args)
  const prefix = prefixFor(key, new Set())
  const server: StarterServer = { command, ...(args.length === 0 ? {} : { args }) }
  const servers = { [key]: prefix === key ? server : { ...server, prefix } }
  return {
    config: { mcpServers: servers, rules: starterRules(servers) },
    notes: unruled(servers),
  }
}

// -------------------------------------------------------------------------------------
// command
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface InitOptions {
  /** The file to write. */
  readonly out: string
  /** Replace `out` when it exists. */
  readonly force: boolean
  /** The host configuration to read (instead of looking for one). */
  readonly from?: string | undefined
  /** The server to serve (instead of a host configuration): its command and arguments. */
  readonly command?: ReadonlyArray<string> | undefined
  /** With `command`: its name (and prefix). */
  readonly name?: string | undefined
}

/**
 * The effects `init` needs, passed in.
 *
 * @since 0.1.0
 * @category model
 */
export interface InitIO {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
  readonly home: string
  readonly cwd: string
  readonly platform: NodeJS.Platform
  readonly env: NodeJS.ProcessEnv
}

// -------------------------------------------------------------------------------------
// files
// -------------------------------------------------------------------------------------

/**
 * A host configuration's text as JSON, or why it is not: a leading byte order mark (which Windows editors write) is
 * not part of the JSON; a file with comments or trailing commas (VS Code's `mcp.json` allows both) is said to be
 * that, with the parser's own words after. What it says is escaped and bounded.
 *
 * @example
 * import { parseHostConfig } from './init.js'
 * assert.deepStrictEqual(parseHostConfig('\ufeff{"servers":{}}'), { _tag: 'Right', right: { servers: {} } })
 * const jsonc = parseHostConfig('{ "servers": {}, }')
 * assert.ok(jsonc._tag === 'Left' && jsonc.left.startsWith('it must be plain JSON (comments and trailing commas'))
 *
 * @since 0.1.0
 * @category files
 */
export const parseHostConfig = (
  text: string,
): { readonly _tag: 'Right'; readonly right: unknown } | { readonly _tag: 'Left'; readonly left: string } => {
  try {
    return { _tag: 'Right', right: JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text) }
  } catch (e) {
    return {
      _tag: 'Left',
      left: `it must be plain JSON (comments and trailing commas are not read): ${shown(describeError(e))}`,
    }
  }
}

// whether two paths name one file: the same real path, or the same file through a hard link (a dev and inode of 0
// say nothing, as on file systems without inodes); false when either does not exist
const isSameFile = (a: string, b: string): boolean => {
  try {
    if (realpathSync(a) === realpathSync(b)) return true
    const [sa, sb] = [statSync(a, { bigint: true }), statSync(b, { bigint: true })]
    return sa.ino !== 0n && sa.dev === sb.dev && sa.ino === sb.ino
  } catch {
    return false
  }
}

// the members of a starter that may hold secrets: the env and headers copied from the host (tokens, as often as not)
const secretsIn = (servers: Readonly<Record<string, StarterServer>>): ReadonlyArray<'env' | 'headers'> => {
  const all = Object.values(servers)
  return [
    ...(all.some((s) => 'env' in s && s.env !== undefined) ? (['env'] as const) : []),
    ...(all.some((s) => 'headers' in s && s.headers !== undefined) ? (['headers'] as const) : []),
  ]
}

// Writes `text` to `path` and returns the file's mode: a new file gets mode 600 when `isPrivate` (the umask may
// narrow it, never widen it); an existing one is replaced only with `force`, and keeps its mode (the person who
// made it chose it). 'wx' fails when the file exists, so nothing is replaced between a check and the write.
const writeStarter = (path: string, text: string, force: boolean, isPrivate: boolean): number => {
  const fd = openSync(path, force ? 'w' : 'wx', isPrivate ? 0o600 : 0o666)
  try {
    writeFileSync(fd, text)
    return fstatSync(fd).mode & 0o777
  } finally {
    closeSync(fd)
  }
}

const octal = (mode: number): string => mode.toString(8).padStart(3, '0')

/**
 * Writes a starter configuration to `options.out` (from `command`, `from`, or the first host configuration found)
 * and says what it holds and what to run next; returns the exit status: 0 written, 2 not (nothing found or
 * readable, the file exists without `force`). The configuration written is one `serve` and `check` accept.
 *
 * @since 0.1.0
 * @category command
 */
export const runInit = (options: InitOptions, io: InitIO): number => {
  const fail = (line: string): number => {
    io.err(`toolstack init: ${line}`)
    return 2
  }
  let starter: Starter
  let source: string
  if (options.command !== undefined && options.command.length > 0) {
    const [command = '', ...args] = options.command
    if (options.name !== undefined && !PREFIX.test(options.name))
      return fail(`--name must be letters, digits, "_" and "-", got ${shown(JSON.stringify(options.name))}`)
    starter = starterFromCommand(command, args, options.name)
    source = 'the command line'
  } else {
    const found =
      options.from !== undefined
        ? [{ host: 'the file given', path: options.from }]
        : hostConfigFiles(io.home, io.cwd, io.platform, io.env).filter((f) => existsSync(f.path))
    const first = found[0]
    if (first === undefined)
      return fail(
        'found no host configuration (' +
          hostConfigFiles(io.home, io.cwd, io.platform, io.env)
            .map((f) => shown(f.path))
            .join(', ') +
          '); give one with --from FILE, or a server: toolstack init -- npx -y @modelcontextprotocol/server-filesystem DIR',
      )
    let hostText: string
    try {
      hostText = readFileSync(first.path, 'utf8')
    } catch (e) {
      return fail(`cannot read ${shown(first.path)}: ${shown(describeError(e))}`)
    }
    const host = parseHostConfig(hostText)
    if (host._tag === 'Left') return fail(`cannot read ${shown(first.path)}: ${host.left}`)
    // a starter written over the host's own file would take the host's servers away from it (a link to it
    // included): refused, --force or not
    if (isSameFile(options.out, first.path))
      return fail(
        `${shown(options.out)} is the host configuration being read (${shown(first.path)}): a starter written there ` +
          "would replace the host's own; nothing written (--out FILE writes elsewhere)",
      )
    const made = starterFromHost(host.right)
    if (typeof made === 'string') return fail(`${shown(first.path)}: ${made}`)
    starter = made
    source = `${first.host}'s ${shown(first.path)}`
    for (const other of found.slice(1))
      io.err(`toolstack init: also found ${other.host}'s ${shown(other.path)} (use --from to take it)`)
  }
  // what is written is what `serve` reads: a starter it would refuse is a bug here, said rather than written
  const checked = decodeGatewayConfig(starter.config)
  if (checked._tag === 'Left') return fail(`the starter is not a valid configuration: ${shown(checked.left)}`)
  const text = JSON.stringify(starter.config, null, 2) + '\n'
  const secrets = secretsIn(starter.config.mcpServers).join(' and ')
  // only for what is said: whether --force replaces a file, whose mode it then keeps
  const existed = options.force && existsSync(options.out)
  let mode: number
  try {
    mode = writeStarter(options.out, text, options.force, secrets !== '')
  } catch (e) {
    if ((e as { code?: unknown }).code === 'EEXIST')
      return fail(
        `${shown(options.out)} exists; it is left as it is (--force replaces it, or --out FILE writes elsewhere)`,
      )
    return fail(`cannot write ${shown(options.out)}: ${shown(describeError(e))}`)
  }
  for (const note of starter.notes) io.err(`toolstack init: ${note}`)
  if (secrets !== '' && (mode & 0o077) !== 0)
    io.err(
      `toolstack init: ${shown(options.out)} holds ${secrets}, and its mode (${octal(mode)}, kept by --force) lets ` +
        `others read it: chmod 600 ${shown(options.out)}`,
    )
  const names = Object.keys(starter.config.mcpServers)
  const modeNote = secrets === '' ? '' : ` (mode ${octal(mode)}${existed ? ', kept' : ''}: it holds ${secrets})`
  io.out(
    `wrote ${shown(options.out)}${modeNote} from ${source}: ${plural(names.length, 'upstream')} (${names.map((n) => shown(JSON.stringify(n))).join(', ')}); ` +
      `${plural(starter.config.rules.length, 'rule')} allowing tools that only read; every other call is asked about`,
  )
  io.out(`next: toolstack check ${shown(options.out)}`)
  io.out(
    `then: toolstack serve --config ${shown(options.out)}   (and point your host at it: see toolstack serve --help)`,
  )
  return 0
}
