/**
 * What every framework's approval bridge shares: a framework asks its human before a tool runs (the AI SDK's
 * tool approval, the Agents SDK's interruptions), and the approved call then goes down the stack marked as
 * approved, where `withPolicy`'s `onAsk` answers `allow-once` for it. The adapters add only their framework's
 * side.
 *
 * @since 0.1.0
 */
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import { describeValue } from '../../kernel/describe.js'
import { isRecord } from '../../kernel/guards.js'
import { modify } from '../../kernel/ref.js'
import type { PermissionAnswer } from './Answer.js'
import type { OnAsk } from './ask.js'
import type { LocationScope, Roots } from '../../kernel/paths.js'
import type { LocationResolver } from '../../kernel/resolve.js'
import type { ToolCall, ToolDeclaration } from '../../kernel/model.js'
import type { Evaluation } from './evaluate.js'
import { evaluate } from './evaluate.js'
import { declaredArguments } from './listing.js'
import { decodeResolver, locationNames } from './options.js'
import type { Rule } from './Rule.js'
import { decodeRules } from './Rule.js'

/**
 * @since 0.1.0
 * @category model
 */
export interface PolicyApprovalOptions {
  /** The rules given to `withPolicy`: the same ones, so both decide `ask` for the same calls. */
  readonly rules: ReadonlyArray<Rule>
  /** The `roots` given to `withPolicy`, if any. */
  readonly roots?: Roots
  /** The `locationArgs` given to `withPolicy`, if any: the same names are read as locations. */
  readonly locationArgs?: ReadonlyArray<string>
  /** The `resolver` given to `withPolicy`, if any: locations are put in the same form. */
  readonly resolver?: 'lexical' | 'filesystem' | LocationResolver | ((tool: string) => LocationResolver)
  /**
   * Called for a call the policy asks about that the framework has not approved. Default: answer `unasked`, so
   * it is refused as no one was asked (`NoOneToAsk`): a framework does not run a call its human declined.
   */
  readonly onAsk?: OnAsk
}

/**
 * The library's end of a bridge: the options checked, and the calls approved so far.
 *
 * @since 0.1.0
 * @category model
 */
export interface ApprovalBridge {
  readonly rules: ReadonlyArray<Rule>
  readonly roots: Roots
  /**
   * The rules' decision on a call of `tool` with `input`, judged as `withPolicy` judges it: only the locations
   * the tool declares in the last listing told (`listed`) decide, read with the same names and resolver; before
   * a listing, every location is unknown (an `under` rule fails closed).
   */
  readonly evaluate: (tool: string, input: unknown) => Evaluation
  /** Tells the bridge the provider's listing (what `toAiSdkTools` and `toAgentsTools` list), as `withPolicy` hears it. */
  readonly listed: (declarations: ReadonlyArray<unknown>) => void
  /** For `withPolicy({ rules, onAsk })`: `allow-once` for a call approved through the framework. */
  readonly onAsk: OnAsk
  /** Runs `task` with `call` (its id, its tool and its arguments) marked approved. */
  readonly approvedWhile: <A>(call: ToolCall, task: () => Promise<A>) => Promise<A>
}

// the framework asked no one about a call it did not approve (it never runs one its human declined)
const UNASKED: PermissionAnswer = { action: 'unasked' }
const ALLOW: PermissionAnswer = { action: 'allow-once' }

/**
 * What an approval is for: the call's id, its tool, and its arguments as compact JSON. An id is the model's (or a
 * backend's `call_0`), so it alone would let another call that reuses it through while the approved one runs;
 * only the very call the human saw is allowed. `undefined` for arguments that cannot be written as JSON: such a
 * call is never marked.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const approvalKey = (call: ToolCall): string | undefined => {
  try {
    const raw: unknown = call.function.arguments
    const args: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw
    return JSON.stringify([call.id, call.function.name, args])
  } catch {
    return undefined
  }
}

// each key with how many approved calls hold it now: two runs of one call end one at a time
// (an undefined key, for a call that cannot be written as JSON, is counted too, and never looked up)
const marked =
  (key: string | undefined, by: 1 | -1) =>
  (s: ReadonlyMap<string | undefined, number>): readonly [void, ReadonlyMap<string | undefined, number>] => {
    const next = new Map(s)
    const n = (next.get(key) ?? 0) + by
    if (n > 0) next.set(key, n)
    else next.delete(key)
    return [undefined, next]
  }

/**
 * Checks `options` (throws a `TypeError` naming `where` and the problem) and creates the set of approved
 * calls: one ref, updated with `modify`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const approvalBridge = (options: PolicyApprovalOptions, where: string): ApprovalBridge => {
  if (!isRecord(options))
    throw new TypeError(
      `${where}: options must be an object { rules, roots?, locationArgs?, resolver?, onAsk? }, got ${describeValue(options)}`,
    )
  const decoded = decodeRules(options.rules, 'rules')
  if (decoded._tag === 'Left') throw new TypeError(`${where}: ${decoded.left}`)
  const fallback = options.onAsk
  if (fallback !== undefined && typeof fallback !== 'function')
    throw new TypeError(`${where}: option "onAsk" must be a function, got ${describeValue(fallback)}`)
  const rules = decoded.right
  const roots = options.roots ?? {}
  const { names, notLocations } = locationNames(where, options.locationArgs)
  const resolverOf = decodeResolver(where, options.resolver)
  // each tool's declared argument names, from the last listing told; undefined until then
  const declared: IORef<ReadonlyMap<string, ReadonlySet<string>> | undefined> = newIORef<
    ReadonlyMap<string, ReadonlySet<string>> | undefined
  >(undefined)()
  const scopeOf = (tool: string): LocationScope => ({ names, notLocations, declared: declared.read()?.get(tool) })
  const approved: IORef<ReadonlyMap<string | undefined, number>> = newIORef<ReadonlyMap<string | undefined, number>>(
    new Map(),
  )()
  const isApproved = (call: ToolCall): boolean => {
    const key = approvalKey(call)
    // a call whose arguments cannot be written as JSON has no key: never approved, though such a call is marked
    return key !== undefined && approved.read().has(key)
  }
  return {
    rules,
    roots,
    evaluate: (tool, input) => evaluate(rules, tool, input, roots, scopeOf(tool), resolverOf(tool)),
    listed: (declarations) => {
      try {
        if (Array.isArray(declarations))
          declared.write(declaredArguments(declarations as ReadonlyArray<ToolDeclaration>))()
      } catch {
        // a listing that cannot be read leaves the last one in place, as in withPolicy
      }
    },
    onAsk: (request) => (isApproved(request.call) ? ALLOW : fallback === undefined ? UNASKED : fallback(request)),
    approvedWhile: async (call, task) => {
      const key = approvalKey(call)
      modify(marked(key, 1))(approved)()
      try {
        return await task()
      } finally {
        modify(marked(key, -1))(approved)()
      }
    },
  }
}
