// src/langchain/tools.ts value by value, through LangChain's own tools and ToolNode:
// permissiveSchema's copy, the DynamicStructuredTools toLangChainTools makes (each
// field, the call each sends down the stack, every way it answers), and which tools
// UnknownKeyAuditHandler audits and what it hears.
import type { ToolMessage } from '@langchain/core/messages'
import { AIMessage } from '@langchain/core/messages'
import { DynamicStructuredTool, tool } from '@langchain/core/tools'
import { ToolNode } from '@langchain/langgraph/prebuilt'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { AuditDiagnostic, ToolCall, ToolDeclaration, ToolResult, UnknownKeyWarning } from '../../src/index.js'
import { UnknownKeyAuditHandler, permissiveSchema, toLangChainTools } from '../../src/langchain/index.js'

/** A provider listing `declarations` and answering each call with `answer(call)`, recording every batch it is sent and every result it answered. */
const recording = (
  declarations: ReadonlyArray<ToolDeclaration>,
  answer: (call: ToolCall) => Omit<ToolResult, 'role' | 'tool_call_id'> = () => ({ content: 'ran' }),
) => {
  const received: Array<ReadonlyArray<ToolCall>> = []
  const answered: Array<ToolResult> = []
  const provider = {
    toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: declarations }),
    executeToolCalls: (calls: ReadonlyArray<ToolCall>) => () => {
      received.push(calls)
      const results = calls.map((c): ToolResult => ({ role: 'tool', tool_call_id: c.id, ...answer(c) }))
      answered.push(...results)
      return Promise.resolve({ _tag: 'Right' as const, right: results })
    },
  }
  return { provider, received, answered }
}

const readParameters = {
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
}
const readDeclaration: ToolDeclaration = {
  type: 'function',
  function: { name: 'read', description: 'Reads', parameters: readParameters },
}

const only = async (tools: Promise<Array<DynamicStructuredTool>>): Promise<DynamicStructuredTool> => {
  const [t] = await tools
  if (t === undefined) throw new Error('no tool listed')
  return t
}

const toolCall = (id: string, args: Record<string, unknown>, name = 'read') => ({
  id,
  name,
  args,
  type: 'tool_call' as const,
})

// -------------------------------------------------------------------------------------

describe('permissiveSchema', () => {
  it('no object schema is the empty object schema', () => {
    for (const parameters of [undefined, null, 'object', 3, [{ type: 'object' }]])
      expect(permissiveSchema(parameters as never)).toStrictEqual({ type: 'object', properties: {} })
  })

  it('a copy without additionalProperties at any depth, whatever its value; a property of that name stays', () => {
    const nested = {
      type: 'object',
      properties: { x: {}, additionalProperties: { type: 'string' } },
      additionalProperties: false,
    }
    for (const additionalProperties of [false, true, { type: 'string' }]) {
      const parameters = {
        type: 'object',
        properties: { path: { type: 'string' }, opts: nested, list: { type: 'array', items: nested } },
        required: ['path'],
        additionalProperties,
      }
      const before = structuredClone(parameters)
      const opened = { type: 'object', properties: { x: {}, additionalProperties: { type: 'string' } } }
      expect(permissiveSchema(parameters)).toStrictEqual({
        type: 'object',
        properties: { path: { type: 'string' }, opts: opened, list: { type: 'array', items: opened } },
        required: ['path'],
      })
      expect(parameters).toStrictEqual(before)
    }
  })

  it('a schema without a type is an object schema; a declared type is kept as written', () => {
    expect(permissiveSchema({ properties: { a: {} } })).toStrictEqual({ properties: { a: {} }, type: 'object' })
    expect(permissiveSchema({ type: ['object', 'null'], properties: {} })).toStrictEqual({
      type: ['object', 'null'],
      properties: {},
    })
  })

  it('an ordinary object: its members written, deleted and listed like any other, __proto__ an own member like any other', () => {
    const parameters = JSON.parse('{"type":"object","properties":{},"__proto__":{"polluted":true}}') as Record<
      string,
      unknown
    >
    const out = permissiveSchema(parameters)
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(Object.keys(out)).toStrictEqual(['type', 'properties', '__proto__'])
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')).toStrictEqual({
      value: { polluted: true },
      writable: true,
      enumerable: true,
      configurable: true,
    })
    expect((out as { polluted?: unknown }).polluted).toBeUndefined()
    out['type'] = 'string'
    delete out['properties']
    expect(out).toStrictEqual(JSON.parse('{"type":"string","__proto__":{"polluted":true}}'))
    expect(parameters['type']).toBe('object')
  })

  it('opens the first 65 levels (0 to 64) and copies a deeper schema as it is, so the copy is bounded', () => {
    // level i holds level i + 1 under properties.a, or under items
    const chain = (
      n: number,
      under: (s: Record<string, unknown>) => Record<string, unknown>,
    ): Record<string, unknown> => {
      let s: Record<string, unknown> = { type: 'string' }
      for (let i = n; i >= 0; i--) s = { type: 'object', ...under(s), additionalProperties: false }
      return s
    }
    const levels = (u: unknown, next: (s: Record<string, unknown>) => unknown): ReadonlyArray<boolean> => {
      const out: Array<boolean> = []
      for (
        let s = u as Record<string, unknown> | undefined;
        s?.['type'] === 'object';
        s = next(s) as Record<string, unknown>
      )
        out.push('additionalProperties' in s)
      return out
    }
    const viaProperties = levels(
      permissiveSchema(chain(70, (s) => ({ properties: { a: s } }))),
      (s) => (s['properties'] as Record<string, unknown>)['a'],
    )
    const viaItems = levels(permissiveSchema(chain(70, (s) => ({ items: s }))), (s) => s['items'])
    for (const closed of [viaProperties, viaItems]) {
      expect(closed.length).toBe(71)
      expect(closed.slice(0, 65).every((c) => !c)).toBe(true)
      expect(closed.slice(65).every((c) => c)).toBe(true)
    }
  })

  it('keeps a map member that is not an object as it is (names are data, and there are none)', () => {
    expect(permissiveSchema({ type: 'object', properties: 'ab' as never, $defs: ['x'] as never })).toStrictEqual({
      type: 'object',
      properties: 'ab',
      $defs: ['x'],
    })
  })

  it('whatever the schema: the same schema with no additionalProperties or unevaluatedProperties where a schema sits, and a type (model: a plain recursive strip)', () => {
    const name = fc.constantFrom('a', 'additionalProperties', 'items', '__proto__')
    const { schema } = fc.letrec<{ schema: Record<string, unknown> }>((tie) => ({
      schema: fc.oneof(
        { maxDepth: 3, depthIdentifier: 'schema' },
        fc.constant({ type: 'string' }),
        fc.record(
          {
            type: fc.constantFrom('object', 'array', 'string'),
            properties: fc.dictionary(name, tie('schema'), { maxKeys: 3 }),
            items: tie('schema'),
            anyOf: fc.array(tie('schema'), { maxLength: 2 }),
            additionalProperties: fc.oneof(fc.boolean(), tie('schema')),
            unevaluatedProperties: fc.boolean(),
            enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }),
          },
          { requiredKeys: [] },
        ),
      ),
    }))
    // written apart: schemas hold schemas under these members, names under properties
    const strip = (u: unknown): unknown => {
      if (typeof u !== 'object' || u === null || Array.isArray(u)) return u
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(u)) {
        if (k === 'additionalProperties' || k === 'unevaluatedProperties') continue
        const value =
          k === 'properties'
            ? Object.fromEntries(Object.entries(v as object).map(([n, x]) => [n, strip(x)]))
            : k === 'items'
              ? strip(v)
              : k === 'anyOf'
                ? (v as Array<unknown>).map(strip)
                : v
        Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true })
      }
      return out
    }
    fc.assert(
      fc.property(schema, (parameters) => {
        const before = structuredClone(parameters)
        const expected = strip(parameters) as Record<string, unknown>
        if (!Object.prototype.hasOwnProperty.call(parameters, 'type')) expected['type'] = 'object'
        expect(permissiveSchema(parameters)).toStrictEqual(expected)
        // toEqual: structuredClone gives a null-prototype object an ordinary one
        expect(parameters).toEqual(before)
      }),
    )
  })
})

// -------------------------------------------------------------------------------------

describe('toLangChainTools: the tools', () => {
  it('one tool per name, first declaration first: its name, description (or ""), permissive schema, content_and_artifact', async () => {
    const { provider } = recording([
      readDeclaration,
      { type: 'function', function: { name: 'ping' } },
      { type: 'function', function: { name: 'read', description: 'Another read' } },
    ])
    const tools = await toLangChainTools(provider)
    expect(tools.map((t) => [t.constructor, t.name, t.description, t.schema, t.responseFormat])).toStrictEqual([
      [
        DynamicStructuredTool,
        'read',
        'Reads',
        { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        'content_and_artifact',
      ],
      [DynamicStructuredTool, 'ping', '', { type: 'object', properties: {} }, 'content_and_artifact'],
    ])
  })

  it('a listing that fails rejects with a ProviderFailure carrying its Left; a non-provider is refused naming toLangChainTools', async () => {
    const { provider } = recording([])
    await expect(
      toLangChainTools({ ...provider, toolsForLlm: () => Promise.resolve({ _tag: 'Left' as const, left: 'down' }) }),
    ).rejects.toMatchObject({ name: 'ProviderFailure', left: 'down' })
    expect(() => toLangChainTools({} as never)).toThrow(/^toLangChainTools: /)
  })
})

describe('toLangChainTools: a call', () => {
  it('in a ToolNode: goes down with the tool call’s id and the arguments object; the model reads the text, the artifact is the very result', async () => {
    const { provider, received, answered } = recording([readDeclaration], (c) => ({
      content: `read ${JSON.stringify(c.function.arguments)}`,
      structured_content: { n: 1 },
    }))
    const out = (await new ToolNode(await toLangChainTools(provider)).invoke({
      messages: [new AIMessage({ content: '', tool_calls: [toolCall('c1', { path: '/a', pth: 1 })] })],
    })) as { messages: Array<ToolMessage> }
    expect(received).toStrictEqual([
      [{ id: 'c1', type: 'function', function: { name: 'read', arguments: { path: '/a', pth: 1 } } }],
    ])
    const [message] = out.messages
    expect([message?.content, message?.status, message?.tool_call_id, message?.name]).toStrictEqual([
      'read {"path":"/a","pth":1}',
      'success',
      'c1',
      'read',
    ])
    expect(message?.artifact).toBe(answered[0])
  })

  it('an is_error result is an error ToolMessage naming the call, its artifact the very result', async () => {
    const { provider, answered } = recording([readDeclaration], () => ({ content: 'no such file', is_error: true }))
    const read = await only(toLangChainTools(provider))
    const message = (await read.invoke(toolCall('c1', { path: '/a' }))) as ToolMessage
    expect([message.content, message.status, message.tool_call_id, message.name]).toStrictEqual([
      'no such file',
      'error',
      'c1',
      'read',
    ])
    expect(message.artifact).toBe(answered[0])
  })

  it('without a tool call: the text, or an is_error result thrown as an Error of its content; the id "" goes down', async () => {
    for (const isError of [false, true]) {
      const { provider, received } = recording([readDeclaration], () => ({
        content: 'no such file',
        is_error: isError,
      }))
      const read = await only(toLangChainTools(provider))
      if (isError) await expect(read.invoke({ path: '/a' })).rejects.toThrow(new Error('no such file'))
      else expect(await read.invoke({ path: '/a' })).toBe('no such file')
      expect(received).toStrictEqual([
        [{ id: '', type: 'function', function: { name: 'read', arguments: { path: '/a' } } }],
      ])
    }
  })

  it('a tool call whose id is "" or not a string, or that is not an object, is no tool call', async () => {
    const { provider, received } = recording([readDeclaration], () => ({ content: 'refused', is_error: true }))
    const read = await only(toLangChainTools(provider))
    const configs = [
      { toolCall: { id: '', name: 'read', args: {} } },
      { toolCall: { id: 7, name: 'read', args: {} } },
      { toolCall: Object.assign([], { id: 'c9' }) },
      { toolCall: 'c9' },
    ]
    for (const config of configs)
      await expect(read.func({ path: '/a' }, undefined, config as never)).rejects.toThrow(new Error('refused'))
    expect(received.map((batch) => batch.map((c) => c.id))).toStrictEqual(configs.map(() => ['']))
  })

  it('a call aborted before it ran is refused in words and never sent', async () => {
    const { provider, received } = recording([readDeclaration])
    const read = await only(toLangChainTools(provider))
    const aborted = new AbortController()
    aborted.abort(new Error('the user left'))
    await expect(read.invoke({ path: '/a' }, { signal: aborted.signal })).rejects.toThrow(
      new Error('the call was aborted before it ran (the user left)'),
    )
    expect(received).toStrictEqual([])
    expect(await read.invoke({ path: '/a' }, { signal: new AbortController().signal })).toBe('ran')
  })

  it('its func called as it may be, without a config: an input that is not an object goes down as its JSON text, undefined as ""', async () => {
    const { provider, received } = recording([readDeclaration])
    const read = await only(toLangChainTools(provider))
    for (const input of ['abc', 5, null, [1], undefined])
      expect(await read.func(input as never)).toStrictEqual(['ran', { role: 'tool', tool_call_id: '', content: 'ran' }])
    expect(received.map((batch) => batch.map((c) => c.function.arguments))).toStrictEqual([
      ['"abc"'],
      ['5'],
      ['null'],
      ['[1]'],
      [''],
    ])
  })

  it('an input JSON cannot write (a BigInt, a cycle) goes down as no arguments, as in the AI SDK adapter, rather than throwing', async () => {
    const { provider, received } = recording([readDeclaration])
    const read = await only(toLangChainTools(provider))
    const cycle: Array<unknown> = []
    cycle.push(cycle)
    for (const input of [7n, cycle])
      expect(await read.func(input as never)).toStrictEqual(['ran', { role: 'tool', tool_call_id: '', content: 'ran' }])
    expect(received.map((batch) => batch.map((c) => c.function.arguments))).toStrictEqual([[''], ['']])
  })
})

// -------------------------------------------------------------------------------------

describe('UnknownKeyAuditHandler', () => {
  const read = tool(async ({ path }) => `read ${path}`, {
    name: 'read',
    description: 'Reads',
    schema: z.object({ path: z.string(), offset: z.number().optional() }),
  })

  it('is a LangChain callback handler named toolstack_unknown_key_audit', () => {
    const handler = new UnknownKeyAuditHandler([read], { onWarn: () => undefined })
    expect(handler.name).toBe('toolstack_unknown_key_audit')
  })

  it('refuses what is not an array, naming UnknownKeyAuditHandler', () => {
    expect(() => new UnknownKeyAuditHandler({} as never)).toThrow(
      new TypeError('UnknownKeyAuditHandler: expected an array of tools (with name and schema), got an object'),
    )
    expect(() => new UnknownKeyAuditHandler('read' as never)).toThrow(
      new TypeError('UnknownKeyAuditHandler: expected an array of tools (with name and schema), got the string "read"'),
    )
  })

  it('a tool whose schema has no JSON Schema is left out: neither audited nor counted', () => {
    const dated = tool(async () => 'ok', { name: 'dated', description: 'Dated', schema: z.object({ when: z.date() }) })
    const ping = tool(async () => 'pong', { name: 'ping', description: 'Pings', schema: z.object({}) })
    const diagnostics: Array<AuditDiagnostic> = []
    const none = new UnknownKeyAuditHandler([dated, ping], { onDiagnostic: (d) => void diagnostics.push(d) })
    expect(none.auditedTools()).toStrictEqual([])
    expect(diagnostics).toStrictEqual([{ _tag: 'NothingToAudit', tools: 1 }])
    const some = new UnknownKeyAuditHandler([dated, read], { onDiagnostic: (d) => void diagnostics.push(d) })
    expect(some.auditedTools()).toStrictEqual(['read'])
    expect(diagnostics).toHaveLength(1)
  })

  it('hears a call through LangChain: the tool’s name, the raw arguments, the tool call’s id or "" without one; a JSON Schema tool too', async () => {
    const json = new DynamicStructuredTool({
      name: 'list',
      description: 'Lists',
      schema: { type: 'object', properties: { dir: { type: 'string' } } },
      func: async () => 'listed',
    })
    const warnings: Array<UnknownKeyWarning> = []
    const handler = new UnknownKeyAuditHandler([read, json], { onWarn: (w) => void warnings.push(w) })
    expect(handler.auditedTools()).toStrictEqual(['list', 'read'])
    expect(await read.invoke({ path: '/a', ffset: 3 } as never, { callbacks: [handler] })).toBe('read /a')
    const message = (await json.invoke(toolCall('c2', { dir: '/', dri: '/' }, 'list'), {
      callbacks: [handler],
    })) as ToolMessage
    expect(message.content).toBe('listed')
    expect(warnings).toStrictEqual([
      {
        tool: 'read',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        id: '',
        suggestions: [{ key: 'ffset', didYouMean: 'offset' }],
      },
      {
        tool: 'list',
        unknownKeys: ['dri'],
        keys: [{ path: 'dri', key: 'dri', place: [] }],
        declaredKeys: ['dir'],
        id: 'c2',
        suggestions: [{ key: 'dri', didYouMean: 'dir' }],
      },
    ])
    expect(handler.stats()).toStrictEqual([
      { tool: 'list', key: 'dri', calls: 1, firstId: 'c2' },
      { tool: 'read', key: 'ffset', calls: 1, firstId: '' },
    ])
  })

  it('a tool start with no tool name is not audited', () => {
    const warnings: Array<UnknownKeyWarning> = []
    const handler = new UnknownKeyAuditHandler([read], { onWarn: (w) => void warnings.push(w) })
    handler.handleToolStart({ lc: 1, type: 'not_implemented', id: ['read'] }, '{"path":"/a","ffset":3}', 'run-1')
    expect(warnings).toStrictEqual([])
    expect(handler.stats()).toStrictEqual([])
  })
})
