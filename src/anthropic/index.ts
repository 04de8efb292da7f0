/**
 * toolstack/anthropic: what a host of the Anthropic SDK (`@anthropic-ai/sdk`) writes by hand around a provider —
 * a stack's tools as the Messages API's tools, an assistant message's `tool_use` blocks answered with
 * `tool_result` blocks, a stack's tools for the SDK's tool runner — and the unknown-key audit as a client
 * middleware, for code that keeps its own tools. Types only from the SDK (nothing of it is loaded at run time).
 * Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './messages.js'
export * from './runner.js'
export * from './middleware.js'
