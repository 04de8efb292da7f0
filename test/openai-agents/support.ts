// What agents.test.ts and nested.test.ts read back from the SDK's ScriptedModel.
import type { ScriptedModel } from '@openai/agents/testing'

/** What the model was sent as the output of each call, by call id. */
export const outputsSent = (model: ScriptedModel): Map<string, unknown> => {
  const out = new Map<string, unknown>()
  for (const c of model.calls) {
    const input = c.request.input
    if (!Array.isArray(input)) continue
    for (const item of input) if (item.type === 'function_call_result') out.set(item.callId, item.output)
  }
  return out
}

/** A tool's text output, as the SDK sends it to the model. */
export const text = (t: string) => ({ type: 'text', text: t })
