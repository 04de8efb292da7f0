/**
 * toolstack/ai-sdk: the unknown-key audit inside the Vercel AI SDK (and Mastra, which runs on it), and
 * toolstack stacks as AI SDK tools. A separate entry point, so the core never loads `ai`. Re-exports
 * only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './middleware.js'
export * from './tools.js'
export * from './approval.js'
export * from './mastra.js'
