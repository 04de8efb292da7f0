// The gateway's listed-tools guard, in process: what a session may call, and what curation hides.
import { left, right } from 'fp-ts/lib/Either.js'
import type { Provider, ToolCall } from '../../src/index.js'
import { fromTools } from '../../src/index.js'
import { curated, isServed, newListedNames, onlyListed, recordListed } from '../../src/gateway/listed.js'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'

const tool = (name: string) => ({
  declaration: { type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } },
  run: () => `ran ${name}`,
})
const call = (id: string, name: string): ToolCall => ({ id, function: { name, arguments: '{}' } })

/** A provider of `names` that records every batch it is handed. */
const recording = (names: ReadonlyArray<string>) => {
  const inner = fromTools(names.map(tool))
  const seen: Array<ReadonlyArray<ToolCall>> = []
  const provider: Provider<unknown> = {
    toolsForLlm: inner.toolsForLlm,
    executeToolCalls: (calls) => {
      seen.push(calls)
      return inner.executeToolCalls(calls)
    },
  }
  return { provider, seen }
}

const guarded = (provider: Provider<unknown>) => {
  const names = newListedNames()
  return onlyListed(names)(recordListed(names)(provider))
}

describe('onlyListed over recordListed', () => {
  it('lists first when a session calls before it lists; answers an unknown name itself; sends the rest on, in order', async () => {
    const { provider, seen } = recording(['a', 'b'])
    const out = await guarded(provider).executeToolCalls([call('1', 'a'), call('2', 'nope'), call('3', 'b')])()
    expect(
      out._tag === 'Right' &&
        out.right.map((r) => [r.tool_call_id, r.is_error === true, r.content, r.unknown_tool === true]),
    ).toEqual([
      ['1', false, 'ran a', false],
      ['2', true, 'there is no tool named "nope"; the available tools are "a", "b"', true],
      ['3', false, 'ran b', false],
    ])
    expect(seen.map((b) => b.map((c) => c.id))).toEqual([['1', '3']])
  })

  it("sends the caller's own calls array on when every name is listed", async () => {
    const { provider, seen } = recording(['a'])
    const stack = guarded(provider)
    await stack.toolsForLlm()
    const calls = [call('1', 'a'), call('2', 'a')]
    await stack.executeToolCalls(calls)()
    expect(seen[0]).toBe(calls)
  })

  it('sends every call on while no listing could be made, and a call it cannot read too', async () => {
    const seen: Array<ReadonlyArray<unknown>> = []
    const failing: Provider<string> = {
      toolsForLlm: () => Promise.resolve(left('down')),
      executeToolCalls: (calls) => () => {
        seen.push(calls)
        return Promise.resolve(right(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'x' }))))
      },
    }
    const names = newListedNames()
    const stack = onlyListed(names)(recordListed(names)(failing))
    await stack.executeToolCalls([call('1', 'anything')])()
    expect(seen).toHaveLength(1)
    const { provider, seen: seen2 } = recording(['a'])
    const out = await guarded(provider).executeToolCalls([{ id: '9' } as unknown as ToolCall])()
    expect(seen2).toHaveLength(1)
    expect(out._tag).toBe('Right')
  })

  it('judges by the last successful listing: a tool gone from it is refused, a failed listing keeps the last', async () => {
    let names = ['a', 'b']
    let failing = false
    const inner: Provider<unknown> = {
      toolsForLlm: () => Promise.resolve(failing ? left('down') : right(names.map((n) => tool(n).declaration))),
      executeToolCalls: (calls) => () =>
        Promise.resolve(right(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'ok' })))),
    }
    const stack = guarded(inner)
    await stack.toolsForLlm()
    names = ['a']
    await stack.toolsForLlm()
    failing = true
    await stack.toolsForLlm()
    const out = await stack.executeToolCalls([call('1', 'a'), call('2', 'b')])()
    expect(out._tag === 'Right' && out.right.map((r) => r.is_error === true)).toEqual([false, true])
  })
})

describe('onlyListed, what it asks below', () => {
  it('lists once, for the first batch of a session that has not listed, and not again while a listing is known', async () => {
    const { provider } = recording(['a'])
    let listings = 0
    const counting: Provider<unknown> = {
      ...provider,
      toolsForLlm: () => {
        listings++
        return provider.toolsForLlm()
      },
    }
    const stack = guarded(counting)
    await stack.executeToolCalls([call('1', 'a')])()
    await stack.executeToolCalls([call('2', 'a')])()
    expect(listings).toBe(1)
  })

  it('answers a batch it cannot read (not a list) itself, with no listing and no call below', async () => {
    let asked = 0
    const inner: Provider<unknown> = {
      toolsForLlm: () => {
        asked++
        return Promise.resolve(right([]))
      },
      executeToolCalls: () => () => {
        asked++
        return Promise.resolve(right([]))
      },
    }
    const out = await guarded(inner).executeToolCalls('not a list' as unknown as ReadonlyArray<ToolCall>)()
    expect(out._tag === 'Right' && out.right.map((r) => [r.is_error, r.content])).toEqual([
      [true, expect.stringMatching(/^this batch of tool calls could not be read: .*; no call was run$/)],
    ])
    expect(asked).toBe(0)
  })

  it('names the gateway when the layers below fail the batch', async () => {
    const { provider } = recording(['a'])
    const failing: Provider<unknown> = {
      toolsForLlm: provider.toolsForLlm,
      executeToolCalls: () => () => Promise.resolve(left('down')),
    }
    const out = await guarded(failing).executeToolCalls([call('1', 'a')])()
    expect(out._tag === 'Right' && out.right.map((r) => [r.tool_call_id, r.is_error, r.content])).toEqual([
      ['1', true, 'the gateway failed: down'],
    ])
  })
})

describe('curated', () => {
  // globs as rules read them, written apart: the name itself, a prefix ending in `*`, or `*`
  const globMatches = (glob: string, name: string): boolean =>
    glob.endsWith('*') ? name.slice(0, glob.length - 1) === glob.slice(0, -1) : glob === name

  it('whatever the globs and the name: served when include is absent or any include glob matches, and no exclude glob does', () => {
    const word = fc.stringMatching(/^[ab_]{0,3}$/)
    const glob = fc.oneof(
      word,
      word.map((w) => `${w}*`),
    )
    fc.assert(
      fc.property(
        fc.option(fc.array(glob, { maxLength: 4 }), { nil: undefined }),
        fc.option(fc.array(glob, { maxLength: 4 }), { nil: undefined }),
        word,
        (include, exclude, name) => {
          const expected =
            (include === undefined || include.some((g) => globMatches(g, name))) &&
            !(exclude ?? []).some((g) => globMatches(g, name))
          const curation = {
            ...(include === undefined ? {} : { include }),
            ...(exclude === undefined ? {} : { exclude }),
          }
          expect(isServed(curation)(name)).toBe(expected)
        },
      ),
    )
  })

  it('a listing that fails is passed on as it is', async () => {
    const failed = left('down')
    const listing: Provider<string> = {
      toolsForLlm: () => Promise.resolve(failed),
      executeToolCalls: () => () => Promise.resolve(right([])),
    }
    expect(await curated({ include: ['a'] })(listing).toolsForLlm()).toBe(failed)
  })

  it('serves what include matches (all when absent), less what exclude matches; calls pass through', async () => {
    expect(['read_a', 'read_b', 'write', 'x'].filter(isServed({ include: ['read_*'], exclude: ['read_b'] }))).toEqual([
      'read_a',
    ])
    expect(['a', 'b'].filter(isServed({ exclude: ['*'] }))).toEqual([])
    expect(['a', 'b'].filter(isServed({}))).toEqual(['a', 'b'])
    const { provider, seen } = recording(['read_a', 'write'])
    const c = curated({ include: ['read_*'] })(provider)
    const listed = await c.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right.map((d) => d.function.name)).toEqual(['read_a'])
    await c.executeToolCalls([call('1', 'write')])()
    expect(seen).toHaveLength(1)
  })
})
