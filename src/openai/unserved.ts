// Internal to toolstack/openai (not re-exported): the words that answer a custom (free-text) tool call,
// Chat Completions' and the Responses API's alike. A provider serves function tools only.
import { cut, describeValue, escapeControls } from '../kernel/describe.js'

// a custom tool's name comes from the model: cut before it is shown
const MAX_NAME_SHOWN = 80

/** Why a custom tool call named `name` (the model's, read unguarded: any value) was not run, on one line. */
export const unservedText = (name: unknown): string => {
  const shown = typeof name === 'string' ? JSON.stringify(cut(name, MAX_NAME_SHOWN)) : describeValue(name)
  return `custom tools are not served here: ${escapeControls(shown)} was not run; call a function tool instead`
}
