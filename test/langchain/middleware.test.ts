// unknownKeyAuditMiddleware's wrapToolCall over LangChain's own tools: each request is
// what createAgent's tool node hands a middleware (the model's ToolCall and the tool it
// resolved), and the handler runs the tool as that node does (tool.invoke(toolCall)).
// test/langchain/agent.test.ts runs it inside langchain's own createAgent.
import type { ToolMessage } from '@langchain/core/messages'
import type { ToolCall } from '@langchain/core/messages/tool'
import type { ClientTool } from '@langchain/core/tools'
import { DynamicStructuredTool, tool } from '@langchain/core/tools'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { UnknownKeyWarning } from '../../src/index.js'
import { fromTools, withUnknownKeyAudit } from '../../src/index.js'
import { toLangChainTools, unknownKeyAuditMiddleware } from '../../src/langchain/index.js'
import { recordingRead } from './fixtures.js'

const callOf = (id: string, args: Record<string, unknown>, name = 'read'): ToolCall => ({
  id,
  name,
  args,
  type: 'tool_call',
})

// what createAgent's tool node does with the request it is finally handed
const runTool = (request: { readonly toolCall: ToolCall; readonly tool: ClientTool }): Promise<ToolMessage> =>
  (request.tool as DynamicStructuredTool).invoke(request.toolCall) as Promise<ToolMessage>

const pick = (m: ToolMessage) => ({ content: m.content, status: m.status, tool_call_id: m.tool_call_id, name: m.name })

describe('unknownKeyAuditMiddleware', () => {
  it('hears the key zod strips, once per (tool, key); the tool gets what it gets without the middleware', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const { read, received } = recordingRead()

    const first = await audit.wrapToolCall({ toolCall: callOf('c1', { path: '/a', ffset: 3 }), tool: read }, runTool)
    const second = await audit.wrapToolCall({ toolCall: callOf('c2', { path: '/a', ffset: 3 }), tool: read }, runTool)
    const declared = await audit.wrapToolCall(
      { toolCall: callOf('c3', { path: '/b', offset: 1 }), tool: read },
      runTool,
    )

    expect(warnings).toEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: 'c1',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
    ])
    expect(audit.stats()).toEqual([{ tool: 'read', key: 'ffset', calls: 2, firstId: 'c1' }])

    const bare = recordingRead()
    const without = [
      await runTool({ toolCall: callOf('c1', { path: '/a', ffset: 3 }), tool: bare.read }),
      await runTool({ toolCall: callOf('c2', { path: '/a', ffset: 3 }), tool: bare.read }),
      await runTool({ toolCall: callOf('c3', { path: '/b', offset: 1 }), tool: bare.read }),
    ]
    expect(received).toEqual(bare.received)
    expect(received).toEqual([{ path: '/a' }, { path: '/a' }, { path: '/b', offset: 1 }])
    expect([first, second, declared].map(pick)).toEqual(without.map(pick))
  })

  it('forwards the same request and returns the handler’s own answer, or its rejection, unchanged', async () => {
    const audit = unknownKeyAuditMiddleware({ onWarn: () => undefined })
    const { read } = recordingRead()
    const request = { toolCall: callOf('c1', { path: '/a', pth: 1 }), tool: read }
    const args = request.toolCall.args
    const answer = { answered: true }
    const seen: Array<unknown> = []
    expect(
      audit.wrapToolCall(request, (r) => {
        seen.push(r)
        return answer
      }),
    ).toBe(answer)
    expect(seen[0]).toBe(request)
    expect(request.toolCall.args).toBe(args)
    expect(args).toEqual({ path: '/a', pth: 1 })
    const failure = new Error('tool failed')
    await expect(audit.wrapToolCall(request, () => Promise.reject(failure))).rejects.toBe(failure)
  })

  it('an onWarn that throws changes nothing about the call, and the pair is still said once', async () => {
    let calls = 0
    const audit = unknownKeyAuditMiddleware({
      onWarn: () => {
        calls += 1
        throw new Error('logger down')
      },
    })
    const { read } = recordingRead()
    const first = await audit.wrapToolCall({ toolCall: callOf('c1', { path: '/a', ffset: 3 }), tool: read }, runTool)
    const second = await audit.wrapToolCall({ toolCall: callOf('c2', { path: '/a', ffset: 3 }), tool: read }, runTool)
    expect([first, second].map(pick)).toEqual([
      { content: 'read /a', status: 'success', tool_call_id: 'c1', name: 'read' },
      { content: 'read /a', status: 'success', tool_call_id: 'c2', name: 'read' },
    ])
    expect(calls).toBe(1)
  })

  it('reads a JSON Schema tool as declared, at depth; a tool with no properties or no schema is not audited', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const write = new DynamicStructuredTool({
      name: 'write',
      description: 'Writes',
      schema: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          opts: { type: 'object', properties: { encoding: { type: 'string' } } },
        },
      },
      func: async () => 'written',
    })
    const open = tool(async () => 'ran', { name: 'open', description: 'Anything goes', schema: z.object({}) })
    const answer = (r: { readonly toolCall: ToolCall }) => r.toolCall.id
    audit.wrapToolCall(
      { toolCall: callOf('w1', { path: '/a', opts: { encodng: 'utf8' } }, 'write'), tool: write },
      answer,
    )
    audit.wrapToolCall({ toolCall: callOf('o1', { anything: 1 }, 'open'), tool: open }, answer)
    audit.wrapToolCall({ toolCall: callOf('s1', { x: 1 }, 'server_side'), tool: { type: 'web_search' } }, answer)
    expect(warnings.map((w) => [w.tool, w.unknownKeys, w.suggestions])).toEqual([
      ['write', ['opts.encodng'], [{ key: 'opts.encodng', didYouMean: 'opts.encoding' }]],
    ])
  })

  it('leaves a toolstack stack’s own tools to the stack’s audit: one pair, one warning', async () => {
    const said: Array<string> = []
    const stack = pipe(
      fromTools([
        {
          declaration: {
            type: 'function',
            function: { name: 'fetch', parameters: { type: 'object', properties: { url: {} } } },
          },
          run: (a) => `fetched ${String(a['url'])}`,
        },
      ]),
      withUnknownKeyAudit({ onWarn: (w) => void said.push(`stack: ${w.unknownKeys.join()}`) }),
    )
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void said.push(`middleware: ${w.unknownKeys.join()}`) })
    const [fetchTool] = await toLangChainTools(stack)
    const { read } = recordingRead()
    if (fetchTool === undefined) throw new Error('no tool listed')
    const answer = await audit.wrapToolCall(
      { toolCall: callOf('f1', { url: 'x', utl: 'x' }, 'fetch'), tool: fetchTool },
      runTool,
    )
    await audit.wrapToolCall({ toolCall: callOf('r1', { path: '/a', ffset: 3 }), tool: read }, runTool)
    expect(answer.content).toBe('fetched x')
    expect(said).toEqual(['stack: utl', 'middleware: ffset'])
  })

  it('hears a call the tool’s strict schema then rejects, as it rejects it without the middleware', async () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const strict = tool(async () => 'ran', {
      name: 'strict_read',
      description: 'Reads',
      schema: z.strictObject({ path: z.string() }),
    })
    const toolCall = callOf('s1', { path: '/a', pth: 1 }, 'strict_read')
    await expect(audit.wrapToolCall({ toolCall, tool: strict }, runTool)).rejects.toThrow('Unrecognized key: "pth"')
    await expect(runTool({ toolCall, tool: strict })).rejects.toThrow('Unrecognized key: "pth"')
    expect(warnings.map((w) => [w.tool, w.unknownKeys])).toEqual([['strict_read', ['pth']]])
  })

  it('a request it cannot read is handed on as it came', () => {
    const audit = unknownKeyAuditMiddleware({ onWarn: () => undefined })
    const hostile = {
      get toolCall(): ToolCall {
        throw new Error('no reading')
      },
    }
    const odd: ReadonlyArray<{ readonly toolCall: ToolCall; readonly tool?: unknown }> = [
      hostile,
      { toolCall: callOf('c1', { a: 1 }) },
      { toolCall: { name: 'read', args: 'not an object' } as unknown as ToolCall, tool: recordingRead().read },
      {
        toolCall: callOf('c2', { a: 1 }),
        tool: {
          name: 'read',
          get schema(): unknown {
            throw new Error('no schema')
          },
        },
      },
    ]
    for (const request of odd) expect(audit.wrapToolCall(request, (r) => r)).toBe(request)
  })

  it('whatever the request, it is handed on as it came and the handler’s answer returned; nothing throws', () => {
    const { read } = recordingRead()
    const said: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void said.push(w) })
    fc.assert(
      fc.property(
        fc.record({ toolCall: fc.anything(), tool: fc.oneof(fc.constant(read), fc.anything()) }, { requiredKeys: [] }),
        fc.anything(),
        (request, answer) => {
          const seen: Array<unknown> = []
          const out = audit.wrapToolCall(request as { toolCall: ToolCall }, (r) => {
            seen.push(r)
            return answer
          })
          expect(out).toBe(answer)
          expect(seen).toHaveLength(1)
          expect(seen[0]).toBe(request)
        },
      ),
    )
    for (const w of said) expect(w.tool).toBe('read')
  })

  it('reads a tool’s schema once, on its first call, however many calls name it', () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    let reads = 0
    const write = {
      name: 'write',
      get schema(): unknown {
        reads += 1
        return { type: 'object', properties: { path: { type: 'string' } } }
      },
    }
    for (const [id, key] of [
      ['w1', 'pth'],
      ['w2', 'pht'],
      ['w3', 'pth'],
    ] as const)
      audit.wrapToolCall({ toolCall: callOf(id, { path: '/a', [key]: 1 }, 'write'), tool: write }, () => undefined)
    expect(reads).toBe(1)
    expect(warnings.map((w) => [w.unknownKeys.join(), w.id])).toEqual([
      ['pth', 'w1'],
      ['pht', 'w2'],
    ])
  })

  it('a call with no id, or one that is not a string, is heard with the id ""', () => {
    const warnings: Array<UnknownKeyWarning> = []
    const audit = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w) })
    const { read } = recordingRead()
    const noId = { name: 'read', args: { path: '/a', k1: 1 }, type: 'tool_call' as const }
    audit.wrapToolCall({ toolCall: noId, tool: read }, () => undefined)
    audit.wrapToolCall(
      { toolCall: { ...noId, args: { path: '/a', k2: 1 }, id: 7 as never }, tool: read },
      () => undefined,
    )
    expect(warnings.map((w) => [w.unknownKeys.join(), w.id])).toEqual([
      ['k1', ''],
      ['k2', ''],
    ])
  })

  it('is the agent middleware toolstack_unknown_key_audit (LangChain refuses two of one name in an agent)', () => {
    expect(unknownKeyAuditMiddleware().name).toBe('toolstack_unknown_key_audit')
  })

  it('options are checked at construction', () => {
    expect(() => unknownKeyAuditMiddleware({ tolerate: 'x' } as never)).toThrow(
      /unknownKeyAuditMiddleware: tolerate must be/,
    )
  })
})
