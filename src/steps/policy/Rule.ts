/**
 * A policy rule and its codec: which tools it names, what it decides, and where. Rules are validated once, at
 * construction, so a typo is a `TypeError` that names it rather than a rule that silently never fires.
 *
 * @since 0.1.0
 */
import * as t from 'io-ts/lib/index.js'
import type { Either } from 'fp-ts/lib/Either.js'
import { isLeft, left, right } from 'fp-ts/lib/Either.js'
import { describeValue } from '../../kernel/describe.js'
import { normalizeAbsolute } from '../../kernel/paths.js'
import { hasOwn } from '../../kernel/guards.js'
import { HASH_PATTERN } from '../pins/Canonical.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a rule decides. When several rules fire, the strongest wins: deny > ask > allow.
 *
 * @since 0.1.0
 * @category model
 */
export type Decision = 'allow' | 'deny' | 'ask'

/**
 * A policy rule. `tool` is an exact name, a trailing-`*` prefix glob (`fs_*`) or `*`; `under` narrows it to
 * calls whose locations lie in a directory; `note` is the reason a model is given when the rule refuses.
 * `definition`, in a grant only, is the hash of the tool's definition it was given under (see
 * `withDefinitionPins`): an allowing grant holds while the tool's definition is that one.
 *
 * @since 0.1.0
 * @category model
 */
export interface Rule {
  readonly tool: string
  readonly decision: Decision
  readonly under?: string
  readonly note?: string
  readonly definition?: string
}

/**
 * The members a rule may have; any other is rejected by name.
 *
 * @since 0.1.0
 * @category model
 */
export const RULE_MEMBERS: ReadonlyArray<string> = Object.freeze(['tool', 'decision', 'under', 'note', 'definition'])

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

/**
 * Whether a string is a valid tool pattern: non-empty, with `*` only as its last character.
 *
 * @example
 * import { isToolGlob } from './Rule.js'
 * assert.deepStrictEqual(['*', 'fs_*', 'fs_read', '*_read', 'f*s', '**', ''].map(isToolGlob), [
 *   true,
 *   true,
 *   true,
 *   false,
 *   false,
 *   false,
 *   false,
 * ])
 *
 * @since 0.1.0
 * @category codecs
 */
export const isToolGlob = (s: string): boolean => s !== '' && !s.slice(0, -1).includes('*')

/**
 * @since 0.1.0
 * @category codecs
 */
export const ToolGlob: t.Type<string, string, unknown> = new t.Type<string, string, unknown>(
  'a tool name, a prefix glob ending in "*", or "*" (a "*" anywhere else is not supported)',
  (u): u is string => typeof u === 'string' && isToolGlob(u),
  (u, c) => (typeof u === 'string' && isToolGlob(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
)

/**
 * @since 0.1.0
 * @category codecs
 */
export const DecisionCodec: t.Type<Decision, Decision, unknown> = t.keyof(
  { allow: null, deny: null, ask: null },
  '"allow", "deny" or "ask"',
)

/**
 * A directory for `under` or a root: a clean absolute POSIX path (no `..` segment, NUL, backslash or leading
 * `~`), decoded to normal form.
 *
 * @since 0.1.0
 * @category codecs
 */
export const AbsoluteDirectory: t.Type<string, string, unknown> = new t.Type<string, string, unknown>(
  'an absolute POSIX path without "..", NUL, backslash or "~"',
  (u): u is string => typeof u === 'string' && normalizeAbsolute(u)._tag === 'Right',
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c)
    const n = normalizeAbsolute(u)
    return n._tag === 'Right' ? t.success(n.right) : t.failure(u, c)
  },
  t.identity,
)

/**
 * A definition hash, as a grant records it: `sha256:` and 64 lowercase hexadecimal digits.
 *
 * @since 0.1.0
 * @category codecs
 */
export const DefinitionHash: t.Type<string, string, unknown> = new t.Type<string, string, unknown>(
  'a definition hash ("sha256:" and 64 hexadecimal digits)',
  (u): u is string => typeof u === 'string' && HASH_PATTERN.test(u),
  (u, c) => (typeof u === 'string' && HASH_PATTERN.test(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
)

const Members = t.intersection([
  t.type({ tool: ToolGlob, decision: DecisionCodec }),
  t.partial({ under: AbsoluteDirectory, note: t.string, definition: DefinitionHash }),
])

/**
 * A rule, exactly: unknown members are rejected (never stripped), `under` is decoded to normal form, and the
 * result is a fresh frozen object.
 *
 * @since 0.1.0
 * @category codecs
 */
export const RuleCodec: t.Type<Rule, Rule, unknown> = new t.Type<Rule, Rule, unknown>(
  'a rule { tool, decision, under?, note?, definition? }',
  (u): u is Rule => RuleCodec.decode(u)._tag === 'Right',
  (u, c) => {
    if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c)
    let keys: ReadonlyArray<string>
    try {
      keys = Object.keys(u)
    } catch {
      return t.failure(u, c, 'cannot be read')
    }
    const unknown = keys.filter((k) => !RULE_MEMBERS.includes(k))
    const decoded = Members.validate(u, c)
    if (unknown.length > 0) {
      // every problem at once: a rule with a typo often has a second one
      const named: t.ValidationError = {
        value: u,
        context: c,
        message:
          `has unknown member${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')} ` +
          `(a rule has: ${RULE_MEMBERS.join(', ')})`,
      }
      return t.failures([named, ...(isLeft(decoded) ? decoded.left : [])])
    }
    if (isLeft(decoded)) return decoded
    const { tool, decision, under, note, definition } = decoded.right
    // own members only: an inherited `under` must not narrow (or widen) anything
    return t.success(
      Object.freeze({
        tool,
        decision,
        ...(under !== undefined && hasOwn(u, 'under') ? { under } : {}),
        ...(note !== undefined && hasOwn(u, 'note') ? { note } : {}),
        ...(definition !== undefined && hasOwn(u, 'definition') ? { definition } : {}),
      }),
    )
  },
  t.identity,
)

const tagOf = (type: t.Decoder<unknown, unknown>): unknown => (type as { readonly _tag?: unknown })._tag

// An intersection adds a context entry per member, keyed by its index under a non-array parent; that key does
// not locate the value, so it is skipped. Array positions render as [i].
const pathOf = (label: string, e: t.ValidationError): string => {
  let out = label
  // the root (the first entry) has no parent and names nothing
  let parent: t.ContextEntry | undefined
  for (const entry of e.context) {
    const under = parent
    parent = entry
    if (under === undefined) continue
    const parentTag = tagOf(under.type)
    const inArray = parentTag === 'ArrayType' || parentTag === 'ReadonlyArrayType'
    if (inArray) out += `[${entry.key}]`
    else {
      if (!/^\d+$/.test(entry.key)) out += `.${entry.key}`
    }
  }
  return out
}

/**
 * io-ts errors as one line per problem, each naming where it is (`rules[2].decision`).
 *
 * @since 0.1.0
 * @category utils
 */
export const drawRuleErrors = (label: string, errors: t.Errors): string =>
  errors
    .map((e) => {
      const where = pathOf(label, e)
      if (e.message !== undefined) return `${where} ${e.message}`
      const expected = e.context[e.context.length - 1]?.type.name ?? 'a valid value'
      return `${where} must be ${expected}, got ${describeValue(e.value)}`
    })
    .filter((line, i, all) => all.indexOf(line) === i)
    .join('; ')

/**
 * Decodes one rule, or returns a Left describing what is wrong with it.
 *
 * @example
 * import { decodeRule } from './Rule.js'
 * assert.deepStrictEqual(decodeRule({ tool: 'fs_*', decision: 'allow', under: '/p/' }), {
 *   _tag: 'Right',
 *   right: { tool: 'fs_*', decision: 'allow', under: '/p' },
 * })
 * assert.deepStrictEqual(decodeRule({ tool: 'x', decision: 'alow' }), {
 *   _tag: 'Left',
 *   left: 'rule.decision must be "allow", "deny" or "ask", got the string "alow"',
 * })
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeRule = (u: unknown, label = 'rule'): Either<string, Rule> => {
  const d = RuleCodec.decode(u)
  return isLeft(d) ? left(drawRuleErrors(label, d.left)) : right(d.right)
}

/**
 * Decodes a list of rules, or returns a Left describing what is wrong with each bad one, by index.
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeRules = (u: unknown, label = 'rules'): Either<string, ReadonlyArray<Rule>> => {
  if (!Array.isArray(u)) return left(`${label} must be an array of rules, got ${describeValue(u)}`)
  const d = t.readonlyArray(RuleCodec).decode(u)
  return isLeft(d) ? left(drawRuleErrors(label, d.left)) : right(Object.freeze(d.right))
}

/**
 * What is wrong with static rules that name a definition: only a grant records one (an "always" answer, under
 * the tool's definition then); `undefined` when none does.
 *
 * @example
 * import { definitionInRules } from './Rule.js'
 * const hash = 'sha256:' + '0'.repeat(64)
 * assert.strictEqual(
 *   definitionInRules([{ tool: 'x', decision: 'allow', definition: hash }], 'rules'),
 *   'rules[0].definition: only a grant names a definition (an "always" answer records it); remove it from the rules',
 * )
 *
 * @since 0.1.0
 * @category codecs
 */
export const definitionInRules = (rules: ReadonlyArray<Rule>, label: string): string | undefined => {
  const i = rules.findIndex((r) => r.definition !== undefined)
  return i < 0
    ? undefined
    : `${label}[${i}].definition: only a grant names a definition (an "always" answer records it); remove it from the rules`
}

// -------------------------------------------------------------------------------------
// utils
// -------------------------------------------------------------------------------------

/**
 * Whether a rule's `tool` pattern names `tool`.
 *
 * @example
 * import { matchesTool } from './Rule.js'
 * assert.strictEqual(matchesTool('fs_*')('fs_read'), true)
 * assert.strictEqual(matchesTool('fs_read')('fs_read_all'), false)
 *
 * @since 0.1.0
 * @category utils
 */
export const matchesTool = (pattern: string): ((tool: string) => boolean) => {
  if (!pattern.endsWith('*')) return (tool) => tool === pattern
  const prefix = pattern.slice(0, -1)
  return (tool) => tool.startsWith(prefix)
}

/**
 * How strong a decision is: deny 3 > ask 2 > allow 1.
 *
 * @since 0.1.0
 * @category utils
 */
export const strength = (d: Decision): number => (d === 'deny' ? 3 : d === 'ask' ? 2 : 1)

/**
 * Whether a rule refuses a tool outright: a deny with no `under`.
 *
 * @since 0.1.0
 * @category utils
 */
export const isBareDeny = (r: Rule): boolean => r.decision === 'deny' && r.under === undefined

/**
 * A rule in a few words, for refusals and logs.
 *
 * @example
 * import { drawRule } from 'toolstack'
 * assert.strictEqual(drawRule({ tool: 'fs_*', decision: 'deny', under: '/etc' }), 'deny "fs_*" under /etc')
 *
 * @since 0.1.0
 * @category utils
 */
export const drawRule = (r: Rule): string =>
  `${r.decision} ${JSON.stringify(r.tool)}${r.under === undefined ? '' : ` under ${r.under}`}`
