/**
 * One question at a time: the human who answers `onAsk` is one person, so questions
 * wait their turn. A queue is a value made by an effect; every provider that holds the
 * same queue shares that person's attention.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
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
}

/**
 * A new, empty queue of questions.
 *
 * @example
 * import { newQuestionQueue } from 'toolstack'
 * const q = newQuestionQueue()
 * const order: Array<number> = []
 * await Promise.all([q.inTurn(async () => { await new Promise((r) => setTimeout(r, 10)); order.push(1) })(), q.inTurn(async () => { order.push(2) })()])
 * assert.deepStrictEqual(order, [1, 2])
 *
 * @since 0.1.0
 * @category constructors
 */
export const newQuestionQueue: IO<QuestionQueue> = () => {
  // the last question's settling: a promise chain, each question starting when the
  // one before it settled, whichever way
  const last = newIORef<Promise<unknown>>(Promise.resolve())()
  return {
    _tag: 'QuestionQueue',
    inTurn: (question) => () => {
      const turn = last.read().then(() => question())
      last.write(turn.then(
        () => undefined,
        () => undefined,
      ))()
      return turn
    },
  }
}
