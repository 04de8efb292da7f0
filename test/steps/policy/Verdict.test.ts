import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import type { Either } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem, Rule } from '../../../src/index.js'
import type { Question, Verdict } from '../../../src/steps/policy/Verdict.js'
import { drawRefusal } from '../../../src/index.js'
import { byGrants, judge } from '../../../src/steps/policy/Verdict.js'

const readable =
  (args: Args): (() => Either<ArgsProblem, Args>) =>
  () => ({ _tag: 'Right', right: args })

const CALL = { id: '1', function: { name: 'fs_write', arguments: '{}' } }

/** The question the rules leave to the human about `args`. */
const questionAbout = (args: Args, tool = 'fs_write'): Question => {
  const v = judge({ rules: [{ tool, decision: 'ask' }], roots: {} })(CALL, tool, readable(args))
  if (v._tag !== 'Ask') throw new Error(`expected a question, got ${v._tag}`)
  return v.question
}

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('judge', () => {
  const GIT: Rule = { tool: 'fs_*', decision: 'deny', under: '/p/.git', note: 'history is read-only' }

  it('refuses by name alone without reading the arguments', () => {
    const argsOf = vi.fn(readable({ path: '/p/a' }))
    expect(judge({ rules: [{ tool: 'rm', decision: 'deny' }], roots: {} })(CALL, 'rm', argsOf)).toEqual({
      _tag: 'Refuse',
      refusal: { _tag: 'DeniedByRule', tool: 'rm', rule: { tool: 'rm', decision: 'deny' }, unevaluable: [] },
    })
    expect(argsOf).not.toHaveBeenCalled()
  })

  it('says which locations a deny under a directory could not check, and only those', () => {
    const v = judge({ rules: [GIT], roots: {} })(CALL, 'fs_move', readable({ from: '/q/a', to: 'rel/b' }))
    expect(v).toEqual({
      _tag: 'Refuse',
      refusal: {
        _tag: 'DeniedByRule',
        tool: 'fs_move',
        rule: GIT,
        unevaluable: ['to is relative and this tool has no root'],
      },
    })
  })

  it('says a call naming no location names none', () => {
    const v = judge({ rules: [GIT], roots: {} })(CALL, 'fs_write', readable({ content: 'x' }))
    expect(v).toEqual({
      _tag: 'Refuse',
      refusal: {
        _tag: 'DeniedByRule',
        tool: 'fs_write',
        rule: GIT,
        unevaluable: ['it gives no location argument the tool declares'],
      },
    })
    if (v._tag === 'Refuse')
      expect(drawRefusal(v.refusal)).toContain('(it gives no location argument the tool declares)')
  })

  it('lists nothing unchecked when a location is inside the denied directory', () => {
    const v = judge({ rules: [GIT], roots: {} })(CALL, 'fs_move', readable({ from: '/p/.git/HEAD', to: 'rel/b' }))
    expect(v).toMatchObject({ _tag: 'Refuse', refusal: { _tag: 'DeniedByRule', unevaluable: [] } })
  })

  it('lists every unknown location, whatever the clean ones around it', () => {
    fc.assert(
      fc.property(
        fc.subarray(['path', 'from', 'to'], { minLength: 1 }),
        fc.subarray(['path', 'from', 'to']),
        (unknown, clean) => {
          const args: Record<string, unknown> = {}
          for (const k of clean) args[k] = '/elsewhere/x'
          for (const k of unknown) args[k] = 'relative'
          const v = judge({ rules: [GIT], roots: {} })(CALL, 'fs_write', readable(args))
          const expected = ['path', 'from', 'to']
            .filter((k) => unknown.includes(k))
            .map((k) => `${k} is relative and this tool has no root`)
          expect(v).toMatchObject({ _tag: 'Refuse', refusal: { _tag: 'DeniedByRule', unevaluable: expected } })
        },
      ),
    )
  })
})

describe('byGrants', () => {
  const q = questionAbout({ path: '/p/a' })

  it('leaves the question to the human when no grant matches', () => {
    expect(byGrants([], {})(q)).toBeUndefined()
    expect(byGrants([{ tool: 'web_get', decision: 'allow' }], {})(q)).toBeUndefined()
    expect(byGrants([{ tool: 'fs_write', decision: 'allow', under: '/q' }], {})(q)).toBeUndefined()
  })

  it('leaves the question to the human when the grant that decides asks', () => {
    expect(byGrants([{ tool: 'fs_write', decision: 'ask' }], {})(q)).toBeUndefined()
    expect(
      byGrants(
        [
          { tool: 'fs_*', decision: 'allow' },
          { tool: 'fs_write', decision: 'ask', under: '/p' },
        ],
        {},
      )(q),
    ).toBeUndefined()
  })

  it('allows what a grant allows, and refuses what one refuses, naming it', () => {
    expect(byGrants([{ tool: 'fs_write', decision: 'allow', under: '/p' }], {})(q)).toEqual<Verdict>({ _tag: 'Allow' })
    const no: Rule = { tool: 'fs_write', decision: 'deny', under: '/p' }
    expect(byGrants([no], {})(q)).toEqual<Verdict>({
      _tag: 'Refuse',
      refusal: { _tag: 'DeniedByGrant', tool: 'fs_write', rule: no },
    })
  })
})
