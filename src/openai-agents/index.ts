/**
 * toolstack/openai-agents: toolstack stacks as OpenAI Agents SDK function tools, and the unknown-key
 * audit of a run's tool calls (`auditAgent`, `auditRunner`: the SDK's own hooks, MCP tools included)
 * or around a user's own tools, each warning also a custom span in the run's trace. A separate entry
 * point that loads the SDK for its tracing API only. Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './tools.js'
export * from './approval.js'
export * from './hooks.js'
export type { AgentsAuditOptions } from './trace.js'
