// Pure fakes for tests: providers whose every move is recorded.
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Batch, Provider, ToolCall, ToolDeclaration, ToolResult } from '../../src/index.js'

/** A declaration with the given property names. */
export const decl = (
  name: string,
  properties: ReadonlyArray<string> = [],
  extra: Record<string, unknown> = {},
): ToolDeclaration => ({
  type: 'function',
  function: {
    name,
    description: `the ${name} tool`,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(properties.map((p) => [p, { type: 'string' }])),
      ...extra,
    },
  },
})

/** A call with string arguments (objects are serialised unless `raw` is set). */
export const call = (id: string, name: string, args: unknown = {}, raw = false): ToolCall =>
  ({
    id,
    type: 'function',
    function: { name, arguments: raw || typeof args === 'string' ? args : JSON.stringify(args) },
  }) as ToolCall

const safeId = (c: unknown): string | undefined => {
  try {
    const id = typeof c === 'object' && c !== null ? (c as { id?: unknown }).id : undefined
    return typeof id === 'string' ? id : undefined
  } catch {
    return undefined
  }
}

export const okResult = (c: unknown, i: number): ToolResult => ({
  role: 'tool',
  tool_call_id: safeId(c) ?? `#${i}`,
  content: `ok ${i}`,
})

export interface Recording {
  readonly batches: Array<ReadonlyArray<ToolCall>>
  readonly results: Array<ReadonlyArray<ToolResult>>
  listings: number
}

/**
 * A provider over fixed declarations that answers one result per call and records
 * every batch it received (the very array) and every result array it returned.
 */
/** `okResult` for each position of a batch, reading each slot with care (a hostile batch may throw). */
export const okResults = (calls: ReadonlyArray<ToolCall>): ReadonlyArray<ToolResult> => {
  let n = 0
  try {
    n = calls.length
  } catch {
    return []
  }
  return Array.from({ length: n }, (_, i) => {
    try {
      return okResult(calls[i], i)
    } catch {
      return okResult(undefined, i)
    }
  })
}

export const recordingProvider = (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer: (calls: ReadonlyArray<ToolCall>) => ReadonlyArray<ToolResult> = okResults,
): Provider<string> & { readonly rec: Recording } => {
  const rec: Recording = { batches: [], results: [], listings: 0 }
  return {
    rec,
    toolsForLlm: () => {
      rec.listings++
      return Promise.resolve({ _tag: 'Right', right: declarations } as const)
    },
    executeToolCalls: (calls) => () => {
      rec.batches.push(calls)
      const out = answer(calls)
      rec.results.push(out)
      return Promise.resolve({ _tag: 'Right', right: out } as const)
    },
  }
}

/**
 * `recordingProvider` that also offers `executeBatch`, as toolstack's own layers do,
 * and records every batch it was handed that way (the very object).
 */
export const batchingProvider = (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer?: (calls: ReadonlyArray<ToolCall>) => ReadonlyArray<ToolResult>,
): Provider<string> & { readonly rec: Recording; readonly received: Array<Batch> } => {
  const inner = recordingProvider(declarations, answer)
  const received: Array<Batch> = []
  return {
    ...inner,
    received,
    executeBatch: (batch) => {
      received.push(batch)
      return inner.executeToolCalls(batch.calls)
    },
  }
}

/** A provider whose every task fails with the given Left. */
export const failingProvider = <E>(e: E): Provider<E> => ({
  toolsForLlm: TE.left(e),
  executeToolCalls: () => TE.left(e),
})

/** A provider whose every task rejects with the given reason. */
export const rejectingProvider = (reason: unknown): Provider<never> => ({
  toolsForLlm: () => Promise.reject(reason),
  executeToolCalls: () => () => Promise.reject(reason),
})
