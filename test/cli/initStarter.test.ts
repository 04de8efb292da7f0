// `toolstack init`'s starter, in process: whatever a host's configuration holds, the starter is one `serve` reads
// (decodeGatewayConfig), with one upstream per entry that can be served and a prefix of its own for each.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeGatewayConfig } from '../../src/gateway/index.js'
import { hostConfigFiles, nameFor, starterFromCommand, starterFromHost } from '../../src/cli/init.js'

// hostile text: controls, separators, direction marks, quotes, slashes
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('a', 'Z', '0', '_', '-', ' ', '.', '/', '@', '"', '\u001b', '\u0007', '\u2028', '\u202e', 'é'),
    fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 40,
})

const entry = fc.oneof(
  fc.record(
    {
      command: text,
      args: fc.oneof(fc.array(text, { maxLength: 4 }), fc.jsonValue()),
      env: fc.oneof(fc.dictionary(text, text, { maxKeys: 3 }), fc.jsonValue()),
      cwd: fc.oneof(text, fc.integer()),
      disabled: fc.boolean(),
      type: fc.constantFrom('stdio', 'http'),
      autoApprove: fc.array(text),
    },
    { requiredKeys: ['command'] },
  ),
  fc.record(
    { url: fc.oneof(text, fc.constantFrom('http://127.0.0.1:1/mcp', 'https://mcp.example/')), headers: fc.jsonValue() },
    { requiredKeys: ['url'] },
  ),
  fc.record({
    command: fc.constant('toolstack'),
    args: fc.array(text, { maxLength: 4 }).map((a) => ['proxy', '--', ...a]),
  }),
  fc.jsonValue(),
)

// an entry the gateway can serve, written independently of init.ts: an object, not disabled, with an http(s) url, or
// else a non-empty string command whose args (if any) are strings and which is not `toolstack serve`
const servable = (u: unknown): boolean => {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return false
  const e = u as Record<string, unknown>
  if (e['disabled'] === true) return false
  if (typeof e['url'] === 'string') return e['url'].startsWith('http://') || e['url'].startsWith('https://')
  if (typeof e['command'] !== 'string' || e['command'] === '') return false
  const args = e['args'] ?? []
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) return false
  const proxied = e['command'] === 'toolstack' && args[0] === 'proxy' && args.indexOf('--') >= 0
  const rest = proxied ? args.slice(args.indexOf('--') + 1) : [e['command'], ...args]
  if (proxied && rest.length === 0) return !(args[0] === 'serve')
  return rest[0] !== '' && !(rest[0] === 'toolstack' && rest[1] === 'serve')
}

describe('the starter of toolstack init', () => {
  it('whatever the host file holds: a configuration serve accepts, one upstream per servable entry, prefixes distinct', () => {
    fc.assert(
      fc.property(
        fc.dictionary(text, entry, { maxKeys: 6 }),
        fc.constantFrom('mcpServers', 'servers'),
        (entries, key) => {
          const made = starterFromHost({ [key]: entries })
          const expected = Object.entries(entries).filter(([, e]) => servable(e))
          if (expected.length === 0) {
            expect(typeof made).toBe('string')
            return
          }
          if (typeof made === 'string') throw new Error(made)
          expect(Object.keys(made.config.mcpServers).sort()).toEqual(expected.map(([n]) => n).sort())
          const decoded = decodeGatewayConfig(made.config)
          expect(decoded._tag, decoded._tag === 'Left' ? decoded.left : '').toBe('Right')
          // notes are shown on a terminal: escaped
          // eslint-disable-next-line no-control-regex -- control characters are what it looks for
          for (const n of made.notes) expect(n).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u202e]/)
        },
      ),
    )
  })

  it('a file that is not a host configuration says so', () => {
    expect(starterFromHost([])).toBe('it must be a JSON object with "mcpServers", got an array')
    expect(starterFromHost({ servers: 1 })).toMatch(/has no "mcpServers"/)
    expect(starterFromHost({ mcpServers: { x: { disabled: true, command: 'a' } } })).toMatch(/the host has it disabled/)
  })

  it('keeps a server named "__proto__" as a server like any other: its name is data, not the prototype', () => {
    // JSON.parse makes "__proto__" an own member, as a host's file holds it
    const made = starterFromHost(
      JSON.parse(
        '{"mcpServers":{"__proto__":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv"]},' +
          '"other":{"command":"node","args":["x.js"]}}}',
      ),
    )
    if (typeof made === 'string') throw new Error(made)
    expect(Object.keys(made.config.mcpServers)).toEqual(['__proto__', 'other'])
    expect(Object.getPrototypeOf(made.config.mcpServers)).not.toHaveProperty('command')
    const written = JSON.parse(JSON.stringify(made.config)) as { mcpServers: Record<string, unknown> }
    expect(Object.keys(written.mcpServers)).toEqual(['__proto__', 'other'])
    expect(made.config.rules).toContainEqual({ tool: '__proto___read_text_file', decision: 'allow' })
    const alone = starterFromHost(JSON.parse('{"servers":{"__proto__":{"command":"node"}}}'))
    if (typeof alone === 'string') throw new Error(alone)
    expect(JSON.stringify(alone.config.mcpServers)).toBe('{"__proto__":{"command":"node"}}')
  })

  it('from a command: named by its package, served with read-only rules only for the reference filesystem server', () => {
    const fs = starterFromCommand('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/srv'])
    expect(Object.keys(fs.config.mcpServers)).toEqual(['filesystem'])
    expect(fs.config.rules).toContainEqual({ tool: 'filesystem_read_text_file', decision: 'allow' })
    expect(fs.config.rules.every((r) => r.decision === 'allow' && !r.tool.includes('*'))).toBe(true)
    expect(fs.notes).toEqual([])
    // a look-alike package is someone else's: no rule trusts its names
    const other = starterFromCommand('npx', ['-y', 'mcp-server-filesystem', '/srv'])
    expect(other.config.rules).toEqual([])
    expect(other.notes[0]).toMatch(/no rule allows a tool of "filesystem": each of its calls is asked about/)
    expect(decodeGatewayConfig(other.config)._tag).toBe('Right')
    expect(nameFor('uvx', ['mcp-server-git@1.2'])).toBe('git')
  })

  it('looks in the project first, then the user’s hosts, where each platform keeps them', () => {
    const mac = hostConfigFiles('/Users/me', '/p', 'darwin', {}).map((f) => f.path)
    expect(mac.slice(0, 3)).toEqual(['/p/.mcp.json', '/p/.cursor/mcp.json', '/p/.vscode/mcp.json'])
    expect(mac).toContain('/Users/me/Library/Application Support/Claude/claude_desktop_config.json')
    const linux = hostConfigFiles('/home/me', '/p', 'linux', { XDG_CONFIG_HOME: '/cfg' }).map((f) => f.path)
    expect(linux).toContain('/cfg/Claude/claude_desktop_config.json')
    expect(linux).toContain('/home/me/.cursor/mcp.json')
  })
})
