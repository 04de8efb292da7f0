// The one way state changes: a pure `(s) => [answer, s']` applied to a ref in one
// synchronous step (Effect's `Ref.modify`), so no await can fall between the read
// and the write and concurrent batches can neither lose nor repeat an update.
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
