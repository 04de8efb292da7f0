import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { SeenSet } from '../../../src/steps/audit/SeenSet.js'
import { emptySeenSet, emptySeenSetOf, firstSeen } from '../../../src/index.js'
import {
  MAX_ID_CHARS,
  MAX_KEY_CHARS,
  hasSeen,
  isFull,
  pairStats,
  rememberedKey,
} from '../../../src/steps/audit/SeenSet.js'

/** Every pair of a list, each counted by one call, from the empty set. */
const seenOf = (pairs: ReadonlyArray<readonly [string, string]>, from: SeenSet = emptySeenSet): SeenSet =>
  pairs.reduce((seen, [tool, key]) => firstSeen(tool, [key])(seen)[1], from)

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

describe('SeenSet: model', () => {
  it('is tagged SeenSet, empty or not, whatever its capacity', () => {
    expect(emptySeenSet._tag).toBe('SeenSet')
    expect(emptySeenSetOf(3)._tag).toBe('SeenSet')
    expect(firstSeen('t', ['a'])(emptySeenSetOf(3))[1]._tag).toBe('SeenSet')
  })
})

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

describe('emptySeenSetOf', () => {
  it('makes an empty set of any whole capacity of at least 1, 1 included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (capacity) => {
        const seen = emptySeenSetOf(capacity)
        expect(seen.capacity).toBe(capacity)
        expect(seen.size).toBe(0)
      }),
    )
    expect(emptySeenSetOf(1).capacity).toBe(1)
  })

  it.each([0, -1, 1.5, 0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1])(
    'refuses a capacity of %s with a TypeError that names it',
    (capacity) => {
      expect(() => emptySeenSetOf(capacity)).toThrow(TypeError)
      expect(() => emptySeenSetOf(capacity)).toThrow(
        `emptySeenSetOf: capacity must be a whole number of at least 1, got ${String(capacity)}`,
      )
    },
  )
})

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('rememberedKey', () => {
  it(`remembers a key of up to ${MAX_KEY_CHARS} characters as itself`, () => {
    fc.assert(
      fc.property(fc.string({ maxLength: MAX_KEY_CHARS }), (key) => {
        expect(rememberedKey(key)).toBe(key)
      }),
    )
    const longest = 'k'.repeat(MAX_KEY_CHARS)
    expect(rememberedKey(longest)).toBe(longest)
  })

  it('remembers a longer key by its first 48 characters and a printable (hex) SHA-256 digest, longer than any key kept whole', () => {
    fc.assert(
      fc.property(fc.string({ minLength: MAX_KEY_CHARS + 1, maxLength: 400 }), (key) => {
        const r = rememberedKey(key)
        expect(r.startsWith(key.slice(0, 48))).toBe(true)
        // 32 bytes of digest are 64 hex characters
        expect(r.slice(48)).toMatch(/^…#[0-9a-f]{64}$/)
        expect(r.length).toBeGreaterThan(MAX_KEY_CHARS)
      }),
    )
    expect(rememberedKey('k'.repeat(MAX_KEY_CHARS + 1))).not.toBe(rememberedKey('k'.repeat(MAX_KEY_CHARS + 2)))
  })

  it("a key spelled as another key's remembered form is a pair of its own", () => {
    const long = 'k'.repeat(200)
    const [, seen] = firstSeen('t', [long])(emptySeenSet)
    const [fresh] = firstSeen('t', [rememberedKey(long)])(seen)
    expect(fresh).toEqual([rememberedKey(long)])
  })
})

describe('firstSeen', () => {
  it('remembers a tool as a key is: a long name by its start and digest, so a 500 KB name costs bytes, not itself', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ minLength: 1, maxLength: 4 }), (tool, tail) => {
        const [fresh, seen] = firstSeen(tool, ['k'], 'c1')(emptySeenSet)
        expect(fresh).toEqual(['k'])
        // the same name built afresh finds the pair; a name differing only at its end does not
        const [again] = firstSeen(`${tool}`.slice(0), ['k'], 'c2')(seen)
        expect(again).toEqual([])
        expect(hasSeen(tool, 'k')(seen)).toBe(true)
        expect(hasSeen(tool + tail, 'k')(seen)).toBe(false)
        const [stat] = pairStats(seen)
        expect(stat?.tool).toBe(tool.length <= MAX_KEY_CHARS ? tool : rememberedKey(tool))
        expect(stat?.tool.length).toBeLessThanOrEqual(Math.max(MAX_KEY_CHARS, 114 + 48 + 2))
      }),
    )
    const huge = 't'.repeat(500_000)
    const [, seen] = firstSeen(huge, ['k'])(emptySeenSet)
    expect(pairStats(seen)[0]?.tool.length).toBeLessThan(200)
    expect(pairStats(firstSeen(huge.slice(0, -1) + 'u', ['k'])(seen)[1])).toHaveLength(2)
  })

  it('remembers no id for a call counted without one', () => {
    const [, seen] = firstSeen('t', ['a'])(emptySeenSet)
    expect(pairStats(seen)).toEqual([{ tool: 't', key: 'a', calls: 1, firstId: '' }])
  })

  it(`keeps a first id of up to ${MAX_ID_CHARS} characters whole`, () => {
    const id = 'i'.repeat(MAX_ID_CHARS)
    const [, seen] = firstSeen('t', ['a'], id)(emptySeenSet)
    expect(pairStats(seen)[0]?.firstId).toBe(id)
  })

  it(`keeps the start of a longer first id, marked so it is not taken for an id of just those ${MAX_ID_CHARS} characters`, () => {
    fc.assert(
      fc.property(fc.string({ minLength: MAX_ID_CHARS + 1, maxLength: 300 }), (id) => {
        const firstId = (i: string): string | undefined =>
          pairStats(firstSeen('t', ['a'], i)(emptySeenSet)[1])[0]?.firstId
        const kept = firstId(id)
        expect(kept?.startsWith(id.slice(0, MAX_ID_CHARS))).toBe(true)
        expect(kept).not.toBe(firstId(id.slice(0, MAX_ID_CHARS)))
        expect((kept ?? '').length).toBeLessThan(MAX_ID_CHARS + 8)
      }),
    )
  })

  it('counts a call that repeats a key in its list once, for a new pair and for a known one', () => {
    const [fresh, seen] = firstSeen('t', ['a', 'b', 'a'], 'c1')(emptySeenSet)
    expect(fresh).toEqual(['a', 'b'])
    expect(pairStats(seen)).toEqual([
      { tool: 't', key: 'a', calls: 1, firstId: 'c1' },
      { tool: 't', key: 'b', calls: 1, firstId: 'c1' },
    ])
    const [again, more] = firstSeen('t', ['a', 'a'], 'c2')(seen)
    expect(again).toEqual([])
    expect(pairStats(more)[0]).toEqual({ tool: 't', key: 'a', calls: 2, firstId: 'c1' })
  })

  it('past its capacity, answers a new pair every time but remembers no more than capacity pairs, within one call too', () => {
    const [fresh, seen] = firstSeen('t', ['a', 'b', 'c', 'd'], 'c1')(emptySeenSetOf(2))
    expect(fresh).toEqual(['a', 'b', 'c', 'd'])
    expect(seen.size).toBe(2)
    expect(isFull(seen)).toBe(true)
    expect(pairStats(seen).map((p) => p.key)).toEqual(['a', 'b'])
    expect(hasSeen('t', 'c')(seen)).toBe(false)
    const [again, same] = firstSeen('t', ['c', 'a'], 'c2')(seen)
    expect(again).toEqual(['c'])
    expect(same.size).toBe(2)
    expect(pairStats(same)[0]).toEqual({ tool: 't', key: 'a', calls: 2, firstId: 'c1' })
  })

  it('never remembers more pairs than its capacity, whatever the calls (model: the first capacity distinct pairs)', () => {
    const pairArb = fc.tuple(fc.constantFrom('t', 'u'), fc.constantFrom('a', 'b', 'c', 'd', 'e'))
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(pairArb, { minLength: 1, maxLength: 4 }), { maxLength: 10 }),
        (capacity, calls) => {
          let seen = emptySeenSetOf(capacity)
          const kept = new Set<string>()
          for (const call of calls) {
            // one call is of one tool
            const tool = call[0]?.[0] ?? 't'
            const keys = call.map(([, k]) => k)
            const [fresh, next] = firstSeen(tool, keys)(seen)
            const expected: Array<string> = []
            for (const k of new Set(keys)) {
              const id = JSON.stringify([tool, k])
              if (kept.has(id)) continue
              expected.push(k)
              if (kept.size < capacity) kept.add(id)
            }
            expect(fresh).toEqual(expected)
            seen = next
          }
          expect(seen.size).toBe(kept.size)
          expect(
            pairStats(seen)
              .map((p) => JSON.stringify([p.tool, p.key]))
              .sort(),
          ).toEqual([...kept].sort())
        },
      ),
    )
  })
})

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

describe('pairStats', () => {
  const byCodeUnits = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0)

  it('lists every pair sorted by tool, then key, by UTF-16 code units', () => {
    const nameArb = fc.oneof(fc.constantFrom('a', 'b', 'B', 'ab', 'é', '\u{1F600}', ''), fc.string({ maxLength: 3 }))
    fc.assert(
      fc.property(fc.array(fc.tuple(nameArb, nameArb), { maxLength: 40 }), (pairs) => {
        const expected = [...new Map(pairs.map(([t, k]) => [JSON.stringify([t, k]), [t, k] as const])).values()].sort(
          ([t1, k1], [t2, k2]) => byCodeUnits(t1, t2) || byCodeUnits(k1, k2),
        )
        expect(pairStats(seenOf(pairs)).map((p) => [p.tool, p.key])).toEqual(expected)
      }),
    )
  })

  it('puts a later tool after an earlier one whatever their keys', () => {
    const seen = seenOf([
      ['b', 'a'],
      ['a', 'z'],
      ['b', 'c'],
      ['a', 'b'],
    ])
    expect(pairStats(seen).map((p) => `${p.tool}/${p.key}`)).toEqual(['a/b', 'a/z', 'b/a', 'b/c'])
  })
})

describe('memory per remembered pair, measured on the heap', () => {
  it('remembers a tool by a copy of its name: names cut from large texts keep none of them alive', () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const n = 500
    // a name cut from a 20 KB text, as a parser's string may be: a slice that would keep the text alive
    const nameOf = (i: number): string => `tool_${i}_`.padEnd(20_000, 'x').slice(0, 40)
    let seen = firstSeen(nameOf(-1), ['k'])(emptySeenSet)[1]
    gc()
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < n; i++) seen = firstSeen(nameOf(i), ['k'])(seen)[1]
    gc()
    gc()
    const perTool = (process.memoryUsage().heapUsed - before) / n
    expect(seen.size).toBe(n + 1)
    expect(perTool).toBeLessThan(2048)
  })

  it('stays bounded whatever the length of the ids and keys a model sends (copies, not slices)', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { withUnknownKeyAudit, fromTools } = await import('../../../src/index.js')
    const tools = withUnknownKeyAudit({ onWarn: () => undefined, onDiagnostic: () => undefined })(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'w', parameters: { type: 'object', properties: { path: {} } } },
          },
          run: () => TE.right(''),
        },
      ]),
    )
    await tools.toolsForLlm()
    const long = 'x'.repeat(10_000)
    const n = 2_000
    const send = async (from: number, to: number): Promise<void> => {
      for (let done = from; done < to; done += 100) {
        // each string built by the parser from a larger one, the case a slice would keep alive
        const batch = Array.from({ length: 100 }, (_, j) => ({
          id: `${done + j}${long}`,
          function: { name: 'w', arguments: `{"path":"a","${done + j}${long}":1}` },
        }))
        await tools.executeToolCalls(batch)()
      }
    }
    await send(0, 200) // warm: code and caches made once are not per pair
    gc()
    gc()
    const before = process.memoryUsage().heapUsed
    await send(200, 200 + n)
    gc()
    gc()
    const perPair = (process.memoryUsage().heapUsed - before) / n
    expect(tools.stats()).toHaveLength(n + 200)
    expect(perPair).toBeLessThan(2048)
  })
})
