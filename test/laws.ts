// Properties every layer must satisfy, written once and applied to each combinator.
import fc from 'fast-check'
import { expect } from 'vitest'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../src/index.js'
import { REASON_PARAM } from '../src/index.js'
import { batchArb, lengthReadable, owedResults } from './support/arbitraries.js'
import { okResult } from './support/fakes.js'

/** What the inner provider does with a batch. */
export type InnerBehaviour = 'ok' | 'short' | 'empty' | 'left' | 'reject' | 'throw'

export const innerBehaviourArb: fc.Arbitrary<InnerBehaviour> = fc.constantFrom(
  'ok',
  'short',
  'empty',
  'left',
  'reject',
  'throw',
)

/** An inner provider that lists `declarations` and answers each batch as `behaviour` says. */
export const behavingProvider = (
  declarations: ReadonlyArray<ToolDeclaration>,
  behaviour: () => InnerBehaviour,
): Provider<string> & { readonly seen: Array<ReadonlyArray<ToolCall>> } => {
  const seen: Array<ReadonlyArray<ToolCall>> = []
  return {
    seen,
    toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: declarations }),
    executeToolCalls: (calls) => () => {
      seen.push(calls)
      switch (behaviour()) {
        case 'ok':
          return Promise.resolve({ _tag: 'Right', right: calls.map(okResult) })
        case 'short':
          return Promise.resolve({ _tag: 'Right', right: calls.slice(0, Math.floor(calls.length / 2)).map(okResult) })
        case 'empty':
          return Promise.resolve({ _tag: 'Right', right: [] })
        case 'left':
          return Promise.resolve({ _tag: 'Left', left: 'inner failed' })
        case 'reject':
          return Promise.reject(new Error('inner rejected'))
        case 'throw':
          throw new Error('inner threw')
      }
    },
  }
}

// a slot of a hostile batch may throw when read: `undefined` when it does
const slot = (calls: ReadonlyArray<unknown>, i: number): { readonly ok: boolean; readonly call: unknown } => {
  try {
    return { ok: true, call: calls[i] }
  } catch {
    return { ok: false, call: undefined }
  }
}

const readableId = (c: unknown): string | undefined => {
  try {
    const id = (c as { id?: unknown } | null)?.id
    return typeof id === 'string' ? id : undefined
  } catch {
    return undefined
  }
}

/**
 * What a layer that answers for a provider owes a batch (hostile ones included): one
 * result per position it can measure, in order, each answering its call's id when the
 * call has a readable one; an `is_error` result naming the position for a slot that
 * cannot be read; one `is_error` refusal for a batch whose length cannot be read.
 */
export const expectOnePerPosition = (calls: ReadonlyArray<unknown>, results: ReadonlyArray<ToolResult>): void => {
  expect(results).toHaveLength(owedResults(calls))
  if (!lengthReadable(calls)) {
    expect(results[0]?.is_error).toBe(true)
    expect(results[0]?.content).toMatch(/^this batch of tool calls could not be read/)
    return
  }
  results.forEach((r, i) => {
    expect(r.role).toBe('tool')
    expect(typeof r.content).toBe('string')
    const read = slot(calls, i)
    if (!read.ok) {
      expect(r.is_error).toBe(true)
      expect(r.content).toContain(`position ${i}`)
      return
    }
    const id = readableId(read.call)
    if (id !== undefined) expect(r.tool_call_id).toBe(id)
  })
}

/**
 * Law for layers that answer for a provider: whatever the batch (hostile ones
 * included) and whatever the inner provider does, the batch never fails, and the
 * results are what {@link expectOnePerPosition} says.
 */
export const answersOnePerCall = (
  make: (inner: Provider<string>) => Provider<unknown>,
  declarations: ReadonlyArray<ToolDeclaration>,
  names?: fc.Arbitrary<string>,
): fc.IAsyncPropertyWithHooks<[ReadonlyArray<ToolCall>, InnerBehaviour]> =>
  fc.asyncProperty(batchArb(names), innerBehaviourArb, async (calls, behaviour) => {
    const layer = make(behavingProvider(declarations, () => behaviour))
    await layer.toolsForLlm()
    const out = await layer.executeToolCalls(calls)()
    expect(out._tag).toBe('Right')
    if (out._tag !== 'Right') return
    expectOnePerPosition(calls, out.right)
  })

/** Law: building a task does nothing; only running it reaches the inner provider. */
export const isLazy = async (
  make: (inner: Provider<string>) => Provider<unknown>,
  calls: ReadonlyArray<ToolCall>,
): Promise<void> => {
  let touched = 0
  const inner: Provider<string> = {
    toolsForLlm: () => {
      touched++
      return Promise.resolve({ _tag: 'Right', right: [] })
    },
    executeToolCalls: (cs) => () => {
      touched++
      return Promise.resolve({ _tag: 'Right', right: cs.map(okResult) })
    },
  }
  const layer = make(inner)
  const listing = layer.toolsForLlm
  const batch = layer.executeToolCalls(calls)
  expect(touched).toBe(0)
  await listing()
  await batch()
  expect(touched).toBeGreaterThan(0)
}

/** Law: a listing that fails (Left or rejection) passes through as it came. */
export const listingFailurePassesThrough = async (
  make: (inner: Provider<string>) => Provider<unknown>,
): Promise<void> => {
  const reason = new Error('cannot list')
  const left = make({
    toolsForLlm: () => Promise.resolve({ _tag: 'Left', left: 'no listing' }),
    executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: [] }),
  })
  expect(await left.toolsForLlm()).toEqual({ _tag: 'Left', left: 'no listing' })
  const rejecting = make({
    toolsForLlm: () => Promise.reject(reason),
    executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: [] }),
  })
  await expect(rejecting.toolsForLlm()).rejects.toBe(reason)
}

/**
 * Law for every layer: a call's `mcp_context` (the way back to the MCP host that sent it) reaches the
 * inner provider as the very same object, whether the layer forwards the call itself or rebuilds it (a
 * renamed copy, arguments without `reason`). Each call in `calls(names)` must reach the inner provider.
 */
export const keepsCallContext = (
  make: (inner: Provider<string>) => Provider<unknown>,
  declarations: ReadonlyArray<ToolDeclaration>,
  names: fc.Arbitrary<string>,
): fc.IAsyncPropertyWithHooks<
  [ReadonlyArray<{ readonly name: string; readonly reason: boolean; readonly raw: boolean }>]
> =>
  fc.asyncProperty(
    fc.array(fc.record({ name: names, reason: fc.boolean(), raw: fc.boolean() }), { maxLength: 6 }),
    async (specs) => {
      const inner = behavingProvider(declarations, () => 'ok')
      const layer = make(inner)
      await layer.toolsForLlm()
      const calls: ReadonlyArray<ToolCall> = specs.map((s, i) => {
        const args = { path: `/p${i}`, ...(s.reason ? { [REASON_PARAM]: 'the model says why' } : {}) }
        return {
          id: `c${i}`,
          type: 'function',
          function: { name: s.name, arguments: s.raw ? args : JSON.stringify(args) },
          mcp_context: { signal: new AbortController().signal },
        }
      })
      const out = await layer.executeToolCalls(calls)()
      expect(out._tag).toBe('Right')
      const received = inner.seen.flat()
      expect(received.map((c) => c.id)).toEqual(calls.map((c) => c.id))
      received.forEach((c, i) => expect(c.mcp_context).toBe(calls[i]?.mcp_context))
    },
  )
