// `modify`: a pure `(s) => [result, s']` applied to a ref in one synchronous step (like Effect's
// `Ref.modify`), so no await falls between the read and the write and concurrent batches can neither lose nor
// repeat an update. Used for state whose next value depends on the current one: the audit's memory, the
// policy's grants and once-only note, the approvals. Other refs are set with `write`.
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'

/** Applies `f` to the ref's value, stores the new value, and returns the result `f` returned. */
export const modify =
  <S, A>(f: (s: S) => readonly [A, S]) =>
  (ref: IORef<S>): IO<A> =>
  () => {
    const [a, next] = f(ref.read())
    ref.write(next)()
    return a
  }
