import { describe, expect, it } from 'vitest'
import { right } from 'fp-ts/lib/Either.js'
import type { Step } from '../../src/steps/answer.js'
import { answerFor, answerHere, completeResults, sendInOrder } from '../../src/steps/answer.js'
import { batchOf } from '../../src/steps/Batch.js'
import type { Batch, ToolResult } from '../../src/kernel/model.js'
import { call } from '../support/fakes.js'

const result = (id: string, content = id) => ({ role: 'tool' as const, tool_call_id: id, content })

describe('completeResults', () => {
  const calls = [call('a', 't'), call('b', 't'), call('c', 't')]

  it('keeps an in-order answer as the very array', () => {
    const answer = calls.map((c) => result(c.id))
    expect(completeResults(calls, answer)).toBe(answer)
  })

  it('puts results answered out of order back in the caller’s order, by id, as the very objects', () => {
    const answer = [result('c'), result('a'), result('b')]
    const out = completeResults(calls, answer)
    expect(out.map((r) => r.tool_call_id)).toEqual(['a', 'b', 'c'])
    expect(out[0]).toBe(answer[1])
  })

  it('fills a missing result with an is_error one, in its place', () => {
    const out = completeResults(calls, [result('a'), result('c')])
    expect(out.map((r) => [r.tool_call_id, r.is_error === true])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
    ])
  })

  it('matches by position when ids repeat', () => {
    const twice = [call('x', 't'), call('x', 't')]
    const answer = [result('x', 'first'), result('x', 'second')]
    expect(completeResults(twice, answer).map((r) => r.content)).toEqual(['first', 'second'])
  })

  it('matches by position when ids repeat, even in a short answer', () => {
    const twice = [call('x', 't'), call('x', 't')]
    const out = completeResults(twice, [result('x', 'first')])
    expect(out.map((r) => [r.content, r.is_error === true])).toEqual([
      ['first', false],
      ['the tool provider returned no result for this call', true],
    ])
  })

  it('reads a call and a result without an id (absent or null) as the same empty id: in order, the very array', () => {
    const noIds = [{ function: { name: 't', arguments: '' } }, { id: null, function: { name: 't', arguments: '' } }]
    for (const answer of [
      [
        { role: 'tool', content: 'one' },
        { role: 'tool', content: 'two', tool_call_id: null },
      ],
      [
        { role: 'tool', content: 'one', tool_call_id: null },
        { role: 'tool', content: 'two' },
      ],
    ])
      expect(completeResults(noIds, answer)).toBe(answer)
    // and a null among results is no result
    const out = completeResults(calls, [result('a'), null, result('c')])
    expect(out.map((r) => r.is_error === true)).toEqual([false, true, false])
  })

  it('gives each result of a repeated id to the first of its calls still waiting, when its own place is not one', () => {
    const calls = [call('a', 't'), call('a', 't'), call('b', 't'), call('b', 't')]
    const answer = [result('b', 'b1'), result('b', 'b2'), result('a', 'a1'), result('a', 'a2')]
    expect(completeResults(calls, answer).map((r) => r.content)).toEqual(['a1', 'a2', 'b1', 'b2'])
  })

  it('gives a call without an id the result without one, wherever the provider put it', () => {
    const calls = [{ function: { name: 't', arguments: '' } }, call('b', 't')]
    const out = completeResults(calls, [result('b'), result('', 'no id')])
    expect(out.map((r) => r.content)).toEqual(['no id', 'b'])
  })

  // a provider that echoes a call's id 7 as the number 7 (the registry's own example does): read as callIdOf reads
  it('matches a number id with the call whose id it is, as the very object', () => {
    const numbered = [
      { id: 7, function: { name: 't', arguments: '' } },
      { id: 8, function: { name: 't', arguments: '' } },
    ]
    const answer = [
      { role: 'tool', tool_call_id: 8, content: 'eight' },
      { role: 'tool', tool_call_id: 7, content: 'seven' },
    ]
    const out = completeResults(numbered, answer)
    expect(out.map((r) => r.content)).toEqual(['seven', 'eight'])
    expect(out[0]).toBe(answer[1])
    const inOrder = [answer[1], answer[0]]
    expect(completeResults(numbered, inOrder)).toBe(inOrder)
  })

  it('never gives a result that names one call to another: ids shared, missing, or foreign', () => {
    // x twice and y; the provider skipped the first x: y's result stays y's
    const xxy = [call('x', 't'), call('x', 't'), call('y', 't')]
    expect(completeResults(xxy, [result('x', 'ran b'), result('y', 'ran c')]).map((r) => r.content)).toEqual([
      'ran b',
      'the tool provider returned no result for this call',
      'ran c',
    ])
    // a foreign result before the real one of a call without an id
    const noId = [{ function: { name: 't', arguments: '' } }]
    expect(completeResults(noId, [result('zz', 'stale'), result('', 'real')]).map((r) => r.content)).toEqual(['real'])
  })

  it('fills the calls left, in order, with results that name none, when they are exactly as many', () => {
    const made = [result('p1', 'first'), result('p2', 'second')]
    expect(completeResults([call('a', 't'), call('b', 't')], made).map((r) => r.content)).toEqual(['first', 'second'])
    // one too many, or one too few: which is which cannot be told, so none is given
    expect(
      completeResults([call('a', 't'), call('b', 't')], [result('a'), ...made]).map((r) => r.is_error === true),
    ).toEqual([false, true])
  })

  it('a result whose id cannot be read is no result, and its siblings keep theirs', () => {
    const throwing = Object.defineProperty({ role: 'tool', content: 'b' }, 'tool_call_id', {
      get: () => {
        throw new Error('boom')
      },
    })
    const out = completeResults([call('a', 't'), call('b', 't')], [result('a'), throwing])
    expect(out.map((r) => [r.content, r.is_error === true])).toEqual([
      ['a', false],
      ['the tool provider returned no result for this call', true],
    ])
  })

  it('keeps the first of two results for one id', () => {
    const out = completeResults(calls, [result('b', 'b1'), result('b', 'b2'), result('a'), result('c')])
    expect(out.map((r) => r.content)).toEqual(['a', 'b1', 'c'])
  })

  it('counts as a result only an object with role "tool" and string content, whether matched by id or position', () => {
    const notResults: ReadonlyArray<unknown> = [
      null,
      7,
      { role: 'user', tool_call_id: 'a', content: 'a' },
      { role: 'tool', tool_call_id: 'a', content: 7 },
      Object.assign(() => 0, { role: 'tool', tool_call_id: 'a', content: 'a' }),
      Object.defineProperty({ tool_call_id: 'a', content: 'a' }, 'role', {
        get: () => {
          throw new Error('boom')
        },
      }),
    ]
    const one = [call('a', 't')]
    const twice = [call('x', 't'), call('x', 't')]
    for (const junk of notResults) {
      // in order, by id, by position
      for (const [cs, answer] of [
        [one, [junk]],
        [calls, [junk, result('b'), result('c')]],
        [twice, [junk, result('x')]],
      ] as const) {
        const out = completeResults(cs, answer)
        expect(out[0]).toEqual({
          role: 'tool',
          tool_call_id: cs[0]?.id,
          content: 'the tool provider returned no result for this call',
          is_error: true,
        })
      }
    }
  })

  it('answers every call as missing when the results are no array', () => {
    const out = completeResults(calls, { length: 3 })
    expect(
      out.every((r) => r.is_error === true && r.content === 'the tool provider returned no result for this call'),
    ).toBe(true)
    expect(out.map((r) => r.tool_call_id)).toEqual(['a', 'b', 'c'])
  })
})

describe('answerFor', () => {
  it('turns a Left, a rejection and a throw into one is_error result per call', async () => {
    const calls = [call('a', 't'), call('b', 't')]
    for (const run of [
      () => Promise.resolve({ _tag: 'Left' as const, left: 'down' }),
      () => Promise.reject(new Error('gone')),
      (): never => {
        throw new Error('thrown')
      },
    ]) {
      const out = await answerFor(calls, run)
      expect(out.map((r) => [r.tool_call_id, r.is_error])).toEqual([
        ['a', true],
        ['b', true],
      ])
      expect(out[0]?.content).toMatch(/^the tool provider failed: (down|gone|thrown)$/)
    }
  })
})

describe('sendInOrder', () => {
  const calls = [call('a', 't', { n: 1 }), call('b', 't', { n: 2 })]
  type To = 'x' | 'y'
  const recording = () => {
    const sent: Array<[To, Batch]> = []
    const run = (to: To, batch: Batch) => {
      sent.push([to, batch])
      return Promise.resolve(right(batch.calls.map((c): ToolResult => result(c.id, `${to} ${c.id}`))))
    }
    return { sent, run }
  }
  const who = (to: To) => `provider ${to}`

  it('sends the very batch when every call goes on unchanged to one destination', async () => {
    const { sent, run } = recording()
    const batch = batchOf(calls)
    const out = await sendInOrder<To>(
      batch,
      calls,
      [
        { _tag: 'Send', to: 'x' },
        { _tag: 'Send', to: 'x' },
      ],
      run,
      who,
    )
    expect(sent).toHaveLength(1)
    expect(sent[0]?.[1]).toBe(batch)
    expect(out.map((r) => r.content)).toEqual(['x a', 'x b'])
  })

  it('splits a batch whose calls go to different destinations, and puts the answers back in order', async () => {
    const { sent, run } = recording()
    const out = await sendInOrder<To>(
      batchOf(calls),
      calls,
      [
        { _tag: 'Send', to: 'x' },
        { _tag: 'Send', to: 'y' },
      ],
      run,
      who,
    )
    expect(sent.map(([to, b]) => [to, b.calls.map((c) => c.id)])).toEqual([
      ['x', ['a']],
      ['y', ['b']],
    ])
    expect(out.map((r) => r.content)).toEqual(['x a', 'y b'])
  })

  it('a provider array whose slot changes between reads: what is read the second time must be a result too', async () => {
    const { run } = recording()
    let reads = 0
    const shifty = new Proxy([result('b', 'y b')], {
      get: (target, key, receiver) =>
        key === '0' && ++reads > 1 ? { junk: true } : Reflect.get(target, key, receiver),
    })
    const out = await sendInOrder<To>(
      batchOf(calls),
      calls,
      [
        { _tag: 'Send', to: 'x' },
        { _tag: 'Send', to: 'y' },
      ],
      (to, batch) => (to === 'y' ? Promise.resolve(right(shifty)) : run(to, batch)),
      who,
    )
    expect(out.map((r) => [r.content, r.is_error === true])).toEqual([
      ['x a', false],
      ['the tool provider returned no result for this call', true],
    ])
  })

  it('sends the arguments a layer wrote itself, not the batch as it came', async () => {
    const { sent, run } = recording()
    const own = right({ n: 3 })
    const steps: ReadonlyArray<Step<To>> = [
      { _tag: 'Send', to: 'x', args: own },
      { _tag: 'Send', to: 'x' },
    ]
    await sendInOrder<To>(batchOf(calls), calls, steps, run, who)
    expect(sent).toHaveLength(1)
    expect(sent[0]?.[1].argsAt(0)).toBe(own)
    expect(sent[0]?.[1].argsAt(1)).toEqual(right({ n: 2 }))
  })

  it('sends nothing when every call is answered here', async () => {
    const { sent, run } = recording()
    const steps = calls.map((c) => answerHere(c, `refused ${c.id}`))
    const out = await sendInOrder<To>(batchOf(calls), calls, steps, run, who)
    expect(sent).toHaveLength(0)
    expect(out.map((r) => [r.tool_call_id, r.content, r.is_error])).toEqual([
      ['a', 'refused a', true],
      ['b', 'refused b', true],
    ])
  })

  it('puts answers given here between the answers of the calls sent on', async () => {
    const { sent, run } = recording()
    const steps: ReadonlyArray<Step<To>> = [answerHere(calls[0], 'refused'), { _tag: 'Send', to: 'y' }]
    const out = await sendInOrder<To>(batchOf(calls), calls, steps, run, who)
    expect(sent.map(([to, b]) => [to, b.calls.map((c) => c.id)])).toEqual([['y', ['b']]])
    expect(out.map((r) => r.content)).toEqual(['refused', 'y b'])
  })
})
