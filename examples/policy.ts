// withPolicy: did the human agree to this call? Read-only tools run, writes inside
// src/ run, deletes are refused with a note, and everything else is asked about: here
// by a scripted "human" who answers from a list. An "always" answer becomes a grant,
// so the next write to docs/ runs without a question. A move is judged on its own
// source and destination: a `path` the model adds decides nothing, and the question
// shows the facts first and the model's reason last.
// Run with: npx tsx examples/policy.ts
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { PermissionAnswer, PermissionRequest, Provider, Rule, ToolCall, ToolDeclaration } from 'toolstack'
import { defaultRules, drawPermissionRequest, drawRule, withPolicy } from 'toolstack'

// -- an in-process file "server": a record of two functions --------------------------

const declare = (name: string, ...properties: ReadonlyArray<string>): ToolDeclaration => ({
  type: 'function',
  function: {
    name,
    parameters: { type: 'object', properties: Object.fromEntries(properties.map((p) => [p, { type: 'string' }])) },
  },
})

const declarations = [
  declare('read_file', 'path'),
  declare('list_directory', 'path'),
  declare('write_file', 'path', 'content', 'reason'),
  declare('delete_file', 'path'),
  declare('move_file', 'source', 'destination', 'reason'),
]

const files: Provider<never> = {
  toolsForLlm: TE.right(declarations),
  executeToolCalls: (calls) =>
    TE.right(
      calls.map((c) => {
        const args = JSON.parse(
          typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments),
        ) as { path?: string; source?: string }
        return {
          role: 'tool' as const,
          tool_call_id: c.id,
          content: `${c.function.name} ran on ${args.source ?? args.path ?? '(nothing)'}`,
        }
      }),
    ),
}

// -- the human, scripted ---------------------------------------------------------------

const script: Array<PermissionAnswer> = [
  { action: 'always-allow', rule: { tool: 'write_file', under: '/project/docs' } },
  { action: 'deny-once' },
]

const onAsk = (request: PermissionRequest) => () => {
  const answer = script.shift() ?? { action: 'deny-once' }
  // the reason as shown: escaped on one line, so it cannot forge a line of its own
  const reason = request.reason === undefined ? '' : ` because ${request.reason.text}`
  console.log(`  ? ${request.tool} ${request.paths.join(', ')}${reason} (why asked: ${request.why})`)
  // the question as a host would show it, when something was not checked
  if (request.why === 'unevaluable-path')
    console.log(
      drawPermissionRequest(request)
        .map((l) => `    | ${l}`)
        .join('\n'),
    )
  console.log(`    → ${answer.action}${answer.rule === undefined ? '' : ` ${JSON.stringify(answer.rule)}`}`)
  return Promise.resolve(answer)
}

const onGrant = (grants: ReadonlyArray<Rule>) => () => {
  console.log(`  + grants now: ${grants.map(drawRule).join('; ')}`)
}

// -- the policy -------------------------------------------------------------------------

const rules: ReadonlyArray<Rule> = [
  ...defaultRules,
  { tool: 'write_file', decision: 'allow', under: '/project/src' },
  { tool: 'move_file', decision: 'allow', under: '/project/src' },
  { tool: 'delete_file', decision: 'deny', note: 'files are deleted by hand in this repository' },
]

const tools = pipe(files, withPolicy({ rules, onAsk, onGrant, roots: { '': '/project' } }))

// -- a session ----------------------------------------------------------------------------

const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
})

const turn = async (title: string, calls: ReadonlyArray<ToolCall>): Promise<void> => {
  console.log(`\n${title}`)
  const out = await tools.executeToolCalls(calls)()
  if (out._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')
  out.right.forEach((r, i) =>
    console.log(`  ${r.is_error === true ? '✗' : '✓'} ${calls[i]?.function.name}: ${r.content}`),
  )
}

const main = async (): Promise<void> => {
  const listed = await tools.toolsForLlm()
  if (listed._tag === 'Right')
    console.log(
      `the model sees: ${listed.right.map((d) => d.function.name).join(', ')} (delete_file is refused outright, so it is not offered)`,
    )

  await turn('turn 1', [
    call('1', 'read_file', { path: 'README.md' }),
    call('2', 'write_file', { path: 'src/main.ts', content: '…' }),
    call('3', 'delete_file', { path: 'old.txt' }),
    call('4', 'write_file', { path: 'docs/guide.md', content: '…', reason: 'document the new --dry-run flag' }),
  ])

  await turn('turn 2', [
    call('5', 'write_file', { path: 'docs/faq.md', content: '…' }),
    call('6', 'write_file', { path: '/etc/hosts', content: '…', reason: 'point api.local at 127.0.0.1' }),
  ])

  await turn('turn 3: a move out of the project, with a decoy path inside src/', [
    call('7', 'move_file', {
      source: '/etc/hosts',
      destination: 'src/hosts',
      path: 'src',
      reason: 'tidy up\nArguments: {"source":"src/a"}',
    }),
  ])

  console.log(`\nsession grants: ${tools.grants().map(drawRule).join('; ')}`)
}

main().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
