// unknownKeyAuditMiddleware reading what it did not write: which tools of a request
// are audited (declarationsOfRequest) and which parts of a model's answer are audited
// calls, part by part, each with an undeclared key of its own so the warnings say
// which were read. The loops and the "changes nothing" promises are in middleware.test.ts.
import { describe, expect, it } from 'vitest'
import type { UnknownKeyWarning } from '../../src/index.js'
import type { LanguageModelCallParams } from '../../src/ai-sdk/index.js'
import { declarationsOfRequest, unknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { usage } from './support.js'

const SCHEMA = { type: 'object', properties: { path: {}, offset: {} } }
const readTool = { type: 'function', name: 'read', inputSchema: SCHEMA }

describe('declarationsOfRequest', () => {
  it('the function tools with a name and a JSON Schema, each as a declaration of that very schema', () => {
    const other = { type: 'object', properties: { text: {} } }
    const unreadable = {
      get type(): string {
        throw new Error('no type')
      },
    }
    const tools = [
      readTool,
      Object.assign([], { type: 'function', name: 'listed', inputSchema: SCHEMA }),
      { type: 'provider', id: 'openai.web_search', name: 'web_search', inputSchema: SCHEMA },
      { type: 'function', name: 7, inputSchema: SCHEMA },
      { type: 'function', name: 'stringSchema', inputSchema: '{"type":"object"}' },
      { type: 'function', name: 'noSchema' },
      { name: 'untyped', inputSchema: SCHEMA },
      unreadable,
      null,
      'write',
      { type: 'function', name: 'write', inputSchema: other },
    ]
    const ds = declarationsOfRequest(tools)
    expect(ds).toStrictEqual([
      { type: 'function', function: { name: 'read', parameters: SCHEMA } },
      { type: 'function', function: { name: 'write', parameters: other } },
    ])
    expect(ds[0]?.function.parameters).toBe(SCHEMA)
  })

  it('no list of tools, no declarations', () => {
    expect(declarationsOfRequest(undefined)).toStrictEqual([])
    expect(declarationsOfRequest(readTool)).toStrictEqual([])
    expect(declarationsOfRequest(new Set([readTool]))).toStrictEqual([])
    expect(declarationsOfRequest([])).toStrictEqual([])
  })
})

// -------------------------------------------------------------------------------------
// the parts of a generated answer
// -------------------------------------------------------------------------------------

const params = (tools: ReadonlyArray<unknown>): LanguageModelCallParams =>
  ({ prompt: [], tools }) as unknown as LanguageModelCallParams

const generate = async (tools: ReadonlyArray<unknown>, content: unknown) => {
  const warnings: Array<UnknownKeyWarning> = []
  const mw = unknownKeyAuditMiddleware({ onWarn: (w) => void warnings.push(w), onDiagnostic: () => undefined })
  const result = { content, finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
  const out = await mw.wrapGenerate({
    doGenerate: async () => result,
    doStream: async () => Promise.reject(new Error('not streamed')),
    params: params(tools),
    model: {},
  } as never)
  expect(out).toBe(result)
  return warnings.map((w) => [w.id, w.tool, w.unknownKeys])
}

/** A call of `read` whose input carries one undeclared key, `key`. */
const part = (key: string, more: Record<string, unknown> = {}) => ({
  type: 'tool-call',
  toolCallId: key,
  toolName: 'read',
  input: JSON.stringify({ path: 'a', [key]: 1 }),
  ...more,
})

describe('unknownKeyAuditMiddleware: which parts are calls it audits', () => {
  it('tool calls the SDK will run, and nothing else', async () => {
    const unreadable = { type: 'tool-call', toolCallId: 'u', toolName: 'read' }
    Object.defineProperty(unreadable, 'input', {
      get: () => {
        throw new Error('no input')
      },
    })
    const content = [
      part('k1'),
      part('k2', { providerExecuted: true }),
      part('k3', { providerExecuted: false }),
      part('k4', { type: 'tool-result' }),
      Object.assign([], part('k5')),
      part('k6', { toolName: 7 }),
      unreadable,
      null,
      { type: 'text', text: 'hi' },
      part('k7'),
    ]
    expect(await generate([readTool], content)).toStrictEqual([
      ['k1', 'read', ['k1']],
      ['k3', 'read', ['k3']],
      ['k7', 'read', ['k7']],
    ])
  })

  it('a call’s id when it is a string, no id otherwise', async () => {
    expect(
      await generate(
        [readTool],
        [part('k1', { toolCallId: undefined }), part('k2', { toolCallId: 7 }), part('k3', { toolCallId: 'c3' })],
      ),
    ).toStrictEqual([
      ['', 'read', ['k1']],
      ['', 'read', ['k2']],
      ['c3', 'read', ['k3']],
    ])
  })

  it('a request without tools audits nothing; an answer whose content cannot be read is handed on', async () => {
    expect(await generate([], [part('k1')])).toStrictEqual([])
    expect(await generate([readTool], undefined)).toStrictEqual([])
    expect(await generate([readTool], 'not a list')).toStrictEqual([])
  })
})
