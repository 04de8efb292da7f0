// Mutation marks stay out of the logic: at most 20 `Stryker disable` comments in src/
// (docs/mutation.md says how a survivor is handled instead). Counted here, in `npm test`,
// because StrykerJS itself runs out of CI.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const src = fileURLToPath(new URL('../src', import.meta.url))
const MAX_MARKS = 20

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )

/** Each `Stryker disable` comment of `text`, as `line: text`. */
const marksIn = (text: string): ReadonlyArray<string> =>
  text.split('\n').flatMap((line, i) => (/Stryker\s+disable/i.test(line) ? [`${i + 1}: ${line.trim()}`] : []))

describe('mutation marks', () => {
  it(`src/ holds at most ${MAX_MARKS} Stryker disable comments`, () => {
    const files = sources(src)
    expect(files.length).toBeGreaterThan(50)
    const marks = files.flatMap((f) => marksIn(readFileSync(f, 'utf8')).map((m) => `${f.slice(src.length + 1)}:${m}`))
    expect(marks.length, marks.join('\n')).toBeLessThanOrEqual(MAX_MARKS)
  })

  it('counts every form of the mark, and nothing else', () => {
    const text = [
      '// Stryker disable next-line StringLiteral: equivalent',
      'const a = 1 // Stryker disable all',
      '/* stryker  disable next-line all */',
      '// Stryker restore all',
      "const s = 'a Stryker run'",
    ].join('\n')
    expect(marksIn(text).map((m) => m.split(':')[0])).toEqual(['1', '2', '3'])
  })
})
