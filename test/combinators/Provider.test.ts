import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { AsyncProvider, LocalTool, Provider, ToolCall, ToolResult } from '../../src/index.js'
import {
  fromAsync,
  fromTools,
  isProviderFailure,
  registry,
  toAsync,
  withReasons,
  withUnknownKeyAudit,
} from '../../src/index.js'
import { providerFailure } from '../../src/combinators/Provider.js'
import { assertProvider, isProvider } from '../../src/kernel/model.js'
import { answersOnePerCall, isLazy } from '../laws.js'
import { call, decl, failingProvider, recordingProvider, rejectingProvider } from '../support/fakes.js'
import { runExample } from '../support/examples.js'

const echo: LocalTool = {
  declaration: decl('echo', ['text']),
  run: (a) => TE.right(String(a['text'])),
}

const resultsOf = async (p: Provider<unknown>, calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> => {
  const out = await p.executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error('the batch failed')
  return out.right
}

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

describe('isProvider / assertProvider', () => {
  it('accepts a record of two functions, and nothing less', () => {
    expect(isProvider(fromTools([]))).toBe(true)
    expect(isProvider({ toolsForLlm: () => undefined })).toBe(false)
    expect(isProvider(null)).toBe(false)
    expect(isProvider('provider')).toBe(false)
  })

  it('answers false for an object that throws when read', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom')
        },
      },
    )
    expect(isProvider(hostile)).toBe(false)
  })

  it('names what is missing', () => {
    expect(() => assertProvider('here', { toolsForLlm: () => undefined })).toThrow(
      /here: .*`executeToolCalls` is not a function/,
    )
    expect(() => assertProvider('here', null)).toThrow(/here: .*got null/)
    expect(() => assertProvider('here', fromTools([]))).not.toThrow()
  })
})

// -------------------------------------------------------------------------------------
// fromTools
// -------------------------------------------------------------------------------------

describe('fromTools', () => {
  describe('construction', () => {
    it.each([
      [undefined, /expected an array/],
      [{}, /expected an array.*got an object/],
      [[null], /tools\[0\] must be an object/],
      [[{ run: () => TE.right('') }], /tools\[0\]\.declaration has no readable name/],
      [[{ declaration: { type: 'function', function: { name: 7 } }, run: () => TE.right('') }], /no readable name/],
      [[{ declaration: { type: 'function', function: { name: '' } }, run: () => TE.right('') }], /no readable name/],
      [
        [{ declaration: decl('a'), run: 'not a function' }],
        /tools\[0\]\.run \(tool "a"\) must be a function, got the string/,
      ],
      [[echo, { declaration: decl('b') }], /tools\[1\]\.run \(tool "b"\) must be a function, got undefined/],
      [[echo, { declaration: decl('b'), run: echo.run }, echo], /tools\[0\] and tools\[2\] are both named "echo"/],
    ])('refuses %j with a TypeError', (tools, message) => {
      expect(() => fromTools(tools as unknown as ReadonlyArray<LocalTool>)).toThrow(TypeError)
      expect(() => fromTools(tools as unknown as ReadonlyArray<LocalTool>)).toThrow(message)
    })

    it('refuses an entry that throws when read', () => {
      const hostile = Object.defineProperty({}, 'declaration', {
        get: () => {
          throw new Error('boom')
        },
        enumerable: true,
      })
      expect(() => fromTools([hostile as LocalTool])).toThrow(/tools\[0\] cannot be read: boom/)
    })

    it('treats `__proto__` as an ordinary tool name', async () => {
      const p = fromTools([{ declaration: decl('__proto__'), run: () => TE.right('proto') }])
      expect(await resultsOf(p, [call('1', '__proto__'), call('2', 'constructor')])).toEqual([
        { role: 'tool', tool_call_id: '1', content: 'proto' },
        expect.objectContaining({
          tool_call_id: '2',
          is_error: true,
          content: expect.stringMatching(/no tool named "constructor"/),
        }),
      ])
    })
  })

  describe('listing', () => {
    it('lists the very same declaration objects, in order', async () => {
      const a = decl('a')
      const b = decl('b')
      const out = await fromTools([
        { declaration: a, run: echo.run },
        { declaration: b, run: echo.run },
      ]).toolsForLlm()
      expect(out._tag).toBe('Right')
      if (out._tag === 'Right') {
        expect(out.right).toHaveLength(2)
        expect(out.right[0]).toBe(a)
        expect(out.right[1]).toBe(b)
      }
    })

    it('is not changed by mutating the array it was built from', async () => {
      const tools: Array<LocalTool> = [echo]
      const p = fromTools(tools)
      tools.push({ declaration: decl('late'), run: echo.run })
      const out = await p.toolsForLlm()
      expect(out._tag === 'Right' && out.right.map((d) => d.function.name)).toEqual(['echo'])
    })
  })

  describe('calls', () => {
    it('runs with the parsed arguments and the call', async () => {
      const seen: Array<unknown> = []
      const c = call('1', 'echo', { text: 'hi' })
      const p = fromTools([
        {
          declaration: decl('echo'),
          run: (a, cl) => {
            seen.push(a, cl)
            return TE.right('ok')
          },
        },
      ])
      expect(await resultsOf(p, [c])).toEqual([{ role: 'tool', tool_call_id: '1', content: 'ok' }])
      expect(seen).toEqual([{ text: 'hi' }, c])
      expect(seen[1]).toBe(c)
    })

    it('hands an object the caller already parsed as the very same object', async () => {
      const args = { text: 'hi' }
      let got: unknown
      const p = fromTools([
        {
          declaration: decl('echo'),
          run: (a) => {
            got = a
            return TE.right('ok')
          },
        },
      ])
      await resultsOf(p, [call('1', 'echo', args, true)])
      expect(got).toBe(args)
    })

    it.each([[''], ['  '], [undefined], [null]])('reads absent or empty arguments %j as {}', async (raw) => {
      let got: unknown
      const p = fromTools([
        {
          declaration: decl('noop'),
          run: (a) => {
            got = a
            return TE.right('done')
          },
        },
      ])
      expect(await resultsOf(p, [call('1', 'noop', raw, true)])).toEqual([
        { role: 'tool', tool_call_id: '1', content: 'done' },
      ])
      expect(got).toEqual({})
    })

    it.each([
      ['[1,2]', /tool "echo" was not run: the arguments must be a JSON object, but they are an array/],
      ['{', /tool "echo" was not run: the arguments are not valid JSON/],
      ['42', /must be a JSON object, but they are a number/],
    ])('answers arguments %j with an is_error result and does not run', async (raw, message) => {
      let ran = 0
      const p = fromTools([
        {
          declaration: decl('echo'),
          run: () => {
            ran++
            return TE.right('')
          },
        },
      ])
      const [r] = await resultsOf(p, [call('1', 'echo', raw, true)])
      expect(r).toEqual({ role: 'tool', tool_call_id: '1', is_error: true, content: expect.stringMatching(message) })
      expect(ran).toBe(0)
    })

    it('answers an unknown tool by naming what exists', async () => {
      const [r] = await resultsOf(fromTools([echo]), [call('1', 'ehco')])
      expect(r).toEqual({
        role: 'tool',
        tool_call_id: '1',
        is_error: true,
        content: 'there is no tool named "ehco"; the available tools are "echo"',
      })
      const [none] = await resultsOf(fromTools([]), [call('2', 'x')])
      expect(none?.content).toBe('there is no tool named "x"; no tools are available')
    })

    it('names at most 30 of the tools that exist, and says when there are more', async () => {
      const tools = (n: number) =>
        fromTools(Array.from({ length: n }, (_, i) => ({ declaration: decl(`t${i}`), run: () => TE.right('') })))
      const names = (n: number) => Array.from({ length: n }, (_, i) => `"t${i}"`).join(', ')
      const [thirty] = await resultsOf(tools(30), [call('1', 'x')])
      expect(thirty?.content).toBe(`there is no tool named "x"; the available tools are ${names(30)}`)
      const [more] = await resultsOf(tools(31), [call('1', 'x')])
      expect(more?.content).toBe(`there is no tool named "x"; the available tools are ${names(30)}, …`)
    })

    it('answers a malformed call', async () => {
      const [r] = await resultsOf(fromTools([echo]), [{ id: 'm', function: {} } as unknown as ToolCall])
      expect(r).toEqual({
        role: 'tool',
        tool_call_id: 'm',
        is_error: true,
        content: expect.stringMatching(/malformed.*no function name/),
      })
    })

    it('turns a Left into an is_error result with exactly that text', async () => {
      const p = fromTools([{ declaration: decl('fail'), run: () => TE.left('the file does not exist') }])
      expect(await resultsOf(p, [call('1', 'fail')])).toEqual([
        { role: 'tool', tool_call_id: '1', content: 'the file does not exist', is_error: true },
      ])
    })

    it('accepts a ToolOutcome with structured content or a reported error', async () => {
      const p = fromTools([
        { declaration: decl('s'), run: () => TE.right({ content: '3', structured_content: { n: 3 } }) },
        { declaration: decl('e'), run: () => TE.right({ content: 'nope', is_error: true }) },
      ])
      expect(await resultsOf(p, [call('1', 's'), call('2', 'e')])).toEqual([
        { role: 'tool', tool_call_id: '1', content: '3', structured_content: { n: 3 } },
        { role: 'tool', tool_call_id: '2', content: 'nope', is_error: true },
      ])
    })

    it.each<[string, LocalTool['run'], RegExp]>([
      [
        'throws',
        () => {
          throw new Error('disk on fire')
        },
        /^tool "t" failed: disk on fire$/,
      ],
      ['rejects', () => () => Promise.reject(new Error('timeout')), /^tool "t" failed: timeout$/],
      [
        'returns a number',
        () => 42 as unknown as TE.TaskEither<string, string>,
        /failed: its implementation returned number 42, not a text or \{ content \}/,
      ],
      [
        'resolves a number',
        () => () => Promise.resolve(42) as never,
        /failed: its implementation returned number 42, not a text or \{ content \}/,
      ],
      [
        'is async and throws',
        async () => {
          throw new Error('disk full')
        },
        /^tool "t" failed: disk full$/,
      ],
      [
        'returns a Promise that resolves a Left',
        () => Promise.resolve({ _tag: 'Left', left: 'no such file' }),
        /^no such file$/,
      ],
      [
        'resolves a Right of garbage',
        () => TE.right(7 as unknown as string),
        /failed: its implementation returned number 7, not a text/,
      ],
    ])('answers a run that %s with one is_error result, and runs the rest', async (_, run, message) => {
      const p = fromTools([{ declaration: decl('t'), run }, echo])
      const out = await p.executeToolCalls([call('1', 't'), call('2', 'echo', { text: 'after' })])()
      expect(out._tag).toBe('Right')
      if (out._tag !== 'Right') return
      expect(out.right[0]).toEqual({
        role: 'tool',
        tool_call_id: '1',
        is_error: true,
        content: expect.stringMatching(message),
      })
      expect(out.right[1]).toEqual({ role: 'tool', tool_call_id: '2', content: 'after' })
    })

    it.each([
      ['a TaskEither', () => TE.right('done')],
      ['a Promise (an async run)', async () => 'done'],
      ['a Promise of an Either', async () => ({ _tag: 'Right', right: 'done' }) as const],
      ['the output itself', () => 'done'],
      ['an outcome, itself', () => ({ content: 'done' })],
    ])('takes an output given as %s', async (_, run) => {
      const p = fromTools([{ declaration: decl('t'), run: run as LocalTool['run'] }])
      expect(await resultsOf(p, [call('1', 't')])).toEqual([{ role: 'tool', tool_call_id: '1', content: 'done' }])
    })

    it('describes a Left that is not a string', async () => {
      const p = fromTools([{ declaration: decl('t'), run: () => TE.left(new Error('odd') as unknown as string) }])
      expect((await resultsOf(p, [call('1', 't')]))[0]?.content).toBe('odd')
    })

    it('runs calls one at a time, in the model order', async () => {
      const events: Array<string> = []
      const slow: LocalTool = {
        declaration: decl('slow'),
        run: (a) => async () => {
          events.push(`start ${String(a['n'])}`)
          await new Promise((r) => setTimeout(r, 5))
          events.push(`end ${String(a['n'])}`)
          return { _tag: 'Right', right: String(a['n']) }
        },
      }
      await resultsOf(fromTools([slow]), [call('1', 'slow', { n: 1 }), call('2', 'slow', { n: 2 })])
      expect(events).toEqual(['start 1', 'end 1', 'start 2', 'end 2'])
    })

    it('answers an empty batch with no results', async () => {
      expect(await resultsOf(fromTools([echo]), [])).toEqual([])
    })
  })

  describe('laws', () => {
    const chaos: ReadonlyArray<LocalTool> = [
      echo,
      { declaration: decl('fs_read', ['path']), run: () => TE.left('no such file') },
      {
        declaration: decl('fs_write'),
        run: () => {
          throw new Error('boom')
        },
      },
      { declaration: decl('web_get'), run: () => () => Promise.reject(new Error('offline')) },
    ]

    it('answers one result per call, in order, whatever the calls', async () => {
      await fc.assert(
        answersOnePerCall(
          () => fromTools(chaos),
          [],
          fc.constantFrom('echo', 'fs_read', 'fs_write', 'web_get', 'nope', '__proto__'),
        ),
      )
    })

    it('is lazy: building a batch runs nothing', async () => {
      let ran = 0
      const p = fromTools([
        {
          declaration: decl('t'),
          run: () => {
            ran++
            return TE.right('')
          },
        },
      ])
      const task = p.executeToolCalls([call('1', 't')])
      expect(ran).toBe(0)
      await task()
      expect(ran).toBe(1)
    })
  })
})

// -------------------------------------------------------------------------------------
// fromAsync / toAsync
// -------------------------------------------------------------------------------------

describe('fromAsync', () => {
  it.each([
    [null, /fromAsync: expected \{ toolsForLlm.*got null/],
    [{ toolsForLlm: async () => [] }, /`executeToolCalls` is not a function/],
    [{}, /`toolsForLlm` is not a function and `executeToolCalls` is not a function/],
  ])('refuses %j with a TypeError', (u, message) => {
    expect(() => fromAsync(u as unknown as AsyncProvider)).toThrow(TypeError)
    expect(() => fromAsync(u as unknown as AsyncProvider)).toThrow(message)
  })

  it('resolves to a Right with the very same values', async () => {
    const listing = [decl('a')]
    const results: ReadonlyArray<ToolResult> = [{ role: 'tool', tool_call_id: '1', content: 'x' }]
    const p = fromAsync({ toolsForLlm: async () => listing, executeToolCalls: async () => results })
    const listed = await p.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right).toBe(listing)
    const out = await p.executeToolCalls([call('1', 'a')])()
    expect(out._tag === 'Right' && out.right).toBe(results)
  })

  it('turns a rejection and a throw into a Left holding the very reason', async () => {
    const reason = new Error('offline')
    const p = fromAsync({
      toolsForLlm: () => Promise.reject(reason),
      executeToolCalls: () => {
        throw reason
      },
    })
    expect(await p.toolsForLlm()).toEqual({ _tag: 'Left', left: reason })
    const out = await p.executeToolCalls([])()
    expect(out._tag === 'Left' && out.left).toBe(reason)
  })

  it('calls the functions as methods, so a class instance works', async () => {
    class Host {
      private readonly names = ['a']
      toolsForLlm(): Promise<ReadonlyArray<ReturnType<typeof decl>>> {
        return Promise.resolve(this.names.map((n) => decl(n)))
      }
      executeToolCalls(calls: ReadonlyArray<ToolCall>): Promise<ReadonlyArray<ToolResult>> {
        return Promise.resolve(calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: this.names.join() })))
      }
    }
    const p = fromAsync(new Host())
    const listed = await p.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right.map((d) => d.function.name)).toEqual(['a'])
    expect(await resultsOf(p, [call('1', 'a')])).toEqual([{ role: 'tool', tool_call_id: '1', content: 'a' }])
  })

  it('is lazy: nothing is called until a task runs', async () => {
    await isLazy((inner) => fromAsync(toAsync(inner)), [call('1', 'a')])
  })

  it('fails a listing as the inner provider did: a Left as it came, a rejection as a Left holding its reason', async () => {
    const reason = new Error('cannot list')
    const viaLeft = fromAsync(toAsync(failingProvider('no listing')))
    expect(await viaLeft.toolsForLlm()).toEqual({ _tag: 'Left', left: 'no listing' })
    const viaReject = fromAsync(toAsync(rejectingProvider(reason)))
    const out = await viaReject.toolsForLlm()
    expect(out._tag === 'Left' && out.left).toBe(reason)
  })
})

describe('fromAsync: an fp-ts provider handed over', () => {
  it('refuses a provider toolstack made (it offers executeBatch) at construction, by name', () => {
    const message =
      'fromAsync: this is already a toolstack provider (it offers executeBatch, and its functions return tasks, not Promises); use it directly, without fromAsync'
    expect(() => fromAsync(fromTools([]) as never)).toThrow(new TypeError(message))
    expect(() => fromAsync(withReasons()(fromTools([])) as never)).toThrow(new TypeError(message))
  })

  it('a hand-written one: its listing and its batches are Lefts that say so, not Right(Right(…))', async () => {
    const p = fromAsync(recordingProvider([decl('a')]) as never)
    const listed = await p.toolsForLlm()
    expect(listed._tag).toBe('Left')
    const listingError = (listed as { readonly left: unknown }).left
    expect(listingError).toBeInstanceOf(TypeError)
    expect((listingError as Error).message).toBe(
      'fromAsync: toolsForLlm returned an Either, not a Promise of the value: this is already a toolstack provider; use it directly, without fromAsync',
    )
    const out = await p.executeToolCalls([call('1', 'a')])()
    expect(out._tag).toBe('Left')
    const batchError = (out as { readonly left: unknown }).left
    expect(batchError).toBeInstanceOf(TypeError)
    expect((batchError as Error).message).toBe(
      'fromAsync: executeToolCalls returned a function (a task), not a Promise of the value: this is already a toolstack provider; use it directly, without fromAsync',
    )
  })

  it('a Promise of an Either from executeToolCalls is refused the same way', async () => {
    const inner = recordingProvider([decl('a')])
    const p = fromAsync({
      toolsForLlm: async () => [],
      executeToolCalls: (calls: ReadonlyArray<ToolCall>) => inner.executeToolCalls(calls)(),
    } as never)
    const out = await p.executeToolCalls([call('1', 'a')])()
    expect(out._tag === 'Left' && (out.left as Error).message).toMatch(
      /^fromAsync: executeToolCalls returned an Either, not a Promise of the value/,
    )
  })
})

describe('toAsync', () => {
  it('what it makes is refused by a combinator at construction, naming fromAsync', () => {
    const host = toAsync(fromTools([]))
    expect(() => withUnknownKeyAudit()(host as never)).toThrow(TypeError)
    expect(() => withUnknownKeyAudit()(host as never)).toThrow(
      /^withUnknownKeyAudit: this provider's executeToolCalls is an async function.*fromAsync\(provider\)$/,
    )
    expect(() => withReasons()(host as never)).toThrow(/^withReasons: .*fromAsync/)
    expect(() => registry([{ prefix: 'fs', provider: host as never }])).toThrow(/fromAsync/)
    expect(() => toAsync(host as never)).toThrow(/^toAsync: .*fromAsync/)
  })

  it('refuses a non-provider with a TypeError', () => {
    expect(() => toAsync({} as Provider<never>)).toThrow(/toAsync: expected a provider/)
  })

  it('resolves with the very values of a Right', async () => {
    const declarations = [decl('a')]
    const inner = recordingProvider(declarations)
    const host = toAsync(inner)
    expect(await host.toolsForLlm()).toBe(declarations)
    const calls = [call('1', 'a')]
    expect(await host.executeToolCalls(calls)).toBe(inner.rec.results[0])
    expect(inner.rec.batches[0]).toBe(calls)
  })

  it('rejects a Left with a ProviderFailure that keeps the left', async () => {
    const left = { code: 503 }
    const host = toAsync(failingProvider(left))
    const e: unknown = await host.executeToolCalls([]).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(Error)
    expect(isProviderFailure(e)).toBe(true)
    if (!isProviderFailure(e)) return
    expect(e.name).toBe('ProviderFailure')
    expect(e.left).toBe(left)
    expect(e.cause).toBe(left)
    expect(e.message).toBe('the tool provider failed: {"code":503}')
    await expect(host.toolsForLlm()).rejects.toSatisfy(isProviderFailure)
  })

  it('rejects with the very reason when the provider rejects or throws', async () => {
    const reason = new Error('gone')
    await expect(toAsync(rejectingProvider(reason)).executeToolCalls([])).rejects.toBe(reason)
    const throwing: Provider<never> = {
      toolsForLlm: () => {
        throw reason
      },
      executeToolCalls: () => {
        throw reason
      },
    }
    await expect(toAsync(throwing).toolsForLlm()).rejects.toBe(reason)
    await expect(toAsync(throwing).executeToolCalls([])).rejects.toBe(reason)
  })

  it('round-trips: fromAsync(toAsync(p)) answers exactly as p does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue().map((left) => ({ ok: false as const, left })),
          fc.constant({ ok: true as const }),
        ),
        async (v) => {
          const results: ReadonlyArray<ToolResult> = [{ role: 'tool', tool_call_id: '1', content: 'x' }]
          const p: Provider<unknown> = {
            toolsForLlm: v.ok ? TE.right([]) : TE.left(v.left),
            executeToolCalls: () => (v.ok ? TE.right(results) : TE.left(v.left)),
          }
          const back = fromAsync(toAsync(p))
          expect(await back.executeToolCalls([])()).toStrictEqual(await p.executeToolCalls([])())
          expect(await back.toolsForLlm()).toStrictEqual(await p.toolsForLlm())
        },
      ),
    )
  })

  it('isProviderFailure tells a ProviderFailure from other errors', () => {
    expect(isProviderFailure(providerFailure('x'))).toBe(true)
    expect(isProviderFailure(Object.assign(new Error('x'), { name: 'ProviderFailure', left: 'x' }))).toBe(false)
    expect(isProviderFailure('x')).toBe(false)
  })
})

describe('fromTools, strictly', () => {
  const tagged = { _tag: 'Left', left: 'not an Either' }
  const fnWith = <A extends object>(members: A) => Object.assign(() => 0, members)

  it('names itself in every construction error', () => {
    expect(() => fromTools(undefined as unknown as ReadonlyArray<LocalTool>)).toThrow(
      new TypeError('fromTools: expected an array of { declaration, run }, got undefined'),
    )
  })

  it('refuses an entry that is no object, a function carrying both members included', () => {
    for (const [entry, got] of [
      [5, 'number 5'],
      [fnWith({ declaration: decl('f'), run: echo.run }), 'a function of 0 parameters'],
    ] as const) {
      expect(() => fromTools([entry as unknown as LocalTool])).toThrow(
        new TypeError(`fromTools: tools[0] must be an object { declaration, run }, got ${got}`),
      )
    }
  })

  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['a function tagged like an Either', fnWith(tagged), 'a function of 0 parameters'],
    ['a function with content', fnWith({ content: 'x' }), 'a function of 0 parameters'],
    ['an object without content', { text: 'x' }, 'an object'],
  ])('refuses an output that is %s, naming it', async (_, output, got) => {
    const p = fromTools([{ declaration: decl('t'), run: () => TE.right(output as string) }])
    expect(await resultsOf(p, [call('1', 't')])).toEqual([
      {
        role: 'tool',
        tool_call_id: '1',
        is_error: true,
        content: `tool "t" failed: its implementation returned ${got}, not a text or { content }`,
      },
    ])
  })

  it('adds no structured_content key to an outcome that has none', async () => {
    const p = fromTools([{ declaration: decl('t'), run: () => TE.right({ content: 'x' }) }])
    const [r] = await resultsOf(p, [call('1', 't')])
    expect(Object.keys(r ?? {})).toEqual(['role', 'tool_call_id', 'content'])
  })

  it('answers a call whose arguments cannot be read from the batch, and runs the rest', async () => {
    const p = fromTools([echo])
    const calls = [call('1', 'echo', { text: 'a' }), call('2', 'echo', { text: 'b' })]
    const batch = {
      calls,
      argsAt: (i: number) => {
        if (i === 0) throw new Error('boom')
        return { _tag: 'Right', right: { text: 'b' } } as const
      },
    }
    const out = await p.executeBatch(batch)()
    expect(out).toEqual({
      _tag: 'Right',
      right: [
        { role: 'tool', tool_call_id: '1', is_error: true, content: 'this tool call could not be run: boom' },
        { role: 'tool', tool_call_id: '2', content: 'b' },
      ],
    })
  })
})

describe('fromAsync, strictly', () => {
  it.each<[unknown, string]>([
    [null, 'null'],
    [1, 'number 1'],
    [[], 'an array'],
  ])('refuses %j, saying what it got', (u, got) => {
    expect(() => fromAsync(u as AsyncProvider)).toThrow(
      new TypeError(
        `fromAsync: expected { toolsForLlm: () => Promise, executeToolCalls: (calls) => Promise }, got ${got}`,
      ),
    )
  })
})

describe('providerFailure, strictly', () => {
  it('shows its left among its own enumerable keys', () => {
    expect(Object.keys(providerFailure('x'))).toContain('left')
  })

  it('isProviderFailure answers false for an error that throws when read', () => {
    const hostile = new Proxy(providerFailure('x'), {
      get: () => {
        throw new Error('boom')
      },
    })
    expect(isProviderFailure(hostile)).toBe(false)
  })
})

// -------------------------------------------------------------------------------------
// example
// -------------------------------------------------------------------------------------

describe('examples/from-tools.ts', () => {
  it('runs and shows the bridge both ways', () => {
    const r = runExample('from-tools.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/listed: add, shout/)
    expect(r.stdout).toMatch(/add → 5/)
    expect(r.stdout).toMatch(/\(audit\) shout: undeclared volume/)
    expect(r.stdout).toMatch(/error.*no tool named "subtract"/)
    expect(r.stdout).toMatch(/rejected with ProviderFailure.*left: "legacy host is down"/)
  })
})
