import { describe, expect, it } from 'vitest'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Batch, Provider, ToolCall } from '../../src/index.js'
import { drawArgsProblem } from '../../src/index.js'
import { batchOf } from '../../src/steps/Batch.js'
import { derive, readsBatches, runBatch } from '../../src/steps/Batch.js'
import { call, okResults } from '../support/fakes.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

describe('batchOf', () => {
  it('reads arguments that are a revoked Proxy as unreadable, never a throw', () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    const batch = batchOf([{ id: '1', type: 'function', function: { name: 't', arguments: proxy as never } }])
    const read = batch.argsAt(0)
    expect(read._tag).toBe('Left')
    expect(read._tag === 'Left' && read.left._tag).toBe('Unreadable')
  })

  it('reads nothing until a layer asks, then gives every layer the very same answer', () => {
    let reads = 0
    const c = {
      id: '1',
      function: {
        name: 't',
        get arguments() {
          reads++
          return '{"a":1}'
        },
      },
    } as unknown as ToolCall
    const batch = batchOf([c])
    expect(reads).toBe(0)
    const first = batch.argsAt(0)
    expect(first).toEqual({ _tag: 'Right', right: { a: 1 } })
    expect(batch.argsAt(0)).toBe(first)
    expect(reads).toBe(1)
  })

  it('reads each position for itself', () => {
    const batch = batchOf([call('1', 't', { a: 1 }), call('2', 't', { b: 2 })])
    expect(batch.argsAt(1)).toEqual({ _tag: 'Right', right: { b: 2 } })
    expect(batch.argsAt(0)).toEqual({ _tag: 'Right', right: { a: 1 } })
  })

  it('says a call that is not an object cannot be read, naming what it is', () => {
    const batch = batchOf([null, 'x'] as unknown as ReadonlyArray<ToolCall>)
    expect(batch.argsAt(0)).toEqual({ _tag: 'Left', left: { _tag: 'Unreadable', message: 'the call is null' } })
    expect(batch.argsAt(1)).toEqual({
      _tag: 'Left',
      left: { _tag: 'Unreadable', message: 'the call is the string "x"' },
    })
  })

  it('says a call that throws when read cannot be read, with what it threw, and words it for a model', () => {
    const hostile = {
      id: '1',
      get function(): never {
        throw new Error('no function here')
      },
    }
    const out = batchOf([hostile] as unknown as ReadonlyArray<ToolCall>).argsAt(0)
    expect(out).toEqual({ _tag: 'Left', left: { _tag: 'Unreadable', message: 'no function here' } })
    expect(out._tag === 'Left' && drawArgsProblem(out.left)).toBe('the call cannot be read (no function here)')
  })

  it('reads a call without a function object as a call without arguments', () => {
    const batch = batchOf([{ id: '1', function: null }, { id: '2' }] as unknown as ReadonlyArray<ToolCall>)
    expect(batch.argsAt(0)).toEqual({ _tag: 'Left', left: { _tag: 'Absent' } })
    expect(batch.argsAt(1)).toEqual({ _tag: 'Left', left: { _tag: 'Absent' } })
  })
})

describe('readsBatches', () => {
  it('says whether a provider has executeBatch, the one thing that decides what it is sent', () => {
    const calls: Provider<never> = { toolsForLlm: TE.right([]), executeToolCalls: () => TE.right([]) }
    expect(readsBatches(calls)).toBe(false)
    expect(readsBatches({ ...calls, executeBatch: () => TE.right([]) })).toBe(true)
    expect(readsBatches({ ...calls, executeBatch: 'no' } as unknown as Provider<never>)).toBe(false)
  })
})

describe('derive', () => {
  it('gives each call the parse of its origin, unless the layer says how its own arguments read', () => {
    const from = batchOf([call('1', 't', { a: 1 }), call('2', 't', { b: 2 })])
    const own = { _tag: 'Right', right: { mine: true } } as const
    const calls = [from.calls[1] as ToolCall, from.calls[0] as ToolCall]
    const d: Batch = derive(from, calls, [1, 0], [undefined, own])
    expect(d.calls).toBe(calls)
    expect(d.argsAt(0)).toBe(from.argsAt(1))
    expect(d.argsAt(1)).toBe(own)
  })

  it('gives every call the parse of its origin when the layer wrote no arguments itself', () => {
    const from = batchOf([call('1', 't', { a: 1 }), call('2', 't', { b: 2 })])
    const d = derive(from, [...from.calls].reverse(), [1, 0])
    expect(d.argsAt(0)).toBe(from.argsAt(1))
    expect(d.argsAt(1)).toBe(from.argsAt(0))
  })

  it('reads a call with no origin as no call, never as the arguments of another', () => {
    const from = batchOf([call('1', 't', { a: 1 }), call('2', 't', { b: 2 })])
    const d = derive(from, from.calls, [])
    expect(d.argsAt(0)).toEqual({ _tag: 'Left', left: { _tag: 'Unreadable', message: 'the call is undefined' } })
  })
})

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

describe('runBatch', () => {
  it('calls executeBatch as a method, so a class instance keeps its this', async () => {
    class Tools implements Provider<never> {
      readonly seen: Array<Batch> = []
      toolsForLlm = TE.right([])
      executeToolCalls = () => TE.right([])
      executeBatch(batch: Batch) {
        this.seen.push(batch)
        return TE.right(okResults(batch.calls))
      }
    }
    const p = new Tools()
    const batch = batchOf([call('1', 't')])
    const out = await runBatch(p)(batch)()
    expect(out._tag).toBe('Right')
    expect(p.seen[0]).toBe(batch)
  })

  it('calls executeToolCalls with the very calls of a provider without executeBatch', async () => {
    const got: Array<unknown> = []
    const p: Provider<never> = {
      toolsForLlm: TE.right([]),
      executeToolCalls: (calls) => {
        got.push(calls)
        return TE.right(okResults(calls))
      },
    }
    const batch = batchOf([call('1', 't')])
    await runBatch(p)(batch)()
    expect(got[0]).toBe(batch.calls)
  })

  it('rejects, saying what to write, when executeToolCalls returns a Promise or anything else that is not a task', async () => {
    const answering = (answer: unknown): Provider<never> => ({
      toolsForLlm: TE.right([]),
      executeToolCalls: () => answer as never,
    })
    await expect(runBatch(answering(Promise.resolve([])))(batchOf([]))()).rejects.toThrow(
      /^the provider's executeToolCalls returned a Promise, not a task \(a function returning a Promise\); a Promise-based provider is adapted with fromAsync\(provider\)$/,
    )
    await expect(runBatch(answering(7))(batchOf([]))()).rejects.toThrow(
      /^the provider's executeToolCalls returned number 7, not a task/,
    )
    await expect(runBatch(answering(null))(batchOf([]))()).rejects.toThrow(
      /^the provider's executeToolCalls returned null, not a task/,
    )
    await expect(runBatch(answering({ then: 1 }))(batchOf([]))()).rejects.toThrow(
      /^the provider's executeToolCalls returned an object, not a task/,
    )
  })
})
