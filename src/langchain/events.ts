/**
 * A warning in LangChain's own callbacks: a custom event `toolstack.unknown_key`, dispatched in the run that
 * runs the tool call (in `createAgent`, the `tools` node run of that one call, the tool's own run its child),
 * so LangSmith, `streamEvents` and every handler's `handleCustomEvent` see it there. Not exported from the
 * entry point.
 *
 * @since 0.1.0
 */
import { dispatchCustomEvent } from '@langchain/core/callbacks/dispatch/web'
import type { RunnableConfig } from '@langchain/core/runnables'
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons'
import type { UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import type { UnknownKeyWarning } from '../steps/audit/Check.js'
import { WARNING_EVENT, recordingOptions, warningRecord } from '../adapter/warning.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The audit's options, and whether each warning is also a custom event in LangChain's callbacks.
 *
 * @since 0.1.0
 * @category model
 */
export interface LangChainAuditOptions extends UnknownKeyAuditOptions {
  /**
   * Each warning is also a custom event named `toolstack.unknown_key` in the run of the tool call, its data
   * the tool, the call id and the keys (cut and escaped). Default `true`; outside a run, nothing is sent.
   */
  readonly telemetry?: boolean
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

// the run is the one LangChain keeps in its async context while the agent runs the call; the web dispatch
// takes it explicitly, so toolstack loads no node:async_hooks of its own. Outside a run (no config) the
// dispatch rejects, and that rejection is caught below: nothing is sent
const dispatchWarning = (w: UnknownKeyWarning): void => {
  const config: RunnableConfig | undefined = AsyncLocalStorageProviderSingleton.getRunnableConfig()
  dispatchCustomEvent(WARNING_EVENT, warningRecord(w), config).catch(() => {
    // a handler that fails is LangChain's to report; the call goes on
  })
}

/**
 * The audit's options with each warning also dispatched (unless `telemetry: false`).
 *
 * @since 0.1.0
 * @category utils
 */
export const eventOptions = (
  where: string,
  options: LangChainAuditOptions | undefined,
): UnknownKeyAuditOptions | undefined => recordingOptions(where, 'telemetry', options, dispatchWarning)
