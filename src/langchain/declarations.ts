// What the handler and the middleware share (internal: not re-exported by the entry point): a LangChain
// tool's schema, zod or JSON Schema, as the declaration the audit reads.
import { toJsonSchema } from '@langchain/core/utils/json_schema'

/**
 * One declaration (name, parameters) of a tool whose schema converts to JSON Schema with LangChain's own
 * `toJsonSchema`; a tool whose schema does not (a `z.date()`, say) gives none. The name is read by the
 * catalogue, which drops a declaration whose name is not a string.
 */
export const declarationOf = (name: unknown, schema: unknown): ReadonlyArray<unknown> => {
  try {
    return [{ function: { name, parameters: toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]) } }]
  } catch {
    return []
  }
}

/**
 * The `metadata` member that marks a tool made by `toLangChainTools`: its calls go down a toolstack
 * stack, whose own `withUnknownKeyAudit` hears them, so the middleware leaves them to it and a pair
 * is said once.
 */
export const STACK_TOOL = 'toolstack_stack_tool'
