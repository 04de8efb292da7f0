// The openai SDK loop as the docs and the examples show it compiles, with `openai` installed, both under
// a user's plain `strict` and under this repository's stricter flags (exactOptionalPropertyTypes,
// noUncheckedIndexedAccess), and holds no type assertion: the mappers take the SDK's types in and give
// them out, so a host needs no filter and no cast.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const out = join(root, 'test', '.openai-md')

const blocks = [...readFileSync(join(root, 'docs', 'openai.md'), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(
  (m) => m[1] ?? '',
)
mkdirSync(out, { recursive: true })
const snippets = blocks.map((code, i) => {
  const file = join(out, `openai_md_${i}.ts`)
  writeFileSync(file, `${code}\nexport {}\n`)
  return file
})
afterAll(() => rmSync(out, { recursive: true, force: true }))

const files = [...snippets, join(root, 'examples', 'openai-loop.ts'), join(root, 'examples', 'openai-responses.ts')]

// the package's names resolved to the sources, as the root tsconfig maps them
const paths = Object.fromEntries(
  ['', 'mcp', 'openai'].map((n) => [
    n === '' ? 'toolstack' : `toolstack/${n}`,
    [n === '' ? './src/index.ts' : `./src/${n}/index.ts`],
  ]),
)
const plainStrict: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  types: ['node'],
  noEmit: true,
  baseUrl: root,
  paths,
}
const repoStrict: ts.CompilerOptions = {
  ...plainStrict,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  verbatimModuleSyntax: true,
}

const problemsUnder = (options: ts.CompilerOptions): Array<string> => {
  const program = ts.createProgram(files, options)
  return files.flatMap((f) =>
    ts
      .getPreEmitDiagnostics(program, program.getSourceFile(f))
      .map((d) => `${f.slice(root.length)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`),
  )
}

/** Every `x as T`, `<T>x` and `x!` in a file, with its line. */
const assertionsIn = (file: string): Array<string> => {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true)
  const found: Array<string> = []
  const visit = (node: ts.Node): void => {
    const isConst = ts.isAsExpression(node) && node.type.getText(source) === 'const'
    if ((ts.isAsExpression(node) && !isConst) || ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node))
      found.push(`${file.slice(root.length)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('the openai SDK loop, as docs/openai.md and the examples show it', () => {
  it('there is a block to check', () => {
    expect(snippets.length).toBeGreaterThan(0)
    expect(blocks.join('\n')).toContain('executeChatToolCalls(stack)(message.tool_calls)')
  })

  it('compiles under plain strict and under the repository’s flags', () => {
    expect(problemsUnder(plainStrict)).toEqual([])
    expect(problemsUnder(repoStrict)).toEqual([])
  }, 120_000)

  it('holds no type assertion', () => {
    expect(files.flatMap(assertionsIn)).toEqual([])
  })
})
