/**
 * Model-facing tool names. MCP names may contain `.`, `/` and spaces and run to 128 characters;
 * chat-completion function names must match `^[a-zA-Z0-9_-]{1,64}$`. The mapping is pure,
 * deterministic and injective, so a server's tools get the same names in every session and every call
 * routes back to exactly one tool.
 *
 * @since 0.1.0
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a model-facing function name must match.
 *
 * @since 0.1.0
 * @category model
 */
export const LEGAL_TOOL_NAME: RegExp = /^[a-zA-Z0-9_-]{1,64}$/

const MAX_LENGTH = 64
const LEGAL_CHAR = /^[a-zA-Z0-9_-]$/
// after this many salted hashes, fall back to suffixes distinct by construction, so the search ends
const HASH_TRIES = 1 << 16

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * Whether a name can be shown to a model as it is.
 *
 * @example
 * import { isLegalToolName } from 'toolstack/mcp'
 * assert.strictEqual(isLegalToolName('read_text_file'), true)
 * assert.strictEqual(isLegalToolName('files.read'), false)
 *
 * @since 0.1.0
 * @category guards
 */
export const isLegalToolName = (name: string): boolean => LEGAL_TOOL_NAME.test(name)

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

// FNV-1a over UTF-16 code units: tiny, pure, the same on every platform. Its 32 bits
// are not collision-proof, which is why `toolNameMapping` checks every candidate.
const fnv1a = (s: string, salt: number): number => {
  let h = (0x811c9dc5 ^ Math.imul(salt, 0x9e3779b1)) >>> 0
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const suffixOf = (name: string, salt: number): string =>
  salt < HASH_TRIES ? fnv1a(name, salt).toString(16).padStart(8, '0') : `z${salt.toString(36)}`

// One `_` per illegal code point, so an astral character does not become two.
const sanitize = (name: string): string => {
  let out = ''
  for (const ch of name) out += LEGAL_CHAR.test(ch) ? ch : '_'
  return out
}

const derivedName = (name: string, salt: number): string => {
  const suffix = suffixOf(name, salt)
  return `${sanitize(name).slice(0, MAX_LENGTH - 1 - suffix.length)}_${suffix}`
}

/**
 * MCP name → model-facing name, for every distinct name given. A legal name maps to itself. Any other
 * name is cleaned (each illegal character becomes `_`), cut to fit, and given a `_` and an 8-hex-digit
 * hash of the original name: since a changed name always carries its hash, a legal name never silently
 * comes to mean a different tool when a server adds one. On the rare collision the hash is salted until
 * the name is free; names are processed in sorted order, so the result depends only on the set of
 * names, not on the order a server listed them in.
 *
 * @example
 * import { toolNameMapping } from 'toolstack/mcp'
 * const m = toolNameMapping(['read_file', 'files.read'])
 * assert.strictEqual(m.get('read_file'), 'read_file')
 * assert.match(m.get('files.read') ?? '', /^files_read_[0-9a-f]{8}$/)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const toolNameMapping = (names: Iterable<string>): ReadonlyMap<string, string> => {
  const unique = [...new Set(names)].sort()
  const out = new Map<string, string>()
  const taken = new Set<string>()
  for (const name of unique) {
    if (isLegalToolName(name)) {
      out.set(name, name)
      taken.add(name)
    }
  }
  for (const name of unique) {
    if (out.has(name)) continue
    for (let salt = 0; ; salt++) {
      const candidate = derivedName(name, salt)
      if (taken.has(candidate)) continue
      out.set(name, candidate)
      taken.add(candidate)
      break
    }
  }
  return out
}
