/**
 * toolstack/openai: what a host of the `openai` SDK would write by hand around a provider — an
 * assistant's tool calls as the SDK types them, tool messages the Chat Completions API accepts, and the
 * Responses API's tools, calls, output items and outputs. Mappings that use the SDK's types only
 * (nothing of it is loaded at run time). Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './chat.js'
export * from './responses.js'
