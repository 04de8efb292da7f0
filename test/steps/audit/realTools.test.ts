// The audit against the tools real MCP servers publish (their listings recorded in fixtures/tools/):
// arguments each schema accepts (made from the schema, checked by ajv) are never reported, and a
// misspelling of any key they hold is heard, at its path. The oracles are ajv and the arguments' own
// keys; neither reads the audit's code.
import { readFileSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { compileSchema, diffKeys } from '../../../src/index.js'
import { cleanText } from '../../../src/steps/audit/Schema.js'
import { keysOf, misspell, seeded, validValue } from '../../support/validArgs.js'

interface Listing {
  readonly source: string
  readonly tools: ReadonlyArray<{ readonly name: string; readonly inputSchema: Record<string, unknown> }>
}

const dir = new URL('./fixtures/tools/', import.meta.url)
const listings: ReadonlyArray<readonly [string, Listing]> = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Listing])

const ajvFor = (schema: Record<string, unknown>) =>
  String(schema['$schema'] ?? '').includes('2020-12')
    ? new Ajv2020({ strict: false, validateFormats: false })
    : new Ajv({ strict: false, validateFormats: false })

// a path written apart from pathOf: array positions as [], names quoted where they could be taken for a path
const render = (at: ReadonlyArray<string | number>, key: string): string => {
  let out = ''
  for (const [i, s] of [...at, key].entries()) {
    if (typeof s === 'number') out += '[]'
    else if (s === '' || s === '*' || (i === 0 ? /[.[\]"]/ : /[.[\]" ]/).test(s)) out += `[${JSON.stringify(s)}]`
    else out += i === 0 ? s : `.${s}`
  }
  return out
}

const renamed = (value: unknown, at: ReadonlyArray<string | number>, from: string, to: string): unknown => {
  const copy = structuredClone(value) as Record<string | number, unknown>
  let o: Record<string | number, unknown> = copy
  for (const s of at) o = o[s] as Record<string | number, unknown>
  const entries = Object.entries(o).map(([k, v]) => [k === from ? to : k, v] as const)
  for (const k of Object.keys(o)) delete o[k]
  for (const [k, v] of entries)
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  return copy
}

const SEEDS = 12

// per server, how many valid calls the text check read unparsed, of how many
const readUnparsed = new Map<string, readonly [number, number]>()

describe('the real tools', () => {
  it('are 150 tools of 9 servers', () => {
    expect(listings.map(([n]) => n).sort()).toEqual([
      'everything',
      'filesystem',
      'firecrawl',
      'github',
      'memory',
      'notion',
      'playwright',
      'slack',
      'tavily',
    ])
    expect(listings.reduce((n, [, l]) => n + l.tools.length, 0)).toBe(150)
  })

  for (const [server, listing] of listings) {
    it(`${server}: never reports arguments its schemas accept, and hears every misspelt key`, () => {
      let valid = 0
      let misspelt = 0
      let read = 0
      for (const tool of listing.tools) {
        const validate = ajvFor(tool.inputSchema).compile(tool.inputSchema)
        const shape = compileSchema(tool.inputSchema)
        const diff = diffKeys(shape)
        // the same calls as texts, read unparsed where the tool allows: a misspelt one is never passed as clean
        const clean = cleanText(shape)
        for (let seed = 0; seed < SEEDS; seed++) {
          const rand = seeded(seed * 7919 + tool.name.length)
          const open = new WeakSet<object>()
          const value = validValue(tool.inputSchema, rand, seed % 3 === 0, open)
          if (typeof value !== 'object' || value === null || Array.isArray(value) || !validate(value)) continue
          valid++
          expect(diff(value as Record<string, unknown>), `${tool.name} ${JSON.stringify(value)}`).toEqual([])
          if (clean?.(JSON.stringify(value)) === true) read++
          for (const { at, key } of keysOf(value)) {
            const wrong = misspell(key, rand)
            const chain = at.reduce<Array<unknown>>(
              (os, s) => [...os, (os.at(-1) as Record<string | number, unknown>)[s]],
              [value],
            )
            const holder = chain.at(-1)
            if (wrong === key || Object.prototype.hasOwnProperty.call(holder, wrong)) continue
            // a record's own keys (what `additionalProperties` declares) are data, and in an object a union also
            // takes as any object, nothing is declared, at any depth: no key there is a misspelling
            if (key === 'k1' || key === 'k2' || chain.some((o) => typeof o === 'object' && open.has(o as object)))
              continue
            misspelt++
            const call = renamed(value, at, key, wrong) as Record<string, unknown>
            const heard = diff(call).map((k) => k.path)
            expect(heard, `${tool.name}: ${render(at, key)} → ${wrong}`).toEqual([render(at, wrong)])
            expect(clean?.(JSON.stringify(call)) ?? false, `${tool.name}: ${render(at, wrong)} read as clean`).toBe(
              false,
            )
          }
        }
      }
      expect(valid).toBeGreaterThanOrEqual(listing.tools.length * SEEDS * 0.5)
      expect(misspelt).toBeGreaterThan(0)
      readUnparsed.set(server, [read, valid])
    })
  }

  // what the text check is for: the real servers' valid calls (86 % of them when this was written: objects a
  // discriminator decides, records and tuples are parsed) go through the audit unparsed
  it('most of their valid calls are read unparsed, on every server', () => {
    const all = [...readUnparsed.values()]
    expect(all).toHaveLength(9)
    for (const [server, [read, valid]] of readUnparsed) expect(read / valid, server).toBeGreaterThan(0.6)
    const [read, valid] = all.reduce(([r, v], [a, b]) => [r + a, v + b], [0, 0])
    expect(read / valid).toBeGreaterThan(0.8)
  })
})
