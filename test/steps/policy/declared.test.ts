// Issue 23: the guard judges the call the server will run, and the human is shown the
// truth. Locations come only from the arguments a tool declares; the question shows
// the facts first and the model's words last; what was judged is what runs; and an
// onAsk that calls back into its own stack gets an answer.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type {
  PermissionAnswer,
  PermissionRequest,
  Provider,
  Rule,
  ToolCall,
  ToolDeclaration,
  ToolResult,
} from '../../../src/index.js'
import type { Decision } from '../../../src/steps/policy/Rule.js'
import { drawPermissionRequest, newQuestionQueue, withPolicy } from '../../../src/index.js'
import { showFacts, showText, showValue } from '../../../src/steps/policy/Answer.js'
import { plainArguments } from '../../../src/steps/policy/Verdict.js'
import { evaluate } from '../../../src/steps/policy/evaluate.js'
import { declaredArguments } from '../../../src/steps/policy/listing.js'
import { LOCATION_ARGS, locate } from '../../../src/kernel/paths.js'
import { elicitationFor } from '../../../src/mcp/index.js'
import { call, decl, recordingProvider } from '../../support/fakes.js'

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

const results = async (p: Provider<unknown>, calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
  const out = await p.executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error('the policy failed a batch')
  return out.right
}

/** A policy over `declarations`, listed once through it, as a host lists before it calls. */
const listedPolicy = async (
  declarations: ReadonlyArray<ToolDeclaration>,
  options: Omit<Parameters<typeof withPolicy>[0], 'rules'> & { readonly rules: ReadonlyArray<Rule> },
) => {
  const inner = recordingProvider(declarations)
  const policy = withPolicy(options)(inner)
  await policy.toolsForLlm()
  return { inner, policy }
}

const forwarded = (inner: ReturnType<typeof recordingProvider>): ReadonlyArray<ToolCall> => inner.rec.batches.flat()

const MOVE = decl('move_file', ['source', 'destination'])
const READ_MANY: ToolDeclaration = {
  type: 'function',
  function: {
    name: 'read_multiple_files',
    parameters: { type: 'object', properties: { paths: { type: 'array', items: { type: 'string' } } } },
  },
}

// -------------------------------------------------------------------------------------
// the cases the fault campaign found
// -------------------------------------------------------------------------------------

describe('a decoy location decides nothing', () => {
  it('move_file is judged on source and destination; a decoy path inside the folder does not allow it', async () => {
    const { inner, policy } = await listedPolicy([MOVE], {
      rules: [{ tool: 'move_file', decision: 'allow', under: '/srv/project' }],
    })
    const [plain, decoyed, inside] = await results(policy, [
      call('1', 'move_file', { source: '/etc/passwd', destination: '/srv/project/x' }),
      call('2', 'move_file', { source: '/etc/passwd', destination: '/srv/project/x', path: '/srv/project' }),
      call('3', 'move_file', { source: '/srv/project/a', destination: '/srv/project/b' }),
    ])
    // headless: what would be asked is refused
    expect(plain?.content).toMatch(/no one is available/)
    expect(decoyed?.content).toMatch(/no one is available/)
    expect(inside?.is_error).toBeUndefined()
    expect(forwarded(inner).map((c) => c.id)).toEqual(['3'])
  })

  it('read_multiple_files is judged on every one of its paths; a decoy path outside /etc does not lift the deny', async () => {
    const rules: ReadonlyArray<Rule> = [
      { tool: '*', decision: 'deny', under: '/etc' },
      { tool: '*', decision: 'allow' },
    ]
    const { inner, policy } = await listedPolicy([READ_MANY], { rules })
    const out = await results(policy, [
      call('1', 'read_multiple_files', { paths: ['/etc/shadow'] }),
      call('2', 'read_multiple_files', { paths: ['/etc/shadow'], path: '/tmp' }),
      call('3', 'read_multiple_files', { paths: ['/tmp/a', '/etc/shadow'] }),
      call('4', 'read_multiple_files', { paths: ['/tmp/a', '/tmp/b'] }),
      call('5', 'read_multiple_files', { paths: ['/tmp/a'], path: '/tmp' }),
    ])
    expect(out.map((r) => r.is_error === true)).toEqual([true, true, true, false, true])
    // the decoy is named in the refusal, as what could not be checked
    expect(out[4]?.content).toContain('path is not an argument this tool declares')
    expect(forwarded(inner).map((c) => c.id)).toEqual(['4'])
  })

  it('asks about a call with a decoy, naming the decoy in the question, with every declared location', async () => {
    const asked: Array<PermissionRequest> = []
    const onAsk = (r: PermissionRequest): PermissionAnswer => {
      asked.push(r)
      return { action: 'deny-once' }
    }
    const { inner, policy } = await listedPolicy([MOVE], {
      rules: [{ tool: 'move_file', decision: 'allow', under: '/srv/project' }],
      onAsk,
    })
    await results(policy, [
      call('1', 'move_file', { source: '/srv/project/a', destination: '/srv/project/b', path: '/srv/project' }),
    ])
    expect(asked[0]?.why).toBe('unevaluable-path')
    // what could not be checked comes first
    expect(asked[0]?.locations).toEqual([
      { _tag: 'Unknown', arg: { text: 'path', cut: 0 }, problem: 'is not an argument this tool declares' },
      {
        _tag: 'Known',
        arg: { text: 'source', cut: 0 },
        path: { text: '/srv/project/a', cut: 0 },
        concern: 'inside',
      },
      {
        _tag: 'Known',
        arg: { text: 'destination', cut: 0 },
        path: { text: '/srv/project/b', cut: 0 },
        concern: 'inside',
      },
    ])
    expect(drawPermissionRequest(asked[0] as PermissionRequest)).toContain(
      '  path: not checked (is not an argument this tool declares)',
    )
    expect(forwarded(inner)).toEqual([])
  })

  it("a tool that declares no location keeps today's rules: allow-under never fires, deny-under does, bare rules decide", async () => {
    const web = decl('web_get', ['url'])
    const { inner, policy } = await listedPolicy([web], {
      rules: [
        { tool: 'web_get', decision: 'allow', under: '/' },
        { tool: 'web_*', decision: 'allow' },
      ],
    })
    const out = await results(policy, [
      call('1', 'web_get', { url: 'https://x' }),
      call('2', 'web_get', { url: 'https://x', path: '/tmp' }),
    ])
    // the bare allow fires for both: a decoy makes no under rule allow, it does not refuse a bare allow
    expect(out.map((r) => r.is_error)).toEqual([undefined, undefined])
    expect(forwarded(inner).map((c) => c.id)).toEqual(['1', '2'])
    expect(
      evaluate(
        [{ tool: '*', decision: 'deny', under: '/etc' }],
        'web_get',
        { url: 'x' },
        {},
        { names: LOCATION_ARGS, declared: new Set(['url']) },
      ).decision,
    ).toBe('deny')
  })

  it('before any listing, and for a tool the last listing did not hold, fails closed: no key can be told from a decoy', async () => {
    const rules: ReadonlyArray<Rule> = [{ tool: '*', decision: 'allow', under: '/srv' }]
    const inner = recordingProvider([decl('write', ['path']), decl('copy', ['src', 'dst'])])
    const policy = withPolicy({ rules })(inner)
    const before = await results(policy, [
      // "path" inside, but the tool may take another key: not allowed
      call('1', 'write', { path: '/srv/a' }),
      call('1b', 'write', { path: '/srv/a', target: '/etc/x' }),
      call('1c', 'write', { path: '/srv/a', repo_path: '/srv/r' }),
      call('1d', 'write', { content: 'x' }),
      // the reviewer's decoy: the tool's own keys hold no location name, and "path" is the model's
      call('1e', 'copy', { src: '/home/me/.ssh/id_rsa', dst: '/tmp/leak', path: '/srv/a' }),
    ])
    expect(before.map((r) => r.is_error)).toEqual([true, true, true, true, true])
    await policy.toolsForLlm()
    const after = await results(policy, [
      call('2', 'write', { path: '/srv/a' }),
      call('3', 'other', { path: '/srv/a' }),
      call('3b', 'other', { path: '/etc/a' }),
    ])
    expect(after.map((r) => r.is_error)).toEqual([undefined, true, true])
    expect(forwarded(inner).map((c) => c.id)).toEqual(['2'])
    // a deny under a directory fires on it, saying why
    const denying = withPolicy({
      rules: [
        { tool: '*', decision: 'deny', under: '/etc' },
        { tool: '*', decision: 'allow' },
      ],
    })(recordingProvider([]))
    const [d] = await results(denying, [call('4', 'write', { content: 'x' })])
    expect(d?.content).toContain(
      "Its location could not be checked (arguments give no location, and this tool's declaration is not known (its tools were not listed through the policy))",
    )
  })

  it('a later listing replaces what a tool declares; a failed one keeps the last', async () => {
    let declarations: ReadonlyArray<ToolDeclaration> = [decl('write', ['path'])]
    let fail = false
    const inner: Provider<string> = {
      toolsForLlm: () =>
        Promise.resolve(fail ? { _tag: 'Left', left: 'down' } : { _tag: 'Right', right: declarations }),
      executeToolCalls: (calls) => () =>
        Promise.resolve({
          _tag: 'Right',
          right: calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'ok' })),
        }),
    }
    const policy = withPolicy({ rules: [{ tool: 'write', decision: 'allow', under: '/srv' }] })(inner)
    await policy.toolsForLlm()
    const c = call('1', 'write', { path: '/srv/a' })
    expect((await results(policy, [c]))[0]?.is_error).toBeUndefined()
    declarations = [decl('write', ['target'])]
    await policy.toolsForLlm()
    expect((await results(policy, [c]))[0]?.is_error).toBe(true)
    fail = true
    await policy.toolsForLlm()
    expect((await results(policy, [call('2', 'write', { target: '/srv/a' })]))[0]?.is_error).toBeUndefined()
  })

  it('reads keys as data: a declared "__proto__" location is read, and an undeclared one is a decoy', async () => {
    const listing = JSON.parse(
      '[{"type":"function","function":{"name":"odd","parameters":{"properties":{"__proto__":{"type":"string"}}}}}]',
    ) as ReadonlyArray<ToolDeclaration>
    expect([...(declaredArguments(listing).get('odd') ?? [])]).toEqual(['__proto__'])
    const rules: ReadonlyArray<Rule> = [{ tool: 'odd', decision: 'allow', under: '/srv' }]
    const { inner, policy } = await listedPolicy(listing, { rules, locationArgs: ['__proto__'] })
    const out = await results(policy, [
      call('1', 'odd', '{"__proto__":"/srv/a"}'),
      call('2', 'odd', '{"__proto__":"/etc/a"}'),
    ])
    expect(out.map((r) => r.is_error)).toEqual([undefined, true])
    expect(forwarded(inner).map((c) => c.id)).toEqual(['1'])
    // a location name inherited, never own, is no location and no decoy
    expect(
      evaluate(
        rules,
        'odd',
        Object.create({ path: '/srv/a' }) as object,
        {},
        { names: LOCATION_ARGS, declared: new Set() },
      ).locations,
    ).toEqual([{ _tag: 'Missing' }])
  })

  it('locationArgs adds names, read only where a tool declares them; a bad one is a TypeError naming the fix', async () => {
    const rules: ReadonlyArray<Rule> = [{ tool: 'build', decision: 'allow', under: '/srv' }]
    const { inner, policy } = await listedPolicy([decl('build', ['workdir'])], { rules, locationArgs: ['workdir'] })
    const out = await results(policy, [
      call('1', 'build', { workdir: '/srv/a' }),
      call('2', 'build', { workdir: '/etc' }),
    ])
    expect(out.map((r) => r.is_error)).toEqual([undefined, true])
    expect(forwarded(inner).map((c) => c.id)).toEqual(['1'])
    for (const bad of ['workdir', [1], [''], null]) {
      expect(() => withPolicy({ rules, locationArgs: bad as never })).toThrow(
        /option "locationArgs" must be an array of argument names/,
      )
    }
  })

  it('declaredArguments leaves out a tool listed twice, or whose declaration cannot be read', () => {
    const unreadable = {
      type: 'function',
      function: {
        name: 'u',
        get parameters(): unknown {
          throw new Error('no')
        },
      },
    } as unknown as ToolDeclaration
    const map = declaredArguments([
      decl('a', ['path']),
      decl('a', ['to']),
      unreadable,
      decl('b'),
      { type: 'function', function: { name: 'c', parameters: { properties: [] } } },
    ] as ReadonlyArray<ToolDeclaration>)
    expect([...map.keys()]).toEqual(['b', 'c'])
    expect(map.get('c')?.size).toBe(0)
  })
})

// -------------------------------------------------------------------------------------
// the property: an oracle written here, from the rule as docs/policy.md states it
// -------------------------------------------------------------------------------------

type Where = string | 'unknown'

// the rule as stated, written apart from src/steps/policy: a path is clean when it has no
// "..", NUL, backslash or leading "~"; relative ones resolve against the longest root
const resolve = (v: unknown, roots: Readonly<Record<string, string>>, tool: string): Where => {
  if (
    typeof v !== 'string' ||
    v === '' ||
    v.includes('\u0000') ||
    v.includes('\\') ||
    v.startsWith('~') ||
    v.split('/').includes('..')
  )
    return 'unknown'
  const clean = (p: string) =>
    '/' +
    p
      .split('/')
      .filter((s) => s !== '' && s !== '.')
      .join('/')
  if (v.startsWith('/')) return clean(v)
  const prefixes = Object.keys(roots)
    .filter((p) => tool.startsWith(p))
    .sort((a, b) => b.length - a.length)
  const root = prefixes[0] === undefined ? undefined : roots[prefixes[0]]
  return root === undefined ? 'unknown' : clean(`${root}/${v}`)
}
const within = (dir: string, w: Where): boolean =>
  w !== 'unknown' && (dir === '/' || w === dir || w.startsWith(dir + '/'))

const oracle = (
  rules: ReadonlyArray<Rule>,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  declared: ReadonlyArray<string>,
  roots: Readonly<Record<string, string>>,
): Decision => {
  const where: Array<Where> = []
  for (const name of LOCATION_ARGS) {
    if (!Object.keys(args).includes(name)) continue
    const v = args[name]
    if (!declared.includes(name)) where.push('unknown')
    else if (Array.isArray(v)) for (const x of v) where.push(resolve(x, roots, tool))
    else where.push(resolve(v, roots, tool))
  }
  if (where.length === 0) where.push('unknown')
  const fired = rules.filter((r) => {
    const named = r.tool === '*' || r.tool === tool || (r.tool.endsWith('*') && tool.startsWith(r.tool.slice(0, -1)))
    if (!named) return false
    const under = r.under
    if (under === undefined) return true
    return r.decision === 'allow'
      ? where.every((w) => within(under, w))
      : where.some((w) => w === 'unknown' || within(under, w))
  })
  return fired.some((r) => r.decision === 'deny')
    ? 'deny'
    : fired.some((r) => r.decision === 'ask')
      ? 'ask'
      : fired.length > 0
        ? 'allow'
        : 'ask'
}

const DIRS = ['/', '/srv', '/srv/project', '/srv/project/src', '/srv/project2', '/etc']
const PATHS = [
  '/srv/project/a',
  '/srv/project/src/b.ts',
  '/srv/project2/c',
  '/etc/passwd',
  '/srv',
  'src/x.ts',
  'a',
  '../x',
  '/srv/project/../../etc',
  '~/x',
  '',
  7,
  null,
]
const TOOLS = ['fs_move', 'fs_project_write', 'web_get']

const ruleArb: fc.Arbitrary<Rule> = fc
  .record({
    tool: fc.constantFrom('*', 'fs_*', 'fs_project_*', 'fs_move', 'web_get'),
    decision: fc.constantFrom<Decision>('allow', 'deny', 'ask'),
    under: fc.option(fc.constantFrom(...DIRS), { nil: undefined }),
  })
  .map(({ tool, decision, under }) => (under === undefined ? { tool, decision } : { tool, decision, under }))

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...PATHS),
  fc.array(fc.constantFrom(...PATHS), { maxLength: 3 }),
)

const caseArb = fc
  .record({
    tool: fc.constantFrom(...TOOLS),
    declared: fc.subarray([...LOCATION_ARGS]),
    rules: fc.array(ruleArb, { maxLength: 4 }),
    roots: fc.constantFrom<Readonly<Record<string, string>>>(
      {},
      { '': '/srv' },
      { '': '/srv', fs_: '/srv/project' },
      { fs_: '/srv/project', fs_project_: '/srv/project/src' },
    ),
  })
  .chain((c) =>
    fc
      .record({
        given: fc.dictionary(fc.constantFrom(...c.declared, 'content'), valueArb, { maxKeys: 4 }),
        decoys: fc.dictionary(
          fc.constantFrom(...LOCATION_ARGS.filter((n) => !c.declared.includes(n)), '__proto__'),
          valueArb,
          { maxKeys: 3 },
        ),
      })
      .map((call) => ({ ...c, ...call })),
  )

// arguments as a model sends them: JSON text, so "__proto__" is an own key like any other
const argsOf = (...parts: ReadonlyArray<Readonly<Record<string, unknown>>>): Record<string, unknown> =>
  JSON.parse(
    `{${parts.flatMap((p) => Object.keys(p).map((k) => `${JSON.stringify(k)}:${JSON.stringify(p[k])}`)).join(',')}}`,
  ) as Record<string, unknown>

describe('the location rule (property)', () => {
  it('every declared location is judged, and no undeclared key ever turns a decision into allow', () => {
    fc.assert(
      fc.property(caseArb, ({ tool, declared, rules, roots, given, decoys }) => {
        const scope = { names: LOCATION_ARGS, declared: new Set([...declared, 'content', 'reason']) }
        const withDecoys = argsOf(given, decoys)
        const without = argsOf(given)
        const e = evaluate(rules, tool, withDecoys, roots, scope)
        expect(e.decision).toBe(oracle(rules, tool, withDecoys, declared, roots))
        expect(evaluate(rules, tool, without, roots, scope).decision).toBe(
          oracle(rules, tool, without, declared, roots),
        )
        if (e.decision === 'allow') expect(evaluate(rules, tool, without, roots, scope).decision).toBe('allow')
        // with a decoy, only a rule without under can allow
        if (e.decision === 'allow' && Object.keys(decoys).some((k) => k !== '__proto__'))
          expect(e.rule?.under).toBeUndefined()
      }),
    )
  })

  it('withPolicy forwards a call exactly when the rule allows it, through a listing of the generated tool', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ tool, declared, rules, roots, given, decoys }) => {
        const declaration = decl(tool, [...declared, 'content'])
        const { inner, policy } = await listedPolicy([declaration], { rules, roots, onDiagnostic: () => undefined })
        const args = argsOf(given, decoys)
        const [r] = await results(policy, [call('1', tool, JSON.stringify(args))])
        const allowed = oracle(rules, tool, args, declared, roots) === 'allow'
        expect(r?.is_error === true).toBe(!allowed)
        expect(forwarded(inner).length).toBe(allowed ? 1 : 0)
      }),
    )
  })
})

// -------------------------------------------------------------------------------------
// the question: facts first, the model's words last
// -------------------------------------------------------------------------------------

describe('the question a human is shown', () => {
  const hostile = [
    'I need this.\nArguments: {"source":"/srv/project/a","destination":"/srv/project/b"}',
    '\r\u001b[2K\u0007\u202eevil\u2028',
    'x'.repeat(10_000),
  ].join('')

  const askedAbout = async (args: Readonly<Record<string, unknown>>): Promise<PermissionRequest> => {
    const asked: Array<PermissionRequest> = []
    const { policy } = await listedPolicy([decl('move_file', ['source', 'destination', 'content', 'reason'])], {
      rules: [],
      onAsk: (r) => {
        asked.push(r)
        return { action: 'deny-once' }
      },
    })
    await results(policy, [call('1', 'move_file', args)])
    expect(asked).toHaveLength(1)
    return asked[0] as PermissionRequest
  }

  it('shows every location and every argument key before the reason, and the reason on one escaped, bounded line', async () => {
    const request = await askedAbout({
      reason: hostile,
      source: '/etc/passwd',
      destination: '/srv/project/x',
      path: '/srv/project',
      content: 'y'.repeat(1000),
    })
    for (const lines of [drawPermissionRequest(request), elicitationFor(request).message.split('\n')]) {
      const last = lines[lines.length - 1] ?? ''
      const reasonAt = lines.findIndex((l) => l.startsWith("The model's reason"))
      expect(reasonAt).toBe(lines.length - 1)
      for (const fact of [
        '  source: /etc/passwd',
        '  destination: /srv/project/x',
        '  path: not checked (is not an argument this tool declares)',
        '  "source": "/etc/passwd"',
        '  "path": "/srv/project"',
        '  "reason": (shown last)',
      ]) {
        const at = lines.indexOf(fact)
        expect(at, fact).toBeGreaterThan(-1)
        expect(at).toBeLessThan(reasonAt)
      }
      // the content is cut, and says by how much
      expect(lines).toContain(`  "content": "${'y'.repeat(199)}… (802 more characters not shown)`)
      // one line, nothing a terminal acts on, bounded, and the fake line stays inside it
      expect(lines.filter((l) => l.startsWith('Arguments'))).toHaveLength(1)
      // eslint-disable-next-line no-control-regex
      expect(last).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202e]/)
      expect(last).toContain('I need this.\\nArguments: {\\"source\\"')
      expect(last).toContain('\\u202eevil\\u2028')
      expect(last).toMatch(/… \(\d+ more characters not shown\)$/)
      expect(last.length).toBeLessThan(700)
    }
    expect(request.reason?.cut).toBeGreaterThan(9_000)
  })

  it('escapes what the model controls among the facts too: a key, a value, the tool name, a path', async () => {
    const request = await askedAbout({ 'evil\nkey': 'a\nb', source: '/srv/a\u200bb\u202ec' })
    const lines = drawPermissionRequest(request)
    expect(lines).toContain('  "evil\\nkey": "a\\nb"')
    expect(lines).toContain('  source: /srv/a\\u200bb\\u202ec')
    expect(drawPermissionRequest({ ...request, tool: 'x\ny' })[0]).toBe(
      'May the model call x\\u000ay on /srv/a\\u200bb\\u202ec?',
    )
    // a control character in a location makes it no plain path: not checked, and said
    const controlled = await askedAbout({ source: '/srv/a\nb' })
    expect(drawPermissionRequest(controlled)).toContain('  source: not checked (contains a control character)')
  })
})

// -------------------------------------------------------------------------------------
// what was judged is what runs
// -------------------------------------------------------------------------------------

describe('what was judged is what runs', () => {
  const rules: ReadonlyArray<Rule> = [{ tool: 'write', decision: 'allow', under: '/srv/project' }]

  it('a getter that answers differently after its first read: the tool gets the value that was judged', async () => {
    const { inner, policy } = await listedPolicy([decl('write', ['path', 'content'])], { rules })
    let reads = 0
    const args = {
      content: 'x',
      get path(): string {
        return reads++ === 0 ? '/srv/project/a' : '/etc/cron.d/evil'
      },
    }
    const c = call('1', 'write', args, true)
    const [r] = await results(policy, [c])
    expect(r?.is_error).toBeUndefined()
    const sent = forwarded(inner)[0]
    expect(sent).not.toBe(c)
    expect(sent?.function.arguments).toEqual({ content: 'x', path: '/srv/project/a' })
    expect((sent?.function.arguments as Record<string, unknown>)['path']).toBe('/srv/project/a')
  })

  it('a Proxy that answers differently later: the same', async () => {
    const { inner, policy } = await listedPolicy([decl('write', ['path'])], { rules })
    let reads = 0
    const args = new Proxy({ path: '/srv/project/a' } as Record<string, unknown>, {
      get: (t, k) => (k === 'path' && reads++ > 0 ? '/etc/cron.d/evil' : t[k as string]),
    })
    await results(policy, [call('1', 'write', args, true)])
    expect((forwarded(inner)[0]?.function.arguments as Record<string, unknown>)['path']).toBe('/srv/project/a')
  })

  it('string arguments go down as the very call; a call decided by name alone too, its object arguments unread', async () => {
    const { inner, policy } = await listedPolicy([decl('write', ['path']), decl('read', ['path'])], {
      rules: [...rules, { tool: 'read', decision: 'allow' }],
    })
    let reads = 0
    const counted = {
      get path(): string {
        reads++
        return '/etc/a'
      },
    }
    const a = call('1', 'write', { path: '/srv/project/a' })
    const b = call('2', 'read', counted, true)
    await results(policy, [a, b])
    expect(forwarded(inner)[0]).toBe(a)
    expect(forwarded(inner)[1]).toBe(b)
    expect(reads).toBe(0)
  })

  it('object arguments that cannot be copied are refused, saying why, and never sent on', async () => {
    const { inner, policy } = await listedPolicy([decl('write', ['path'])], {
      rules: [
        { tool: 'write', decision: 'allow' },
        { tool: 'write', decision: 'allow', under: '/srv' },
      ],
    })
    const [r] = await results(policy, [call('1', 'write', { path: '/srv/a', n: 10n }, true)])
    expect(r?.is_error).toBe(true)
    expect(r?.content).toMatch(/BigInt/)
    expect(forwarded(inner)).toEqual([])
  })
})

// -------------------------------------------------------------------------------------
// no hang
// -------------------------------------------------------------------------------------

const settlesWithin = <A>(p: Promise<A>, ms: number): Promise<A | 'hung'> =>
  Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms))])

describe('an onAsk that calls back into its own stack', () => {
  it('gets an answer: a call that needs asking is refused saying why, one the rules allow runs, and the outer question is answered', async () => {
    const nested: Array<ReadonlyArray<ToolResult>> = []
    // the stack the callback calls back into, known once it is built
    const self: { policy?: Provider<unknown> } = {}
    const onAsk = async (): Promise<PermissionAnswer> => {
      if (self.policy !== undefined)
        nested.push(
          await results(self.policy, [call('n1', 'write', { path: '/tmp/b' }), call('n2', 'read', { path: '/tmp/c' })]),
        )
      return { action: 'allow-once' }
    }
    const listed = await listedPolicy([decl('write', ['path']), decl('read', ['path'])], {
      rules: [{ tool: 'read', decision: 'allow' }],
      onAsk,
    })
    self.policy = listed.policy
    const out = await settlesWithin(results(listed.policy, [call('1', 'write', { path: '/tmp/a' })]), 2000)
    expect(out).not.toBe('hung')
    expect(out === 'hung' ? undefined : out[0]?.is_error).toBeUndefined()
    expect(nested[0]?.map((r) => r.is_error)).toEqual([true, undefined])
    expect(nested[0]?.[0]?.content).toMatch(/made while the user was being asked about another call/)
    expect(forwarded(listed.inner).map((c) => c.id)).toEqual(['n2', '1'])
  })

  it('through another provider sharing its queue, the same; a call made after the question settled waits its turn as usual', async () => {
    const questions = newQuestionQueue()
    let later: Promise<ReadonlyArray<ToolResult>> | undefined
    const self: { other?: Provider<unknown> } = {}
    const onAsk = async (r: PermissionRequest): Promise<PermissionAnswer> => {
      if (r.call.id === '1' && self.other !== undefined) {
        const o = self.other
        const inside = await results(o, [call('n', 'write', { path: '/tmp/b' })])
        expect(inside[0]?.content).toMatch(/made while the user was being asked/)
        // started from here, but run once this question has settled: asked in turn
        later = new Promise((resolve) =>
          setTimeout(() => resolve(results(o, [call('m', 'write', { path: '/tmp/c' })])), 20),
        )
      }
      return { action: 'allow-once' }
    }
    const a = await listedPolicy([decl('write', ['path'])], { rules: [], onAsk, questions })
    const b = await listedPolicy([decl('write', ['path'])], { rules: [], onAsk, questions })
    self.other = b.policy
    const out = await settlesWithin(results(a.policy, [call('1', 'write', { path: '/tmp/a' })]), 2000)
    expect(out).not.toBe('hung')
    const after = await settlesWithin(later ?? Promise.reject(new Error('not started')), 2000)
    expect(after === 'hung' ? 'hung' : after[0]?.is_error).toBeUndefined()
  })
})

// -------------------------------------------------------------------------------------
// the pieces, each case its own
// -------------------------------------------------------------------------------------

describe('showText and showValue', () => {
  it('cuts only past the bound, never half an escape or half a surrogate pair', () => {
    expect(showText('ab\\', 3)).toEqual({ text: 'ab\\', cut: 0 })
    expect(showText('a\\', 5)).toEqual({ text: 'a\\', cut: 0 })
    expect(showText('abc\\def', 4)).toEqual({ text: 'abc', cut: 4 })
    expect(showText('a\n', 5)).toEqual({ text: 'a', cut: 6 })
    expect(showText('ab\u{1f600}', 3)).toEqual({ text: 'ab', cut: 2 })
    expect(showText('\u{1f600}abcdef', 4)).toEqual({ text: '\u{1f600}ab', cut: 4 })
  })

  it('shows a value JSON cannot write by its description', () => {
    expect(showValue(10n, 100)).toEqual({ text: 'bigint 10', cut: 0 })
  })
})

describe('showFacts and drawPermissionRequest', () => {
  const suggestedRule: Rule = { tool: 't', decision: 'allow' }

  it('shows no missing location, and says when there is none, or no argument', () => {
    const facts = showFacts([{ _tag: 'Missing' }], {})
    expect(facts).toEqual({ locations: [], shown: [], reason: undefined })
    expect(drawPermissionRequest({ tool: 't', paths: [], suggestedRule, ...facts })).toEqual([
      'May the model call t?',
      'Locations: none (the call gives no location argument the tool declares)',
      'Arguments: none',
      '"Always" remembers: allow "t", for this session.',
    ])
  })

  it('reads the facts of a request written by hand from its arguments, and leaves out the locations it does not give', () => {
    expect(
      drawPermissionRequest({ tool: 't', paths: ['/a'], suggestedRule, arguments: { reason: 'r', n: 1 } }),
    ).toEqual([
      'May the model call t on /a?',
      'Arguments:',
      '  "reason": (shown last)',
      '  "n": 1',
      '"Always" remembers: allow "t", for this session.',
      `The model's reason, in its own words (not checked): "r"`,
    ])
    expect(drawPermissionRequest({ tool: 't', paths: [], suggestedRule })).toEqual([
      'May the model call t?',
      'Arguments: none',
      '"Always" remembers: allow "t", for this session.',
    ])
    expect(drawPermissionRequest({ tool: 't', paths: ['/a', '/b'], suggestedRule })[0]).toBe(
      'May the model call t on 2 paths?',
    )
  })

  it('a request that gives its facts is drawn from them, not from its arguments', () => {
    const lines = drawPermissionRequest({
      tool: 't',
      paths: [],
      suggestedRule,
      arguments: { reason: 'not this' },
      locations: [],
      shown: [],
      reason: undefined,
    })
    expect(lines.join('\n')).not.toContain('not this')
  })
})

describe('declaredArguments, every case', () => {
  const withProperties = (name: string, properties: unknown): ToolDeclaration =>
    ({ type: 'function', function: { name, parameters: { type: 'object', properties } } }) as ToolDeclaration

  it('a properties that is not an object declares nothing', () => {
    const map = declaredArguments([withProperties('s', 'abc'), withProperties('n', null), withProperties('a', ['x'])])
    expect([...map].map(([k, v]) => [k, v.size])).toEqual([
      ['s', 0],
      ['n', 0],
      ['a', 0],
    ])
  })

  it('leaves out a tool whose properties cannot be read, or whose keys cannot be, or that has no name', () => {
    const throwing = withProperties('g', undefined)
    Object.defineProperty(throwing.function.parameters, 'properties', {
      get: () => {
        throw new Error('no')
      },
    })
    const keys = withProperties(
      'k',
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('no')
          },
        },
      ),
    )
    const nameless = {
      type: 'function',
      function: { parameters: { properties: { path: {} } } },
    } as unknown as ToolDeclaration
    expect([...declaredArguments([throwing, keys, nameless, decl('ok', ['path'])]).keys()]).toEqual(['ok'])
  })

  it('a name listed three times, or unreadable then readable, stays unknown', () => {
    const unreadable = {
      type: 'function',
      function: {
        name: 'u',
        get parameters(): unknown {
          throw new Error('no')
        },
      },
    } as unknown as ToolDeclaration
    expect([...declaredArguments([decl('a'), decl('a'), decl('a'), unreadable, decl('u', ['path'])]).keys()]).toEqual(
      [],
    )
  })
})

describe('plainArguments and locate, every case', () => {
  it('arguments whose JSON is not an object are not arguments', () => {
    expect(plainArguments({ toJSON: () => 'x' })).toEqual({ _tag: 'Left', left: 'they do not read as a JSON object' })
    expect(plainArguments({ toJSON: () => undefined })).toEqual({
      _tag: 'Left',
      left: 'they do not read as a JSON object',
    })
  })

  it('names each location of an array by its position', () => {
    expect(
      locate({ paths: ['/a', 'b', 3] }, 't', { '': '/r' }, { names: LOCATION_ARGS, declared: new Set(['paths']) }),
    ).toEqual([
      { _tag: 'Known', arg: 'paths[0]', path: '/a' },
      { _tag: 'Known', arg: 'paths[1]', path: '/r/b', sent: 'b' },
      { _tag: 'Unknown', arg: 'paths[2]', problem: 'is not a string (number)' },
    ])
  })
})

describe('withPolicy, every case of the new options and steps', () => {
  it('locationArgs must be names, every one; the message names the defaults it adds to', () => {
    expect(() => withPolicy({ rules: [], locationArgs: ['ok', 1] as never })).toThrow(
      'withPolicy: option "locationArgs" must be an array of argument names (non-empty strings; "!name" for a name ' +
        'that is not a location), added to path, paths, source, destination, from, to, file, files, target, directory, dir, uri, url; got an array',
    )
  })

  it('questions must be a queue newQuestionQueue made, asking included', () => {
    const q = newQuestionQueue()
    for (const bad of [
      { ...q, asking: undefined },
      { ...q, _tag: 'Other' },
      { ...q, inTurn: 1 },
    ]) {
      expect(() => withPolicy({ rules: [], questions: bad as never })).toThrow(
        /option "questions" must be a queue made by newQuestionQueue/,
      )
    }
  })

  it('the copy forwarded claims the type "function" only when the call did, and says who refused what could not be copied', async () => {
    const told: Array<unknown> = []
    const { inner, policy } = await listedPolicy([decl('w', ['path'])], {
      rules: [{ tool: 'w', decision: 'allow', under: '/srv' }],
      onDecision: (d) => void told.push(d),
    })
    const untyped = { id: '1', function: { name: 'w', arguments: { path: '/srv/a' } } } as unknown as ToolCall
    await results(policy, [untyped, call('2', 'w', { path: '/srv/a', n: 1n }, true)])
    expect(forwarded(inner)).toEqual([{ id: '1', function: { name: 'w', arguments: { path: '/srv/a' } } }])
    expect(told[1]).toEqual({ tool: 'w', id: '2', outcome: 'refused', by: 'rules', refusal: 'UnreadableArguments' })
  })

  it('a question asked from inside onAsk is refused by nobody', async () => {
    const told: Array<unknown> = []
    const self: { policy?: Provider<unknown> } = {}
    const onAsk = async (r: PermissionRequest): Promise<PermissionAnswer> => {
      if (r.call.id === '1' && self.policy !== undefined) await results(self.policy, [call('n', 'w', {})])
      return { action: 'allow-once' }
    }
    const listed = await listedPolicy([decl('w')], { rules: [], onAsk, onDecision: (d) => void told.push(d) })
    self.policy = listed.policy
    await results(listed.policy, [call('1', 'w', {})])
    expect(told[0]).toEqual({ tool: 'w', id: 'n', outcome: 'refused', by: 'nobody', refusal: 'AskedWhileAsking' })
  })
})
