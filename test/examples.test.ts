// The core's examples, run as a user runs them: a separate process.
import { describe, expect, it } from 'vitest'
import { runExample } from './support/examples.js'

describe('examples', () => {
  it('incident: says the mangled call once and returns what the server did', () => {
    const r = runExample('incident.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const warnings = r.stdout.split('\n').filter((l) => l.includes('⚠'))
    expect(warnings).toEqual([
      '  ⚠ toolstack: fs_read call call_2 carried undeclared argument keys "ffset", "the rest" (declared: "length", "offset", "path") (did you mean offset for "ffset"?)',
    ])
    // the server still ignored the keys: the mangled call read from the start
    expect(r.stdout).toContain('call_1: {"path":"notes.txt","offset":12,"length":3}\n    → line 13 | line 14 | line 15')
    expect(r.stdout).toMatch(/call_2: .*\n {4}→ line 1 \| line 2 \| line 3/)
  })

  it('host-logger: hands each warning to the host logger as a structured entry', () => {
    const r = runExample('host-logger.ts')
    expect(r.status).toBe(0)
    const entries = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(entries.map((e) => [e['event'], e['call_id'], e['undeclared']])).toEqual([
      ['tool_call.undeclared_keys', 'a', ['max_results']],
      ['tool_call.undeclared_keys', 'b', ['lang']],
      ['turn.done', undefined, undefined],
    ])
  })

  it('diagnose: auditedTools explains which calls were audited', () => {
    const r = runExample('diagnose.ts')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('before the first listing: audited tools = [], warnings = 0')
    expect(r.stdout).toContain('after listing:            audited tools = [fs_read]')
    expect(r.stdout).toContain('  fs_read: depth')
    expect(r.stdout).toContain('call 4 (unlisted_tool): it was not in the last listing')
  })
})
