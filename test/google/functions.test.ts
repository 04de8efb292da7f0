// @google/genai's own client, pointed at a loopback server of the test's (httpOptions.baseUrl) that answers with
// recorded generateContent responses (no network): a tool loop over a toolstack stack with
// toFunctionDeclarations and executeFunctionCalls, the stack in the SDK's automatic function calling through
// toCallableTool; and what executeFunctionCalls promises whatever the calls.
import type { Content, FunctionCall } from '@google/genai'
import { GoogleGenAI } from '@google/genai'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { Args, ToolResult, UnknownKeyWarning } from '../../src/index.js'
import { formatWarning, fromTools, withPolicy, withUnknownKeyAudit } from '../../src/index.js'
import { executeFunctionCalls, toCallableTool, toFunctionDeclarations } from '../../src/google/index.js'
import type { Loopback } from '../support/loopback.js'
import { inTurn, loopback } from '../support/loopback.js'
import { asJson, declarations, turns } from './support.js'

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const stackOver = (received: Array<Args>, warnings: Array<UnknownKeyWarning>) =>
  pipe(
    fromTools(
      declarations.map((declaration) => ({
        declaration,
        run: (args: Args) => {
          received.push(args)
          return `${declaration.function.name} ran`
        },
      })),
    ),
    withUnknownKeyAudit({ onWarn: (w) => void warnings.push(w) }),
    withPolicy({
      rules: [
        { tool: 'read_file', decision: 'allow' },
        { tool: 'write_file', decision: 'deny', under: '/', note: 'this agent only reads' },
      ],
      roots: { '': '/srv' },
    }),
  )

const model = 'gemini-2.5-flash'

describe('a generateContent tool loop over a stack (the real client against a loopback server)', () => {
  it('answers every function call in order with its id and name, the tool receiving the very args object; server tools left alone; each pair said once', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const ai = new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: server.url } })
    const received: Array<Args> = []
    const warnings: Array<UnknownKeyWarning> = []
    const stack = stackOver(received, warnings)
    const listed = await stack.toolsForLlm()
    if (listed._tag === 'Left') throw new Error('unreachable')
    const tools = [{ functionDeclarations: toFunctionDeclarations(listed.right) }]

    const contents: Array<Content> = [{ role: 'user', parts: [{ text: 'When is the demo?' }] }]
    const args: Array<unknown> = []
    const answered: Array<unknown> = []
    let text: string | undefined
    for (let turn = 0; turn < 6; turn++) {
      const response = await ai.models.generateContent({ model, contents, config: { tools } })
      const calls = response.functionCalls
      if (calls === undefined) {
        text = response.text
        break
      }
      args.push(...calls.map((c) => c.args))
      const parts = await executeFunctionCalls(stack)(calls)()
      if (parts._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')
      answered.push(parts.right)
      const said = response.candidates?.[0]?.content
      if (said !== undefined) contents.push(said)
      contents.push({ role: 'user', parts: parts.right })
    }

    expect(text).toBe('The demo is on 2 December.')
    expect((server.received[0]?.body as { tools: unknown }).tools).toEqual([
      {
        functionDeclarations: declarations.map((d) => ({
          name: d.function.name,
          description: d.function.description,
          parametersJsonSchema: d.function.parameters,
        })),
      },
    ])
    expect(answered).toEqual([
      [{ functionResponse: { id: 'fc_01', name: 'read_file', response: { output: 'read_file ran' } } }],
      [{ functionResponse: { id: 'fc_02', name: 'read_file', response: { output: 'read_file ran' } } }],
      [
        { functionResponse: { id: 'fc_03', name: 'read_file', response: { output: 'read_file ran' } } },
        {
          functionResponse: {
            id: 'fc_04',
            name: 'write_file',
            response: {
              error: expect.stringMatching(/^The permission policy refused this call to "write_file"/) as unknown,
            },
          },
        },
      ],
    ])
    // the next request carries the model's turn as it came, then the responses as a user turn
    const last = server.received[3]?.body as { contents: ReadonlyArray<unknown> }
    expect(last.contents.slice(-2)).toEqual([
      turns()[2]?.candidates?.[0]?.content,
      { role: 'user', parts: answered[2] },
    ])
    expect(received).toHaveLength(3)
    received.forEach((r, i) => expect(r).toBe(args[i]))
    expect(received[0]).toEqual({ path: 'notes.md', options: { encodng: 'utf8', offset: 0 } })
    expect(warnings.map(formatWarning)).toEqual([
      'toolstack: read_file call fc_01 carried undeclared argument key "options.encodng" (declared: "options", "path") (did you mean options.encoding?)',
    ])
  })

  it('the stack in the SDK’s automatic function calling: toCallableTool lists it, answers its own calls, and the SDK loops to the answer', async () => {
    server = await loopback(inTurn(turns().map(asJson)))
    const ai = new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: server.url } })
    const received: Array<Args> = []
    const warnings: Array<UnknownKeyWarning> = []
    const callable = toCallableTool(stackOver(received, warnings))
    const response = await ai.models.generateContent({
      model,
      contents: 'When is the demo?',
      config: { tools: [callable] },
    })
    expect(response.text).toBe('The demo is on 2 December.')
    expect(server.received).toHaveLength(4)
    const last = server.received[3]?.body as { contents: ReadonlyArray<{ parts: unknown }> }
    expect(last.contents.at(-1)?.parts).toEqual([
      { functionResponse: { id: 'fc_03', name: 'read_file', response: { output: 'read_file ran' } } },
      {
        functionResponse: {
          id: 'fc_04',
          name: 'write_file',
          response: { error: expect.stringMatching(/^The permission policy refused/) as unknown },
        },
      },
    ])
    expect(warnings.map((w) => [w.tool, w.id, w.unknownKeys])).toEqual([['read_file', 'fc_01', ['options.encodng']]])
    expect(received.map((r) => r['path'])).toEqual(['notes.md', 'todo.md', 'notes.md'])
  })
})

// -------------------------------------------------------------------------------------
// whatever the calls
// -------------------------------------------------------------------------------------

const call = fc.record(
  {
    id: fc.option(fc.string(), { nil: undefined }),
    name: fc.constantFrom('ok', 'fails', 'missing'),
    args: fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined }),
  },
  { requiredKeys: ['name'] },
)

describe('executeFunctionCalls, whatever the calls', () => {
  const stack = fromTools([
    { declaration: { type: 'function', function: { name: 'ok' } }, run: () => 'fine' },
    {
      declaration: { type: 'function', function: { name: 'fails' } },
      run: () => {
        throw new Error('broken')
      },
    },
  ])

  it('one functionResponse per call, in order, carrying its name and its id where it had one; an error exactly where the provider said so', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 12 }), async (calls) => {
        const out = await executeFunctionCalls(stack)(calls as Array<FunctionCall>)()
        if (out._tag === 'Left') return false
        expect(out.right.map((p) => p.functionResponse.name)).toEqual(calls.map((c) => c.name))
        expect(out.right.map((p) => p.functionResponse.id)).toEqual(
          calls.map((c) => (c.id === undefined || c.id === '' ? undefined : c.id)),
        )
        expect(out.right.map((p) => 'error' in p.functionResponse.response)).toEqual(calls.map((c) => c.name !== 'ok'))
        return true
      }),
    )
  })

  it('sends the call’s args object down the stack as it is, each call with an id of its own', async () => {
    const seen: Array<{ id: string; args: unknown }> = []
    const spy = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: [] }),
      executeToolCalls: (
        calls: ReadonlyArray<{ readonly id: string; readonly function: { readonly arguments: unknown } }>,
      ) => {
        seen.push(...calls.map((c) => ({ id: c.id, args: c.function.arguments })))
        return TE.right(calls.map((c): ToolResult => ({ role: 'tool', tool_call_id: c.id, content: '' })))
      },
    }
    const args = { path: 'a', constructor: 1 }
    await executeFunctionCalls(spy)([
      { name: 'n', args },
      { id: 'x', name: 'n' },
    ])()
    expect(seen[0]?.args).toBe(args)
    expect(seen.map((s) => s.id)).toEqual(['call_1', 'x'])
    expect(seen[1]?.args).toBe('')
  })

  it('a Left of the provider passes through; no calls, nothing sent; a callable tool whose stack fails answers each of its calls with an error', async () => {
    const failing = { toolsForLlm: () => Promise.resolve(TE.left('down')()), executeToolCalls: () => TE.left('down') }
    expect(await executeFunctionCalls(failing)([{ name: 'n' }])()).toEqual({ _tag: 'Left', left: 'down' })
    expect(await executeFunctionCalls(failing)(undefined)()).toEqual({ _tag: 'Right', right: [] })
    const listsOnly = {
      toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: declarations }),
      executeToolCalls: failing.executeToolCalls,
    }
    const callable = toCallableTool(listsOnly)
    expect(await callable.callTool([{ id: 'a', name: 'read_file', args: {} }, { name: 'other' }])).toEqual([
      { functionResponse: { id: 'a', name: 'read_file', response: { error: 'the tool provider failed: down' } } },
    ])
    await expect(toCallableTool(failing).tool()).rejects.toMatchObject({ left: 'down' })
    expect(await toCallableTool(failing).callTool([{ name: 'n' }])).toEqual([])
    expect(() => toCallableTool({} as never)).toThrow(TypeError)
  })
})

describe('executeFunctionCalls and toCallableTool, at their edges', () => {
  const listing = { toolsForLlm: () => Promise.resolve({ _tag: 'Right' as const, right: declarations }) }

  it('a call the provider answered no result for gets an error of its own, with the call’s id and name', async () => {
    const short = { ...listing, executeToolCalls: () => TE.right([]) }
    expect(await executeFunctionCalls(short)([{ id: 'a', name: 'read_file' }, { name: 'other' }])()).toEqual({
      _tag: 'Right',
      right: [
        {
          functionResponse: {
            id: 'a',
            name: 'read_file',
            response: { error: 'the tool provider returned no result for this call' },
          },
        },
        {
          functionResponse: {
            name: 'other',
            response: { error: 'the tool provider returned no result for this call' },
          },
        },
      ],
    })
  })

  it('function calls that are not a list go to the provider as they are, and each of its results is answered', async () => {
    const seen: Array<unknown> = []
    const provider = {
      ...listing,
      executeToolCalls: (calls: unknown) => {
        seen.push(calls)
        return TE.right([{ role: 'tool' as const, tool_call_id: 'x', content: 'not a batch', is_error: true as const }])
      },
    }
    const odd = { length: 1 }
    expect(await executeFunctionCalls(provider)(odd as never)()).toEqual({
      _tag: 'Right',
      right: [{ functionResponse: { name: '', response: { error: 'not a batch' } } }],
    })
    expect(seen[0]).toBe(odd)
  })

  it('callTool lists the stack before its first call, once; answers only the calls of its own tools', async () => {
    let lists = 0
    const ran: Array<string> = []
    const provider = {
      toolsForLlm: () => (lists++, listing.toolsForLlm()),
      executeToolCalls: (calls: ReadonlyArray<{ id: string; function: { name: string } }>) => {
        ran.push(...calls.map((c) => c.function.name))
        return TE.right(
          calls.map((c): ToolResult => ({ role: 'tool', tool_call_id: c.id, content: `${c.function.name} ran` })),
        )
      },
    }
    const callable = toCallableTool(provider)
    expect(await callable.callTool([{ name: 'elsewhere' }, { name: 7 } as never])).toEqual([])
    expect(await callable.callTool([{ name: 'read_file', args: {} }, { name: 'elsewhere' }])).toEqual([
      { functionResponse: { name: 'read_file', response: { output: 'read_file ran' } } },
    ])
    expect(lists).toBe(1)
    expect(ran).toEqual(['read_file'])
  })

  it('a stack that rejects a call, or throws, answers each of its calls with an error saying why', async () => {
    for (const executeToolCalls of [
      () => () => Promise.reject(new Error('the stack fell over')),
      () => {
        throw new Error('the stack fell over')
      },
    ]) {
      const callable = toCallableTool({ ...listing, executeToolCalls })
      expect(await callable.callTool([{ id: 'a', name: 'read_file' }, { name: 'read_file' }])).toEqual([
        {
          functionResponse: {
            id: 'a',
            name: 'read_file',
            response: { error: 'the tool provider failed: the stack fell over' },
          },
        },
        {
          functionResponse: { name: 'read_file', response: { error: 'the tool provider failed: the stack fell over' } },
        },
      ])
    }
  })
})
