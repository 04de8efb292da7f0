// Batches that cannot be read the ordinary way (issue 13, defect 1): every layer that
// answers for a provider answers one result per position it can measure, names a slot
// it cannot read, and refuses a batch it cannot measure in one result; none rejects.
// Only the public API is used, so the same file runs against any version.
import { describe, expect, it } from 'vitest'
import { pipe } from 'fp-ts/lib/function.js'
import type { Provider, ToolCall, ToolResult } from '../src/index.js'
import { fromTools, registry, withPolicy, withReasons, withUnknownKeyAudit } from '../src/index.js'

const decl = (name: string) => ({
  type: 'function' as const,
  function: { name, parameters: { type: 'object', properties: { path: { type: 'string' } } } },
})
const ok = (name: string) => ({
  declaration: decl(name),
  run: () => () => Promise.resolve({ _tag: 'Right' as const, right: 'done' }),
})
const call = (id: string, name: string): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: '{"path":"/tmp/a"}' },
})

// [a readable call, a slot whose getter throws]
const throwingSlot = (name: string): ReadonlyArray<ToolCall> =>
  Object.defineProperty([call('1', name), call('2', name)], 1, {
    get: () => {
      throw new Error('slot 1 refuses to be read')
    },
  })

const unmeasurable = (name: string): ReadonlyArray<ToolCall> =>
  new Proxy([call('1', name)], {
    get: (t, k, r) => {
      if (k === 'length') throw new Error('no length')
      return Reflect.get(t, k, r)
    },
  })

const layers: ReadonlyArray<readonly [string, () => Provider<unknown>, string]> = [
  [
    'withPolicy',
    () => pipe(fromTools([ok('fs_read')]), withPolicy({ rules: [{ tool: 'fs_read', decision: 'allow' }] })),
    'fs_read',
  ],
  ['withReasons', () => pipe(fromTools([ok('fs_read')]), withReasons()), 'fs_read'],
  ['registry', () => registry([{ prefix: 'fs', provider: fromTools([ok('read')]) }]), 'fs_read'],
  ['fromTools', () => fromTools([ok('fs_read')]), 'fs_read'],
  [
    'the whole stack',
    () =>
      pipe(
        registry([{ prefix: 'fs', provider: fromTools([ok('read')]) }]),
        withReasons(),
        withUnknownKeyAudit({ onWarn: () => () => undefined, onDiagnostic: () => undefined }),
        withPolicy({ rules: [{ tool: 'fs_*', decision: 'allow' }] }),
      ),
    'fs_read',
  ],
]

describe('hostile batches', () => {
  it.each(layers)('%s: a slot that cannot be read costs that position only, named', async (_, make, name) => {
    const layer = make()
    await layer.toolsForLlm()
    const out = await layer.executeToolCalls(throwingSlot(name))()
    expect(out._tag).toBe('Right')
    const results = (out as { right: ReadonlyArray<ToolResult> }).right
    expect(results).toHaveLength(2)
    expect(results[0]).toMatchObject({ tool_call_id: '1', content: 'done' })
    expect(results[1]).toMatchObject({ is_error: true })
    expect(results[1]?.content).toContain('position 1')
  })

  it.each(layers)('%s: a batch whose length cannot be read is one refusal, not a rejection', async (_, make, name) => {
    const layer = make()
    await layer.toolsForLlm()
    const out = await layer.executeToolCalls(unmeasurable(name))()
    expect(out._tag).toBe('Right')
    const results = (out as { right: ReadonlyArray<ToolResult> }).right
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ is_error: true })
    expect(results[0]?.content).toMatch(/could not be read/)
  })

  it('withUnknownKeyAudit adds no failure of its own: the very hostile batch goes down as it came', async () => {
    let got: unknown
    const inner: Provider<never> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [decl('fs_read')] }),
      executeToolCalls: (calls) => () => {
        got = calls
        return Promise.resolve({ _tag: 'Right', right: [] })
      },
    }
    const audited = withUnknownKeyAudit({ onWarn: () => () => undefined })(inner)
    await audited.toolsForLlm()
    for (const batch of [throwingSlot('fs_read'), unmeasurable('fs_read')]) {
      await expect(audited.executeToolCalls(batch)()).resolves.toEqual({ _tag: 'Right', right: [] })
      expect(got).toBe(batch)
    }
  })
})
