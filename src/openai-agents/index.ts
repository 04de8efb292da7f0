/**
 * toolstack/openai-agents: toolstack stacks as OpenAI Agents SDK function tools, and
 * the unknown-key alarm around a user's own tools. A separate entry point; it loads
 * nothing of the SDK at run time (its types only). Re-exports only; nothing runs at
 * import.
 *
 * @since 0.1.0
 */
export * from './tools.js'
export * from './approval.js'
