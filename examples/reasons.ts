// Every call carries why, for the human watching: the model is shown an optional
// `reason` argument, the tool never receives it, and the host's log keeps it.
// Run with: npx tsx examples/reasons.ts
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { ToolCall } from 'toolstack'
import { REASON_PARAM, fromTools, parseArgs, withReasons } from 'toolstack'

const files = new Map([['/notes.txt', 'buy milk']])

const tools = pipe(
  fromTools([
    {
      declaration: {
        type: 'function',
        function: {
          name: 'read_file',
          description: 'Read a text file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      },
      run: (args) => {
        // what the tool itself receives
        console.log(`  tool received: ${JSON.stringify(args)}`)
        const text = typeof args['path'] === 'string' ? files.get(args['path']) : undefined
        return text === undefined ? TE.left(`no such file: ${String(args['path'])}`) : TE.right(text)
      },
    },
  ]),
  withReasons(),
)

const main = async (): Promise<void> => {
  const listed = await tools.toolsForLlm()
  if (listed._tag === 'Left') throw new Error(String(listed.left))
  console.log('the model is shown:')
  for (const d of listed.right) console.log(`  ${d.function.name} ${JSON.stringify(d.function.parameters)}`)
  console.log(`augmented tools: ${tools.augmentedTools().join(', ')}`)

  const calls: ReadonlyArray<ToolCall> = [
    {
      id: 'call_1',
      type: 'function',
      function: {
        name: 'read_file',
        arguments: '{"path":"/notes.txt","reason":"The user asked what is on their shopping list."}',
      },
    },
    { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path":"/todo.txt"}' } },
  ]

  // the host logs the model's own calls, reason included, for the human reviewing
  console.log('\nhost log:')
  for (const c of calls) {
    const args = parseArgs(c.function.arguments)
    const reason = args._tag === 'Right' ? args.right[REASON_PARAM] : undefined
    console.log(
      `  ${c.id} ${c.function.name} — reason: ${typeof reason === 'string' ? JSON.stringify(reason) : '(none given)'}`,
    )
  }

  console.log('\nrunning:')
  const out = await tools.executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error('a reasons layer never fails a batch')
  console.log('\nresults:')
  for (const r of out.right) console.log(`  ${r.tool_call_id}: ${r.is_error === true ? 'error: ' : ''}${r.content}`)
  const kept = calls[0]?.function.arguments
  console.log(
    `\nthe host's call still has its reason: ${typeof kept === 'string' && kept.includes('"reason"') ? 'yes' : 'no'}`,
  )
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
