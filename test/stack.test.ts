// The stack, tested as one: Policy( UnknownKeys( Reasons( Registry ) ) ), built with pipe.
import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { PermissionRequest, ToolCall, ToolDeclaration, UnknownKeyWarning } from '../src/index.js'
import { REASON_PARAM, fromTools, registry, withPolicy, withReasons, withUnknownKeyAudit } from '../src/index.js'
import { fromMcpClient } from '../src/mcp/index.js'
import { call, decl } from './support/fakes.js'
import { answersOnePerCall } from './laws.js'

const files = new Map<string, string>([['/srv/notes.txt', 'hello']])

const buildStack = () => {
  const received: Array<Record<string, unknown>> = []
  const asked: Array<PermissionRequest> = []
  const warnings: Array<UnknownKeyWarning> = []
  const fs = fromTools([
    {
      declaration: decl('read', ['path']),
      run: (args) => {
        received.push({ tool: 'read', ...args })
        return TE.right(files.get(String(args['path'])) ?? '')
      },
    },
    {
      declaration: decl('write', ['path', 'content']),
      run: (args) => {
        received.push({ tool: 'write', ...args })
        files.set(String(args['path']), String(args['content']))
        return TE.right('written')
      },
    },
  ])
  const tools = pipe(
    registry([{ prefix: 'fs', provider: fs }]),
    withReasons(),
    withUnknownKeyAudit({ onWarn: (w) => () => void warnings.push(w) }),
    withPolicy({
      rules: [
        { tool: 'fs_read', decision: 'allow' },
        { tool: 'fs_write', decision: 'ask' },
      ],
      onAsk: (request) => () => {
        asked.push(request)
        return Promise.resolve({ action: 'allow-once' })
      },
    }),
  )
  return { tools, received, asked, warnings }
}

describe('the whole stack', () => {
  it('shows the model prefixed names with reason added; the audit caches the augmented ones', async () => {
    const { tools } = buildStack()
    const listed = await tools.toolsForLlm()
    expect(listed._tag).toBe('Right')
    const declarations = listed._tag === 'Right' ? listed.right : []
    expect(declarations.map((d) => d.function.name)).toEqual(['fs_read', 'fs_write'])
    for (const d of declarations)
      expect(Object.keys((d.function.parameters?.['properties'] ?? {}) as object)).toContain(REASON_PARAM)
  })

  it('a call with a reason is silent, and the provider receives it without the reason', async () => {
    const { tools, received, warnings } = buildStack()
    await tools.toolsForLlm()
    const out = await tools.executeToolCalls([
      call('1', 'fs_read', { path: '/srv/notes.txt', reason: 'The user asked what the notes say.' }),
    ])()
    expect(out).toEqual({ _tag: 'Right', right: [{ role: 'tool', tool_call_id: '1', content: 'hello' }] })
    expect(warnings).toEqual([])
    expect(received).toEqual([{ tool: 'read', path: '/srv/notes.txt' }])
  })

  it('onAsk still sees the reason, while the provider does not', async () => {
    const { tools, received, asked } = buildStack()
    await tools.toolsForLlm()
    await tools.executeToolCalls([
      call('w', 'fs_write', { path: '/srv/a.txt', content: 'x', reason: 'Saving the summary the user asked for.' }),
    ])()
    expect(asked).toHaveLength(1)
    expect(asked[0]?.tool).toBe('fs_write')
    expect(asked[0]?.arguments[REASON_PARAM]).toBe('Saving the summary the user asked for.')
    expect(received).toEqual([{ tool: 'write', path: '/srv/a.txt', content: 'x' }])
  })

  it('reports a mangled key once, by name, under the name the model used', async () => {
    const { tools, warnings } = buildStack()
    await tools.toolsForLlm()
    const mangled = (id: string): ToolCall => call(id, 'fs_write', { path: '/srv/b.txt', contnet: 'y', reason: 'r' })
    await tools.executeToolCalls([mangled('1')])()
    await tools.executeToolCalls([mangled('2')])()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      tool: 'fs_write',
      id: '1',
      unknownKeys: ['contnet'],
      suggestions: [{ key: 'contnet', didYouMean: 'content' }],
    })
    expect(warnings[0]?.declaredKeys).toEqual(['content', 'path', REASON_PARAM])
  })

  it('answers one result per call, in order, whatever the batch and whatever the provider does', async () => {
    const declarations: ReadonlyArray<ToolDeclaration> = [decl('read', ['path']), decl('write', ['path', 'content'])]
    await fc.assert(
      answersOnePerCall(
        (inner) =>
          pipe(
            registry([{ prefix: 'fs', provider: inner }]),
            withReasons(),
            withUnknownKeyAudit({ onWarn: () => () => undefined }),
            withPolicy({ rules: [{ tool: 'fs_*', decision: 'allow' }] }),
          ),
        declarations,
        fc.constantFrom('fs_read', 'fs_write', 'fs_other', 'web_get'),
      ),
      { numRuns: 100 },
    )
  })

  it("parses each call's arguments once across the whole stack, down to fromMcpClient", async () => {
    const sent: Array<Record<string, unknown> | undefined> = []
    const client = {
      listTools: () =>
        Promise.resolve({
          tools: [
            { name: 'read', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
            {
              name: 'write',
              inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
            },
          ],
        }),
      callTool: (p: { name: string; arguments?: Record<string, unknown> }) => {
        sent.push(p.arguments)
        return Promise.resolve({ content: [{ type: 'text', text: 'ok' }] })
      },
    }
    const tools = pipe(
      registry([{ prefix: 'fs', provider: fromMcpClient(client) }]),
      withReasons(),
      withUnknownKeyAudit({ onWarn: () => () => undefined }),
      withPolicy({
        rules: [
          { tool: 'fs_read', decision: 'allow', under: '/srv' },
          { tool: 'fs_write', decision: 'allow' },
        ],
      }),
    )
    await tools.toolsForLlm()
    const calls = [
      call('1', 'fs_read', { path: '/srv/a', reason: 'because' }),
      call('2', 'fs_write', { path: '/srv/b', content: 'x' }),
      call('3', 'fs_write', { path: '/srv/c', contnet: 'y', reason: 'r' }),
    ]
    const own = new Set(calls.map((c) => c.function.arguments))
    const spy = vi.spyOn(JSON, 'parse')
    try {
      const out = await tools.executeToolCalls(calls)()
      expect(out._tag === 'Right' && out.right.map((r) => r.content)).toEqual(['ok', 'ok', 'ok'])
      const parsesOfOwn = spy.mock.calls.filter(([text]) => own.has(text))
      expect(parsesOfOwn).toHaveLength(3)
      // and nothing else parsed any arguments again (the stripped ones included)
      expect(spy.mock.calls.filter(([text]) => typeof text === 'string' && text.startsWith('{"path"'))).toHaveLength(3)
    } finally {
      spy.mockRestore()
    }
    expect(sent).toEqual([{ path: '/srv/a' }, { path: '/srv/b', content: 'x' }, { path: '/srv/c', contnet: 'y' }])
  })
})
