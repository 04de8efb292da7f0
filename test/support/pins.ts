// A pin of a definition as the stores' tests write one: its hash, and a fixed time.
import { hashDefinition } from '../../src/extend.js'
import type { Pin, ToolDefinition } from '../../src/extend.js'

export const pinOf = (definition: ToolDefinition): Pin => ({
  tool: definition.name,
  hash: hashDefinition(definition).hash,
  at: '2026-12-05T00:00:00.000Z',
  definition,
})
