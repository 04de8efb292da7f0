// A small public face: the root exports at most 60 names, none deprecated, and no name
// is exported both by the root and by `toolstack/extend`. The names are read with the
// TypeScript checker from the entry points' sources, which is what `tsc` writes into
// dist/esm/index.d.ts and dist/esm/extend.d.ts (no build needed).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const MAX_ROOT_NAMES = 60

interface Exported {
  readonly name: string
  readonly deprecated: boolean
}

const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
}

/** The names each entry point exports, with whether the declaration behind it says `@deprecated`. */
const exportsOf = (entries: ReadonlyArray<string>, host?: ts.CompilerHost): ReadonlyArray<ReadonlyArray<Exported>> => {
  const program = ts.createProgram(entries, options, host)
  const checker = program.getTypeChecker()
  return entries.map((entry) => {
    const file = program.getSourceFile(entry)
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file)
    if (module === undefined) throw new Error(`${entry} is not a module`)
    return checker.getExportsOfModule(module).map((s) => {
      const target = (s.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(s) : s
      const deprecated = (target.declarations ?? []).some((d) =>
        ts.getJSDocTags(d).some((tag) => tag.tagName.text === 'deprecated'),
      )
      return { name: s.name, deprecated }
    })
  })
}

/** What is wrong with a root and an extend entry point, in words; empty when nothing is. */
const problems = (rootNames: ReadonlyArray<Exported>, extendNames: ReadonlyArray<Exported>): ReadonlyArray<string> => {
  const extend = new Set(extendNames.map((e) => e.name))
  return [
    ...(rootNames.length > MAX_ROOT_NAMES
      ? [`the root exports ${rootNames.length} names, more than ${MAX_ROOT_NAMES}`]
      : []),
    ...[...rootNames, ...extendNames].filter((e) => e.deprecated).map((e) => `${e.name} is deprecated`),
    ...rootNames.filter((e) => extend.has(e.name)).map((e) => `${e.name} is exported by the root and by extend`),
  ]
}

describe('the public face', () => {
  const [rootNames = [], extendNames = []] = exportsOf([join(root, 'src', 'index.ts'), join(root, 'src', 'extend.ts')])

  it(`the root exports at most ${MAX_ROOT_NAMES} names, none deprecated; extend shares none of them`, () => {
    expect(rootNames.length).toBeGreaterThan(20)
    expect(extendNames.length).toBeGreaterThan(5)
    expect(problems(rootNames, extendNames)).toEqual([])
  })

  it('the root keeps what a user composes with', () => {
    const names = rootNames.map((e) => e.name)
    for (const n of [
      'withUnknownKeyAudit',
      'withReasons',
      'withPolicy',
      'registry',
      'fromTools',
      'fromAsync',
      'toAsync',
      'Provider',
      'ToolCall',
      'ToolDeclaration',
      'ToolResult',
    ]) {
      expect(names).toContain(n)
    }
    for (const n of [
      'extractDeclarations',
      'parseArgs',
      'diffKeys',
      'firstSeen',
      'compileSchema',
      'pathOf',
      'formatWarning',
      'UnknownKeyWarning',
    ])
      expect(names).toContain(n)
  })

  it('the check fails on a root too large, a deprecated name, or a name in both entry points', () => {
    const many = Array.from({ length: MAX_ROOT_NAMES + 1 }, (_, i) => `export const n${i} = ${i}`).join('\n')
    const sources = new Map([
      ['/virtual/big.ts', many],
      [
        '/virtual/old.ts',
        '/** @deprecated since 0.2.0 */\nexport const old = 1\nexport const fresh = 2\nexport type { Kept } from "./kept.js"',
      ],
      ['/virtual/kept.ts', '/** @deprecated use something else */\nexport type Kept = string'],
      ['/virtual/ext.ts', 'export const fresh = 2'],
    ])
    const base = ts.createCompilerHost(options)
    const host: ts.CompilerHost = {
      ...base,
      fileExists: (f) => sources.has(f) || base.fileExists(f),
      directoryExists: (d) => d === '/virtual' || (base.directoryExists?.(d) ?? false),
      readFile: (f) => sources.get(f) ?? base.readFile(f),
      getSourceFile: (f, v) => {
        const text = sources.get(f)
        return text === undefined ? base.getSourceFile(f, v) : ts.createSourceFile(f, text, v)
      },
    }
    const [big = [], old = [], ext = []] = exportsOf(['/virtual/big.ts', '/virtual/old.ts', '/virtual/ext.ts'], host)
    expect(problems(big, [])).toEqual([`the root exports ${MAX_ROOT_NAMES + 1} names, more than ${MAX_ROOT_NAMES}`])
    expect(problems(old, ext)).toEqual([
      'old is deprecated',
      'Kept is deprecated',
      'fresh is exported by the root and by extend',
    ])
  })
})
