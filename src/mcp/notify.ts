// Internal to toolstack/mcp (not re-exported): sending a host a notification that may not arrive.

/** Sends a notification, ignoring its failure: no host connected (not yet, or no longer) is no error. */
export const tryNotify = (send: () => Promise<void>): void => {
  try {
    send().catch(() => undefined)
  } catch {
    // the SDK throws at once when no transport is connected
  }
}
