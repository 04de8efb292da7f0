/**
 * toolstack/claude-agent: the Claude Agent SDK's `PreToolUse` hook and `canUseTool` built from toolstack's audit
 * and policy — each call's raw `tool_input` compared with the schema its MCP tool was listed with, and a
 * `withPolicy` rule set as the session's permission decisions. Types only from the SDK (nothing of it is loaded
 * at run time); `@modelcontextprotocol/sdk` is loaded to list the MCP servers the CLI starts. Re-exports only;
 * nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './audit.js'
export * from './policy.js'
export type { ListedTool } from './servers.js'
