import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import type { SharedGrants } from '../../src/extend.js'
import { pipe } from 'fp-ts/lib/function.js'
import type { Task } from 'fp-ts/lib/Task.js'
import type {
  PermissionAnswer,
  PermissionRequest,
  PolicyDecision,
  PolicyDiagnostic,
  PolicyOptions,
  Provider,
  Rule,
  ToolCall,
  ToolResult,
} from '../../src/index.js'
import {
  decodeRules,
  defaultRules,
  drawPermissionRequest,
  drawPolicyDiagnostic,
  drawRefusal,
  newQuestionQueue,
  readOnlyRules,
  withPolicy,
} from '../../src/index.js'
import { batchOf } from '../../src/steps/Batch.js'
import { READ_ONLY_TOOLS } from '../../src/combinators/Policy.js'
import { decodeAnswer, recordGrant } from '../../src/steps/policy/Answer.js'
import { evaluate } from '../../src/steps/policy/evaluate.js'
import { wellFormedCallArb } from '../support/arbitraries.js'
import { runExample } from '../support/examples.js'
import {
  batchingProvider,
  call,
  decl,
  failingProvider,
  okResult,
  recordingProvider,
  rejectingProvider,
} from '../support/fakes.js'
import { answersOnePerCall, isLazy, listingFailurePassesThrough } from '../laws.js'

const DECLS = [
  decl('fs_read', ['path']),
  decl('fs_write', ['path', 'content']),
  decl('fs_delete', ['path']),
  decl('web_get', ['query']),
]

const RULES: ReadonlyArray<Rule> = [
  { tool: 'fs_read', decision: 'allow' },
  { tool: 'fs_write', decision: 'allow', under: '/p/src' },
  { tool: 'fs_delete', decision: 'deny', note: 'deleting is done by hand' },
  { tool: 'fs_write', decision: 'deny', under: '/p/.git', note: 'history is read-only' },
]

// the policy reads locations only from what a tool declares, so a provider lists once
// (through the policy) before its first batch, as a host does
const listed = new WeakMap<Provider<unknown>, Promise<unknown>>()
const ready = async (p: Provider<unknown>): Promise<void> => {
  const once = listed.get(p) ?? p.toolsForLlm().catch(() => undefined)
  listed.set(p, once)
  await once
}

const run = async (p: Provider<unknown>, calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
  await ready(p)
  const out = await p.executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error('the policy failed a batch')
  return out.right
}

/** An onAsk that answers from a list and records every request. */
const scripted = (answers: ReadonlyArray<unknown>) => {
  const requests: Array<PermissionRequest> = []
  const queue = [...answers]
  const onAsk =
    (request: PermissionRequest): Task<PermissionAnswer> =>
    () => {
      requests.push(request)
      return Promise.resolve(queue.shift() as PermissionAnswer)
    }
  return { requests, onAsk }
}

const setup = (options: Partial<PolicyOptions> = {}) => {
  const inner = recordingProvider(DECLS)
  const policy = pipe(inner, withPolicy({ rules: RULES, roots: { fs_: '/p' }, ...options }))
  return { inner, policy }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

describe('defaultRules', () => {
  it('allows exactly the read-only tools of the reference filesystem server', () => {
    expect(defaultRules.map((r) => r.tool)).toEqual([...READ_ONLY_TOOLS])
    expect(defaultRules.every((r) => r.decision === 'allow' && r.under === undefined)).toBe(true)
    expect(READ_ONLY_TOOLS).toContain('read_text_file')
    expect(READ_ONLY_TOOLS).not.toContain('write_file')
  })

  it('are valid rules, and leave everything else to ask', () => {
    expect(decodeRules(defaultRules)._tag).toBe('Right')
    expect(evaluate(defaultRules, 'read_file', { path: '/etc/hosts' }).decision).toBe('allow')
    expect(evaluate(defaultRules, 'write_file', { path: '/tmp/x' }).decision).toBe('ask')
    expect(evaluate(defaultRules, 'read_file_and_delete', {}).decision).toBe('ask')
  })

  it('readOnlyRules puts them under a namespace', () => {
    expect(readOnlyRules('fs_').map((r) => r.tool)).toEqual(READ_ONLY_TOOLS.map((n) => `fs_${n}`))
    expect(() => readOnlyRules('fs_*')).toThrow(TypeError)
  })
})

// -------------------------------------------------------------------------------------
// construction
// -------------------------------------------------------------------------------------

describe('withPolicy: construction', () => {
  const build = (options: unknown) => () => withPolicy(options as PolicyOptions)

  it.each([
    ['no options', undefined, 'option "rules" is required'],
    ['no rules', {}, 'option "rules" is required'],
    ['rules that are not an array', { rules: { tool: 'x', decision: 'allow' } }, 'rules must be an array of rules'],
    ['an unknown option', { rules: [], onask: () => () => Promise.resolve() }, 'unknown option "onask"'],
    [
      'an unknown rule member',
      { rules: [{ tool: 'x', decision: 'allow', undr: '/p' }] },
      'rules[0] has unknown member "undr"',
    ],
    [
      'a bad decision',
      {
        rules: [
          { tool: 'x', decision: 'allow' },
          { tool: 'x', decision: 'permit' },
        ],
      },
      'rules[1].decision must be "allow", "deny" or "ask", got the string "permit"',
    ],
    [
      'a glob with a leading *',
      { rules: [{ tool: '*_read', decision: 'allow' }] },
      'rules[0].tool must be a tool name, a prefix glob ending in "*", or "*"',
    ],
    ['a glob with an inner *', { rules: [{ tool: 'fs*x', decision: 'allow' }] }, 'got the string "fs*x"'],
    [
      'a relative under',
      { rules: [{ tool: 'x', decision: 'allow', under: 'src' }] },
      'rules[0].under must be an absolute POSIX path',
    ],
    ['a bad grant', { rules: [], grants: [{ tool: 'x', decision: 'maybe' }] }, 'grants[0].decision must be'],
    ['grants that are not an array', { rules: [], grants: 'all' }, 'grants must be an array of rules'],
    ['a relative root', { rules: [], roots: { fs_: 'project' } }, 'roots["fs_"] must be an absolute POSIX path'],
    ['roots that are not an object', { rules: [], roots: ['/p'] }, 'roots must be an object'],
    [
      'an onAsk that is not a function',
      { rules: [], onAsk: 'ask' },
      'withPolicy: option "onAsk" must be a function, got the string "ask"',
    ],
    [
      'an onGrant that is not a function',
      { rules: [], onGrant: 42 },
      'withPolicy: option "onGrant" must be a function, got number 42',
    ],
    [
      'an onAsk of two parameters',
      { rules: [], onAsk: (_a: unknown, _b: unknown) => undefined },
      'option "onAsk" must take at most 1 parameter',
    ],
    [
      'an onGrant of two parameters',
      { rules: [], onGrant: (_a: unknown, _b: unknown) => undefined },
      'option "onGrant" must take at most 1 parameter',
    ],
    ['a filterTools that is not a boolean', { rules: [], filterTools: 'yes' }, 'filterTools must be boolean'],
    [
      'roots that are null',
      { rules: [], roots: null },
      'withPolicy: roots must be an object mapping a tool-name prefix to a directory, got null',
    ],
    [
      'roots that are a string',
      { rules: [], roots: '/p' },
      'withPolicy: roots must be an object mapping a tool-name prefix to a directory, got the string "/p"',
    ],
    [
      'a root that is not a string',
      { rules: [], roots: { fs_: 5 } },
      'withPolicy: roots["fs_"] must be an absolute POSIX path without "..", NUL, backslash or "~", got number 5',
    ],
    [
      'questions that are an empty object',
      { rules: [], questions: {} },
      'withPolicy: option "questions" must be a queue made by newQuestionQueue(), got an object',
    ],
    [
      'questions with the tag but no inTurn',
      { rules: [], questions: { _tag: 'QuestionQueue' } },
      'option "questions" must be a queue made by newQuestionQueue()',
    ],
    [
      'questions with inTurn but another tag',
      { rules: [], questions: { _tag: 'Queue', inTurn: () => undefined } },
      'option "questions" must be a queue made by newQuestionQueue()',
    ],
    [
      'questions that are null',
      { rules: [], questions: null },
      'withPolicy: option "questions" must be a queue made by newQuestionQueue(), got null',
    ],
    [
      'questions that are a string',
      { rules: [], questions: 'q' },
      'withPolicy: option "questions" must be a queue made by newQuestionQueue(), got the string "q"',
    ],
    [
      'an onDiagnostic that is not a function',
      { rules: [], onDiagnostic: 1 },
      'withPolicy: option "onDiagnostic" must be a function, got number 1',
    ],
    [
      'an onDecision that is not a function',
      { rules: [], onDecision: 'x' },
      'withPolicy: option "onDecision" must be a function, got the string "x"',
    ],
    [
      'a provider where the options belong',
      recordingProvider([]),
      'withPolicy: got a provider where the options belong; a combinator takes its options first: did you mean withPolicy({ rules })(provider)?',
    ],
  ])('refuses %s with a TypeError naming it', (_, options, message) => {
    expect(build(options)).toThrow(TypeError)
    expect(build(options)).toThrow(message)
  })

  it('accepts [] as rules (ask about everything) and every option well formed', () => {
    expect(build({ rules: [] })).not.toThrow()
    expect(
      build({ rules: [], questions: newQuestionQueue(), onDiagnostic: () => undefined, onDecision: () => undefined }),
    ).not.toThrow()
    expect(
      build({
        rules: defaultRules,
        grants: [{ tool: 'x', decision: 'allow' }],
        onAsk: () => () => Promise.resolve({ action: 'deny-once' }),
        onGrant: () => () => undefined,
        roots: { '': '/srv' },
        filterTools: false,
      }),
    ).not.toThrow()
  })

  it('refuses a non-provider', () => {
    expect(() => withPolicy({ rules: [] })({} as Provider<never>)).toThrow('withPolicy: expected a provider')
  })

  it('is lazy: building a task reaches nothing', async () => {
    await isLazy((inner) => withPolicy({ rules: [{ tool: '*', decision: 'allow' }] })(inner), [call('1', 'x')])
  })
})

// -------------------------------------------------------------------------------------
// allow and deny
// -------------------------------------------------------------------------------------

describe('withPolicy: allow', () => {
  it('forwards allowed calls as one inner batch, in order, each the very object passed', async () => {
    const { inner, policy } = setup()
    const calls = [
      call('1', 'fs_read', { path: '/x' }),
      call('2', 'fs_delete', { path: '/p/a' }),
      call('3', 'fs_write', { path: 'src/a.ts' }),
    ]
    const out = await run(policy, calls)
    expect(inner.rec.batches).toHaveLength(1)
    const batch = inner.rec.batches[0] ?? []
    expect(batch).toHaveLength(2)
    expect(batch[0]).toBe(calls[0])
    expect(batch[1]).toBe(calls[2])
    expect(out[0]).toBe(inner.rec.results[0]?.[0])
    expect(out[2]).toBe(inner.rec.results[0]?.[1])
  })

  it('reads the arguments of a call allowed by its name only when a rule needs them, and its id for onDecision only when there is one', async () => {
    const reads: Array<string> = []
    const counted = (id: string, name: string, args: string): ToolCall =>
      ({
        get id() {
          reads.push(`${id}.id`)
          return id
        },
        type: 'function',
        function: {
          name,
          get arguments() {
            reads.push(`${id}.arguments`)
            return args
          },
        },
      }) as ToolCall
    const inner = recordingProvider(DECLS, (calls) => calls.map((_, i) => okResult(undefined, i)))
    const policy = (options: Partial<PolicyOptions>) =>
      pipe(inner, withPolicy({ rules: RULES, roots: { fs_: '/p' }, ...options }))
    await run(policy({}), [counted('1', 'fs_read', '{"path":"/x"}'), counted('2', 'fs_write', '{"path":"src/a.ts"}')])
    // fs_write's rule reads where it writes; fs_read is allowed by its name, and its getter never runs
    expect(reads.filter((r) => r.endsWith('.arguments'))).toEqual(['2.arguments'])
    const idReads = async (options: Partial<PolicyOptions>): Promise<number> => {
      reads.length = 0
      await run(policy(options), [counted('3', 'fs_read', '{"path":"/x"}')])
      return reads.filter((r) => r === '3.id').length
    }
    const told: Array<string> = []
    expect(await idReads({ onDecision: (d) => void told.push(d.id) })).toBe((await idReads({})) + 1)
    expect(told).toEqual(['3'])
  })

  it('hands the parses known above down with the batch it forwards, so no layer below parses again', async () => {
    const inner = batchingProvider(DECLS)
    const policy = withPolicy({
      rules: [
        { tool: 'fs_read', decision: 'allow' },
        { tool: 'fs_delete', decision: 'deny' },
      ],
    })(inner)
    const calls = [call('1', 'fs_delete', { path: '/a' }), call('2', 'fs_read', { path: '/x' })]
    const batch = batchOf(calls)
    const above = batch.argsAt(1)
    await policy.executeBatch(batch)()
    const below = inner.received[0]
    expect(below?.calls).toEqual([calls[1]])
    expect(below?.calls[0]).toBe(calls[1])
    expect(below?.argsAt(0)).toBe(above)
  })

  it('hands the parses it made itself down too (a rule with under reads the arguments)', async () => {
    const inner = batchingProvider(DECLS)
    const policy = withPolicy({
      rules: [
        { tool: 'fs_read', decision: 'allow', under: '/srv' },
        { tool: 'fs_delete', decision: 'deny' },
      ],
    })(inner)
    const calls = [call('1', 'fs_delete', { path: '/a' }), call('2', 'fs_read', { path: '/srv/x' })]
    const spy = vi.spyOn(JSON, 'parse')
    try {
      await run(policy, calls)
      const below = inner.received[0]
      const before = spy.mock.calls.length
      expect(before).toBe(1)
      expect(below?.argsAt(0)).toEqual({ _tag: 'Right', right: { path: '/srv/x' } })
      expect(spy.mock.calls.length).toBe(before)
    } finally {
      spy.mockRestore()
    }
  })

  it('judges a call by the arguments as first read, and the layer below gets those very arguments', async () => {
    // a caller that edits a call's arguments after the policy read them cannot slip
    // another path past it: the batch answers with the arguments the policy judged
    const inner = batchingProvider(DECLS)
    const policy = withPolicy({ rules: [{ tool: 'fs_read', decision: 'allow', under: '/tmp' }] })(inner)
    const c = { id: '1', function: { name: 'fs_read', arguments: '{"path":"/tmp/a"}' } }
    const batch = batchOf([c])
    await ready(policy)
    await policy.executeBatch(batch)()
    c.function.arguments = '{"path":"/etc/passwd"}'
    expect(inner.received[0]?.argsAt(0)).toEqual({ _tag: 'Right', right: { path: '/tmp/a' } })
    // a new batch is read anew, and judged anew
    const again = await run(policy, [c])
    expect(again[0]?.is_error).toBe(true)
  })

  it('does not parse a call its rules allow by name alone, and forwards the very same batch', async () => {
    const inner = recordingProvider(DECLS)
    const policy = withPolicy({ rules: [{ tool: 'fs_*', decision: 'allow' }] })(inner)
    const calls = [call('1', 'fs_read', { path: '/x' }), call('2', 'fs_write', { path: '/y' })]
    const spy = vi.spyOn(JSON, 'parse')
    try {
      await run(policy, calls)
      expect(spy).not.toHaveBeenCalled()
    } finally {
      spy.mockRestore()
    }
    expect(inner.rec.batches[0]).toBe(calls)
  })

  it('returns the inner provider’s very results when every call was allowed', async () => {
    const { inner, policy } = setup()
    const out = await run(policy, [call('1', 'fs_read', { path: '/p/x' }), call('2', 'fs_read', { path: '/p/y' })])
    expect(out).toBe(inner.rec.results[0])
  })

  it('asks nothing and classifies nothing until the task runs', async () => {
    let asked = 0
    const policy = withPolicy({
      rules: [{ tool: 'fs_write', decision: 'ask' }],
      onAsk: () => () => {
        asked++
        return Promise.resolve({ action: 'allow-once' })
      },
    })(recordingProvider(DECLS))
    const task = policy.executeToolCalls([call('1', 'fs_write', { path: '/p/a' })])
    expect(asked).toBe(0)
    await task()
    expect(asked).toBe(1)
  })

  it('does not call the inner provider when nothing is allowed', async () => {
    const { inner, policy } = setup()
    await run(policy, [call('1', 'fs_delete', { path: '/a' })])
    await run(policy, [])
    expect(inner.rec.batches).toHaveLength(0)
  })

  it('forwards an allowed call by identity, whatever the batch (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(wellFormedCallArb(fc.constantFrom('fs_read', 'fs_delete', 'web_get')), { maxLength: 8 }),
        async (calls) => {
          const inner = recordingProvider(DECLS)
          const policy = withPolicy({
            rules: [
              { tool: 'fs_read', decision: 'allow' },
              { tool: 'fs_delete', decision: 'deny' },
            ],
          })(inner)
          await run(policy, calls)
          const expected = calls.filter((c) => c.function.name === 'fs_read')
          const got = inner.rec.batches.flat()
          expect(got).toHaveLength(expected.length)
          got.forEach((c, i) => expect(c).toBe(expected[i]))
          expect(inner.rec.batches.length).toBe(expected.length === 0 ? 0 : 1)
        },
      ),
    )
  })
})

describe('withPolicy: deny', () => {
  it('answers an is_error result saying who refused and why; the inner provider never sees the call', async () => {
    const { inner, policy } = setup()
    const [r] = await run(policy, [call('d1', 'fs_delete', { path: '/p/a' })])
    expect(r).toEqual({
      role: 'tool',
      tool_call_id: 'd1',
      is_error: true,
      content:
        'The permission policy refused this call to "fs_delete" (rule: deny "fs_delete"). Reason: deleting is done by hand. It was not run; do not retry it as is.',
    })
    expect(inner.rec.batches).toHaveLength(0)
  })

  it('a deny under a directory wins over an allow that also fires', async () => {
    const { policy } = setup()
    const [r] = await run(policy, [
      call('1', 'fs_write', { path: '/p/src/../.git/HEAD' }),
      call('2', 'fs_write', { path: '/p/.git/HEAD' }),
    ])
    expect(r?.is_error).toBe(true)
    const out = await run(policy, [call('2', 'fs_write', { path: '/p/.git/HEAD' })])
    expect(out[0]?.content).toContain('Reason: history is read-only.')
  })

  it('says when it refused because a location could not be checked', async () => {
    const { policy } = setup()
    const [r] = await run(policy, [call('1', 'fs_write', { path: '../outside' })])
    expect(r?.is_error).toBe(true)
    expect(r?.content).toContain(
      'Its location could not be checked (path has a ".." segment), so the rule applied to be safe',
    )
  })

  it('says when no reason was given', () => {
    expect(
      drawRefusal({ _tag: 'DeniedByRule', tool: 't', rule: { tool: 't', decision: 'deny' }, unevaluable: [] }),
    ).toContain('Reason: none was given.')
  })
})

// -------------------------------------------------------------------------------------
// ask
// -------------------------------------------------------------------------------------

describe('withPolicy: ask', () => {
  it('hands onAsk the whole request: tool, parsed arguments with the reason, a copy of the call, rule, why, paths, suggestedRule', async () => {
    const { requests, onAsk } = scripted([{ action: 'allow-once' }])
    const { policy } = setup({ onAsk, rules: [...RULES, { tool: 'fs_write', decision: 'ask', under: '/p/docs' }] })
    const c = call('w', 'fs_write', { path: 'docs/a.md', content: 'x', reason: 'the user asked for docs' })
    await run(policy, [c])
    expect(requests).toHaveLength(1)
    const req = requests[0] as PermissionRequest
    expect(req).toEqual({
      kind: 'permission',
      tool: 'fs_write',
      arguments: { path: 'docs/a.md', content: 'x', reason: 'the user asked for docs' },
      call: { id: 'w', type: 'function', function: { name: 'fs_write', arguments: c.function.arguments } },
      rule: { tool: 'fs_write', decision: 'ask', under: '/p/docs' },
      why: 'rule',
      paths: ['/p/docs/a.md'],
      suggestedRule: { tool: 'fs_write', decision: 'allow', under: '/p/docs' },
      remembered: 'session',
      locations: [
        {
          _tag: 'Known',
          arg: { text: 'path', cut: 0 },
          path: { text: '/p/docs/a.md', cut: 0 },
          // what the model sent, beside what it resolves to
          sent: { text: '"docs/a.md"', cut: 0 },
          // it lies in the directory of the rule that asks
          concern: 'touches',
        },
      ],
      shown: [
        { key: { text: '"path"', cut: 0 }, value: { text: '"docs/a.md"', cut: 0 } },
        { key: { text: '"content"', cut: 0 }, value: { text: '"x"', cut: 0 } },
        { key: { text: '"reason"', cut: 0 }, value: { text: '"the user asked for docs"', cut: 0 } },
      ],
      reason: { text: '"the user asked for docs"', cut: 0 },
    })
    expect(req.call).not.toBe(c)
    expect(req.call.function).not.toBe(c.function)
  })

  it('refuses only the asked call whose arguments throw when read for judging; the rest of the batch runs', async () => {
    const { requests, onAsk } = scripted([{ action: 'allow-once' }])
    const { inner, policy } = setup({ onAsk, rules: [...RULES, { tool: 'fs_write', decision: 'ask' }] })
    const hostile = Object.defineProperty({ path: '/p/a' }, 'content', {
      enumerable: true,
      get: () => {
        throw new Error('boom')
      },
    })
    const calls = [call('1', 'fs_read', { path: '/p/x' }), call('2', 'fs_write', hostile, true)]
    const out = await run(policy, calls)
    expect(out.map((r) => [r.tool_call_id, r.is_error === true])).toEqual([
      ['1', false],
      ['2', true],
    ])
    expect(out[1]?.content).toMatch(/cannot be shown to them: .*boom/)
    expect(requests).toHaveLength(0)
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['1'])
  })

  it('copies object arguments, so the host cannot change what runs', async () => {
    const onAsk = (r: PermissionRequest) => () => {
      ;(r.call.function.arguments as Record<string, unknown>)['path'] = '/etc/passwd'
      return Promise.resolve<PermissionAnswer>({ action: 'allow-once' })
    }
    const { inner, policy } = setup({ onAsk })
    const c = call('1', 'fs_write', { path: '/tmp/a' }, true)
    await run(policy, [c])
    // what goes down is the copy the policy judged, not the caller's object
    expect(inner.rec.batches[0]?.[0]).toEqual({
      id: '1',
      type: 'function',
      function: { name: 'fs_write', arguments: { path: '/tmp/a' } },
    })
    expect((c.function.arguments as Record<string, unknown>)['path']).toBe('/tmp/a')
  })

  it('sends the copy it judged: arguments the caller changes while its human is asked, or a getter that answers again otherwise, do not reach the tool', async () => {
    const args: Record<string, unknown> = { path: '/tmp/a' }
    const onAsk = () => () => {
      args['path'] = '/etc/passwd'
      return Promise.resolve<PermissionAnswer>({ action: 'allow-once' })
    }
    const asked = setup({ onAsk })
    await run(asked.policy, [call('1', 'fs_write', args, true)])
    expect(asked.inner.rec.batches[0]?.[0]?.function.arguments).toEqual({ path: '/tmp/a' })
    // allowed by its rule, no one asked: the getter is read once, for the judgement, and its answer is what is sent
    let reads = 0
    const shifty = {
      get path() {
        reads++
        return reads === 1 ? '/p/src/a.ts' : '/etc/passwd'
      },
    }
    const allowed = setup()
    await run(allowed.policy, [call('2', 'fs_write', shifty, true)])
    const sent = allowed.inner.rec.batches[0]?.[0]?.function.arguments as Record<string, unknown>
    expect([sent, reads]).toEqual([{ path: '/p/src/a.ts' }, 1])
    expect(sent).not.toBe(shifty)
  })

  it('says why it asks: no-match, or an unevaluable path', async () => {
    const { requests, onAsk } = scripted([{ action: 'deny-once' }, { action: 'deny-once' }])
    // no deny under a directory here: it would refuse the unreadable path outright
    const { policy } = setup({ onAsk, rules: [{ tool: 'fs_write', decision: 'allow', under: '/p/src' }] })
    await run(policy, [call('1', 'web_get', { query: 'https://x' }), call('2', 'fs_write', { path: 7 })])
    expect(requests.map((r) => [r.why, r.rule, r.paths, r.suggestedRule])).toEqual([
      ['no-match', undefined, [], { tool: 'web_get', decision: 'allow' }],
      // a location that could not be read: "always" is not offered, for no rule would say what was shown
      ['unevaluable-path', undefined, [], undefined],
    ])
  })

  it('allow-once forwards the very call; deny-once refuses it; neither records a grant', async () => {
    const { onAsk } = scripted([{ action: 'allow-once' }, { action: 'deny-once' }])
    const { inner, policy } = setup({ onAsk })
    const calls = [call('1', 'fs_write', { path: '/tmp/a' }), call('2', 'fs_write', { path: '/tmp/b' })]
    const out = await run(policy, calls)
    expect(inner.rec.batches).toEqual([[calls[0]]])
    expect(inner.rec.batches[0]?.[0]).toBe(calls[0])
    expect(out[1]).toMatchObject({ tool_call_id: '2', is_error: true })
    expect(out[1]?.content).toContain('The user declined this call to "fs_write"')
    expect(policy.grants()).toEqual([])
  })

  it('always-allow records the suggestedRule as a grant, tells onGrant, and is not asked again', async () => {
    const { requests, onAsk } = scripted([{ action: 'always-allow' }])
    const told: Array<ReadonlyArray<Rule>> = []
    const { inner, policy } = setup({ onAsk, onGrant: (g) => () => void told.push(g) })
    await run(policy, [call('1', 'fs_write', { path: '/tmp/a' })])
    // the next file beside it is covered by the same grant
    await run(policy, [call('2', 'fs_write', { path: '/tmp/b' })])
    expect(requests).toHaveLength(1)
    expect(inner.rec.batches).toHaveLength(2)
    expect(policy.grants()).toEqual([{ tool: 'fs_write', decision: 'allow', under: '/tmp' }])
    expect(told).toEqual([[{ tool: 'fs_write', decision: 'allow', under: '/tmp' }]])
  })

  it('always-deny records a deny grant: later calls are refused without asking, naming the user', async () => {
    const { requests, onAsk } = scripted([{ action: 'always-deny' }])
    const { inner, policy } = setup({ onAsk })
    const first = await run(policy, [call('1', 'web_get', { query: 'a' })])
    const second = await run(policy, [call('2', 'web_get', { query: 'b' })])
    expect(requests).toHaveLength(1)
    expect(inner.rec.batches).toHaveLength(0)
    expect(first[0]?.content).toContain('and refused calls like it for this session (rule: deny "web_get")')
    expect(second[0]?.content).toContain('The user has refused calls like this to "web_get" for this session')
  })

  it('records the rule an answer gives, its decision taken from the action when left out', async () => {
    const { requests, onAsk } = scripted([{ action: 'always-allow', rule: { tool: 'fs_*', under: '/tmp' } }])
    const { policy } = setup({ onAsk })
    await run(policy, [
      call('1', 'fs_write', { path: '/tmp/a' }),
      call('2', 'fs_delete', { path: '/tmp/b' }),
      call('3', 'fs_write', { path: '/tmp/c/d' }),
    ])
    expect(requests).toHaveLength(1)
    expect(policy.grants()).toEqual([{ tool: 'fs_*', decision: 'allow', under: '/tmp' }])
  })

  it('consults grants only when the static rules ask: a grant never overrides a deny or an allow', async () => {
    const { policy, inner } = setup({
      grants: [
        { tool: 'fs_delete', decision: 'allow' },
        { tool: 'fs_read', decision: 'deny' },
      ],
    })
    const out = await run(policy, [call('1', 'fs_delete', { path: '/a' }), call('2', 'fs_read', { path: '/a' })])
    expect(out[0]?.is_error).toBe(true)
    expect(out[1]?.is_error).toBeUndefined()
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['2'])
  })

  it('initial grants answer without anyone to ask', async () => {
    const { policy, inner } = setup({ grants: [{ tool: 'web_get', decision: 'allow' }] })
    const out = await run(policy, [call('1', 'web_get', { query: 'x' })])
    expect(out[0]?.is_error).toBeUndefined()
    expect(inner.rec.batches).toHaveLength(1)
    expect(policy.grants()).toEqual([{ tool: 'web_get', decision: 'allow' }])
  })

  it('headless (no onAsk): refuses each asked call only, in words the model can act on', async () => {
    const { policy, inner } = setup()
    const out = await run(policy, [call('1', 'web_get', { query: 'x' }), call('2', 'fs_read', { path: '/a' })])
    expect(out[0]).toMatchObject({ tool_call_id: '1', is_error: true })
    expect(out[0]?.content).toBe(
      'This call to "web_get" needs the user\'s permission, and no one is available to give it, so it was not run. Use a tool the policy allows, or ask the user to allow "web_get".',
    )
    expect(out[1]?.is_error).toBeUndefined()
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['2'])
  })

  it.each([
    ['an unknown action', { action: 'yes' }, 'the answer could not be understood (action must be'],
    ['no answer at all', undefined, 'the answer could not be understood (expected { action, rule? }, got undefined)'],
    ['an unknown answer member', { action: 'allow-once', forever: true }, 'unknown member "forever"'],
    [
      'an invalid rule',
      { action: 'always-allow', rule: { tool: '*_write' } },
      'the rule to remember is invalid (rule.tool must be',
    ],
    [
      'a rule with an unknown member',
      { action: 'always-allow', rule: { tool: 'x', undr: '/' } },
      'the rule to remember is invalid (rule has unknown member "undr"',
    ],
    [
      'a rule that contradicts the action',
      { action: 'always-allow', rule: { tool: 'fs_write', decision: 'deny' } },
      'its decision the string "deny" contradicts the answer "always-allow"',
    ],
  ])('refuses the call on %s, and records nothing', async (_, answer, message) => {
    const { onAsk } = scripted([answer])
    const { policy, inner } = setup({ onAsk })
    const out = await run(policy, [call('1', 'fs_write', { path: '/tmp/a' })])
    expect(out[0]?.is_error).toBe(true)
    expect(out[0]?.content).toContain(message)
    expect(inner.rec.batches).toHaveLength(0)
    expect(policy.grants()).toEqual([])
  })

  it.each([
    [
      'throws',
      () => {
        throw new Error('no terminal')
      },
    ],
    ['rejects', () => () => Promise.reject(new Error('no terminal'))],
    [
      'returns a Task that throws',
      () => () => {
        throw new Error('no terminal')
      },
    ],
    ['returns a Promise that rejects', () => Promise.reject(new Error('no terminal'))],
    [
      'is async and throws',
      async () => {
        throw new Error('no terminal')
      },
    ],
  ])('refuses the call when onAsk %s, and goes on with the rest', async (_, onAsk) => {
    const { policy, inner } = setup({ onAsk: onAsk as NonNullable<PolicyOptions['onAsk']> })
    const out = await run(policy, [call('1', 'fs_write', { path: '/tmp/a' }), call('2', 'fs_read', { path: '/a' })])
    expect(out[0]?.content).toMatch(/asking failed \(onAsk failed: no terminal\)/)
    expect(out[1]?.is_error).toBeUndefined()
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['2'])
  })

  it.each([
    ['a Task', () => () => Promise.resolve({ action: 'allow-once' })],
    ['a Promise (an async function)', async () => ({ action: 'allow-once' })],
    ['the answer itself', () => ({ action: 'allow-once' })],
  ])('takes an answer given as %s', async (_, onAsk) => {
    const { policy, inner } = setup({ onAsk: onAsk as NonNullable<PolicyOptions['onAsk']> })
    const out = await run(policy, [call('1', 'fs_write', { path: '/tmp/a' })])
    expect(out[0]?.is_error).toBeUndefined()
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['1'])
  })

  it('refuses without asking a call whose arguments cannot be shown', async () => {
    const { requests, onAsk } = scripted([{ action: 'allow-once' }])
    const { policy } = setup({ onAsk })
    const out = await run(policy, [call('1', 'web_get', '{"query":'), call('2', 'web_get', [1], true)])
    expect(requests).toHaveLength(0)
    expect(out[0]?.content).toContain('but it cannot be shown to them: the arguments are not valid JSON')
    expect(out[1]?.content).toContain('the arguments must be a JSON object, but they are an array')
  })

  it('reads empty arguments as no arguments', async () => {
    const { requests, onAsk } = scripted([{ action: 'allow-once' }])
    const { policy } = setup({ onAsk })
    await run(policy, [call('1', 'web_get', '')])
    expect(requests[0]?.arguments).toEqual({})
  })

  it('an onGrant that throws changes nothing about the call', async () => {
    const { onAsk } = scripted([{ action: 'always-allow' }])
    const { policy, inner } = setup({
      onAsk,
      onGrant: () => () => {
        throw new Error('disk full')
      },
    })
    const out = await run(policy, [call('1', 'web_get', { query: 'x' })])
    expect(out[0]?.is_error).toBeUndefined()
    expect(inner.rec.batches).toHaveLength(1)
    expect(policy.grants()).toHaveLength(1)
  })
})

// -------------------------------------------------------------------------------------
// one question at a time
// -------------------------------------------------------------------------------------

const tick = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

describe('withPolicy: shared grants', () => {
  // a store as a gateway gives one: a list every provider reads, and every "always" answer added to it
  const sharedList = (initial: ReadonlyArray<Rule> = []) => {
    let held: ReadonlyArray<Rule> = initial
    const added: Array<Rule> = []
    return {
      added,
      set: (gs: ReadonlyArray<Rule>) => void (held = gs),
      shared: {
        grants: () => held,
        addGrant: (r: Rule) => {
          added.push(r)
          held = [...held, r]
        },
      },
    }
  }

  it('reads the shared grants again at each judgement: one added after a call applies to the next', async () => {
    const store = sharedList()
    const { policy, inner } = setup({ shared: store.shared })
    const first = await run(policy, [call('1', 'web_get', { query: 'a' })])
    store.set([{ tool: 'web_get', decision: 'allow' }])
    const second = await run(policy, [call('2', 'web_get', { query: 'b' })])
    expect(first[0]?.is_error).toBe(true)
    expect(second[0]?.is_error).toBeUndefined()
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['2'])
    // the provider's own grants stay its own
    expect(policy.grants()).toEqual([])
  })

  it('gives each "always" answer to addGrant, and another provider sharing them is not asked', async () => {
    const store = sharedList()
    const one = scripted([{ action: 'always-allow' }])
    const two = scripted([])
    const a = setup({ shared: store.shared, onAsk: one.onAsk, questions: newQuestionQueue() })
    const b = setup({ shared: store.shared, onAsk: two.onAsk, questions: newQuestionQueue() })
    await run(a.policy, [call('1', 'fs_write', { path: '/tmp/a' })])
    const out = await run(b.policy, [call('2', 'fs_write', { path: '/tmp/b' })])
    expect(store.added).toEqual([{ tool: 'fs_write', decision: 'allow', under: '/tmp' }])
    expect(one.requests).toHaveLength(1)
    // the human is told the answer outlives the session
    const asked = one.requests[0] as PermissionRequest
    expect(asked.remembered).toBe('shared')
    expect(drawPermissionRequest(asked).join('\n')).toContain(
      '"Always" remembers: allow "fs_write" under /tmp, for every session sharing these grants, until removed.',
    )
    expect(two.requests).toHaveLength(0)
    expect(out[0]?.is_error).toBeUndefined()
    expect(b.inner.rec.batches.flat().map((c) => c.id)).toEqual(['2'])
  })

  it('a shared deny refuses by grant, and the listing read after it leaves the tool out', async () => {
    const store = sharedList()
    const decisions: Array<PolicyDecision> = []
    const { policy } = setup({ shared: store.shared, onDecision: (d) => () => void decisions.push(d) })
    await ready(policy)
    store.set([{ tool: 'web_get', decision: 'deny' }])
    const out = await run(policy, [call('1', 'web_get', { query: 'a' })])
    const listing = await policy.toolsForLlm()
    expect(out[0]?.is_error).toBe(true)
    expect(decisions).toMatchObject([{ tool: 'web_get', outcome: 'refused', by: 'grant' }])
    // fs_delete is refused by a static rule, web_get by the shared grant
    expect(listing._tag === 'Right' && listing.right.map((d) => d.function.name)).toEqual(['fs_read', 'fs_write'])
  })

  it('a source that throws, or gives no array, adds no grant and costs no call', async () => {
    const throwing = {
      grants: () => {
        throw new Error('down')
      },
      addGrant: () => {
        throw new Error('down')
      },
    }
    const notArray = { grants: () => 'allow' as unknown as ReadonlyArray<Rule>, addGrant: () => undefined }
    for (const shared of [throwing, notArray]) {
      const { onAsk } = scripted([{ action: 'always-allow' }])
      const { policy } = setup({ shared, onAsk })
      const out = await run(policy, [call('1', 'fs_read', { path: '/p/a' }), call('2', 'web_get', { query: 'a' })])
      expect(out.map((r) => r.is_error)).toEqual([undefined, undefined])
      expect(policy.grants()).toEqual([{ tool: 'web_get', decision: 'allow' }])
    }
  })

  it('is checked at construction: both members must be functions', () => {
    const grants = (): ReadonlyArray<Rule> => []
    const addGrant = (): void => undefined
    for (const shared of [{ grants: [] }, { grants }, { addGrant }, { grants, addGrant: 'x' }, { grants: 1, addGrant }])
      expect(() => withPolicy({ rules: [], shared: shared as unknown as SharedGrants })).toThrow(
        'withPolicy: option "shared" must be { grants, addGrant } (two functions), got',
      )
    expect(() => withPolicy({ rules: [], shared: { grants, addGrant } })).not.toThrow()
  })
})

describe('withPolicy: one question at a time', () => {
  it('never has two questions open, across concurrent batches (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom('web_get', 'fs_write', 'fs_read'), { minLength: 1, maxLength: 3 }), {
          minLength: 2,
          maxLength: 4,
        }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 10 }),
        async (batches, delays) => {
          let open = 0
          let most = 0
          let asked = 0
          const onAsk = (r: PermissionRequest) => async (): Promise<PermissionAnswer> => {
            open++
            most = Math.max(most, open)
            await tick(delays[asked++ % delays.length] ?? 0)
            open--
            return { action: r.tool === 'web_get' ? 'allow-once' : 'deny-once' }
          }
          const policy = withPolicy({ rules: [{ tool: 'fs_read', decision: 'allow' }], onAsk })(
            recordingProvider(DECLS),
          )
          const outs = await Promise.all(
            batches.map((names, b) =>
              run(
                policy,
                names.map((n, i) => call(`${b}.${i}`, n, { path: '/tmp/x' })),
              ),
            ),
          )
          expect(most).toBeLessThanOrEqual(1)
          outs.forEach((out, b) =>
            expect(out.map((r) => r.tool_call_id)).toEqual(batches[b]?.map((_, i) => `${b}.${i}`)),
          )
        },
      ),
      { numRuns: 40 },
    )
  })

  it('shares the queue between providers built from the same options', async () => {
    let open = 0
    let most = 0
    const layer = withPolicy({
      rules: [],
      onAsk: () => async () => {
        most = Math.max(most, ++open)
        await tick(5)
        open--
        return { action: 'allow-once' }
      },
    })
    const a = layer(recordingProvider(DECLS))
    const b = layer(recordingProvider(DECLS))
    await Promise.all([run(a, [call('1', 'x')]), run(b, [call('2', 'x')])])
    expect(most).toBe(1)
  })

  it('looks at the grants again after waiting: the previous answer may have granted it', async () => {
    const { requests, onAsk } = scripted([{ action: 'always-allow' }, { action: 'deny-once' }])
    const slow = (r: PermissionRequest) => async () => {
      await tick(10)
      return onAsk(r)()
    }
    const told: Array<unknown> = []
    const { policy, inner } = setup({ onAsk: slow, onDecision: (d) => () => void told.push(d) })
    const [x, y] = await Promise.all([
      run(policy, [call('a', 'web_get', { query: '1' })]),
      run(policy, [call('b', 'web_get', { query: '2' })]),
    ])
    expect(requests).toHaveLength(1)
    expect([x?.[0]?.is_error, y?.[0]?.is_error]).toEqual([undefined, undefined])
    expect(
      inner.rec.batches
        .flat()
        .map((c) => c.id)
        .sort(),
    ).toEqual(['a', 'b'])
    expect(told).toEqual([
      { tool: 'web_get', id: 'a', outcome: 'allowed', by: 'human' },
      { tool: 'web_get', id: 'b', outcome: 'allowed', by: 'grant' },
    ])
  })
})

// -------------------------------------------------------------------------------------
// listing
// -------------------------------------------------------------------------------------

describe('withPolicy: toolsForLlm', () => {
  const names = async (p: Provider<unknown>) => {
    const l = await p.toolsForLlm()
    return l._tag === 'Right' ? l.right.map((d) => d.function.name) : l
  }

  it('leaves out tools refused by a bare deny rule, keeping the declarations themselves', async () => {
    const { policy } = setup({ rules: [...RULES, { tool: 'web_*', decision: 'deny' }] })
    expect(await names(policy)).toEqual(['fs_read', 'fs_write'])
    const l = await policy.toolsForLlm()
    if (l._tag === 'Right') expect(l.right[0]).toBe(DECLS[0])
  })

  it('keeps a tool denied only under a directory', async () => {
    const { policy } = setup({ rules: [{ tool: 'fs_write', decision: 'deny', under: '/etc' }] })
    expect(await names(policy)).toEqual(['fs_read', 'fs_write', 'fs_delete', 'web_get'])
  })

  it('keeps every tool with filterTools: false', async () => {
    const { policy } = setup({ filterTools: false })
    expect(await names(policy)).toEqual(['fs_read', 'fs_write', 'fs_delete', 'web_get'])
  })

  it('leaves out a tool the user has refused outright for this session', async () => {
    const { onAsk } = scripted([{ action: 'always-deny' }])
    const { policy } = setup({ onAsk })
    await run(policy, [call('1', 'web_get', { query: 'x' })])
    expect(await names(policy)).toEqual(['fs_read', 'fs_write'])
  })

  it('keeps declarations it cannot read', async () => {
    const odd = [null, { type: 'function', function: { name: 7 } }, decl('fs_delete')]
    const policy = withPolicy({ rules: RULES })({
      ...recordingProvider([]),
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: odd as never }),
    })
    const l = await policy.toolsForLlm()
    expect(l._tag === 'Right' && l.right).toEqual([null, { type: 'function', function: { name: 7 } }])
  })

  it('passes a failed listing through', async () => {
    await listingFailurePassesThrough((inner) => withPolicy({ rules: RULES })(inner))
  })
})

// -------------------------------------------------------------------------------------
// never fails a batch
// -------------------------------------------------------------------------------------

describe('withPolicy: never fails a batch', () => {
  it('answers malformed calls with is_error results, in the caller’s order', async () => {
    const { policy, inner } = setup()
    const calls = [
      null,
      call('1', 'fs_read', { path: '/a' }),
      { id: 'x', function: { name: 7 } },
      'call',
    ] as unknown as ReadonlyArray<ToolCall>
    const out = await run(policy, calls)
    expect(out.map((r) => [r.tool_call_id, r.is_error])).toEqual([
      ['', true],
      ['1', undefined],
      ['x', true],
      ['', true],
    ])
    for (const i of [0, 2, 3]) {
      expect(out[i]?.content).toBe(
        'The permission policy could not read this tool call, so it was not run. Send a call with an id and a function { name, arguments }.',
      )
    }
    expect(inner.rec.batches.flat().map((c) => c.id)).toEqual(['1'])
  })

  it.each([
    ['fails', failingProvider('disk on fire'), 'the tool provider failed: disk on fire'],
    ['rejects', rejectingProvider(new Error('socket closed')), 'the tool provider failed: socket closed'],
  ])('answers for an inner batch that %s, leaving refusals as they are', async (_, inner, message) => {
    const policy = withPolicy({ rules: RULES })(inner as Provider<unknown>)
    const out = await run(policy, [call('1', 'fs_read', { path: '/a' }), call('2', 'fs_delete', { path: '/a' })])
    expect(out.map((r) => r.tool_call_id)).toEqual(['1', '2'])
    expect(out[0]).toMatchObject({ is_error: true, content: message })
    expect(out[1]?.content).toContain('deleting is done by hand')
  })

  it('fills the gaps of an inner provider that answers too few', async () => {
    const inner = recordingProvider(DECLS, (cs) => cs.slice(1).map(okResult))
    const policy = withPolicy({ rules: [{ tool: '*', decision: 'allow' }] })(inner)
    const out = await run(policy, [call('1', 'a'), call('2', 'b')])
    expect(out.map((r) => [r.tool_call_id, r.is_error])).toEqual([
      ['1', true],
      ['2', undefined],
    ])
  })

  it('one result per call, in order, whatever the inner provider and the human do (property)', async () => {
    const answers: ReadonlyArray<unknown> = [
      { action: 'allow-once' },
      { action: 'deny-once' },
      { action: 'always-allow' },
      { action: 'always-deny' },
      { action: 'nope' },
      null,
    ]
    let n = 0
    await fc.assert(
      answersOnePerCall(
        (inner) =>
          withPolicy({
            rules: [...RULES, { tool: 'web_*', decision: 'ask' }],
            roots: { fs_: '/p' },
            onAsk: () => () =>
              n++ % 7 === 6
                ? Promise.reject(new Error('gone'))
                : Promise.resolve(answers[n % answers.length] as PermissionAnswer),
          })(inner),
        DECLS,
        fc.constantFrom('fs_read', 'fs_write', 'fs_delete', 'web_get', 'other', '__proto__'),
      ),
    )
  })
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('decodeAnswer and recordGrant', () => {
  const suggestedRule: Rule = { tool: 'fs_write', decision: 'allow', under: '/p' }

  it('reads the four actions; a once answer records nothing', () => {
    expect(decodeAnswer({ action: 'allow-once', rule: { tool: 'x' } }, suggestedRule)).toEqual({
      _tag: 'Right',
      right: { action: 'allow-once', grant: undefined },
    })
    expect(decodeAnswer({ action: 'always-allow' }, suggestedRule)).toEqual({
      _tag: 'Right',
      right: { action: 'always-allow', grant: suggestedRule },
    })
    expect(decodeAnswer({ action: 'always-deny', rule: { tool: 'fs_*', note: 'no' } }, suggestedRule)).toEqual({
      _tag: 'Right',
      right: { action: 'always-deny', grant: { tool: 'fs_*', decision: 'deny', note: 'no' } },
    })
  })

  it('treats answer members as data', () => {
    const out = decodeAnswer(JSON.parse('{"action":"always-allow","__proto__":{"rule":{"tool":"*"}}}'), suggestedRule)
    expect(out).toMatchObject({ _tag: 'Left', left: { _tag: 'UnclearAnswer' } })
    const inherited = decodeAnswer(
      Object.assign(Object.create({ rule: { tool: '*' } }) as object, { action: 'always-allow' }),
      suggestedRule,
    )
    expect(inherited).toEqual({ _tag: 'Right', right: { action: 'always-allow', grant: suggestedRule } })
  })

  it('remembers a rule once', () => {
    const g1 = recordGrant(suggestedRule)([])
    expect(g1).toEqual([suggestedRule])
    expect(recordGrant({ ...suggestedRule })(g1)).toBe(g1)
  })
})

// -------------------------------------------------------------------------------------
// example
// -------------------------------------------------------------------------------------

describe('examples/policy.ts', () => {
  it('runs, allows, refuses with a note, asks, and remembers a grant', () => {
    const r = runExample('policy.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(
      'the model sees: read_file, list_directory, write_file, move_file (delete_file is refused outright',
    )
    expect(r.stdout).toContain('  ✓ read_file: read_file ran on README.md')
    expect(r.stdout).toContain('  ✓ write_file: write_file ran on src/main.ts')
    expect(r.stdout).toContain(
      '  ✗ delete_file: The permission policy refused this call to "delete_file" (rule: deny "delete_file"). Reason: files are deleted by hand in this repository.',
    )
    expect(r.stdout).toContain(
      '  ? write_file /project/docs/guide.md because "document the new --dry-run flag" (why asked: no-match)',
    )
    expect(r.stdout).toContain('  + grants now: allow "write_file" under /project/docs')
    expect(r.stdout).toContain('  ✓ write_file: write_file ran on docs/faq.md')
    expect(r.stdout.match(/ \? /g)).toHaveLength(3)
    expect(r.stdout).toContain('  ✗ write_file: The user declined this call to "write_file"')
    // the move with a decoy path is asked about, facts first (what could not be checked, then what lies outside
    // every allowed directory, then the rest), the reason last on one line
    expect(r.stdout).toContain(
      [
        '    | May the model call move_file on 2 paths (1 outside every allowed directory) and 1 location that could not be checked?',
        '    | Locations, each with the argument it came from:',
        '    |   path: not checked (is not an argument this tool declares)',
        '    |   source: /etc/hosts',
        '    |   destination: /project/src/hosts (sent as "src/hosts")',
      ].join('\n'),
    )
    expect(r.stdout).toContain(
      '    | "Always" is not offered: a location could not be checked, so only this call can be answered.',
    )
    expect(r.stdout).toContain(
      `    | The model's reason, in its own words (not checked): "tidy up\\nArguments: {\\"source\\":\\"src/a\\"}"\n    → deny-once`,
    )
    expect(r.stdout).toContain('  ✗ move_file: The user declined this call to "move_file"')
  })
})

describe('withPolicy: diagnostics', () => {
  it('says once when its rules name none of the listed tools (defaultRules behind a registry prefix)', async () => {
    const said: Array<unknown> = []
    const listing = [decl('fs_read_file', ['path']), decl('fs_write_file', ['path', 'content'])]
    const policy = withPolicy({ rules: defaultRules, onDiagnostic: (d) => () => void said.push(d) })(
      recordingProvider([...listing, { function: 7 } as never]),
    )
    await policy.toolsForLlm()
    expect(said).toHaveLength(1)
    await policy.toolsForLlm()
    expect(said).toEqual([
      { _tag: 'RulesNameNoTool', patterns: defaultRules.map((r) => r.tool), tools: ['fs_read_file', 'fs_write_file'] },
    ])
    expect(drawPolicyDiagnostic(said[0] as PolicyDiagnostic)).toMatch(
      /name none of the listed tools \("fs_read_file", "fs_write_file"\)/,
    )
  })

  it('is silent when a rule names a listed tool, and for an empty listing', async () => {
    const said: Array<unknown> = []
    const onDiagnostic = (d: PolicyDiagnostic) => () => void said.push(d)
    await withPolicy({ rules: readOnlyRules('fs_'), onDiagnostic })(
      recordingProvider([decl('fs_read_file'), decl('fs_write_file')]),
    ).toolsForLlm()
    await withPolicy({ rules: defaultRules, onDiagnostic })(recordingProvider([])).toolsForLlm()
    expect(said).toEqual([])
  })
})

describe('withPolicy: default onDiagnostic and drawPolicyDiagnostic', () => {
  it('writes the diagnostic on stderr, in one line', async () => {
    const lines: Array<string> = []
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    try {
      await withPolicy({ rules: defaultRules })(recordingProvider([decl('fs_read_file')])).toolsForLlm()
    } finally {
      spy.mockRestore()
    }
    expect(lines).toEqual([
      drawPolicyDiagnostic({
        _tag: 'RulesNameNoTool',
        patterns: defaultRules.map((r) => r.tool),
        tools: ['fs_read_file'],
      }) + '\n',
    ])
  })

  it('names at most four patterns and four tools, and says when there are more', () => {
    expect(
      drawPolicyDiagnostic({
        _tag: 'RulesNameNoTool',
        patterns: ['a', 'b', 'c', 'd', 'e'],
        tools: ['t', 'u', 'v', 'w'],
      }),
    ).toBe(
      `toolstack: the policy's rules ("a", "b", "c", "d", …) name none of the listed tools ("t", "u", "v", "w"), so every call will be asked about or refused; behind a registry, name tools with their prefix (readOnlyRules('fs_'))`,
    )
  })
})

describe('readOnlyRules', () => {
  it('refuses a prefix that is not a string, or holds "*"', () => {
    expect(() => readOnlyRules('fs*')).toThrow(
      new TypeError('readOnlyRules: prefix must be a string without "*", got the string "fs*"'),
    )
    expect(() => readOnlyRules(5 as never)).toThrow(
      new TypeError('readOnlyRules: prefix must be a string without "*", got number 5'),
    )
  })
})

describe('withPolicy: the listing', () => {
  it('passes a listing that is not a Right, or not a list, through as it came', async () => {
    for (const listing of [
      null,
      undefined,
      'tools',
      { _tag: 'Left', left: 'down' },
      { _tag: 'Right', right: 'not a list' },
    ]) {
      const inner = {
        toolsForLlm: () => Promise.resolve(listing),
        executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: [] }),
      } as unknown as Provider<string>
      expect(await withPolicy({ rules: [{ tool: 'x', decision: 'deny' }] })(inner).toolsForLlm()).toBe(listing)
    }
  })

  it('onAsk answering "unasked" (no one was asked): refused as headless, by nobody, and nothing is remembered', async () => {
    const told: Array<unknown> = []
    const policy = withPolicy({
      rules: RULES,
      onAsk: () => ({ action: 'unasked', rule: { tool: 'web_get', decision: 'allow' } }),
      onDecision: (d) => () => void told.push(d),
    })(recordingProvider(DECLS))
    await policy.toolsForLlm()
    const out = await run(policy, [call('1', 'web_get', { query: 'x' })])
    expect(out[0]?.content).toBe(
      'This call to "web_get" needs the user\'s permission, and no one is available to give it, so it was not run. Use a tool the policy allows, or ask the user to allow "web_get".',
    )
    expect(told).toEqual([{ tool: 'web_get', id: '1', outcome: 'refused', by: 'nobody', refusal: 'NoOneToAsk' }])
    expect(policy.grants()).toEqual([])
  })

  it('answers the inner listing itself when it leaves nothing out', async () => {
    const listing = { _tag: 'Right', right: DECLS } as const
    const inner = {
      toolsForLlm: () => Promise.resolve(listing),
      executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: [] }),
    } as unknown as Provider<string>
    expect(await withPolicy({ rules: RULES.filter((r) => r.decision !== 'deny') })(inner).toolsForLlm()).toBe(listing)
  })
})

describe('withPolicy: onDecision', () => {
  it('says who refused: the human who answered unclearly, nobody when no one can be asked or the arguments cannot be shown', async () => {
    const told: Array<unknown> = []
    const onDecision = (d: unknown) => () => void told.push(d)
    const asking = withPolicy({
      rules: [],
      onAsk: () => () => Promise.resolve({ action: 'nope' } as never),
      onDecision,
    })(recordingProvider(DECLS))
    await run(asking, [call('1', 'fs_write', { path: '/a' }), call('2', 'fs_write', '[1]', true)])
    await run(withPolicy({ rules: [], onDecision })(recordingProvider(DECLS)), [call('3', 'fs_write', { path: '/a' })])
    expect(told).toEqual([
      { tool: 'fs_write', id: '1', outcome: 'refused', by: 'human', refusal: 'UnclearAnswer' },
      { tool: 'fs_write', id: '2', outcome: 'refused', by: 'nobody', refusal: 'UnreadableArguments' },
      { tool: 'fs_write', id: '3', outcome: 'refused', by: 'nobody', refusal: 'NoOneToAsk' },
    ])
  })

  it('says a grant decided a call whose question waited behind the answer that made the grant', async () => {
    const told: Array<unknown> = []
    const policy = withPolicy({
      rules: [],
      onAsk: () => () => Promise.resolve({ action: 'always-allow', rule: { tool: 'fs_write' } }),
      onDecision: (d) => () => void told.push(d),
    })(recordingProvider(DECLS))
    await run(policy, [call('1', 'fs_write', { path: '/a' }), call('2', 'fs_write', { path: '/b' })])
    expect(told).toEqual([
      { tool: 'fs_write', id: '1', outcome: 'allowed', by: 'human' },
      { tool: 'fs_write', id: '2', outcome: 'allowed', by: 'grant' },
    ])
  })

  it('refuses only the call whose judging throws, naming the tool and what went wrong', async () => {
    const told: Array<unknown> = []
    const inner = batchingProvider(DECLS)
    const policy = withPolicy({
      rules: [
        { tool: 'fs_write', decision: 'allow', under: '/p' },
        { tool: 'fs_read', decision: 'allow' },
      ],
      onDecision: (d) => () => void told.push(d),
    })(inner)
    const calls = [call('1', 'fs_write', { path: '/p/a' }), call('2', 'fs_read', { path: '/a' })]
    const out = await policy.executeBatch({
      calls,
      argsAt: () => {
        throw new Error('the parse broke')
      },
    })()
    expect(out._tag === 'Right' && out.right.map((r) => [r.tool_call_id, r.is_error, r.content])).toEqual([
      ['1', true, drawRefusal({ _tag: 'AskFailed', tool: 'fs_write', error: 'the parse broke' })],
      ['2', undefined, 'ok 0'],
    ])
    expect(told[0]).toEqual({ tool: 'fs_write', id: '1', outcome: 'refused', by: 'human', refusal: 'AskFailed' })
  })
})

describe('withPolicy: onDecision, every case', () => {
  it('tells what became of every call, and who decided', async () => {
    const told: Array<unknown> = []
    const answers = [{ action: 'always-allow' as const }, { action: 'deny-once' as const }]
    const policy = withPolicy({
      rules: [
        { tool: 'fs_read', decision: 'allow' },
        { tool: 'fs_delete', decision: 'deny' },
      ],
      onAsk: () => () => Promise.resolve(answers.shift() ?? { action: 'deny-once' as const }),
      onDecision: (d) => () => void told.push(d),
    })(recordingProvider(DECLS))
    await run(policy, [
      call('1', 'fs_read', { path: '/a' }),
      call('2', 'fs_delete', { path: '/a' }),
      call('3', 'fs_write', { path: '/w/a' }),
    ])
    await run(policy, [
      call('4', 'fs_write', { path: '/w/b' }),
      call('5', 'web_get', { query: 'u' }),
      { id: '6' } as unknown as ToolCall,
    ])
    expect(told).toEqual([
      { tool: 'fs_read', id: '1', outcome: 'allowed', by: 'rules' },
      { tool: 'fs_delete', id: '2', outcome: 'refused', by: 'rules', refusal: 'DeniedByRule' },
      { tool: 'fs_write', id: '3', outcome: 'allowed', by: 'human' },
      { tool: 'fs_write', id: '4', outcome: 'allowed', by: 'grant' },
      { tool: 'web_get', id: '5', outcome: 'refused', by: 'human', refusal: 'DeclinedByUser' },
      { tool: '', id: '6', outcome: 'refused', by: 'rules', refusal: 'MalformedCall' },
    ])
  })
})
