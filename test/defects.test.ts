// The library's defects that issue 13's fault campaign found, each pinned by a test
// written against the public API only (so the same file can be run on any version).
import { describe, expect, it } from 'vitest'
import { pipe } from 'fp-ts/lib/function.js'
import type { Provider, ToolDeclaration, UnknownKeyWarning } from '../src/index.js'
import type { PairStat } from '../src/extend.js'
import { fromTools, withReasons, withUnknownKeyAudit } from '../src/index.js'

const inner = (declarations: ReadonlyArray<ToolDeclaration>): Provider<never> => ({
  toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: declarations }),
  executeToolCalls: (calls) => () =>
    Promise.resolve({
      _tag: 'Right',
      right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' })),
    }),
})

const schemaFree: ToolDeclaration = {
  type: 'function',
  function: { name: 'ping', description: 'no arguments', parameters: { type: 'object', properties: {} } },
}
const readFile: ToolDeclaration = {
  type: 'function',
  function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
}

describe('defect 5: a schema-free tool stays unaudited under withReasons', () => {
  it('a tool declaring no properties is not audited though reasons adds one', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const tools = pipe(
      inner([schemaFree, readFile]),
      withReasons(),
      withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) }),
    )
    await tools.toolsForLlm()
    await tools.executeToolCalls([
      { id: '1', function: { name: 'ping', arguments: '{"host":"a","reason":"check"}' } },
      { id: '2', function: { name: 'read', arguments: '{"path":"/a","ffset":1}' } },
    ])()
    expect(warnings.map((w) => [w.tool, w.unknownKeys])).toEqual([['read', ['ffset']]])
    expect(tools.auditedTools()).toEqual(['read'])
  })

  it('nor is a tool whose only property is a tolerated name', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const onlyMeta: ToolDeclaration = {
      type: 'function',
      function: { name: 'm', parameters: { type: 'object', properties: { _meta: {} } } },
    }
    const tools = withUnknownKeyAudit({ tolerate: ['_meta'], onWarn: (w) => () => void warnings.push(w) })(
      inner([onlyMeta]),
    )
    await tools.toolsForLlm()
    await tools.executeToolCalls([{ id: '1', function: { name: 'm', arguments: '{"x":1}' } }])()
    expect(warnings).toEqual([])
  })
})

describe('defect 6: the audit’s memory is bounded whatever a model sends', () => {
  it('a pair costs a bounded number of characters however long its key and its first id', async () => {
    const tools = withUnknownKeyAudit({ onWarn: () => () => undefined })(inner([readFile]))
    await tools.toolsForLlm()
    const long = (i: number): string => `k${i}_` + 'x'.repeat(10_000)
    await tools.executeToolCalls(
      Array.from({ length: 20 }, (_, i) => ({
        id: 'id'.repeat(5_000),
        function: { name: 'read', arguments: JSON.stringify({ path: '/a', [long(i)]: 1 }) },
      })),
    )()
    const stats: ReadonlyArray<PairStat> = tools.stats()
    expect(stats).toHaveLength(20)
    for (const s of stats) {
      expect(s.key.length).toBeLessThan(120)
      expect(s.firstId.length).toBeLessThan(80)
    }
    // two keys that share their first hundred characters stay two pairs
    expect(new Set(stats.map((s) => s.key)).size).toBe(20)
  })

  it('holds at most maxPairs pairs; past it a new pair is still reported, and the diagnostics say so once', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const diagnostics: Array<unknown> = []
    const tools = withUnknownKeyAudit({
      maxPairs: 2,
      onWarn: (w) => () => void warnings.push(w),
      onDiagnostic: (d) => () => void diagnostics.push(d),
    })(inner([readFile]))
    await tools.toolsForLlm()
    const send = (id: string, key: string) =>
      tools.executeToolCalls([
        { id, function: { name: 'read', arguments: JSON.stringify({ path: '/a', [key]: 1 }) } },
      ])()
    for (const [id, key] of [
      ['1', 'a'],
      ['2', 'b'],
      ['3', 'c'],
      ['4', 'c'],
      ['5', 'a'],
    ] as const)
      await send(id, key)
    // a and b are remembered (a said once); c, past the cap, is said each time it comes
    expect(warnings.map((w) => w.id)).toEqual(['1', '2', '3', '4'])
    expect(tools.stats().map((s) => [s.key, s.calls])).toEqual([
      ['a', 2],
      ['b', 1],
    ])
    expect(diagnostics).toEqual([{ _tag: 'SeenSetFull', capacity: 2 }])
  })
})

describe('a rejected construction names what was meant', () => {
  it('withUnknownKeyAudit(provider) without the () says what to write', () => {
    expect(() => withUnknownKeyAudit(fromTools([]) as never)).toThrow(
      /did you mean withUnknownKeyAudit\(\)\(provider\)\?/,
    )
  })
})

describe('issue 14: a Promise-based provider where an fp-ts one belongs', () => {
  const promised = {
    toolsForLlm: () => Promise.resolve([readFile]),
    executeToolCalls: (calls: ReadonlyArray<{ readonly id: string }>) =>
      Promise.resolve(calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' }))),
  }

  it('an async executeToolCalls is refused at construction, naming fromAsync', () => {
    const asyncOne = { toolsForLlm: async () => [readFile], executeToolCalls: async () => [] }
    expect(() => withUnknownKeyAudit()(asyncOne as never)).toThrow(/fromAsync\(provider\)/)
    expect(() => withReasons()(asyncOne as never)).toThrow(/fromAsync\(provider\)/)
  })

  it('a listing that is not an Either is said once, naming fromAsync; a call answers why it failed', async () => {
    const said: Array<string> = []
    const audited = withUnknownKeyAudit({ onDiagnostic: (d) => () => void said.push(d._tag) })(promised as never)
    await audited.toolsForLlm()
    await audited.toolsForLlm()
    expect(said).toEqual(['ListingNotAnEither'])
    const reasons = withReasons()(promised as never)
    const out = await reasons.executeToolCalls([{ id: '1', function: { name: 'read', arguments: '{}' } }])()
    expect(out._tag === 'Right' && out.right[0]?.content).toMatch(
      /returned a Promise, not a task.*fromAsync\(provider\)/,
    )
  })
})
