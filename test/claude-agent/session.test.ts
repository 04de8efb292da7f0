// The Claude Agent SDK driven for real and offline: query() starts its bundled Claude Code CLI, pointed
// (ANTHROPIC_BASE_URL) at a loopback server answering with recorded Messages API turns; the session has an
// in-process MCP server and the reference filesystem server over stdio. claudeAgentAudit's PreToolUse hook
// hears each call's raw tool_input against the schema its tool was listed with, each pair once;
// claudeAgentPolicy's hook and canUseTool answer the SDK's permission decisions.
import { afterEach, describe, expect, it } from 'vitest'
import type { CanUseTool } from '@anthropic-ai/claude-agent-sdk'
import type { UnknownKeyWarning } from '../../src/index.js'
import { formatWarning } from '../../src/index.js'
import { claudeAgentAudit, claudeAgentPolicy } from '../../src/claude-agent/index.js'
import type { Workspace } from './support.js'
import { runSession, workspace } from './support.js'

let ws: Workspace | undefined
afterEach(() => {
  ws?.remove()
  ws = undefined
})

const allowAll: CanUseTool = async (_, input) => ({ behavior: 'allow', updatedInput: input })

describe('claudeAgentAudit in a real session (the CLI against a loopback server)', () => {
  it('hears every MCP call’s raw tool_input, each pair once with its path and did-you-mean; the tools receive exactly what they would without it', async () => {
    ws = workspace()
    const plain = await runSession(ws, { mcpServers: ws.servers(), canUseTool: allowAll })
    const withoutAudit = [...ws.received]
    ws.received.length = 0

    const warnings: Array<UnknownKeyWarning> = []
    const audit = await claudeAgentAudit({ mcpServers: ws.servers(), onWarn: (w) => void warnings.push(w) })
    // the stdio server was listed when the audit was made; the in-process one is heard as the CLI lists it
    expect(audit.auditedTools()).toContain('mcp__fs__read_text_file')
    const audited = await runSession(ws, { ...audit.options, canUseTool: allowAll })

    expect(audited.result).toBe('The demo is on 2 December.')
    expect(ws.received).toEqual(withoutAudit)
    // the in-process server's zod schema stripped the misspelt key before the tool ran
    expect(ws.received[0]).toEqual({ tool: 'search', args: { query: 'demo', opts: {} } })
    expect([...audited.results]).toEqual([...plain.results])
    expect(warnings.map(formatWarning)).toEqual([
      'toolstack: mcp__notes__search call toolu_01 carried undeclared argument key "opts.limmit" (declared: "opts", "query") (did you mean opts.limit?)',
      'toolstack: mcp__notes__write call toolu_03 carried undeclared argument key "mode" (declared: "path", "text")',
      'toolstack: mcp__fs__read_text_file call toolu_04 carried undeclared argument key "haed" (declared: "head", "path", "tail") (did you mean head?)',
    ])
    expect(audit.stats().find((s) => s.tool === 'mcp__notes__search')).toEqual({
      tool: 'mcp__notes__search',
      key: 'opts.limmit',
      calls: 2,
      firstId: 'toolu_01',
    })
    expect(audit.auditedTools()).toEqual(expect.arrayContaining(['mcp__notes__search', 'mcp__notes__write']))
  })

  it('with the policy beside it: allow, deny with words the model reads, and ask handed to the host’s prompt', async () => {
    ws = workspace()
    const dir = ws.dir
    const warnings: Array<UnknownKeyWarning> = []
    const audit = await claudeAgentAudit({ mcpServers: ws.servers(), onWarn: (w) => void warnings.push(w) })
    const asked: Array<[string, unknown, string | undefined]> = []
    const policy = claudeAgentPolicy({
      rules: [
        { tool: 'mcp__notes__search', decision: 'allow' },
        { tool: 'mcp__notes__write', decision: 'deny', under: '/srv/notes', note: 'the notes are read-only' },
        { tool: 'mcp__fs__*', decision: 'ask', under: dir, note: 'reads of the workspace need a human' },
      ],
      canUseTool: async (tool, input, options) => {
        asked.push([tool, input, options.decisionReason])
        return { behavior: 'allow', updatedInput: input }
      },
    })
    const session = await runSession(ws, {
      mcpServers: audit.mcpServers,
      hooks: { PreToolUse: [audit.preToolUse, policy.preToolUse] },
      canUseTool: policy.canUseTool,
    })
    expect(session.result).toBe('The demo is on 2 December.')
    // the searches ran unasked; the write never reached its tool; the read ran once the host said yes
    expect(ws.received.map((r) => r.tool)).toEqual(['search', 'search'])
    expect(session.results.get('toolu_03')).toEqual({
      content: expect.stringContaining(
        'The permission policy refused this call to "mcp__notes__write" (rule: deny "mcp__notes__write" under /srv/notes). Reason: the notes are read-only.',
      ) as unknown,
      is_error: true,
    })
    expect(asked).toEqual([
      [
        'mcp__fs__read_text_file',
        { path: `${dir}/notes.txt`, haed: 1 },
        `the permission policy asks: ask "mcp__fs__*" under ${dir}: reads of the workspace need a human`,
      ],
    ])
    expect(session.results.get('toolu_04')?.content).toContain('Demo on 2 December.')
    // the audit heard every call, the refused one included
    expect(warnings.map((w) => w.tool)).toEqual(['mcp__notes__search', 'mcp__notes__write', 'mcp__fs__read_text_file'])
  })
})
