import { describe, expect, it } from 'vitest'
import type { ToolCall } from '../../../src/kernel/model.js'
import type { PermissionAnswer, PermissionRequest, Rule } from '../../../src/index.js'
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
        new RegExp(`^here: options must be an object \\{ rules, roots\\?, onAsk\\? \\}, got `),
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
