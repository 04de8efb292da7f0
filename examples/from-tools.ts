// In-process tools as a provider, and the Promise bridge both ways: a host that does
// not use fp-ts drives a toolstack stack with `await`, and a Promise-based provider
// joins a stack through `fromAsync`.
// Run with: npx tsx examples/from-tools.ts
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { AsyncProvider, ToolCall, ToolDeclaration } from 'toolstack'
import { fromAsync, fromTools, isProviderFailure, toAsync, withUnknownKeyAudit } from 'toolstack'

const declare = (name: string, description: string, properties: Record<string, string>): ToolDeclaration => ({
  type: 'function',
  function: {
    name,
    description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(Object.entries(properties).map(([k, type]) => [k, { type }])),
      required: Object.keys(properties),
    },
  },
})

// `run` gets the parsed arguments; a Left is an is_error result with that text
const tools = fromTools([
  {
    declaration: declare('add', 'Add two numbers', { a: 'number', b: 'number' }),
    run: ({ a, b }) =>
      typeof a === 'number' && typeof b === 'number'
        ? TE.right(String(a + b))
        : TE.left('add needs two numbers, a and b'),
  },
  {
    declaration: declare('shout', 'Upper-case a text', { text: 'string' }),
    run: ({ text }) => TE.right(String(text).toUpperCase()),
  },
])

const ask = (id: string, name: string, args: string): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

const main = async (): Promise<void> => {
  // 1. a Promise-based host drives an fp-ts stack
  console.log('— a Promise-based host over fromTools —')
  const host: AsyncProvider = toAsync(
    pipe(
      tools,
      withUnknownKeyAudit({
        onWarn: (w) => () => console.log(`  (audit) ${w.tool}: undeclared ${w.unknownKeys.join(', ')}`),
      }),
    ),
  )
  const listed = await host.toolsForLlm()
  console.log(`listed: ${listed.map((d) => d.function.name).join(', ')}`)
  const calls = [
    ask('c1', 'add', '{"a":2,"b":3}'),
    ask('c2', 'shout', '{"text":"hello","volume":11}'),
    ask('c3', 'subtract', '{"a":5,"b":1}'),
    ask('c4', 'add', '{"a":"two","b":3}'),
    ask('c5', 'shout', '[1,2]'),
  ]
  const results = await host.executeToolCalls(calls)
  results.forEach((r, i) => {
    const name = calls[i]?.function.name ?? '?'
    console.log(r.is_error === true ? `${name} → error: ${r.content}` : `${name} → ${r.content}`)
  })

  // 2. a Promise-based provider joins a stack, and a failure comes back as a rejection
  console.log('\n— a Promise-based provider through fromAsync —')
  let up = true
  const legacy: AsyncProvider = {
    toolsForLlm: async () =>
      up ? [declare('uptime', 'Seconds since start', {})] : Promise.reject('legacy host is down'),
    executeToolCalls: async (cs) =>
      up
        ? cs.map((c) => ({ role: 'tool', tool_call_id: c.id, content: '4242' }))
        : Promise.reject('legacy host is down'),
  }
  const bridged = toAsync(fromAsync(legacy))
  console.log(`listed: ${(await bridged.toolsForLlm()).map((d) => d.function.name).join(', ')}`)
  console.log(`uptime → ${(await bridged.executeToolCalls([ask('u1', 'uptime', '')]))[0]?.content ?? '?'}`)
  up = false
  // fromAsync made the rejection a Left; toAsync makes that Left a rejection again,
  // wrapped in a ProviderFailure that keeps it
  const fp = fromAsync(legacy)
  const left = await fp.executeToolCalls([ask('u2', 'uptime', '')])()
  console.log(`as fp-ts: ${left._tag} ${JSON.stringify(left._tag === 'Left' ? left.left : null)}`)
  try {
    await toAsync(fp).executeToolCalls([ask('u3', 'uptime', '')])
  } catch (e) {
    if (isProviderFailure(e)) console.log(`rejected with ${e.name} (left: ${JSON.stringify(e.left)})`)
    else console.log(`rejected with ${String(e)}`)
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
