// The fenced blocks of one language in a page of the repository, in order: for tests that check or run what
// a page shows.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The body of every ```LANG block of `doc` (a path from the repository's root). */
export const blocksOf = (doc: string, lang: string): Array<string> =>
  [...readFileSync(join(root, doc), 'utf8').matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (m) => m[1] ?? '',
  )
