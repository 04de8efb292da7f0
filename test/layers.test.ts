// The shape of src/ that lint cannot see: `import-x/no-cycle` passes over `import type`, so a
// cycle made of type imports (a module's types defined beside the code that uses the other)
// is found here; and a module over 500 lines says in its opening comment why it is one file.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src')

const modules = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )

// every relative specifier of an import or re-export, type-only ones included
const SPECIFIER = /^\s*(?:import|export)\b[^'";]*?\bfrom\s+'(\.[^']+)'|^\s*import\s+'(\.[^']+)'/gm

// comments (the @example blocks import the module they document) are not imports
const code = (file: string): string => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')

const importsOf = (file: string): ReadonlyArray<string> =>
  [...code(file).matchAll(SPECIFIER)].map((m) => resolve(dirname(file), (m[1] ?? m[2] ?? '').replace(/\.js$/, '.ts')))

const files = modules(src)
const graph = new Map(files.map((f) => [f, importsOf(f)]))

// the cycles reachable in `g`, each written as the path that closes it (depth-first, three colours)
export const cyclesOf = (g: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  const state = new Map<string, 'open' | 'done'>()
  const found: Array<ReadonlyArray<string>> = []
  const visit = (node: string, path: ReadonlyArray<string>): void => {
    if (state.get(node) === 'done') return
    if (state.get(node) === 'open') {
      found.push([...path.slice(path.indexOf(node)), node])
      return
    }
    state.set(node, 'open')
    for (const next of g.get(node) ?? []) visit(next, [...path, node])
    state.set(node, 'done')
  }
  for (const node of g.keys()) visit(node, [])
  return found
}

describe('the layers of src/', () => {
  it('the cycle finder finds a cycle of two and one of three, and none in a chain', () => {
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'a']])
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ]),
      ),
    ).toHaveLength(1)
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([])
  })

  it('reads type-only imports and re-exports', () => {
    const gateway = graph.get(join(src, 'gateway', 'catalog.ts')) ?? []
    expect(gateway).toContain(join(src, 'mcp', 'served.ts')) // an `import type` only
    expect(graph.get(join(src, 'gateway', 'index.ts'))).toContain(join(src, 'gateway', 'stores', 'store.ts'))
  })

  it('no module imports itself back, type imports included', () => {
    const cycles = cyclesOf(graph).map((c) => c.map((f) => relative(src, f)).join(' → '))
    expect(cycles).toEqual([])
  })

  it('the MCP adapters never import the gateway', () => {
    const mcp = files.filter((f) => relative(src, f).startsWith('mcp'))
    const up = mcp.flatMap((f) => (graph.get(f) ?? []).filter((i) => relative(src, i).startsWith('gateway')))
    expect(up).toEqual([])
  })

  it('a module over 500 lines says why it is one file, in its opening comment', () => {
    const long = files.filter((f) => readFileSync(f, 'utf8').split('\n').length > 500)
    const unexplained = long.filter((f) => !/^\/\*\*[\s\S]*?One file: [\s\S]*?\*\//.test(readFileSync(f, 'utf8')))
    expect(unexplained.map((f) => relative(src, f))).toEqual([])
  })
})
