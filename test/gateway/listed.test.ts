// The gateway's listed-tools guard, in process: what a session may call, and what curation hides.
import { left, right } from 'fp-ts/lib/Either.js'
import type { Provider, ToolCall } from '../../src/index.js'
import { fromTools } from '../../src/index.js'
import { curated, isServed, newListedNames, onlyListed, recordListed } from '../../src/gateway/listed.js'
import { describe, expect, it } from 'vitest'

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

describe('curated', () => {
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
