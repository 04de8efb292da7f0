// Code as the docs show it compiles: every TypeScript block of README.md and docs/*.md, and every
// examples/*.ts, in one TypeScript program, under the repository's strict flags (strict,
// exactOptionalPropertyTypes, noUncheckedIndexedAccess, verbatimModuleSyntax), against the
// frameworks installed (ai, @mastra/core, @openai/agents, langchain, openai, @anthropic-ai/sdk, @google/genai,
// @anthropic-ai/claude-agent-sdk, the MCP SDK), with `toolstack/…` imported as a user imports it (the root tsconfig's `paths` map it to src/). Each
// block is a module of its own. None holds a type assertion: what the docs show needs no cast.
// A failure names the page and its line. Conventions: test/support/snippets.ts, docs/README.md.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { beforeAll, describe, expect, it } from 'vitest'
import { allSnippets, asModule } from './support/snippets.js'
import type { Snippet } from './support/snippets.js'

const root = fileURLToPath(new URL('..', import.meta.url))

// no-compile blocks are for fragments by design; a page that needs more says too little in code
const MAX_NO_COMPILE = 4

const { snippets, problems: conventionProblems } = allSnippets(root)
const compiled = snippets.filter((s) => s.noCompile === undefined)
const examples = readdirSync(join(root, 'examples'))
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => join(root, 'examples', f))

// each block a file that exists only in this program, beside the tests, so node_modules and the
// `paths` resolve from it as from any file of the repository
const virtual = new Map<string, Snippet>(
  compiled.map((s) => [join(root, 'test', '.snippets', `${s.doc.replace(/[/.]/g, '_')}_${s.index}.ts`), s]),
)

const base = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile)
const options: ts.CompilerOptions = {
  ...ts.parseJsonConfigFileContent(base.config, ts.sys, root).options,
  noEmit: true,
  // a block declares what it leaves to the reader, and may not use all of it
  noUnusedLocals: false,
  noUnusedParameters: false,
}

/** Where a position of a program file is, as a reader finds it: the page and its line for a block. */
const placeOf = (file: string, line0: number): string => {
  const s = virtual.get(file)
  return s === undefined ? `${file.slice(root.length)}:${line0 + 1}` : `${s.doc}:${s.line + line0}`
}

const compile = (): { readonly program: ts.Program; readonly problems: ReadonlyArray<string> } => {
  const host = ts.createCompilerHost(options)
  const readFile = host.readFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  host.readFile = (f) => {
    const s = virtual.get(f)
    return s === undefined ? readFile(f) : asModule(s)
  }
  host.fileExists = (f) => virtual.has(f) || fileExists(f)
  host.getSourceFile = (f, language, onError, create) => {
    const s = virtual.get(f)
    return s === undefined ? getSourceFile(f, language, onError, create) : ts.createSourceFile(f, asModule(s), language)
  }
  const files = [...virtual.keys(), ...examples]
  const program = ts.createProgram(files, options, host)
  const problems = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...files.flatMap((f) => ts.getPreEmitDiagnostics(program, program.getSourceFile(f))),
  ].map((d) => {
    const where =
      d.file === undefined || d.start === undefined
        ? '(the program)'
        : placeOf(d.file.fileName, d.file.getLineAndCharacterOfPosition(d.start).line)
    return `${where}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  })
  return { program, problems: [...new Set(problems)] }
}

/**
 * Every `x as T`, `<T>x` and `x!` of a file, with its place. `as const` is no assertion, and neither is
 * `JSON.parse(…) as T` in an example: it names the type of text the example wrote itself.
 */
const assertionsIn = (source: ts.SourceFile): Array<string> => {
  const found: Array<string> = []
  const allowed = (node: ts.AsExpression): boolean =>
    node.type.getText(source) === 'const' ||
    (!virtual.has(source.fileName) &&
      ts.isCallExpression(node.expression) &&
      node.expression.expression.getText(source) === 'JSON.parse')
  const visit = (node: ts.Node): void => {
    if (
      (ts.isAsExpression(node) && !allowed(node)) ||
      ts.isTypeAssertionExpression(node) ||
      ts.isNonNullExpression(node)
    )
      found.push(
        `${placeOf(source.fileName, source.getLineAndCharacterOfPosition(node.getStart(source)).line)}: ${node.getText(source)}`,
      )
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('TypeScript in README.md, docs/ and examples/, as a user compiles it', () => {
  let program: ts.Program
  let problems: ReadonlyArray<string> = []
  beforeAll(() => {
    ;({ program, problems } = compile())
  }, 120_000)

  it('there are blocks to check, the loops the issue names among them', () => {
    expect(compiled.length).toBeGreaterThan(20)
    expect(examples.length).toBeGreaterThan(5)
    const code = compiled.map((s) => s.code).join('\n')
    expect(code).toContain('executeChatToolCalls(stack)(message.tool_calls)')
    expect(code).toContain('toResponsesInput(response.output)')
  })

  it('every TypeScript fence follows the convention, and no-compile blocks are rare and say why', () => {
    expect(conventionProblems).toEqual([])
    const skipped = snippets.filter((s) => s.noCompile !== undefined)
    expect(
      skipped.length,
      `no-compile blocks: ${skipped.map((s) => `${s.doc}:${s.line - 1} (${String(s.noCompile)})`).join(', ')}`,
    ).toBeLessThanOrEqual(MAX_NO_COMPILE)
  })

  it('every block and example compiles under the repository’s strict flags', () => {
    expect(problems).toEqual([])
  })

  it('holds no type assertion', () => {
    const files = [...virtual.keys(), ...examples]
    expect(
      files.flatMap((f) =>
        assertionsIn(program.getSourceFile(f) ?? ts.createSourceFile(f, '', ts.ScriptTarget.ES2022)),
      ),
    ).toEqual([])
  })
})
