// An audit session for a framework adapter: the seen-set and the diagnostics already
// said, in one ref, changed only by the combinator's own pure steps (`listed`,
// `audited`) applied in one synchronous step; the catalogue is the caller's, so calls
// of concurrent requests with different tool sets are each checked against their own.
//
// The same file sits in src/ai-sdk, src/openai-agents and src/langchain (an adapter
// may not import another adapter; test/adapters/session.test.ts keeps the copies
// identical) until the library carries it.
import type { IO } from 'fp-ts/lib/IO.js'
import type { IORef } from 'fp-ts/lib/IORef.js'
import { newIORef } from 'fp-ts/lib/IORef.js'
import * as t from 'io-ts/lib/index.js'
import type { AuditDiagnostic, AuditState, Catalogue, PairStat, SeenSet, ToolCall, UnknownKeyAuditOptions } from '../index.js'
import { DEFAULT_CAPACITY, audited, batchOf, catalogueOf, diagnoseToStderr, emptyCatalogue, emptySeenSetOf, listed, pairStats, toleratedOf, warnToStderr } from '../index.js'
import { describeValue } from '../internal/describe.js'
import { assertCallback, callBack, decodeOptions } from '../internal/options.js'
import { modify } from '../internal/ref.js'

/** What an adapter's audit holds and does. */
export interface AuditSession {
  /** The catalogue of a listing, with this session's tolerated names. */
  readonly catalogueOf: (declarations: ReadonlyArray<unknown>) => Catalogue
  /** A listing went through: `auditedTools` now reads its catalogue; "nothing to audit" is said once. */
  readonly listed: (catalogue: Catalogue, tools: number) => void
  /** Audits one call against `catalogue`; warns once per (tool, key). Never throws. */
  readonly check: (catalogue: Catalogue, call: ToolCall) => void
  readonly auditedTools: IO<ReadonlyArray<string>>
  readonly stats: IO<ReadonlyArray<PairStat>>
}

type Said = ReturnType<ReturnType<typeof audited>>[0]

// callbacks are checked by assertCallback; maxPairs by emptySeenSetOf
const OptionsProps = { onWarn: t.unknown, tolerate: t.readonlyArray(t.string), maxPairs: t.unknown, onDiagnostic: t.unknown }

const seenSetFor = (where: string, maxPairs: unknown): SeenSet => {
  if (maxPairs === undefined) return emptySeenSetOf(DEFAULT_CAPACITY)
  try {
    return emptySeenSetOf(maxPairs as number)
  } catch {
    throw new TypeError(`${where}: maxPairs must be a whole number of at least 1, got ${describeValue(maxPairs)}`)
  }
}

/** `audited` of one call, against the caller's catalogue rather than the one in the state. */
const auditedAgainst =
  (catalogue: Catalogue, call: ToolCall) =>
  (s: AuditState): readonly [Said, AuditState] => {
    const [said, next] = audited(batchOf([call]))({ ...s, catalogue })
    return [said, next.seen === s.seen && next.said === s.said ? s : { ...next, catalogue: s.catalogue }]
  }

/** Checks the options as `withUnknownKeyAudit` does (a TypeError naming the problem) and starts a session. */
export const auditSession = (where: string, options: UnknownKeyAuditOptions | undefined): AuditSession => {
  const opts = decodeOptions(where, OptionsProps, options)
  assertCallback(where, 'onWarn', opts.onWarn, 1)
  assertCallback(where, 'onDiagnostic', opts.onDiagnostic, 1)
  const onWarn = (opts.onWarn as UnknownKeyAuditOptions['onWarn']) ?? warnToStderr
  const onDiagnostic = (opts.onDiagnostic as UnknownKeyAuditOptions['onDiagnostic']) ?? diagnoseToStderr
  const state: IORef<AuditState> = newIORef<AuditState>({ catalogue: undefined, seen: seenSetFor(where, opts.maxPairs), said: new Set<AuditDiagnostic['_tag']>() })()

  // said after the state is written, so a callback that audits again sees it
  const say = (said: Said): void => {
    for (const d of said.diagnostics) callBack(onDiagnostic, d)
    for (const w of said.warnings) callBack(onWarn, w)
  }
  const shielded = (f: () => void): void => {
    try {
      f()
    } catch {
      // the audit adds no failure of its own
    }
  }
  const ofListing = catalogueOf(toleratedOf(opts.tolerate))

  return {
    catalogueOf: (declarations) => {
      try {
        return ofListing(declarations)
      } catch {
        return emptyCatalogue
      }
    },
    listed: (catalogue, tools) => shielded(() => say(modify(listed(catalogue, tools))(state)())),
    check: (catalogue, call) => shielded(() => say(modify(auditedAgainst(catalogue, call))(state)())),
    auditedTools: () => [...(state.read().catalogue ?? emptyCatalogue).keys()].sort(),
    stats: () => pairStats(state.read().seen),
  }
}
