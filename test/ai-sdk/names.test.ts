// MCP tool names that are not legal function names are listed with a hash suffix; the
// AI SDK shows them as the ToolSet's keys. They are the same in every session, and a
// call under the listed name reaches the server's own tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { generateText, stepCountIs } from 'ai'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { fromMcpClient } from '../../src/mcp/index.js'
import { toAiSdkTools } from '../../src/ai-sdk/index.js'
import { linked } from '../mcp/fixtures.js'
import { scriptedModel, toolOutputs } from './support.js'

const notesServer = (): McpServer => {
  const server = new McpServer({ name: 'notes', version: '1.0.0' })
  server.registerTool(
    'notes.search',
    { description: 'Finds notes', inputSchema: { query: z.string() } },
    ({ query }) => ({ content: [{ type: 'text', text: `searched ${query}` }] }),
  )
  return server
}

describe('MCP names in a ToolSet', () => {
  it('are the same in two sessions, and a call under the listed name reaches notes.search', async () => {
    const sessions = await Promise.all([linked(notesServer()), linked(notesServer())])
    try {
      const [a, b] = await Promise.all(sessions.map((s) => toAiSdkTools(fromMcpClient(s.client))))
      const names = Object.keys(a ?? {})
      expect(names).toHaveLength(1)
      expect(names[0]).toMatch(/^notes_search_[0-9a-f]{8}$/)
      expect(Object.keys(b ?? {})).toEqual(names)
      const model = scriptedModel((_, turn) =>
        turn === 0 ? [{ id: 'c1', tool: names[0] as string, input: '{"query":"deadline"}' }] : 'done',
      )
      await generateText({ model, tools: a ?? {}, prompt: 'go', stopWhen: stepCountIs(3) })
      expect(toolOutputs(model.prompts.at(-1) ?? []).get('c1')).toEqual({ type: 'text', value: 'searched deadline' })
    } finally {
      await Promise.all(sessions.map((s) => s.close()))
    }
  })
})
