/**
 * `withUnknownKeyAudit`: a smoke alarm, not a valve. It compares each call's argument
 * keys with the properties the tool declared, warns once per (tool, key), and
 * forwards the very same call untouched.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import { isLeft } from 'fp-ts/lib/Either.js'
import * as t from 'io-ts/lib/index.js'
import type { Provider, ToolCall } from './Provider.js'
import { ReadableDeclaration, assertProvider } from './Provider.js'
import type { Suggestion } from './Suggest.js'
import type { ArgsAt } from './internal/argsMemo.js'
import { argsOfBatch, hasBatch, releaseBatch } from './internal/argsMemo.js'
import type { Catalogue } from './internal/catalogue.js'
import { byCounts, catalogueOf, emptyCatalogue, warnOnce } from './internal/catalogue.js'
import { assertCallback, decodeOptions } from './internal/options.js'
import { callIdOf } from './internal/results.js'
import type { StringMap } from './internal/StringMap.js'
import * as SM from './internal/StringMap.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The argument name every layer tolerates, declared or not: `withReasons` adds it.
 *
 * @since 0.1.0
 * @category model
 */
export const REASON_PARAM = 'reason'

/**
 * What `onWarn` is told, at most once per call.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyWarning {
  /** The tool name, as listed. */
  readonly tool: string
  /** Undeclared keys reported now for the first time, sorted. */
  readonly unknownKeys: ReadonlyArray<string>
  /** Every key the tool declares, sorted. */
  readonly declaredKeys: ReadonlyArray<string>
  /** The call's `id` as a string; `''` when it has none. */
  readonly id: string
  /** For each reported key that plainly points at one declared key, that key; in the order of `unknownKeys`. */
  readonly suggestions: ReadonlyArray<Suggestion>
}

/**
 * The (tool, key) pairs already reported: a persistent hash trie, so remembering one
 * more pair costs the same however many are remembered, and an old value is never
 * modified.
 *
 * @since 0.1.0
 * @category model
 */
export interface SeenSet {
  readonly _tag: 'SeenSet'
  /** How many (tool, key) pairs are remembered. */
  readonly size: number
  /** @internal tool name → keys; nested, so no two pairs can share an entry. */
  readonly byTool: StringMap<StringMap<true>>
}

/**
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditOptions {
  /** Told of each call that carries undeclared keys not reported before. Default: one line on stderr. */
  readonly onWarn?: (warning: UnknownKeyWarning) => IO<void>
  /**
   * Names treated exactly like `reason`: never reported, declared or not (keys a host
   * framework injects, such as `_meta` or `toolCallId`). `reason` is always tolerated.
   */
  readonly tolerate?: ReadonlyArray<string>
}

/**
 * How often one undeclared key recurred on one tool.
 *
 * @since 0.1.0
 * @category model
 */
export interface PairStat {
  readonly tool: string
  readonly key: string
  /** How many audited calls carried it. */
  readonly calls: number
  /** The id of the first call that carried it. */
  readonly firstId: string
}

interface PairCount {
  readonly calls: number
  readonly firstId: string
}

/**
 * Per (tool, undeclared key) pair, how many calls carried it: a persistent value,
 * like the seen-set.
 *
 * @since 0.1.0
 * @category model
 */
export interface PairCounts {
  readonly _tag: 'PairCounts'
  /** How many (tool, key) pairs are counted. */
  readonly size: number
  /** @internal tool name → key → how many calls carried it, and the first one's id */
  readonly byTool: StringMap<StringMap<PairCount>>
}

/**
 * A provider plus what it audits now.
 *
 * @since 0.1.0
 * @category model
 */
export interface AuditedProvider<E> extends Provider<E> {
  /** Sorted names of the tools whose calls are audited now (listed, with at least one declared property). */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many audited calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The seen-set with nothing in it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptySeenSet: SeenSet = { _tag: 'SeenSet', size: 0, byTool: SM.emptyStringMap() }

/**
 * No pair counted yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyPairCounts: PairCounts = { _tag: 'PairCounts', size: 0, byTool: SM.emptyStringMap() }

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

const EMPTY_KEYS: ReadonlyArray<string> = Object.freeze([])
const REASON_ONLY: ReadonlySet<string> = new Set([REASON_PARAM])

const tryDecode = (u: unknown): ReadableDeclaration | undefined => {
  try {
    const d = ReadableDeclaration.decode(u)
    return isLeft(d) ? undefined : d.right
  } catch {
    return undefined
  }
}

/**
 * Tool name → the set of its `parameters.properties` keys, for every declaration it
 * can read. Unreadable ones are left out; when two declarations share a name, the
 * first one wins (the one a model is most likely to have been shown).
 *
 * @example
 * import { extractDeclarations } from 'toolstack'
 * const m = extractDeclarations([{ type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { path: {}, offset: {} } } } }, null])
 * assert.deepStrictEqual([...m.get('fs_read') ?? []], ['path', 'offset'])
 * assert.strictEqual(m.size, 1)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const extractDeclarations = (
  declarations: ReadonlyArray<unknown>,
): ReadonlyMap<string, ReadonlySet<string>> => {
  const out = new Map<string, ReadonlySet<string>>()
  if (!Array.isArray(declarations)) return out
  for (const d of declarations) {
    const readable = tryDecode(d)
    if (readable === undefined) continue
    const { name, parameters } = readable.function
    if (out.has(name)) continue
    try {
      const properties = parameters.properties
      out.set(name, new Set(properties === undefined ? [] : Object.keys(properties)))
    } catch {
      // a Proxy that refuses to list its keys: unreadable, left out
    }
  }
  return out
}

/**
 * The keys not declared, sorted, never including `reason` (nor any name in
 * `tolerated`).
 *
 * @example
 * import { diffKeys } from 'toolstack'
 * assert.deepStrictEqual(diffKeys(new Set(['path', 'offset']))(['path', 'the rest', 'ffset', 'reason']), ['ffset', 'the rest'])
 * assert.deepStrictEqual(diffKeys(new Set(['path']), new Set(['_meta']))(['path', '_meta', 'x']), ['x'])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const diffKeys =
  (declared: ReadonlySet<string>, tolerated: ReadonlySet<string> = REASON_ONLY) =>
  (keys: ReadonlyArray<string>): ReadonlyArray<string> => {
    let out: Array<string> | undefined
    for (const k of keys) {
      if (declared.has(k) || k === REASON_PARAM || tolerated.has(k)) continue
      ;(out ??= []).push(k)
    }
    return out === undefined ? EMPTY_KEYS : out.sort()
  }

/**
 * The keys of `tool` not reported before, and the seen-set that remembers them. The
 * input seen-set is never modified; when nothing is new, it is returned as is.
 *
 * @example
 * import { emptySeenSet, firstSeen } from 'toolstack'
 * const [fresh, seen] = firstSeen('fs_read', ['ffset'])(emptySeenSet)
 * assert.deepStrictEqual(fresh, ['ffset'])
 * const [again, same] = firstSeen('fs_read', ['ffset'])(seen)
 * assert.deepStrictEqual(again, [])
 * assert.strictEqual(same, seen)
 *
 * @since 0.1.0
 * @category pure steps
 */
export const firstSeen =
  (tool: string, keys: ReadonlyArray<string>) =>
  (seen: SeenSet): readonly [ReadonlyArray<string>, SeenSet] => {
    const before = SM.get(seen.byTool, tool)
    let keysOfTool = before ?? SM.emptyStringMap<true>()
    let fresh: Array<string> | undefined
    for (const k of keys) {
      if (SM.has(keysOfTool, k)) continue
      keysOfTool = SM.set(keysOfTool, k, true)
      ;(fresh ??= []).push(k)
    }
    if (fresh === undefined) return [EMPTY_KEYS, seen]
    return [fresh, { _tag: 'SeenSet', size: seen.size + fresh.length, byTool: SM.set(seen.byTool, tool, keysOfTool) }]
  }

/**
 * Counts one more call of `tool`, with id `id`, carrying each of `keys`. Pure; the
 * input is never modified.
 *
 * @since 0.1.0
 * @category pure steps
 */
export const countPairs =
  (tool: string, keys: ReadonlyArray<string>, id: string) =>
  (counts: PairCounts): PairCounts => {
    if (keys.length === 0) return counts
    return observe(tool, keys, id)(counts)[1]
  }

/**
 * {@link firstSeen} and {@link countPairs} in one step, over the counts alone (a pair is
 * seen when it is counted): the keys of `tool` never counted before, and the counts
 * with this call added. One walk of the trie per key, so a model that invents a key on
 * every call costs one path copy per key, not four walks.
 *
 * @example
 * import { emptyPairCounts, observe, pairStats } from 'toolstack'
 * const [fresh, counts] = observe('fs_read', ['ffset'], 'call_1')(emptyPairCounts)
 * assert.deepStrictEqual(fresh, ['ffset'])
 * const [again, more] = observe('fs_read', ['ffset'], 'call_2')(counts)
 * assert.deepStrictEqual(again, [])
 * assert.deepStrictEqual(pairStats(more), [{ tool: 'fs_read', key: 'ffset', calls: 2, firstId: 'call_1' }])
 *
 * @since 0.1.0
 * @category pure steps
 */
export const observe =
  (tool: string, keys: ReadonlyArray<string>, id: string) =>
  (counts: PairCounts): readonly [ReadonlyArray<string>, PairCounts] => {
    if (keys.length === 0) return [EMPTY_KEYS, counts]
    let fresh: Array<string> | undefined
    let ofTool = SM.get(counts.byTool, tool) ?? SM.emptyStringMap<PairCount>()
    for (const k of keys) {
      ofTool = SM.update(ofTool, k, (had) => {
        if (had !== undefined) return { calls: had.calls + 1, firstId: had.firstId }
        ;(fresh ??= []).push(k)
        return { calls: 1, firstId: id }
      })
    }
    const added = fresh === undefined ? 0 : fresh.length
    return [fresh ?? EMPTY_KEYS, { _tag: 'PairCounts', size: counts.size + added, byTool: SM.set(counts.byTool, tool, ofTool) }]
  }

/**
 * Every counted pair, sorted by tool, then key.
 *
 * @since 0.1.0
 * @category utils
 */
export const pairStats = (counts: PairCounts): ReadonlyArray<PairStat> => {
  const out: Array<PairStat> = []
  for (const [tool, keys] of SM.entries(counts.byTool)) for (const [key, { calls, firstId }] of SM.entries(keys)) out.push({ tool, key, calls, firstId })
  return out.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

/**
 * Whether a (tool, key) pair has been reported.
 *
 * @since 0.1.0
 * @category utils
 */
export const hasSeen =
  (tool: string, key: string) =>
  (seen: SeenSet): boolean =>
    SM.has(SM.get(seen.byTool, tool) ?? SM.emptyStringMap(), key)

/**
 * The default one-line rendering of a warning.
 *
 * @example
 * import { formatWarning } from 'toolstack'
 * assert.strictEqual(
 *   formatWarning({ tool: 'fs_read', id: 'call_1', unknownKeys: ['ffset'], declaredKeys: ['offset', 'path'] }),
 *   'toolstack: fs_read call call_1 carried undeclared argument key "ffset" (declared: "offset", "path")',
 * )
 *
 * @since 0.1.0
 * @category utils
 */
export const formatWarning = (w: Omit<UnknownKeyWarning, 'suggestions'> & { readonly suggestions?: ReadonlyArray<Suggestion> }): string => {
  const quote = (ks: ReadonlyArray<string>): string => (ks.length === 0 ? 'none' : ks.map((k) => JSON.stringify(k)).join(', '))
  const call = w.id === '' ? 'a call without an id' : `call ${w.id}`
  const line = `toolstack: ${w.tool} ${call} carried undeclared argument key${w.unknownKeys.length === 1 ? '' : 's'} ${quote(w.unknownKeys)} (declared: ${quote(w.declaredKeys)})`
  const suggestions = w.suggestions ?? []
  if (suggestions.length === 0) return line
  const hint =
    w.unknownKeys.length === 1 && suggestions.length === 1
      ? (suggestions[0] as Suggestion).didYouMean
      : suggestions.map((s) => `${s.didYouMean} for ${JSON.stringify(s.key)}`).join(', ')
  return `${line} (did you mean ${hint}?)`
}

/**
 * The default `onWarn`: one line on stderr.
 *
 * @since 0.1.0
 * @category utils
 */
export const warnToStderr =
  (w: UnknownKeyWarning): IO<void> =>
  () => {
    process.stderr.write(formatWarning(w) + '\n')
  }

// -------------------------------------------------------------------------------------
// combinator
// -------------------------------------------------------------------------------------

// callbacks are checked by assertCallback, which can say more than a codec
const OptionsProps = { onWarn: t.unknown, tolerate: t.readonlyArray(t.string) }

/**
 * Audits each call's argument keys against the tool's own declaration and warns once
 * per (tool, key); forwards every call as the very object the caller passed and
 * returns the inner results, Left or rejection exactly as they came.
 *
 * @example
 * import { pipe } from 'fp-ts/lib/function.js'
 * import { fromTools, withUnknownKeyAudit } from 'toolstack'
 * import * as TE from 'fp-ts/lib/TaskEither.js'
 * const said: Array<string> = []
 * const tools = pipe(
 *   fromTools([{ declaration: { type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } } }, run: (a) => TE.right(String(a.text)) }]),
 *   withUnknownKeyAudit({ onWarn: (w) => () => { said.push(w.unknownKeys.join()) } }),
 * )
 * await tools.toolsForLlm()
 * await tools.executeToolCalls([{ id: '1', function: { name: 'echo', arguments: '{"text":"hi","txet":"hi"}' } }])()
 * assert.deepStrictEqual(said, ['txet'])
 *
 * @since 0.1.0
 * @category combinators
 */
export const withUnknownKeyAudit = (options?: UnknownKeyAuditOptions): (<E>(provider: Provider<E>) => AuditedProvider<E>) => {
  const where = 'withUnknownKeyAudit'
  const opts = decodeOptions(where, OptionsProps, options)
  assertCallback(where, 'onWarn', opts.onWarn, 1)
  const onWarn = (opts.onWarn as UnknownKeyAuditOptions['onWarn']) ?? warnToStderr
  const tolerated: ReadonlySet<string> = new Set([REASON_PARAM, ...(opts.tolerate ?? [])])

  return <E>(provider: Provider<E>): AuditedProvider<E> => {
    assertProvider(where, provider)
    const catalogue: IORef<Catalogue> = newIORef<Catalogue>(emptyCatalogue)()
    // the seen-set and the counts are one value: a pair is seen once it is counted
    const counts: IORef<PairCounts> = newIORef(emptyPairCounts)()

    const say = (warning: UnknownKeyWarning): void => {
      try {
        onWarn(warning)()
      } catch {
        // a host callback that throws changes nothing about a tool call
      }
    }

    const auditCall = (tools: Catalogue, read: ArgsAt, i: number, call: unknown): void => {
      if (typeof call !== 'object' || call === null) return
      const fn = (call as { readonly function?: unknown }).function
      if (typeof fn !== 'object' || fn === null) return
      const name = (fn as { readonly name?: unknown }).name
      if (typeof name !== 'string') return
      const declared = tools.get(name)
      if (declared === undefined) return
      const args = read(i, call, (fn as { readonly arguments?: unknown }).arguments)
      if (isLeft(args)) return
      // read-compute-write in one synchronous step: concurrent batches cannot both
      // see a pair as new
      const unknownKeys = declared.diff(Object.keys(args.right))
      if (unknownKeys.length === 0) return
      const [warning, after] = warnOnce(byCounts, declared, name, unknownKeys, callIdOf(call))(counts.read())
      counts.write(after)()
      if (warning !== undefined) say(warning)
    }

    const auditBatch = (calls: ReadonlyArray<ToolCall>): void => {
      const tools = catalogue.read()
      if (tools.size === 0) return
      let n: number
      try {
        n = calls.length
      } catch {
        return
      }
      const read = argsOfBatch(calls)
      for (let i = 0; i < n; i++) {
        try {
          auditCall(tools, read, i, calls[i])
        } catch {
          // a call that throws when read is forwarded all the same, and costs the
          // rest of the batch none of its warnings
        }
      }
    }

    return {
      toolsForLlm: () =>
        provider.toolsForLlm().then((listed) => {
          if (listed._tag === 'Right') {
            try {
              catalogue.write(catalogueOf(tolerated)(listed.right))()
            } catch {
              catalogue.write(emptyCatalogue)()
            }
          }
          return listed
        }),
      executeToolCalls: (calls) => () => {
        let opened = false
        try {
          opened = !hasBatch(calls)
          auditBatch(calls)
        } catch {
          // the audit adds no failure of its own
        }
        const answer = provider.executeToolCalls(calls)()
        if (!opened) return answer
        // the parses this layer made were for the layers below, who have answered now
        const release = (): void => releaseBatch(calls)
        answer.then(release, release)
        return answer
      },
      auditedTools: () => [...catalogue.read().keys()].sort(),
      stats: () => pairStats(counts.read()),
    }
  }
}
