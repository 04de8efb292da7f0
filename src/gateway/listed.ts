/**
 * What a gateway session may call: the tools it was listed. Two layers share one ref: `recordListed`, below
 * the policy, keeps the names of the last listing; `onlyListed`, above it, answers a call to any other name
 * itself, with the name as the host called it, so the policy never asks about a tool that does not exist and
 * no upstream sees a hidden tool's call. `curated` hides an upstream's tools by its configuration's globs.
 *
 * @since 0.1.0
 */
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import { isLeft, right } from 'fp-ts/lib/Either.js'
import type { Batch, BatchProvider, Provider } from '../kernel/model.js'
import { callNameOf } from '../kernel/calls.js'
import { unknownToolMessage } from '../kernel/describe.js'
import { batchOf, runBatch } from '../steps/Batch.js'
import type { Step } from '../steps/answer.js'
import { FORWARD, errorResult, readPositions, sendInOrder } from '../steps/answer.js'
import { matchesTool } from '../steps/policy/Rule.js'

/**
 * Which of an upstream's tools are served, by their own (unprefixed) names: those `include` matches (all
 * when absent), less those `exclude` matches. Globs as in rules: a name, a prefix ending in `*`, or `*`.
 *
 * @since 0.1.0
 * @category model
 */
export interface Curation {
  readonly include?: ReadonlyArray<string>
  readonly exclude?: ReadonlyArray<string>
}

/** Whether `curation` serves the tool named `name`. */
export const isServed =
  (curation: Curation) =>
  (name: string): boolean =>
    (curation.include === undefined || curation.include.some((g) => matchesTool(g)(name))) &&
    curation.exclude?.some((g) => matchesTool(g)(name)) !== true

/** `provider` with its listing narrowed to the tools `curation` serves; calls pass through as they are. */
export const curated =
  (curation: Curation) =>
  <E>(provider: Provider<E>): Provider<E> => {
    const served = isServed(curation)
    return {
      ...provider,
      toolsForLlm: async () => {
        const listed = await provider.toolsForLlm()
        if (isLeft(listed)) return listed
        return right(listed.right.filter((d) => served(d.function.name)))
      },
    }
  }

/** The names of a session's last listing; `undefined` until one went through. */
export type ListedNames = IORef<ReadonlySet<string> | undefined>

/** A new, empty record of what a session was listed. */
export const newListedNames = (): ListedNames => newIORef<ReadonlySet<string> | undefined>(undefined)()

/** `provider`, writing the names of each successful listing to `names`; calls pass through as they are. */
export const recordListed =
  (names: ListedNames) =>
  <E>(provider: Provider<E>): Provider<E> => ({
    ...provider,
    toolsForLlm: async () => {
      const listed = await provider.toolsForLlm()
      if (!isLeft(listed)) names.write(new Set(listed.right.map((d) => d.function.name)))()
      return listed
    },
  })

/**
 * `provider`, answering a call to a name the session was not listed with an `is_error` result naming it as
 * called; a session that calls before it lists is listed first. A call that cannot be read goes on, for the
 * layers below to refuse, and so does every call while no listing could be made.
 */
export const onlyListed =
  (names: ListedNames) =>
  <E>(provider: Provider<E>): BatchProvider<E> => {
    // undefined when no listing could be made: then every call goes on, to the layers that judge it
    const known = async (): Promise<ReadonlySet<string> | undefined> => {
      if (names.read() === undefined) await provider.toolsForLlm()
      return names.read()
    }
    const executeBatch = (batch: Batch) => async () => {
      const read = readPositions(batch.calls)
      if (isLeft(read)) return right(read.left)
      const listed = await known()
      const { calls, unreadable } = read.right
      const steps = calls.map((call, i): Step<'inner'> => {
        const name = callNameOf(call)
        return (
          unreadable[i] ??
          (name === undefined || listed === undefined || listed.has(name)
            ? FORWARD
            : {
                _tag: 'Answer',
                result: { ...errorResult(call, unknownToolMessage(name, [...listed])), unknown_tool: true },
              })
        )
      })
      return right(
        await sendInOrder(
          batch,
          calls,
          steps,
          (_, b) => runBatch(provider)(b)(),
          () => 'the gateway',
          'inner',
        ),
      )
    }
    return {
      toolsForLlm: provider.toolsForLlm,
      executeToolCalls: (calls) => executeBatch(batchOf(calls)),
      executeBatch,
    }
  }
