// One parse per call across a stack. Every layer that reads a call's arguments asks
// here, keyed by the call object; an entry is trusted only while the call still holds
// the very same raw value, so the memo can never answer for arguments it did not see.
// A WeakMap keeps it bounded by the calls still alive, and it caches a pure function,
// so sharing it between instances is invisible.
import type { Either } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem } from '../Args.js'
import { parseArgs } from '../Args.js'

interface Entry {
  readonly raw: unknown
  readonly parsed: Either<ArgsProblem, Args>
}

const memo = new WeakMap<object, Entry>()

/** `parseArgs(raw)` for the arguments `raw` that `call` holds, parsed at most once. */
export const readCallArgs = (call: object, raw: unknown): Either<ArgsProblem, Args> => {
  const hit = memo.get(call)
  if (hit !== undefined && hit.raw === raw) return hit.parsed
  const parsed = parseArgs(raw)
  memo.set(call, { raw, parsed })
  return parsed
}

/**
 * Records what a derived call's arguments parse to, for a layer that built the call
 * itself (a copy with the same raw arguments, or arguments it serialised from `args`).
 */
export const primeCallArgs = (call: object, raw: unknown, parsed: Either<ArgsProblem, Args>): void => {
  memo.set(call, { raw, parsed })
}

/**
 * Hands `from`'s memo entry, if it has one, to `to`: for a layer that copies a call
 * and keeps its very `arguments` value, so the layers below it need not parse again.
 * Never parses; the entry still answers only while `to` holds the same raw value.
 */
export const shareCallArgs = (from: object, to: object): void => {
  const hit = memo.get(from)
  if (hit !== undefined) memo.set(to, hit)
}
