import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { ToolDefinition } from '../../../src/steps/pins/Definition.js'
import {
  MAX_DEFINITION_CHARS,
  MAX_TOOL_CHARS,
  decodePin,
  definitionOf,
  hashDefinition,
  pinOf,
} from '../../../src/steps/pins/Definition.js'

const AT = '2026-12-05T00:00:00.000Z'

// the hash of a JSON value as its text is written here (sorted keys by hand, no blanks): the oracle
const sha = (text: string): string => `sha256:${createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')}`

// a definition whose canonical text is exactly `chars` long: `{"description":"…","name":"x"}`
const ofLength = (chars: number): ToolDefinition => ({ name: 'x', description: 'a'.repeat(chars - 29) })

describe('definitionOf', () => {
  it('leaves out what the declaration does not carry (no member set to undefined)', () => {
    expect(definitionOf({ type: 'function', function: { name: 'add' } })).toStrictEqual({ name: 'add' })
    expect(Object.keys(definitionOf({ type: 'function', function: { name: 'add' } }, undefined))).toEqual(['name'])
    expect(
      definitionOf({ type: 'function', function: { name: 'add', description: 'Adds', parameters: {} } }, null),
    ).toStrictEqual({ name: 'add', description: 'Adds', inputSchema: {}, annotations: null })
  })
})

describe('pinOf', () => {
  it(`keeps a definition whole up to ${MAX_DEFINITION_CHARS} characters of canonical JSON, and no longer`, () => {
    expect(hashDefinition(ofLength(MAX_DEFINITION_CHARS)).text).toHaveLength(MAX_DEFINITION_CHARS)
    const whole = ofLength(MAX_DEFINITION_CHARS)
    expect(pinOf('x', whole, AT)).toStrictEqual({
      tool: 'x',
      hash: hashDefinition(whole).hash,
      at: AT,
      definition: whole,
    })
    const long = ofLength(MAX_DEFINITION_CHARS + 1)
    expect(pinOf('x', long, AT)).toStrictEqual({ tool: 'x', hash: hashDefinition(long).hash, at: AT })
  })
})

describe('decodePin', () => {
  const d = { name: 'x', description: 'one' }
  const { hash } = hashDefinition(d)

  it('reads back the definition it was given, member for member', () => {
    const full = { name: 'x', description: 'one', inputSchema: { type: 'object' }, annotations: { title: 'X' } }
    const h = hashDefinition(full).hash
    expect(decodePin({ tool: 'x', hash: h, at: AT, definition: full })).toStrictEqual({
      tool: 'x',
      hash: h,
      at: AT,
      definition: full,
    })
    // nothing added that was not there
    const bare = { name: 'x' }
    expect(decodePin({ tool: 'x', hash: sha('{"name":"x"}'), at: AT, definition: bare })?.definition).toStrictEqual(
      bare,
    )
  })

  it('drops a definition whose name or description is not a string, even when it hashes to the pin', () => {
    const numbered = { name: 5 }
    expect(decodePin({ tool: 'x', hash: sha('{"name":5}'), at: AT, definition: numbered })).toStrictEqual({
      tool: 'x',
      hash: sha('{"name":5}'),
      at: AT,
    })
    const described = { name: 'x', description: 5 }
    const h = sha('{"description":5,"name":"x"}')
    expect(decodePin({ tool: 'x', hash: h, at: AT, definition: described })).toStrictEqual({
      tool: 'x',
      hash: h,
      at: AT,
    })
  })

  it('drops a definition holding a description that is not a string, though what is left hashes to the pin', () => {
    const h = sha('{"name":"x"}')
    expect(decodePin({ tool: 'x', hash: h, at: AT, definition: { name: 'x', description: 5 } })).toStrictEqual({
      tool: 'x',
      hash: h,
      at: AT,
    })
  })

  it('drops a definition JSON cannot hash (nested too deep), keeping the pin', () => {
    let deep: unknown = {}
    for (let i = 0; i < 200; i++) deep = { a: deep }
    expect(decodePin({ tool: 'x', hash, at: AT, definition: { name: 'x', inputSchema: deep } })).toStrictEqual({
      tool: 'x',
      hash,
      at: AT,
    })
  })

  it(`keeps a definition of ${MAX_DEFINITION_CHARS} characters, and drops a longer one though it matches its hash`, () => {
    const whole = ofLength(MAX_DEFINITION_CHARS)
    const long = ofLength(MAX_DEFINITION_CHARS + 1)
    expect(decodePin({ tool: 'x', hash: hashDefinition(whole).hash, at: AT, definition: whole })?.definition).toEqual(
      whole,
    )
    expect(decodePin({ tool: 'x', hash: hashDefinition(long).hash, at: AT, definition: long })).toStrictEqual({
      tool: 'x',
      hash: hashDefinition(long).hash,
      at: AT,
    })
  })

  it(`takes a tool name of up to ${MAX_TOOL_CHARS} characters, and only a string hash`, () => {
    expect(decodePin({ tool: 't'.repeat(MAX_TOOL_CHARS), hash, at: AT })?.tool).toBe('t'.repeat(MAX_TOOL_CHARS))
    expect(decodePin({ tool: 't'.repeat(MAX_TOOL_CHARS + 1), hash, at: AT })).toBeUndefined()
    // a list of one hash reads as the hash when coerced to a string; it is not one
    expect(decodePin({ tool: 'x', hash: [hash], at: AT })).toBeUndefined()
  })

  it('reads a time as at most 40 characters, and what is not a string as no time', () => {
    expect(decodePin({ tool: 'x', hash })).toStrictEqual({ tool: 'x', hash, at: '' })
    expect(decodePin({ tool: 'x', hash, at: 5 })).toStrictEqual({ tool: 'x', hash, at: '' })
    expect(decodePin({ tool: 'x', hash, at: 'z'.repeat(100) })?.at).toBe('z'.repeat(40))
  })

  it('property: whatever a store holds, what is read is a pin or nothing, and a definition kept hashes to its pin', () => {
    const valid = fc
      .record(
        { name: fc.string({ maxLength: 6 }), description: fc.string({ maxLength: 6 }) },
        { requiredKeys: ['name'] },
      )
      .map((def) => ({ def, hash: hashDefinition(def).hash }))
    const stored = fc.oneof(
      fc.anything(),
      fc.record(
        {
          tool: fc.oneof(fc.string({ maxLength: 8 }), fc.anything()),
          hash: fc.oneof(fc.constant(hash), fc.string({ maxLength: 8 }), fc.anything()),
          at: fc.oneof(fc.string({ maxLength: 60 }), fc.anything()),
          definition: fc.oneof(fc.constant(d), fc.anything(), fc.jsonValue()),
        },
        { requiredKeys: [] },
      ),
      fc
        .tuple(valid, fc.string({ minLength: 1, maxLength: 8 }))
        .map(([{ def, hash: h }, tool]) => ({ tool, hash: h, at: AT, definition: def })),
    )
    fc.assert(
      fc.property(stored, (u) => {
        const p = decodePin(u)
        if (p === undefined) return
        const given = u as Record<string, unknown>
        expect(p.tool).toBe(given['tool'])
        expect(p.hash).toBe(given['hash'])
        expect(typeof p.tool === 'string' && p.tool.length >= 1 && p.tool.length <= MAX_TOOL_CHARS).toBe(true)
        expect(p.hash).toMatch(/^sha256:[0-9a-f]{64}$/)
        expect(p.at).toBe(typeof given['at'] === 'string' ? given['at'].slice(0, 40) : '')
        if (p.definition !== undefined) {
          expect(sha(JSON.stringify(sortedDeep(p.definition)))).toBe(p.hash)
          expect(typeof p.definition.name).toBe('string')
        }
      }),
    )
  })
})

// a JSON value with every object's members sorted, so JSON.stringify writes its canonical text (for the
// plain strings and objects the property draws)
const sortedDeep = (u: unknown): unknown => {
  if (Array.isArray(u)) return u.map(sortedDeep)
  if (typeof u !== 'object' || u === null) return u
  const o = u as Record<string, unknown>
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, sortedDeep(o[k])]),
  )
}
