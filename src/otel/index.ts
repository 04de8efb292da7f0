/**
 * toolstack/otel: the audit's warnings and diagnostics as OpenTelemetry span events, and its counts as an
 * observable counter, for the library and every adapter. Uses `@opentelemetry/api` only (an optional peer
 * dependency): with no SDK registered, nothing is recorded. Re-exports only; nothing runs at import.
 *
 * @since 0.1.0
 */
export * from './events.js'
export * from './metrics.js'
