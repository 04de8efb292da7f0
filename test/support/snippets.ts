// The TypeScript blocks of README.md and docs/*.md, read once for the tests that compile them
// (test/snippets.test.ts) and run them (test/markdown.test.ts). A block's info string is one of:
//   ```ts                          compiled
//   ```ts run                      compiled, and run as a user runs it
//   ```ts no-compile: <reason>     a fragment by design, not compiled: the reason is required
// Any other word after `ts`, or TypeScript under another name (`typescript`, `tsx`, …), is a
// problem the compile test names, so a block is never skipped by a typo.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Snippet {
  /** The page, relative to the repository: `README.md`, `docs/openai.md`. */
  readonly doc: string
  /** The nth TypeScript block of its page, from 0. */
  readonly index: number
  /** The page's line of the block's first line of code, from 1. */
  readonly line: number
  readonly runs: boolean
  /** Why the block is not compiled (```ts no-compile: <reason>); undefined for a block that is. */
  readonly noCompile: string | undefined
  readonly code: string
}

export interface Snippets {
  readonly snippets: ReadonlyArray<Snippet>
  /** Fences that look like TypeScript but follow no convention above, as `page:line: why`. */
  readonly problems: ReadonlyArray<string>
}

/** README.md and every docs/*.md, relative to the repository. */
export const pages = (root: string): Array<string> => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]

const OTHER_NAMES = new Set(['typescript', 'tsx', 'mts', 'cts', 'js', 'javascript', 'mjs', 'jsx'])

/** The TypeScript blocks of one page. */
export const snippetsOf = (root: string, doc: string): Snippets => {
  const text = readFileSync(join(root, doc), 'utf8')
  const snippets: Array<Snippet> = []
  const problems: Array<string> = []
  for (const m of text.matchAll(/^```(\S*)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const lang = m[1] ?? ''
    const info = (m[2] ?? '').trim()
    const line = text.slice(0, m.index).split('\n').length + 1
    if (OTHER_NAMES.has(lang)) {
      problems.push(`${doc}:${line - 1}: a \`\`\`${lang} block: write \`\`\`ts (compiled), or show no code`)
      continue
    }
    if (lang !== 'ts') continue
    const noCompile = /^no-compile:\s*(\S.*)$/.exec(info)
    if (info !== '' && info !== 'run' && noCompile === null) {
      problems.push(
        `${doc}:${line - 1}: \`\`\`ts ${info}: write \`\`\`ts, \`\`\`ts run or \`\`\`ts no-compile: <reason>`,
      )
      continue
    }
    snippets.push({
      doc,
      index: snippets.length,
      line,
      runs: info === 'run',
      noCompile: noCompile?.[1],
      code: m[3] ?? '',
    })
  }
  return { snippets, problems }
}

/** The blocks of README.md and docs/*.md. */
export const allSnippets = (root: string): Snippets => {
  const each = pages(root).map((doc) => snippetsOf(root, doc))
  return { snippets: each.flatMap((s) => s.snippets), problems: each.flatMap((s) => s.problems) }
}

/** A block as a module of its own (so each block names its own imports, as a reader copying it needs). */
export const asModule = (s: Snippet): string =>
  /^\s*(import|export)\s/m.test(s.code) ? s.code : `${s.code}\nexport {}\n`
