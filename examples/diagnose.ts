// "Why did this not warn?" auditedTools names exactly the tools whose calls are
// audited now: listed by the most recent successful listing, with at least one
// declared property. Everything else passes silently, by design.
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Provider, ToolCall, ToolDeclaration } from 'toolstack'
import { withUnknownKeyAudit } from 'toolstack'

const declarations: ReadonlyArray<ToolDeclaration> = [
  {
    type: 'function',
    function: { name: 'fs_read', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
  { type: 'function', function: { name: 'clock_now', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'legacy_tool', parameters: { anyOf: [{ type: 'object' }] } } },
]

const provider: Provider<never> = {
  toolsForLlm: TE.right(declarations),
  executeToolCalls: (calls) => TE.right(calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'done' }))),
}

const warned: Array<string> = []
const tools = pipe(
  provider,
  withUnknownKeyAudit({ onWarn: (w) => () => void warned.push(`${w.tool}: ${w.unknownKeys.join(', ')}`) }),
)

const calls: ReadonlyArray<ToolCall> = [
  { id: '1', function: { name: 'fs_read', arguments: '{"path":"a","depth":2}' } },
  { id: '2', function: { name: 'clock_now', arguments: '{"tz":"UTC"}' } },
  { id: '3', function: { name: 'legacy_tool', arguments: '{"anything":1}' } },
  { id: '4', function: { name: 'unlisted_tool', arguments: '{"x":1}' } },
  { id: '5', function: { name: 'fs_read', arguments: '["not","an","object"]' } },
]

const main = async (): Promise<void> => {
  await tools.executeToolCalls(calls)()
  console.log(
    `before the first listing: audited tools = [${tools.auditedTools().join(', ')}], warnings = ${warned.length}`,
  )
  await tools.toolsForLlm()
  console.log(`after listing:            audited tools = [${tools.auditedTools().join(', ')}]`)
  await tools.executeToolCalls(calls)()
  console.log('warnings:')
  for (const w of warned) console.log(`  ${w}`)
  const audited = new Set(tools.auditedTools())
  console.log('why the others were silent:')
  for (const c of calls) {
    const name = c.function.name
    if (audited.has(name) && c.id !== '5') continue
    const why = audited.has(name)
      ? 'its arguments are not a JSON object'
      : declarations.some((d) => d.function.name === name)
        ? 'its declaration has no properties to compare with'
        : 'it was not in the last listing'
    console.log(`  call ${c.id} (${name}): ${why}`)
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
