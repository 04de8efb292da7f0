// Whether a process the tests started is still there: every test that starts a real
// process checks this after cleaning up, whatever happened.

/** Whether a process with this pid is still running (EPERM: it exists, but is not ours). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as { code?: unknown }).code === 'EPERM'
  }
}
