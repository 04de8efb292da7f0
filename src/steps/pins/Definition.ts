/**
 * What is pinned of a tool: its definition (name, description, `inputSchema`, annotations), hashed in its
 * canonical form, and kept whole when it is short enough to compare a later definition with.
 *
 * @since 0.1.0
 */
import type { ToolDeclaration } from '../../kernel/model.js'
import { hasOwn, isRecord } from '../../kernel/guards.js'
import { HASH_PATTERN, canonicalJson, hashOf } from './Canonical.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A tool's definition as a server published it: what the model reads and what a call is shaped by. The name
 * is the one listed to the layer that pins it (under a registry, with its prefix).
 *
 * @since 0.1.0
 * @category model
 */
export interface ToolDefinition {
  readonly name: string
  readonly description?: string
  /** The tool's parameters as listed (a JSON Schema), unchanged; absent when it lists none. */
  readonly inputSchema?: unknown
  /** An MCP tool's annotations (`readOnlyHint`, `destructiveHint`, `title`, …), when known. */
  readonly annotations?: unknown
}

/**
 * A pinned definition: the tool it is of, the hash of its canonical JSON, when it was first seen, and the
 * definition itself when its canonical JSON is at most {@link MAX_DEFINITION_CHARS} characters (a longer one
 * is known by its hash only: a change to it is said, but not what changed).
 *
 * @since 0.1.0
 * @category model
 */
export interface Pin {
  readonly tool: string
  readonly hash: string
  /** When this definition was first seen, as an ISO 8601 time. */
  readonly at: string
  readonly definition?: ToolDefinition
}

/**
 * The longest canonical definition a pin keeps whole (characters): a server chooses how long its descriptions
 * are, and what is remembered of each tool stays bounded.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_DEFINITION_CHARS = 32_768

/**
 * The longest tool name a pin keeps (characters); a longer one is not pinned.
 *
 * @since 0.1.0
 * @category model
 */
export const MAX_TOOL_CHARS = 1_024

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A declaration's definition, with the annotations its server listed (an MCP tool's; a declaration itself has
 * none).
 *
 * @example
 * import { definitionOf } from './Definition.js'
 * assert.deepStrictEqual(
 *   definitionOf({ type: 'function', function: { name: 'add', parameters: { type: 'object' } } }, { readOnlyHint: true }),
 *   { name: 'add', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
 * )
 *
 * @since 0.1.0
 * @category constructors
 */
export const definitionOf = (declaration: ToolDeclaration, annotations?: unknown): ToolDefinition => {
  const f = declaration.function
  return {
    name: f.name,
    ...(typeof f.description === 'string' ? { description: f.description } : {}),
    ...(f.parameters === undefined ? {} : { inputSchema: f.parameters }),
    ...(annotations === undefined ? {} : { annotations }),
  }
}

/**
 * The canonical JSON of a definition, and its hash. Throws a `TypeError` when the definition holds what JSON
 * cannot (see `canonicalJson`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const hashDefinition = (definition: ToolDefinition): { readonly text: string; readonly hash: string } => {
  const text = canonicalJson(definition)
  return { text, hash: hashOf(text) }
}

/**
 * The pin of `definition` for `tool`, first seen `at`: hashed, and kept whole when short enough.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pinOf = (
  tool: string,
  definition: ToolDefinition,
  at: string,
  known?: { readonly text: string; readonly hash: string },
): Pin => {
  const { text, hash } = known ?? hashDefinition(definition)
  return text.length <= MAX_DEFINITION_CHARS ? { tool, hash, at, definition } : { tool, hash, at }
}

/**
 * The hash of a definition leaving its name out: what a tool renamed and otherwise unchanged keeps.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bodyHash = (definition: ToolDefinition): string => {
  const { name: _, ...body } = definition
  return hashOf(canonicalJson(body))
}

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

const decodeDefinition = (u: unknown): ToolDefinition | undefined => {
  if (!isRecord(u) || typeof u['name'] !== 'string') return undefined
  if (Object.keys(u).some((k) => !['name', 'description', 'inputSchema', 'annotations'].includes(k))) return undefined
  if (hasOwn(u, 'description') && typeof u['description'] !== 'string') return undefined
  return {
    name: u['name'],
    ...(typeof u['description'] === 'string' ? { description: u['description'] } : {}),
    ...(hasOwn(u, 'inputSchema') ? { inputSchema: u['inputSchema'] } : {}),
    ...(hasOwn(u, 'annotations') ? { annotations: u['annotations'] } : {}),
  }
}

/**
 * A pin read back from a store (a file a person may edit, a Redis anyone with access may write): its tool,
 * hash and time checked, and its definition kept only when it hashes to the pin's hash, so a definition that
 * was tampered with cannot make a later change read as smaller than it is. `undefined` for what is not a pin.
 *
 * @example
 * import { decodePin, hashDefinition } from './Definition.js'
 * const definition = { name: 'add', description: 'Adds two numbers' }
 * const { hash } = hashDefinition(definition)
 * assert.deepStrictEqual(decodePin({ tool: 'add', hash, at: '2026-01-01T00:00:00.000Z', definition }), {
 *   tool: 'add',
 *   hash,
 *   at: '2026-01-01T00:00:00.000Z',
 *   definition,
 * })
 * // a definition that does not match its hash is dropped: the hash is what was pinned
 * assert.strictEqual(decodePin({ tool: 'add', hash, at: 'x', definition: { name: 'add' } })?.definition, undefined)
 * assert.strictEqual(decodePin({ tool: 'add', hash: 'md5:1' }), undefined)
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodePin = (u: unknown): Pin | undefined => {
  if (!isRecord(u)) return undefined
  const { tool, hash, at } = u
  if (typeof tool !== 'string' || tool === '' || tool.length > MAX_TOOL_CHARS) return undefined
  if (typeof hash !== 'string' || !HASH_PATTERN.test(hash)) return undefined
  const time = typeof at === 'string' ? at.slice(0, 40) : ''
  const definition = decodeDefinition(u['definition'])
  if (definition === undefined) return { tool, hash, at: time }
  try {
    const known = hashDefinition(definition)
    return known.hash === hash && known.text.length <= MAX_DEFINITION_CHARS
      ? { tool, hash, at: time, definition }
      : { tool, hash, at: time }
  } catch {
    return { tool, hash, at: time }
  }
}
