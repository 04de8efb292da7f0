/**
 * toolstack/google: what a host of `@google/genai` writes by hand around a provider — a stack's tools as
 * function declarations, a response's function calls answered with `functionResponse` parts, a stack as a
 * `CallableTool` for the SDK's automatic function calling — and the unknown-key audit as the client's
 * `httpOptions.fetch`, for code that keeps its own tools (`mcpToTool`'s included). Types only from the SDK
 * (nothing of it is loaded at run time). Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './functions.js'
export * from './fetch.js'
