import { describe, expect, it } from 'vitest'
import type { Args } from '../../../src/index.js'
import type { Question } from '../../../src/steps/policy/Verdict.js'
import { judge } from '../../../src/steps/policy/Verdict.js'
import { askHuman, requestFor } from '../../../src/steps/policy/ask.js'

/** The question the rules leave to the human about `call`. */
const questionAbout = (call: object, args: Args): Question => {
  const v = judge({ rules: [{ tool: 'fs_write', decision: 'ask' }], roots: {} })(call, 'fs_write', () => ({
    _tag: 'Right',
    right: args,
  }))
  if (v._tag !== 'Ask') throw new Error(`expected a question, got ${v._tag}`)
  return v.question
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('requestFor', () => {
  it('copies the type of the call only when it says "function"', () => {
    const args = { path: '/p/a' }
    const typed = { id: '1', type: 'function', function: { name: 'fs_write', arguments: '{"path":"/p/a"}' } }
    // the arguments string the policy read once (as plain data) is what the copy carries
    expect(requestFor(questionAbout(typed, args), args, 'session', typed.function.arguments).call).toEqual(typed)
    for (const type of [undefined, 'tool', 3]) {
      const call = {
        id: '2',
        ...(type === undefined ? {} : { type }),
        function: { name: 'fs_write', arguments: '{"path":"/p/a"}' },
      }
      const request = requestFor(questionAbout(call, args), args, 'session', call.function.arguments)
      expect(request.call).toEqual({ id: '2', function: { name: 'fs_write', arguments: '{"path":"/p/a"}' } })
      expect(request.call).not.toHaveProperty('type')
    }
  })

  it('never reads the arguments again: without the text the policy read, the arguments as parsed stand in', () => {
    const args = { path: '/p/a' }
    const unreadable = {
      id: '3',
      type: 'function',
      function: {
        name: 'fs_write',
        get arguments(): string {
          throw new Error('no arguments here')
        },
      },
    }
    const request = requestFor(questionAbout(unreadable, args), args)
    expect(request.call).toEqual({ id: '3', type: 'function', function: { name: 'fs_write', arguments: args } })
    expect(request.call.function.arguments).not.toBe(args)
  })
})

describe('askHuman', () => {
  it('refuses, saying so, a question whose arguments cannot be copied for the human, without asking', async () => {
    let asked = 0
    const args = Object.defineProperty({}, 'path', {
      enumerable: true,
      get: () => {
        throw new Error('boom')
      },
    }) as Args
    const out = await askHuman(() => {
      asked++
      return { action: 'allow-once' }
    })(questionAbout({ id: '1', function: { name: 'fs_write', arguments: '{}' } }, {}), args)
    expect(out).toEqual({
      _tag: 'Left',
      left: { _tag: 'AskFailed', tool: 'fs_write', error: 'the call could not be shown to the human (boom)' },
    })
    expect(asked).toBe(0)
  })
})
