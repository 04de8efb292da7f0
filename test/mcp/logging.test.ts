// The pure steps of logging passed through: levels, and an upstream's message made safe to show.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { LOG_LEVELS, boundLogMessage, isLogLevel, mostVerbose, newLogHub } from '../../src/mcp/logging.js'

// the characters a terminal acts on or hides, as the oracle knows them (C0, DEL, C1, bidi and zero-width marks)
// eslint-disable-next-line no-control-regex -- the oracle names the control characters themselves
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/

const strings = (u: unknown): ReadonlyArray<string> =>
  typeof u === 'string'
    ? [u]
    : Array.isArray(u)
      ? u.flatMap(strings)
      : typeof u === 'object' && u !== null
        ? Object.entries(u).flatMap(([k, v]) => [k, ...strings(v)])
        : []

describe('mostVerbose', () => {
  it('is the level of least severity, whatever the order', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...LOG_LEVELS)), (levels) => {
        const oracle = [...LOG_LEVELS].find((l) => levels.includes(l))
        expect(mostVerbose(levels)).toBe(oracle)
      }),
    )
  })
})

describe('boundLogMessage', () => {
  it('keeps the level; every string it passes on is escaped and bounded, whatever the upstream sent', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LOG_LEVELS),
        fc.option(fc.string({ unit: 'binary', maxLength: 300 }), { nil: undefined }),
        fc.jsonValue({ maxDepth: 4 }),
        fc.string({ unit: 'binary', maxLength: 20 }),
        (level, logger, data, hostile) => {
          const sent = { level, ...(logger === undefined ? {} : { logger }), data: [hostile, data] }
          const out = boundLogMessage(sent)
          expect(out?.level).toBe(level)
          if (logger === undefined) expect(out).not.toHaveProperty('logger')
          for (const s of strings(out?.logger === undefined ? out?.data : [out.logger, out.data])) {
            expect(s).not.toMatch(UNSAFE)
            expect(s.length).toBeLessThanOrEqual(6 * 16_001)
          }
        },
      ),
    )
  })

  it('sends data whose JSON is too long as that JSON, cut', () => {
    const out = boundLogMessage({ level: 'info', data: { big: 'x'.repeat(20_000) } })
    expect(typeof out?.data).toBe('string')
    expect((out?.data as string).length).toBe(16_001)
  })

  it('refuses params that are not a message', () => {
    for (const u of [undefined, null, 'info', { level: 'loud', data: 1 }, { data: 1 }])
      expect(boundLogMessage(u)).toBe(undefined)
    expect(isLogLevel('warning')).toBe(true)
    expect(isLogLevel('warn')).toBe(false)
  })
})

describe('newLogHub', () => {
  it('tells its listeners each new most verbose level, and not the same one twice', () => {
    const hub = newLogHub()
    const told: Array<string> = []
    const off = hub.onLevel((l) => told.push(l))
    const a = hub.open(() => undefined)
    const b = hub.open(() => undefined)
    a.setLevel('error')
    b.setLevel('error')
    b.setLevel('debug')
    b.close()
    off()
    a.setLevel('info')
    expect(told).toEqual(['error', 'debug', 'error'])
    expect(a.wants('info')).toBe(true)
    expect(a.wants('debug')).toBe(false)
  })
})
