import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import type { ToolCall, ToolDeclaration } from '../../../src/kernel/model.js'
import type { PermissionAnswer, PermissionRequest, Rule } from '../../../src/index.js'
import { fromTools, withPolicy } from '../../../src/index.js'
import type { PolicyApprovalOptions } from '../../../src/steps/policy/approvals.js'
import { approvalBridge } from '../../../src/steps/policy/approvals.js'
import { call } from '../../support/fakes.js'

const RULES: ReadonlyArray<Rule> = [{ tool: 'fs_write', decision: 'ask' }]

const requestFor = (id: string): PermissionRequest => ({
  kind: 'permission',
  tool: 'fs_write',
  arguments: {},
  call: call(id, 'fs_write'),
  rule: RULES[0],
  why: 'rule',
  paths: [],
  suggestedRule: { tool: 'fs_write', decision: 'allow' },
})

const answerOf = async (bridge: ReturnType<typeof approvalBridge>, id: string): Promise<unknown> => {
  const a: unknown = bridge.onAsk(requestFor(id))
  return typeof a === 'function' ? (a as () => unknown)() : a
}

const ALLOW: PermissionAnswer = { action: 'allow-once' }
const DENY: PermissionAnswer = { action: 'deny-once' }
const UNASKED: PermissionAnswer = { action: 'unasked' }

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

describe('approvalBridge', () => {
  describe('checks its options at construction, naming where', () => {
    it.each([null, 'rules', 3, [RULES]])('refuses options that are not an object: %j', (options) => {
      expect(() => approvalBridge(options as unknown as PolicyApprovalOptions, 'here')).toThrow(
        new RegExp(
          `^here: options must be an object \\{ rules, roots\\?, locationArgs\\?, resolver\\?, onAsk\\? \\}, got `,
        ),
      )
      expect(() => approvalBridge(options as unknown as PolicyApprovalOptions, 'here')).toThrow(TypeError)
    })

    it('refuses rules that are not rules, saying so under the name "rules"', () => {
      expect(() => approvalBridge({ rules: 'x' } as unknown as PolicyApprovalOptions, 'here')).toThrow(
        /^here: rules must be an array of rules/,
      )
      expect(() =>
        approvalBridge({ rules: [{ tool: 'a', decision: 'maybe' }] } as unknown as PolicyApprovalOptions, 'there'),
      ).toThrow(/^there: rules/)
      expect(() => approvalBridge({ rules: 'x' } as unknown as PolicyApprovalOptions, 'here')).toThrow(TypeError)
    })

    it('refuses an onAsk that is not a function, and takes one that is, or none', () => {
      expect(() => approvalBridge({ rules: RULES, onAsk: 'yes' } as unknown as PolicyApprovalOptions, 'here')).toThrow(
        new TypeError('here: option "onAsk" must be a function, got the string "yes"'),
      )
      expect(() => approvalBridge({ rules: RULES, onAsk: null } as unknown as PolicyApprovalOptions, 'here')).toThrow(
        /^here: option "onAsk" must be a function/,
      )
      expect(() => approvalBridge({ rules: RULES, onAsk: () => DENY }, 'here')).not.toThrow()
      expect(() => approvalBridge({ rules: RULES }, 'here')).not.toThrow()
    })

    it('hands back the rules decoded and the roots given, no roots as none', () => {
      const roots = { fs_: '/p' }
      const bridge = approvalBridge({ rules: RULES, roots }, 'here')
      expect(bridge.rules).toEqual(RULES)
      expect(bridge.roots).toBe(roots)
      expect(approvalBridge({ rules: RULES }, 'here').roots).toEqual({})
    })
  })

  // -----------------------------------------------------------------------------------
  // the decision, as withPolicy takes it
  // -----------------------------------------------------------------------------------

  describe('evaluate: the rules read a call as withPolicy reads it', () => {
    const writeTool = (properties: ReadonlyArray<string>, name = 'fs_write'): ToolDeclaration => ({
      type: 'function',
      function: {
        name,
        parameters: { type: 'object', properties: Object.fromEntries(properties.map((k) => [k, {}])) },
      },
    })
    const UNDER_P: ReadonlyArray<Rule> = [{ tool: 'fs_write', decision: 'allow', under: '/p' }]

    it('before a listing, no location decides: an allow under a directory fails closed', () => {
      const bridge = approvalBridge({ rules: UNDER_P }, 'here')
      expect(bridge.evaluate('fs_write', { path: '/p/a' })).toMatchObject({ decision: 'ask', why: 'unevaluable-path' })
      bridge.listed([writeTool(['path', 'text'])])
      expect(bridge.evaluate('fs_write', { path: '/p/a' })).toMatchObject({ decision: 'allow', rule: UNDER_P[0] })
      expect(bridge.evaluate('fs_write', { path: '/q/a' }).decision).toBe('ask')
    })

    // the defect this mends: the bridge read the decoy as the call's location and let the call through unasked,
    // and withPolicy, reading only what the tool declares, then asked, and refused it as no one was asked
    it('a key the tool does not declare decides nothing, however it reads: the call is asked about', () => {
      const bridge = approvalBridge({ rules: UNDER_P }, 'here')
      bridge.listed([writeTool(['command'])])
      expect(bridge.evaluate('fs_write', { command: 'ls', path: '/p/a' })).toMatchObject({
        decision: 'ask',
        why: 'unevaluable-path',
      })
    })

    it('a tool the listing did not name, or named twice, declares nothing: its locations are unknown', () => {
      const bridge = approvalBridge({ rules: [{ tool: '*', decision: 'allow', under: '/p' }] }, 'here')
      bridge.listed([writeTool(['path']), writeTool(['path'], 'fs_copy'), writeTool(['path'], 'fs_copy')])
      expect(bridge.evaluate('fs_write', { path: '/p/a' }).decision).toBe('allow')
      expect(bridge.evaluate('fs_copy', { path: '/p/a' }).decision).toBe('ask')
      expect(bridge.evaluate('fs_move', { path: '/p/a' }).decision).toBe('ask')
    })

    it('a listing that cannot be read leaves the last one in place', () => {
      const bridge = approvalBridge({ rules: UNDER_P }, 'here')
      bridge.listed([writeTool(['path'])])
      const throwing = new Proxy([], {
        get: () => {
          throw new Error('gone')
        },
      })
      for (const bad of [undefined, 'tools', { length: 1 }, throwing]) {
        expect(() => bridge.listed(bad as never)).not.toThrow()
        expect(bridge.evaluate('fs_write', { path: '/p/a' }).decision).toBe('allow')
      }
      // a readable listing replaces it
      bridge.listed([])
      expect(bridge.evaluate('fs_write', { path: '/p/a' }).decision).toBe('ask')
    })

    it('reads the locationArgs and the resolver withPolicy was given', () => {
      const rules: ReadonlyArray<Rule> = [{ tool: 'fs_write', decision: 'allow', under: '/p' }]
      const plain = approvalBridge({ rules }, 'here')
      const named = approvalBridge({ rules, locationArgs: ['spot'] }, 'here')
      for (const b of [plain, named]) b.listed([writeTool(['spot'])])
      // `spot` is no location by default: the allow under /p has no location to read, and fails closed
      expect(plain.evaluate('fs_write', { spot: '/p/a' })).toMatchObject({ decision: 'ask', why: 'unevaluable-path' })
      expect(named.evaluate('fs_write', { spot: '/p/a' }).decision).toBe('allow')
      expect(named.evaluate('fs_write', { spot: '/q/a' })).toMatchObject({ decision: 'ask', why: 'no-match' })
      // a resolver that finds /p/a a link to /q/a: the allow under /p does not hold for it
      const moved = approvalBridge(
        { rules, resolver: { resolve: (path: string) => ({ path: path === '/p/a' ? '/q/a' : path }) } },
        'here',
      )
      moved.listed([writeTool(['path'])])
      expect(moved.evaluate('fs_write', { path: '/p/a' }).decision).toBe('ask')
      expect(() => approvalBridge({ rules, resolver: 'guess' as never }, 'here')).toThrow(
        /^here: option "resolver" must be "lexical", "filesystem"/,
      )
      expect(() => approvalBridge({ rules, locationArgs: 'spot' as never }, 'here')).toThrow(
        /^here: option "locationArgs" must be an array/,
      )
    })

    // the bridge's promise: the framework asks its human about exactly the calls withPolicy will ask about, so
    // no call is refused as unasked that the human could have been asked about, and none asked twice
    it('whatever the declaration, the call and the rules, the bridge asks exactly when withPolicy asks', async () => {
      const NAMES = ['path', 'target', 'dst', 'dir', 'text', 'command'] as const
      const VALUES = ['/p/a', '/q/b', 'rel/c', '../x', '/p/../q', 3] as const
      const rule = fc.record(
        {
          tool: fc.constantFrom('fs_write', 'fs_*', 'other'),
          decision: fc.constantFrom('allow' as const, 'ask' as const, 'deny' as const),
          under: fc.constantFrom('/p', '/q', '/p/a'),
        },
        { requiredKeys: ['tool', 'decision'] },
      )
      await fc.assert(
        fc.asyncProperty(
          fc.subarray([...NAMES]),
          fc.dictionary(fc.constantFrom(...NAMES, 'file'), fc.constantFrom(...VALUES), { maxKeys: 4 }),
          fc.array(rule, { maxLength: 3 }),
          fc.constantFrom({}, { '': '/p' }),
          fc.boolean(),
          async (declared, args, rules, roots, listed) => {
            const bridge = approvalBridge({ rules, roots }, 'here')
            let asked = false
            const stack = pipe(
              fromTools([{ declaration: writeTool(declared), run: () => 'ran' }]),
              withPolicy({
                rules,
                roots,
                onAsk: () => {
                  asked = true
                  return DENY
                },
              }),
            )
            if (listed) {
              const listing = await stack.toolsForLlm()
              if (listing._tag === 'Right') bridge.listed(listing.right)
            }
            await stack.executeToolCalls([call('1', 'fs_write', args)])()
            expect(bridge.evaluate('fs_write', args).decision === 'ask').toBe(asked)
          },
        ),
      )
    })
  })

  // -----------------------------------------------------------------------------------
  // the approved calls
  // -----------------------------------------------------------------------------------

  describe('onAsk', () => {
    it('answers a call not approved "unasked" when there is no fallback: the framework asked no one about it', async () => {
      expect(await answerOf(approvalBridge({ rules: RULES }, 'here'), '1')).toEqual(UNASKED)
    })

    it('hands a call not approved to the fallback, whose answer it is', async () => {
      const asked: Array<PermissionRequest> = []
      const always: PermissionAnswer = { action: 'always-allow' }
      const bridge = approvalBridge(
        {
          rules: RULES,
          onAsk: (r) => {
            asked.push(r)
            return always
          },
        },
        'here',
      )
      expect(await answerOf(bridge, '1')).toBe(always)
      expect(asked.map((r) => r.call.id)).toEqual(['1'])
    })

    it('allows exactly the calls approved, while their task runs', async () => {
      const bridge = approvalBridge({ rules: RULES, onAsk: () => DENY }, 'here')
      const seen: Array<unknown> = []
      const out = await bridge.approvedWhile(call('1', 'fs_write'), async () => {
        seen.push(await answerOf(bridge, '1'), await answerOf(bridge, '2'))
        return 'done'
      })
      expect(out).toBe('done')
      expect(seen).toEqual([ALLOW, DENY])
      expect(await answerOf(bridge, '1')).toEqual(DENY)
    })

    it('forgets an approval when its task rejects, and passes the rejection on', async () => {
      const bridge = approvalBridge({ rules: RULES }, 'here')
      const boom = new Error('boom')
      await expect(
        bridge.approvedWhile(call('1', 'fs_write'), () => {
          throw boom
        }),
      ).rejects.toBe(boom)
      expect(await answerOf(bridge, '1')).toEqual(UNASKED)
    })

    // an id is the model's or a backend's (call_0): another call reusing it, with other arguments or another tool,
    // is not the call the human approved
    it('allows only the very call approved: the same id with other arguments or another tool is not it', async () => {
      const bridge = approvalBridge({ rules: RULES }, 'here')
      const approved = call('1', 'fs_write', { path: '/tmp/ok/a' })
      const seen = await bridge.approvedWhile(approved, async () => {
        const ask = async (c: ToolCall): Promise<unknown> => {
          const a: unknown = bridge.onAsk({ ...requestFor('1'), call: c })
          return typeof a === 'function' ? (a as () => unknown)() : a
        }
        return [
          await ask(call('1', 'fs_write', { path: '/tmp/ok/a' })),
          await ask(call('1', 'fs_write', { path: '/etc/passwd' })),
          await ask(call('1', 'fs_delete', { path: '/tmp/ok/a' })),
          // the same arguments as an object, not text: the same call
          await ask({ ...approved, function: { name: 'fs_write', arguments: { path: '/tmp/ok/a' } as never } }),
        ]
      })
      expect(seen).toEqual([ALLOW, UNASKED, UNASKED, ALLOW])
    })

    it('never approves a call whose arguments cannot be written as JSON, even while another such call is marked', async () => {
      const bridge = approvalBridge({ rules: RULES }, 'here')
      const odd = (id: string): ToolCall => ({
        id,
        type: 'function',
        function: { name: 'fs_write', arguments: { n: 1n } as never },
      })
      const seen = await bridge.approvedWhile(odd('1'), async () => {
        const a: unknown = bridge.onAsk({ ...requestFor('1'), call: odd('1') })
        return typeof a === 'function' ? (a as () => unknown)() : a
      })
      expect(seen).toEqual(UNASKED)
    })

    it('two runs of one approved call: the first to end leaves the other approved', async () => {
      const bridge = approvalBridge({ rules: RULES }, 'here')
      let release: () => void = () => undefined
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const first = bridge.approvedWhile(call('1', 'fs_write'), () => gate)
      await bridge.approvedWhile(call('1', 'fs_write'), async () => undefined)
      expect(await answerOf(bridge, '1')).toEqual(ALLOW)
      release()
      await first
      expect(await answerOf(bridge, '1')).toEqual(UNASKED)
    })

    it('keeps overlapping approvals apart: one ending leaves the other', async () => {
      const bridge = approvalBridge({ rules: RULES }, 'here')
      let release: () => void = () => undefined
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const first = bridge.approvedWhile(call('1', 'fs_write'), () => gate)
      await bridge.approvedWhile(call('2', 'fs_write'), async () => {
        expect(await answerOf(bridge, '1')).toEqual(ALLOW)
        expect(await answerOf(bridge, '2')).toEqual(ALLOW)
      })
      expect(await answerOf(bridge, '2')).toEqual(UNASKED)
      expect(await answerOf(bridge, '1')).toEqual(ALLOW)
      release()
      await first
      expect(await answerOf(bridge, '1')).toEqual(UNASKED)
    })
  })
})
