import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LineSplitter } from '../../src/cli/lines.js'
import { splitLines } from '../../src/cli/lines.js'

// cut at arbitrary positions, empty pieces left out
const cutAt = (whole: Buffer, cuts: ReadonlyArray<number>): Array<Buffer> => {
  const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b)
  const out: Array<Buffer> = []
  let prev = 0
  for (const c of [...at, whole.length]) {
    if (c > prev) out.push(whole.subarray(prev, c))
    prev = c
  }
  return out
}

// The model: the bytes split at every LF; a last piece counts when it is not empty.
const model = (bytes: Buffer): Array<string> => {
  const parts = bytes.toString('latin1').split('\n')
  if (parts.at(-1) === '') parts.pop()
  return parts
}

const run = (
  make: (sink: { line: (b: Buffer) => void }) => LineSplitter,
  chunks: ReadonlyArray<Buffer>,
): Array<string> => {
  const out: Array<string> = []
  const s = make({ line: (b) => out.push(b.toString('latin1')) })
  // a chunk is handed over and never touched again, as streams hand them over
  for (const c of chunks) s.push(Buffer.from(c))
  s.end()
  return out
}

const bytes = fc
  .array(fc.oneof(fc.constantFrom(0x0a, 0x0d, 0x7b), fc.integer({ min: 0, max: 255 })), { maxLength: 80 })
  .map((b) => Buffer.from(b))

describe('splitLines', () => {
  it('gives every line, whole and in order, wherever the chunks end', () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 10 }), (b, cuts) => {
        expect(run((sink) => splitLines(sink), cutAt(b, cuts))).toEqual(model(b))
      }),
    )
  })

  it('passes over exactly the lines declined as they start, wherever the chunks end', () => {
    fc.assert(
      fc.property(
        bytes,
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.array(fc.boolean(), { minLength: 1 }),
        (b, cuts, answers) => {
          let asked = 0
          const want = (): boolean => answers[asked++ % answers.length] as boolean
          const expected = model(b).filter((_, i) => answers[i % answers.length])
          expect(run((sink) => splitLines(sink, { wants: want }), cutAt(b, cuts))).toEqual(expected)
          // asked once per line, at its start
          expect(asked).toBe(model(b).length)
        },
      ),
    )
  })

  it('passes over each line longer than the limit, telling its length, and gives every other line whole', () => {
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 10 }), fc.nat(12), (b, cuts, max) => {
        const out: Array<string> = []
        const s = splitLines(
          { line: (l) => out.push(l.toString('latin1')), tooLong: (n) => out.push(`too long: ${n}`) },
          { maxBytes: max },
        )
        for (const c of cutAt(b, cuts)) s.push(Buffer.from(c))
        s.end()
        expect(out).toEqual(model(b).map((l) => (l.length > max ? `too long: ${l.length}` : l)))
      }),
    )
  })
})
