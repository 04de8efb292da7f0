/**
 * One question at a time: the human who answers `onAsk` is one person, so questions wait their turn. A queue
 * is created by an effect; every provider holding the same queue shares that person.
 *
 * @since 0.1.0
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import type { Task } from 'fp-ts/lib/Task.js'
import { newIORef } from 'fp-ts/lib/IORef.js'

/**
 * @since 0.1.0
 * @category model
 */
export interface QuestionQueue {
  readonly _tag: 'QuestionQueue'
  /** `question`, started once every question queued before it has settled. */
  readonly inTurn: <A>(question: Task<A>) => Task<A>
  /**
   * Whether the caller runs inside a question of this queue that has not settled yet (an `onAsk` that calls
   * back into its own stack): a question asked from there would wait for itself.
   */
  readonly asking: IO<boolean>
}

/**
 * A new, empty queue of questions.
 *
 * @example
 * import { newQuestionQueue } from 'toolstack'
 * const q = newQuestionQueue()
 * const order: Array<number> = []
 * await Promise.all([
 *   q.inTurn(async () => {
 *     await new Promise((r) => setTimeout(r, 10))
 *     order.push(1)
 *   })(),
 *   q.inTurn(async () => {
 *     order.push(2)
 *   })(),
 * ])
 * assert.deepStrictEqual(order, [1, 2])
 *
 * @since 0.1.0
 * @category constructors
 */
export const newQuestionQueue: IO<QuestionQueue> = () => {
  // the tail of a promise chain: each question starts once the previous one has settled, either way
  const last = newIORef<Promise<unknown>>(Promise.resolve())()
  // the question the running code was started from (its `open` ref turns false once it settles): the only way
  // to tell a call made from inside onAsk from one that merely arrived while a question was open
  const within = new AsyncLocalStorage<IORef<boolean>>()
  return {
    _tag: 'QuestionQueue',
    inTurn: (question) => () => {
      const turn = last.read().then(() => {
        const open = newIORef(true)()
        return within.run(open, question).finally(() => open.write(false)())
      })
      last.write(
        turn.then(
          () => undefined,
          () => undefined,
        ),
      )()
      return turn
    },
    asking: () => within.getStore()?.read() === true,
  }
}
