// The MCP examples, run as a user runs them: a separate process.
import { describe, expect, it } from 'vitest'
import { runExample } from '../support/examples.js'

describe('examples', () => {
  it('openai-loop: a scripted model drives a full tool loop over an MCP server', () => {
    const r = runExample('openai-loop.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^tools offered: notes_search_[0-9a-f]{8}, notes_read_[0-9a-f]{8}$/m)
    expect(r.stdout).toMatch(/^ {2}notes_search_[0-9a-f]{8} → MCP tool "notes\.search"$/m)
    expect(r.stdout).toContain('tool      ← call_1: plans.md')
    expect(r.stdout).toContain(
      'tool      ← call_2: Ship the MCP adapter on Friday. The deadline for the demo is 2 December.',
    )
    expect(r.stdout).toMatch(
      /tool {6}← call_3 \(error\): the arguments are not valid JSON \(.+\); the tool was not called/,
    )
    expect(r.stdout).toContain(
      'tool      ← call_4 (error): custom tools are not served here: "shell" was not run; call a function tool instead',
    )
    expect(r.stdout).toMatch(/assistant: From your notes: .*2 December\.\n$/)
  })
})
