// `modify`: a pure `(s) => [answer, s']` applied to a ref in one synchronous step
// (Effect's `Ref.modify`), so no await can fall between the read and the write and
// concurrent batches can neither lose nor repeat an update. State whose next value is
// read from the current one changes this way: the audit's memory, the policy's grants
// and its once-only note, the approvals. Elsewhere a ref is written directly with
// `write` (the last listing, the question queue's turn, a client's listeners), and
// some per-instance memos and counters in mcp/ and ai-sdk/ are a plain `let`.
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'

/** Applies `f` to the ref's value, stores the new value, and answers what `f` answered. */
export const modify =
  <S, A>(f: (s: S) => readonly [A, S]) =>
  (ref: IORef<S>): IO<A> =>
  () => {
    const [a, next] = f(ref.read())
    ref.write(next)()
    return a
  }
