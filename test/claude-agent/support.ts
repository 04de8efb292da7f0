// A real Claude Agent SDK session, offline: query() starts the SDK's bundled Claude Code CLI with
// ANTHROPIC_BASE_URL pointed at a loopback server of the test's, which answers the CLI's Messages API requests
// with the recorded turns of test/claude-agent/fixtures (streamed, as the CLI asks). The session has an
// in-process MCP server (createSdkMcpServer) and the reference filesystem server over stdio, each recording
// what its tools receive.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CanUseTool, HookCallbackMatcher, HookEvent, McpServerConfig } from '@anthropic-ai/claude-agent-sdk'
import { createSdkMcpServer, query, tool } from '@anthropic-ai/claude-agent-sdk'
import type { Message } from '@anthropic-ai/sdk/resources/messages'
import { z } from 'zod'
import type { Received } from '../support/loopback.js'
import { loopback } from '../support/loopback.js'
import { asEvents } from '../anthropic/support.js'

/** The recorded turns, `${dir}` in them replaced by the session's folder. */
export const turns = (dir: string): ReadonlyArray<Message> =>
  ['tool-use-nested', 'server-tool', 'parallel', 'final'].map(
    (name) =>
      JSON.parse(
        readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8').replaceAll('${dir}', dir),
      ) as Message,
  )

export interface Workspace {
  readonly dir: string
  /** The in-process `notes` server's tools' arguments, as each received them. */
  readonly received: Array<{ readonly tool: string; readonly args: unknown }>
  /** A new `notes` server (an SDK server holds one connection) and the filesystem server over stdio. */
  readonly servers: () => Record<string, McpServerConfig>
  readonly remove: () => void
}

const filesystem = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

export const workspace = (): Workspace => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstack-claude-'))
  writeFileSync(join(dir, 'notes.txt'), 'Demo on 2 December.\nRetro after.\n')
  const received: Array<{ tool: string; args: unknown }> = []
  const servers = (): Record<string, McpServerConfig> => ({
    notes: createSdkMcpServer({
      name: 'notes',
      tools: [
        tool(
          'search',
          'Searches the notes',
          { query: z.string(), opts: z.object({ limit: z.number() }).partial().optional() },
          async (args) => {
            received.push({ tool: 'search', args })
            return { content: [{ type: 'text', text: `found ${args.query}` }] }
          },
        ),
        tool('write', 'Writes a note', { path: z.string(), text: z.string() }, async (args) => {
          received.push({ tool: 'write', args })
          return { content: [{ type: 'text', text: 'written' }] }
        }),
      ],
    }),
    fs: { type: 'stdio', command: process.execPath, args: [filesystem, dir], alwaysLoad: true },
  })
  return { dir, received, servers, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }) }
}

export interface Session {
  /** Every request the CLI made to the Messages API. */
  readonly requests: ReadonlyArray<Received>
  /** The tool_result blocks the CLI sent back, by tool_use id. */
  readonly results: ReadonlyMap<string, { readonly content: unknown; readonly is_error?: boolean }>
  /** The session's final result text. */
  readonly result: string | undefined
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .map((c) => (typeof c === 'object' && c !== null ? String((c as { text?: unknown }).text ?? '') : ''))
          .join('')
      : ''

/** Runs one session of `prompt` over the workspace, with the given options, to its end. */
export const runSession = async (
  ws: Workspace,
  options: {
    readonly mcpServers: Record<string, McpServerConfig>
    readonly hooks?: Partial<Record<HookEvent, Array<HookCallbackMatcher>>>
    readonly canUseTool?: CanUseTool
  },
): Promise<Session> => {
  const recorded = turns(ws.dir)
  // the turn the CLI is at is the number of assistant messages it sends back: retries and side requests alike
  const server = await loopback((request) => {
    const body = request.body as { stream?: boolean; messages?: ReadonlyArray<{ role: string }> } | undefined
    if (!request.url.startsWith('/v1/messages?') && request.url !== '/v1/messages') return { json: { input_tokens: 1 } }
    const turn = (body?.messages ?? []).filter((m) => m.role === 'assistant').length
    const answer = recorded[Math.min(turn, recorded.length - 1)] as Message
    return body?.stream === true ? { sse: asEvents(answer) } : { json: answer }
  })
  const config = join(ws.dir, '.claude')
  let result: string | undefined
  try {
    for await (const m of query({
      prompt: 'When is the demo?',
      options: {
        cwd: ws.dir,
        persistSession: false,
        settingSources: [],
        maxTurns: 8,
        env: {
          ...process.env,
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: 'sk-ant-test',
          CLAUDE_CONFIG_DIR: config,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
        },
        ...options,
      },
    })) {
      if (m.type === 'result') result = 'result' in m ? m.result : undefined
    }
  } finally {
    await server.close()
  }
  const results = new Map<string, { content: unknown; is_error?: boolean }>()
  for (const r of server.received) {
    const messages = (r.body as { messages?: ReadonlyArray<{ role: string; content: unknown }> } | undefined)?.messages
    for (const m of messages ?? []) {
      if (m.role !== 'user' || !Array.isArray(m.content)) continue
      for (const b of m.content as ReadonlyArray<Record<string, unknown>>)
        if (b['type'] === 'tool_result')
          results.set(String(b['tool_use_id']), {
            content: textOf(b['content']),
            ...(b['is_error'] === true ? { is_error: true } : {}),
          })
    }
  }
  return { requests: server.received, results, result }
}
