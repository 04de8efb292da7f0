// The audit against the official JSON-Schema-Test-Suite (fixtures/json-schema-test-suite/: the files
// about object keys, drafts 4 to 2020-12). The suite says whether each instance is valid; ajv says
// why an invalid one is (the oracle of which keys are undeclared). Three checks per case:
// - a valid instance is never reported, except where a place names its keys without closing the
//   object (the audit's one deliberate difference, listed below);
// - an instance invalid only because of undeclared keys (ajv's additionalProperties errors) has
//   exactly those keys reported, except where `additionalProperties: false` in one conjunct cannot
//   see its siblings' properties (the audit reads a place's conjuncts together; listed below);
// - the case's schema closed (`additionalProperties: false` added to each object schema that names
//   properties and composes nothing): what ajv then accepts, the audit never reports. This is what
//   exercises references ($id bases, $anchor, pointers), items and conditionals.
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import type { ErrorObject } from 'ajv'
import { Ajv } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { compileSchema, diffKeys } from '../../../src/index.js'

interface Case {
  readonly description: string
  readonly schema: unknown
  readonly tests: ReadonlyArray<{ readonly description: string; readonly data: unknown; readonly valid: boolean }>
}

const root = new URL('./fixtures/json-schema-test-suite/', import.meta.url)
const DRAFTS = ['draft4', 'draft6', 'draft7', 'draft2019-09', 'draft2020-12'] as const

/** Valid instances the audit reports: the place names its keys and nothing closes it. */
const HEARD_THOUGH_VALID: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  ['additionalProperties are allowed by default | additional properties are allowed', ['quux']],
  ["object properties validation | doesn't invalidate other properties", ['quux']],
  ['regexes are not anchored by default and are case sensitive | non recognized members are ignored', ['answer 1']],
  ['regexes are not anchored by default and are case sensitive | regexes are case sensitive', ['a_x_3']],
  ['patternProperties with Unicode property escape | Non-letter property name does not match pattern', ['123']],
  ['dependent subschema incompatible with root | no dependency', ['baz']],
])

/** Instances invalid by their keys that the audit does not report: a sibling conjunct declares the key. */
const SIBLING_DECLARES: ReadonlySet<string> = new Set([
  "dependentSchemas with additionalProperties | additionalProperties can't see bar",
  "dependentSchemas with additionalProperties | additionalProperties can't see bar even when foo2 is present",
  'dependent subschema incompatible with root | matches root',
  'dependent subschema incompatible with root | matches both',
  "ref creates new scope when adjacent to keywords | referenced subschema doesn't see annotations from properties",
])

const newAjv = (draft: (typeof DRAFTS)[number]) => {
  const options = { strict: false, allErrors: true, validateFormats: false }
  if (draft === 'draft2020-12') return new Ajv2020(options)
  if (draft === 'draft2019-09') return new Ajv2019(options)
  const ajv = new Ajv(options)
  if (draft === 'draft6')
    ajv.addMetaSchema(
      // resolved as an import is (a Stryker sandbox has no node_modules of its own beside the tests)
      JSON.parse(
        readFileSync(createRequire(import.meta.url).resolve('ajv/dist/refs/json-schema-draft-06.json'), 'utf8'),
      ),
    )
  return ajv
}

// one instance per draft (building one compiles its meta-schemas, most of this file's time), emptied after each
// compile so that cases reusing an `$id` do not meet
const instances = new Map<(typeof DRAFTS)[number], ReturnType<typeof newAjv>>()
const ajvOf = (draft: (typeof DRAFTS)[number]) => {
  const ajv = instances.get(draft) ?? newAjv(draft)
  instances.set(draft, ajv)
  return ajv
}

// ajv reads draft 4 as draft 7 (it has no draft-4 class); where they differ it cannot compile, or
// disagrees with the suite, and the case is left to the suite's own verdict
const compiled = (draft: (typeof DRAFTS)[number], schema: unknown) => {
  try {
    const s =
      draft === 'draft4' && typeof schema === 'object' && schema !== null ? { ...schema, $schema: undefined } : schema
    return ajvOf(draft).compile(s as object)
  } catch {
    return undefined
  } finally {
    ajvOf(draft).removeSchema()
  }
}

// an ajv error's key as the audit's path: /a/0/b + key → a[].b.key (the suite's names need no quoting)
const pathOfError = (e: ErrorObject): string => {
  const at = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? '[]' : `.${s.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('')
    .replace(/^\./, '')
  const key = String((e.params as { additionalProperty?: unknown }).additionalProperty)
  if (at === '') return /[.[\]"]/.test(key) ? `[${JSON.stringify(key)}]` : key
  return /[ .[\]"]/.test(key) ? `${at}[${JSON.stringify(key)}]` : `${at}.${key}`
}

const COMPOSES = ['allOf', 'anyOf', 'oneOf', '$ref', 'if', 'dependentSchemas', 'dependencies', 'patternProperties']

/** The schema with `additionalProperties: false` wherever an object schema names properties and composes nothing. */
const closed = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(closed)
  if (typeof schema !== 'object' || schema === null) return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'enum' || k === 'const' ? v : closed(v)
  const s = schema as Record<string, unknown>
  const names = typeof s['properties'] === 'object' && s['properties'] !== null
  if (names && !('additionalProperties' in s) && !COMPOSES.some((k) => k in s)) out['additionalProperties'] = false
  return out
}

const STRAY = 'zz stray'

/** The instance with a stray key added to each of its objects, and the paths of those strays. */
const withStrays = (data: unknown): { readonly data: unknown; readonly paths: ReadonlySet<string> } => {
  const paths = new Set<string>()
  const go = (v: unknown, at: string): unknown => {
    if (Array.isArray(v)) return v.map((e) => go(e, `${at}[]`))
    if (typeof v !== 'object' || v === null) return v
    const out: Record<string, unknown> = {}
    for (const [k, e] of Object.entries(v)) out[k] = go(e, at === '' ? k : `${at}.${k}`)
    out[STRAY] = 1
    paths.add(at === '' ? STRAY : `${at}[${JSON.stringify(STRAY)}]`)
    return out
  }
  return { data: go(data, ''), paths }
}

const heardOf = (schema: unknown, data: unknown): ReadonlyArray<string> =>
  diffKeys(compileSchema(schema))(data as Record<string, unknown>).map((k) => k.path)

for (const draft of DRAFTS) {
  describe(`JSON-Schema-Test-Suite ${draft}`, () => {
    for (const file of readdirSync(new URL(`${draft}/`, root)).sort()) {
      const cases = JSON.parse(readFileSync(new URL(`${draft}/${file}`, root), 'utf8')) as ReadonlyArray<Case>
      it(`${file.replace(/\.json$/, '')}: valid instances unreported, undeclared keys heard, closed twins agree with ajv`, () => {
        let checked = 0

        for (const c of cases) {
          const validate = compiled(draft, c.schema)
          const twin = closed(c.schema)
          const validateTwin = compiled(draft, twin)
          for (const t of c.tests) {
            checked++
            const name = `${c.description} | ${t.description}`
            const heard = heardOf(c.schema, t.data)
            if (t.valid) expect(heard, name).toEqual(HEARD_THOUGH_VALID.get(name) ?? [])
            const agrees = validate !== undefined && validate(t.data) === t.valid
            const errors = agrees ? (validate.errors ?? []) : []
            if (!t.valid && errors.length > 0 && errors.every((e) => e.keyword === 'additionalProperties'))
              expect(heard, name).toEqual(
                SIBLING_DECLARES.has(name) ? [] : [...new Set(errors.map(pathOfError))].sort(),
              )
            if (validateTwin === undefined || !t.valid || !validateTwin(t.data)) continue
            expect(heardOf(twin, t.data), `closed: ${name}`).toEqual(HEARD_THOUGH_VALID.get(name) ?? [])
            // a stray key in each object: what ajv refuses as undeclared is heard, and nothing but strays is
            const strays = withStrays(t.data)
            if (validateTwin(strays.data)) continue
            const refused = validateTwin.errors ?? []
            if (!refused.every((e) => e.keyword === 'additionalProperties' && pathOfError(e).includes(STRAY))) continue
            const heardStrays = heardOf(twin, strays.data)
            for (const e of refused) expect(heardStrays, `strays: ${name}`).toContain(pathOfError(e))
            for (const h of heardStrays) expect(strays.paths, `strays: ${name}`).toContain(h)
          }
        }
        expect(checked).toBeGreaterThan(0)
      })
    }
  })
}
