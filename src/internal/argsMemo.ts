// One parse per call across a stack. Calls travel in batches, so the memo is keyed by
// the batch array (one WeakMap entry per batch, not per call: a WeakMap entry per call
// costs as much as the parse it saves) and holds, per position, the call, its raw
// arguments and their parse. A slot answers only while the batch still holds the very
// same call with the very same raw value, so the memo can never answer for arguments
// it did not see. A layer that builds a new batch hands the parses it knows down to
// it. Bounded by the batches still alive; it caches a pure function, so sharing it
// between instances is invisible.
import type { Either } from 'fp-ts/lib/Either.js'
import type { Args, ArgsProblem } from '../Args.js'
import { parseArgs } from '../Args.js'

type Parsed = Either<ArgsProblem, Args>

interface Slots {
  readonly calls: Array<unknown>
  readonly raws: Array<unknown>
  readonly parsed: Array<Parsed | undefined>
}

const batches = new WeakMap<object, Slots>()

const slotsFor = (batch: ReadonlyArray<unknown>): Slots => {
  let slots = batches.get(batch)
  if (slots === undefined) {
    // sized once: slots are written position by position, and growing three arrays
    // a thousand times costs more than the writes
    const n = batch.length
    slots = { calls: new Array<unknown>(n), raws: new Array<unknown>(n), parsed: new Array<Parsed | undefined>(n) }
    batches.set(batch, slots)
  }
  return slots
}

/** Reads the parse of position `i` of a batch, if the memo holds one for that very call and raw value. */
export type ArgsAt = (i: number, call: unknown, raw: unknown) => Parsed

/**
 * A reader of a batch's arguments: `read(i, call, raw)` is `parseArgs(raw)` for the call
 * at position `i`, parsed at most once across every layer that reads this batch.
 */
export const argsOfBatch = (batch: ReadonlyArray<unknown>): ArgsAt => {
  let slots = batches.get(batch)
  return (i, call, raw) => {
    if (slots !== undefined && slots.calls[i] === call && slots.raws[i] === raw) {
      const hit = slots.parsed[i]
      if (hit !== undefined) return hit
    }
    const parsed = parseArgs(raw)
    slots ??= slotsFor(batch)
    slots.calls[i] = call
    slots.raws[i] = raw
    slots.parsed[i] = parsed
    return parsed
  }
}

/** Reads, without parsing, the parses the memo already holds for a batch (looked up once). */
export const peekBatch = (batch: ReadonlyArray<unknown>): ((i: number, call: unknown, raw: unknown) => Parsed | undefined) => {
  const slots = batches.get(batch)
  return slots === undefined
    ? () => undefined
    : (i, call, raw) => (slots.calls[i] === call && slots.raws[i] === raw ? slots.parsed[i] : undefined)
}

/**
 * Records parses for a batch a layer built itself (copies of calls that keep their raw
 * arguments, or arguments it serialised), so the layers below do not parse again.
 * Built once the batch is whole: the memo is looked up once, and sized to the batch.
 */
export const handDown = (batch: ReadonlyArray<unknown>): ((j: number, call: unknown, raw: unknown, parsed: Parsed | undefined) => void) => {
  let slots: Slots | undefined
  return (j, call, raw, parsed) => {
    if (parsed === undefined) return
    slots ??= slotsFor(batch)
    slots.calls[j] = call
    slots.raws[j] = raw
    slots.parsed[j] = parsed
  }
}

/**
 * Hands down to `to`, a batch a layer built from `from`, every parse the memo holds for
 * `from`: `to[j]` came from `from[origin[j]]`, as that very call or a copy of it, and is
 * handed the parse only while it still holds the very raw arguments that were parsed.
 */
export const handDownFrom = (from: ReadonlyArray<unknown>, to: ReadonlyArray<unknown>, origin: ReadonlyArray<number>): void => {
  const slots = batches.get(from)
  if (slots === undefined) return
  const write = handDown(to)
  for (let j = 0; j < to.length; j++) {
    const i = origin[j] as number
    const parsed = slots.parsed[i]
    if (parsed === undefined || from[i] !== slots.calls[i]) continue
    try {
      const raw: unknown = (to[j] as { readonly function: { readonly arguments?: unknown } }).function.arguments
      if (raw === slots.raws[i]) write(j, to[j], raw, parsed)
    } catch {
      // unreadable arguments: nothing to hand down
    }
  }
}

/**
 * Forgets a batch's parses: for the layer that opened the batch's memo, once the
 * layers below have answered, so the parses die young instead of living as long as
 * the caller keeps the batch.
 */
export const releaseBatch = (batch: ReadonlyArray<unknown>): void => {
  batches.delete(batch)
}

/** Whether the memo holds anything for this batch. */
export const hasBatch = (batch: ReadonlyArray<unknown>): boolean => batches.has(batch)

