import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import type { AuditDiagnostic, Batch, Provider, ToolCall, ToolDeclaration, UnknownKeyWarning } from '../../src/index.js'
import type { AuditState } from '../../src/combinators/UnknownKeys.js'
import type { Declared } from '../../src/steps/audit/Catalogue.js'
import type { SeenSet } from '../../src/steps/audit/SeenSet.js'
import {
  drawAuditDiagnostic,
  emptySeenSet,
  extractDeclarations,
  firstSeen,
  formatWarning,
  withUnknownKeyAudit,
} from '../../src/index.js'
import { batchOf } from '../../src/steps/Batch.js'
import { auditBatch, notAnEither } from '../../src/combinators/UnknownKeys.js'
import { catalogueOf, toleratedOf } from '../../src/steps/audit/Catalogue.js'
import { pairStats, hasSeen } from '../../src/steps/audit/SeenSet.js'
import { batchArb, plainBatchArb, keyArb, rawArgsArb, toolNameArb } from '../support/arbitraries.js'
import {
  batchingProvider,
  call,
  decl,
  failingProvider,
  recordingProvider,
  rejectingProvider,
} from '../support/fakes.js'
import { isLazy, listingFailurePassesThrough } from '../laws.js'

const FS_READ = decl('fs_read', ['path', 'offset', 'length'])
const FS_WRITE = decl('fs_write', ['path', 'content'])

/** An audited recording provider and the warnings it said. */
const setup = (declarations: ReadonlyArray<ToolDeclaration> = [FS_READ, FS_WRITE]) => {
  const inner = recordingProvider(declarations)
  const warnings: Array<UnknownKeyWarning> = []
  const audited = pipe(inner, withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) }))
  return { inner, audited, warnings }
}

const run = async (p: Provider<unknown>, calls: ReadonlyArray<ToolCall>) => p.executeToolCalls(calls)()

// -------------------------------------------------------------------------------------
// pure steps
// -------------------------------------------------------------------------------------

describe('extractDeclarations', () => {
  it('maps each readable tool to its declared property names', () => {
    const m = extractDeclarations([FS_READ, FS_WRITE])
    expect([...m.keys()]).toEqual(['fs_read', 'fs_write'])
    expect([...(m.get('fs_read')?.keys ?? [])]).toEqual(['path', 'offset', 'length'])
  })

  it('reads a declaration without properties as declaring nothing', () => {
    const m = extractDeclarations([{ type: 'function', function: { name: 'now', parameters: { type: 'object' } } }])
    expect(m.get('now')?.keys.size).toBe(0)
  })

  it('leaves out what it cannot read', () => {
    const unreadable: ReadonlyArray<unknown> = [
      null,
      'fs_read',
      42,
      {},
      { function: null },
      { function: { name: 7, parameters: {} } },
      { function: { name: 'no_params' } },
      { function: { name: 'array_params', parameters: [] } },
      { function: { name: 'string_props', parameters: { properties: 'path' } } },
      { function: { name: 'array_props', parameters: { properties: ['path'] } } },
      new Proxy(
        {},
        {
          get: () => {
            throw new Error('boom')
          },
        },
      ),
    ]
    expect(extractDeclarations(unreadable).size).toBe(0)
  })

  it('keeps the first of two declarations with the same name', () => {
    const m = extractDeclarations([decl('t', ['a']), decl('t', ['b'])])
    expect([...(m.get('t')?.keys ?? [])]).toEqual(['a'])
  })

  it('treats prototype names as ordinary property names', () => {
    const properties = JSON.parse('{"__proto__":{},"constructor":{},"toString":{},"hasOwnProperty":{}}') as Record<
      string,
      unknown
    >
    const m = extractDeclarations([
      { type: 'function', function: { name: '__proto__', parameters: { type: 'object', properties } } },
    ])
    expect([...(m.get('__proto__')?.keys ?? [])]).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
  })
})

describe('diffKeys', () => {
  const declared = new Set(['path', 'offset'])
  // the top level of a tool declaring `set`, diffed through its catalogue's compiled check
  const diffTopKeys = (set: ReadonlySet<string>) => (keys: ReadonlyArray<string>) => {
    const parameters = { type: 'object', properties: Object.fromEntries([...set, 'zz_always'].map((k) => [k, {}])) }
    const c = catalogueOf(toleratedOf())([{ type: 'function', function: { name: 't', parameters } }]).get('t')
    const args: Record<string, unknown> = {}
    for (const k of keys)
      Object.defineProperty(args, k, { value: 1, enumerable: true, writable: true, configurable: true })
    return (c?.diff(args) ?? []).map((k) => k.key).sort()
  }

  it('returns the undeclared keys in default sort order', () => {
    expect(diffTopKeys(declared)(['zeta', 'path', 'Alpha', 'the rest', 'ffset'])).toEqual([
      'Alpha',
      'ffset',
      'the rest',
      'zeta',
    ])
  })

  it('never reports reason, but does report its near names', () => {
    expect(diffTopKeys(declared)(['reason', 'reasons', 'Reason'])).toEqual(['Reason', 'reasons'])
  })

  it('reports prototype names like any other key', () => {
    expect(diffTopKeys(declared)(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])).toEqual([
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'toString',
    ])
  })

  it('is, for any keys, the sorted undeclared ones other than reason', () => {
    fc.assert(
      fc.property(fc.uniqueArray(keyArb), fc.uniqueArray(keyArb), (decls, keys) => {
        const set = new Set(decls)
        const expected = keys.filter((k) => k !== 'reason' && !set.has(k)).sort()
        expect(diffTopKeys(set)(keys)).toEqual(expected)
      }),
    )
  })
})

describe('firstSeen', () => {
  it('returns the new keys and a seen-set that remembers them, leaving the input alone', () => {
    const [fresh, seen] = firstSeen('fs_read', ['ffset', 'the rest'])(emptySeenSet)
    expect(fresh).toEqual(['ffset', 'the rest'])
    expect(seen.size).toBe(2)
    expect(emptySeenSet.size).toBe(0)
    expect(hasSeen('fs_read', 'ffset')(emptySeenSet)).toBe(false)
    expect(hasSeen('fs_read', 'ffset')(seen)).toBe(true)
  })

  it("counts a pair met again without saying it again, in the pair's own counter: the same set comes back", () => {
    const [, seen] = firstSeen('t', ['a'], 'c1')(emptySeenSet)
    const [fresh, again] = firstSeen('t', ['a'], 'c2')(seen)
    expect(fresh).toEqual([])
    expect(again).toBe(seen)
    expect(again.size).toBe(1)
    expect(pairStats(again)).toEqual([{ tool: 't', key: 'a', calls: 2, firstId: 'c1' }])
  })

  it("leaves the pairs of an older set alone when a new pair comes; a known pair's count is shared", () => {
    const [, seen] = firstSeen('t', ['a'], 'c1')(emptySeenSet)
    const [fresh, more] = firstSeen('t', ['a', 'b'], 'c2')(seen)
    expect(fresh).toEqual(['b'])
    expect(more).not.toBe(seen)
    expect([seen.size, more.size]).toEqual([1, 2])
    expect(hasSeen('t', 'b')(seen)).toBe(false)
    expect(pairStats(seen)).toEqual([{ tool: 't', key: 'a', calls: 2, firstId: 'c1' }])
    expect(pairStats(more)).toEqual([
      { tool: 't', key: 'a', calls: 2, firstId: 'c1' },
      { tool: 't', key: 'b', calls: 1, firstId: 'c2' },
    ])
  })

  it('returns the very same seen-set for a call without undeclared keys', () => {
    const [, seen] = firstSeen('t', ['a'])(emptySeenSet)
    const [fresh, again] = firstSeen('t', [])(seen)
    expect(fresh).toEqual([])
    expect(again).toBe(seen)
  })

  it('counts a key repeated within one call once', () => {
    const [fresh, seen] = firstSeen('t', ['a', 'a'])(emptySeenSet)
    expect(fresh).toEqual(['a'])
    expect(seen.size).toBe(1)
  })

  it('keeps pairs apart whatever characters they contain', () => {
    const [, s1] = firstSeen('a\u0000b', ['c'])(emptySeenSet)
    const [fresh] = firstSeen('a', ['b\u0000c'])(s1)
    expect(fresh).toEqual(['b\u0000c'])
    const [, s2] = firstSeen('a:b', ['c'])(emptySeenSet)
    expect(firstSeen('a', ['b:c'])(s2)[0]).toEqual(['b:c'])
  })

  // names that collide when joined with a separator, besides the usual odd keys
  const joinableArb = fc.constantFrom('a', 'b', 'c', 'a:b', 'b:c', ':', 'a\u0000b', 'b\u0000c')
  const pairsArb = fc.array(fc.tuple(fc.oneof(toolNameArb, joinableArb), fc.oneof(keyArb, joinableArb)), {
    maxLength: 30,
  })

  /** The property: a pair is new exactly when no earlier step saw that very pair. */
  const saidOnceProperty = (
    step: (tool: string, keys: ReadonlyArray<string>) => (s: SeenSet) => readonly [ReadonlyArray<string>, SeenSet],
    pairs: fc.Arbitrary<ReadonlyArray<readonly [string, string]>> = pairsArb,
  ) =>
    fc.property(pairs, (pairs) => {
      let seen = emptySeenSet
      const model = new Set<string>()
      for (const [tool, key] of pairs) {
        const before = seen
        const sizeBefore = before.size
        const [fresh, next] = step(tool, [key])(seen)
        const id = JSON.stringify([tool, key])
        if (fresh.length !== (model.has(id) ? 0 : 1)) return false
        if (before.size !== sizeBefore) return false
        model.add(id)
        seen = next
      }
      return seen.size === model.size
    })

  it('says each pair once, never modifying its input (model: a Set of said pairs)', () => {
    fc.assert(saidOnceProperty(firstSeen))
  })

  it('the property can fail: a seen-set keyed by tool + ":" + key merges different pairs', () => {
    // a deliberately broken variant, to show the property above has teeth
    const joined = new Map<SeenSet, ReadonlySet<string>>()
    const broken =
      (tool: string, keys: ReadonlyArray<string>) =>
      (s: SeenSet): readonly [ReadonlyArray<string>, SeenSet] => {
        const had = joined.get(s) ?? new Set<string>()
        const fresh = keys.filter((k) => !had.has(`${tool}:${k}`))
        if (fresh.length === 0) return [[], s]
        const next: SeenSet = { ...s, size: s.size + fresh.length }
        joined.set(next, new Set([...had, ...fresh.map((k) => `${tool}:${k}`)]))
        return [fresh, next]
      }
    const out2 = fc.check(saidOnceProperty(broken, fc.array(fc.tuple(joinableArb, joinableArb), { maxLength: 30 })))
    expect(out2.failed).toBe(true) // the property finds two pairs the broken variant merges
  })
})

describe('auditBatch', () => {
  const state: AuditState = {
    catalogue: catalogueOf(toleratedOf())([FS_READ]),
    seen: emptySeenSet,
    reported: new Set(),
  }

  it('reads no position past the batch its length says', () => {
    const reads: Array<string> = []
    const calls = new Proxy([call('1', 'fs_read', { path: 'a' })], {
      get: (target, key, receiver) => {
        if (typeof key === 'string') reads.push(key)
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    auditBatch(batchOf(calls))(state)
    expect(reads).toContain('0')
    expect(reads.filter((k) => /^\d+$/.test(k) && k !== '0')).toEqual([])
  })

  it('never reads the arguments of a call to a tool it does not audit', () => {
    const asked: Array<number> = []
    const inner = batchOf([call('1', 'unlisted', { x: 1 }), call('2', 'fs_read', { x: 1 })])
    const batch: Batch = { calls: inner.calls, argsAt: (i) => (asked.push(i), inner.argsAt(i)) }
    const [said] = auditBatch(batch)(state)
    expect(asked).toEqual([1])
    expect(said.warnings.map((w) => w.tool)).toEqual(['fs_read'])
  })

  it('never diffs arguments that do not read as an object', () => {
    const diffed: Array<unknown> = []
    const spy: Declared = {
      name: 't',
      keys: new Set(['a']),
      sorted: ['a'],
      diff: (args) => (diffed.push(args), []),
      suggest: () => [],
      generated: true,
    }
    const s: AuditState = { ...state, catalogue: new Map([['t', spy]]) }
    auditBatch(batchOf([call('1', 't', '[1]', true), call('2', 't', '', true), call('3', 't', { a: 1 })]))(s)
    expect(diffed).toEqual([{ a: 1 }])
  })

  it('answers the very same state when a batch changes nothing', () => {
    expect(auditBatch(batchOf([call('1', 'fs_read', { path: 'a' }), call('2', 'unlisted', { x: 1 })]))(state)[1]).toBe(
      state,
    )
    const [said, next] = auditBatch(batchOf([call('3', 'fs_read', { x: 1 })]))(state)
    expect(said.warnings).toHaveLength(1)
    expect(next).not.toBe(state)
    expect(auditBatch(batchOf([call('4', 'fs_read', { path: 'a' })]))(next)[1]).toBe(next)
  })
})

describe('notAnEither', () => {
  it('says the diagnostic once, and no warning', () => {
    const s: AuditState = { catalogue: undefined, seen: emptySeenSet, reported: new Set() }
    const [said, next] = notAnEither('a Promise')(s)
    expect(said).toEqual({ warnings: [], diagnostics: [{ _tag: 'ListingNotAnEither', got: 'a Promise' }] })
    expect(notAnEither('a Promise')(next)[0]).toEqual({ warnings: [], diagnostics: [] })
  })
})

describe('formatWarning', () => {
  it('names the tool, the call, the undeclared keys and the declared ones', () => {
    expect(
      formatWarning({
        tool: 'fs_read',
        id: 'call_1',
        unknownKeys: ['ffset', 'the rest'],
        declaredKeys: ['offset', 'path'],
      }),
    ).toBe(
      'toolstack: fs_read call call_1 carried undeclared argument keys "ffset", "the rest" (declared: "offset", "path")',
    )
    expect(formatWarning({ tool: 't', id: '', unknownKeys: ['a\u0000'], declaredKeys: [] })).toContain(
      'a call without an id',
    )
  })
})

// -------------------------------------------------------------------------------------
// the combinator
// -------------------------------------------------------------------------------------

describe('withUnknownKeyAudit: when a call is audited', () => {
  it('is silent before the first listing', async () => {
    const { audited, warnings } = setup()
    await run(audited, [call('1', 'fs_read', { path: '/a', ffset: 1 })])
    expect(warnings).toEqual([])
  })

  it('warns for a listed tool with declared properties and object arguments', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [call('call_1', 'fs_read', { path: '/a', ffset: 12, 'the rest': 'x' })])
    expect(warnings).toEqual([
      {
        tool: 'fs_read',
        unknownKeys: ['ffset', 'the rest'],
        keys: [
          { path: 'ffset', key: 'ffset', place: [] },
          { path: 'the rest', key: 'the rest', place: [] },
        ],
        declaredKeys: ['length', 'offset', 'path'],
        id: 'call_1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
  })

  it('is silent for a tool that declares no properties, or that was not listed', async () => {
    const { audited, warnings } = setup([
      decl('now'),
      { type: 'function', function: { name: 'bare', parameters: { type: 'object' } } },
    ])
    await audited.toolsForLlm()
    await run(audited, [call('1', 'now', { x: 1 }), call('2', 'bare', { x: 1 }), call('3', 'fs_read', { x: 1 })])
    expect(warnings).toEqual([])
    expect(audited.auditedTools()).toEqual([])
  })

  it('is silent when the arguments do not read as a JSON object', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(
      audited,
      ['', '[1]', 'null', '{', '"s"', undefined].map((a, i) => call(String(i), 'fs_read', a, true)),
    )
    expect(warnings).toEqual([])
  })

  it('audits arguments given as an already-parsed object', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_read', { path: '/a', depth: 2 }, true)])
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['depth']])
  })

  it('skips an object whose getter throws mid-check, and charges none of its keys to the next call', async () => {
    const opts = { type: 'object', properties: { encoding: {} } }
    const nested: ToolDeclaration = {
      type: 'function',
      function: { name: 'fs_open', parameters: { type: 'object', properties: { path: {}, opts } } },
    }
    const { audited, warnings } = setup([nested])
    await audited.toolsForLlm()
    const hostile = {
      stray_before: 1,
      get opts(): never {
        throw new Error('no opts here')
      },
    }
    await run(audited, [
      { id: '1', type: 'function', function: { name: 'fs_open', arguments: hostile } } as unknown as ToolCall,
      call('2', 'fs_open', { path: '/a' }),
    ])
    expect(warnings).toEqual([])
  })

  it('always tolerates reason, but not reasons', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [
      call('1', 'fs_read', { path: '/a', reason: 'why' }),
      call('2', 'fs_read', { path: '/a', reasons: 'why' }),
    ])
    expect(warnings.map((w) => [w.id, w.unknownKeys])).toEqual([['2', ['reasons']]])
  })

  it('gives the id as a string, and "" when the call has none', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    const noId = { function: { name: 'fs_read', arguments: '{"a":1}' } } as unknown as ToolCall
    const numericId = { id: 7, function: { name: 'fs_read', arguments: '{"b":1}' } } as unknown as ToolCall
    await run(audited, [noId, numericId])
    expect(warnings.map((w) => w.id)).toEqual(['', '7'])
  })
})

describe('withUnknownKeyAudit: said once', () => {
  it('reports each (tool, key) pair once per instance, a new key or another tool again', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_read', { path: 'a', x: 1 }), call('2', 'fs_read', { path: 'a', x: 1 })])
    await run(audited, [call('3', 'fs_read', { x: 1, y: 2 }), call('4', 'fs_write', { x: 1 })])
    expect(warnings.map((w) => [w.id, w.tool, w.unknownKeys])).toEqual([
      ['1', 'fs_read', ['x']],
      ['3', 'fs_read', ['y']],
      ['4', 'fs_write', ['x']],
    ])
  })

  it('is never cleared by a catalogue refresh', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_read', { x: 1 })])
    await audited.toolsForLlm()
    await run(audited, [call('2', 'fs_read', { x: 1 })])
    expect(warnings).toHaveLength(1)
  })

  it('keeps separate instances separate', async () => {
    const a = setup()
    const b = setup()
    await a.audited.toolsForLlm()
    await b.audited.toolsForLlm()
    await run(a.audited, [call('1', 'fs_read', { x: 1 })])
    await run(b.audited, [call('1', 'fs_read', { x: 1 })])
    expect([a.warnings.length, b.warnings.length]).toEqual([1, 1])
  })

  it('never reports one pair twice across concurrent batches', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    let release: () => void = () => undefined
    const gate = new Promise<void>((r) => (release = r))
    const slow: Provider<never> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [FS_READ] }),
      executeToolCalls: (calls) => async () => {
        await gate
        return { _tag: 'Right', right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' })) }
      },
    }
    const audited = withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) })(slow)
    await audited.toolsForLlm()
    const batches = Array.from({ length: 20 }, (_, i) =>
      run(audited, [call(String(i), 'fs_read', { x: 1, [`k${i % 3}`]: 1 })]),
    )
    release()
    await Promise.all(batches)
    const pairs = warnings.flatMap((w) => w.unknownKeys.map((k) => `${w.tool}/${k}`))
    expect(pairs.sort()).toEqual(['fs_read/k0', 'fs_read/k1', 'fs_read/k2', 'fs_read/x'])
  })

  it('is one warning per call, holding every new key of that call', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_read', { b: 1, a: 2, path: '' })])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.unknownKeys).toEqual(['a', 'b'])
  })

  /** Model-based: a Set of said pairs and the last good catalogue are the whole model. */
  interface Model {
    catalogue: ReadonlyMap<string, ReadonlySet<string>> | undefined
    readonly said: Set<string>
  }
  interface Real {
    readonly audited: ReturnType<typeof setup>['audited']
    readonly warnings: Array<UnknownKeyWarning>
    declarations: ReadonlyArray<ToolDeclaration>
    failNext: boolean
  }
  const catalogues: ReadonlyArray<ReadonlyArray<ToolDeclaration>> = [
    [decl('t1', ['a', 'b']), decl('t2', ['a'])],
    [decl('t1', ['a']), decl('t3', ['c', 'reason'])],
    [decl('t2', [])],
  ]
  class ListCommand implements fc.AsyncCommand<Model, Real> {
    constructor(
      readonly which: number,
      readonly fails: boolean,
    ) {}
    check = () => true
    async run(m: Model, r: Real): Promise<void> {
      r.declarations = catalogues[this.which] ?? []
      r.failNext = this.fails
      await r.audited.toolsForLlm()
      if (!this.fails) {
        const map = new Map<string, ReadonlySet<string>>()
        for (const d of r.declarations)
          map.set(d.function.name, new Set(Object.keys((d.function.parameters?.['properties'] ?? {}) as object)))
        m.catalogue = map
      }
    }
    toString = () => `list(${this.which}${this.fails ? ', fails' : ''})`
  }
  class CallCommand implements fc.AsyncCommand<Model, Real> {
    constructor(
      readonly tool: string,
      readonly keys: ReadonlyArray<string>,
    ) {}
    check = () => true
    async run(m: Model, r: Real): Promise<void> {
      const before = r.warnings.length
      await run(r.audited, [call('c', this.tool, Object.fromEntries(this.keys.map((k) => [k, 1])))])
      const declared = m.catalogue?.get(this.tool)
      const expected =
        declared === undefined || declared.size === 0
          ? []
          : [...new Set(this.keys)]
              .filter((k) => k !== 'reason' && !declared.has(k) && !m.said.has(`${this.tool}\u0001${k}`))
              .sort()
      for (const k of expected) m.said.add(`${this.tool}\u0001${k}`)
      const got = r.warnings.slice(before).flatMap((w) => w.unknownKeys)
      expect(got).toEqual(expected)
    }
    toString = () => `call(${this.tool}, ${JSON.stringify(this.keys)})`
  }

  it('matches a model of said pairs over any sequence of listings and calls', async () => {
    const commands = [
      fc.tuple(fc.nat(catalogues.length - 1), fc.boolean()).map(([w, f]) => new ListCommand(w, f)),
      fc
        .tuple(
          fc.constantFrom('t1', 't2', 't3', 'tx'),
          fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'reason', '__proto__'), { maxLength: 4 }),
        )
        .map(([t, ks]) => new CallCommand(t, ks)),
    ]
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (cmds) => {
        const real = { declarations: [] as ReadonlyArray<ToolDeclaration>, failNext: false } as Real
        const warnings: Array<UnknownKeyWarning> = []
        const inner: Provider<string> = {
          toolsForLlm: () =>
            Promise.resolve(
              real.failNext ? { _tag: 'Left', left: 'down' } : { _tag: 'Right', right: real.declarations },
            ),
          executeToolCalls: (calls) => () =>
            Promise.resolve({
              _tag: 'Right',
              right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' })),
            }),
        }
        Object.assign(real, {
          warnings,
          audited: withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) })(inner),
        })
        await fc.asyncModelRun(() => ({ model: { catalogue: undefined, said: new Set<string>() }, real }), cmds)
      }),
      { numRuns: 100 },
    )
  })
})

describe('withUnknownKeyAudit: transparent', () => {
  it('forwards the very same batch and calls, and returns the very same result', async () => {
    const { inner, audited } = setup()
    await audited.toolsForLlm()
    const calls = [call('1', 'fs_read', { path: 'a', x: 1 }), call('2', 'fs_write', { path: 'b' })]
    const out = await run(audited, calls)
    expect(inner.rec.batches[0]).toBe(calls)
    expect(inner.rec.batches[0]?.[0]).toBe(calls[0])
    expect(out._tag === 'Right' && out.right).toBe(inner.rec.results[0])
  })

  it('hands a provider that reads batches the parse it audited, and one that reads none the calls alone', async () => {
    // a call whose arguments count their reads: a parse kept for the provider below is read once in all
    let reads = 0
    const counted = (): ToolCall =>
      ({
        id: '1',
        type: 'function',
        function: {
          name: 'fs_read',
          get arguments() {
            reads++
            return '{"path":"a","ffset":1}'
          },
        },
      }) as unknown as ToolCall
    const batching = batchingProvider([FS_READ])
    const warned: Array<string> = []
    const onWarn = (w: UnknownKeyWarning) => () => void warned.push(...w.unknownKeys)
    const overBatches = withUnknownKeyAudit({ onWarn })(batching)
    await overBatches.toolsForLlm()
    const calls = [counted()]
    await run(overBatches, calls)
    const handed = batching.received[0] as Batch
    expect(handed.calls).toBe(calls)
    expect(handed.argsAt(0)).toEqual({ _tag: 'Right', right: { path: 'a', ffset: 1 } })
    expect(reads).toBe(1)
    expect(warned).toEqual(['ffset'])

    reads = 0
    const { inner, audited } = setup([FS_READ])
    await audited.toolsForLlm()
    const alone = [counted()]
    await run(audited, alone)
    expect(inner.rec.batches[0]).toBe(alone)
    expect(reads).toBe(1)
  })

  it('returns the inner declarations as the very same objects, in order', async () => {
    const declarations = [FS_READ, FS_WRITE]
    const { audited } = setup(declarations)
    const listed = await audited.toolsForLlm()
    expect(listed._tag === 'Right' && listed.right).toBe(declarations)
  })

  it('passes an inner Left and a rejection through unchanged', async () => {
    const left = withUnknownKeyAudit({ onWarn: () => () => undefined })(failingProvider({ code: 42 }))
    expect(await left.executeToolCalls([call('1', 't')])()).toEqual({ _tag: 'Left', left: { code: 42 } })
    const reason = new Error('gone')
    const rejecting = withUnknownKeyAudit({ onWarn: () => () => undefined })(rejectingProvider(reason))
    await expect(rejecting.executeToolCalls([call('1', 't')])()).rejects.toBe(reason)
    await listingFailurePassesThrough(withUnknownKeyAudit({ onWarn: () => () => undefined }))
  })

  it('forwards an empty batch rather than short-circuiting it', async () => {
    const { inner, audited } = setup()
    const empty: ReadonlyArray<ToolCall> = []
    await run(audited, empty)
    expect(inner.rec.batches).toEqual([empty])
    expect(inner.rec.batches[0]).toBe(empty)
  })

  it('forwards any batch, garbage included, as the same objects and returns the same results', async () => {
    await fc.assert(
      fc.asyncProperty(
        batchArb(fc.constantFrom('fs_read', 'fs_write', 'other')),
        fc.boolean(),
        async (calls, listed) => {
          const { inner, audited } = setup()
          if (listed) await audited.toolsForLlm()
          const out = await run(audited, calls)
          expect(inner.rec.batches).toHaveLength(1)
          // the caller's very array, so every call in it is the caller's own
          expect(inner.rec.batches[0]).toBe(calls)
          expect(out._tag === 'Right' && out.right).toBe(inner.rec.results[0])
        },
      ),
    )
  })
})

describe('withUnknownKeyAudit: lazy', () => {
  it('does nothing until the task runs', async () => {
    await isLazy(withUnknownKeyAudit({ onWarn: () => () => undefined }), [call('1', 't', { x: 1 })])
  })

  it('audits before it forwards', async () => {
    const order: Array<string> = []
    const inner: Provider<never> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: [FS_READ] }),
      executeToolCalls: (calls) => () => {
        order.push('forward')
        return Promise.resolve({
          _tag: 'Right',
          right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' })),
        })
      },
    }
    const audited = withUnknownKeyAudit({ onWarn: () => () => void order.push('warn') })(inner)
    await audited.toolsForLlm()
    const task = audited.executeToolCalls([call('1', 'fs_read', { x: 1 })])
    expect(order).toEqual([])
    await task()
    expect(order).toEqual(['warn', 'forward'])
  })
})

describe('withUnknownKeyAudit: never throws on its own account', () => {
  it('swallows an onWarn that throws, and one whose IO throws', async () => {
    for (const onWarn of [
      (): never => {
        throw new Error('onWarn')
      },
      () => (): never => {
        throw new Error('io')
      },
    ]) {
      const inner = recordingProvider([FS_READ])
      const audited = withUnknownKeyAudit({ onWarn })(inner)
      await audited.toolsForLlm()
      const out = await run(audited, [call('1', 'fs_read', { x: 1 })])
      expect(out._tag === 'Right' && out.right).toBe(inner.rec.results[0])
    }
  })

  it('forwards a call that throws when read, and the rest of the batch keeps its warnings', async () => {
    const { inner, audited, warnings } = setup()
    await audited.toolsForLlm()
    const proxy = new Proxy(
      {},
      {
        get: () => {
          throw new Error('proxy')
        },
        ownKeys: () => {
          throw new Error('proxy')
        },
      },
    ) as ToolCall
    const getter = Object.defineProperty({ id: 'g' }, 'function', {
      get: () => {
        throw new Error('getter')
      },
    }) as unknown as ToolCall
    const argsProxy = {
      id: 'p',
      function: {
        name: 'fs_read',
        arguments: new Proxy(
          {},
          {
            ownKeys: () => {
              throw new Error('keys')
            },
          },
        ),
      },
    } as unknown as ToolCall
    const calls = [proxy, call('1', 'fs_read', { x: 1 }), getter, argsProxy, call('2', 'fs_write', { y: 1 })]
    await run(audited, calls)
    expect(inner.rec.batches[0]).toBe(calls)
    expect(warnings.map((w) => w.id)).toEqual(['1', '2'])
  })

  it('forwards garbage calls untouched', async () => {
    const { inner, audited, warnings } = setup()
    await audited.toolsForLlm()
    const calls = [
      null,
      'call',
      42,
      {},
      { function: null },
      { id: 'x', function: {} },
      { function: { name: 7 } },
    ] as unknown as ReadonlyArray<ToolCall>
    await run(audited, calls)
    expect(inner.rec.batches[0]).toBe(calls)
    expect(warnings).toEqual([])
  })

  it('never rejects, whatever the batch and whatever onWarn does', async () => {
    await fc.assert(
      fc.asyncProperty(batchArb(fc.constantFrom('fs_read', 'fs_write')), fc.boolean(), async (calls, throws) => {
        const inner = recordingProvider([FS_READ, FS_WRITE])
        const audited = withUnknownKeyAudit({
          onWarn: () => () => {
            if (throws) throw new Error('host logger down')
          },
        })(inner)
        await audited.toolsForLlm()
        const out = await run(audited, calls)
        expect(out._tag).toBe('Right')
      }),
    )
  })
})

describe('withUnknownKeyAudit: listing', () => {
  it('keeps the previous catalogue when a listing fails or rejects', async () => {
    let mode: 'ok' | 'left' | 'reject' = 'ok'
    const warnings: Array<UnknownKeyWarning> = []
    const inner: Provider<string> = {
      toolsForLlm: () =>
        mode === 'ok'
          ? Promise.resolve({ _tag: 'Right', right: [FS_READ] })
          : mode === 'left'
            ? Promise.resolve({ _tag: 'Left', left: 'down' })
            : Promise.reject(new Error('gone')),
      executeToolCalls: (calls) => () =>
        Promise.resolve({
          _tag: 'Right',
          right: calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '' })),
        }),
    }
    const audited = withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) })(inner)
    await audited.toolsForLlm()
    mode = 'left'
    expect(await audited.toolsForLlm()).toEqual({ _tag: 'Left', left: 'down' })
    mode = 'reject'
    await expect(audited.toolsForLlm()).rejects.toThrow('gone')
    await run(audited, [call('1', 'fs_read', { x: 1 })])
    expect(warnings).toHaveLength(1)
    expect(audited.auditedTools()).toEqual(['fs_read'])
  })

  it('replaces the catalogue wholesale with each successful listing', async () => {
    let declarations: ReadonlyArray<ToolDeclaration> = [FS_READ]
    const inner: Provider<never> = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right', right: declarations }),
      executeToolCalls: () => () => Promise.resolve({ _tag: 'Right', right: [] }),
    }
    const audited = withUnknownKeyAudit({ onWarn: () => () => undefined })(inner)
    await audited.toolsForLlm()
    expect(audited.auditedTools()).toEqual(['fs_read'])
    declarations = [FS_WRITE, decl('zz', ['a']), decl('empty')]
    await audited.toolsForLlm()
    expect(audited.auditedTools()).toEqual(['fs_write', 'zz'])
  })
})

describe('withUnknownKeyAudit: object keys are data', () => {
  it('handles prototype names as declared properties and as argument keys', async () => {
    const properties = JSON.parse('{"__proto__":{"type":"string"},"constructor":{"type":"string"}}') as Record<
      string,
      unknown
    >
    const proto: ToolDeclaration = {
      type: 'function',
      function: { name: 'proto', parameters: { type: 'object', properties } },
    }
    const { audited, warnings } = setup([proto])
    await audited.toolsForLlm()
    await run(audited, [
      call('1', 'proto', '{"__proto__":"x","constructor":"y","toString":"z","hasOwnProperty":"w"}', true),
    ])
    expect(warnings.map((w) => [w.unknownKeys, w.declaredKeys])).toEqual([
      [
        ['hasOwnProperty', 'toString'],
        ['__proto__', 'constructor'],
      ],
    ])
  })

  it('reports any argument key a tool did not declare, whatever its characters', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyArb, { minLength: 1, maxLength: 5 }),
        rawArgsArb,
        async (declared, _unused) => {
          const warnings: Array<UnknownKeyWarning> = []
          const properties: Record<string, unknown> = {}
          for (const k of declared) Object.defineProperty(properties, k, { value: {}, enumerable: true })
          const inner = recordingProvider([
            { type: 'function', function: { name: 't', parameters: { type: 'object', properties } } },
          ])
          const audited = withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) })(inner)
          await audited.toolsForLlm()
          const sent = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '\u0000', 'reason']
          const args: Record<string, unknown> = {}
          for (const k of sent) Object.defineProperty(args, k, { value: 1, enumerable: true })
          await run(audited, [call('1', 't', JSON.stringify(args), true)])
          const expected = sent.filter((k) => k !== 'reason' && !declared.includes(k)).sort()
          expect(warnings.flatMap((w) => w.unknownKeys)).toEqual(expected)
        },
      ),
      { numRuns: 50 },
    )
  })
})

describe('withUnknownKeyAudit: construction', () => {
  it('refuses an unknown option by name', () => {
    expect(() => withUnknownKeyAudit({ onwarn: () => () => undefined } as never)).toThrow(TypeError)
    expect(() => withUnknownKeyAudit({ onwarn: () => () => undefined } as never)).toThrow(/"onwarn"/)
  })

  it('refuses an onWarn that is not a function or takes more than one parameter', () => {
    expect(() => withUnknownKeyAudit({ onWarn: 'log' as never })).toThrow(/onWarn.*function/)
    expect(() => withUnknownKeyAudit({ onWarn: ((_w: unknown, _x: unknown) => () => undefined) as never })).toThrow(
      /onWarn.*at most 1 parameter/,
    )
  })

  it('refuses options that are not an object', () => {
    expect(() => withUnknownKeyAudit('loud' as never)).toThrow(TypeError)
  })

  it('refuses a provider without both functions, saying which is missing', () => {
    const audit = withUnknownKeyAudit({ onWarn: () => () => undefined })
    expect(() => audit({ toolsForLlm: () => Promise.resolve() } as never)).toThrow(/executeToolCalls/)
    expect(() => audit(null as never)).toThrow(TypeError)
  })

  it('refuses an onDiagnostic that is not a function, by name', () => {
    expect(() => withUnknownKeyAudit({ onDiagnostic: 'log' as never })).toThrow(/"onDiagnostic" must be a function/)
  })

  it('takes as maxPairs a whole number of at least 1, and refuses anything else by name', async () => {
    for (const maxPairs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '2', null]) {
      expect(() => withUnknownKeyAudit({ maxPairs: maxPairs as never })).toThrow(
        /maxPairs must be a whole number of at least 1/,
      )
    }
    const warnings: Array<UnknownKeyWarning> = []
    const audited = withUnknownKeyAudit({
      maxPairs: 1,
      onWarn: (w) => () => void warnings.push(w),
      onDiagnostic: () => undefined,
    })(recordingProvider([FS_READ]))
    await audited.toolsForLlm()
    for (const [id, key] of [
      ['1', 'a'],
      ['2', 'a'],
      ['3', 'b'],
      ['4', 'b'],
    ])
      await run(audited, [call(id as string, 'fs_read', { [key as string]: 1 })])
    expect(warnings.map((w) => w.id)).toEqual(['1', '3', '4'])
  })

  it('accepts no options at all', () => {
    expect(() => withUnknownKeyAudit()(recordingProvider([]))).not.toThrow()
  })
})

/** An audited provider whose listings are `listings`, one per `toolsForLlm` (the last one again after), and all it said. */
const diagnosing = (...listings: ReadonlyArray<unknown>) => {
  const diagnostics: Array<AuditDiagnostic> = []
  const warnings: Array<UnknownKeyWarning> = []
  let n = 0
  const inner: Provider<string> = {
    ...recordingProvider([]),
    toolsForLlm: () => Promise.resolve(listings[Math.min(n++, listings.length - 1)] as never),
  }
  const audited = withUnknownKeyAudit({
    onWarn: (w) => () => void warnings.push(w),
    onDiagnostic: (d) => () => void diagnostics.push(d),
  })(inner)
  return { audited, diagnostics, warnings }
}

const right = (declarations: unknown) => ({ _tag: 'Right', right: declarations })

describe('withUnknownKeyAudit: diagnostics', () => {
  it('says nothing of a listing that holds audited tools, or no tools at all', async () => {
    for (const listing of [right([FS_READ, decl('now')]), right([])]) {
      const { audited, diagnostics } = diagnosing(listing)
      await audited.toolsForLlm()
      expect(diagnostics).toEqual([])
    }
  })

  it('says once that nothing is audited when no listed tool declares a property', async () => {
    const { audited, diagnostics } = diagnosing(right([decl('now'), decl('ping', ['reason'])]))
    await audited.toolsForLlm()
    await audited.toolsForLlm()
    expect(diagnostics).toEqual([{ _tag: 'NothingToAudit', tools: 2 }])
  })

  it('says nothing of an empty batch, or of one that is not an array, even before any listing', async () => {
    const { audited, diagnostics } = diagnosing(right([FS_READ]))
    await run(audited, [])
    await run(audited, null as never)
    expect(diagnostics).toEqual([])
    await run(audited, [call('1', 'fs_read', { path: 'a' })])
    expect(diagnostics).toEqual([{ _tag: 'CalledBeforeListing' }])
  })

  it('says nothing of a listing that failed: the failure is the provider’s, handed back as it came', async () => {
    const failed = { _tag: 'Left', left: 'down' }
    const { audited, diagnostics } = diagnosing(failed)
    expect(await audited.toolsForLlm()).toBe(failed)
    expect(diagnostics).toEqual([])
  })

  it('says once of a listing that is not an Either, whatever it is, and hands it back as it came', async () => {
    for (const listing of [
      null,
      undefined,
      42,
      'tools',
      [FS_READ],
      { tag: 'Right', right: [FS_READ] },
      { _tag: 'right', right: [FS_READ] },
    ]) {
      const { audited, diagnostics, warnings } = diagnosing(listing)
      expect(await audited.toolsForLlm()).toBe(listing)
      await audited.toolsForLlm()
      expect(diagnostics.map((d) => d._tag)).toEqual(['ListingNotAnEither'])
      expect(warnings).toEqual([])
      expect(audited.auditedTools()).toEqual([])
    }
  })
})

describe('withUnknownKeyAudit: a successful listing whose declarations are not an array', () => {
  it('replaces the catalogue with an empty one, and says nothing', async () => {
    for (const declarations of [null, 'fs_read', { length: 1, 0: FS_READ }]) {
      const { audited, diagnostics, warnings } = diagnosing(right([FS_READ]), right(declarations))
      await audited.toolsForLlm()
      await audited.toolsForLlm()
      expect(audited.auditedTools()).toEqual([])
      await run(audited, [call('1', 'fs_read', { ffset: 1 })])
      expect(warnings).toEqual([])
      expect(diagnostics).toEqual([])
    }
  })
})

describe('withUnknownKeyAudit: a listing that throws when read', () => {
  const throwing = (): never => {
    throw new Error('boom')
  }

  it('is handed back as it came, and leaves the audit as it was', async () => {
    const tagThrows = Object.defineProperty({}, '_tag', { get: throwing })
    const lengthThrows = right(
      new Proxy([FS_WRITE], {
        get: (target, key, receiver) =>
          key === 'length' ? throwing() : (Reflect.get(target, key, receiver) as unknown),
      }),
    )
    for (const hostile of [tagThrows, lengthThrows]) {
      const { audited, diagnostics, warnings } = diagnosing(right([FS_READ]), hostile)
      await audited.toolsForLlm()
      expect(await audited.toolsForLlm()).toBe(hostile)
      expect(audited.auditedTools()).toEqual(['fs_read'])
      await run(audited, [call('1', 'fs_read', { ffset: 1 })])
      expect(warnings.map((w) => w.unknownKeys)).toEqual([['ffset']])
      expect(diagnostics).toEqual([])
    }
  })

  it('audits nothing from then on when its declarations cannot be walked', async () => {
    const unwalkable = right(
      new Proxy([FS_WRITE], {
        get: (target, key, receiver) =>
          key === Symbol.iterator ? throwing() : (Reflect.get(target, key, receiver) as unknown),
      }),
    )
    const { audited, warnings } = diagnosing(right([FS_READ]), unwalkable)
    await audited.toolsForLlm()
    expect(await audited.toolsForLlm()).toBe(unwalkable)
    expect(audited.auditedTools()).toEqual([])
    await run(audited, [call('1', 'fs_read', { ffset: 1 })])
    expect(warnings).toEqual([])
  })
})

describe('withUnknownKeyAudit: auditedTools', () => {
  it('names the audited tools in sorted order, whatever the listing’s order', async () => {
    const { audited } = diagnosing(right([decl('zeta', ['a']), decl('alpha', ['a']), decl('now'), decl('mid', ['a'])]))
    expect(audited.auditedTools()).toEqual([])
    await audited.toolsForLlm()
    expect(audited.auditedTools()).toEqual(['alpha', 'mid', 'zeta'])
  })
})

describe('drawAuditDiagnostic', () => {
  it('says each diagnostic in one line, naming what to do', () => {
    expect(drawAuditDiagnostic({ _tag: 'CalledBeforeListing' })).toBe(
      'toolstack: calls were made before any listing went through the audit, so they were not audited; list the tools (toolsForLlm) through the stack first',
    )
    expect(drawAuditDiagnostic({ _tag: 'NothingToAudit', tools: 1 })).toBe(
      'toolstack: the listing held 1 tool, but none declares a property, so no call is audited',
    )
    expect(drawAuditDiagnostic({ _tag: 'NothingToAudit', tools: 3 })).toBe(
      'toolstack: the listing held 3 tools, but none declares a property, so no call is audited',
    )
    expect(drawAuditDiagnostic({ _tag: 'SeenSetFull', capacity: 2 })).toBe(
      'toolstack: the audit remembers 2 (tool, key) pairs, its most; a new pair is still reported each time, but no longer remembered or counted',
    )
    expect(drawAuditDiagnostic({ _tag: 'ListingNotAnEither', got: 'a Promise' })).toBe(
      "toolstack: the provider's listing returned a Promise, not an Either, so nothing can be audited; a Promise-based provider is adapted with fromAsync(provider)",
    )
  })
})

describe('withUnknownKeyAudit: default onDiagnostic', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('writes the diagnostic, in one line, on stderr', async () => {
    const lines: Array<string> = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const audited = withUnknownKeyAudit({ onWarn: () => undefined })(recordingProvider([FS_READ]))
    await run(audited, [call('1', 'fs_read', { path: 'a' })])
    expect(lines).toEqual([drawAuditDiagnostic({ _tag: 'CalledBeforeListing' }) + '\n'])
  })
})

describe('withUnknownKeyAudit: default onWarn', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('writes one line on stderr naming the tool, the call, the undeclared and the declared keys', async () => {
    const lines: Array<string> = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const audited = withUnknownKeyAudit()(recordingProvider([FS_READ]))
    await audited.toolsForLlm()
    await run(audited, [call('call_9', 'fs_read', { path: 'a', ffset: 1 })])
    expect(lines).toEqual([
      'toolstack: fs_read call call_9 carried undeclared argument key "ffset" (declared: "length", "offset", "path") (did you mean offset?)\n',
    ])
  })
})

// -------------------------------------------------------------------------------------
// explaining itself: suggestions, tolerated names, counts
// -------------------------------------------------------------------------------------

describe('withUnknownKeyAudit: suggestions', () => {
  it('adds a did-you-mean for each reported key that plainly points at a declared key', async () => {
    const { audited, warnings } = setup([decl('fs_list', ['path', 'maxDepth', 'offset'])])
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_list', { path: '/', depth: 2, recursive: true, ffset: 3 })])
    expect(warnings[0]?.unknownKeys).toEqual(['depth', 'ffset', 'recursive'])
    expect(warnings[0]?.suggestions).toEqual([
      { key: 'depth', didYouMean: 'maxDepth' },
      { key: 'ffset', didYouMean: 'offset' },
    ])
  })

  it('is empty when no key plainly points anywhere', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_read', { recursive: true })])
    expect(warnings[0]?.suggestions).toEqual([])
  })

  it('says each suggestion in the default line', () => {
    const base = { tool: 't', id: '1', declaredKeys: ['offset', 'path'] }
    expect(
      formatWarning({ ...base, unknownKeys: ['ffset'], suggestions: [{ key: 'ffset', didYouMean: 'offset' }] }),
    ).toMatch(/ \(did you mean offset\?\)$/)
    expect(
      formatWarning({
        ...base,
        unknownKeys: ['ffset', 'pth'],
        suggestions: [
          { key: 'ffset', didYouMean: 'offset' },
          { key: 'pth', didYouMean: 'path' },
        ],
      }),
    ).toMatch(/ \(did you mean offset for "ffset", path for "pth"\?\)$/)
  })

  it('never changes a call, a result, or when a warning is said', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uniqueArray(fc.constantFrom('path', 'ffset', 'pth', 'offset', 'x', 'depth'), { maxLength: 4 }), {
          maxLength: 6,
        }),
        async (keySets) => {
          const { inner, audited, warnings } = setup()
          await audited.toolsForLlm()
          const calls = keySets.map((ks, i) => call(String(i), 'fs_read', Object.fromEntries(ks.map((k) => [k, 1]))))
          const out = await run(audited, calls)
          expect(inner.rec.batches[0]).toBe(calls)
          expect(out._tag === 'Right' && out.right).toBe(inner.rec.results[0])
          for (const w of warnings) {
            expect(w.suggestions.map((s) => s.key)).toEqual(
              w.unknownKeys.filter((k) => w.suggestions.some((s) => s.key === k)),
            )
            for (const s of w.suggestions) expect(w.declaredKeys).toContain(s.didYouMean)
          }
        },
      ),
    )
  })
})

describe('withUnknownKeyAudit: tolerate', () => {
  it('treats tolerated names exactly like reason', async () => {
    const inner = recordingProvider([FS_READ])
    const warnings: Array<UnknownKeyWarning> = []
    const audited = withUnknownKeyAudit({
      tolerate: ['_meta', 'toolCallId'],
      onWarn: (w) => () => void warnings.push(w),
    })(inner)
    await audited.toolsForLlm()
    await run(audited, [call('1', 'fs_read', { path: 'a', _meta: {}, toolCallId: 'x', reason: 'r', sessionId: 's' })])
    expect(warnings.map((w) => w.unknownKeys)).toEqual([['sessionId']])
    expect(audited.stats().map((s) => s.key)).toEqual(['sessionId'])
  })

  it('refuses a tolerate that is not an array of strings', () => {
    expect(() => withUnknownKeyAudit({ tolerate: '_meta' as never })).toThrow(/tolerate/)
    expect(() => withUnknownKeyAudit({ tolerate: ['_meta', 3] as never })).toThrow(/tolerate/)
  })

  it('a tolerated name never appears in any warning, whatever the calls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyArb, { maxLength: 3 }),
        fc.array(fc.uniqueArray(keyArb, { maxLength: 5 }), { maxLength: 5 }),
        async (tolerate, keySets) => {
          const warnings: Array<UnknownKeyWarning> = []
          const audited = withUnknownKeyAudit({ tolerate, onWarn: (w) => () => void warnings.push(w) })(
            recordingProvider([FS_READ]),
          )
          await audited.toolsForLlm()
          const calls = keySets.map((ks, i) => {
            const args: Record<string, unknown> = {}
            for (const k of [...ks, ...tolerate]) Object.defineProperty(args, k, { value: 1, enumerable: true })
            return call(String(i), 'fs_read', JSON.stringify(args), true)
          })
          await run(audited, calls)
          for (const w of warnings) for (const t of [...tolerate, 'reason']) expect(w.unknownKeys).not.toContain(t)
        },
      ),
    )
  })
})

describe('withUnknownKeyAudit: stats', () => {
  it('counts every audited call carrying each pair, and the id of the first', async () => {
    const { audited, warnings } = setup()
    await audited.toolsForLlm()
    await run(audited, [
      call('a', 'fs_read', { x: 1 }),
      call('b', 'fs_read', { x: 1, y: 1 }),
      call('c', 'fs_write', { x: 1 }),
    ])
    await run(audited, [call('d', 'fs_read', { x: 1 })])
    expect(audited.stats()).toEqual([
      { tool: 'fs_read', key: 'x', calls: 3, firstId: 'a' },
      { tool: 'fs_read', key: 'y', calls: 1, firstId: 'b' },
      { tool: 'fs_write', key: 'x', calls: 1, firstId: 'c' },
    ])
    expect(warnings.map((w) => w.id)).toEqual(['a', 'b', 'c']) // counting never re-announces
  })

  it('equals a naive recount over the same calls', async () => {
    const names = fc.constantFrom('fs_read', 'fs_write', 'unlisted')
    await fc.assert(
      fc.asyncProperty(fc.array(plainBatchArb(names), { maxLength: 5 }), async (batches) => {
        const { audited } = setup()
        await audited.toolsForLlm()
        for (const b of batches) await run(audited, b)
        // the naive recount: parse every call again, by hand
        const declared = new Map([
          ['fs_read', ['path', 'offset', 'length']],
          ['fs_write', ['path', 'content']],
        ])
        const naive = new Map<string, { tool: string; key: string; calls: number; firstId: string }>()
        for (const c of batches.flat()) {
          let tool: unknown, raw: unknown, id: unknown
          try {
            tool = c.function.name
            raw = c.function.arguments
            id = c.id
          } catch {
            continue
          }
          const keys = declared.get(tool as string)
          if (keys === undefined) continue
          let args: unknown = raw
          if (typeof raw === 'string') {
            try {
              args = JSON.parse(raw)
            } catch {
              continue
            }
          }
          if (typeof args !== 'object' || args === null || Array.isArray(args)) continue
          const proto: unknown = Object.getPrototypeOf(args)
          if (proto !== Object.prototype && proto !== null) continue
          for (const k of Object.keys(args)) {
            if (keys.includes(k) || k === 'reason') continue
            // a top-level key is its own path unless it is empty or is `*` or holds . [ ] "
            const path = k === '' || k === '*' || /[.[\]"]/.test(k) ? `[${JSON.stringify(k)}]` : k
            const slot = JSON.stringify([tool, path])
            const had = naive.get(slot)
            naive.set(slot, {
              tool: tool as string,
              key: path,
              calls: (had?.calls ?? 0) + 1,
              firstId: had?.firstId ?? (id === undefined || id === null ? '' : String(id)),
            })
          }
        }
        const expected = [...naive.values()].sort((a, b) =>
          a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
        )
        expect(audited.stats()).toEqual(expected)
      }),
    )
  })
})
