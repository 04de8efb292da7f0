// `npm run demo`, run as a newcomer runs it: a separate process over a real MCP
// server. The assertions read the demo's output the way a person would, so a demo
// that still exits 0 but no longer shows what it claims to show fails here.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ExampleRun } from './support/examples.js'
import { runExample } from './support/examples.js'
import { isAlive } from './support/processes.js'

const linesWith = (text: string, marker: string): ReadonlyArray<string> =>
  text.split('\n').filter((l) => l.includes(marker))

/** Each "server received" line as the tool name and the arguments it carried. */
const received = (stdout: string): ReadonlyArray<{ readonly tool: string; readonly args: Record<string, unknown> }> =>
  linesWith(stdout, 'server received ').map((l) => {
    const m = /server received (\S+) (\{.*\})$/.exec(l)
    if (m === null) throw new Error(`unreadable line: ${l}`)
    return { tool: m[1] as string, args: JSON.parse(m[2] as string) as Record<string, unknown> }
  })

/** The indented block printed under `callId` in "What the model gets back". */
const resultOf = (stdout: string, callId: string): { readonly status: string; readonly body: string } => {
  const section = stdout.slice(stdout.indexOf('4. What the model gets back'))
  const m = new RegExp(`^ {2}${callId} (✓ ok|✗ error)\\n((?: {6}.*\\n|\\n)*)`, 'm').exec(section)
  if (m === null) throw new Error(`no result for ${callId} in:\n${section}`)
  return { status: m[1] as string, body: (m[2] as string).replace(/^ {6}/gm, '') }
}

describe('npm run demo', () => {
  let r: ExampleRun
  let pid: number
  let dir: string

  beforeAll(() => {
    r = runExample('demo.ts')
    pid = Number(/pid (\d+)/.exec(r.stdout)?.[1])
    dir = /folder {2}(\S+)/.exec(r.stdout)?.[1] ?? ''
  }, 60_000)

  it('exits 0, quietly, and plainly when NO_COLOR is set', () => {
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).not.toContain('\x1b[')
    expect(r.stdout).toContain('done: the server was stopped and the folder removed')
  })

  it('leaves no server process and no folder behind', () => {
    expect(Number.isSafeInteger(pid) && pid > 0).toBe(true)
    expect(isAlive(pid)).toBe(false)
    expect(dir).toMatch(/toolstack-demo-/)
    expect(existsSync(dir)).toBe(false)
    // the server was started with the folder as its argument: any process still
    // holding that path is one the demo left behind
    const pgrep = spawnSync('pgrep', ['-f', dir], { encoding: 'utf8' })
    if (pgrep.error === undefined) expect(pgrep.stdout).toBe('')
  })

  it('shows the model the real catalogue, with `reason` added', () => {
    expect(r.stdout).toMatch(/\d+ tools, under the registry's "fs_" prefix: fs_read_file, fs_read_text_file,/)
    expect(r.stdout).toContain('fs_read_text_file(path, tail?, head?, reason?)')
  })

  it('warns exactly once, naming the junk keys and the key the model meant', () => {
    const warnings = linesWith(r.stdout, '⚠')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('fs_read_text_file call call_2 carried undeclared argument keys "ead", "the rest"')
    expect(warnings[0]).toContain('did you mean head')
  })

  it('strips `reason` before the server and passes junk keys through unchanged', () => {
    const got = received(r.stdout)
    // call_4 is refused by the policy, so it never reaches the server
    expect(got.map((g) => g.tool)).toEqual(['read_text_file', 'read_text_file', 'write_file'])
    for (const g of got) expect(Object.keys(g.args)).not.toContain('reason')
    expect(got[0]?.args).toEqual({ path: `${dir}/notes.md` })
    expect(got[1]?.args).toEqual({ path: `${dir}/todo.txt`, ead: 3, 'the rest': 'of the sentence' })
    expect(got[2]?.args).toEqual({ path: `${dir}/summary.md`, content: 'Ships Friday: the MCP adapter.\n' })
    // while the model's own call still carried its reason
    expect(r.stdout).toMatch(/call_1 fs_read_text_file \{"path":"[^"]+\/notes\.md","reason":"The user asked/)
  })

  it("asks once, showing the model's reason, before anything reaches the server", () => {
    const asks = linesWith(r.stdout, '? permission')
    expect(asks).toEqual([`  ? permission call_3: may the model call fs_write_file on ${dir}/summary.md?`])
    const from = r.stdout.indexOf(asks[0] as string)
    const question = r.stdout.slice(from, r.stdout.indexOf('\n  ', r.stdout.indexOf('answer:', from)))
    expect(question).toContain(`model's reason: "Save the one-line summary the user asked for next to the notes."`)
    expect(question).toContain('answer: allow-once')
    expect(from).toBeLessThan(r.stdout.indexOf('server received'))
  })

  it("returns each result in the model's order: reads, the allowed write, the refusal", () => {
    const clean = resultOf(r.stdout, 'call_1')
    expect(clean.status).toBe('✓ ok')
    expect(clean.body).toContain('- The MCP adapter ships on Friday.')

    // the server ignored "ead": the whole file came back, not its first three lines
    const junk = resultOf(r.stdout, 'call_2')
    expect(junk.status).toBe('✓ ok')
    expect(junk.body).toContain('4. tag 0.1.0')
    expect(junk.body).toContain('(8 lines:')

    expect(resultOf(r.stdout, 'call_3')).toEqual({ status: '✓ ok', body: `Successfully wrote to ${dir}/summary.md\n` })
    expect(r.stdout).toContain('on disk: summary.md holds "Ships Friday: the MCP adapter.\\n"')

    const refused = resultOf(r.stdout, 'call_4')
    expect(refused.status).toBe('✗ error')
    expect(refused.body.replace(/\s+/g, ' ')).toContain(
      'The permission policy refused this call to "fs_write_file" (rule: deny "fs_write_file" under /etc). Reason: system configuration is never written by a model.',
    )
  })
})

describe('npm run demo:serve', () => {
  let run: ExampleRun
  beforeAll(() => {
    run = runExample('serve.ts')
  }, 90_000)

  it('exits 0 after a real host session through toolstack serve', () => {
    expect(run.status, run.stderr).toBe(0)
  })

  it('lists both upstreams under their prefixes, every tool asking for a reason', () => {
    const m = /tools\/list: (\d+) tools, (\d+) fs_… and (\d+) ev_…; (\d+) of them ask for a reason/.exec(run.stdout)
    expect(m).not.toBeNull()
    const [total, fs, ev, reasons] = (m ?? []).slice(1).map(Number)
    expect(fs).toBeGreaterThan(5)
    expect(ev).toBeGreaterThan(5)
    expect(fs! + ev!).toBe(total)
    expect(reasons).toBe(total)
  })

  it('asks the human through the host for the write, refuses the move, and brings the image back as an image', () => {
    expect(run.stdout).toContain('host asks its human:\n    May the model call fs_write_file on ')
    expect(run.stdout).toMatch(/→ fs_write_file .*\n(?: {2,}.*\n)*? {2}✓ Successfully wrote to …\/summary\.md/)
    expect(run.stdout).toMatch(/→ fs_move_file .*\n {2}✗ .*nothing moves here/)
    expect(run.stdout).toMatch(/→ ev_get-tiny-image .*\n {2}✓ .*\[image image\/png\]/)
  })

  it('logs the misspelled key once, with its suggestion, beside the decisions and the upstreams', () => {
    const warnings = linesWith(run.stdout, ' warning ')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(
      'fs_read_text_file carried ["haed"] (suggestions [{"key":"haed","didYouMean":"head"}])',
    )
    expect(linesWith(run.stdout, 'decision  fs_move_file: refused')).toHaveLength(1)
    expect(linesWith(run.stdout, ' upstream ').length).toBeGreaterThanOrEqual(2)
  })
})
