// What became of each call, in process: the gateway's order of layers over a plain provider, each call's
// outcome told once, in order, with the results passed through as they are.
import { pipe } from 'fp-ts/lib/function.js'
import { left } from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { LocalTool, Provider, ToolCall } from '../../src/index.js'
import { fromTools, withPolicy } from '../../src/index.js'
import { newListedNames, onlyListed, recordListed } from '../../src/gateway/listed.js'
import type { ObservedCall } from '../../src/gateway/observed.js'
import { markReached, newReached, observeCalls } from '../../src/gateway/observed.js'

const tool = (name: string, run: LocalTool['run']): LocalTool => ({
  declaration: { type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } },
  run,
})
const call = (id: string, name: string): ToolCall => ({ id, function: { name, arguments: '{}' } })

const upstream = fromTools([
  tool('read', () => 'read it'),
  tool('fail', () => Promise.reject(new Error('disk on fire'))),
  tool('move', () => 'moved'),
])

/** The gateway's stack over `provider`, as `startGateway` builds it, minus the audit. */
const observed = (provider: Provider<unknown>, onCall: (c: ObservedCall) => void) => {
  const listed = newListedNames()
  const reached = newReached()
  return pipe(
    provider,
    recordListed(listed),
    markReached(reached),
    withPolicy({
      rules: [
        { tool: 'move', decision: 'deny' },
        { tool: '*', decision: 'allow' },
      ],
    }),
    onlyListed(listed),
    observeCalls(listed, reached, onCall),
  )
}

describe('observeCalls over markReached', () => {
  it("tells each call's outcome, in order: ok, the upstream's error, refused by a rule, refused as not listed", async () => {
    const told: Array<ObservedCall> = []
    const out = await observed(upstream, (c) => told.push(c)).executeToolCalls([
      call('1', 'read'),
      call('2', 'fail'),
      call('3', 'move'),
      call('4', 'nope'),
    ])()
    expect(out._tag === 'Right' && out.right.map((r) => r.is_error === true)).toEqual([false, true, true, true])
    expect(told.map(({ tool, listed, id, outcome }) => [tool, listed, id, outcome])).toEqual([
      ['read', true, '1', 'ok'],
      ['fail', true, '2', 'error'],
      ['move', true, '3', 'refused'],
      ['nope', false, '4', 'refused'],
    ])
    expect(told.every((c) => c.ms >= 0 && c.ms === told[0]?.ms)).toBe(true)
  })

  it('passes the results through as they are (the same array), and a throwing onCall changes nothing', async () => {
    const listed = newListedNames()
    const reached = newReached()
    const results = [{ role: 'tool' as const, tool_call_id: '1', content: 'x' }]
    const inner: Provider<unknown> = {
      toolsForLlm: upstream.toolsForLlm,
      executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: results }),
    }
    const stack = pipe(
      inner,
      markReached(reached),
      observeCalls(listed, reached, () => {
        throw new Error('a broken counter')
      }),
    )
    const out = await stack.executeToolCalls([call('1', 'read')])()
    expect(out._tag === 'Right' && out.right).toBe(results)
    expect(reached.has(results[0] as (typeof results)[0])).toBe(true)
  })

  it('a Left from below is an error for every call, and passes through as it is', async () => {
    const told: Array<ObservedCall> = []
    const failing: Provider<string> = {
      toolsForLlm: () => Promise.resolve(left('down')),
      executeToolCalls: () => () => Promise.resolve(left('down')),
    }
    const listed = newListedNames()
    const reached = newReached()
    const out = await pipe(
      failing,
      markReached(reached),
      observeCalls(listed, reached, (c) => told.push(c)),
    ).executeToolCalls([call('1', 'a'), call('2', 'b')])()
    expect(out).toStrictEqual(left('down'))
    expect(told.map((c) => [c.tool, c.listed, c.outcome])).toEqual([
      ['a', false, 'error'],
      ['b', false, 'error'],
    ])
  })

  it("marks only the object results of markReached's own executeToolCalls: a provider's garbage is refused, never ok, and never throws", async () => {
    const reached = newReached()
    const good = { role: 'tool' as const, tool_call_id: '1', content: 'x' }
    const garbage: Provider<never> = {
      toolsForLlm: upstream.toolsForLlm as Provider<never>['toolsForLlm'],
      executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: [good, null, 'x'] as never }),
    }
    const out = await markReached(reached)(garbage).executeToolCalls([call('1', 'a'), call('2', 'b'), call('3', 'c')])()
    expect(out._tag === 'Right' && out.right[0]).toBe(good)
    expect(reached.has(good)).toBe(true)
    const told: Array<ObservedCall> = []
    await observeCalls(newListedNames(), reached, (c) => told.push(c))(markReached(reached)(garbage)).executeToolCalls([
      call('1', 'a'),
      call('2', 'b'),
      call('3', 'c'),
    ])()
    expect(told.map((c) => c.outcome)).toEqual(['ok', 'refused', 'refused'])
  })

  it('times each batch in milliseconds; a call without a name is told with the empty name', async () => {
    const told: Array<ObservedCall> = []
    const slow: Provider<never> = {
      toolsForLlm: upstream.toolsForLlm as Provider<never>['toolsForLlm'],
      executeToolCalls: (calls) => async () => {
        await new Promise((r) => setTimeout(r, 20))
        return { _tag: 'Right', right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' })) }
      },
    }
    const reached = newReached()
    await observeCalls(newListedNames(), reached, (c) => told.push(c))(markReached(reached)(slow)).executeToolCalls([
      { id: '1', function: { arguments: '{}' } } as unknown as ToolCall,
    ])()
    const ms = told[0]?.ms ?? NaN
    expect(ms).toBeGreaterThanOrEqual(15)
    expect(ms).toBeLessThan(5_000)
    expect(told[0]?.tool).toBe('')
  })

  it('tells nothing of a batch it cannot read (not a list), and passes the answer from below through', async () => {
    const told: Array<ObservedCall> = []
    const answer = { _tag: 'Right' as const, right: [] }
    const inner: Provider<never> = {
      toolsForLlm: upstream.toolsForLlm as Provider<never>['toolsForLlm'],
      executeToolCalls: () => () => Promise.resolve(answer),
    }
    const reached = newReached()
    const out = await observeCalls(newListedNames(), reached, (c) => told.push(c))(
      markReached(reached)(inner),
    ).executeToolCalls('not a list' as unknown as ReadonlyArray<ToolCall>)()
    expect(out).toBe(answer)
    expect(told).toEqual([])
  })
})
