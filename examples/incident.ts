// The incident in miniature. A model's generation was cut off mid-argument and a
// constrained decoder closed it into valid JSON: `offset` became `ffset`, and the
// tail of a sentence became a key of its own. The server ignores both keys and
// reads from the start of the file: four fifths of the job, and nobody is told.
// withUnknownKeyAudit says so, once, and changes nothing.
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Provider, ToolCall } from 'toolstack'
import { formatWarning, withUnknownKeyAudit } from 'toolstack'

const file = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`)

// A provider is a record of two functions. This one reads a pretend file and, like
// most servers, quietly ignores argument keys it does not know.
const files: Provider<never> = {
  toolsForLlm: TE.right([
    {
      type: 'function',
      function: {
        name: 'fs_read',
        description: 'Read lines of a text file',
        parameters: {
          type: 'object',
          properties: { path: { type: 'string' }, offset: { type: 'integer' }, length: { type: 'integer' } },
          required: ['path'],
        },
      },
    },
  ]),
  executeToolCalls: (calls) =>
    TE.right(
      calls.map((call) => {
        const args = JSON.parse(String(call.function.arguments)) as { offset?: number; length?: number }
        const from = args.offset ?? 0
        return { role: 'tool', tool_call_id: call.id, content: file.slice(from, from + (args.length ?? 3)).join(' | ') }
      }),
    ),
}

const tools = pipe(files, withUnknownKeyAudit({ onWarn: (w) => () => console.log(`  ⚠ ${formatWarning(w)}`) }))

const turn: ReadonlyArray<ToolCall> = [
  {
    id: 'call_1',
    type: 'function',
    function: { name: 'fs_read', arguments: '{"path":"notes.txt","offset":12,"length":3}' },
  },
  {
    id: 'call_2',
    type: 'function',
    function: {
      name: 'fs_read',
      arguments: '{"path":"notes.txt","ffset":12,"the rest":"of the sentence the model was writing"}',
    },
  },
  { id: 'call_3', type: 'function', function: { name: 'fs_read', arguments: '{"path":"notes.txt","ffset":15}' } },
]

const main = async (): Promise<void> => {
  await tools.toolsForLlm()
  console.log('The model calls fs_read three times; the second and third calls were mangled.')
  const out = await tools.executeToolCalls(turn)()
  if (out._tag === 'Left') throw new Error('unreachable: this provider never fails')
  console.log('What came back (unchanged: the alarm is not a valve):')
  out.right.forEach((r, i) =>
    console.log(`  ${r.tool_call_id}: ${String(turn[i]?.function.arguments)}\n    → ${r.content}`),
  )
  console.log('The third call repeated "ffset" on the same tool, so it was not said again.')
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
