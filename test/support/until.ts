// Waiting on what a test cannot subscribe to (a file written, a record emitted, a process's output): `until`
// polls `done` and resolves once it holds. Its limit only ends a test that would otherwise hang, so it is as long
// as a test may take (30 s): a busy machine makes a wait longer, never a test wrong (issue 39).

/** Resolves once `done()` holds, asked every `everyMs`; rejects after `ms`, naming `what` it waited for. */
export const until = async (
  done: () => boolean | Promise<boolean>,
  ms = 30_000,
  what = 'a condition',
  everyMs = 10,
): Promise<void> => {
  const end = Date.now() + ms
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
