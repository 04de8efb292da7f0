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
import { modify } from '../../kernel/ref.js'

/**
 * @since 0.1.0
 * @category model
 */
export interface QuestionQueue {
  readonly _tag: 'QuestionQueue'
  /** `question`, started once every question queued before it has settled. */
  readonly inTurn: <A>(question: Task<A>) => Task<A>
  /**
   * Whether a question asked now cannot wait its turn: the caller runs inside a question of this queue that
   * has not settled yet (an `onAsk` that calls back into its own stack: it would wait for itself), or, for a
   * queue made with `whileOpen: 'refuse'`, any question of it is open (a host whose calls arrive from outside
   * the process, and may come from the very code that is asking its human).
   */
  readonly asking: IO<boolean>
}

/**
 * What a queue does with a question asked while another is open: wait its turn (the default), or be refused
 * at once (`'refuse'`: for one host session served over MCP, whose human answers one question at a time and
 * whose elicitation handler may itself call a tool).
 *
 * @since 0.1.0
 * @category model
 */
export interface QuestionQueueOptions {
  readonly whileOpen?: 'wait' | 'refuse'
}

/**
 * A new, empty queue of questions: each waits its turn, or, with `whileOpen: 'refuse'`, a question asked
 * while another is waiting or open is refused at once (`asking()` says so).
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
export const newQuestionQueue = (options: QuestionQueueOptions = {}): QuestionQueue => {
  const refuse = options.whileOpen === 'refuse'
  // how many questions are waiting or open: counted from the moment one is queued, so a second asked in the same
  // tick already sees it
  const pending = newIORef(0)()
  // the tail of a promise chain: each question starts once the previous one has settled, either way
  const last = newIORef<Promise<unknown>>(Promise.resolve())()
  // the question the running code was started from (its `running` ref turns false once it settles): the only way
  // to tell a call made from inside onAsk from one that merely arrived while a question was open
  const within = new AsyncLocalStorage<IORef<boolean>>()
  return {
    _tag: 'QuestionQueue',
    inTurn: (question) => () => {
      modify((n: number) => [undefined, n + 1] as const)(pending)()
      const turn = last.read().then(() => {
        const running = newIORef(true)()
        return within.run(running, question).finally(() => {
          running.write(false)()
          modify((n: number) => [undefined, n - 1] as const)(pending)()
        })
      })
      last.write(
        turn.then(
          () => undefined,
          () => undefined,
        ),
      )()
      return turn
    },
    asking: () => within.getStore()?.read() === true || (refuse && pending.read() > 0),
  }
}
