// The two nested tools every adapter's nested-key tests call (issue 22, item 6): a zod
// object inside an object, and a discriminated union held by a property. Each comes with
// the input a model would write with one key it does not declare one level down, and the
// warning the audit owes for it, path and suggestion included.
import { z } from 'zod'
import type { ToolDeclaration, UnknownKeyWarning } from '../../src/index.js'

/** `read`: `{ path, opts: { encoding } }`. */
export const readSchema = z.object({ path: z.string(), opts: z.object({ encoding: z.string() }) })

/** `draw`: `{ shape }`, a circle (`radius`) or a square (`side`), told apart by `kind`. */
export const drawSchema = z.object({
  shape: z.discriminatedUnion('kind', [z.object({ kind: z.literal('circle'), radius: z.number() }), z.object({ kind: z.literal('square'), side: z.number() })]),
})

/** `encodng` is not `encoding`, one level down. */
export const READ_INPUT = '{"path":"a","opts":{"encodng":"utf8"}}'
/** `side` is a square's: the tag says circle, and the circle branch alone decides. */
export const DRAW_INPUT = '{"shape":{"kind":"circle","side":2}}'
/** The same stray keys in calls the tools' zod schemas accept (they strip the strays). */
export const READ_VALID_INPUT = '{"path":"a","opts":{"encoding":"utf8","encodng":"utf8"}}'
export const DRAW_VALID_INPUT = '{"shape":{"kind":"circle","radius":1,"side":2}}'
/** What the zod schemas leave of the valid inputs. */
export const READ_STRIPPED = { path: 'a', opts: { encoding: 'utf8' } }
export const DRAW_STRIPPED = { shape: { kind: 'circle', radius: 1 } }
/** A square's side under the square tag is declared: a call that says nothing. */
export const DRAW_CLEAN_INPUT = '{"shape":{"kind":"square","side":2}}'

/** The warning for `read` with `encodng` under `opts`, on the call `id`. */
export const readWarning = (id: string): UnknownKeyWarning => ({
  tool: 'read',
  unknownKeys: ['opts.encodng'],
  declaredKeys: ['opts', 'path'],
  id,
  suggestions: [{ key: 'opts.encodng', didYouMean: 'opts.encoding' }],
})

/** The warning for `draw` with `side` in a circle, on the call `id`: no circle key is close to `side`. */
export const drawWarning = (id: string): UnknownKeyWarning => ({ tool: 'draw', unknownKeys: ['shape.side'], declaredKeys: ['shape'], id, suggestions: [] })

/** The JSON Schema zod writes for `schema` (nested `additionalProperties: false`, `required`, the union as `oneOf` of `const` tags). */
export const jsonSchemaOf = (schema: z.ZodType): Record<string, unknown> => z.toJSONSchema(schema) as Record<string, unknown>

/** `read` and `draw` as declarations of a stack, their parameters the JSON Schema zod writes. */
export const nestedDeclarations: ReadonlyArray<ToolDeclaration> = [
  { type: 'function', function: { name: 'read', description: 'Reads a file', parameters: jsonSchemaOf(readSchema) } },
  { type: 'function', function: { name: 'draw', description: 'Draws a shape', parameters: jsonSchemaOf(drawSchema) } },
]
