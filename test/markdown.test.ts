// Docs that run: every ```ts block of README.md and docs/ is type-checked against the
// sources, as a module of its own (so each block names its own imports, as a reader
// copying it needs); the blocks marked ```ts run are run too, as a user would run
// them (tsx, in a process of their own), and a `// stderr: …` comment in a block is a
// line its run must write.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'test', '.md')
const tsx = createRequire(import.meta.url).resolve('tsx/cli')

interface Block {
  readonly doc: string
  readonly index: number
  readonly runs: boolean
  readonly code: string
  readonly file: string
}

const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

const blocksOf = (doc: string): Array<Block> => {
  const text = readFileSync(join(root, doc), 'utf8')
  const found: Array<Block> = []
  for (const m of text.matchAll(/^```ts( run)?\n([\s\S]*?)^```$/gm)) {
    const index = found.length
    found.push({
      doc,
      index,
      runs: m[1] !== undefined,
      code: m[2] ?? '',
      file: join(out, `${doc.replace(/[/.]/g, '_')}_${index}.ts`),
    })
  }
  return found
}

const blocks = docs.flatMap(blocksOf)
mkdirSync(out, { recursive: true })
for (const b of blocks)
  writeFileSync(b.file, b.code.includes('import ') || b.code.includes('export ') ? b.code : `${b.code}\nexport {}\n`)
afterAll(() => rmSync(out, { recursive: true, force: true }))

// the package's own names, resolved to the sources, as the root tsconfig does
const base = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile)
const parsed = ts.parseJsonConfigFileContent(base.config, ts.sys, root)
const options: ts.CompilerOptions = {
  ...parsed.options,
  noEmit: true,
  noUnusedLocals: false,
  noUnusedParameters: false,
}

describe('TypeScript in README.md and docs/', () => {
  it('there are blocks to check, and some to run', () => {
    expect(blocks.length).toBeGreaterThan(10)
    expect(blocks.some((b) => b.runs)).toBe(true)
  })

  it('every block type-checks', () => {
    const program = ts.createProgram(
      blocks.map((b) => b.file),
      options,
    )
    const problems = blocks.flatMap((b) =>
      ts
        .getPreEmitDiagnostics(program, program.getSourceFile(b.file))
        .map(
          (d) =>
            `${b.doc} block ${b.index + 1}, line ${d.file === undefined || d.start === undefined ? '?' : d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
        ),
    )
    expect(problems).toEqual([])
  }, 120_000)

  for (const b of blocks.filter((x) => x.runs)) {
    it(`${b.doc} block ${b.index + 1} runs`, () => {
      const r = spawnSync(process.execPath, [tsx, relative(root, b.file)], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1' },
      })
      expect(r.stderr.replace(/^toolstack: .*\n/gm, ''), `${b.doc} block ${b.index + 1}`).not.toMatch(/Error|error TS/)
      expect(r.status, r.stderr).toBe(0)
      for (const [, said] of b.code.matchAll(/\/\/ stderr: (.*)$/gm)) expect(r.stderr).toContain(said)
    }, 60_000)
  }
})
