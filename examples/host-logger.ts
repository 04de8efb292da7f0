// Wiring onWarn to a host's own logger. onWarn returns an IO: it describes the log
// write and toolstack runs it; a logger that throws changes nothing about the call.
import { pipe } from 'fp-ts/lib/function.js'
import type { IO } from 'fp-ts/lib/IO.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Provider, UnknownKeyWarning } from 'toolstack'
import { withUnknownKeyAudit } from 'toolstack'

// A host's structured logger, as logging-ts would shape it: (entry) => IO<void>.
interface LogEntry {
  readonly level: 'warn' | 'info'
  readonly event: string
  readonly [field: string]: unknown
}
const log =
  (entry: LogEntry): IO<void> =>
  () =>
    console.log(JSON.stringify({ time: '2026-12-02T09:00:00Z', ...entry }))

const toLogEntry = (w: UnknownKeyWarning): LogEntry => ({
  level: 'warn',
  event: 'tool_call.undeclared_keys',
  tool: w.tool,
  call_id: w.id,
  undeclared: w.unknownKeys,
  declared: w.declaredKeys,
})

const search: Provider<never> = {
  toolsForLlm: TE.right([
    {
      type: 'function',
      function: {
        name: 'web_search',
        parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } },
      },
    },
  ]),
  executeToolCalls: (calls) => TE.right(calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: '3 results' }))),
}

const tools = pipe(search, withUnknownKeyAudit({ onWarn: (w) => log(toLogEntry(w)) }))

const main = async (): Promise<void> => {
  await tools.toolsForLlm()
  await tools.executeToolCalls([
    { id: 'a', function: { name: 'web_search', arguments: '{"query":"mcp","max_results":5}' } },
    { id: 'b', function: { name: 'web_search', arguments: '{"query":"fp-ts","max_results":5,"lang":"en"}' } },
  ])()
  log({ level: 'info', event: 'turn.done', calls: 2 })()
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
