// What the Agents SDK tests share: what they read back from the SDK's ScriptedModel, and the one tool the
// hooks and trace tests run.
import { tool } from '@openai/agents'
import type { ScriptedModel } from '@openai/agents/testing'
import { z } from 'zod'

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

/** A function tool `read` declaring `path` and `offset` (a zod schema, which the SDK uses to parse and strip). */
export const readTool = () =>
  tool({
    name: 'read',
    description: 'Reads a file',
    parameters: z.object({ path: z.string(), offset: z.number().nullable() }),
    execute: async (input) => `read ${input.path}`,
  })
