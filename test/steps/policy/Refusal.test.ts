import { describe, expect, it } from 'vitest'
import type { Rule } from '../../../src/index.js'
import { drawRefusal } from '../../../src/index.js'

// -------------------------------------------------------------------------------------
// destructors
// -------------------------------------------------------------------------------------

describe('drawRefusal', () => {
  const DENY_GIT: Rule = { tool: 'fs_write', decision: 'deny', under: '/p/.git', note: 'history is read-only' }

  it('lists every location a deny could not check, apart', () => {
    expect(
      drawRefusal({
        _tag: 'DeniedByRule',
        tool: 'fs_move',
        rule: DENY_GIT,
        unevaluable: ['from is empty', 'to is relative and this tool has no root'],
      }),
    ).toBe(
      'The permission policy refused this call to "fs_move" (rule: deny "fs_write" under /p/.git). Reason: history is read-only.' +
        ' Its location could not be checked (from is empty; to is relative and this tool has no root), so the rule applied to be safe;' +
        ' a call with a clean absolute path may be treated differently. It was not run; do not retry it as is.',
    )
  })

  it("gives a grant's note when it has one, and nothing in its place when not", () => {
    expect(drawRefusal({ _tag: 'DeniedByGrant', tool: 'fs_write', rule: DENY_GIT })).toBe(
      'The user has refused calls like this to "fs_write" for this session (rule: deny "fs_write" under /p/.git; history is read-only).' +
        ' It was not run; do not retry it, and ask the user if you need it.',
    )
    expect(drawRefusal({ _tag: 'DeniedByGrant', tool: 'rm', rule: { tool: 'rm', decision: 'deny' } })).toBe(
      'The user has refused calls like this to "rm" for this session (rule: deny "rm"). It was not run; do not retry it, and ask the user if you need it.',
    )
  })
})
