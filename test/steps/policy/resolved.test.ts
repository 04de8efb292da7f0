// Issue 34: the guard judges what the server will touch, not the string it was sent. A property over random
// directory trees the test makes (names in NFC and NFD, case variants, symbolic links), random rules, and
// random calls spelled every way a model can (links, the other Unicode form, ".", "//", file: URLs, relative
// paths): whatever the oracle says touches a denied directory, or the protected file, is never run, and whatever
// touches an asked one runs only once the human was asked about it. The oracle knows nothing of the policy's
// strings: it walks the tree as the reference filesystem server does (a name by its exact spelling, else its one
// NFC twin) and compares files by device and inode, following links with the kernel's own stat. A second
// property plays a server on a volume that ignores case (every name whose case-folded form matches may be the
// one it opens) against the policy forced to fold case, the only way to test folding on this case-sensitive
// volume.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Rule, ToolCall, ToolResult } from '../../../src/index.js'
import { withPolicy } from '../../../src/index.js'
import { filesystemResolver } from '../../../src/extend.js'
import { call, decl, recordingProvider } from '../../support/fakes.js'

// -------------------------------------------------------------------------------------
// the oracle
// -------------------------------------------------------------------------------------

const identity = (p: string): string | undefined => {
  try {
    const s = statSync(p)
    return `${s.dev}:${s.ino}`
  } catch {
    return undefined
  }
}

// the absolute path the server reads a location as: a file: URL decoded, a relative path against the root
const serverPath = (raw: string, root: string): string =>
  raw.startsWith('file:') ? decodeURIComponent(new URL(raw).pathname) : raw.startsWith('/') ? raw : `${root}/${raw}`

/** How a server finds a name in a directory: the reference server's exact-then-NFC-twin, or a volume that ignores case. */
type Matching = 'exact' | 'folded'

const fold = (s: string): string => s.normalize('NFC').toLowerCase()

const candidates = (entries: ReadonlyArray<string>, seg: string, matching: Matching): ReadonlyArray<string> => {
  if (matching === 'folded') return entries.filter((e) => fold(e) === fold(seg))
  const twins = entries.filter((e) => e.normalize('NFC') === seg.normalize('NFC'))
  return entries.includes(seg) ? [seg] : twins.length === 1 ? twins : []
}

interface Walked {
  readonly chain: ReadonlyArray<string>
  readonly last: string | undefined
}

// every way the server's walk can go (one where names match exactly; one per candidate where case is ignored):
// the files it passes through (each by identity), and the one it ends on when it exists
const walks = (abs: string, matching: Matching): ReadonlyArray<Walked> => {
  const go = (cur: string, chain: ReadonlyArray<string>, segs: ReadonlyArray<string>): ReadonlyArray<Walked> => {
    const [seg, ...rest] = segs
    if (seg === undefined) return [{ chain, last: chain[chain.length - 1] }]
    let entries: ReadonlyArray<string> = []
    try {
      entries = readdirSync(cur)
    } catch {
      return [{ chain, last: undefined }]
    }
    const names = candidates(entries, seg, matching)
    if (names.length === 0) return [{ chain, last: undefined }]
    return names.flatMap((name) => {
      const id = identity(join(cur, name))
      return id === undefined ? [{ chain, last: undefined }] : go(join(cur, name), [...chain, id], rest)
    })
  }
  const segs = abs.split('/').filter((s) => s !== '' && s !== '.')
  return go('/', [identity('/') as string], segs)
}

// every directory above `dir` and itself, by identity
const lineage = (dir: string): ReadonlyArray<string> => {
  const real = realpathSync(dir)
  const out: Array<string> = []
  let at = real
  for (;;) {
    out.push(identity(at) as string)
    if (at === '/') return out
    at = join(at, '..')
  }
}

/** Whether a location, as the server may read it, lies in `target` or holds it (a move or delete carries it). */
const touches = (raw: string, root: string, target: string, matching: Matching): boolean => {
  const id = identity(target)
  return walks(serverPath(raw, root), matching).some(
    ({ chain, last }) => chain.includes(id as string) || (last !== undefined && lineage(target).includes(last)),
  )
}

// -------------------------------------------------------------------------------------
// the generated world
// -------------------------------------------------------------------------------------

const NAMES = ['a', 'b', 'B', '\u00e9', 'e\u0301', 'x'] as const
const nameArb = fc.constantFrom(...NAMES)

interface World {
  readonly dirs: ReadonlyArray<ReadonlyArray<string>>
  readonly links: ReadonlyArray<{
    readonly at: number
    readonly name: string
    readonly to: number
    readonly relative: boolean
  }>
  readonly denied: ReadonlyArray<number>
  readonly asked: ReadonlyArray<number>
  readonly calls: ReadonlyArray<{
    readonly tool: 'read' | 'write' | 'move'
    readonly spellings: ReadonlyArray<Spelling>
  }>
}

interface Spelling {
  readonly base: number
  readonly tail: ReadonlyArray<string>
  readonly other: ReadonlyArray<boolean>
  readonly dots: boolean
  readonly form: 'absolute' | 'relative' | 'url'
}

const spellingArb: fc.Arbitrary<Spelling> = fc.record({
  base: fc.nat(30),
  tail: fc.array(fc.oneof(nameArb, fc.constant('new')), { maxLength: 2 }),
  other: fc.array(fc.boolean(), { maxLength: 6 }),
  dots: fc.boolean(),
  form: fc.constantFrom('absolute', 'relative', 'url'),
})

const worldArb: fc.Arbitrary<World> = fc.record({
  dirs: fc.array(fc.array(nameArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }),
  links: fc.array(
    fc.record({ at: fc.nat(8), name: fc.constantFrom('l1', 'l2', 'L1'), to: fc.nat(8), relative: fc.boolean() }),
    { maxLength: 3 },
  ),
  denied: fc.array(fc.nat(8), { minLength: 1, maxLength: 2 }),
  asked: fc.array(fc.nat(8), { maxLength: 2 }),
  calls: fc.array(
    fc.oneof(
      fc.record({ tool: fc.constant('read' as const), spellings: fc.tuple(spellingArb) }),
      fc.record({ tool: fc.constant('write' as const), spellings: fc.tuple(spellingArb) }),
      fc.record({ tool: fc.constant('move' as const), spellings: fc.tuple(spellingArb, spellingArb) }),
    ),
    { minLength: 1, maxLength: 4 },
  ),
})

// the other Unicode form of a name, where it has one
const otherForm = (s: string): string => (s.normalize('NFC') === s ? s.normalize('NFD') : s.normalize('NFC'))

const ARGS = { read: ['path'], write: ['path'], move: ['source', 'destination'] } as const

// -------------------------------------------------------------------------------------
// the property
// -------------------------------------------------------------------------------------

interface Tally {
  judged: number
  allowed: number
  asked: number
}

/** Makes the world's tree, runs its calls through the policy, and checks each against the oracle. */
const judged = async (world: World, matching: Matching, tally: Tally): Promise<void> => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-touch-')))
  try {
    const dirs = world.dirs.map((segs) => join(root, ...segs))
    for (const d of dirs) mkdirSync(d, { recursive: true })
    mkdirSync(join(root, 'own'))
    const store = join(root, 'own', 'store.json')
    writeFileSync(store, '{}')
    const links: Array<string> = []
    for (const l of world.links) {
      const at = dirs[l.at % dirs.length] as string
      const to = dirs[l.to % dirs.length] as string
      const path = join(at, l.name)
      try {
        symlinkSync(l.relative ? relative(at, to) || '.' : to, path)
        links.push(path)
      } catch {
        // a name already taken: no link
      }
    }
    const bases = [root, ...dirs, ...links, join(root, 'own'), store]
    const denied = [...new Set(world.denied.map((i) => dirs[i % dirs.length] as string))]
    const asked = [...new Set(world.asked.map((i) => dirs[i % dirs.length] as string))]
    const rules: ReadonlyArray<Rule> = [
      { tool: '*', decision: 'allow', under: root },
      ...denied.map((d): Rule => ({ tool: '*', decision: 'deny', under: d })),
      ...asked.map((d): Rule => ({ tool: '*', decision: 'ask', under: d })),
    ]
    const spell = (s: Spelling): string => {
      const base = bases[s.base % bases.length] as string
      const segs = [
        ...relative(root, base)
          .split('/')
          .filter((x) => x !== ''),
        ...s.tail,
      ].map((seg, i) => (s.other[i] === true ? otherForm(seg) : seg))
      const withDots = s.dots ? segs.flatMap((seg) => ['.', seg]) : segs
      if (s.form === 'relative') return withDots.length === 0 ? '.' : withDots.join('/')
      const abs = `${root}/${withDots.join('/')}`
      return s.form === 'url' ? pathToFileURL(abs).href : abs
    }
    const touching = (raws: ReadonlyArray<string>, targets: ReadonlyArray<string>): boolean =>
      raws.some((r) => targets.some((t) => touches(r, root, t, matching)))
    const calls: Array<ToolCall> = []
    const mustRefuse: Array<boolean> = []
    const mustAsk: Array<boolean> = []
    world.calls.forEach((c, i) => {
      const raws = c.spellings.map(spell)
      const args = Object.fromEntries(ARGS[c.tool].map((a, j) => [a, raws[j]]))
      calls.push(call(`c${i}`, c.tool, args))
      mustRefuse.push(touching(raws, [...denied, store]))
      mustAsk.push(touching(raws, asked))
    })
    const inner = recordingProvider([
      decl('read', ['path']),
      decl('write', ['path', 'content']),
      decl('move', ['source', 'destination']),
    ])
    const questions = new Set<string>()
    const policy = withPolicy({
      rules,
      roots: { '': root },
      resolver: matching === 'folded' ? filesystemResolver({ caseInsensitive: true }) : 'filesystem',
      protect: [{ path: store, what: 'the store' }],
      // every question answered "allow once": what runs without one was never asked about
      onAsk: (request) => {
        questions.add(request.call.id)
        return { action: 'allow-once' }
      },
      onDiagnostic: () => undefined,
    })(inner)
    await policy.toolsForLlm()
    const out = await policy.executeToolCalls(calls)()
    const results = out._tag === 'Right' ? out.right : ([] as ReadonlyArray<ToolResult>)
    expect(results).toHaveLength(calls.length)
    const ran = new Set(inner.rec.batches.flat().map((c) => c.id))
    results.forEach((r, i) => {
      const where = JSON.stringify(calls[i]?.function.arguments)
      tally.judged++
      if (ran.has(r.tool_call_id)) tally.allowed++
      if (questions.has(r.tool_call_id)) tally.asked++
      if (mustRefuse[i] === true) {
        expect(r.is_error, `${where} touches a denied place`).toBe(true)
        expect(ran.has(r.tool_call_id), `${where} ran`).toBe(false)
      } else if (mustAsk[i] === true && ran.has(r.tool_call_id))
        expect(questions.has(r.tool_call_id), `${where} touches an asked place and ran unasked`).toBe(true)
    })
  } finally {
    rmSync(root, { recursive: true, force: true, maxRetries: 5 })
  }
}

// each run makes and removes a tree of its own: slow where the machine is busy, or the code instrumented. Each
// property takes half the global run count (FC_RUNS still searches harder), so the two cost what one did
const numRuns = Math.max(1, Math.floor((fc.readConfigureGlobal().numRuns ?? 100) / 2))

describe('the guard judges what the server will touch', () => {
  it('never runs a call the oracle says touches a denied directory or the protected file, nor one touching an asked directory unasked, however it is spelled', async () => {
    const tally: Tally = { judged: 0, allowed: 0, asked: 0 }
    await fc.assert(
      fc.asyncProperty(worldArb, (world) => judged(world, 'exact', tally)),
      { numRuns },
    )
    // the guard is not one that refuses everything, nor one that asks about everything
    expect(tally.allowed / tally.judged).toBeGreaterThan(0.15)
    expect(tally.asked).toBeGreaterThan(0)
    expect(tally.asked).toBeLessThan(tally.allowed)
  }, 180_000)

  it('forced to fold case, never lets a case variant past a denied or asked directory on a volume that ignores case', async () => {
    const tally: Tally = { judged: 0, allowed: 0, asked: 0 }
    // no links: a link's name in another case exists only on a volume that ignores case, which this is not
    await fc.assert(
      fc.asyncProperty(
        worldArb.map((w) => ({ ...w, links: [] })),
        (world) => judged(world, 'folded', tally),
      ),
      { numRuns },
    )
    expect(tally.allowed / tally.judged).toBeGreaterThan(0.15)
    expect(tally.asked).toBeGreaterThan(0)
  }, 180_000)
})
