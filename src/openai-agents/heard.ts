/**
 * The tools toolstack already audits by themselves: those `auditAgentsTools` wrapped, and those
 * `toAgentsTools` made over a stack (whose own `withUnknownKeyAudit` hears them). A run audit steps
 * aside for them, so one call is said once. Not exported from the entry point.
 *
 * @since 0.1.0
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

// weak: a tool the user drops is not kept alive by the mark
const heard = new WeakSet<object>()

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Marks a tool as audited where it runs; returns it.
 *
 * @since 0.1.0
 * @category utils
 */
export const markHeard = <T extends object>(tool: T): T => {
  heard.add(tool)
  return tool
}

/**
 * Whether a tool is audited where it runs.
 *
 * @since 0.1.0
 * @category utils
 */
// a WeakSet answers false for a value that is not an object, so anything can be asked
export const isHeard = (tool: unknown): boolean => heard.has(tool as object)
