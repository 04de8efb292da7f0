import { describe, expect, expectTypeOf, it, vi } from 'vitest'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type {
  BatchProvider,
  Provider,
  RegistryEntry,
  RegistryError,
  ToolCall,
  ToolDeclaration,
  ToolResult,
} from '../../src/index.js'
import { drawRegistryError, registry } from '../../src/index.js'
import { batchOf } from '../../src/steps/Batch.js'
import { listingFailed, listingUnreadable, matchRegistryError, toolShadowed } from '../../src/combinators/Registry.js'
import { callNameOf } from '../../src/kernel/calls.js'
import { answersOnePerCall, behavingProvider, innerBehaviourArb, isLazy } from '../laws.js'
import { batchArb, plainBatchArb } from '../support/arbitraries.js'
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

// -------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------

const deepFreeze = <A>(a: A): A => {
  const seen = new Set<unknown>()
  const go = (u: unknown): void => {
    try {
      if (typeof u !== 'object' || u === null || seen.has(u)) return
      seen.add(u)
      for (const k of Reflect.ownKeys(u)) go((u as Record<PropertyKey, unknown>)[k])
      Object.freeze(u)
    } catch {
      // a Proxy or a throwing getter: nothing to freeze
    }
  }
  go(a)
  return a
}

const namesOf = (r: { _tag: string; right?: ReadonlyArray<ToolDeclaration> }): ReadonlyArray<string> =>
  r._tag === 'Right' && r.right !== undefined ? r.right.map((d) => d.function.name) : []

const run = async (p: Provider<unknown>, calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
  const out = await p.executeToolCalls(calls)()
  expect(out._tag).toBe('Right')
  return out._tag === 'Right' ? out.right : []
}

const recNames = (p: { rec: { batches: Array<ReadonlyArray<ToolCall>> } }): ReadonlyArray<ReadonlyArray<string>> =>
  p.rec.batches.map((b) => b.map((c) => c.function.name))

const nothing = (): Provider<string> => recordingProvider([])

// -------------------------------------------------------------------------------------
// construction
// -------------------------------------------------------------------------------------

describe('registry: construction', () => {
  const refuses = (entries: unknown, message: RegExp): void => {
    expect(() => registry(entries as ReadonlyArray<RegistryEntry>)).toThrow(TypeError)
    expect(() => registry(entries as ReadonlyArray<RegistryEntry>)).toThrow(message)
  }

  it.each([[{}], [null], [undefined], ['fs'], [42]])('refuses %j as entries', (u) => {
    refuses(u, /registry: expected an array of entries/)
  })

  it.each([[null], ['fs'], [[]], [7]])('refuses the entry %j', (u) => {
    refuses([u], /entry 0 must be an object/)
  })

  it.each([['f s'], ['fs.'], ['é'], ['a/b'], ['a\u0000b'], [7], [undefined]])('refuses the prefix %j', (prefix) => {
    refuses([{ prefix, provider: nothing() }], /entry 0: prefix must be a string of letters, digits/)
  })

  it('refuses two entries with the empty prefix: both would own every name', () => {
    refuses(
      [
        { prefix: '', provider: nothing() },
        { prefix: '', provider: nothing(), separator: '-' },
      ],
      /entries 0 and 1 both use prefix ""/,
    )
  })

  it.each([[''], ['.'], [' '], ['/'], [7], [null]])('refuses the separator %j', (separator) => {
    refuses(
      [{ prefix: 'fs', provider: nothing(), separator }],
      /entry 0 \(prefix "fs"\): separator must be a non-empty string/,
    )
  })

  it('refuses a duplicate prefix, even under another separator', () => {
    refuses(
      [
        { prefix: 'fs', provider: nothing() },
        { prefix: 'fs', provider: nothing(), separator: '-' },
      ],
      /entries 0 and 1 both use prefix "fs"/,
    )
  })

  it('refuses two entries publishing into one namespace', () => {
    refuses(
      [
        { prefix: 'a', provider: nothing(), separator: '_b' },
        { prefix: 'a_', provider: nothing(), separator: 'b' },
      ],
      /entries 0 and 1 both publish into the namespace "a_b"/,
    )
  })

  it('refuses a non-provider, naming what is missing', () => {
    refuses(
      [{ prefix: 'fs', provider: { toolsForLlm: TE.right([]) } }],
      /entry 0 \(prefix "fs"\).*`executeToolCalls` is not a function/,
    )
    refuses([{ prefix: 'fs', provider: null }], /expected a provider/)
  })

  it('says an entry whose members cannot be listed cannot be read, and names unknown members as they are', () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('no keys')
        },
      },
    )
    expect(() => registry([hostile as never])).toThrow(new TypeError('registry: entry 0 cannot be read: no keys'))
    expect(() => registry([{ prefix: 'fs', provider: nothing(), sepatator: '-' } as never])).toThrow(
      new TypeError('registry: entry 0 has unknown member "sepatator" (known members: prefix, provider, separator)'),
    )
  })

  it('refuses an unknown entry member by name', () => {
    refuses(
      [{ prefix: 'fs', provider: nothing(), sepatator: '-' }],
      /entry 0 has unknown member "sepatator" \(known members: prefix, provider, separator\)/,
    )
    refuses(
      [{ prefix: 'fs', provider: nothing(), sep: '-', name: 'x' }],
      /entry 0 has unknown members "sep", "name" \(known members: prefix, provider, separator\)/,
    )
  })

  it('reads own members only: an inherited prefix does not count', () => {
    const entry = Object.create({ prefix: 'fs' }) as Record<string, unknown>
    entry['provider'] = nothing()
    refuses([entry], /prefix must be a string.*got undefined/)
  })

  it('refuses an entry that throws when read', () => {
    const entry = { provider: nothing() }
    Object.defineProperty(entry, 'prefix', {
      enumerable: true,
      get: () => {
        throw new Error('boom')
      },
    })
    refuses([entry], /entry 0 cannot be read: boom/)
  })

  it('accepts nested namespaces, custom separators and an empty registry', () => {
    expect(() =>
      registry([
        { prefix: 'a', provider: nothing() },
        { prefix: 'a_b', provider: nothing() },
        { prefix: 'a-', provider: nothing(), separator: '-' },
      ]),
    ).not.toThrow()
    expect(() => registry([{ prefix: 'x-1_Y', provider: nothing(), separator: '__' }])).not.toThrow()
    expect(() => registry([])).not.toThrow()
  })

  it('does not touch a provider at construction', async () => {
    await isLazy((inner) => registry([{ prefix: 'p', provider: inner }]), [call('1', 'p_x')])
  })

  it('types: a registry is a BatchProvider<RegistryError> (so a Provider<RegistryError>), whatever its providers fail with', () => {
    const p = registry([{ prefix: 'fs', provider: failingProvider(42) }])
    expectTypeOf(p).toEqualTypeOf<BatchProvider<RegistryError>>()
    expectTypeOf(p).toMatchTypeOf<Provider<RegistryError>>()
  })
})

// -------------------------------------------------------------------------------------
// listing
// -------------------------------------------------------------------------------------

describe('registry: listing', () => {
  it('publishes prefix + separator + name, in registration order', async () => {
    const r = registry([
      { prefix: 'fs', provider: recordingProvider([decl('read', ['path']), decl('write')]) },
      { prefix: 'web', provider: recordingProvider([decl('get')]), separator: '-' },
      { prefix: 'db', provider: recordingProvider([decl('query')]), separator: '__' },
    ])
    expect(namesOf(await r.toolsForLlm())).toEqual(['fs_read', 'fs_write', 'web-get', 'db__query'])
  })

  it('copies declarations along the changed path and never mutates them', async () => {
    const original = deepFreeze(decl('read', ['path'], { required: ['path'] }))
    const r = registry([{ prefix: 'fs', provider: recordingProvider([original]) }])
    const out = await r.toolsForLlm()
    expect(out._tag).toBe('Right')
    const published = out._tag === 'Right' ? out.right[0] : undefined
    expect(published).not.toBe(original)
    expect(published?.function).not.toBe(original.function)
    expect(published?.function.parameters).toBe(original.function.parameters)
    expect(published).toEqual({ ...original, function: { ...original.function, name: 'fs_read' } })
    expect(original.function.name).toBe('read')
  })

  it('lists each provider again on each listing (no cache to go stale)', async () => {
    const inner = recordingProvider([decl('read')])
    const r = registry([{ prefix: 'fs', provider: inner }])
    await r.toolsForLlm()
    await r.toolsForLlm()
    expect(inner.rec.listings).toBe(2)
  })

  it('fails the whole listing when one provider returns a Left', async () => {
    const r = registry([
      { prefix: 'fs', provider: recordingProvider([decl('read')]) },
      { prefix: 'web', provider: failingProvider('offline') },
    ])
    expect(await r.toolsForLlm()).toEqual({
      _tag: 'Left',
      left: { _tag: 'ListingFailed', prefix: 'web', error: 'offline' },
    })
  })

  it('turns a rejection or a throw into a Left; the listing never rejects', async () => {
    const reason = new Error('cannot connect')
    const rejecting = registry([{ prefix: 'web', provider: rejectingProvider(reason) }])
    const out = await rejecting.toolsForLlm()
    expect(out._tag === 'Left' && out.left._tag === 'ListingFailed' && out.left.error).toBe(reason)
    const throwing = registry([
      {
        prefix: 'web',
        provider: {
          toolsForLlm: () => {
            throw reason
          },
          executeToolCalls: () => TE.right([]),
        },
      },
    ])
    const out2 = await throwing.toolsForLlm()
    expect(out2._tag === 'Left' && out2.left._tag === 'ListingFailed' && out2.left.error).toBe(reason)
  })

  it('reports the first failing provider in registration order, whichever settles first', async () => {
    const slowFail: Provider<string> = {
      toolsForLlm: () => new Promise((resolve) => setTimeout(() => resolve({ _tag: 'Left', left: 'slow' }), 20)),
      executeToolCalls: () => TE.right([]),
    }
    const r = registry([
      { prefix: 'a', provider: slowFail },
      { prefix: 'b', provider: failingProvider('fast') },
    ])
    expect(await r.toolsForLlm()).toEqual({ _tag: 'Left', left: listingFailed('a', 'slow') })
  })

  it.each([
    ['a listing that is not an array', { not: 'an array' }, /the listing is an object, not an array/],
    ['a declaration that is not an object', [null], /declaration 0 has no "function" object \(got null\)$/],
    ['a declaration that is undefined', [undefined], /declaration 0 has no "function" object \(got undefined\)$/],
    [
      'a declaration with no function',
      [{ type: 'function' }],
      /declaration 0 has no "function" object \(got an object\)$/,
    ],
    [
      'a declaration whose function is null',
      [{ type: 'function', function: null }],
      /declaration 0 has no "function" object \(got an object\)$/,
    ],
    [
      'a declaration with no name',
      [decl('ok'), { type: 'function', function: { description: 'x' } }],
      /declaration 1 has no tool name \(function.name is undefined\)/,
    ],
    [
      'a declaration with an empty name',
      [{ type: 'function', function: { name: '' } }],
      /declaration 0 has no tool name/,
    ],
    [
      'a declaration with a numeric name',
      [{ type: 'function', function: { name: 7 } }],
      /declaration 0 has no tool name \(function.name is number 7\)/,
    ],
  ])('fails the listing on %s, rather than dropping or passing it through', async (_what, listing, problem) => {
    const r = registry([
      { prefix: 'fs', provider: { toolsForLlm: TE.right(listing as never), executeToolCalls: () => TE.right([]) } },
    ])
    const out = await r.toolsForLlm()
    expect(out._tag === 'Left' && out.left._tag).toBe('ListingUnreadable')
    if (out._tag === 'Left') expect(drawRegistryError(out.left)).toMatch(problem)
  })

  it('fails the listing on a declaration that throws when read', async () => {
    const d = Object.defineProperty({ type: 'function' }, 'function', {
      enumerable: true,
      get: () => {
        throw new Error('getter')
      },
    })
    const r = registry([
      { prefix: 'fs', provider: { toolsForLlm: TE.right([d] as never), executeToolCalls: () => TE.right([]) } },
    ])
    const out = await r.toolsForLlm()
    expect(out).toEqual({ _tag: 'Left', left: listingUnreadable('fs', 'declaration 0 cannot be read (getter)') })
  })

  it('fails the listing when a provider resolves with something that is not an Either, saying what came', async () => {
    for (const [listing, got] of [
      [42, 'number 42'],
      [null, 'null'],
      [undefined, 'undefined'],
      [{ _tag: 'Maybe' }, 'an object'],
    ] as const) {
      const r = registry([
        {
          prefix: 'fs',
          provider: { toolsForLlm: () => Promise.resolve(listing as never), executeToolCalls: () => TE.right([]) },
        },
      ])
      expect(await r.toolsForLlm()).toEqual({
        _tag: 'Left',
        left: listingUnreadable('fs', `the listing is ${got}, not an Either`),
      })
    }
  })

  it('fails the listing when a tool name would route to a nested namespace', async () => {
    const r = registry([
      { prefix: 'a', provider: recordingProvider([decl('x'), decl('b_c')]) },
      { prefix: 'a_b', provider: recordingProvider([decl('c')]) },
    ])
    const out = await r.toolsForLlm()
    expect(out).toEqual({ _tag: 'Left', left: toolShadowed('a', 'b_c', 'a_b_c', 'a_b') })
    if (out._tag === 'Left')
      expect(drawRegistryError(out.left)).toMatch(
        /tool "b_c" .* prefix "a" would be published as "a_b_c", but calls to that name route to the provider under prefix "a_b"/,
      )
  })

  it('publishes the names of the empty prefix unchanged, beside prefixed ones', async () => {
    const r = registry([
      { prefix: '', provider: recordingProvider([decl('read'), decl('fsx_y')]) },
      { prefix: 'fs', provider: recordingProvider([decl('read')]) },
    ])
    expect(namesOf(await r.toolsForLlm())).toEqual(['read', 'fsx_y', 'fs_read'])
  })

  it('fails the listing when a name of the empty prefix lies in another namespace', async () => {
    const r = registry([
      { prefix: '', provider: recordingProvider([decl('fs_read')]) },
      { prefix: 'fs', provider: recordingProvider([decl('write')]) },
    ])
    expect(await r.toolsForLlm()).toEqual({ _tag: 'Left', left: toolShadowed('', 'fs_read', 'fs_read', 'fs') })
  })

  it('keeps nested namespaces whose tools do not collide', async () => {
    const r = registry([
      { prefix: 'a', provider: recordingProvider([decl('x'), decl('bc')]) },
      { prefix: 'a_b', provider: recordingProvider([decl('c')]) },
    ])
    expect(namesOf(await r.toolsForLlm())).toEqual(['a_x', 'a_bc', 'a_b_c'])
  })
})

// -------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------

describe('registry: RegistryError', () => {
  it('renders every case for a human', () => {
    expect(drawRegistryError(listingFailed('web', new Error('ECONNREFUSED')))).toBe(
      'registry: the provider under prefix "web" could not list its tools: ECONNREFUSED',
    )
    expect(drawRegistryError(listingFailed('web', { code: 7 }))).toMatch(/\{"code":7\}$/)
    expect(drawRegistryError(listingUnreadable('fs', 'the listing is null, not an array'))).toBe(
      'registry: the provider under prefix "fs" listed tools the registry cannot publish: the listing is null, not an array',
    )
    expect(drawRegistryError(toolShadowed('a', 'b_c', 'a_b_c', 'a_b'))).toMatch(
      /choose prefixes whose namespaces do not nest$/,
    )
  })

  it('renders an error that only looks like a registry error, or throws when read, as any other error', () => {
    expect(drawRegistryError(listingFailed('web', { _tag: 'ListingFailed', prefix: 7 }))).toBe(
      'registry: the provider under prefix "web" could not list its tools: {"_tag":"ListingFailed","prefix":7}',
    )
    const hostile = {
      get _tag(): never {
        throw new Error('no tag')
      },
      toString: () => 'a hostile error',
    }
    expect(drawRegistryError(listingFailed('web', hostile))).toBe(
      'registry: the provider under prefix "web" could not list its tools: a hostile error',
    )
  })

  // what a server publishes and says reaches a host's error and a terminal: escaped beyond JSON's C0, and bounded
  it('escapes and bounds what a server wrote: its error, a tool name, a published name', () => {
    const hostile = `line one\nline two \u001b[31m \u009b31m \u202e ${'x'.repeat(100_000)}`
    for (const line of [
      drawRegistryError(listingFailed('web', new Error(hostile))),
      drawRegistryError(listingUnreadable('web', hostile)),
      drawRegistryError(toolShadowed('a', hostile, `a_${hostile}`, 'a_b')),
    ]) {
      expect(line.length).toBeLessThan(1_000)
      // eslint-disable-next-line no-control-regex
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/)
    }
  })

  it('renders a nested registry error inside its parent', () => {
    expect(drawRegistryError(listingFailed('outer', listingFailed('fs', 'disk gone')))).toBe(
      'registry: the provider under prefix "outer" could not list its tools: registry: the provider under prefix "fs" could not list its tools: disk gone',
    )
  })

  it('matches on the tag', () => {
    const tagOf = matchRegistryError({ ListingFailed: () => 1, ListingUnreadable: () => 2, ToolShadowed: () => 3 })
    expect([listingFailed('a', 0), listingUnreadable('a', ''), toolShadowed('a', 'b', 'c', 'd')].map(tagOf)).toEqual([
      1, 2, 3,
    ])
  })
})

// -------------------------------------------------------------------------------------
// calls
// -------------------------------------------------------------------------------------

describe('registry: calls', () => {
  it("sends a call under the empty prefix on as the very object: its name is the provider's own", async () => {
    const inner = recordingProvider([decl('read', ['path'])])
    const r = registry([{ prefix: '', provider: inner }])
    await r.toolsForLlm()
    const c = call('1', 'read', { path: '/a' })
    const calls = [c]
    await r.executeToolCalls(calls)()
    expect(inner.rec.batches[0]?.[0]).toBe(c)
    // and a batch whose every call goes there unchanged goes on as it came
    expect(inner.rec.batches[0]).toBe(calls)
  })

  // a provider that echoes a call's id 7 as the number 7, as the registry's own example does
  it('keeps the results of calls whose ids are numbers, split across providers', async () => {
    const echo = (name: string): Provider<string> => ({
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [decl(name, ['x'])] }),
      executeToolCalls: (calls) => () =>
        Promise.resolve({
          _tag: 'Right',
          right: calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: `${name} ran` })),
        }),
    })
    const r = registry([
      { prefix: 'a', provider: echo('t') },
      { prefix: 'b', provider: echo('t') },
    ])
    await r.toolsForLlm()
    const numbered = [1, 2, 3].map((n) => ({ ...call('x', n === 2 ? 'b_t' : 'a_t', { x: n }), id: n as never }))
    const out = await run(r, numbered)
    expect(out.map((o) => [o.content, o.is_error === true])).toEqual([
      ['t ran', false],
      ['t ran', false],
      ['t ran', false],
    ])
  })

  it("never rejects when a provider's results array throws on a second read of a slot", async () => {
    const result = { role: 'tool', tool_call_id: '1', content: 'ran' }
    const once: Provider<string> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [decl('t', ['x'])] }),
      executeToolCalls: () => () => {
        let reads = 0
        const arr: Array<unknown> = []
        Object.defineProperty(arr, 0, {
          enumerable: true,
          get: () => {
            if (reads++ > 0) throw new Error('second read')
            return result
          },
        })
        return Promise.resolve({ _tag: 'Right', right: arr as ReadonlyArray<ToolResult> })
      },
    }
    const r = registry([
      { prefix: 'a', provider: once },
      { prefix: 'b', provider: recordingProvider([decl('t', ['x'])]) },
    ])
    await r.toolsForLlm()
    const out = await run(r, [call('1', 'a_t', { x: 1 }), call('2', 'b_t', { x: 2 })])
    expect(out.map((o) => o.tool_call_id)).toEqual(['1', '2'])
    expect(out[0]?.is_error).toBe(true)
  })

  it('routes by the longest prefix and strips it', async () => {
    const a = recordingProvider([])
    const ab = recordingProvider([])
    const r = registry([
      { prefix: 'a', provider: a },
      { prefix: 'a_b', provider: ab },
    ])
    await run(r, [call('1', 'a_b_c'), call('2', 'a_x'), call('3', 'a_bc')])
    expect(recNames(ab)).toEqual([['c']])
    expect(recNames(a)).toEqual([['x', 'bc']])
  })

  it('routes to the empty prefix every name no other namespace claims, unchanged', async () => {
    const bare = recordingProvider([])
    const fs = recordingProvider([])
    const r = registry([
      { prefix: '', provider: bare },
      { prefix: 'fs', provider: fs },
    ])
    await run(r, [call('1', 'read'), call('2', 'fs_read'), call('3', 'fs'), call('4', 'fs_')])
    expect(recNames(bare)).toEqual([['read', 'fs', 'fs_']])
    expect(recNames(fs)).toEqual([['read']])
  })

  it('hands on a copy with the same id, arguments and other members; the caller’s call is untouched', async () => {
    const inner = recordingProvider([])
    const r = registry([{ prefix: 'fs', provider: inner }])
    const args = deepFreeze({ path: '/x' })
    const original = deepFreeze({
      id: 'c1',
      type: 'function',
      function: { name: 'fs_read', arguments: args, extra: 1 },
      meta: 'kept',
    } as ToolCall)
    await run(r, [original])
    const received = inner.rec.batches[0]?.[0]
    expect(received).not.toBe(original)
    expect(received?.function.arguments).toBe(args)
    expect(received).toEqual({
      id: 'c1',
      type: 'function',
      function: { name: 'read', arguments: args, extra: 1 },
      meta: 'kept',
    })
    expect(original.function.name).toBe('fs_read')
  })

  it('returns the provider’s very results when it holds the whole batch', async () => {
    const fs = recordingProvider([])
    const out = await run(registry([{ prefix: 'fs', provider: fs }]), [call('1', 'fs_read'), call('2', 'fs_write')])
    expect(out).toBe(fs.rec.results[0])
  })

  it('hands the upper layer’s parse down with each copy: the copy is not parsed again', async () => {
    const fs = batchingProvider([])
    const web = batchingProvider([])
    const calls = [
      call('1', 'fs_read', { path: '/x' }),
      call('2', 'web_get', { url: 'u' }),
      call('3', 'fs_write', { path: '/y' }),
    ]
    const batch = batchOf(calls)
    const above = [batch.argsAt(0), batch.argsAt(1), batch.argsAt(2)]
    const spy = vi.spyOn(JSON, 'parse')
    try {
      await registry([
        { prefix: 'fs', provider: fs },
        { prefix: 'web', provider: web },
      ]).executeBatch?.(batch)()
      expect(fs.received[0]?.calls.map((c) => c.function.name)).toEqual(['read', 'write'])
      expect(fs.received[0]?.argsAt(0)).toBe(above[0])
      expect(fs.received[0]?.argsAt(1)).toBe(above[2])
      expect(web.received[0]?.argsAt(0)).toBe(above[1])
      expect(spy).not.toHaveBeenCalled()
    } finally {
      spy.mockRestore()
    }
  })

  it('sends each provider its calls as one batch in model order, and threads results back', async () => {
    const fs = recordingProvider([], (calls) =>
      calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: `fs:${c.function.name}` })),
    )
    const web = recordingProvider([], (calls) =>
      calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: `web:${c.function.name}` })),
    )
    const r = registry([
      { prefix: 'fs', provider: fs },
      { prefix: 'web', provider: web },
    ])
    const out = await run(r, [
      call('1', 'web_get'),
      call('2', 'fs_read'),
      call('3', 'nope'),
      call('4', 'web_post'),
      call('5', 'fs_write'),
    ])
    expect(recNames(fs)).toEqual([['read', 'write']])
    expect(recNames(web)).toEqual([['get', 'post']])
    expect(out.map((x) => [x.tool_call_id, x.content])).toEqual([
      ['1', 'web:get'],
      ['2', 'fs:read'],
      ['3', 'no tool named "nope"; known prefixes are "fs_", "web_"'],
      ['4', 'web:post'],
      ['5', 'fs:write'],
    ])
    // results are the very objects the providers returned
    expect(out[0]).toBe(web.rec.results[0]?.[0])
    expect(out[4]).toBe(fs.rec.results[0]?.[1])
  })

  it('runs providers concurrently', async () => {
    let releaseA: () => void = () => undefined
    const aMayFinish = new Promise<void>((resolve) => {
      releaseA = resolve
    })
    const a: Provider<never> = {
      toolsForLlm: TE.right([]),
      executeToolCalls: (calls) => async () => {
        await aMayFinish
        return { _tag: 'Right', right: calls.map(okResult) }
      },
    }
    const b: Provider<never> = {
      toolsForLlm: TE.right([]),
      executeToolCalls: (calls) => () => {
        releaseA()
        return Promise.resolve({ _tag: 'Right', right: calls.map(okResult) })
      },
    }
    const r = registry([
      { prefix: 'a', provider: a },
      { prefix: 'b', provider: b },
    ])
    const timeout = new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 1000))
    const out = await Promise.race([r.executeToolCalls([call('1', 'a_x'), call('2', 'b_y')])(), timeout])
    expect(out).not.toBe('stuck')
  })

  it('answers an unknown prefix, a bare tag and an empty registry in words a model can act on', async () => {
    const inner = recordingProvider([])
    const r = registry([{ prefix: 'fs', provider: inner }])
    const out = await run(r, [call('1', 'read'), call('2', 'fs_'), call('3', 'FS_read')])
    expect(out.map((x) => x.content)).toEqual([
      'no tool named "read"; known prefixes are "fs_"',
      'no tool named "fs_"; known prefixes are "fs_"',
      'no tool named "FS_read"; known prefixes are "fs_"',
    ])
    expect(out.every((x) => x.is_error === true)).toBe(true)
    expect(inner.rec.batches).toEqual([])
    expect((await run(registry([]), [call('1', 'x')]))[0]?.content).toBe('no tool named "x"; no tools are registered')
  })

  it('says exactly what is wrong with a call that is not an object, or has no function object', async () => {
    const r = registry([{ prefix: 'fs', provider: recordingProvider([]) }])
    const shape = 'a tool call looks like { "id": "…", "function": { "name": "…", "arguments": "{…}" } }'
    const out = await run(r, [
      null,
      'fs_read',
      { id: '3', function: null },
      { id: '4', function: 'fs_read' },
    ] as unknown as ReadonlyArray<ToolCall>)
    expect(out.map((x) => x.content)).toEqual([
      `this tool call is malformed: it is null; ${shape}`,
      `this tool call is malformed: it is the string "fs_read"; ${shape}`,
      `this tool call is malformed: it has no "function" object; ${shape}`,
      `this tool call is malformed: it has no "function" object; ${shape}`,
    ])
  })

  it('quotes at most 80 characters of a name it cannot route', async () => {
    const r = registry([{ prefix: 'fs', provider: recordingProvider([]) }])
    const [long, edge] = await run(r, [call('1', 'x'.repeat(81)), call('2', 'y'.repeat(80))])
    expect(long?.content).toBe(`no tool named "${'x'.repeat(80)}…"; known prefixes are "fs_"`)
    expect(edge?.content).toBe(`no tool named "${'y'.repeat(80)}"; known prefixes are "fs_"`)
  })

  it('answers malformed calls one by one, and still runs the rest', async () => {
    const inner = recordingProvider([])
    const r = registry([{ prefix: 'fs', provider: inner }])
    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom')
        },
      },
    )
    const calls = [
      null,
      'call',
      { id: 'a' },
      { id: 'b', function: null },
      { id: 'c', function: { name: 7 } },
      throwing,
      call('ok', 'fs_read'),
    ] as unknown as ReadonlyArray<ToolCall>
    const out = await run(r, calls)
    expect(out).toHaveLength(7)
    expect(
      out.slice(0, 6).every((x) => x.is_error === true && x.content.startsWith('this tool call is malformed: ')),
    ).toBe(true)
    expect(out.map((x) => x.tool_call_id)).toEqual(['', '', 'a', 'b', 'c', '', 'ok'])
    expect(out[1]?.content).toMatch(/it is the string "call"/)
    expect(out[3]?.content).toMatch(/no "function" object/)
    expect(out[4]?.content).toMatch(/function.name is number 7, not a string/)
    expect(out[5]?.content).toMatch(/cannot be read \(boom\)/)
    expect(out[6]).toEqual({ role: 'tool', tool_call_id: 'ok', content: 'ok 0' })
  })

  it.each([
    ['a Left', failingProvider('disk full'), 'the tool provider for "fs_" failed: disk full'],
    ['a rejection', rejectingProvider(new Error('EPIPE')), 'the tool provider for "fs_" failed: EPIPE'],
    [
      'a synchronous throw',
      {
        toolsForLlm: TE.right([]),
        executeToolCalls: () => {
          throw new Error('sync')
        },
      } as Provider<never>,
      'the tool provider for "fs_" failed: sync',
    ],
  ])('fails only the calls of a provider that fails with %s', async (_what, broken, message) => {
    const web = recordingProvider([])
    const r = registry([
      { prefix: 'fs', provider: broken },
      { prefix: 'web', provider: web },
    ])
    const out = await run(r, [call('1', 'fs_read'), call('2', 'web_get'), call('3', 'fs_write')])
    expect(out).toEqual([
      { role: 'tool', tool_call_id: '1', content: message, is_error: true },
      { role: 'tool', tool_call_id: '2', content: 'ok 0' },
      { role: 'tool', tool_call_id: '3', content: message, is_error: true },
    ])
  })

  it('fills the gaps of a provider that answers short', async () => {
    const short = recordingProvider([], (calls) => calls.slice(0, 1).map(okResult))
    const r = registry([{ prefix: 'fs', provider: short }])
    const out = await run(r, [call('1', 'fs_a'), call('2', 'fs_b')])
    expect(out[0]).toEqual({ role: 'tool', tool_call_id: '1', content: 'ok 0' })
    expect(out[1]).toEqual({
      role: 'tool',
      tool_call_id: '2',
      content: 'the tool provider returned no result for this call',
      is_error: true,
    })
  })

  it('answers a batch that is not an array with one clear refusal, never a Left', async () => {
    const r = registry([{ prefix: 'fs', provider: nothing() }])
    expect(await r.executeToolCalls(null as never)()).toEqual({
      _tag: 'Right',
      right: [
        {
          role: 'tool',
          tool_call_id: '',
          is_error: true,
          content:
            'this batch of tool calls could not be read: expected an array of tool calls, got null; no call was run',
        },
      ],
    })
    expect(await r.executeToolCalls([])()).toEqual({ _tag: 'Right', right: [] })
  })

  it('is lazy: building a batch runs nothing', async () => {
    await isLazy((inner) => registry([{ prefix: 'p', provider: inner }]), [call('1', 'p_x')])
    const inner = recordingProvider([])
    const r = registry([{ prefix: 'p', provider: inner }])
    r.executeToolCalls([call('1', 'p_x')])
    void r.toolsForLlm
    expect(inner.rec.batches).toEqual([])
    expect(inner.rec.listings).toBe(0)
  })
})

// -------------------------------------------------------------------------------------
// nesting
// -------------------------------------------------------------------------------------

describe('registry: nesting', () => {
  it('a registry is a provider: names stack and calls find their way down', async () => {
    const fs = recordingProvider([decl('read')])
    const web = recordingProvider([decl('get')])
    const outer = registry([
      { prefix: 'local', provider: registry([{ prefix: 'fs', provider: fs }]) },
      { prefix: 'web', provider: web },
    ])
    expect(namesOf(await outer.toolsForLlm())).toEqual(['local_fs_read', 'web_get'])
    const out = await run(outer, [call('1', 'local_fs_read'), call('2', 'local_zz'), call('3', 'web_get')])
    expect(recNames(fs)).toEqual([['read']])
    expect(recNames(web)).toEqual([['get']])
    // the inner registry answers for its own namespace, in its own names
    expect(out[1]).toEqual({
      role: 'tool',
      tool_call_id: '2',
      content: 'no tool named "zz"; known prefixes are "fs_"',
      is_error: true,
    })
  })

  it('an inner listing failure surfaces inside the outer one', async () => {
    const outer = registry([
      { prefix: 'local', provider: registry([{ prefix: 'fs', provider: failingProvider('disk gone') }]) },
    ])
    const out = await outer.toolsForLlm()
    expect(out).toEqual({ _tag: 'Left', left: listingFailed('local', listingFailed('fs', 'disk gone')) })
  })

  it('property: through any depth, a published name reaches its provider under its own name', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a', 'b', 'x-y', 'A1'), { minLength: 1, maxLength: 4 }),
        fc.stringMatching(/^[a-z][a-z0-9_.]{0,8}$/),
        async (prefixes, tool) => {
          const leaf = recordingProvider([decl(tool)])
          const top = prefixes.reduceRight<Provider<unknown>>((p, prefix) => registry([{ prefix, provider: p }]), leaf)
          const listed = await top.toolsForLlm()
          const published = `${prefixes.join('_')}_${tool}`
          expect(namesOf(listed)).toEqual([published])
          await run(top, [call('1', published)])
          expect(recNames(leaf)).toEqual([[tool]])
        },
      ),
    )
  })
})

// -------------------------------------------------------------------------------------
// properties
// -------------------------------------------------------------------------------------

describe('registry: properties', () => {
  const names = fc.oneof(
    fc.constantFrom(
      'fs_read',
      'fs_deep_x',
      'fs_',
      'web-get',
      'web_get',
      'read',
      '__proto__',
      'fs___proto__',
      'constructor',
    ),
    fc.string({ maxLength: 10 }),
  )
  const threeNamespaces = (inner: Provider<string>): Provider<unknown> =>
    registry([
      { prefix: 'fs', provider: inner },
      { prefix: 'fs_deep', provider: inner },
      { prefix: 'web', provider: inner, separator: '-' },
    ])

  it('answers one result per call, in order, whatever the providers do', async () => {
    await fc.assert(answersOnePerCall(threeNamespaces, [decl('read')], names))
  })

  it('fails exactly the calls of a failing provider, and only those', async () => {
    // the model: which provider owns a call, read from its name alone
    const ownerOf = (c: unknown): 'fs' | 'web' | undefined => {
      const name = callNameOf(c)
      if (name === undefined) return undefined
      if (name.startsWith('fs_') && name.length > 3) return 'fs'
      if (name.startsWith('web-') && name.length > 4) return 'web'
      return undefined
    }
    await fc.assert(
      fc.asyncProperty(plainBatchArb(names), innerBehaviourArb, innerBehaviourArb, async (calls, fsDoes, webDoes) => {
        const does = { fs: fsDoes, web: webDoes }
        const inner = { fs: behavingProvider([], () => fsDoes), web: behavingProvider([], () => webDoes) }
        const r = registry([
          { prefix: 'fs', provider: inner.fs },
          { prefix: 'web', provider: inner.web, separator: '-' },
        ])
        const out = await run(r, calls)
        expect(out).toHaveLength(calls.length)
        out.forEach((res, i) => {
          const owner = ownerOf(calls[i])
          if (owner === undefined) {
            expect(res.is_error).toBe(true)
            expect(res.content).toMatch(/^(no tool named|this tool call is malformed)/)
            return
          }
          const tag = owner === 'fs' ? 'fs_' : 'web-'
          switch (does[owner]) {
            case 'ok':
              expect(res.is_error).toBeUndefined()
              break
            case 'left':
            case 'reject':
            case 'throw':
              expect(res.is_error).toBe(true)
              expect(res.content.startsWith(`the tool provider for "${tag}" failed: `)).toBe(true)
              break
            default:
              // short or empty: an answer, or a gap filled for exactly this call
              if (res.is_error === true) expect(res.content).toBe('the tool provider returned no result for this call')
          }
        })
        // each provider got at most one batch, holding exactly its own calls
        for (const owner of ['fs', 'web'] as const) {
          expect(inner[owner].seen.length).toBeLessThanOrEqual(1)
          expect(inner[owner].seen.flat()).toHaveLength(calls.filter((c) => ownerOf(c) === owner).length)
        }
      }),
    )
  })

  it('never mutates the caller’s calls or the providers’ declarations', async () => {
    await fc.assert(
      fc.asyncProperty(batchArb(names), innerBehaviourArb, async (calls, behaviour) => {
        const frozenCalls = deepFreeze(calls)
        const declarations = deepFreeze([decl('read', ['path']), decl('get')])
        const snapshot = JSON.stringify(declarations)
        const r = threeNamespaces(behavingProvider(declarations, () => behaviour))
        await r.toolsForLlm()
        await run(r, frozenCalls)
        expect(JSON.stringify(declarations)).toBe(snapshot)
      }),
    )
  })

  // -- routing: a call to any published name reaches exactly its provider, under the name it listed --

  const alphabetArb = (min: number, max: number): fc.Arbitrary<string> =>
    fc.array(fc.constantFrom('a', 'b', '_', '-'), { minLength: min, maxLength: max }).map((cs) => cs.join(''))

  interface Spec {
    readonly prefix: string
    readonly separator: string
    readonly tools: ReadonlyArray<string>
  }

  const specsArb: fc.Arbitrary<ReadonlyArray<Spec>> = fc
    .uniqueArray(
      fc.record({
        prefix: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('a', 'a_b', 'a_b_c', 'a-b', 'b') },
          { weight: 1, arbitrary: alphabetArb(1, 3) },
        ),
        separator: fc.oneof(
          { weight: 4, arbitrary: fc.constant('_') },
          { weight: 1, arbitrary: fc.constantFrom('-', '__') },
        ),
        tools: fc.uniqueArray(fc.oneof(fc.constantFrom('b', 'b_c', 'c', 'b-c', 'c_d'), alphabetArb(1, 4)), {
          minLength: 1,
          maxLength: 3,
        }),
      }),
      { selector: (s) => s.prefix, minLength: 1, maxLength: 5 },
    )
    .filter((specs) => new Set(specs.map((s) => s.prefix + s.separator)).size === specs.length)

  const routesToOwner = (make: (entries: ReadonlyArray<RegistryEntry>) => Provider<unknown>) =>
    fc.asyncProperty(specsArb, async (specs) => {
      const providers = specs.map((s) => recordingProvider(s.tools.map((t) => decl(t))))
      const r = make(
        specs.map((s, i) => ({ prefix: s.prefix, separator: s.separator, provider: providers[i] as Provider<string> })),
      )
      const listed = await r.toolsForLlm()
      if (listed._tag === 'Left') {
        // only a real nesting collision may refuse the listing
        const e = listed.left as RegistryError
        expect(e._tag).toBe('ToolShadowed')
        if (e._tag === 'ToolShadowed') {
          const by = specs.find((s) => s.prefix === e.shadowedBy)
          expect(by !== undefined && e.published.startsWith(by.prefix + by.separator)).toBe(true)
        }
        return
      }
      const published = listed.right.map((d) => d.function.name)
      // frozen: a router that wrote to the caller's call would lose it here
      await run(r, deepFreeze(published.map((name, i) => call(String(i), name))))
      specs.forEach((s, i) => {
        const got = (providers[i]?.rec.batches ?? []).flat().map((c) => c.function.name)
        expect(got).toEqual(s.tools)
      })
    })

  it('routes every published name to its own provider, under the name it listed', async () => {
    await fc.assert(routesToOwner(registry))
  })

  it('the routing property catches a router that takes the first match, not the longest', async () => {
    // a deliberately broken registry: publishes like the real one, routes by the
    // first registered tag that matches
    const firstMatch = (entries: ReadonlyArray<RegistryEntry>): Provider<unknown> => {
      const tags = entries.map((e) => ({ tag: e.prefix + (e.separator ?? '_'), provider: e.provider }))
      return {
        toolsForLlm: async () => {
          const all: Array<ToolDeclaration> = []
          for (const { tag, provider } of tags) {
            const l = await provider.toolsForLlm()
            if (l._tag === 'Left') return l
            all.push(...l.right.map((d) => ({ ...d, function: { ...d.function, name: tag + d.function.name } })))
          }
          return { _tag: 'Right', right: all }
        },
        executeToolCalls: (calls) => async () => {
          const out: Array<ToolResult> = []
          for (const c of calls) {
            const hit = tags.find((t) => c.function.name.startsWith(t.tag))
            if (hit === undefined) continue
            const r = await hit.provider.executeToolCalls([
              { ...c, function: { ...c.function, name: c.function.name.slice(hit.tag.length) } },
            ])()
            if (r._tag === 'Right') out.push(...r.right)
          }
          return { _tag: 'Right', right: out }
        },
      }
    }
    const out = await fc.check(routesToOwner(firstMatch))
    expect(out.failed).toBe(true)
  })
})

// -------------------------------------------------------------------------------------
// example
// -------------------------------------------------------------------------------------

describe('registry: example', () => {
  it('examples/registry.ts: one namespace, each provider sees its own names, a misrouted call is an error', () => {
    const r = runExample('registry.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('  fs_read: Read a file\n  fs_list: List files\n  web_get: Fetch a URL')
    expect(r.stdout).toContain('  fs  received read({"path":"/todo.txt"})')
    expect(r.stdout).toContain('  web received get({"url":"https://example.com"})')
    expect(r.stdout).toContain('  call_1 ok    ship the registry')
    expect(r.stdout).toContain('  call_3 ERROR no tool named "read"; known prefixes are "fs_", "web_"')
    expect(r.stdout).toContain('  call_4 ok    /notes.txt, /todo.txt')
  })
})
