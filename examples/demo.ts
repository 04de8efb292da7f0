// `npm run demo`: the whole stack over a real MCP server, one scripted model turn.
//
// The reference filesystem server (`@modelcontextprotocol/server-filesystem`) runs on
// a temporary folder, behind registry → withReasons → withUnknownKeyAudit →
// withPolicy. A scripted "model" makes four calls in one turn: a clean read, a read
// whose generation was cut off and closed into junk keys, a write the human is asked
// about, and a write the policy refuses. No network, no API key.
// Run with: npm run demo
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipe } from 'fp-ts/lib/function.js'
import type {
  PermissionAnswer,
  PermissionRequest,
  Rule,
  ToolCall,
  ToolDeclaration,
  ToolResult,
  UnknownKeyWarning,
} from 'toolstack'
import {
  drawRegistryError,
  drawRule,
  formatWarning,
  readOnlyRules,
  registry,
  withPolicy,
  withReasons,
  withUnknownKeyAudit,
} from 'toolstack'
import type { McpToolClient, StdioConnection } from 'toolstack/mcp'
import { connectStdio, fromMcpClient } from 'toolstack/mcp'

// ------------------------------------------------------------------------------------
// printing
// ------------------------------------------------------------------------------------

// colour only for a person at a terminal: piped output (tests, logs) stays plain
const colour = process.stdout.isTTY === true && (process.env['NO_COLOR'] ?? '') === ''
const paint =
  (code: string) =>
  (s: string): string =>
    colour ? `\x1b[${code}m${s}\x1b[0m` : s
const bold = paint('1')
const dim = paint('2')
const red = paint('31')
const green = paint('32')
const yellow = paint('33')
const cyan = paint('36')

// a reader who pipes the demo into `head` closes stdout early: stop printing, but
// still stop the server and remove the folder
let stdoutOpen = true
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e
  stdoutOpen = false
})
const say = (line = ''): void => {
  if (stdoutOpen) process.stdout.write(line + '\n')
}
const heading = (n: number, title: string): void => {
  say()
  say(bold(`${n}. ${title}`))
}

const MAX_LINES = 4
const WIDTH = 96

// long lines are wrapped at spaces, never cut: a refusal's last words say what to do
const wrap = (line: string, width: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  let rest = line
  while (rest.length > width) {
    const at = rest.lastIndexOf(' ', width)
    const cut = at > 0 ? at : width
    out.push(rest.slice(0, cut))
    rest = rest.slice(cut).trimStart()
  }
  return [...out, rest]
}

const block = (text: string, indent: string): string =>
  wrap(text, WIDTH - indent.length)
    .map((l) => indent + l)
    .join('\n')

// a result can be a whole file: show its first lines, and say how many were left out
const excerpt = (text: string, indent: string): string => {
  const lines = text.replace(/\n$/, '').split('\n')
  const shown = lines.slice(0, MAX_LINES).map((l) => (l === '' ? '' : block(l, indent)))
  const rest = lines.length - MAX_LINES
  return [...shown, ...(rest > 0 ? [indent + dim(`… ${rest} more line${rest === 1 ? '' : 's'}`)] : [])].join('\n')
}

const lineCount = (text: string): number => text.replace(/\n$/, '').split('\n').length

const argumentsText = (call: ToolCall): string =>
  typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments)

// ------------------------------------------------------------------------------------
// the folder the server may touch
// ------------------------------------------------------------------------------------

const NOTES = [
  '# Release notes',
  '',
  '- The MCP adapter ships on Friday.',
  '- The demo runs with `npm ci && npm run demo`.',
  '- No API key is needed: the model is scripted.',
].join('\n')

const TODO = Array.from(
  { length: 8 },
  (_, i) =>
    `${i + 1}. ${['write the demo', 'test the demo', 'review the README', 'tag 0.1.0', 'publish', 'announce', 'answer issues', 'rest'][i]}`,
).join('\n')

const fill = (dir: string): void => {
  writeFileSync(join(dir, 'notes.md'), NOTES + '\n')
  writeFileSync(join(dir, 'todo.txt'), TODO + '\n')
}

// ------------------------------------------------------------------------------------
// the scripted turn
// ------------------------------------------------------------------------------------

const call = (id: string, name: string, args: string): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

const turnFor = (dir: string): ReadonlyArray<ToolCall> => [
  call(
    'call_1',
    'fs_read_text_file',
    JSON.stringify({
      path: join(dir, 'notes.md'),
      reason: 'The user asked what ships this week; the release notes say.',
    }),
  ),
  // the generation was cut off inside `"head":3,` and a constrained decoder closed it
  // into valid JSON: `head` lost its first letter, and the rest of the sentence the
  // model was writing became a key of its own
  call(
    'call_2',
    'fs_read_text_file',
    JSON.stringify({ path: join(dir, 'todo.txt'), ead: 3, 'the rest': 'of the sentence' }),
  ),
  call(
    'call_3',
    'fs_write_file',
    JSON.stringify({
      path: join(dir, 'summary.md'),
      content: 'Ships Friday: the MCP adapter.\n',
      reason: 'Save the one-line summary the user asked for next to the notes.',
    }),
  ),
  call(
    'call_4',
    'fs_write_file',
    JSON.stringify({
      path: '/etc/hosts',
      content: '127.0.0.1 api.local\n',
      reason: 'Point api.local at this machine for the next test.',
    }),
  ),
]

// ------------------------------------------------------------------------------------
// the stack
// ------------------------------------------------------------------------------------

const stackFor = (connection: StdioConnection, dir: string) => {
  const c = connection.client
  // the provider needs only this slice of the client, so the demo can stand between
  // them and show exactly what reaches the server
  const client: McpToolClient = {
    listTools: (p, o) => c.listTools(p, o),
    request: c.request.bind(c),
    callTool: (p, s, o) => {
      say(`  ${cyan('server received')} ${p.name} ${JSON.stringify(p.arguments ?? {})}`)
      return c.callTool(p, s, o)
    },
  }

  const rules: ReadonlyArray<Rule> = [
    ...readOnlyRules('fs_'),
    { tool: 'fs_write_file', decision: 'ask', under: dir },
    {
      tool: 'fs_write_file',
      decision: 'deny',
      under: '/etc',
      note: 'system configuration is never written by a model',
    },
  ]

  const onWarn = (w: UnknownKeyWarning) => () => {
    say(`  ${yellow('⚠ warning')} ${formatWarning(w)}`)
  }

  // the human, scripted: allow a call that names only places inside the demo folder,
  // once; refuse anything else, a call that names no place at all included
  const onAsk = (request: PermissionRequest) => () => {
    const reason = request.arguments['reason']
    const answer: PermissionAnswer =
      request.paths.length > 0 && request.paths.every((p) => p === dir || p.startsWith(dir + '/'))
        ? { action: 'allow-once' }
        : { action: 'deny-once' }
    say(
      `  ${yellow('? permission')} ${request.call.id}: may the model call ${request.tool} on ${request.paths.join(', ')}?`,
    )
    say(
      `      asked by: ${request.why === 'rule' && request.rule !== undefined ? `the rule ${drawRule(request.rule)}` : `no rule deciding (${request.why})`}`,
    )
    say(`      model's reason: ${typeof reason === 'string' ? JSON.stringify(reason) : '(none given)'}`)
    say(`      answer: ${answer.action === 'allow-once' ? green(answer.action) : red(answer.action)}`)
    return Promise.resolve(answer)
  }

  return {
    rules,
    tools: pipe(
      // a hung server costs the demo seconds, not the SDK's default minute
      registry([{ prefix: 'fs', provider: fromMcpClient(client, { timeout: 10_000 }) }]),
      withReasons(),
      withUnknownKeyAudit({ onWarn }),
      withPolicy({ rules, onAsk }),
    ),
  }
}

const parametersOf = (d: ToolDeclaration): string => {
  const { properties, required: names } = d.function.parameters ?? {}
  const required = new Set(Array.isArray(names) ? names : [])
  return Object.keys(typeof properties === 'object' && properties !== null ? properties : {})
    .map((k) => (required.has(k) ? k : `${k}?`))
    .join(', ')
}

const play = async (connection: StdioConnection, dir: string): Promise<void> => {
  const { rules, tools } = stackFor(connection, dir)

  heading(1, 'What the model sees')
  const listed = await tools.toolsForLlm()
  if (listed._tag === 'Left') throw new Error(`the tools could not be listed: ${drawRegistryError(listed.left)}`)
  const names = listed.right.map((d) => d.function.name)
  say(block(`${names.length} tools, under the registry's "fs_" prefix: ${names.join(', ')}`, '  '))
  const read = listed.right.find((d) => d.function.name === 'fs_read_text_file')
  if (read === undefined) throw new Error('the server did not list read_text_file')
  say(`  fs_read_text_file(${parametersOf(read)})`)
  say(dim('      `reason` was added to every tool by withReasons; the server never declared it'))
  say('  policy rules:')
  say(`      allow the ${readOnlyRules('fs_').length} read-only tools (readOnlyRules('fs_'))`)
  for (const r of rules.slice(readOnlyRules('fs_').length))
    say(`      ${drawRule(r)}${r.note === undefined ? '' : ` — ${r.note}`}`)

  const turn = turnFor(dir)
  heading(2, 'The model calls, in one turn')
  for (const c of turn) say(`  ${c.id} ${c.function.name} ${argumentsText(c)}`)

  heading(3, 'Through the stack, as it happens')
  say(dim("  withPolicy decides first (and asks), withUnknownKeyAudit reads the model's own keys,"))
  say(dim('  withReasons strips `reason`, the registry strips "fs_"; only then is the server called'))
  const out = await tools.executeToolCalls(turn)()
  if (out._tag === 'Left') throw new Error('unreachable: the policy never fails a batch')

  heading(4, 'What the model gets back')
  out.right.forEach((r: ToolResult, i) => {
    const label = r.is_error === true ? red('✗ error') : green('✓ ok')
    say(`  ${turn[i]?.id ?? r.tool_call_id} ${label}`)
    say(excerpt(r.content, '      '))
    if (turn[i]?.id === 'call_2' && r.is_error !== true) {
      say(
        dim(
          block(
            `(${lineCount(r.content)} lines: the model meant "head": 3, and the server, which ignores keys it does not know, read the whole file)`,
            '      ',
          ),
        ),
      )
    }
  })

  const summary = join(dir, 'summary.md')
  say()
  say(
    dim(
      `  on disk: summary.md ${existsSync(summary) ? `holds ${JSON.stringify(readFileSync(summary, 'utf8'))}` : 'was not written'}`,
    ),
  )
}

// ------------------------------------------------------------------------------------
// main: nothing is left behind, whatever happens
// ------------------------------------------------------------------------------------

// What must be undone, newest last: run by `finally`, and by Ctrl-C, which would
// otherwise end the demo before any `finally` and leave the folder behind.
const undo: Array<() => unknown> = []
const cleanUp = async (): Promise<void> => {
  for (let step = undo.pop(); step !== undefined; step = undo.pop()) await step()
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(code))
  })
}

const main = async (): Promise<void> => {
  // realpath: the server compares real paths, and the policy compares what it is given
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolstack-demo-')))
  undo.push(() => rmSync(dir, { recursive: true, force: true }))
  try {
    fill(dir)
    const script = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
    const connection = await connectStdio({ command: process.execPath, args: [script, dir], stderr: 'ignore' }).catch(
      (e: unknown) => {
        throw new Error(
          `the filesystem server (${script}) could not be started: ${e instanceof Error ? e.message : String(e)}`,
        )
      },
    )
    // connectStdio's close ends the server process for sure
    undo.push(() => connection.close())
    say(bold('toolstack demo: one scripted model turn through the whole stack, over a real MCP server'))
    say(`  server  @modelcontextprotocol/server-filesystem, pid ${connection.pid ?? '?'}`)
    say(`  folder  ${dir}`)
    say('  stack   registry(fs) → withReasons → withUnknownKeyAudit → withPolicy')
    await play(connection, dir)
  } finally {
    await cleanUp()
  }
  say()
  say(dim('  done: the server was stopped and the folder removed'))
}

main().catch((e: unknown) => {
  process.stderr.write(`demo failed: ${e instanceof Error ? e.message : String(e)}\n`)
  process.exitCode = 1
})
