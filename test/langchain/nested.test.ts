// Nested keys heard by path through LangChain (issue 22, item 6): LangGraph's own
// ToolNode, invoked with an AIMessage carrying tool_calls, over a user's zod tools with
// UnknownKeyAuditHandler listening, and over toLangChainTools' tools of a stack. Each
// tool is `read` ({ path, opts: { encoding } }) or `draw` ({ shape: circle | square,
// told apart by kind }); see test/support/nested.ts.
//
// LangChain validates a call against the tool's schema before anything else hears it:
// a call the schema refuses fires no callback and never reaches a stack. What each
// test asserts is what LangChain lets through.
import type { ToolMessage } from '@langchain/core/messages'
import { AIMessage } from '@langchain/core/messages'
import type { DynamicStructuredTool } from '@langchain/core/tools'
import { tool } from '@langchain/core/tools'
import { ToolNode } from '@langchain/langgraph/prebuilt'
import { describe, expect, it } from 'vitest'
import type { ToolDeclaration, UnknownKeyWarning } from '../../src/index.js'
import { UnknownKeyAuditHandler, toLangChainTools } from '../../src/langchain/index.js'
import type { NestedCall } from '../support/nested.js'
import {
  CLEAN_RUN,
  STRIPPED_RUNS,
  cleanCall,
  drawSchema,
  drawWarning,
  expectStackHearsTheIssue,
  nestedDeclarations,
  nestedStack,
  nestedStats,
  ranWith,
  readSchema,
  readWarning,
  strayCalls,
  validCalls,
} from '../support/nested.js'

/** An AIMessage asking for `calls`, each call's args the object its JSON input reads as. */
const ask = (calls: ReadonlyArray<NestedCall>) =>
  new AIMessage({
    content: '',
    tool_calls: calls.map((c) => ({
      id: c.id,
      name: c.tool,
      args: JSON.parse(c.input) as Record<string, unknown>,
      type: 'tool_call' as const,
    })),
  })

const messagesOf = (out: unknown): Array<ToolMessage> => (out as { messages: Array<ToolMessage> }).messages

/** A ToolMessage of a tool that ran and answered `content`. */
const success = (content: string) => ({ status: 'success', content })

/** The status and content of each ToolMessage, by its tool call id. */
const answered = (out: unknown): Map<string, { status: unknown; content: unknown }> =>
  new Map(messagesOf(out).map((m) => [m.tool_call_id, { status: m.status, content: m.content }]))

describe('UnknownKeyAuditHandler over a user’s zod tools: nested keys by path', () => {
  const setUp = () => {
    const executed: Array<readonly [string, unknown]> = []
    const read = tool(async (input) => (executed.push(['read', input]), 'file text'), {
      name: 'read',
      description: 'Reads a file',
      schema: readSchema,
    })
    const draw = tool(async (input) => (executed.push(['draw', input]), 'drawn'), {
      name: 'draw',
      description: 'Draws a shape',
      schema: drawSchema,
    })
    const warnings: Array<UnknownKeyWarning> = []
    const audit = new UnknownKeyAuditHandler([read, draw], { onWarn: (w) => void warnings.push(w) })
    const node = new ToolNode([read, draw])
    const invoke = async (calls: ReadonlyArray<NestedCall>) =>
      answered(await node.invoke({ messages: [ask(calls)] }, { callbacks: [audit] }))
    return { executed, warnings, audit, invoke }
  }

  it('the calls of the issue are refused by zod before any callback: the handler cannot hear them, and the tools do not run', async () => {
    const { executed, warnings, audit, invoke } = setUp()
    expect(audit.auditedTools()).toStrictEqual(['draw', 'read'])
    // `opts` has no `encoding` and the circle no `radius`: LangChain's zod parse fails,
    // and it fails before handleToolStart, as for a z.strictObject (see langchain.test.ts)
    const out = await invoke(strayCalls('c1', 'c2'))
    expect(out.get('c1')).toStrictEqual({
      status: 'error',
      content: expect.stringContaining('did not match expected schema'),
    })
    expect(out.get('c2')).toStrictEqual({
      status: 'error',
      content: expect.stringContaining('did not match expected schema'),
    })
    expect(warnings).toStrictEqual([])
    expect(audit.stats()).toStrictEqual([])
    expect(executed).toStrictEqual([])
  })

  it('calls zod accepts carrying the same strays: opts.encodng (did you mean opts.encoding) and shape.side are heard once per (tool, path); the tools run with what zod left', async () => {
    const { executed, warnings, audit, invoke } = setUp()
    const first = await invoke(validCalls('c1', 'c2'))
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    expect(first.get('c1')).toStrictEqual({ status: 'success', content: 'file text' })
    expect(first.get('c2')).toStrictEqual({ status: 'success', content: 'drawn' })

    // the same calls again, and a square's side under the square tag: nothing new is said
    await invoke([...validCalls('c3', 'c4'), cleanCall('c5')])
    expect(warnings).toHaveLength(2)
    expect(audit.stats()).toStrictEqual(nestedStats(2))
    expect(executed).toStrictEqual([...STRIPPED_RUNS, ...STRIPPED_RUNS, CLEAN_RUN])
  })
})

// -------------------------------------------------------------------------------------

/** A stack of `declarations` behind the audit, as LangChain tools, recording what each tool ran with. */
const stackOf = async (declarations: ReadonlyArray<ToolDeclaration>) => {
  const nested = nestedStack(declarations)
  const tools: ReadonlyArray<DynamicStructuredTool> = await toLangChainTools(nested.stack)
  const node = new ToolNode([...tools])
  const invoke = async (calls: ReadonlyArray<NestedCall>) => answered(await node.invoke({ messages: [ask(calls)] }))
  return { ...nested, nested, invoke }
}

// the same tools declared by hand, as many servers do: each nested object open, nothing required
const openDeclarations: ReadonlyArray<ToolDeclaration> = [
  {
    type: 'function',
    function: {
      name: 'read',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          opts: { type: 'object', properties: { encoding: { type: 'string' } } },
        },
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'draw',
      parameters: {
        type: 'object',
        properties: {
          shape: {
            oneOf: [
              { type: 'object', properties: { kind: { const: 'circle' }, radius: { type: 'number' } } },
              { type: 'object', properties: { kind: { const: 'square' }, side: { type: 'number' } } },
            ],
          },
        },
      },
    },
  },
]

describe('toLangChainTools over a stack: nested keys by path', () => {
  it('declarations open below the top: the stack’s audit hears opts.encodng and shape.side once each; its tools run with the model’s own keys', async () => {
    const { nested, invoke } = await stackOf(openDeclarations)
    await expectStackHearsTheIssue(nested, invoke, success)
  })

  it('declarations zod wrote: the calls of the issue lack a required key, and LangChain refuses them before the stack, as the declaration says', async () => {
    // permissiveSchema keeps `required` on purpose: `opts.encoding` and the circle's `radius` are missing
    const { warnings, ran, invoke } = await stackOf(nestedDeclarations)
    const out = await invoke(strayCalls('c1', 'c2'))
    expect(out.get('c1')).toStrictEqual({
      status: 'error',
      content: expect.stringContaining('did not match expected schema'),
    })
    expect(out.get('c2')).toStrictEqual({
      status: 'error',
      content: expect.stringContaining('did not match expected schema'),
    })
    expect(warnings).toStrictEqual([])
    expect(ran).toStrictEqual([])
  })

  // zod writes `additionalProperties: false` on every nested object and union branch, and
  // LangChain validates JSON Schemas itself: permissiveSchema opens every level, so a call
  // with every required key and a stray one level down reaches the stack
  it('declarations zod wrote: a valid call with a stray key one level down reaches the stack, which hears it by its path', async () => {
    const { warnings, ran, invoke } = await stackOf(nestedDeclarations)
    const out = await invoke(validCalls('c1', 'c2'))
    expect(warnings).toStrictEqual([readWarning('c1'), drawWarning('c2')])
    expect(ran).toStrictEqual(ranWith(validCalls('c1', 'c2')))
    expect(out.get('c1')).toStrictEqual(success('ran read'))
    expect(out.get('c2')).toStrictEqual(success('ran draw'))
  })

  it('declarations zod wrote: a call without the stray key runs as before', async () => {
    const { warnings, invoke } = await stackOf(nestedDeclarations)
    const clean = await invoke([
      { id: 'c3', tool: 'read', input: '{"path":"a","opts":{"encoding":"utf8"}}' },
      cleanCall('c4'),
    ])
    expect(clean.get('c3')).toStrictEqual(success('ran read'))
    expect(clean.get('c4')).toStrictEqual(success('ran draw'))
    expect(warnings).toStrictEqual([])
  })
})
