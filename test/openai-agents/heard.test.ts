// The mark on tools toolstack already audits where they run (markHeard, isHeard): a run audit asks it of any
// value an agent holds as a tool, so anything may be asked.
import { describe, expect, it } from 'vitest'
import { isHeard, markHeard } from '../../src/openai-agents/heard.js'

describe('markHeard and isHeard', () => {
  it('a marked tool is heard, and returned as the same object; another object is not', () => {
    const tool = { name: 'echo' }
    expect(isHeard(tool)).toBe(false)
    expect(markHeard(tool)).toBe(tool)
    expect(isHeard(tool)).toBe(true)
    expect(isHeard({ name: 'echo' })).toBe(false)
  })

  it('what is not an object is never heard, and asking does not throw', () => {
    for (const u of [undefined, null, 0, 'echo', true, Symbol('t'), 1n]) expect(isHeard(u)).toBe(false)
  })
})
