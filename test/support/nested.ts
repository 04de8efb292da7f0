// The two nested tools every adapter's nested-key tests call (issue 22, item 6): a zod
// object inside an object, and a discriminated union held by a property. Each comes with
// the input a model would write with one key it does not declare one level down, and the
// warning the audit owes for it, path and suggestion included; and what the adapters'
// tests share around them: the calls a model makes, a stack of the two behind the audit,
// and what it owes once it has heard them.
import { pipe } from 'fp-ts/lib/function.js'
import { expect } from 'vitest'
import { z } from 'zod'
import type { ToolDeclaration, UnknownKeyWarning } from '../../src/index.js'
import { fromTools, withUnknownKeyAudit } from '../../src/index.js'

/** `read`: `{ path, opts: { encoding } }`. */
export const readSchema = z.object({ path: z.string(), opts: z.object({ encoding: z.string() }) })

/** `draw`: `{ shape }`, a circle (`radius`) or a square (`side`), told apart by `kind`. */
export const drawSchema = z.object({
  shape: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('circle'), radius: z.number() }),
    z.object({ kind: z.literal('square'), side: z.number() }),
  ]),
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
  keys: [{ path: 'opts.encodng', key: 'encodng', place: ['opts'] }],
  declaredKeys: ['opts', 'path'],
  id,
  suggestions: [{ key: 'opts.encodng', didYouMean: 'opts.encoding' }],
})

/** The warning for `draw` with `side` in a circle, on the call `id`: no circle key is close to `side`. */
export const drawWarning = (id: string): UnknownKeyWarning => ({
  tool: 'draw',
  unknownKeys: ['shape.side'],
  keys: [{ path: 'shape.side', key: 'side', place: ['shape'] }],
  declaredKeys: ['shape'],
  id,
  suggestions: [],
})

/** The JSON Schema zod writes for `schema` (nested `additionalProperties: false`, `required`, the union as `oneOf` of `const` tags). */
export const jsonSchemaOf = (schema: z.ZodType): Record<string, unknown> =>
  z.toJSONSchema(schema) as Record<string, unknown>

/** `read` and `draw` as declarations of a stack, their parameters the JSON Schema zod writes. */
export const nestedDeclarations: ReadonlyArray<ToolDeclaration> = [
  { type: 'function', function: { name: 'read', description: 'Reads a file', parameters: jsonSchemaOf(readSchema) } },
  { type: 'function', function: { name: 'draw', description: 'Draws a shape', parameters: jsonSchemaOf(drawSchema) } },
]

/** A call a model makes: the tool's name and the JSON it wrote, under the call id `id`. */
export interface NestedCall {
  readonly id: string
  readonly tool: string
  readonly input: string
}

/** The two calls of the issue, under the ids `readId` and `drawId`. */
export const strayCalls = (readId: string, drawId: string): ReadonlyArray<NestedCall> => [
  { id: readId, tool: 'read', input: READ_INPUT },
  { id: drawId, tool: 'draw', input: DRAW_INPUT },
]

/** The same strays in calls the zod schemas accept, under the ids `readId` and `drawId`. */
export const validCalls = (readId: string, drawId: string): ReadonlyArray<NestedCall> => [
  { id: readId, tool: 'read', input: READ_VALID_INPUT },
  { id: drawId, tool: 'draw', input: DRAW_VALID_INPUT },
]

/** A square's side under the square tag, under the call id `id`: a call that says nothing. */
export const cleanCall = (id: string): NestedCall => ({ id, tool: 'draw', input: DRAW_CLEAN_INPUT })

/** What a user's zod `read` and `draw` run with for `validCalls`: the input zod left. */
export const STRIPPED_RUNS: ReadonlyArray<readonly [string, unknown]> = [
  ['read', READ_STRIPPED],
  ['draw', DRAW_STRIPPED],
]
/** What a user's zod `draw` runs with for `cleanCall`: all of it. */
export const CLEAN_RUN = ['draw', { shape: { kind: 'square', side: 2 } }] as const

/** What the audit counts once it has heard the issue's calls `calls` times, the first under `c1` and `c2`. */
export const nestedStats = (calls: number) => [
  { tool: 'draw', key: 'shape.side', calls, firstId: 'c2' },
  { tool: 'read', key: 'opts.encodng', calls, firstId: 'c1' },
]

/** What a tool of `nestedStack` runs with for `calls`: each call's arguments as the model wrote them. */
export const ranWith = (calls: ReadonlyArray<NestedCall>): Array<readonly [string, unknown]> =>
  calls.map((c) => [c.tool, JSON.parse(c.input)] as const)

/**
 * `declarations` behind the audit, recording the warnings and what each tool ran with;
 * a tool answers `answer` of its name and arguments (by default `ran <name>`).
 */
export const nestedStack = (
  declarations: ReadonlyArray<ToolDeclaration> = nestedDeclarations,
  answer: (name: string, args: Record<string, unknown>) => string = (name) => `ran ${name}`,
) => {
  const warnings: Array<UnknownKeyWarning> = []
  const ran: Array<readonly [string, unknown]> = []
  const stack = pipe(
    fromTools(
      declarations.map((declaration) => ({
        declaration,
        run: (args: Record<string, unknown>) => (
          ran.push([declaration.function.name, args]),
          answer(declaration.function.name, args)
        ),
      })),
    ),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
  )
  return { stack, warnings, ran }
}

/**
 * The issue's calls twice through an adapter over `nestedStack()`: `turn` hands the stack
 * `calls` the adapter's way and gives back what the model was answered, by call id, each
 * answer `answerOf` a tool's text. The stack hears each stray once, by its path; its tools
 * run with the model's own keys; the second time nothing new is said, and it is counted.
 */
export const expectStackHearsTheIssue = async (
  { stack, warnings, ran }: ReturnType<typeof nestedStack>,
  turn: (calls: ReadonlyArray<NestedCall>) => Promise<ReadonlyMap<string, unknown>>,
  answerOf: (text: string) => unknown,
): Promise<void> => {
  const first = await turn(strayCalls('c1', 'c2'))
  expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
  expect(ran).toStrictEqual(ranWith(strayCalls('c1', 'c2')))
  expect(first.get('c1')).toStrictEqual(answerOf('ran read'))
  expect(first.get('c2')).toStrictEqual(answerOf('ran draw'))

  await turn(strayCalls('c3', 'c4'))
  expect(warnings).toHaveLength(2)
  expect(ran).toHaveLength(4)
  expect(stack.stats()).toStrictEqual(nestedStats(2))
}
