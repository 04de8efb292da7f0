// Docs that run: the blocks of README.md and docs/ marked ```ts run are run as a user would run
// them (tsx, in a process of their own), and a `// stderr: …` comment in a block is a line its run
// must write. Every block is compiled by test/snippets.test.ts; both read the blocks with
// test/support/snippets.ts.
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { allSnippets, asModule } from './support/snippets.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'test', '.md')
const tsx = createRequire(import.meta.url).resolve('tsx/cli')

const blocks = allSnippets(root)
  .snippets.filter((s) => s.runs)
  .map((s) => ({ ...s, file: join(out, `${s.doc.replace(/[/.]/g, '_')}_${s.index}.ts`) }))
mkdirSync(out, { recursive: true })
for (const b of blocks) writeFileSync(b.file, asModule(b))
afterAll(() => rmSync(out, { recursive: true, force: true, maxRetries: 5 }))

describe('TypeScript in README.md and docs/, run', () => {
  it('there are blocks to run', () => {
    expect(blocks.length).toBeGreaterThan(0)
  })

  for (const b of blocks) {
    const name = `${b.doc}:${b.line - 1}`
    it(`${name} runs`, () => {
      const r = spawnSync(process.execPath, [tsx, relative(root, b.file)], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1' },
      })
      expect(r.stderr.replace(/^toolstack: .*\n/gm, ''), name).not.toMatch(/Error|error TS/)
      expect(r.status, r.stderr).toBe(0)
      for (const [, said] of b.code.matchAll(/\/\/ stderr: (.*)$/gm)) expect(r.stderr).toContain(said)
    }, 60_000)
  }
})
