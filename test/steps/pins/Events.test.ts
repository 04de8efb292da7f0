import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { DefinitionChange } from '../../../src/steps/pins/Diff.js'
import type { Flag } from '../../../src/steps/pins/Flags.js'
import type { DefinitionEvent } from '../../../src/steps/pins/Events.js'
import { drawDefinitionEvent, drawDriftRefusal } from '../../../src/steps/pins/Events.js'

const A = `sha256:${'a'.repeat(64)}`
const B = `sha256:${'b'.repeat(64)}`
const nothing: DefinitionChange = { added: [], removed: [], more: 0, schemaOtherwise: false, annotations: [] }
const widened: DefinitionChange = {
  ...nothing,
  added: ['note'],
  annotations: [
    { key: { text: 'readOnlyHint', cut: 0 }, was: { text: 'true', cut: 0 }, now: { text: 'absent', cut: 0 } },
  ],
}
const hidden: Flag = { rule: 'hidden-steps', where: 'description', excerpt: { text: 'Do not tell the user.', cut: 0 } }
const secret: Flag = { rule: 'files-or-secrets', where: 'description', excerpt: { text: '~/.ssh', cut: 0 } }

// anything a terminal acts on or a person cannot see, raw
const RAW_UNSAFE =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u{e0000}-\u{e007f}]/u

describe('drawDefinitionEvent', () => {
  it('a change since the pin: both hashes, what follows, what changed and the flags', () => {
    const e: DefinitionEvent = {
      _tag: 'DefinitionChanged',
      tool: 'add',
      pinned: A,
      hash: B,
      change: widened,
      flags: [hidden, secret],
      action: 'warn',
    }
    expect(drawDefinitionEvent(e)).toBe(
      `toolstack: the definition of "add" changed since it was pinned (sha256:aaaaaaaaaaaa… is now ${B}), ` +
        'served as it comes: schema: keys added: note; annotation readOnlyHint: true is now absent; ' +
        'flagged: hidden-steps (asks for steps kept from the user) in description: "Do not tell the user."; ' +
        'files-or-secrets (names files that hold secrets or configuration, or asks for secrets or the conversation) ' +
        'in description: "~/.ssh"',
    )
  })

  it('a renaming is new and not pinned; with nothing to show and no flags, the line ends with what follows', () => {
    const renamed: DefinitionEvent = {
      _tag: 'DefinitionChanged',
      tool: 'sum',
      pinned: undefined,
      hash: B,
      change: { ...nothing, renamedFrom: 'add' },
      flags: [],
      action: 'hold',
    }
    expect(drawDefinitionEvent(renamed)).toBe(
      `toolstack: the definition of "sum" is new (${B}) and not pinned, held (hidden) until an operator accepts it: ` +
        'renamed from "add"',
    )
    expect(drawDefinitionEvent({ ...renamed, pinned: A, change: nothing, action: 'refuse' })).toBe(
      `toolstack: the definition of "sum" changed since it was pinned (sha256:aaaaaaaaaaaa… is now ${B}), ` +
        'its calls refused until an operator accepts it',
    )
  })

  it("escapes and bounds the tool's name", () => {
    const e: DefinitionEvent = { _tag: 'DefinitionFlagged', tool: `a\u202eb${'c'.repeat(300)}`, hash: A, flags: [] }
    expect(drawDefinitionEvent(e)).toBe(
      `toolstack: the definition of "a\\\\u202eb${'c'.repeat(200 - 'a\\u202eb'.length)}" (${A}) is flagged: `,
    )
  })

  it('property: whatever the names, one line, escaped', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 })
    const action = fc.constantFrom<'warn' | 'hold' | 'refuse'>('warn', 'hold', 'refuse')
    fc.assert(
      fc.property(text, text, action, (tool, from, a) => {
        const change: DefinitionChange = { ...nothing, renamedFrom: from }
        for (const e of [
          { _tag: 'DefinitionChanged', tool, pinned: A, hash: B, change, flags: [], action: a },
          { _tag: 'DefinitionChanged', tool, pinned: undefined, hash: B, change, flags: [], action: a },
          { _tag: 'DefinitionFlagged', tool, hash: A, flags: [] },
        ] as const) {
          const line = drawDefinitionEvent(e)
          expect(line).not.toMatch(RAW_UNSAFE)
          expect(line).not.toMatch(/[\n\r\u2028\u2029]/)
        }
        const refusal = drawDriftRefusal({ tool, hash: B, pinned: A, flags: [], change, action: a })
        expect(refusal).not.toMatch(RAW_UNSAFE)
        expect(refusal).not.toMatch(/[\n\r\u2028\u2029]/)
      }),
    )
  })
})

describe('drawDriftRefusal', () => {
  const why =
    ', and its calls are refused until an operator accepts the new definition. Do not retry it; ' +
    'tell the user the tool changed and needs their review.'

  it('says why the call was not run, what changed when known, and what to do', () => {
    expect(drawDriftRefusal({ tool: 'add', hash: B, pinned: A, flags: [] })).toBe(
      `This call to "add" was not run: the tool's definition changed since it was pinned${why}`,
    )
    expect(drawDriftRefusal({ tool: 'add', hash: B, pinned: A, flags: [], change: nothing, action: 'hold' })).toBe(
      `This call to "add" was not run: the tool's definition changed since it was pinned${why}`,
    )
    expect(drawDriftRefusal({ tool: 'a\nb', hash: B, pinned: A, flags: [], change: widened, action: 'refuse' })).toBe(
      `This call to "a\\\\u000ab" was not run: the tool's definition changed since it was pinned ` +
        `(schema: keys added: note; annotation readOnlyHint: true is now absent)${why}`,
    )
  })
})
