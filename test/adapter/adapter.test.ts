// src/adapter/adapter.ts step by step: the options, the listing (first of each name,
// a Left as a ProviderFailure), the catalogue of a framework's own tools, the call an
// adapter sends (its arguments, the words for an abort) and how it is sent (one call,
// failures as is_error results, marked approved only when a bridge and a human say so).
import fc from 'fast-check'
import { left, right } from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { Catalogue } from '../../src/steps/audit/Catalogue.js'
import type { AuditSession } from '../../src/combinators/UnknownKeys.js'
import type { Approval } from '../../src/adapter/adapter.js'
import {
  abortedText,
  askReason,
  approvalOption,
  argumentsOf,
  callOf,
  firstOfEachName,
  listTools,
  listedCatalogue,
  sendApprovable,
  sendOne,
} from '../../src/adapter/adapter.js'
import type { Batch, Provider, ToolCall, ToolResult } from '../../src/kernel/model.js'
import { decl } from '../support/fakes.js'

/** A provider listing `listing` and answering `answer`, recording every batch it is sent. */
const recording = (
  listing: Promise<unknown>,
  answer: (calls: ReadonlyArray<ToolCall>) => Promise<unknown> = (calls) =>
    Promise.resolve(right(calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'ran' })))),
) => {
  const sent: Array<ReadonlyArray<ToolCall>> = []
  const provider = {
    toolsForLlm: () => listing,
    executeToolCalls: (calls: ReadonlyArray<ToolCall>) => () => {
      sent.push(calls)
      return answer(calls)
    },
  } as unknown as Provider<string>
  return { provider, sent }
}

const call = callOf('c1', 'read', '{"path":"a"}')

// -------------------------------------------------------------------------------------

describe('approvalOption', () => {
  it('no options, or none given, is no bridge; a bridge is the same object', () => {
    const approval = { approvedWhile: <A>(_: string, task: () => Promise<A>) => task() }
    expect(approvalOption('toX', undefined)).toBeUndefined()
    expect(approvalOption('toX', {})).toBeUndefined()
    expect(approvalOption('toX', { approval })).toBe(approval)
  })

  it('options that are not an object are a TypeError naming where', () => {
    for (const [options, got] of [
      [null, 'null'],
      [3, 'number 3'],
      ['x', 'the string "x"'],
      [[], 'an array'],
    ] as const) {
      expect(() => approvalOption('toX', options as never)).toThrow(
        new TypeError(`toX: options must be an object, got ${got}`),
      )
    }
  })
})

describe('firstOfEachName', () => {
  it('keeps the first declaration of each name, in order, the same objects', () => {
    const a = decl('a')
    const b = decl('b')
    const list = [a, b, decl('a', ['x']), b, decl('c')]
    const out = firstOfEachName(list)
    expect(out.map((d) => d.function.name)).toStrictEqual(['a', 'b', 'c'])
    expect(out[0]).toBe(a)
    expect(out[1]).toBe(b)
  })

  it('whatever the names: the first of each, in the order first seen (model: a filter on the first index)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', '__proto__', 'constructor'), { maxLength: 12 }),
        (names: ReadonlyArray<string>) => {
          const list = names.map((n) => decl(n))
          const expected = list.filter((d, i) => names.indexOf(d.function.name) === i)
          expect(firstOfEachName(list)).toStrictEqual(expected)
        },
      ),
    )
  })
})

describe('listTools', () => {
  it('a listing is its first declaration of each name', async () => {
    const a = decl('a')
    const { provider } = recording(Promise.resolve(right([a, decl('a', ['x']), decl('b')])))
    const out = await listTools(provider)
    expect(out.map((d) => d.function.name)).toStrictEqual(['a', 'b'])
    expect(out[0]).toBe(a)
  })

  it('tells an approval bridge the whole listing, as withPolicy hears it; a bridge without `listed` is passed over', async () => {
    const listing = [decl('a'), decl('a', ['x']), decl('b')]
    const told: Array<unknown> = []
    const approvedWhile = <A>(_: unknown, task: () => Promise<A>): Promise<A> => task()
    await listTools(recording(Promise.resolve(right(listing))).provider, {
      approvedWhile,
      listed: (d) => void told.push(d),
    })
    expect(told).toHaveLength(1)
    expect(told[0]).toBe(listing)
    const out = await listTools(recording(Promise.resolve(right(listing))).provider, { approvedWhile })
    expect(out.map((d) => d.function.name)).toStrictEqual(['a', 'b'])
  })

  it('a Left rejects with a ProviderFailure holding it; a rejection passes through as it came', async () => {
    const why = { code: 7 }
    await expect(listTools(recording(Promise.resolve(left(why))).provider)).rejects.toMatchObject({
      name: 'ProviderFailure',
      left: why,
      message: 'the tool provider failed: {"code":7}',
    })
    const reason = new Error('offline')
    await expect(listTools(recording(Promise.reject(reason)).provider)).rejects.toBe(reason)
  })
})

describe('listedCatalogue', () => {
  it('the session’s catalogue of the declarations, the session told it was listed with how many tools', () => {
    const catalogue: Catalogue = new Map()
    const read: Array<ReadonlyArray<unknown>> = []
    const listed: Array<readonly [Catalogue, number]> = []
    const session = {
      readListing: (declarations: ReadonlyArray<unknown>) => (read.push(declarations), catalogue),
      recordListing: (c: Catalogue, tools: number) => void listed.push([c, tools]),
    } as unknown as AuditSession
    const declarations = [decl('a'), decl('b')]
    expect(listedCatalogue(session, declarations)).toBe(catalogue)
    expect(read).toStrictEqual([declarations])
    expect(read[0]).toBe(declarations)
    expect(listed).toStrictEqual([[catalogue, 2]])
    expect(listed[0]?.[0]).toBe(catalogue)
  })
})

describe('argumentsOf', () => {
  it('an object is the same object', () => {
    const input = { path: 'a' }
    expect(argumentsOf(input)).toBe(input)
  })

  it('anything else JSON can write is its JSON text', () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
        (input) => {
          expect(argumentsOf(input)).toBe(JSON.stringify(input))
        },
      ),
    )
  })

  it('no arguments ("") for what JSON cannot write: undefined, a function, a BigInt, a cycle', () => {
    const cycle: Array<unknown> = []
    cycle.push(cycle)
    for (const input of [undefined, () => 1, 7n, cycle, [1n]]) expect(argumentsOf(input)).toBe('')
  })
})

describe('callOf and abortedText', () => {
  it('a function call of that id, name and arguments', () => {
    const args = { path: 'a' }
    expect(callOf('c9', 'read', args)).toStrictEqual({
      id: 'c9',
      type: 'function',
      function: { name: 'read', arguments: args },
    })
    expect(callOf('c9', 'read', args).function.arguments).toBe(args)
  })

  it('an abort in words, with its reason', () => {
    expect(abortedText(new Error('the user left'))).toBe('the call was aborted before it ran (the user left)')
    expect(abortedText('timeout')).toBe('the call was aborted before it ran (timeout)')
  })
})

describe('sendOne', () => {
  it('sends the very call alone and returns its result, the same object', async () => {
    const result: ToolResult = { role: 'tool', tool_call_id: 'c1', content: 'text' }
    const { provider, sent } = recording(Promise.resolve(right([])), () => Promise.resolve(right([result])))
    expect(await sendOne(provider)(call)).toBe(result)
    expect(sent).toStrictEqual([[call]])
    expect(sent[0]?.[0]).toBe(call)
  })

  it('through the provider’s executeBatch when it has one', async () => {
    const batches: Array<Batch> = []
    const { provider } = recording(Promise.resolve(right([])))
    const batched = {
      ...provider,
      executeBatch: (batch: Batch) => () => (
        batches.push(batch),
        Promise.resolve(right([{ role: 'tool' as const, tool_call_id: 'c1', content: 'batched' }]))
      ),
    }
    expect((await sendOne(batched)(call)).content).toBe('batched')
    expect(batches.map((b) => b.calls)).toStrictEqual([[call]])
  })

  it('a Left or a rejection is an is_error result saying so; a missing result is one too', async () => {
    const failing = (answer: Promise<unknown>) =>
      sendOne(recording(Promise.resolve(right([])), () => answer).provider)(call)
    expect(await failing(Promise.resolve(left('down')))).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'the tool provider failed: down',
      is_error: true,
    })
    expect(await failing(Promise.reject(new Error('gone')))).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'the tool provider failed: gone',
      is_error: true,
    })
    expect(await failing(Promise.resolve(right([])))).toStrictEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'the tool provider returned no result for this call',
      is_error: true,
    })
  })
})

describe('sendApprovable', () => {
  const setup = () => {
    const marked: Array<string> = []
    const approval: Approval = {
      approvedWhile: async (c, task) => {
        marked.push(c.id)
        return task()
      },
    }
    const sent: Array<ToolCall> = []
    const result: ToolResult = { role: 'tool', tool_call_id: 'c1', content: 'ran' }
    const send = (c: ToolCall) => (sent.push(c), Promise.resolve(result))
    return { marked, approval, sent, result, send }
  }

  it('without a bridge: sent as it is, the framework never asked', async () => {
    const { sent, result, send } = setup()
    let asked = 0
    expect(await sendApprovable(undefined, send)(call, () => (asked++, true))).toBe(result)
    expect(asked).toBe(0)
    expect(sent).toStrictEqual([call])
  })

  it('with a bridge: marked approved while it runs when a human approved it, else sent as it is', async () => {
    const { marked, approval, sent, result, send } = setup()
    expect(await sendApprovable(approval, send)(call, () => false)).toBe(result)
    expect(marked).toStrictEqual([])
    expect(await sendApprovable(approval, send)(call, () => true)).toBe(result)
    expect(marked).toStrictEqual(['c1'])
    expect(sent).toStrictEqual([call, call])
    expect(sent[1]).toBe(call)
  })
})

describe('askReason', () => {
  it('no rule: none allows the call; a rule: drawn, with its note after a colon when it has one', () => {
    expect(askReason(undefined)).toBe('no rule allows this call')
    expect(askReason({ tool: 'fs_*', decision: 'ask' })).toBe('ask "fs_*"')
    expect(askReason({ tool: 'fs_write', decision: 'ask', under: '/srv', note: 'writes need a look' })).toBe(
      'ask "fs_write" under /srv: writes need a look',
    )
  })
})
