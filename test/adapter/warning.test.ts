// src/adapter/warning.ts: a warning as the bounded record a framework's telemetry gets (whatever the model
// sent), and the options of an adapter whose warnings also go there (the host's onWarn still runs, first
// checked, and never silenced by the telemetry).
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import { auditSessions } from '../../src/combinators/UnknownKeys.js'
import { MAX_RECORDED_KEYS, recordingOptions, warningRecord } from '../../src/adapter/warning.js'
import { MAX_TELEMETRY_CHARS } from '../../src/kernel/describe.js'

const warning = (over: Partial<UnknownKeyWarning> = {}): UnknownKeyWarning => ({
  tool: 'read',
  id: 'c1',
  unknownKeys: ['ffset'],
  keys: [{ path: 'ffset', key: 'ffset', place: [] }],
  declaredKeys: ['offset', 'path'],
  suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
  ...over,
})

// what escapeControls writes as \uXXXX
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/

const strings = (r: ReturnType<typeof warningRecord>): ReadonlyArray<string> => [
  r.tool,
  r.call_id,
  ...r.unknown_keys,
  ...r.suggestions.flatMap((s) => [s.key, s.did_you_mean]),
  ...(r.via === undefined ? [] : [r.via]),
]

describe('warningRecord', () => {
  it('is the warning in plain members, via only when the warning has one', () => {
    expect(warningRecord(warning())).toEqual({
      tool: 'read',
      call_id: 'c1',
      unknown_keys: ['ffset'],
      unknown_key_count: 1,
      suggestions: [{ key: 'ffset', did_you_mean: 'offset' }],
    })
    expect(warningRecord(warning({ via: 'stack' }))).toMatchObject({ via: 'stack' })
  })

  it('whatever the model sent: at most MAX_RECORDED_KEYS keys and suggestions, every string cut and escaped, the count exact', () => {
    const text = fc.string({ unit: 'binary', maxLength: 600 })
    fc.assert(
      fc.property(
        text,
        text,
        fc.array(text, { maxLength: 60, size: 'max' }),
        fc.array(fc.record({ key: text, didYouMean: text }), { maxLength: 60, size: 'max' }),
        fc.option(text, { nil: undefined }),
        (tool, id, unknownKeys, suggestions, via) => {
          const r = warningRecord(
            warning({ tool, id, unknownKeys, suggestions, ...(via === undefined ? {} : { via }) }),
          )
          expect(r.unknown_key_count).toBe(unknownKeys.length)
          // the first MAX_RECORDED_KEYS of each, none dropped below it
          expect(r.unknown_keys).toHaveLength(Math.min(unknownKeys.length, MAX_RECORDED_KEYS))
          expect(r.suggestions).toHaveLength(Math.min(suggestions.length, MAX_RECORDED_KEYS))
          for (const s of strings(r)) {
            expect(s).not.toMatch(UNSAFE)
            // MAX_TELEMETRY_CHARS characters and the ellipsis, each at most \uXXXX
            expect(s.length).toBeLessThanOrEqual((MAX_TELEMETRY_CHARS + 1) * 6)
          }
        },
      ),
    )
  })
})

describe('recordingOptions', () => {
  afterEach(() => vi.restoreAllMocks())

  const sessionOf = (options: unknown) => auditSessions('here', options as never)()
  const warnOnce = (options: unknown): void => {
    const session = sessionOf(options)
    const catalogue = session.readListing([{ function: { name: 'read', parameters: { properties: { path: {} } } } }])
    session.check(catalogue, { id: 'c1', function: { name: 'read', arguments: '{"path":"a","pth":1}' } })
  }

  it('records each warning, then runs the host’s onWarn, an IO-returning one included', () => {
    const order: Array<string> = []
    warnOnce(
      recordingOptions(
        'here',
        'telemetry',
        { onWarn: (w: UnknownKeyWarning) => () => void order.push(`host ${w.tool}`) },
        (w) => order.push(`record ${w.tool}`),
      ),
    )
    expect(order).toEqual(['record read', 'host read'])
  })

  it('a record that throws does not silence onWarn; with no onWarn, the default line goes to stderr', () => {
    const said: Array<string> = []
    const fail = (): void => {
      throw new Error('exporter down')
    }
    warnOnce(recordingOptions('here', 'telemetry', { onWarn: (w: UnknownKeyWarning) => void said.push(w.tool) }, fail))
    expect(said).toEqual(['read'])
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    warnOnce(recordingOptions('here', 'telemetry', undefined, fail))
    expect(write).toHaveBeenCalledWith(
      expect.stringContaining('toolstack: read call c1 carried undeclared argument key "pth"'),
    )
  })

  it('records when the option is true, undefined or absent, and when no options are given at all', () => {
    const recorded: Array<string> = []
    const record = (w: UnknownKeyWarning): void => void recorded.push(w.id)
    const onWarn = (): void => {}
    warnOnce(recordingOptions('here', 'telemetry', { telemetry: true, onWarn }, record))
    warnOnce(recordingOptions('here', 'telemetry', { telemetry: undefined, onWarn }, record))
    warnOnce(recordingOptions('here', 'telemetry', { onWarn }, record))
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    warnOnce(recordingOptions('here', 'telemetry', undefined, record))
    expect(recorded).toEqual(['c1', 'c1', 'c1', 'c1'])
  })

  it('false records nothing and leaves the rest of the options as they are', () => {
    const recorded: Array<unknown> = []
    const said: Array<unknown> = []
    const options = recordingOptions(
      'here',
      'telemetry',
      { telemetry: false, tolerate: ['pth'], onWarn: (w: UnknownKeyWarning) => void said.push(w) },
      (w) => recorded.push(w),
    )
    expect(Object.keys(options ?? {}).sort()).toEqual(['onWarn', 'tolerate'])
    warnOnce(options)
    expect([recorded, said]).toEqual([[], []])
  })

  it('checks the option and onWarn at the door; other options are left to the audit', () => {
    const record = (): void => {}
    expect(() => recordingOptions('here', 'telemetry', { telemetry: 'on' }, record)).toThrow(
      'here: option "telemetry" must be a boolean, got the string "on"',
    )
    expect(() => recordingOptions('here', 'telemetry', { onWarn: 'loud' }, record)).toThrow(
      'here: option "onWarn" must be a function, got the string "loud"',
    )
    expect(() => sessionOf(recordingOptions('here', 'telemetry', 'loud', record))).toThrow(
      'here: options must be an object, got the string "loud"',
    )
    expect(() => sessionOf(recordingOptions('here', 'telemetry', { maxPair: 3 }, record))).toThrow(
      /here: unknown option "maxPair"/,
    )
  })
})
