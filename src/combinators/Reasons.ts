/**
 * `withReasons`: every call carries the model's reason for it, for the human watching. The model is
 * shown an optional `reason` argument on each tool; the provider underneath never receives it, while
 * the call the host records keeps it.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, right } from 'fp-ts/lib/Either.js'
import type { Option } from 'fp-ts/lib/Option.js'
import { none, some } from 'fp-ts/lib/Option.js'
import * as t from 'io-ts/lib/index.js'
import type { Args, ArgsProblem, Batch, BatchProvider, Provider, ToolCall, ToolDeclaration } from '../kernel/model.js'
import { REASON_PARAM, ReadableDeclaration, assertProvider } from '../kernel/model.js'
import { parseArgs } from '../steps/Args.js'
import { batchOf, runBatch } from '../steps/Batch.js'
import type { Step } from '../steps/answer.js'
import { FORWARD, answerHere, readPositions, sendInOrder } from '../steps/answer.js'
import { callNameOf } from '../kernel/calls.js'
import { decodeOptions } from '../kernel/options.js'
import { hasOwn } from '../kernel/guards.js'
import { cut, describeError, escapeControls } from '../kernel/describe.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category model
 */
export interface ReasonsOptions {
  /** What the model is told the `reason` argument is for. Default: {@link DEFAULT_REASON_DESCRIPTION}. */
  readonly description?: string
}

/**
 * A provider plus the tools whose calls have their `reason` stripped now.
 *
 * @since 0.1.0
 * @category model
 */
export interface ReasonedProvider<E> extends BatchProvider<E> {
  /** Sorted names of the tools the most recent successful listing augmented. */
  readonly augmentedTools: IO<ReadonlyArray<string>>
}

/**
 * The description the `reason` argument carries by default.
 *
 * @since 0.1.0
 * @category model
 */
export const DEFAULT_REASON_DESCRIPTION =
  'In one sentence, say why you are making this call, for the human reviewing this session.'

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// Throws for a declaration that throws when read; addReasonParam, its one caller, returns none then.
const isReadable = (u: unknown): boolean => !isLeft(ReadableDeclaration.decode(u))

/**
 * The declaration with an optional `reason` string argument added, copied along the path it changes
 * (declaration, `function`, `parameters`, `properties`); `none` for a declaration it cannot read, or
 * one that already declares `reason` (in `properties` or `required`): there `reason` is a real argument
 * and stays the tool's own. `reason` is never added to `required`. A schema closed to other keys
 * (`additionalProperties: false` or `unevaluatedProperties: false`) is left as the tool wrote it, `none`:
 * a `reason` there would say something the tool never said, so the tool is offered no reason.
 
 *
 * @example
 * import { addReasonParam } from './Reasons.js'
 * import { isSome, isNone } from 'fp-ts/lib/Option.js'
 * const d = {
 *   type: 'function',
 *   function: {
 *     name: 'fs_read',
 *     parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
 *   },
 * } as const
 * const out = addReasonParam('why')(d)
 * assert.ok(isSome(out))
 * assert.deepStrictEqual(out.value.function.parameters, {
 *   type: 'object',
 *   properties: { path: { type: 'string' }, reason: { type: 'string', description: 'why' } },
 *   required: ['path'],
 * })
 * assert.ok(
 *   isNone(
 *     addReasonParam('why')({ type: 'function', function: { name: 'x', parameters: { properties: { reason: {} } } } }),
 *   ),
 * )
 * assert.ok(
 *   isNone(
 *     addReasonParam('why')({ type: 'function', function: { name: 'x', parameters: { additionalProperties: false } } }),
 *   ),
 * )
 *
 * @since 0.1.0
 * @category pure steps
 */
export const addReasonParam =
  (description: string) =>
  (declaration: unknown): Option<ToolDeclaration> => {
    try {
      if (!isReadable(declaration)) return none
      const d = declaration as Readonly<Record<string, unknown>>
      const fn = d['function'] as Readonly<Record<string, unknown>>
      const parameters = fn['parameters'] as Readonly<Record<string, unknown>>
      const properties = parameters['properties'] as Readonly<Record<string, unknown>> | undefined
      const required = parameters['required']
      if (properties !== undefined && hasOwn(properties, REASON_PARAM)) return none
      if (Array.isArray(required) && required.includes(REASON_PARAM)) return none
      if (parameters['additionalProperties'] === false || parameters['unevaluatedProperties'] === false) return none
      // spreads copy own keys as data, `__proto__` included, and leave the inner provider's objects intact
      return some({
        ...d,
        function: {
          ...fn,
          parameters: {
            ...parameters,
            properties: { ...properties, [REASON_PARAM]: { type: 'string', description } },
          },
        },
      } as unknown as ToolDeclaration)
    } catch {
      // a declaration that throws when read is not one this layer can change
      return none
    }
  }

/**
 * The call with `reason` removed, when it is a call to one of `tools` whose arguments read as a JSON
 * object holding `reason`: a copy, its arguments an object when they were one, compact JSON when they
 * were a string. Any other call is returned as is (same reference). The caller's call is never modified.
 *
 * @example
 * import { stripReason } from './Reasons.js'
 * const call = { id: '1', function: { name: 'fs_read', arguments: '{"path":"/tmp","reason":"look"}' } }
 * assert.strictEqual(stripReason(new Set(['fs_read']))(call).function.arguments, '{"path":"/tmp"}')
 * assert.strictEqual(stripReason(new Set(['other']))(call), call)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const stripReason =
  (tools: ReadonlySet<string>) =>
  (call: ToolCall): ToolCall => {
    let s: Stripped | undefined
    try {
      const name = callNameOf(call)
      if (name === undefined || !tools.has(name)) return call
      s = stripped(call, parseArgs(call.function.arguments))
    } catch {
      // a call that throws when read is returned unchanged (s stays undefined)
    }
    // outside the try: the catch is for calls that throw when read, not for this code
    return s === undefined ? call : s.call
  }

type Parsed = Either<ArgsProblem, Args>

/** A call this layer rewrote, and how its new arguments read. */
interface Stripped {
  readonly call: ToolCall
  readonly args: Parsed
}

// A copy of the arguments' own members except `reason`, built key by key (a rest pattern with a computed
// exclusion takes V8's slow path, about twice the cost); `__proto__` is kept as an ordinary own member.
const withoutReason = (args: Args): Args => {
  const rest: Record<string, unknown> = {}
  for (const k of Object.keys(args)) {
    if (k === REASON_PARAM) continue
    if (k === '__proto__')
      Object.defineProperty(rest, k, { value: args[k], enumerable: true, writable: true, configurable: true })
    else rest[k] = args[k]
  }
  return rest
}

// The call without `reason`, its arguments kept an object, or compact JSON when they were a string;
// `undefined` when they do not read as an object holding `reason` (the call is sent unchanged).
const stripped = (call: ToolCall, args: Parsed): Stripped | undefined => {
  if (isLeft(args) || !hasOwn(args.right, REASON_PARAM)) return undefined
  const rest = withoutReason(args.right)
  const fn = call.function
  return {
    call: { ...call, function: { ...fn, arguments: typeof fn.arguments === 'string' ? JSON.stringify(rest) : rest } },
    args: right(rest),
  }
}

interface Augmented {
  readonly names: ReadonlySet<string>
  readonly sorted: ReadonlyArray<string>
}

const nothingAugmented: Augmented = { names: new Set(), sorted: Object.freeze([]) }

// A name is stripped only when no declaration listed under it keeps `reason` as a real argument (or is
// unreadable): stripping a real argument would be worse than forwarding a reason the tool does not expect.
const augmentCatalogue =
  (augment: (d: unknown) => Option<ToolDeclaration>) =>
  (declarations: ReadonlyArray<unknown>): readonly [ReadonlyArray<unknown>, Augmented] => {
    const out: Array<unknown> = []
    const added = new Set<string>()
    // may hold undefined (a declaration without a name), which matches no added name
    const kept = new Set<string | undefined>()
    let changed = false
    for (const d of declarations) {
      const next = augment(d)
      if (next._tag === 'Some') {
        out.push(next.value)
        added.add(next.value.function.name)
        changed = true
      } else {
        out.push(d)
        kept.add(callNameOf(d))
      }
    }
    const names = new Set([...added].filter((n) => !kept.has(n)))
    return [changed ? out : declarations, { names, sorted: Object.freeze([...names].sort()) }]
  }

const THE_PROVIDER = (): string => 'the tool provider'

// Each call is sent on, unchanged or without its reason. A call to a tool whose reason is taken out, whose
// arguments throw when read, is answered here: sent unchanged, its reason would reach the provider.
const stepFor = (tools: ReadonlySet<string>, batch: Batch, call: unknown, i: number): Step<'inner'> => {
  const name = callNameOf(call)
  // Stryker disable next-line ConditionalExpression: equivalent: no tool is named undefined
  if (name === undefined || !tools.has(name)) return FORWARD
  let s: Stripped | undefined
  try {
    s = stripped(call as ToolCall, batch.argsAt(i))
  } catch (e) {
    return answerHere(
      call,
      `the arguments of this call to ${escapeControls(JSON.stringify(cut(name, 80)))} could not be read ` +
        `(${escapeControls(cut(describeError(e), 200))}), ` +
        'so its reason could not be taken out; it was not run',
    )
  }
  return s === undefined ? FORWARD : { _tag: 'Send', to: 'inner', call: s.call, args: s.args }
}

// -------------------------------------------------------------------------------------
// combinators
// -------------------------------------------------------------------------------------

const OptionsProps = { description: t.string }

/**
 * Adds an optional `reason` argument to every tool the model is shown, and strips it from the calls
 * before they reach the provider, so each call states why it is made, for the human watching, without
 * the tools having to know. Never fails a batch: an inner Left, rejection or throw becomes one
 * `is_error` result per call, and a reply with too few results has its gaps filled. A failed listing
 * passes through unchanged.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import * as TE from 'fp-ts/lib/TaskEither.js'
 * import { fromTools, withReasons } from 'toolstack'
 * const got: Array<unknown> = []
 * const tools = pipe(
 *   fromTools([
 *     {
 *       declaration: {
 *         type: 'function',
 *         function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
 *       },
 *       run: (a) => {
 *         got.push(a)
 *         return TE.right(String(a.text))
 *       },
 *     },
 *   ]),
 *   withReasons(),
 * )
 * await tools.toolsForLlm()
 * assert.deepStrictEqual(tools.augmentedTools(), ['echo'])
 * await tools.executeToolCalls([
 *   { id: '1', function: { name: 'echo', arguments: '{"text":"hi","reason":"testing"}' } },
 * ])()
 * assert.deepStrictEqual(got, [{ text: 'hi' }])
 *
 * @since 0.1.0
 * @category combinators
 */
export const withReasons = (options?: ReasonsOptions): (<E>(provider: Provider<E>) => ReasonedProvider<E>) => {
  const where = 'withReasons'
  const opts = decodeOptions(where, OptionsProps, options)
  const description = opts.description ?? DEFAULT_REASON_DESCRIPTION
  if (description.trim() === '') {
    throw new TypeError(`${where}: option "description" must not be blank: it is what asks the model for a reason`)
  }
  const augment = addReasonParam(description)

  return <E>(provider: Provider<E>): ReasonedProvider<E> => {
    assertProvider(where, provider)
    const augmented: IORef<Augmented> = newIORef(nothingAugmented)()
    const send = runBatch(provider)

    const list = (listed: Either<E, ReadonlyArray<ToolDeclaration>>): Either<E, ReadonlyArray<ToolDeclaration>> => {
      if (typeof listed !== 'object' || listed === null || listed._tag !== 'Right') return listed
      let next: readonly [ReadonlyArray<unknown>, Augmented]
      try {
        next = Array.isArray(listed.right) ? augmentCatalogue(augment)(listed.right) : [listed.right, nothingAugmented]
      } catch {
        next = [listed.right, nothingAugmented]
      }
      // the whole catalogue is computed first, then written in one step
      augmented.write(next[1])()
      return next[0] === listed.right ? listed : right(next[0] as ReadonlyArray<ToolDeclaration>)
    }

    const executeBatch = (batch: Batch) => () => {
      const read = readPositions(batch.calls)
      if (isLeft(read)) return Promise.resolve(right(read.left))
      const tools = augmented.read().names
      const { calls, unreadable } = read.right
      const steps = calls.map((call, i) => unreadable[i] ?? stepFor(tools, batch, call, i))
      return sendInOrder(batch, calls, steps, (_, b) => send(b)(), THE_PROVIDER, 'inner').then(right)
    }

    return {
      toolsForLlm: () => provider.toolsForLlm().then(list),
      executeToolCalls: (calls) => executeBatch(batchOf(calls)),
      executeBatch,
      augmentedTools: () => augmented.read().sorted,
    }
  }
}
