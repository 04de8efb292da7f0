// Reading calls and batches from models and hosts: every read is guarded, so a throwing getter, a Proxy or a
// hole costs only the call it is in, never the batch. Imports nothing above the kernel.
import { types } from 'node:util'
import type { Either } from 'fp-ts/lib/Either.js'
import { left, right } from 'fp-ts/lib/Either.js'
import { describeError, describeValue } from './describe.js'
import { isSafeInteger, memberOf } from './guards.js'
import type { McpCallContext, ToolCall } from './model.js'

// String(u) runs u's own toString, which may throw
const textOf = (u: unknown): string => {
  try {
    return String(u)
  } catch {
    return ''
  }
}

// callIdOf and callNameOf read with property reads of their own rather than `memberOf`: a read site shared by
// every caller sees every shape and goes megamorphic, while these see only calls. They run for every audited
// call (the audit ÷ ajv figures of docs/performance.md); the guards are memberOf's.

/** The call's id as a string, `''` when it has none or cannot be read. */
export const callIdOf = (call: unknown): string => {
  if (typeof call !== 'object' || call === null) return ''
  let id: unknown
  try {
    id = (call as { readonly id?: unknown }).id
  } catch {
    return ''
  }
  return id === undefined || id === null ? '' : textOf(id)
}

/** The call's `function` member when it is an object; a getter that throws throws here. */
export const functionOf = (call: unknown): object | undefined => {
  if (typeof call !== 'object' || call === null) return undefined
  const fn: unknown = (call as { readonly function?: unknown }).function
  return typeof fn === 'object' && fn !== null ? fn : undefined
}

/** The `name` of a call's `function` member, when it is a string; a getter that throws throws here. */
export const nameIn = (fn: object | undefined): string | undefined => {
  const name: unknown = fn === undefined ? undefined : (fn as { readonly name?: unknown }).name
  return typeof name === 'string' ? name : undefined
}

/** The `arguments` of a call's `function` member, as they are; a getter that throws throws here. */
export const argumentsIn = (fn: object | undefined): unknown =>
  fn === undefined ? undefined : (fn as { readonly arguments?: unknown }).arguments

/** The call's function name, when it is a readable string. */
export const callNameOf = (call: unknown): string | undefined => {
  try {
    return nameIn(functionOf(call))
  } catch {
    // a getter or a Proxy trap that throws: no name
  }
  return undefined
}

// an own data property of an object that is not a Proxy, read without running any code of the caller's (no
// getter, no trap): NOT_DATA for no such member or no plain object, undefined for an accessor
const NOT_DATA: unique symbol = Symbol('not data')
const dataMember = (u: unknown, key: string): unknown => {
  if (typeof u !== 'object' || u === null || types.isProxy(u)) return NOT_DATA
  const d = Object.getOwnPropertyDescriptor(u, key)
  return d === undefined ? NOT_DATA : (d.value as unknown)
}

/**
 * The call's `function.arguments` when it is a string held as plain data (own data properties, no getter, no
 * Proxy): then every layer that reads it reads the same string. `undefined` for anything else (object
 * arguments, a getter, a Proxy), which a layer that judges the arguments must read once and pass on as it
 * read them.
 */
export const stableArgumentsText = (call: unknown): string | undefined => {
  // NOT_DATA is no object, so a function member that is not data leaves NOT_DATA
  const text = dataMember(dataMember(call, 'function'), 'arguments')
  return typeof text === 'string' ? text : undefined
}

const isFunction = (u: unknown): u is (...args: never) => unknown => typeof u === 'function'

/**
 * The call's `mcp_context` with only its well-typed members (a member of another type is left out), or
 * `undefined` when it has none, or none that can be read.
 */
export const callContextOf = (call: unknown): McpCallContext | undefined => {
  const context = memberOf(call, 'mcp_context')
  if (typeof context !== 'object' || context === null) return undefined
  const signal = memberOf(context, 'signal')
  const onProgress = memberOf(context, 'onProgress')
  const hostCapabilities = memberOf(context, 'hostCapabilities')
  const requestHost = memberOf(context, 'requestHost')
  const session = memberOf(context, 'session')
  const onLog = memberOf(context, 'onLog')
  return {
    ...(typeof session === 'object' && session !== null ? { session } : {}),
    ...(signal instanceof AbortSignal ? { signal } : {}),
    ...(isFunction(onProgress) ? { onProgress: onProgress as McpCallContext['onProgress'] & object } : {}),
    ...(typeof hostCapabilities === 'object' && hostCapabilities !== null
      ? { hostCapabilities: hostCapabilities as Readonly<Record<string, unknown>> }
      : {}),
    ...(isFunction(requestHost) ? { requestHost: requestHost as McpCallContext['requestHost'] & object } : {}),
    ...(isFunction(onLog) ? { onLog: onLog as McpCallContext['onLog'] & object } : {}),
  }
}

/**
 * `copy` with the `mcp_context` of `call` (the same object), for a layer that rebuilds a call: the way back to
 * the host that sent it must reach the provider below.
 */
export const keepContext = (call: unknown, copy: ToolCall): ToolCall => {
  const context = memberOf(call, 'mcp_context')
  return context === undefined ? copy : { ...copy, mcp_context: context as McpCallContext }
}

/** The most calls one batch may hold: a batch is what one model turn asked for. */
export const MAX_BATCH = 100_000

/**
 * How many calls a batch holds, or why that cannot be known: not an array, a length that throws when read, or
 * one no model turn could have produced.
 */
export const batchSize = (calls: unknown): Either<string, number> => {
  try {
    if (!Array.isArray(calls)) return left(`expected an array of tool calls, got ${describeValue(calls)}`)
    const n: unknown = calls.length
    if (!isSafeInteger(n) || n < 0) return left(`its length is ${describeValue(n)}`)
    if (n > MAX_BATCH) return left(`it holds ${n} calls, more than the ${MAX_BATCH} one batch may hold`)
    return right(n)
  } catch (e) {
    return left(`its length cannot be read (${describeError(e)})`)
  }
}

/** The call at position `i`, or why it cannot be read. */
export const callAt = (calls: ReadonlyArray<unknown>, i: number): Either<string, unknown> => {
  try {
    return right(calls[i])
  } catch (e) {
    return left(describeError(e))
  }
}
