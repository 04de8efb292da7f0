// What can be sent to a host: a result nested deeper than a JSON writer can go is answered with an error, in its
// place; every other result passes as the same object. In process, with toMcpServer and a real SDK Client.
import { right } from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { fc } from '@fast-check/vitest'
import type { Provider, ToolResult } from '../../src/index.js'
import { MAX_RESULT_DEPTH, answerSendable, toMcpServer, unsendable } from '../../src/mcp/index.js'
import { linked } from './fixtures.js'

// a value `depth` levels deep (objects and arrays, as `shape` says at each level), with a leaf at the bottom
const nestedOf = (depth: number, shape: ReadonlyArray<boolean>): unknown => {
  let v: unknown = 1
  for (let i = depth; i > 0; i--) v = shape[i % shape.length] === true ? [0, v] : { k: 'x', v }
  return v
}

const result = (structured: unknown): ToolResult => ({
  role: 'tool',
  tool_call_id: 'c1',
  content: 'x',
  structured_content: structured as Record<string, unknown>,
})

describe('unsendable', () => {
  it('whatever the nesting, a result is refused exactly when it is deeper than MAX_RESULT_DEPTH', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 * MAX_RESULT_DEPTH }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        (depth, shape) => {
          // the oracle is the depth the value was built with; the outer structured content is an object
          const r = result({ wrap: nestedOf(depth - 1, shape) })
          expect(unsendable(r) !== undefined).toBe(depth > MAX_RESULT_DEPTH)
        },
      ),
    )
  })

  it("measures a result far deeper than the process's stack without overflowing it, in the blocks too", () => {
    expect(unsendable(result({ a: nestedOf(200_000, [false]) }))).toMatch(/nested more than 1000 levels deep/)
    const blocks: ToolResult = {
      role: 'tool',
      tool_call_id: 'c',
      content: 'x',
      mcp_content: [{ type: 'text', text: 'x', _meta: nestedOf(5000, [true]) as Record<string, unknown> }],
    }
    expect(unsendable(blocks)).toBeDefined()
  })
})

describe('answerSendable, and toMcpServer', () => {
  const deep = result({ a: nestedOf(8000, [false]) })
  const shallow = result({ a: 1 })
  const provider: Provider<never> = {
    toolsForLlm: () =>
      Promise.resolve(
        right(['t', 'deep'].map((name) => ({ type: 'function' as const, function: { name, parameters: {} } }))),
      ),
    executeToolCalls: (calls) => () =>
      Promise.resolve(
        right(calls.map((c) => ({ ...(c.function.name === 'deep' ? deep : shallow), tool_call_id: c.id }))),
      ),
  }

  it('answers a result too deep with an is_error result in its place; the others pass as they came', async () => {
    const out = await answerSendable(provider).executeToolCalls([
      { id: 'deep', function: { name: 'deep', arguments: '{}' } },
      { id: 'ok', function: { name: 't', arguments: '{}' } },
    ])()
    expect(out._tag).toBe('Right')
    const [first, second] = out._tag === 'Right' ? out.right : []
    expect(first).toEqual({
      role: 'tool',
      tool_call_id: 'deep',
      content: expect.stringContaining('could not be sent'),
      is_error: true,
    })
    expect(second?.structured_content).toEqual({ a: 1 })
  })

  it('a host of toMcpServer gets an error result, not silence', async () => {
    const { client, close } = await linked(toMcpServer(provider, { name: 't', version: '1' }))
    try {
      await client.listTools()
      const answer = await client.callTool({ name: 'deep', arguments: {} }, undefined, { timeout: 10_000 })
      expect(answer).toEqual({
        content: [{ type: 'text', text: expect.stringContaining('could not be sent') }],
        isError: true,
      })
      expect((await client.callTool({ name: 't', arguments: {} })).structuredContent).toEqual({ a: 1 })
    } finally {
      await close()
    }
  })
})

describe('answerSendable, what passes as it came', () => {
  const sendable: ToolResult = { role: 'tool', tool_call_id: 'a', content: 'x', structured_content: { a: [1] } }

  it('a batch with nothing to answer is the provider’s own Either; a Left the same; the listing the provider’s', async () => {
    const answered = right([sendable, 'not a result' as unknown as ToolResult])
    const failed = { _tag: 'Left' as const, left: 'down' }
    const calls = [{ id: 'a', function: { name: 't', arguments: '{}' } }]
    const toolsForLlm = () => Promise.resolve(right([]))
    const ok: Provider<string> = { toolsForLlm, executeToolCalls: () => () => Promise.resolve(answered) }
    const down: Provider<string> = { toolsForLlm, executeToolCalls: () => () => Promise.resolve(failed) }
    expect(await answerSendable(ok).executeToolCalls(calls)()).toBe(answered)
    expect(await answerSendable(down).executeToolCalls(calls)()).toBe(failed)
    expect(answerSendable(ok).toolsForLlm).toBe(toolsForLlm)
  })

  it('a too deep result among others: only it is answered, in its place, through executeBatch too', async () => {
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < MAX_RESULT_DEPTH + 5; i++) deep = { a: deep }
    const tooDeep: ToolResult = {
      role: 'tool',
      tool_call_id: 'd',
      content: 'x',
      mcp_content: [{ type: 'text', text: 'x', _meta: deep }],
    }
    const provider: Provider<never> = {
      toolsForLlm: () => Promise.resolve(right([])),
      executeToolCalls: () => () => Promise.resolve(right([sendable, tooDeep, sendable])),
    }
    const calls = [1, 2, 3].map((i) => ({ id: `c${i}`, function: { name: 't', arguments: '{}' } }))
    const out = await answerSendable(provider).executeBatch({
      calls,
      argsAt: () => ({ _tag: 'Right', right: {} }) as never,
    })()
    const [first, second, third] = out._tag === 'Right' ? out.right : []
    expect(first).toBe(sendable)
    expect(third).toBe(sendable)
    expect(second).toEqual({
      role: 'tool',
      tool_call_id: 'd',
      content: `the tool ran, but its result could not be sent to the host: it is nested more than ${MAX_RESULT_DEPTH} levels deep`,
      is_error: true,
    })
  })

  it('a result with no blocks and no structured content, or null ones, is sendable', () => {
    expect(unsendable({ role: 'tool', tool_call_id: 'a', content: 'x' })).toBe(undefined)
    expect(
      unsendable({
        role: 'tool',
        tool_call_id: 'a',
        content: 'x',
        structured_content: null as never,
        mcp_content: [null as never],
      }),
    ).toBe(undefined)
  })
})
