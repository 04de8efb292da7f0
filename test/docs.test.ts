// Docs that run: every `@example` in src/ is executed as a test, against the sources,
// with `assert` in scope (as in fp-ts's docs-ts).
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'test', '.docs')

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : []
  })

interface Example {
  readonly file: string
  readonly index: number
  readonly code: string
}

const examplesOf = (file: string): Array<Example> => {
  const text = readFileSync(file, 'utf8')
  const found: Array<Example> = []
  for (const block of text.match(/\/\*\*[\s\S]*?\*\//g) ?? []) {
    const lines = block.split('\n').map((l) => l.replace(/^\s*\/?\*+\/?\s?/, ''))
    let collecting = false
    let code: Array<string> = []
    const flush = (): void => {
      if (code.length > 0) found.push({ file, index: found.length, code: code.join('\n') })
      code = []
    }
    for (const line of lines) {
      if (line.startsWith('@example')) {
        flush()
        collecting = true
      } else if (line.startsWith('@')) {
        flush()
        collecting = false
      } else if (collecting) code.push(line)
    }
    flush()
  }
  return found
}

const all = sources(join(root, 'src')).flatMap(examplesOf)
mkdirSync(out, { recursive: true })
afterAll(() => rmSync(out, { recursive: true, force: true, maxRetries: 5 }))

describe('@example blocks', () => {
  it('there are examples to run', () => {
    if (all.length < 5) throw new Error(`only ${all.length} @example blocks found`)
  })

  for (const ex of all) {
    const name = `${relative(root, ex.file)} #${ex.index + 1}`
    it(name, async () => {
      const to = (file: string): string => relative(out, file).replace(/\\/g, '/').replace(/\.ts$/, '.js')
      // the package's names as the package maps them; a relative import (the example of a
      // name no entry point exports) from the example's own module
      const body = ex.code
        .replace(/from '(\.\.?\/[^']*)\.js'/g, (_, p: string) => `from '${to(join(dirname(ex.file), `${p}.ts`))}'`)
        .replace(
          /from 'toolstack\/(mcp|gateway|ai-sdk|openai|openai-agents|langchain|anthropic|google|claude-agent|otel)'/g,
          (_, n: string) => `from '${to(join(root, 'src', n, 'index.ts'))}'`,
        )
        .replace(/from 'toolstack\/extend'/g, `from '${to(join(root, 'src', 'extend.ts'))}'`)
        .replace(/from 'toolstack'/g, `from '${to(join(root, 'src', 'index.ts'))}'`)
      const file = join(out, `${relative(join(root, 'src'), ex.file).replace(/[/\\.]/g, '_')}_${ex.index}.ts`)
      writeFileSync(file, `import assert from 'node:assert'\n${body}\nexport {}\n`)
      await import(file)
    })
  }
})
