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

// a value `levels` objects or arrays deep (as `shape` says at each level), with the leaf 'leaf' at the bottom
const nested = (levels: number, shape: ReadonlyArray<boolean>): unknown => {
  let v: unknown = 'leaf'
  for (let i = levels - 1; i >= 0; i--) v = shape[i % shape.length] === true ? [v] : { k: v }
  return v
}

// the oracle: the same value with the container found at level 16 (the top one is level 0) told as too deep
const cutAt16 = (u: unknown, level: number): unknown => {
  if (typeof u !== 'object' || u === null) return u
  if (level === 16) return '(nested too deep)'
  return Array.isArray(u) ? [cutAt16(u[0], level + 1)] : { k: cutAt16((u as { k: unknown }).k, level + 1) }
}

describe('boundLogMessage, its bounds', () => {
  it('keeps 16 levels of objects and arrays, and tells a deeper one as too deep, whatever the nesting', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        (levels, shape) => {
          const data = nested(levels, shape)
          expect(boundLogMessage({ level: 'info', data })?.data).toEqual(cutAt16(data, 0))
          if (levels <= 16) expect(boundLogMessage({ level: 'info', data })?.data).toEqual(data)
        },
      ),
    )
  })

  it('cuts a string of the data at 4,000 characters, a key and the logger at 200', () => {
    const [s4000, s4001, k200, k201] = ['a'.repeat(4_000), 'b'.repeat(4_001), 'c'.repeat(200), 'd'.repeat(201)]
    const out = boundLogMessage({ level: 'debug', logger: k201, data: { [k200]: s4000, [k201]: [s4001] } })
    expect(out).toEqual({
      level: 'debug',
      logger: `${'d'.repeat(200)}…`,
      data: { [k200]: s4000, [`${'d'.repeat(200)}…`]: [`${'b'.repeat(4_000)}…`] },
    })
    expect(boundLogMessage({ level: 'debug', logger: k200, data: null })).toEqual({
      level: 'debug',
      logger: k200,
      data: null,
    })
  })

  it('sends data whose JSON is 16,000 characters as data, one character more as that JSON cut and escaped', () => {
    // JSON.stringify of a string of n characters is n + 2 long
    const fits = boundLogMessage({ level: 'info', data: 'x'.repeat(15_998) })
    expect(fits?.data).toBe(`${'x'.repeat(4_000)}…`)
    // JSON escapes C0 controls itself, not a bidi mark: `["\u202e","x…x"]` is 15,994 + 8 characters, cut to 16,000
    const over = boundLogMessage({ level: 'info', data: ['\u202e', 'x'.repeat(15_994)] })
    const text = String(over?.data)
    expect([text.slice(0, 12), text.length, text.slice(-3)]).toEqual(['["\\u202e","x', 6 + 5 + 15_994 + 1, 'xx…'])
  })

  it('data that has no JSON (none, a cycle, a BigInt) is sent as "(unreadable)"; a logger that is not a string is left out', () => {
    const cycle: Record<string, unknown> = {}
    cycle['self'] = cycle
    for (const data of [undefined, cycle, 1n, () => 1])
      expect(boundLogMessage({ level: 'error', logger: 7, data })).toEqual({ level: 'error', data: '(unreadable)' })
    expect(boundLogMessage({ level: 'error', data: 3 })).toEqual({ level: 'error', data: 3 })
  })
})

describe('newLogHub, each session', () => {
  it('is sent every level until it sets one, then that level and above; a level that is none of them always', () => {
    const hub = newLogHub()
    const got: Array<string> = []
    const s = hub.open((m) => got.push(String(m.data)))
    expect(hub.level()).toBe(undefined)
    for (const l of LOG_LEVELS) expect(s.wants(l)).toBe(true)
    hub.broadcast({ level: 'debug', data: 'd1' })
    s.setLevel('warning')
    expect(LOG_LEVELS.filter((l) => s.wants(l))).toEqual(['warning', 'error', 'critical', 'alert', 'emergency'])
    s.setLevel('emergency')
    expect(s.wants('loud')).toBe(true)
    expect(s.wants('alert')).toBe(false)
    hub.broadcast({ level: 'alert', data: 'a1' })
    hub.broadcast({ level: 'emergency', data: 'e1' })
    expect(got).toEqual(['d1', 'e1'])
  })

  it('one that cannot be sent to, or a listener that throws, costs the others nothing', () => {
    const hub = newLogHub()
    const got: Array<string> = []
    hub.open(() => {
      throw new Error('gone')
    })
    hub.open((m) => got.push(`b ${m.level}`))
    const told: Array<string> = []
    hub.onLevel(() => {
      throw new Error('listener')
    })
    hub.onLevel((l) => told.push(l))
    hub.broadcast({ level: 'info', data: 1 })
    hub.open(() => undefined).setLevel('notice')
    expect(got).toEqual(['b info'])
    expect(told).toEqual(['notice'])
  })

  it('closed, counts no more: the level goes back to the others’, and is not told once none is left', () => {
    const hub = newLogHub()
    const told: Array<string> = []
    hub.onLevel((l) => told.push(l))
    const a = hub.open(() => undefined)
    const b = hub.open(() => undefined)
    a.setLevel('critical')
    b.setLevel('debug')
    b.close()
    b.close()
    expect(hub.level()).toBe('critical')
    a.close()
    expect(hub.level()).toBe(undefined)
    expect(told).toEqual(['critical', 'debug', 'critical'])
  })
})
