import { describe, expect, it } from 'vitest'
import { answerFor, completeResults } from '../../src/internal/answer.js'
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
