// Two in-process providers behind one namespace: `fs_*` and `web_*`. The model sees
// prefixed names; each provider sees only its own calls, under its own names.
// Run with: npx tsx examples/registry.ts
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from 'toolstack'
import { drawRegistryError, parseArgs, registry } from 'toolstack'

const declare = (name: string, description: string, properties: ReadonlyArray<string>): ToolDeclaration => ({
  type: 'function',
  function: {
    name,
    description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(properties.map((p) => [p, { type: 'string' }])),
      required: properties,
    },
  },
})

const reply = (call: ToolCall, content: string, isError = false): ToolResult =>
  isError
    ? { role: 'tool', tool_call_id: call.id, content, is_error: true }
    : { role: 'tool', tool_call_id: call.id, content }

const argOf = (call: ToolCall, key: string): string => {
  const args = parseArgs(call.function.arguments)
  const v = args._tag === 'Right' ? args.right[key] : undefined
  return typeof v === 'string' ? v : ''
}

// a provider is a record of two functions: nothing else
const files = new Map([
  ['/notes.txt', 'buy milk'],
  ['/todo.txt', 'ship the registry'],
])
const fs: Provider<string> = {
  toolsForLlm: TE.right([declare('read', 'Read a file', ['path']), declare('list', 'List files', [])]),
  executeToolCalls: (calls) =>
    TE.right(
      calls.map((c) => {
        console.log(
          `  fs  received ${c.function.name}(${typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments)})`,
        )
        if (c.function.name === 'list') return reply(c, [...files.keys()].join('\n'))
        const text = files.get(argOf(c, 'path'))
        return text === undefined ? reply(c, `no such file: ${argOf(c, 'path')}`, true) : reply(c, text)
      }),
    ),
}

const web: Provider<string> = {
  toolsForLlm: TE.right([declare('get', 'Fetch a URL', ['url'])]),
  executeToolCalls: (calls) =>
    TE.right(
      calls.map((c) => {
        console.log(`  web received ${c.function.name}(${String(c.function.arguments)})`)
        return reply(c, `<html>a page at ${argOf(c, 'url')}</html>`)
      }),
    ),
}

const tools = registry([
  { prefix: 'fs', provider: fs },
  { prefix: 'web', provider: web },
])

const main = async (): Promise<void> => {
  const listed = await tools.toolsForLlm()
  if (listed._tag === 'Left') {
    console.error(drawRegistryError(listed.left))
    process.exitCode = 1
    return
  }
  console.log('The model is shown:')
  for (const d of listed.right) console.log(`  ${d.function.name}: ${d.function.description ?? ''}`)

  const batch: ReadonlyArray<ToolCall> = [
    { id: 'call_1', type: 'function', function: { name: 'fs_read', arguments: '{"path":"/todo.txt"}' } },
    { id: 'call_2', type: 'function', function: { name: 'web_get', arguments: '{"url":"https://example.com"}' } },
    { id: 'call_3', type: 'function', function: { name: 'read', arguments: '{"path":"/notes.txt"}' } },
    { id: 'call_4', type: 'function', function: { name: 'fs_list', arguments: '' } },
  ]
  console.log('\nThe model calls fs_read, web_get, read (no prefix: misrouted) and fs_list:')
  const out = await tools.executeToolCalls(batch)()
  if (out._tag === 'Left') return // a registry never fails a batch; kept for the types
  console.log("\nResults, in the model's order:")
  for (const r of out.right)
    console.log(`  ${r.tool_call_id} ${r.is_error === true ? 'ERROR' : 'ok   '} ${r.content.replace(/\n/g, ', ')}`)
}

void main()
