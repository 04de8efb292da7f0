// The framework adapters' examples, run as a user runs them: a separate process.
import { describe, expect, it } from 'vitest'
import { runExample } from '../support/examples.js'

describe('adapter examples', () => {
  it('ai-sdk: a generateText loop over server-filesystem warns once per pair (middleware and stack share one memory), and the model gets text, a stripped input’s answer and a refusal', () => {
    const r = runExample('ai-sdk.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const warnings = r.stdout.split('\n').filter((l) => l.includes('⚠'))
    expect(warnings).toEqual([
      '  ⚠ toolstack: read_text_file call call_1 carried undeclared argument key "haed" (declared: "head", "path", "reason", "tail") (did you mean head?) [via ai-sdk-middleware]',
      '  ⚠ toolstack: summarise call call_2 carried undeclared argument key "wrods" (declared: "text", "words") (did you mean words?) [via ai-sdk-middleware]',
    ])
    expect(r.stdout).toContain('model ← call_1 text: Ship the adapters on Friday. | Demo on 2 December.')
    // zod stripped "wrods": the summary fell back to its default length
    expect(r.stdout).toContain('model ← call_2 text: Ship the adapters…')
    expect(r.stdout).toMatch(
      /model ← call_3 error-text: Error: The permission policy refused this call to "write_file"/,
    )
    expect(r.stdout).toMatch(/assistant: The demo is on 2 December\.\n$/)
  })

  it('openai-agents: run() over a stack on server-filesystem, a zod tool and server-memory in mcpServers, each warning once, the model getting text and a refusal', () => {
    const r = runExample('openai-agents.ts')
    // the memory server the SDK starts writes its banner to the inherited stderr
    expect(r.stderr.replace(/^Knowledge Graph MCP Server running on stdio\n/m, '')).toBe('')
    expect(r.status).toBe(0)
    // the calls run at once: the order of the lines is not the point
    expect(
      r.stdout
        .split('\n')
        .filter((l) => l.includes('⚠'))
        .sort(),
    ).toEqual([
      '  ⚠ toolstack: read_text_file call call_1 carried undeclared argument key "haed" (declared: "head", "path", "reason", "tail") (did you mean head?) [via stack]',
      '  ⚠ toolstack: search_nodes call call_4 carried undeclared argument key "limt" (declared: "query") [via openai-agents-hook]',
      '  ⚠ toolstack: summarise call call_2 carried undeclared argument key "wrods" (declared: "text", "words") (did you mean words?) [via openai-agents-hook]',
    ])
    // the hook's warnings in the run's trace, each in its call's function span (the MCP server's tool's included)
    expect(
      r.stdout
        .split('\n')
        .filter((l) => l.includes('trace:'))
        .sort(),
    ).toEqual([
      '  trace: toolstack.unknown_key in function span search_nodes: {"tool":"search_nodes","call_id":"call_4","unknown_keys":["limt"],"unknown_key_count":1,"suggestions":[],"via":"openai-agents-hook"}',
      '  trace: toolstack.unknown_key in function span summarise: {"tool":"summarise","call_id":"call_2","unknown_keys":["wrods"],"unknown_key_count":1,"suggestions":[{"key":"wrods","did_you_mean":"words"}],"via":"openai-agents-hook"}',
    ])
    expect(r.stdout).toContain('model ← call_1: Ship the adapters on Friday. | Demo on 2 December.')
    expect(r.stdout).toContain('model ← call_2: Ship the adapters…')
    expect(r.stdout).toMatch(/model ← call_3: Error: The permission policy refused this call to "write_file"/)
    expect(r.stdout).toContain('assistant: The demo is on 2 December.')
    expect(r.stdout).toContain(
      'stats: [{"tool":"read_text_file","key":"haed","calls":1,"firstId":"call_1"},{"tool":"search_nodes","key":"limt","calls":1,"firstId":"call_4"},{"tool":"summarise","key":"wrods","calls":1,"firstId":"call_2"}]',
    )
  })

  it('langchain: createAgent over a stack on server-filesystem and a zod tool, with the audit middleware, each pair said once', () => {
    const r = runExample('langchain.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    // the agent runs the calls at once: the order of the two warnings is not the point
    expect(
      r.stdout
        .split('\n')
        .filter((l) => l.includes('⚠'))
        .sort(),
    ).toEqual([
      '  ⚠ toolstack: read_text_file call call_1 carried undeclared argument key "haed" (declared: "head", "path", "reason", "tail") (did you mean head?) [via stack]',
      '  ⚠ toolstack: summarise call call_2 carried undeclared argument key "wrods" (declared: "text", "words") (did you mean words?) [via langchain-middleware]',
    ])
    // the middleware's warning as a custom event, in the run of its own call
    expect(r.stdout.split('\n').filter((l) => l.includes('event:'))).toEqual([
      '  event: toolstack.unknown_key {"tool":"summarise","call_id":"call_2","unknown_keys":["wrods"],"unknown_key_count":1,"suggestions":[{"key":"wrods","did_you_mean":"words"}],"via":"langchain-middleware"}, in the run of the summarise call',
    ])
    expect(r.stdout).toContain('model → call_2 summarise {"text":"Ship the adapters on Friday","wrods":2}')
    expect(r.stdout).toContain('model ← call_1 success: Ship the adapters on Friday. | Demo on 2 December.')
    expect(r.stdout).toContain('model ← call_2 success: Ship the adapters…')
    expect(r.stdout).toMatch(/model ← call_3 error: The permission policy refused this call to "write_file"/)
    expect(r.stdout).toContain(
      'stats: [{"tool":"read_text_file","key":"haed","calls":1,"firstId":"call_1"},{"tool":"summarise","key":"wrods","calls":1,"firstId":"call_2"}]',
    )
  })

  it('openai-responses: the openai client (recorded fetch) in a Responses loop over a stack on server-filesystem', () => {
    const r = runExample('openai-responses.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.split('\n').filter((l) => l.includes('⚠'))).toEqual([
      '  ⚠ toolstack: read_text_file call call_1 carried undeclared argument key "haed" (declared: "head", "path", "reason", "tail") (did you mean head?)',
    ])
    expect(r.stdout).toContain('model ← call_1: Ship the adapters on Friday. | Demo on 2 December.')
    expect(r.stdout).toMatch(/model ← call_2: Error: The permission policy refused this call to "write_file"/)
    expect(r.stdout).toMatch(/assistant: The demo is on 2 December\.\n$/)
  })

  it('anthropic: the Anthropic client (a stand-in server of recorded responses) in a Messages loop over a stack on server-filesystem', () => {
    const r = runExample('anthropic.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.split('\n').filter((l) => l.includes('⚠'))).toEqual([
      '  ⚠ toolstack: read_text_file call toolu_1 carried undeclared argument key "haed" (declared: "head", "path", "reason", "tail") (did you mean head?) [via anthropic-middleware]',
    ])
    expect(r.stdout).toContain("model ran web_search on the API's side: left alone")
    expect(r.stdout).toContain('model ← toolu_1: Ship the adapters on Friday. | Demo on 2 December.')
    expect(r.stdout).toMatch(/model ← toolu_2 error: The permission policy refused this call to "write_file"/)
    expect(r.stdout).toContain('assistant: The demo is on 2 December.')
  })

  it('google: the @google/genai client (a stand-in server of recorded responses) in a generateContent loop over a stack on server-filesystem', () => {
    const r = runExample('google.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.split('\n').filter((l) => l.includes('⚠'))).toEqual([
      '  ⚠ toolstack: read_text_file call fc_1 carried undeclared argument key "haed" (declared: "head", "path", "reason", "tail") (did you mean head?) [via google-fetch]',
    ])
    expect(r.stdout).toContain('model ← fc_1 {"output":"Ship the adapters on Friday.')
    expect(r.stdout).toMatch(/model ← fc_2 \{"error":"The permission policy refused this call to \\"write_file\\"/)
    expect(r.stdout).toContain('assistant: The demo is on 2 December.')
  })

  it('claude-agent: a real query() session (its CLI against a stand-in server), the audit hearing both servers’ calls and the policy deciding', () => {
    const r = runExample('claude-agent.ts')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.split('\n').filter((l) => l.includes('⚠'))).toEqual([
      '  ⚠ toolstack: mcp__notes__search call toolu_1 carried undeclared argument key "opts.limmit" (declared: "opts", "query") (did you mean opts.limit?)',
      '  ⚠ toolstack: mcp__fs__read_text_file call toolu_3 carried undeclared argument key "haed" (declared: "head", "path", "tail") (did you mean head?)',
    ])
    // the host's own tool received what its zod schema kept: the misspelt key was dropped without a word
    expect(r.stdout).toContain('  notes.search received {"query":"demo","opts":{}}')
    expect(r.stdout).toMatch(/model ← toolu_2 error: .*The permission policy refused this call to "mcp__notes__write"/)
    expect(r.stdout).toContain(
      '  host asked: mcp__fs__read_text_file (the permission policy asks: ask "mcp__fs__*" under <dir>: reads of the workspace need a human): yes',
    )
    expect(r.stdout).toContain('model ← toolu_3: {"content":"Ship the adapters on Friday.')
    expect(r.stdout).toContain('assistant: The demo is on 2 December.')
  })
})
