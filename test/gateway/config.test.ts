// The gateway's configuration read from untrusted JSON (decodeGatewayConfig), in process: every member's
// default and every problem's words, the problems of one file named together, and two properties — any JSON
// value is answered (never thrown), and a configuration built from parts decodes to what an oracle written
// here from the documented defaults says.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { GatewayConfig } from '../../src/gateway/index.js'
import { CONFIG_MEMBERS, decodeGatewayConfig } from '../../src/gateway/index.js'

const MAX = 2_147_483_647
const ONE = { mcpServers: { fs: { command: 'node' } } }

const ok = (u: unknown): GatewayConfig => {
  const c = decodeGatewayConfig(u)
  if (c._tag === 'Left') throw new Error(c.left)
  return c.right
}
const problems = (u: unknown): ReadonlyArray<string> => {
  const c = decodeGatewayConfig(u)
  if (c._tag === 'Right') throw new Error(`decoded: ${JSON.stringify(c.right)}`)
  return c.left.split('\n')
}
const withMember = (member: string, value: unknown) => ({ ...ONE, [member]: value })
const server = (entry: unknown) => ok({ mcpServers: { s: entry } }).servers[0]
const serverProblem = (entry: unknown) => problems({ mcpServers: { s: entry } })

describe('decodeGatewayConfig: the configuration as a whole', () => {
  it('what is not an object is refused, saying what it was', () => {
    expect(problems(null)).toEqual(['the configuration must be a JSON object with "mcpServers", got null'])
    expect(problems([ONE])).toEqual(['the configuration must be a JSON object with "mcpServers", got an array'])
  })

  it('one server and nothing else: every default, and no optional member present', () => {
    const c = ok(ONE)
    expect(c).toStrictEqual({
      servers: [{ name: 'fs', prefix: 'fs', spec: { command: 'node', args: [] } }],
      rules: [{ tool: '*', decision: 'allow' }],
      tolerate: [],
      locationArgs: [],
      reasons: true,
      log: undefined,
    })
    for (const member of ['caseInsensitive', 'timeout', 'listWaitMs', 'startupMs', 'drift', 'store'])
      expect(Object.hasOwn(c, member), member).toBe(false)
    expect(Object.hasOwn(c.servers[0] ?? {}, 'tools')).toBe(false)
  })

  it('mcpServers missing, empty or not an object is refused', () => {
    const said = (u: unknown) => `mcpServers must be an object with at least one server, got ${u}`
    expect(problems({})).toEqual([said('undefined')])
    expect(problems({ mcpServers: {} })).toEqual([said('an object')])
    expect(problems({ mcpServers: [] })).toEqual([said('an array')])
    expect(problems({ mcpServers: 'fs' })).toEqual([said('the string "fs"')])
  })

  it('every member given is kept as given', () => {
    const given = {
      rules: [{ tool: 'fs_*', decision: 'deny' }],
      tolerate: ['_meta'],
      locationArgs: ['where'],
      caseInsensitive: false,
      reasons: false,
      log: 'gateway.jsonl',
      timeout: 1,
      listWaitMs: MAX,
      startupMs: 500,
      store: 'memory',
      drift: 'hold',
    }
    expect(ok({ ...ONE, ...given })).toStrictEqual({
      servers: [{ name: 'fs', prefix: 'fs', spec: { command: 'node', args: [] } }],
      ...given,
    })
    expect(ok(withMember('caseInsensitive', true)).caseInsensitive).toBe(true)
    for (const drift of ['warn', 'refuse']) expect(ok(withMember('drift', drift)).drift).toBe(drift)
    for (const store of ['file:grants.json', 'redis://127.0.0.1:6379', 'rediss://cache:6380'])
      expect(ok(withMember('store', store)).store).toBe(store)
  })

  it('every bad member is named, one line each, in the order of CONFIG_MEMBERS', () => {
    expect(
      problems({
        drift: 'stop',
        store: 'ftp://x',
        startupMs: '5',
        listWaitMs: 1.5,
        timeout: 0,
        log: '',
        reasons: 'yes',
        caseInsensitive: 'no',
        locationArgs: [1],
        tolerate: [1],
        rules: 'all',
        mcpServers: { fs: { command: 'node' } },
      }),
    ).toEqual([
      'rules must be an array of rules, got the string "all"',
      'tolerate must be an array of strings, got an array',
      'locationArgs must be an array of argument names (non-empty strings; "!name" for a name that is not a location), ' +
        'added to path, paths, source, destination, from, to, file, files, target, directory, dir, uri, url; got an array',
      'caseInsensitive must be true or false, got the string "no"',
      'reasons must be true or false, got the string "yes"',
      'log must be a file path, got the string ""',
      'timeout must be a whole number of milliseconds from 1 to 2147483647, got number 0',
      'listWaitMs must be a whole number of milliseconds from 1 to 2147483647, got number 1.5',
      'startupMs must be a whole number of milliseconds from 1 to 2147483647, got the string "5"',
      'store must be a store: "memory", "file:PATH", or "redis://HOST:PORT" ("rediss://" with TLS), got the string "ftp://x"',
      'drift must be "warn", "hold" or "refuse", got the string "stop"',
    ])
  })

  it('each bad member alone is refused: nothing else decides it', () => {
    const bad: ReadonlyArray<readonly [string, unknown]> = [
      ['rules', [{ tool: 'x' }]],
      ['tolerate', '_meta'],
      ['locationArgs', 'where'],
      ['caseInsensitive', 1],
      ['reasons', null],
      ['log', 5],
      ['timeout', MAX + 1],
      ['listWaitMs', 0],
      ['startupMs', -1],
      ['store', 'file:'],
      ['drift', 'WARN'],
    ]
    for (const [member, value] of bad) {
      const lines = problems(withMember(member, value))
      expect(lines, member).toHaveLength(1)
      expect(lines[0]?.startsWith(member) && /^[ [.]/.test(lines[0].slice(member.length)), lines[0]).toBe(true)
    }
  })

  it('a member written as null is refused like any other wrong type, not read as absent', () => {
    for (const member of ['rules', 'tolerate', 'locationArgs', 'caseInsensitive', 'reasons', 'log', 'timeout', 'store'])
      expect(problems(withMember(member, null)), member).toHaveLength(1)
    expect(problems(withMember('reasons', null))).toEqual(['reasons must be true or false, got null'])
    expect(problems(withMember('tolerate', null))).toEqual(['tolerate must be an array of strings, got null'])
    expect(serverProblem({ command: 'x', args: null })).toEqual([
      'mcpServers.s.args must be an array of strings, got null',
    ])
  })

  it('the milliseconds bounds: 1 and 2147483647 taken, 0, one more, a fraction and a string not', () => {
    for (const member of ['timeout', 'listWaitMs', 'startupMs']) {
      expect(ok(withMember(member, 1))[member as 'timeout']).toBe(1)
      expect(ok(withMember(member, MAX))[member as 'timeout']).toBe(MAX)
      for (const v of [0, MAX + 1, 2.5, '10', Number.NaN, null])
        expect(problems(withMember(member, v)), `${member} ${String(v)}`).toHaveLength(1)
    }
  })

  it('unknown members are named, with the known ones and a "did you mean" for each misspelling', () => {
    expect(problems({ ...ONE, mcpServer: 1 })).toEqual([
      'the configuration has unknown member "mcpServer" (known: mcpServers, rules, tolerate, locationArgs, ' +
        'caseInsensitive, reasons, log, timeout, listWaitMs, startupMs, store, drift); did you mean "mcpServers"?',
    ])
    expect(problems({ ...ONE, tolerat: [], zzzzzzzz: 1 })).toEqual([
      'the configuration has unknown members "tolerat", "zzzzzzzz" (known: mcpServers, rules, tolerate, ' +
        'locationArgs, caseInsensitive, reasons, log, timeout, listWaitMs, startupMs, store, drift); ' +
        'did you mean "tolerate" for "tolerat"?',
    ])
  })

  it('two servers with one prefix are refused, naming both; the problem comes with the others', () => {
    expect(problems({ mcpServers: { a: { command: 'x' }, b: { command: 'y', prefix: 'a' } }, reasons: 1 })).toEqual([
      'mcpServers.a and mcpServers.b both use the prefix "a"',
      'reasons must be true or false, got number 1',
    ])
    expect(problems({ mcpServers: { a: { command: 'x', prefix: '' }, b: { url: 'http://h/', prefix: '' } } })).toEqual([
      'mcpServers.a and mcpServers.b both use the prefix ""',
    ])
  })

  it('a server that cannot be read is named, and the servers after it are still read', () => {
    expect(problems({ mcpServers: { a: 5, b: { command: '' } } })).toEqual([
      'mcpServers.a must be an object { command, args?, env? } or { url }, got number 5',
      'mcpServers.b.command must be a non-empty string (or give a url), got the string ""',
    ])
  })
})

describe('decodeGatewayConfig: one server', () => {
  it('a command: its args, env and cwd kept, the key its prefix', () => {
    expect(server({ command: 'npx', args: ['-y', 'pkg'], env: { A: '1' }, cwd: '/srv' })).toStrictEqual({
      name: 's',
      prefix: 's',
      spec: { command: 'npx', args: ['-y', 'pkg'], env: { A: '1' }, cwd: '/srv' },
    })
  })

  it('a url: its headers kept ({} when none), http or https only', () => {
    expect(server({ url: 'https://h/mcp', headers: { Authorization: 'Bearer t' } })).toStrictEqual({
      name: 's',
      prefix: 's',
      spec: { url: 'https://h/mcp', headers: { Authorization: 'Bearer t' } },
    })
    expect(server({ url: 'http://h/mcp' })?.spec).toEqual({ url: 'http://h/mcp', headers: {} })
    // an array or an object that reads as a URL when made a string is still not one
    for (const url of ['ftp://h/', 'h/mcp', ' http://h/', 5, ['http://h/'], { toString: () => 'http://h/' }])
      expect(serverProblem({ url })[0]).toMatch(/^mcpServers\.s\.url must be an http\(s\) URL, got /)
  })

  it('the members every server takes: tools, timeout, required, sessions', () => {
    expect(
      server({
        command: 'x',
        tools: { include: ['read_*'], exclude: ['read_secret'] },
        timeout: 30,
        required: false,
        sessions: 'per-host',
      }),
    ).toStrictEqual({
      name: 's',
      prefix: 's',
      spec: { command: 'x', args: [] },
      tools: { include: ['read_*'], exclude: ['read_secret'] },
      timeout: 30,
      required: false,
      sessions: 'per-host',
    })
    expect(server({ url: 'http://h/', required: true, sessions: 'shared', tools: {} })).toStrictEqual({
      name: 's',
      prefix: 's',
      spec: { url: 'http://h/', headers: {} },
      tools: {},
      required: true,
      sessions: 'shared',
    })
    expect(server({ command: 'x', tools: { exclude: ['*'] } })?.tools).toStrictEqual({ exclude: ['*'] })
    expect(server({ command: 'x', tools: { include: ['read_*'] } })?.tools).toStrictEqual({ include: ['read_*'] })
    // nothing given, nothing present: not even a member holding undefined
    expect(server({ command: 'x' })).toStrictEqual({ name: 's', prefix: 's', spec: { command: 'x', args: [] } })
    expect(server({ url: 'http://h/' })).toStrictEqual({
      name: 's',
      prefix: 's',
      spec: { url: 'http://h/', headers: {} },
    })
    expect(server({ command: 'x', stderr: 'ignore' })?.stderr).toBe('ignore')
    for (const stderr of ['log', 'inherit']) expect(server({ command: 'x', stderr })?.stderr).toBe(stderr)
  })

  it('the prefix: its own when given ("" keeps the names), else the key, which must then be fit for one', () => {
    expect(server({ command: 'x', prefix: 'a-b_9' })?.prefix).toBe('a-b_9')
    expect(server({ command: 'x', prefix: '' })?.prefix).toBe('')
    expect(serverProblem({ command: 'x', prefix: 'a.b' })).toEqual([
      'mcpServers.s.prefix must be letters, digits, "_" and "-", or "" to keep the server\'s own names, got the string "a.b"',
    ])
    expect(serverProblem({ command: 'x', prefix: 7 })[0]).toMatch(/, got number 7$/)
    expect(problems({ mcpServers: { 'a.b': { command: 'x' } } })).toEqual([
      'mcpServers.a.b.prefix must be letters, digits, "_" and "-", or "" to keep the server\'s own names ' +
        '(it defaults to the server\'s key, "a.b"; give one), got the string "a.b"',
    ])
    expect(ok({ mcpServers: { 'a.b': { command: 'x', prefix: 'ab' } } }).servers[0]?.prefix).toBe('ab')
  })

  it("each member's problem, in words", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ command: 5 }, 'mcpServers.s.command must be a non-empty string (or give a url), got number 5'],
      [{}, 'mcpServers.s.command must be a non-empty string (or give a url), got undefined'],
      [{ command: 'x', args: 'a' }, 'mcpServers.s.args must be an array of strings, got the string "a"'],
      [{ command: 'x', args: ['a', 1] }, 'mcpServers.s.args must be an array of strings, got an array'],
      [{ command: 'x', env: 'A=1' }, 'mcpServers.s.env must be an object of strings, got the string "A=1"'],
      [{ command: 'x', env: { A: '1', B: 2 } }, 'mcpServers.s.env.B must be a string, got number 2'],
      [{ command: 'x', cwd: 1 }, 'mcpServers.s.cwd must be a string, got number 1'],
      [
        { command: 'x', stderr: 'all' },
        'mcpServers.s.stderr must be "log", "inherit" or "ignore", got the string "all"',
      ],
      [{ url: 'http://h/', headers: 5 }, 'mcpServers.s.headers must be an object of strings, got number 5'],
      [{ url: 'http://h/', headers: { A: null } }, 'mcpServers.s.headers.A must be a string, got null'],
      [{ command: 'x', required: 'yes' }, 'mcpServers.s.required must be true or false, got the string "yes"'],
      [
        { command: 'x', sessions: 'each' },
        'mcpServers.s.sessions must be "per-host" or "shared", got the string "each"',
      ],
      [
        { command: 'x', timeout: 0 },
        'mcpServers.s.timeout must be a whole number of milliseconds from 1 to 2147483647, got number 0',
      ],
      [{ command: 'x', tools: 5 }, 'mcpServers.s.tools must be an object { include?, exclude? }, got number 5'],
      [
        { command: 'x', tools: { include: 'read_*' } },
        'mcpServers.s.tools.include must be an array of tool names or globs ("read_*", "*"), got the string "read_*"',
      ],
      [
        { command: 'x', tools: { exclude: [''] } },
        'mcpServers.s.tools.exclude must be an array of tool names or globs ("read_*", "*"), got an array',
      ],
      [
        { command: 'x', tools: { include: ['read_*', 5] } },
        'mcpServers.s.tools.include must be an array of tool names or globs ("read_*", "*"), got an array',
      ],
      [
        { command: 'x', tools: { include: [5] } },
        'mcpServers.s.tools.include must be an array of tool names or globs ("read_*", "*"), got an array',
      ],
      [
        { command: 'x', tools: { exclude: ['read_*', ''] } },
        'mcpServers.s.tools.exclude must be an array of tool names or globs ("read_*", "*"), got an array',
      ],
      [
        { command: 'x', tools: { inclde: [] } },
        'mcpServers.s.tools has unknown member "inclde" (known: include, exclude); did you mean "include"?',
      ],
      [
        { command: 'x', comand: 'y' },
        'mcpServers.s has unknown member "comand" (known: command, args, env, cwd, prefix, tools, timeout, required, ' +
          'stderr, sessions); did you mean "command"?',
      ],
      [
        { url: 'http://h/', command: 'y', args: [] },
        'mcpServers.s has unknown members "command", "args" (known: url, headers, prefix, tools, timeout, required, ' +
          'sessions)',
      ],
    ]
    for (const [entry, said] of cases) expect(serverProblem(entry), JSON.stringify(entry)).toEqual([said])
  })
})

// -------------------------------------------------------------------------------------
// properties
// -------------------------------------------------------------------------------------

describe('decodeGatewayConfig: properties', () => {
  it('any JSON value, or an object with any members, is answered with a Right or a Left, never thrown', () => {
    const members = fc.dictionary(fc.constantFrom(...CONFIG_MEMBERS, 'other'), fc.jsonValue())
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), members, fc.record({ mcpServers: fc.dictionary(fc.string(), fc.jsonValue()) })),
        (u) => {
          const c = decodeGatewayConfig(u)
          expect(c._tag === 'Left' ? typeof c.left : Array.isArray(c.right.servers)).toBe(
            c._tag === 'Left' ? 'string' : true,
          )
        },
      ),
    )
  })

  // the oracle: what the documentation says each server entry and each member becomes
  const name = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/)
  const strings = fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 })
  const commandEntry = fc.record(
    {
      command: fc.string({ minLength: 1, maxLength: 8 }),
      args: strings,
      env: fc.dictionary(name, fc.string({ maxLength: 4 }), { maxKeys: 2 }),
      cwd: fc.string({ maxLength: 6 }),
      stderr: fc.constantFrom('log', 'inherit', 'ignore'),
      timeout: fc.integer({ min: 1, max: MAX }),
      required: fc.boolean(),
      sessions: fc.constantFrom('per-host', 'shared'),
    },
    { requiredKeys: ['command'] },
  )
  const urlEntry = fc.record(
    {
      url: fc.webUrl({ validSchemes: ['http', 'https'] }),
      headers: fc.dictionary(name, fc.string({ maxLength: 4 }), { maxKeys: 2 }),
      timeout: fc.integer({ min: 1, max: MAX }),
      required: fc.boolean(),
      sessions: fc.constantFrom('per-host', 'shared'),
    },
    { requiredKeys: ['url'] },
  )
  const expected = (key: string, e: Record<string, unknown>): unknown => {
    const { command, args, env, cwd, stderr, url, headers, ...rest } = e
    const spec =
      url !== undefined
        ? { url, headers: headers ?? {} }
        : { command, args: args ?? [], ...(env === undefined ? {} : { env }), ...(cwd === undefined ? {} : { cwd }) }
    return { name: key, prefix: key, spec, ...rest, ...(stderr === undefined ? {} : { stderr }) }
  }

  it('servers built from parts decode to what the documentation says, in the order of the object', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(name, fc.oneof(commandEntry, urlEntry)), {
          minLength: 1,
          maxLength: 4,
          selector: ([k]) => k,
        }),
        fc.record(
          {
            timeout: fc.integer({ min: 1, max: MAX }),
            reasons: fc.boolean(),
            log: fc.string({ minLength: 1, maxLength: 6 }),
          },
          { requiredKeys: [] },
        ),
        (entries, top) => {
          const mcpServers = Object.fromEntries(entries)
          const c = ok({ mcpServers, ...top })
          // in the object's own order (integer-like keys first, as JSON.parse gives them)
          expect(c.servers).toStrictEqual(
            Object.entries(mcpServers).map(([k, e]) => expected(k, e as Record<string, unknown>)),
          )
          expect(c.reasons).toBe(top.reasons ?? true)
          expect(c.log).toBe(top.log)
          expect(c.timeout).toBe(top.timeout)
        },
      ),
    )
  })
})
