/**
 * Providers from plain functions: `fromTools` over in-process tools, and the bridges to Promise-based
 * hosts and providers, `fromAsync` and `toAsync`.
 *
 * @since 0.1.0
 */
import type { TaskEither } from 'fp-ts/lib/TaskEither.js'
import type { Either } from 'fp-ts/lib/Either.js'
import { left as leftOf, right as rightOf } from 'fp-ts/lib/Either.js'
import type { Args, Batch, BatchProvider, Provider, ToolCall, ToolDeclaration, ToolResult } from '../kernel/model.js'
import { assertProvider } from '../kernel/model.js'
import { drawArgsProblem, noneAsEmpty } from '../steps/Args.js'
import { batchOf } from '../steps/Batch.js'
import { errorResult, readPositions } from '../steps/answer.js'
import { callIdOf, callNameOf } from '../kernel/calls.js'
import { describeError, describeValue, unknownToolMessage } from '../kernel/describe.js'
import { memberOf } from '../kernel/guards.js'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A result with more than text: structured content, or an error a tool reports as a value rather than
 * as a Left.
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolOutcome {
  readonly content: string
  readonly is_error?: boolean
  readonly structured_content?: unknown
}

/**
 * What a local tool returns: the result's text, or a {@link ToolOutcome}.
 *
 * @since 0.1.0
 * @category model
 */
export type ToolOutput = string | ToolOutcome

/**
 * An in-process tool: what the model is shown, and what runs. `run` receives the call's parsed
 * arguments (`{}` when the model sent none; shared with the layers above, so read-only) and the call
 * itself, and returns any of:
 *
 * - a `TaskEither<string, ToolOutput>` (fp-ts): a Left is an `is_error` result with that text;
 * - a Promise (an `async` function): a rejection is an `is_error` result with its message;
 * - the output itself.
 *
 * An `Either`, returned directly or through a Promise, is read as one.
 *
 * @since 0.1.0
 * @category model
 */
export interface LocalTool {
  readonly declaration: ToolDeclaration
  readonly run: (
    args: Args,
    call: ToolCall,
  ) => TaskEither<string, ToolOutput> | Promise<ToolOutput | Either<string, ToolOutput>> | ToolOutput
}

const quote = (s: string): string => JSON.stringify(s)

const isEither = (u: unknown): u is Either<unknown, unknown> => {
  const tag = typeof u === 'object' && u !== null ? (u as { readonly _tag?: unknown })._tag : undefined
  return tag === 'Left' || tag === 'Right'
}

// `run` is typed, but hosts written in plain JavaScript are not: every part of what it returns is checked
const outputToResult = (call: unknown, name: string, out: unknown): ToolResult => {
  const failed = (why: string): ToolResult => errorResult(call, `tool ${quote(name)} failed: ${why}`)
  if (isEither(out)) {
    if (out._tag === 'Left') return errorResult(call, describeError(out.left))
    return outputToResult(call, name, out.right)
  }
  const base = { role: 'tool', tool_call_id: callIdOf(call) } as const
  if (typeof out === 'string') return { ...base, content: out }
  if (typeof out === 'object' && out !== null && typeof (out as { readonly content?: unknown }).content === 'string') {
    const o = out as ToolOutcome
    return {
      ...base,
      content: o.content,
      ...(o.is_error === true ? { is_error: true } : {}),
      ...(o.structured_content !== undefined ? { structured_content: o.structured_content } : {}),
    }
  }
  return failed(`its implementation returned ${describeValue(out)}, not a text or { content }`)
}

// a task is run, a Promise awaited, anything else is the output itself
const awaitOutput = async (answer: unknown): Promise<unknown> => {
  if (typeof answer === 'function') return (answer as () => unknown)()
  return answer
}

/**
 * A provider over in-process tools. The listing is the declarations given, the same objects (same
 * reference). Calls run one at a time, in the model's order, so tools that share state see them in the
 * order the model made them. Never fails a batch: a malformed call, an unknown tool name, arguments that
 * are not a JSON object, a `run` that throws or rejects, each becomes one `is_error` result stating it.
 *
 * Construction throws a `TypeError` for a non-array, an entry without a readable declaration name, a
 * `run` that is not a function, or two tools with one name.
 *
 * @example
 * import { fromTools } from 'toolstack'
 * import * as TE from 'fp-ts/lib/TaskEither.js'
 * const tools = fromTools([
 *   {
 *     declaration: {
 *       type: 'function',
 *       function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
 *     },
 *     run: (a) => TE.right(String(a.text)),
 *   },
 * ])
 * const out = await tools.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{"text":"hi"}' } }])()
 * assert.deepStrictEqual(out, { _tag: 'Right', right: [{ role: 'tool', tool_call_id: '1', content: 'hi' }] })
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTools = (tools: ReadonlyArray<LocalTool>): BatchProvider<never> => {
  const where = 'fromTools'
  if (!Array.isArray(tools)) {
    throw new TypeError(`${where}: expected an array of { declaration, run }, got ${describeValue(tools)}`)
  }
  const byName = new Map<string, { readonly run: LocalTool['run']; readonly index: number }>()
  const declarations: Array<ToolDeclaration> = []
  tools.forEach((entry: unknown, index) => {
    const at = `${where}: tools[${index}]`
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new TypeError(`${at} must be an object { declaration, run }, got ${describeValue(entry)}`)
    }
    let declaration: unknown
    let run: unknown
    try {
      ;({ declaration, run } = entry as { readonly declaration?: unknown; readonly run?: unknown })
    } catch (e) {
      throw new TypeError(`${at} cannot be read: ${describeError(e)}`)
    }
    const name = callNameOf(declaration)
    if (name === undefined || name === '') {
      throw new TypeError(
        `${at}.declaration has no readable name: expected { type: 'function', function: { name: string, … } }, got ${describeValue(declaration)}`,
      )
    }
    if (typeof run !== 'function') {
      throw new TypeError(`${at}.run (tool ${quote(name)}) must be a function, got ${describeValue(run)}`)
    }
    const before = byName.get(name)
    if (before !== undefined) {
      throw new TypeError(
        `${where}: tools[${before.index}] and tools[${index}] are both named ${quote(name)}; a model could not tell them apart`,
      )
    }
    byName.set(name, { run: run as LocalTool['run'], index })
    declarations.push(declaration as ToolDeclaration)
  })
  const listing = Object.freeze(declarations)
  const names = Object.freeze([...byName.keys()])

  const runOne = async (batch: Batch, call: unknown, i: number): Promise<ToolResult> => {
    const name = callNameOf(call)
    if (name === undefined)
      return errorResult(call, 'this tool call is malformed: it has no function name, so no tool was run')
    const tool = byName.get(name)
    if (tool === undefined) return errorResult(call, unknownToolMessage(name, names))
    const parsed = noneAsEmpty(batch.argsAt(i))
    if (parsed._tag === 'Left')
      return errorResult(call, `tool ${quote(name)} was not run: ${drawArgsProblem(parsed.left)}`)
    let out: unknown
    try {
      out = await awaitOutput(tool.run(parsed.right, call as ToolCall))
    } catch (e) {
      return errorResult(call, `tool ${quote(name)} failed: ${describeError(e)}`)
    }
    return outputToResult(call, name, out)
  }

  const executeBatch = (batch: Batch) => async (): Promise<Either<never, ReadonlyArray<ToolResult>>> => {
    const read = readPositions(batch.calls)
    if (read._tag === 'Left') return rightOf(read.left)
    const { calls, unreadable } = read.right
    const results: Array<ToolResult> = []
    for (let i = 0; i < calls.length; i++) {
      const answered = unreadable[i]
      if (answered !== undefined) {
        results.push(answered.result)
        continue
      }
      try {
        results.push(await runOne(batch, calls[i], i))
      } catch (e) {
        results.push(errorResult(calls[i], `this tool call could not be run: ${describeError(e)}`))
      }
    }
    return rightOf(results)
  }

  return {
    toolsForLlm: () => Promise.resolve(rightOf(listing)),
    executeToolCalls: (calls) => executeBatch(batchOf(calls)),
    executeBatch,
  }
}

// -------------------------------------------------------------------------------------
// bridges
// -------------------------------------------------------------------------------------

/**
 * A provider for hosts not written with fp-ts: the same two operations, as Promises.
 *
 * @since 0.1.0
 * @category model
 */
export interface AsyncProvider {
  readonly toolsForLlm: () => Promise<ReadonlyArray<ToolDeclaration>>
  readonly executeToolCalls: (calls: ReadonlyArray<ToolCall>) => Promise<ReadonlyArray<ToolResult>>
}

/**
 * What {@link toAsync} rejects with when the provider returns a Left: an `Error`, so stack traces and
 * `instanceof Error` work in Promise code, holding the Left itself as `left` (and as `cause`).
 *
 * @since 0.1.0
 * @category model
 */
export interface ProviderFailure<E> extends Error {
  readonly name: 'ProviderFailure'
  readonly left: E
}

// Symbol.for, so a failure made by the ESM build is recognised by the CJS one
const PROVIDER_FAILURE = Symbol.for('toolstack/ProviderFailure')

/**
 * @example
 * import { providerFailure } from 'toolstack/extend'
 * const e = providerFailure('offline')
 * assert.strictEqual(e.left, 'offline')
 * assert.strictEqual(e.message, 'the tool provider failed: offline')
 *
 * @since 0.1.0
 * @category constructors
 */
export const providerFailure = <E>(left: E): ProviderFailure<E> => {
  const e = new Error(`the tool provider failed: ${describeError(left)}`, { cause: left })
  e.name = 'ProviderFailure'
  Object.defineProperty(e, 'left', { value: left, enumerable: true })
  Object.defineProperty(e, PROVIDER_FAILURE, { value: true })
  return e as ProviderFailure<E>
}

/**
 * Whether a rejection reason is a {@link ProviderFailure} made by {@link toAsync}.
 *
 * @since 0.1.0
 * @category guards
 */
export const isProviderFailure = (u: unknown): u is ProviderFailure<unknown> => {
  try {
    return u instanceof Error && (u as unknown as Record<symbol, unknown>)[PROVIDER_FAILURE] === true
  } catch {
    return false
  }
}

const assertAsyncProvider = (where: string, u: unknown): void => {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) {
    throw new TypeError(
      `${where}: expected { toolsForLlm: () => Promise, executeToolCalls: (calls) => Promise }, got ${describeValue(u)}`,
    )
  }
  const wrong = ['toolsForLlm', 'executeToolCalls'].filter(
    (k) => typeof (u as Record<string, unknown>)[k] !== 'function',
  )
  if (wrong.length > 0) {
    throw new TypeError(
      `${where}: expected { toolsForLlm: () => Promise, executeToolCalls: (calls) => Promise }, but ` +
        wrong.map((k) => `\`${k}\` is not a function`).join(' and '),
    )
  }
  // every provider toolstack makes offers executeBatch; a Promise-based one has no use for it
  if (typeof memberOf(u, 'executeBatch') === 'function') {
    const why = 'it offers executeBatch, and its functions return tasks, not Promises'
    throw new TypeError(`${where}: this is already a toolstack provider (${why}); use it directly, without fromAsync`)
  }
}

// An fp-ts provider's functions cannot be told from Promise-based ones until they run:
// its toolsForLlm resolves to an Either, its executeToolCalls returns a task.
const fpShapeOf = (a: unknown): string | undefined =>
  typeof a === 'function' ? 'a function (a task)' : isEither(a) ? 'an Either' : undefined

/**
 * A provider from Promise-returning functions. A rejection (or a throw) becomes a Left holding the
 * reason; a {@link ProviderFailure} is unwrapped to its `left`, so `fromAsync(toAsync(p))` fails exactly
 * as `p` does. The functions are called as methods of the record (so a class instance works) and only
 * when a task runs. What they resolve to is passed on as is, except what an fp-ts provider returns (an
 * Either, a task): that becomes a Left holding a `TypeError` that says to use that provider directly.
 * Construction throws a `TypeError` for a record that is not two functions, and for a provider
 * toolstack made.
 *
 * @example
 * import { fromAsync } from 'toolstack'
 * const p = fromAsync({ toolsForLlm: async () => [], executeToolCalls: () => Promise.reject(new Error('offline')) })
 * const out = await p.executeToolCalls([])()
 * assert.strictEqual(out._tag, 'Left')
 *
 * @since 0.1.0
 * @category interop
 */
export const fromAsync = (provider: AsyncProvider): Provider<unknown> => {
  const where = 'fromAsync'
  assertAsyncProvider(where, provider)
  const { toolsForLlm, executeToolCalls } = provider
  const attempt = <A>(name: string, f: () => Promise<A>): Promise<Either<unknown, A>> =>
    new Promise<A>((resolve) => resolve(f())).then(
      (a) => {
        const shape = fpShapeOf(a)
        if (shape === undefined) return rightOf(a)
        const why = `${where}: ${name} returned ${shape}, not a Promise of the value`
        return leftOf(new TypeError(`${why}: this is already a toolstack provider; use it directly, without fromAsync`))
      },
      (e: unknown) => leftOf(isProviderFailure(e) ? e.left : e),
    )
  return {
    toolsForLlm: () => attempt('toolsForLlm', () => toolsForLlm.call(provider)),
    executeToolCalls: (calls) => () => attempt('executeToolCalls', () => executeToolCalls.call(provider, calls)),
  }
}

/**
 * The Promise-shaped record of a provider, for hosts not written with fp-ts. A Left becomes a rejection
 * with a {@link ProviderFailure} holding it as `left`; a rejection or a throw of the provider rejects
 * with the same reason (same reference).
 *
 * @example
 * import { fromTools, toAsync } from 'toolstack'
 * const host = toAsync(fromTools([]))
 * assert.deepStrictEqual(await host.toolsForLlm(), [])
 *
 * @since 0.1.0
 * @category interop
 */
export const toAsync = <E>(provider: Provider<E>): AsyncProvider => {
  assertProvider('toAsync', provider)
  const unwrap = <A>(e: Either<E, A>): A => {
    if (e._tag === 'Left') throw providerFailure(e.left)
    return e.right
  }
  return {
    toolsForLlm: () =>
      new Promise<Either<E, ReadonlyArray<ToolDeclaration>>>((resolve) => resolve(provider.toolsForLlm())).then(unwrap),
    // async, so a combinator handed this record refuses it at construction (assertProvider), naming fromAsync
    executeToolCalls: async (calls) => unwrap(await provider.executeToolCalls(calls)()),
  }
}
