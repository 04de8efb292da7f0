// Issue 34, in process: each escape the attacker's campaign found, closed. The model controls every key,
// value and reason; the guard judges what the server will touch, fails closed where it cannot tell, offers no
// grant wider than what the human saw, and shows a question that cannot hide.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type {
  PermissionAnswer,
  PermissionRequest,
  PolicyDiagnostic,
  PolicyOptions,
  Rule,
  ToolCall,
  ToolDeclaration,
  ToolResult,
} from '../../../src/index.js'
import { drawPermissionRequest, drawPolicyDiagnostic, newQuestionQueue, withPolicy } from '../../../src/index.js'
import { lexicalResolver } from '../../../src/kernel/resolve.js'
import { evaluate, guardFiles, locateCall } from '../../../src/steps/policy/evaluate.js'
import { SHOWN_LIMITS } from '../../../src/steps/policy/Answer.js'
import { call, decl, recordingProvider } from '../../support/fakes.js'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

const R = '/srv/project'

const FS: ReadonlyArray<ToolDeclaration> = [
  decl('fs_read_file', ['path']),
  decl('fs_write_file', ['path', 'content']),
  decl('fs_move_file', ['source', 'destination']),
  decl('fs_list_directory', ['path']),
  decl('fs_read_multiple_files', ['paths']),
  decl('git_add', ['repo_path', 'files']),
  decl('mail_send_email', ['to', 'subject', 'body']),
  decl('mail_send_file', ['path', 'to']),
  decl('web_fetch', ['url']),
]

/** A policy over FS, listed once, asking through `answers` (recorded), or headless. */
const policyOf = async (options: Partial<PolicyOptions> & { readonly rules: ReadonlyArray<Rule> }) => {
  const inner = recordingProvider(FS)
  const asked: Array<PermissionRequest> = []
  const diagnostics: Array<PolicyDiagnostic> = []
  const policy = withPolicy({ onDiagnostic: (d) => void diagnostics.push(d), ...options })(inner)
  await policy.toolsForLlm()
  const run = async (calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
    const out = await policy.executeToolCalls(calls)()
    if (out._tag === 'Left') throw new Error('a batch failed')
    return out.right
  }
  const ran = (): ReadonlyArray<string> => inner.rec.batches.flat().map((c) => c.id)
  return { policy, run, ran, asked, diagnostics }
}

const recordingAsk =
  (asked: Array<PermissionRequest>, answer: PermissionAnswer = { action: 'deny-once' }) =>
  (r: PermissionRequest): PermissionAnswer => {
    asked.push(r)
    return answer
  }

const GUARDED: ReadonlyArray<Rule> = [
  { tool: 'fs_*', decision: 'allow', under: R },
  { tool: 'fs_*', decision: 'deny', under: `${R}/x/secret`, note: 'secrets stay put' },
  { tool: 'fs_write_file', decision: 'ask', under: `${R}/docs/api` },
]

// -------------------------------------------------------------------------------------
// 1. a parent carries the protected files away
// -------------------------------------------------------------------------------------

describe('a call on a parent of a guarded directory', () => {
  it('a move of a parent of a denied directory is refused, naming the rule; inside it the same', async () => {
    const { run, ran } = await policyOf({ rules: GUARDED })
    const out = await run([
      call('1', 'fs_move_file', { source: `${R}/x`, destination: `${R}/y` }),
      call('2', 'fs_move_file', { source: `${R}/y`, destination: `${R}/x` }),
      call('3', 'fs_move_file', { source: R, destination: '/tmp/elsewhere' }),
      call('4', 'fs_move_file', { source: `${R}/a`, destination: `${R}/b` }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, true, true, false])
    expect(out[0]?.content).toContain(`(rule: deny "fs_*" under ${R}/x/secret). Reason: secrets stay put.`)
    expect(ran()).toEqual(['4'])
  })

  it('an ask under a directory asks about a call on its parent', async () => {
    const asked: Array<PermissionRequest> = []
    const { run } = await policyOf({ rules: GUARDED, onAsk: recordingAsk(asked) })
    await run([call('1', 'fs_write_file', { path: `${R}/docs`, content: 'x' })])
    expect(asked.map((r) => [r.rule?.under, r.why])).toEqual([[`${R}/docs/api`, 'rule']])
  })

  it('a listing or a read of an ancestor is refused too: it reads inside the denied directory', async () => {
    const { run } = await policyOf({ rules: GUARDED })
    const out = await run([
      call('1', 'fs_list_directory', { path: `${R}/x` }),
      call('2', 'fs_list_directory', { path: `${R}/docs` }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, false])
  })

  it('an allow under a directory is unchanged: every location inside it', () => {
    const rules: ReadonlyArray<Rule> = [{ tool: 't', decision: 'allow', under: R }]
    expect(evaluate(rules, 't', { path: '/srv' }).decision).toBe('ask')
    expect(evaluate(rules, 't', { path: `${R}/a` }).decision).toBe('allow')
  })
})

// -------------------------------------------------------------------------------------
// 2. Unicode spelling and case
// -------------------------------------------------------------------------------------

describe('a location spelled another way', () => {
  const nfc = `${R}/caf\u00e9`
  const rules: ReadonlyArray<Rule> = [
    { tool: 'fs_*', decision: 'allow', under: R },
    { tool: 'fs_*', decision: 'deny', under: nfc },
  ]

  it('the same path in NFD is the same location: read, write, move refused', async () => {
    const { run, ran } = await policyOf({ rules })
    const nfd = `${R}/cafe\u0301`
    const out = await run([
      call('1', 'fs_read_file', { path: `${nfd}/a` }),
      call('2', 'fs_write_file', { path: `${nfd}/b`, content: '' }),
      call('3', 'fs_move_file', { source: nfd, destination: `${R}/z` }),
    ])
    expect(out.every((r) => r.is_error === true)).toBe(true)
    expect(ran()).toEqual([])
  })

  it('a rule written in NFD guards the NFC spelling', async () => {
    const { run } = await policyOf({
      rules: [
        { tool: 'fs_*', decision: 'allow', under: R },
        { tool: 'fs_*', decision: 'deny', under: `${R}/cafe\u0301` },
      ],
    })
    expect((await run([call('1', 'fs_read_file', { path: `${nfc}/a` })]))[0]?.is_error).toBe(true)
  })

  it('on a volume that ignores case, a case variant is the same location', async () => {
    const caseless = { rules, resolver: lexicalResolver({ caseInsensitive: true }) }
    const { run, ran } = await policyOf(caseless)
    const out = await run([
      call('1', 'fs_read_file', { path: `${R}/CAF\u00c9/a` }),
      call('2', 'fs_read_file', { path: '/SRV/Project/other' }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, false])
    expect(ran()).toEqual(['2'])
  })
})

// -------------------------------------------------------------------------------------
// 2b. links, where this process shares the server's filesystem
// -------------------------------------------------------------------------------------

describe('a location through a symbolic link', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-guard-')))
  afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 5 }))
  mkdirSync(join(root, 'x', 'secret'), { recursive: true })
  symlinkSync(join(root, 'x', 'secret'), join(root, 'innocent'))
  symlinkSync('/etc', join(root, 'etc-link'))
  const rules: ReadonlyArray<Rule> = [
    { tool: 'fs_*', decision: 'allow', under: root },
    { tool: 'fs_*', decision: 'deny', under: join(root, 'x', 'secret') },
  ]

  it('is judged where it leads: a link to a denied directory is refused, one out of the root is not allowed', async () => {
    const { run, ran } = await policyOf({ rules, resolver: 'filesystem' })
    const out = await run([
      call('1', 'fs_read_file', { path: join(root, 'innocent', 'key') }),
      call('2', 'fs_read_file', { path: join(root, 'etc-link', 'passwd') }),
      call('3', 'fs_read_file', { path: join(root, 'x', 'plain') }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, true, false])
    expect(out[1]?.content).toContain('no one is available')
    expect(ran()).toEqual(['3'])
  })

  it('a ".." in a link\'s target leaves where the link before it leads, as the kernel takes it', async () => {
    // pub/j leads into the denied directory; pub/notes.txt -> j/../key reads <denied>/key, not pub/key
    mkdirSync(join(root, 'x', 'secret', 'deep'), { recursive: true })
    mkdirSync(join(root, 'pub'))
    symlinkSync('../x/secret/deep', join(root, 'pub', 'j'))
    symlinkSync('j/../key', join(root, 'pub', 'notes.txt'))
    const { run, ran } = await policyOf({ rules, resolver: 'filesystem' })
    const out = await run([call('1', 'fs_read_file', { path: join(root, 'pub', 'notes.txt') })])
    expect(out[0]?.is_error).toBe(true)
    expect(ran()).toEqual([])
  })

  it('a name with a twin equal to it in NFC is unknown: never allowed, and said once', async () => {
    // Linux keeps both spellings as two entries; the server opens the one a call spells
    mkdirSync(join(root, 'caf\u00e9'))
    mkdirSync(join(root, 'cafe\u0301'))
    const { run, ran, diagnostics } = await policyOf({
      rules: [{ tool: 'fs_*', decision: 'allow', under: join(root, 'caf\u00e9') }],
      resolver: 'filesystem',
    })
    const out = await run([
      call('1', 'fs_read_file', { path: join(root, 'cafe\u0301', 'a') }),
      call('2', 'fs_read_file', { path: join(root, 'caf\u00e9', 'a') }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, true])
    expect(ran()).toEqual([])
    expect(diagnostics).toEqual([
      {
        _tag: 'UnresolvedLocation',
        problem: `names an entry that has a twin equal to it in NFC (${JSON.stringify('caf\u00e9')})`,
      },
    ])
  })

  it('is judged as written without the filesystem: the lexical default sees no link', async () => {
    const { run } = await policyOf({ rules })
    const out = await run([call('1', 'fs_read_file', { path: join(root, 'innocent', 'key') })])
    expect(out[0]?.is_error).toBeUndefined()
  })

  it('a resolver per tool: only the tools that share this filesystem are resolved on it', async () => {
    const { run } = await policyOf({
      rules,
      resolver: (tool) => (tool === 'fs_read_file' ? lexicalResolver() : ('x' as never)),
    })
    expect(
      (await run([call('1', 'fs_read_file', { path: join(root, 'innocent', 'key') })]))[0]?.is_error,
    ).toBeUndefined()
  })
})

// -------------------------------------------------------------------------------------
// 3. files no call may touch
// -------------------------------------------------------------------------------------

describe('protected files', () => {
  const protect = [{ path: `${R}/.toolstack/grants.json`, what: "the gateway's store of grants" }]

  it('refuses a call that writes one, moves it, or moves a directory holding it, whatever the rules say', async () => {
    const { run, ran } = await policyOf({ rules: [{ tool: '*', decision: 'allow' }], protect })
    const out = await run([
      call('1', 'fs_write_file', { path: `${R}/.toolstack/grants.json`, content: '[]' }),
      call('2', 'fs_move_file', { source: `${R}/evil.json`, destination: `${R}/.toolstack/grants.json` }),
      call('3', 'fs_move_file', { source: R, destination: '/tmp/p' }),
      call('4', 'fs_read_file', { path: `${R}/README.md` }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, true, true, false])
    expect(out[0]?.content).toBe(
      `The permission policy refused this call to "fs_write_file": its "path" reaches ${R}/.toolstack/grants.json, the gateway's store of grants, which no tool call may touch (read, write, move or delete, itself or a directory holding it). It was not run; do not retry it.`,
    )
    expect(ran()).toEqual(['4'])
  })

  it('refuses a call whose location cannot be checked against them; one plainly elsewhere runs', async () => {
    const { run, ran } = await policyOf({ rules: [{ tool: '*', decision: 'allow' }], protect })
    const out = await run([
      call('1', 'fs_write_file', { path: 'grants.json', content: '' }),
      call('2', 'web_fetch', { url: 'https://example.com/' }),
      call('3', 'web_fetch', { url: `file://${R}/.toolstack/grants.json` }),
      call('4', 'mail_send_email', { to: 'a@b.example', subject: 's', body: 'b' }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, false, true, false])
    expect(out[0]?.content).toContain(
      'its location could not be checked against the files no tool call may touch (path is relative and this tool has no root)',
    )
    expect(ran()).toEqual(['2', '4'])
  })

  it('reads an argument the rules do not, to keep the files out of its reach', async () => {
    const { run } = await policyOf({ rules: [{ tool: '*', decision: 'allow' }], protect })
    const out = await run([
      call('1', 'git_add', { repo_path: `${R}/.toolstack`, files: ['grants.json'] }),
      call('2', 'git_add', { repo_path: '/srv/other', files: ['/srv/other/a'] }),
      // the directory that holds the store: a commit of it would carry the store along
      call('3', 'git_add', { repo_path: R, files: [`${R}/a`] }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, false, true])
  })

  it('guardFiles: a file touched names the argument; unreadable locations are listed', () => {
    const g = guardFiles(protect)
    expect(g(locateCall('t', { path: `${R}/.toolstack` }, {}))).toEqual({
      _tag: 'Touches',
      arg: 'path',
      file: protect[0],
    })
    expect(g(locateCall('t', { path: 'a', to: '~/x' }, {}))).toEqual({
      _tag: 'Unchecked',
      unevaluable: ['path is relative and this tool has no root', 'to starts with "~", which only a shell expands'],
    })
    expect(g(locateCall('t', {}, {}))).toBeUndefined()
  })

  it('is checked at construction', () => {
    expect(() => withPolicy({ rules: [], protect: [{ path: 'relative', what: 'x' }] })).toThrow(
      'withPolicy: option "protect" must be an array of { path, what }, each path a clean absolute path',
    )
    expect(() => withPolicy({ rules: [], protect: [{ path: '/a' }] as never })).toThrow(TypeError)
  })
})

// -------------------------------------------------------------------------------------
// 4. a location under a name the policy does not read
// -------------------------------------------------------------------------------------

describe('a declared argument that looks like a location', () => {
  const rules: ReadonlyArray<Rule> = [{ tool: '*', decision: 'allow', under: R }]

  it('makes under rules fail closed, and is said once per tool and argument, with the line that reads it', async () => {
    const asked: Array<PermissionRequest> = []
    const { run, ran, diagnostics, policy } = await policyOf({ rules, onAsk: recordingAsk(asked) })
    await run([
      call('1', 'git_add', { repo_path: '/other/repo', files: [`${R}/a`] }),
      call('2', 'git_add', { repo_path: R, files: [`${R}/a`] }),
    ])
    await policy.toolsForLlm()
    expect(ran()).toEqual([])
    expect(asked.map((r) => r.why)).toEqual(['unevaluable-path', 'unevaluable-path'])
    expect(drawPermissionRequest(asked[0] as PermissionRequest)).toContain(
      '  repo_path: not checked (looks like a location and is not read as one: a locationArgs entry "repo_path" reads it; it reads as /other/repo)',
    )
    expect(diagnostics).toEqual([{ _tag: 'UnreadLocation', tool: 'git_add', arg: 'repo_path' }])
    expect(drawPolicyDiagnostic(diagnostics[0] as PolicyDiagnostic)).toBe(
      'toolstack: "git_add" declares "repo_path", which looks like a location but is not read as one, so its "under" rules fail closed on every call; add "repo_path" to locationArgs to read it, or "!repo_path" if it is not a location',
    )
  })

  it('a copy tool\'s "dest" beside a read "path": the rules fail closed until it is read', async () => {
    const inner = recordingProvider([decl('copy_file', ['path', 'dest'])])
    const policy = withPolicy({ rules: [{ tool: '*', decision: 'allow', under: R }] })(inner)
    await policy.toolsForLlm()
    const out = await policy.executeToolCalls([call('1', 'copy_file', { path: `${R}/a`, dest: '/etc/cron.d/evil' })])()
    expect(out._tag === 'Right' && out.right[0]?.is_error).toBe(true)
    expect(inner.rec.batches.flat()).toEqual([])
  })

  it('is read once locationArgs names it, and set aside once it says it is no location', async () => {
    const read = await policyOf({ rules, locationArgs: ['repo_path'] })
    const out = await read.run([
      call('1', 'git_add', { repo_path: '/other/repo', files: [`${R}/a`] }),
      call('2', 'git_add', { repo_path: R, files: [`${R}/a`] }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, false])
    expect(read.diagnostics).toEqual([])
    const aside = await policyOf({ rules, locationArgs: ['!repo_path'] })
    expect(
      (await aside.run([call('1', 'git_add', { repo_path: '/x', files: [`${R}/a`] })]))[0]?.is_error,
    ).toBeUndefined()
  })

  it('"!name" sets aside a default name too, and a name both read and set aside is a TypeError', async () => {
    const send = call('1', 'mail_send_file', { path: `${R}/report.pdf`, to: 'boss@example.com' })
    // "to" is a location by default: an address is never inside, so the allow cannot fire
    const read = await policyOf({ rules: [{ tool: 'mail_*', decision: 'allow', under: R }] })
    expect((await read.run([send]))[0]?.is_error).toBe(true)
    const aside = await policyOf({ rules: [{ tool: 'mail_*', decision: 'allow', under: R }], locationArgs: ['!to'] })
    expect((await aside.run([send]))[0]?.is_error).toBeUndefined()
    expect(() => withPolicy({ rules: [], locationArgs: ['cwd', '!cwd'] })).toThrow(
      'withPolicy: option "locationArgs" both reads and refuses "cwd": keep "cwd" or "!cwd"',
    )
    expect(() => withPolicy({ rules: [], locationArgs: ['!'] })).toThrow(TypeError)
  })

  it('says nothing when no under rule names the tool', async () => {
    const { diagnostics } = await policyOf({ rules: [{ tool: 'fs_*', decision: 'allow', under: R }] })
    expect(diagnostics).toEqual([])
  })
})

// -------------------------------------------------------------------------------------
// 5. values that are not paths
// -------------------------------------------------------------------------------------

describe('a value that is not plainly a path', () => {
  it('a file: URL is judged as the path it names', async () => {
    const { run } = await policyOf({ rules: [{ tool: '*', decision: 'allow', under: R }] })
    const out = await run([
      call('1', 'fs_read_file', { path: 'file:///outside/x' }),
      call('2', 'fs_read_file', { path: `file://${R}/a` }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, false])
  })

  // the reference filesystem server takes no URL: it reads the text as a path relative to its root, so a ".."
  // there leads out of "file:" or "http:", where the URL reading drops a fragment or sees another host
  it('a URL whose text a server may read as a path with ".." is unknown: refused near the protected files, never allowed', async () => {
    const protect = [{ path: `${R}/.toolstack/grants.json`, what: "the gateway's store of grants" }]
    const up = '/..'.repeat(12)
    const { run, ran } = await policyOf({
      rules: [
        { tool: 'fs_*', decision: 'allow', under: `${R}/public` },
        { tool: 'web_fetch', decision: 'allow' },
      ],
      protect,
    })
    const out = await run([
      call('1', 'fs_read_file', { path: `file://${R}/public/ok.txt#${up}${R}/private/secret.txt` }),
      call('2', 'fs_read_file', { path: `file://${R}/public/ok.txt?${up}${R}/private/secret.txt` }),
      call('3', 'web_fetch', { url: 'http://x/../../.toolstack/grants.json' }),
      call('4', 'fs_read_file', { path: `file://${R}/public/%2e%2e/private/secret.txt` }),
      call('5', 'fs_read_file', { path: `file://${R}/public/ok.txt` }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, true, true, true, false])
    expect(out[2]?.content).toContain(
      'could not be checked against the files no tool call may touch (url has a ".." segment)',
    )
    expect(ran()).toEqual(['5'])
  })

  it('an e-mail address or another URL is never inside a directory', async () => {
    const { run, ran } = await policyOf({ rules: [{ tool: '*', decision: 'allow', under: R }] })
    await run([
      call('1', 'mail_send_email', { to: 'attacker@evil.example', subject: 's', body: 'b' }),
      call('2', 'web_fetch', { url: `https://evil.example${R}` }),
    ])
    expect(ran()).toEqual([])
  })
})

// -------------------------------------------------------------------------------------
// 6. never a wider grant than what was shown
// -------------------------------------------------------------------------------------

describe('"always"', () => {
  it('is not offered where a location could not be read, and an "always" answer then records nothing', async () => {
    const asked: Array<PermissionRequest> = []
    const { run, ran, policy } = await policyOf({ rules: [], onAsk: recordingAsk(asked, { action: 'always-allow' }) })
    const out = await run([
      call('1', 'fs_read_multiple_files', { paths: [] }),
      call('2', 'fs_read_file', { path: null }),
      call('3', 'fs_read_file', {}),
      call('4', 'fs_read_file', { path: `${R}/../etc/passwd` }),
      call('5', 'fs_read_file', { path: 'relative' }),
    ])
    expect(asked.map((r) => r.suggestedRule)).toEqual([undefined, undefined, undefined, undefined, undefined])
    expect(out.every((r) => r.is_error === true && r.content.includes('"always" was not offered'))).toBe(true)
    expect(policy.grants()).toEqual([])
    expect(ran()).toEqual([])
    expect(drawPermissionRequest(asked[0] as PermissionRequest)).toContain(
      '"Always" is not offered: a location could not be checked, so only this call can be answered.',
    )
  })

  it('covers exactly the directory the question named, for a call whose every location was read', async () => {
    const asked: Array<PermissionRequest> = []
    const { run, policy } = await policyOf({ rules: [], onAsk: recordingAsk(asked, { action: 'always-allow' }) })
    await run([call('1', 'fs_read_file', { path: `${R}/docs/a.md` })])
    expect(asked[0]?.suggestedRule).toEqual({ tool: 'fs_read_file', decision: 'allow', under: `${R}/docs` })
    expect(drawPermissionRequest(asked[0] as PermissionRequest)).toContain(
      `"Always" remembers: allow "fs_read_file" under ${R}/docs, for this session.`,
    )
    expect(policy.grants()).toEqual([asked[0]?.suggestedRule])
  })

  it('before any listing: nothing the call gives is read, so "always" is not offered', async () => {
    const asked: Array<PermissionRequest> = []
    const inner = recordingProvider(FS)
    const policy = withPolicy({ rules: [], onAsk: recordingAsk(asked) })(inner)
    await policy.executeToolCalls([call('1', 'fs_read_file', {}), call('2', 'fs_read_file', { path: `${R}/a` })])()
    expect(asked.map((r) => r.suggestedRule)).toEqual([undefined, undefined])
    await policy.toolsForLlm()
    await policy.executeToolCalls([call('3', 'fs_read_file', { path: `${R}/a` })])()
    expect(asked[2]?.suggestedRule).toEqual({ tool: 'fs_read_file', decision: 'allow', under: R })
  })
})

// -------------------------------------------------------------------------------------
// 7. a question that cannot hide
// -------------------------------------------------------------------------------------

describe('the question', () => {
  it('400 paths with one outside: the outside one is on the first lines, and the question is bounded', async () => {
    const asked: Array<PermissionRequest> = []
    const { run } = await policyOf({
      rules: [
        { tool: 'fs_read_multiple_files', decision: 'allow', under: R },
        { tool: 'fs_read_multiple_files', decision: 'ask', under: `${R}/docs` },
      ],
      onAsk: recordingAsk(asked),
    })
    const paths = Array.from({ length: 400 }, (_, i) => `${R}/src/f${i}.ts`)
    paths[218] = '/home/me/.ssh/id_rsa'
    paths[300] = `${R}/docs/guide.md`
    await run([call('1', 'fs_read_multiple_files', { paths })])
    const lines = drawPermissionRequest(asked[0] as PermissionRequest)
    expect(lines[0]).toBe(
      'May the model call fs_read_multiple_files on 400 paths (1 in a guarded directory, 1 outside every allowed directory)?',
    )
    expect(lines[1]).toBe('Locations, each with the argument it came from:')
    expect(lines[2]).toBe(`  paths[300]: ${R}/docs/guide.md`)
    expect(lines[3]).toBe('  paths[218]: /home/me/.ssh/id_rsa')
    expect(lines).toContain(`  … and ${400 - SHOWN_LIMITS.locations} more locations not shown`)
    expect(lines.join('\n').length).toBeLessThan(4_000)
  })

  it('shows arguments bounded too: many keys, then how many more', async () => {
    const asked: Array<PermissionRequest> = []
    const { run } = await policyOf({ rules: [], onAsk: recordingAsk(asked) })
    const args: Record<string, unknown> = { path: `${R}/a`, content: 'x' }
    for (let i = 0; i < 1000; i++) args[`k${i}`] = i
    await run([call('1', 'fs_write_file', args)])
    const lines = drawPermissionRequest(asked[0] as PermissionRequest)
    expect(lines).toContain(`  … and ${1002 - SHOWN_LIMITS.arguments} more arguments not shown`)
    expect(lines.length).toBeLessThan(60)
  })

  it('bounds the rule "always" would record, as it bounds the path above it', async () => {
    const asked: Array<PermissionRequest> = []
    const { run } = await policyOf({ rules: [], onAsk: recordingAsk(asked) })
    const deep = `${R}/${'d'.repeat(100_000)}`
    await run([call('1', 'fs_write_file', { path: `${deep}/a`, content: 'x' })])
    const request = asked[0] as PermissionRequest
    expect(request.suggestedRule).toEqual({ tool: 'fs_write_file', decision: 'allow', under: deep })
    const always = drawPermissionRequest(request).find((l) => l.startsWith('"Always" remembers:'))
    expect(always).toBe(
      `"Always" remembers: allow "fs_write_file" under ${deep.slice(0, SHOWN_LIMITS.path)}… (${deep.length - SHOWN_LIMITS.path} more characters not shown), for this session.`,
    )
  })

  it('escapes every invisible or format character a model wrote, in keys, values and the reason (property)', async () => {
    const invisible = fc.constantFrom(
      '\u200b',
      '\u200d',
      '\u2060',
      '\ufeff',
      '\u00ad',
      '\u3164',
      '\u115f',
      '\u034f',
      '\ufe0f',
      '\u{e0041}',
      '\u202e',
      '\u2028',
      '\u061c',
      '\u180e',
    )
    const text = fc
      .array(fc.oneof(invisible, fc.constantFrom('a', 'path', ' ', '"')), { maxLength: 8 })
      .map((xs) => xs.join(''))
    await fc.assert(
      fc.asyncProperty(text, text, text, async (key, value, reason) => {
        const asked: Array<PermissionRequest> = []
        const { run } = await policyOf({ rules: [], onAsk: recordingAsk(asked) })
        await run([call('1', 'fs_write_file', { path: `${R}/${value}`, content: value, [key]: value, reason })])
        const all = drawPermissionRequest(asked[0] as PermissionRequest).join('\n')
        // the oracle: each character on its own, by category or by code point, not the code's own pattern
        const hidden = [...all].filter(
          (c) => /\p{Cf}|\p{Zl}|\p{Zp}/u.test(c) || ['\u3164', '\u115f', '\u034f', '\ufe0f'].includes(c),
        )
        expect(hidden).toEqual([])
      }),
      { numRuns: 50 },
    )
  })

  it('"pa\\u200bth" does not read as a second "path"', async () => {
    const asked: Array<PermissionRequest> = []
    const { run } = await policyOf({ rules: [], onAsk: recordingAsk(asked) })
    await run([call('1', 'fs_write_file', { path: `${R}/a`, 'pa\u200bth': '/etc/passwd' })])
    expect(drawPermissionRequest(asked[0] as PermissionRequest)).toContain('  "pa\\u200bth": "/etc/passwd"')
  })
})

// a promise and the function that settles it, made before anyone waits on it
const gate = <A>(): { readonly wait: Promise<A>; readonly open: (a: A) => void } => {
  let open: (a: A) => void = () => undefined
  const wait = new Promise<A>((resolve) => (open = resolve))
  return { wait, open }
}

describe('a question asked while another is open', () => {
  it('with a queue that refuses while one is open, is refused at once, saying why; one the rules allow runs', async () => {
    const questions = newQuestionQueue({ whileOpen: 'refuse' })
    const answers = [gate<PermissionAnswer>(), gate<PermissionAnswer>()]
    let n = 0
    const inner = recordingProvider(FS)
    const policy = withPolicy({
      rules: [{ tool: 'fs_read_file', decision: 'allow' }],
      questions,
      onAsk: () => (answers[n++] as (typeof answers)[number]).wait,
    })(inner)
    await policy.toolsForLlm()
    const first = policy.executeToolCalls([call('1', 'fs_write_file', { path: `${R}/a`, content: '' })])()
    // the first question is open: another that needs asking cannot wait for it
    const second = await policy.executeToolCalls([
      call('2', 'fs_write_file', { path: `${R}/b`, content: '' }),
      call('3', 'fs_read_file', { path: `${R}/c` }),
    ])()
    expect(second._tag === 'Right' && second.right.map((r) => r.is_error === true)).toEqual([true, false])
    expect(second._tag === 'Right' && second.right[0]?.content).toContain(
      'it was made while the user was being asked about another call, so it cannot wait for an answer',
    )
    answers[0]?.open({ action: 'allow-once' })
    const out = await first
    expect(out._tag === 'Right' && out.right[0]?.is_error).toBeUndefined()
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['3', '1'])
    // once it is answered, the next question is asked as usual
    const third = policy.executeToolCalls([call('4', 'fs_write_file', { path: `${R}/d`, content: '' })])()
    answers[1]?.open({ action: 'allow-once' })
    const done = await third
    expect(done._tag === 'Right' && done.right[0]?.is_error).toBeUndefined()
    expect(n).toBe(2)
  })

  it('with the default queue, waits its turn; with "refuse", says a question is waiting or open until it settles', async () => {
    const waiting = newQuestionQueue()
    const one = gate<void>()
    const open = waiting.inTurn(() => one.wait)()
    expect(waiting.asking()).toBe(false)
    one.open()
    await open
    const refusing = newQuestionQueue({ whileOpen: 'refuse' })
    const two = gate<void>()
    const held = refusing.inTurn(() => two.wait)()
    // counted from the moment it is queued, before it starts
    expect(refusing.asking()).toBe(true)
    two.open()
    await held
    expect(refusing.asking()).toBe(false)
  })
})

describe('arguments read once', () => {
  it('a getter on a string `function.arguments` is read once: the tool gets what was judged', async () => {
    const { policy, ran } = await policyOf({ rules: [{ tool: 'fs_read_file', decision: 'allow', under: R }] })
    let reads = 0
    const hostile = {
      id: '1',
      type: 'function' as const,
      function: {
        name: 'fs_read_file',
        get arguments(): string {
          return reads++ === 0 ? JSON.stringify({ path: `${R}/a` }) : JSON.stringify({ path: '/etc/shadow' })
        },
      },
    }
    const inner = await policy.executeToolCalls([hostile])()
    expect(inner._tag).toBe('Right')
    expect(reads).toBe(1)
    expect(ran()).toEqual(['1'])
  })
})
