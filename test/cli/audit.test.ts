import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { PassThrough, Readable } from 'node:stream'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AuditSummary } from '../../src/cli/audit.js'
import {
  CACHED_CHARS,
  CATALOGUES,
  compiledOnce,
  drawSummary,
  KEPT_CHARS,
  MAX_SHAPES,
  newAuditor,
  rememberedCall,
  runAudit,
  summaryRecord,
} from '../../src/cli/audit.js'
import { readRecords, readTextLines } from '../../src/cli/records.js'
import { paletteFor } from '../../src/cli/color.js'
import { HOST_CONFIG } from '../../src/cli/hostConfig.js'
import { readVersion } from '../../src/cli/version.js'
import type { UnknownKeyWarning } from '../../src/index.js'
import { formatWarning, pathOf } from '../../src/index.js'
import { escapeControls } from '../../src/kernel/describe.js'
import { rememberedKey } from '../../src/steps/audit/SeenSet.js'
import {
  anthropicRequest,
  assistant,
  chatRequest,
  fsRead,
  jsonl,
  noProps,
  responsesRequest,
  session,
  toolCall,
  webGet,
} from './fixtures.js'
import { cliArgs, killAll, mainTs, root, runCli, tempDir, track } from './support.js'

let tmp: ReturnType<typeof tempDir>
beforeEach(() => {
  tmp = tempDir()
})
afterEach(async () => {
  await killAll()
  tmp.remove()
})

const file = (name: string, content: string | Buffer): string => {
  const p = join(tmp.dir, name)
  writeFileSync(p, content)
  return p
}

const lines = (b: Buffer): Array<string> =>
  b
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
const jsonLines = (b: Buffer): Array<Record<string, unknown>> =>
  lines(b).map((l) => JSON.parse(l) as Record<string, unknown>)

// one session with a drifting key on fs_read: c1 and c3 carry "ffset", c3 also "reason"
const drifting = session(
  [fsRead, webGet],
  [
    [toolCall('c1', 'fs_read', { path: '/a', ffset: 1 })],
    [toolCall('c2', 'web_get', { url: 'u' }), toolCall('c3', 'fs_read', { path: '/b', ffset: 2, reason: 'why' })],
    [toolCall('c4', 'web_get', { url: 'u', headers: {} })],
  ],
)

// -------------------------------------------------------------------------------------
// the pure parts
// -------------------------------------------------------------------------------------

describe('newAuditor', () => {
  it('counts each call once across requests and warns once per (tool, key)', () => {
    const a = newAuditor()
    const said = drifting.flatMap((body, i) => {
      const r = a.request(body, { file: 'f', line: i + 1 })
      if ('_tag' in r) throw new Error(r.shape)
      return r
    })
    expect(said.map((w) => [w.tool, w.id, w.unknownKeys, w.line])).toEqual([
      ['fs_read', 'c1', ['ffset'], 2],
      ['web_get', 'c4', ['headers'], 4],
    ])
    expect(a.summary()).toEqual({
      requests: 4,
      formats: { chat: 4, responses: 0, anthropic: 0 },
      callsRead: 4,
      repeatedCalls: 1 + 3,
      callsAudited: 4,
      warnings: 2,
      undeclared: [
        { tool: 'fs_read', key: 'ffset', calls: 2, firstId: 'c1' },
        { tool: 'web_get', key: 'headers', calls: 1, firstId: 'c4' },
      ],
    })
  })

  it('does not audit an undeclared tool, a tool declaring nothing, or arguments that are not an object', () => {
    const a = newAuditor()
    const body = session(
      [fsRead, noProps],
      [
        [
          toolCall('x1', 'ghost', { a: 1 }),
          toolCall('x2', 'now', { a: 1 }),
          toolCall('x3', 'fs_read', '{oops'),
          toolCall('x4', 'fs_read', '[1]'),
        ],
      ],
    )[1]
    expect(a.request(body, { file: 'f', line: 1 })).toEqual([])
    expect(a.summary()).toMatchObject({ callsRead: 4, callsAudited: 0, warnings: 0 })
  })

  it('treats keys as data', () => {
    const a = newAuditor()
    const body = JSON.parse(
      JSON.stringify(session([fsRead], [[toolCall('p', 'fs_read', '{"path":"/","__proto__":1,"constructor":2}')]])[1]),
    ) as unknown
    const r = a.request(body, { file: 'f', line: 1 })
    expect('_tag' in r ? r : r.map((w) => w.unknownKeys)).toEqual([['__proto__', 'constructor']])
  })

  // each API's request, and the next one in the same conversation (which repeats it)
  const warningsOf = (...bodies: ReadonlyArray<unknown>): unknown => {
    const a = newAuditor()
    const said = bodies.flatMap((b, i): Array<unknown> => {
      const r = a.request(b, { file: 'f', line: i + 1 })
      return '_tag' in r ? [r] : r.map((w) => [w.tool, w.id, w.unknownKeys, w.declaredKeys])
    })
    return { said, summary: a.summary() }
  }

  it('reads OpenAI chat-completion requests', () => {
    expect(
      warningsOf(chatRequest, {
        ...chatRequest,
        messages: [...chatRequest.messages, { role: 'user', content: 'Thanks' }],
      }),
    ).toMatchObject({
      said: [['get_weather', 'call_abc123', ['detail'], ['location', 'unit']]],
      summary: {
        requests: 2,
        formats: { chat: 2, responses: 0, anthropic: 0 },
        callsRead: 1,
        repeatedCalls: 1,
        callsAudited: 1,
      },
    })
  })

  it('reads OpenAI Responses requests: function_call items, against top-level function tools', () => {
    expect(
      warningsOf(responsesRequest, {
        ...responsesRequest,
        input: [...responsesRequest.input, { role: 'user', content: 'Thanks' }],
      }),
    ).toMatchObject({
      said: [['get_weather', 'call_12345xyz', ['units'], ['location', 'unit']]],
      summary: {
        requests: 2,
        formats: { chat: 0, responses: 2, anthropic: 0 },
        callsRead: 1,
        repeatedCalls: 1,
        callsAudited: 1,
      },
    })
    // a plain text input carries no call
    expect(warningsOf({ model: 'gpt-4.1', input: 'Hello' })).toMatchObject({
      said: [],
      summary: { requests: 1, formats: { responses: 1 }, callsRead: 0 },
    })
  })

  it('reads Anthropic Messages requests: tool_use blocks, against input_schema', () => {
    expect(
      warningsOf(anthropicRequest, {
        ...anthropicRequest,
        messages: [...anthropicRequest.messages, { role: 'assistant', content: 'It is 15 degrees.' }],
      }),
    ).toMatchObject({
      said: [['get_weather', 'toolu_01A09q90qw90lq917835lq9', ['city'], ['location', 'unit']]],
      summary: {
        requests: 2,
        formats: { chat: 0, responses: 0, anthropic: 2 },
        callsRead: 1,
        repeatedCalls: 1,
        callsAudited: 1,
      },
    })
  })

  it('says what a record that is no request body looks like', () => {
    const a = newAuditor()
    const shape = (body: unknown): unknown => {
      const r = a.request(body, { file: 'f', line: 1 })
      return '_tag' in r ? r.shape : r
    }
    expect(shape(42)).toBe('a number')
    expect(shape({ tools: [] })).toBe('an object with key "tools"')
    expect(shape({ messages: {} })).toBe('an object with key "messages"')
    expect(
      shape({
        id: 'x',
        object: 'chat.completion',
        choices: [],
        usage: {},
        model: 'm',
        created: 1,
        system_fingerprint: 'f',
      }),
    ).toBe('an object with keys "choices", "created", "id", "model", "object", "system_fingerprint", …')
    expect(a.summary().requests).toBe(0)
  })

  it('describes a record by a few keys, each cut, so a 300 KB key makes a short description', () => {
    const shape = (body: unknown): string => {
      const r = newAuditor().request(body, { file: 'f', line: 1 })
      return '_tag' in r ? r.shape : ''
    }
    expect(shape({ [`${'A'.repeat(300_000)}\u001b]0;pwned\u0007`]: 1 })).toBe(`an object with key "${'A'.repeat(40)}…"`)
    // keys of control characters, which JSON writes six characters each: the whole is cut too
    const wide = shape(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`${i}${'\u0001'.repeat(1000)}`, 1])))
    expect(wide.startsWith('an object with keys "0\\u0001')).toBe(true)
    expect(wide.length).toBeLessThanOrEqual(301)
  })

  it('remembers a call by its id, tool name and arguments, each at most KEPT_CHARS characters however long', () => {
    const id = 'i'.repeat(10_000_000)
    for (const part of rememberedCall(id, `${'T'.repeat(500_000)}\u009b2J`, { a: 'x'.repeat(1000) }))
      expect(part.length).toBeLessThanOrEqual(KEPT_CHARS)
    expect(rememberedCall('c1', 'fs_read', '{"a":1}')).toEqual(['c1', 'fs_read', '{"a":1}'])
    expect(rememberedCall('c1', 42, '')).toEqual(['c1', '', ''])
    // long ids that differ only at their end are still told apart, and equal ones are the same call
    expect(rememberedCall(`${id}j`, 't', '')[0]).not.toBe(rememberedCall(`${id}k`, 't', '')[0])
    expect(rememberedCall(id, 't', '')).toEqual(rememberedCall('i'.repeat(10_000_000), 't', ''))
  })

  // what a call is, read as the command documents it: the same id, tool name and
  // arguments text (an argument that is not a string reads as its JSON)
  const callKey = (call: unknown): string => {
    const c = typeof call === 'object' && call !== null ? (call as Record<string, unknown>) : {}
    const fn =
      typeof c['function'] === 'object' && c['function'] !== null && !Array.isArray(c['function'])
        ? (c['function'] as Record<string, unknown>)
        : {}
    const id = c['id'] === undefined || c['id'] === null ? '' : String(c['id'])
    const tool = typeof fn['name'] === 'string' ? fn['name'] : ''
    const args = fn['arguments']
    return JSON.stringify([id, tool, typeof args === 'string' ? args : (JSON.stringify(args) ?? '')])
  }
  const callsOf = (body: unknown): Array<unknown> =>
    ((body as { messages: Array<unknown> }).messages ?? []).flatMap((m) => {
      const calls = typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['tool_calls'] : undefined
      return Array.isArray(calls) ? calls : []
    })

  it('counts each distinct call once, however requests repeat, edit and mix earlier ones', () => {
    const long = 'x'.repeat(80)
    const call = fc
      .record({
        id: fc.oneof(
          fc.constantFrom('c1', 'c2', 'c3', 'é1', '😀', ''),
          fc.constant(undefined),
          fc.constant(null),
          fc.constant(7),
        ),
        name: fc.oneof(fc.constantFrom('fs_read', 'web_get', 'ghost', 'ünï'), fc.constant(undefined), fc.constant(3)),
        args: fc.oneof(
          fc.constantFrom(
            '{"path":"/a"}',
            '{"path":"/a","ffset":1}',
            '{"url":"u"}',
            '',
            '[1]',
            '{oops',
            '{"p":"é"}',
            `{"p":"${long}"}`,
            `{"p":"${long}!"}`,
          ),
          fc.constantFrom<unknown>({ path: '/a' }, { path: '/a', ffset: 1 }, null, undefined, 42),
        ),
      })
      .map(({ id, name, args }): unknown => ({
        ...(id === undefined ? {} : { id }),
        type: 'function',
        function: { ...(name === undefined ? {} : { name }), ...(args === undefined ? {} : { arguments: args }) },
      }))
    const message = fc.oneof(
      fc.constant<unknown>({ role: 'user', content: 'go' }),
      fc.array(call, { maxLength: 3 }).map((calls): unknown => ({ role: 'assistant', tool_calls: calls })),
      fc.constant<unknown>({ role: 'assistant', tool_calls: 'x' }),
      fc.constant<unknown>(null),
    )
    // each step keeps a prefix of the conversation so far (or of an earlier one), may
    // change one field of one call in it, and adds to it
    const edit = fc.record({
      at: fc.nat(),
      field: fc.constantFrom('id', 'name', 'arguments'),
      to: fc.constantFrom<unknown>('c1', 'web_get', 'fs_read', '{"url":"u"}', 7),
    })
    const step = fc.record({
      keep: fc.nat(8),
      from: fc.nat(3),
      edit: fc.option(edit),
      add: fc.array(message, { maxLength: 3 }),
      tools: fc.constantFrom<unknown>([fsRead, webGet], [fsRead], undefined),
    })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 15 }), (steps) => {
        const conversations: Array<Array<unknown>> = [[]]
        const bodies = steps.map(({ keep, from, edit, add, tools }) => {
          const base = conversations[Math.max(0, conversations.length - 1 - from)] as Array<unknown>
          const kept = JSON.parse(JSON.stringify(base.slice(0, keep))) as Array<unknown>
          const calls = callsOf({ messages: kept })
          const target =
            edit === null || calls.length === 0
              ? undefined
              : (calls[edit.at % calls.length] as { function?: Record<string, unknown> } & Record<string, unknown>)
          if (edit !== null && target !== undefined && typeof target === 'object' && target !== null) {
            if (edit.field === 'id') target['id'] = edit.to
            else if (typeof target.function === 'object' && target.function !== null)
              target.function[edit.field] = edit.to
          }
          const messages = [...kept, ...add]
          conversations.push(messages)
          // as read from JSON: every request its own objects
          return JSON.parse(JSON.stringify({ ...(tools === undefined ? {} : { tools }), messages })) as unknown
        })
        const a = newAuditor()
        for (const [i, body] of bodies.entries()) a.request(body, { file: 'f', line: i + 1 })
        const all = bodies.flatMap(callsOf).map(callKey)
        expect(a.summary()).toMatchObject({
          requests: bodies.length,
          callsRead: new Set(all).size,
          repeatedCalls: all.length - new Set(all).size,
        })
      }),
    )
  })

  it('tells calls apart whose id, tool and arguments run together alike, and long arguments by their digest', () => {
    const a = newAuditor()
    const long = 'x'.repeat(300)
    const calls = [
      toolCall('ab', 't', 'c'),
      toolCall('a', 't', 'bc'),
      toolCall('a', 'tb', 'c'),
      toolCall('a1', 't', 'c'),
      toolCall('a', '1t', 'c'),
      toolCall('a', 't', `{"p":"${long}"}`),
      toolCall('a', 't', `{"p":"${long}y"}`),
      toolCall('a', 't', `{"p":"y${long}"}`),
    ]
    a.request({ messages: [assistant(...calls)] }, { file: 'f', line: 1 })
    a.request({ messages: [assistant(...calls, ...calls)] }, { file: 'f', line: 2 })
    expect(a.summary()).toMatchObject({ callsRead: calls.length, repeatedCalls: 2 * calls.length })
  })

  it('counts many distinct calls, long and wide ones among them', () => {
    const a = newAuditor()
    const idOf = (i: number): string =>
      i % 997 === 0
        ? `long-${i}-${'y'.repeat(70_000)}`
        : i % 101 === 0
          ? `wide-${i}-é😀`
          : `call_${i.toString(36)}_${'z'.repeat(i % 50)}`
    const n = 30_000
    const body = (from: number, to: number): unknown => ({
      tools: [webGet],
      messages: [
        {
          role: 'assistant',
          tool_calls: Array.from({ length: to - from }, (_, k) =>
            toolCall(idOf(from + k), 'web_get', { url: `u${(from + k) % 7}` }),
          ),
        },
      ],
    })
    // in batches, each batch again, then all of them again in one request
    for (let from = 0; from < n; from += 1000) {
      a.request(body(from, from + 1000), { file: 'f', line: 1 })
      a.request(body(from, from + 1000), { file: 'f', line: 2 })
    }
    a.request(body(0, n), { file: 'f', line: 3 })
    expect(a.summary()).toMatchObject({ callsRead: n, repeatedCalls: 2 * n, callsAudited: n })
  })

  it('audits each call against the tool list of its own request', () => {
    const keys = ['a', 'b', 'c', 'd']
    const declaration = fc.record({
      declared: fc.shuffledSubarray(keys),
      type: fc.constantFrom('string', 'number'),
      decoy: fc.boolean(),
    })
    fc.assert(
      fc.property(fc.array(fc.tuple(declaration, fc.boolean()), { minLength: 1, maxLength: 12 }), (requests) => {
        const a = newAuditor()
        let tools: unknown = undefined
        requests.forEach(([{ declared, type, decoy }, sameObject], i) => {
          const fresh = [
            ...(decoy ? [webGet] : []),
            {
              type: 'function',
              function: {
                name: 't',
                parameters: { type: 'object', properties: Object.fromEntries(declared.map((k) => [k, { type }])) },
              },
            },
          ]
          // sometimes the very list of the request before, read again
          tools = sameObject && tools !== undefined ? tools : (JSON.parse(JSON.stringify(fresh)) as unknown)
          a.request(
            { tools, messages: [assistant(toolCall(`c${i}`, 't', { a: 1, b: 2, c: 3, d: 4 }))] },
            { file: 'f', line: i + 1 },
          )
        })
        // what each request declared, with the list it really had
        const lists: Array<ReadonlyArray<string>> = []
        requests.forEach(([{ declared }, sameObject], i) =>
          lists.push(sameObject && i > 0 ? (lists[i - 1] as ReadonlyArray<string>) : declared),
        )
        const expected = keys.flatMap((k) => {
          const missing = lists.flatMap((d, i) => (d.length > 0 && !d.includes(k) ? [i] : []))
          return missing.length === 0
            ? []
            : [{ tool: 't', key: k, calls: missing.length, firstId: `c${missing[0] as number}` }]
        })
        expect(a.summary()).toMatchObject({
          callsAudited: lists.filter((d) => d.length > 0).length,
          undeclared: expected,
        })
      }),
    )
  })
})

describe('compiledOnce', () => {
  // a compile that says what it was given: the oracle is the JSON text of the declarations
  const counting = () => {
    const made: Array<string> = []
    const textOf = (ds: ReadonlyArray<unknown>): string => {
      try {
        return JSON.stringify(ds)
      } catch {
        return 'not JSON'
      }
    }
    const compile = (ds: ReadonlyArray<unknown>) => {
      made.push(textOf(ds))
      return { of: textOf(ds) } as unknown as ReturnType<ReturnType<typeof compiledOnce>>
    }
    return { made, compile }
  }

  it('compiles each distinct list once: equal lists from other requests get the very same catalogue', () => {
    const { made, compile } = counting()
    const once = compiledOnce(compile)
    const first = once([fsRead])
    expect(once([JSON.parse(JSON.stringify(fsRead)) as unknown])).toBe(first)
    expect(once([webGet])).not.toBe(first)
    expect(once([fsRead, webGet])).not.toBe(first)
    expect(made).toHaveLength(3)
  })

  it('keeps the last CATALOGUES lists: the oldest is compiled again, a recent one is not', () => {
    const { made, compile } = counting()
    const once = compiledOnce(compile)
    const list = (i: number) => [{ type: 'function', function: { name: `t${i}`, parameters: {} } }]
    const first = once(list(0))
    for (let i = 1; i < CATALOGUES; i++) once(list(i))
    expect(once(list(0))).toBe(first)
    once(list(CATALOGUES))
    expect(made).toHaveLength(CATALOGUES + 1)
    expect(once(list(CATALOGUES))).toBe(once(list(CATALOGUES)))
    expect(once(list(0))).not.toBe(first)
    expect(made).toHaveLength(CATALOGUES + 2)
  })

  it('tells apart long lists of the same length (kept by digest) and compiles a list that is not JSON each time', () => {
    const { made, compile } = counting()
    const once = compiledOnce(compile)
    const long = (c: string) => [{ type: 'function', function: { name: 'w', description: c.repeat(2_000) } }]
    const a = once(long('a'))
    const b = once(long('b'))
    expect([a === b, once(long('a')) === a, made.length]).toEqual([false, true, 2])
    // past CACHED_CHARS a list is compiled each time, and nothing of it is kept
    const huge = [{ type: 'function', function: { name: 'h', description: 'x'.repeat(CACHED_CHARS) } }]
    expect(once(huge)).not.toBe(once(huge))
    expect(made).toHaveLength(4)
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    once([cyclic])
    once([cyclic])
    expect(made).toHaveLength(6)
  })

  it('whatever the lists, each answer is the catalogue of a list with the same JSON text', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.jsonValue(), { maxLength: 3 }), { maxLength: 40 }), (lists) => {
        const { made, compile } = counting()
        const once = compiledOnce(compile)
        for (const ds of lists) expect((once(ds) as unknown as { readonly of: string }).of).toBe(JSON.stringify(ds))
        expect(made).toHaveLength(new Set(lists.map((ds) => JSON.stringify(ds))).size)
      }),
    )
  })
})

describe('readRecords', () => {
  const read = async (text: string): Promise<Array<unknown>> => {
    const got: Array<unknown> = []
    await readRecords(Readable.from([Buffer.from(text)]), {
      record: (value, line) => got.push(['record', line, value]),
      problem: (line) => got.push(['problem', line]),
    })
    return got
  }

  it('reads JSON Lines, skipping blank lines and tolerating CRLF and a BOM', async () => {
    expect(await read('\ufeff{"a":1}\r\n\r\n[1]\r\n{"b":2}')).toEqual([
      ['record', 1, { a: 1 }],
      ['record', 3, [1]],
      ['record', 4, { b: 2 }],
    ])
  })

  it('reads a pretty-printed document whole', async () => {
    expect(await read(JSON.stringify([{ a: 1 }, { b: [1, 2] }], null, 2))).toEqual([
      ['record', null, [{ a: 1 }, { b: [1, 2] }]],
    ])
  })

  it('reads a compact array spread over lines as one document', async () => {
    expect(await read('[\n{"a":1},\n{"a":2}\n]\n')).toEqual([['record', null, [{ a: 1 }, { a: 2 }]]])
  })

  it('keeps reading JSON Lines whose first line is bad', async () => {
    expect(await read('{"a":\n{"b":1}\n{"c":2}\n')).toEqual([
      ['problem', 1],
      ['record', 2, { b: 1 }],
      ['record', 3, { c: 2 }],
    ])
  })

  it('reports a broken document once', async () => {
    expect(await read('{\n  "a": 1,\n}\n')).toEqual([['problem', null]])
  })

  it('reads the rest as JSON Lines after a line over the limit, replaying the lines held before it', async () => {
    const got: Array<unknown> = []
    const text = `{"a":\n${'x'.repeat(50)}\nnot json\n{"b":1}\n`
    await readRecords(
      Readable.from([Buffer.from(text)]),
      {
        record: (value, line) => got.push(['record', line, value]),
        problem: (line, message) => got.push(['problem', line, message.startsWith('not valid JSON')]),
      },
      20,
    )
    expect(got).toEqual([
      ['problem', 1, true],
      ['problem', 2, false],
      ['problem', 3, true],
      ['record', 4, { b: 1 }],
    ])
  })
})

// -------------------------------------------------------------------------------------
// reading chunk by chunk, as readline reads
// -------------------------------------------------------------------------------------

type Chunk = Buffer | string

// the same chunks, whatever their boundaries: readline is the reference
const readlineLines = (chunks: ReadonlyArray<Chunk>): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const out: Array<string> = []
    const rl = createInterface({ input: Readable.from(chunks), crlfDelay: Infinity })
    rl.on('line', (l) => out.push(l))
    rl.once('close', () => resolve(out))
    rl.once('error', reject)
  })

const ourLines = (input: Readable): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const out: Array<string> = []
    readTextLines(input, { line: (l) => void out.push(l), tooLong: () => undefined }).then(() => resolve(out), reject)
  })

// a stream written one chunk at a time, each in its own turn of the event loop
const fedOneByOne = (chunks: ReadonlyArray<Chunk>): PassThrough => {
  const input = new PassThrough()
  void (async () => {
    for (const c of chunks) {
      input.write(c)
      await new Promise((r) => setImmediate(r))
    }
    input.end()
  })()
  return input
}

const recordsOf = async (input: Readable): Promise<Array<unknown>> => {
  const got: Array<unknown> = []
  await readRecords(input, {
    record: (value, line) => got.push(['record', line, value]),
    problem: (line) => got.push(['problem', line]),
  })
  return got
}

// cut at arbitrary positions, empty pieces left out
const cutAt = <T extends Chunk>(whole: T, cuts: ReadonlyArray<number>): Array<T> => {
  const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b)
  const out: Array<T> = []
  let prev = 0
  for (const c of [...at, whole.length]) {
    if (c > prev) out.push(whole.slice(prev, c) as T)
    prev = c
  }
  return out
}

// bytes that find the edges: line ends, the bytes of multi-byte characters (lead and
// continuation bytes, in and out of order), a BOM, ordinary text
const edgyBytes = fc.oneof(
  fc
    .array(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x7b, 0x7d, 0x22, 0x61, 0x20) },
        { weight: 3, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xff }) },
      ),
      { maxLength: 60 },
    )
    .map((bytes) => Buffer.from(bytes)),
  fc
    .array(
      fc.oneof(
        fc.constantFrom('\n', '\r', '\r\n', '\r\r\n', '\ufeff', 'é', '€', '😀', '{"a":1}'),
        fc.string({ unit: 'binary' }),
      ),
      { maxLength: 20 },
    )
    .map((parts) => Buffer.from(parts.join(''))),
)

describe('readTextLines', () => {
  it('gives the lines readline gives, wherever the chunks end', async () => {
    await fc.assert(
      fc.asyncProperty(edgyBytes, fc.array(fc.nat(), { maxLength: 8 }), async (bytes, cuts) => {
        const chunks = cutAt(bytes, cuts)
        const expected = await readlineLines(chunks)
        expect(await ourLines(Readable.from(chunks))).toEqual(expected)
        expect(await ourLines(Readable.from([bytes]))).toEqual(expected)
      }),
      { numRuns: 500 },
    )
  })

  it('keeps a character cut between chunks whole, and "\r\n" cut between chunks one line end', async () => {
    const bytes = Buffer.from('é€😀\r\nx\r\r\ny\rz')
    // every cut into two, and every byte on its own
    for (let i = 1; i < bytes.length; i++) {
      expect(await ourLines(fedOneByOne([bytes.subarray(0, i), bytes.subarray(i)]))).toEqual([
        'é€😀',
        'x',
        '',
        'y',
        'z',
      ])
    }
    expect(await ourLines(fedOneByOne([...bytes].map((b) => Buffer.from([b]))))).toEqual(['é€😀', 'x', '', 'y', 'z'])
  })

  it('reads chunks that are byte arrays but not Buffers', async () => {
    const chunks = [new Uint8Array([0x61, 0x0d]), new Uint8Array([0x0a, 0xc3]), new Uint8Array([0xa9])]
    expect(await ourLines(Readable.from(chunks))).toEqual(['a', 'é'])
    expect(await readlineLines(chunks as unknown as Array<Buffer>)).toEqual(['a', 'é'])
  })

  it('drops an incomplete character at the very end, as readline does', async () => {
    const chunks = [Buffer.from('a\n'), Buffer.from([0x62, 0xf0, 0x9f, 0x98])]
    expect(await readlineLines(chunks)).toEqual(['a', 'b'])
    expect(await ourLines(fedOneByOne(chunks))).toEqual(['a', 'b'])
  })

  it('reports a stream error once, and nothing after it', async () => {
    const input = new PassThrough()
    const seen: Array<string> = []
    const done = readTextLines(input, { line: (l) => void seen.push(l), tooLong: () => undefined }).then(
      () => 'end',
      (e: unknown) => e,
    )
    input.write('a\nb')
    await new Promise((r) => setImmediate(r))
    const boom = new Error('boom')
    input.destroy(boom)
    expect(await done).toBe(boom)
    expect(seen).toEqual(['a'])
    // a stream that errs again finds a listener still there
    expect(() => input.emit('error', new Error('again'))).not.toThrow()
  })

  it('resolves at once on a stream that already ended, and fails on one closed before its end', async () => {
    const sink = { line: () => undefined, tooLong: () => undefined }
    // settled, or still pending after a second (a stream that already ended emits no second end)
    const settled = (p: Promise<void>): Promise<string> =>
      Promise.race([
        p.then(
          () => 'resolved',
          (e: unknown) => `rejected: ${(e as Error).message}`,
        ),
        new Promise<string>((r) => setTimeout(() => r('pending'), 1000)),
      ])
    const ended = Readable.from([Buffer.from('a\n')])
    expect(await ourLines(ended)).toEqual(['a'])
    expect(await settled(readTextLines(ended, sink))).toBe('resolved')
    const closed = new PassThrough()
    closed.destroy()
    expect(await settled(readTextLines(closed, sink))).toBe('rejected: the input was closed before its end')
    const closing = new PassThrough()
    const read = readTextLines(closing, sink)
    closing.write('a\n')
    closing.destroy()
    expect(await settled(read)).toBe('rejected: the input was closed before its end')
  })
})

describe('runAudit', () => {
  it('leaves the process exit code at 2 while it runs, and as it was once it is done', async () => {
    const stdin = new PassThrough()
    const palette = paletteFor(false, {})
    const out: Array<string> = []
    const before = process.exitCode
    try {
      const run = runAudit(
        ['-'],
        { json: true, failOnWarn: false, tolerate: [] },
        { stdin, out: (l) => void out.push(l), err: () => undefined, outColor: palette, errColor: palette },
      )
      await new Promise((r) => setImmediate(r))
      // were the event loop to run dry now, Node would exit with this
      expect(process.exitCode).toBe(2)
      stdin.end(jsonl(drifting))
      expect(await run).toBe(0)
      expect(process.exitCode).toBe(before)
      expect(out).toHaveLength(3)
    } finally {
      process.exitCode = before
    }
  })
})

describe('drawSummary and summaryRecord', () => {
  const summary = (undeclared: AuditSummary['undeclared']): AuditSummary => ({
    files: 1,
    unusableFiles: 0,
    badRecords: 0,
    unknownShapes: [],
    requests: 1,
    formats: { chat: 1, responses: 0, anthropic: 0 },
    callsRead: 1,
    repeatedCalls: 0,
    callsAudited: 1,
    warnings: 1,
    undeclared,
  })
  const pairs = (tool: string, n: number): AuditSummary['undeclared'] =>
    Array.from({ length: n }, (_, i) => ({
      tool,
      key: `k${String(i).padStart(4, '0')}_${'z'.repeat(80)}`,
      calls: 2,
      firstId: 'c',
    }))
  const long = `${'T'.repeat(500_000)}\u009b2J`

  it('names the first MAX_KEYS_SHOWN keys of a tool, then how many more, and cuts and escapes a tool name', () => {
    const lines = drawSummary(summary([...pairs(long, 1), ...pairs('t', 1000)]), paletteFor(false, {}))
    expect(lines).toHaveLength(3)
    expect(lines[1]).toBe(`  ${'T'.repeat(200)}…: "k0000_${'z'.repeat(80)}" in 2 calls`)
    expect(lines[2]?.startsWith(`  t: "k0000_${'z'.repeat(80)}" in 2 calls, "k0001_`)).toBe(true)
    expect(lines[2]?.endsWith(`"k0019_${'z'.repeat(80)}" in 2 calls and 980 more`)).toBe(true)
    expect(lines[2]?.split(' in 2 calls')).toHaveLength(21)
    // a list under the limit reads as it always has
    expect(drawSummary(summary(pairs('t', 2)), paletteFor(false, {}))[1]).toBe(
      `  t: "k0000_${'z'.repeat(80)}" in 2 calls, "k0001_${'z'.repeat(80)}" in 2 calls`,
    )
  })

  it('bounds the JSON summary the same way, with the count of each tool whose keys were cut', () => {
    const s = summary([...pairs(long, 1), ...pairs('t', 1000)])
    const record = summaryRecord(s)
    const undeclared = record['undeclared'] as AuditSummary['undeclared']
    expect(undeclared).toHaveLength(1 + 20)
    expect(undeclared[0]?.tool).toBe(`${'T'.repeat(1000)}…`)
    expect(undeclared.slice(1)).toEqual(pairs('t', 20))
    expect(record['undeclaredKeyCounts']).toEqual([{ tool: 't', keys: 1000 }])
    expect(JSON.stringify(record).length).toBeLessThan(5000)
    // under the limit: the summary as it is, with no count added
    const small = summary(pairs('t', 20))
    expect(summaryRecord(small)).toEqual({ type: 'summary', ...small })
    expect(Object.keys(summaryRecord(small))).toEqual(['type', ...Object.keys(small)])
  })
})

describe('readRecords, chunk by chunk', () => {
  it('reads a BOM, CRLF and characters cut between chunks fed one by one', async () => {
    const bytes = Buffer.from('\ufeff{"a":"é"}\r\n\r\n{"b":"😀"}\r\n["€"]')
    const expected = [
      ['record', 1, { a: 'é' }],
      ['record', 3, { b: '😀' }],
      ['record', 4, ['€']],
    ]
    for (let i = 1; i < bytes.length; i++)
      expect(await recordsOf(fedOneByOne([bytes.subarray(0, i), bytes.subarray(i)]))).toEqual(expected)
    expect(await recordsOf(fedOneByOne([...bytes].map((b) => Buffer.from([b]))))).toEqual(expected)
  })

  it('gives each line of JSON Lines its record and line number as readline numbers them, wherever the chunks end', async () => {
    const line = fc.oneof(
      { weight: 4, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
      { weight: 1, arbitrary: fc.constantFrom('', ' ', 'not json', '{"a":', '"é😀"', '\ufeff{}') },
    )
    const end = fc.constantFrom('\n', '\r\n', '\r')
    const doc = fc
      .tuple(fc.boolean(), fc.jsonValue(), fc.array(fc.tuple(line, end), { maxLength: 12 }), fc.boolean())
      .map(([bom, first, rest, endsWithEnd]) => {
        const text = (bom ? '\ufeff' : '') + JSON.stringify(first) + '\n' + rest.map(([l, e]) => l + e).join('')
        return endsWithEnd ? text : text.replace(/(\r\n|\r|\n)$/, '')
      })
    await fc.assert(
      fc.asyncProperty(doc, fc.array(fc.nat(), { maxLength: 8 }), async (text, cuts) => {
        const bytes = Buffer.from(text)
        // the first line parses, so this is JSON Lines: a record or a problem per line
        const expected: Array<unknown> = []
        ;(await readlineLines([bytes])).forEach((raw, i) => {
          const l = i === 0 && raw.startsWith('\ufeff') ? raw.slice(1) : raw
          if (l.trim() === '') return
          try {
            expected.push(['record', i + 1, JSON.parse(l) as unknown])
          } catch {
            expected.push(['problem', i + 1])
          }
        })
        expect(await recordsOf(Readable.from(cutAt(bytes, cuts)))).toEqual(expected)
      }),
      { numRuns: 300 },
    )
  })

  it('reads documents and bad starts the same in one chunk as in many', async () => {
    const text = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v, null, 2)),
      fc
        .array(fc.jsonValue(), { maxLength: 5 })
        .map((vs) => '[\n' + vs.map((v) => JSON.stringify(v)).join(',\r\n') + '\n]'),
      fc
        .array(
          fc.oneof(
            fc.jsonValue().map((v) => JSON.stringify(v)),
            fc.constantFrom('{"a":', '{', '}', '', 'x'),
          ),
          { maxLength: 8 },
        )
        .map((ls) => ls.join('\n')),
    )
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 8 }), async (t, cuts) => {
        const bytes = Buffer.from(t)
        expect(await recordsOf(Readable.from(cutAt(bytes, cuts)))).toEqual(await recordsOf(Readable.from([bytes])))
      }),
      { numRuns: 300 },
    )
  })

  it('rejects once when the stream fails, after the records before', async () => {
    const input = new PassThrough()
    const got: Array<unknown> = []
    const read = readRecords(input, { record: (v, line) => got.push([line, v]), problem: () => got.push('problem') })
    input.write('{"a":1}\n{"b":')
    await new Promise((r) => setImmediate(r))
    input.destroy(new Error('disk gone'))
    await expect(read).rejects.toThrow('disk gone')
    expect(got).toEqual([[1, { a: 1 }]])
  })
})

describe('paletteFor and readVersion', () => {
  it('colours only a terminal, and never with NO_COLOR', () => {
    expect(paletteFor(true, {}).red('x')).toBe('\u001b[31mx\u001b[39m')
    expect(paletteFor(true, { NO_COLOR: '1' }).red('x')).toBe('x')
    expect(paletteFor(true, { NO_COLOR: '' }).enabled).toBe(true)
    expect(paletteFor(false, {}).bold('x')).toBe('x')
    expect(paletteFor(undefined, {}).enabled).toBe(false)
  })

  it('finds the package version above the running script', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
    expect(readVersion(mainTs)).toBe(pkg.version)
    expect(readVersion(join(root, 'dist/esm/cli/main.js'))).toBe(pkg.version)
    expect(readVersion('/nonexistent/x.js')).toBe('unknown')
    expect(readVersion(undefined)).toBe('unknown')
  })
})

// -------------------------------------------------------------------------------------
// the command
// -------------------------------------------------------------------------------------

describe('toolstack audit', () => {
  it('reads JSON Lines: one line per warning as the combinator says it, then a summary', async () => {
    const f = file('s.jsonl', jsonl(drifting))
    const r = await runCli(['audit', f])
    expect(r.status).toBe(0)
    expect(r.stderr).toBe('')
    const out = lines(r.stdout)
    // the combinator's own sentence, whatever suggestion it ends with
    expect(
      out[0]?.startsWith(
        `${f}:2: toolstack: fs_read call c1 carried undeclared argument key "ffset" (declared: "offset", "path")`,
      ),
    ).toBe(true)
    expect(
      out[1]?.startsWith(
        `${f}:4: toolstack: web_get call c4 carried undeclared argument key "headers" (declared: "url")`,
      ),
    ).toBe(true)
    const json = jsonLines((await runCli(['audit', '--json', f])).stdout)
    expect(out.slice(0, 2)).toEqual(
      json
        .slice(0, 2)
        .map((w) => `${String(w['file'])}:${String(w['line'])}: ${formatWarning(w as unknown as UnknownKeyWarning)}`),
    )
    expect(out[2]).toBe(
      'toolstack audit: 1 file, 4 requests (OpenAI chat completions), 4 calls read (4 repeats not counted again), 4 audited, 2 warnings',
    )
    expect(out.slice(3)).toEqual(['  fs_read: "ffset" in 2 calls', '  web_get: "headers" in 1 call'])
    expect(r.stdout.includes(0x1b)).toBe(false)
  })

  it('a warning record carries the form the summary remembers a long tool or key by, so the two can be joined', async () => {
    const tool = `t${'o'.repeat(150)}`
    const long = `k${'e'.repeat(2_000)}`
    const declared = {
      type: 'function',
      function: { name: tool, parameters: { type: 'object', properties: { a: {} } } },
    }
    const f = file('long.jsonl', jsonl(session([declared], [[toolCall('c1', tool, { a: 1, [long]: 1, short: 1 })]])))
    const out = jsonLines((await runCli(['audit', '--json', f])).stdout)
    const warning = out[0] as { rememberedTool?: string; keys: ReadonlyArray<Record<string, unknown>> }
    const summary = out.at(-1) as { undeclared: ReadonlyArray<{ tool: string; key: string }> }
    expect(warning.rememberedTool).toBe(summary.undeclared[0]?.tool)
    const byKey = new Map(warning.keys.map((k) => [k['remembered'] ?? k['key'], k]))
    expect(summary.undeclared.map((u) => [u.tool === warning.rememberedTool, byKey.has(u.key)])).toEqual([
      [true, true],
      [true, true],
    ])
    // a key cut in the record: its remembered form tells it apart; a short one has no such member
    expect(byKey.get(rememberedKey(long))?.['key']).toBe(`${long.slice(0, 1000)}…`)
    expect(Object.keys(byKey.get('short') ?? {})).toEqual(['path', 'key', 'place'])
  })

  it('reads one JSON document and a JSON array of them', async () => {
    const one = file('one.json', JSON.stringify(drifting[3], null, 2))
    const many = file('many.json', JSON.stringify(drifting, null, 2))
    const r1 = await runCli(['audit', '--json', one])
    const r2 = await runCli(['audit', '--json', many])
    for (const r of [r1, r2]) {
      expect(r.status).toBe(0)
      const out = jsonLines(r.stdout)
      expect(out.filter((o) => o['type'] === 'warning').map((o) => [o['tool'], o['id'], o['line']])).toEqual([
        ['fs_read', 'c1', null],
        ['web_get', 'c4', null],
      ])
      expect(out.at(-1)).toMatchObject({ type: 'summary', callsRead: 4, callsAudited: 4, warnings: 2 })
    }
  })

  it('reads stdin for "-"', async () => {
    const r = await runCli(['audit', '--json', '-'], { input: jsonl(drifting) })
    expect(r.status).toBe(0)
    expect(jsonLines(r.stdout)[0]).toMatchObject({ type: 'warning', tool: 'fs_read', file: '<stdin>', line: 2 })
  })

  it('prints JSON Lines with --json: warnings with the combinator’s field names, then one summary', async () => {
    const f = file('s.jsonl', jsonl(drifting))
    const r = await runCli(['audit', '--json', f])
    const out = jsonLines(r.stdout)
    // suggestions are the combinator's to decide: here only their shape is checked
    for (const o of out.slice(0, 2)) expect(o['suggestions']).toEqual(expect.any(Array))
    expect(out.map(({ suggestions: _s, ...rest }) => rest)).toEqual([
      {
        type: 'warning',
        tool: 'fs_read',
        id: 'c1',
        unknownKeys: ['ffset'],
        keys: [{ path: 'ffset', key: 'ffset', place: [] }],
        declaredKeys: ['offset', 'path'],
        file: f,
        line: 2,
      },
      {
        type: 'warning',
        tool: 'web_get',
        id: 'c4',
        unknownKeys: ['headers'],
        keys: [{ path: 'headers', key: 'headers', place: [] }],
        declaredKeys: ['url'],
        file: f,
        line: 4,
      },
      {
        type: 'summary',
        files: 1,
        unusableFiles: 0,
        badRecords: 0,
        unknownShapes: [],
        requests: 4,
        formats: { chat: 4, responses: 0, anthropic: 0 },
        callsRead: 4,
        repeatedCalls: 4,
        callsAudited: 4,
        warnings: 2,
        undeclared: [
          { tool: 'fs_read', key: 'ffset', calls: 2, firstId: 'c1' },
          { tool: 'web_get', key: 'headers', calls: 1, firstId: 'c4' },
        ],
      },
    ])
  })

  it('never reports a --tolerate name, like reason', async () => {
    const f = file('t.jsonl', jsonl(drifting))
    const r = await runCli(['audit', '--json', '--tolerate', 'headers', '--tolerate', '_meta', f])
    const out = jsonLines(r.stdout)
    expect(out.filter((o) => o['type'] === 'warning').map((o) => o['tool'])).toEqual(['fs_read'])
    expect(out.at(-1)).toMatchObject({
      warnings: 1,
      undeclared: [{ tool: 'fs_read', key: 'ffset', calls: 2, firstId: 'c1' }],
    })
  })

  it('counts a call once across files too', async () => {
    const a = file('a.jsonl', jsonl(drifting.slice(0, 3)))
    const b = file('b.jsonl', jsonl(drifting))
    const r = await runCli(['audit', '--json', a, b])
    const out = jsonLines(r.stdout)
    expect(out.filter((o) => o['type'] === 'warning').map((o) => [o['id'], o['file']])).toEqual([
      ['c1', a],
      ['c4', b],
    ])
    expect(out.at(-1)).toMatchObject({ files: 2, requests: 7, callsRead: 4 })
  })

  it('reads the three formats from one file, and counts and names the records of an unknown shape', async () => {
    const response = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4.1', choices: [] }
    const f = file('mixed.jsonl', jsonl([chatRequest, response, responsesRequest, anthropicRequest, response]))
    const human = await runCli(['audit', f])
    const out = lines(human.stdout)
    expect(out.filter((l) => l.includes('carried')).map((l) => /call (\S+) carried/.exec(l)?.[1])).toEqual([
      'call_abc123',
      'call_12345xyz',
      'toolu_01A09q90qw90lq917835lq9',
    ])
    expect(out.slice(-3)).toEqual([
      'toolstack audit: 1 file, 3 requests (1 OpenAI chat completions, 1 OpenAI Responses, 1 Anthropic Messages), 3 calls read, 3 audited, 3 warnings, 2 bad records',
      '  2 records of an unknown shape: an object with keys "choices", "created", "id", "model", "object"',
      '  get_weather: "city" in 1 call, "detail" in 1 call, "units" in 1 call',
    ])
    expect(human.stderr).toContain(`${f}:2: not a request body this command reads`)
    const json = jsonLines((await runCli(['audit', '--json', f])).stdout)
    expect(json.at(-1)).toMatchObject({
      requests: 3,
      formats: { chat: 1, responses: 1, anthropic: 1 },
      badRecords: 2,
      unknownShapes: [{ shape: 'an object with keys "choices", "created", "id", "model", "object"', records: 2 }],
    })
  })

  it('reports a bad record by file and line, without a stack trace, and audits the others', async () => {
    const good = jsonl(drifting).split('\n')
    const f = file('bad.jsonl', [good[0], 'not json', good[1], '42', '{"tools":[]}', good[2], good[3], ''].join('\r\n'))
    const r = await runCli(['audit', f])
    expect(r.status).toBe(2)
    const err = r.stderr.split('\n').filter((l) => l !== '')
    expect(err).toHaveLength(3)
    expect(err[0]).toMatch(new RegExp(`^toolstack audit: ${f}:2: not valid JSON \\(`))
    expect(err[1]).toBe(
      `toolstack audit: ${f}:4: not a request body this command reads (OpenAI chat completions, OpenAI Responses, Anthropic Messages): a number`,
    )
    expect(err[2]).toBe(
      `toolstack audit: ${f}:5: not a request body this command reads (OpenAI chat completions, OpenAI Responses, Anthropic Messages): an object with key "tools"`,
    )
    expect(r.stderr).not.toMatch(/\n\s+at /)
    expect(lines(r.stdout).filter((l) => l.includes('carried'))).toHaveLength(2)
    expect(r.stdout.toString()).toContain('3 bad records')
    expect(lines(r.stdout).slice(-4, -2)).toEqual([
      '  1 record of an unknown shape: a number',
      '  1 record of an unknown shape: an object with key "tools"',
    ])
  })

  it('names the element of an array that is not a request body', async () => {
    const f = file('arr.json', JSON.stringify([drifting[1], 'x', drifting[2]], null, 1))
    const r = await runCli(['audit', f])
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe(
      `toolstack audit: ${f}: element 2: not a request body this command reads (OpenAI chat completions, OpenAI Responses, Anthropic Messages): a string`,
    )
  })

  it('says so when it found no call it could read, or none it could audit; --fail-on-warn then exits 2', async () => {
    // a session before the model called anything, and one in the legacy function_call shape
    const noCalls = file(
      'none.jsonl',
      jsonl([
        { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        { model: 'm', functions: [], messages: [{ role: 'assistant', function_call: { name: 'f', arguments: '{}' } }] },
      ]),
    )
    const plain = await runCli(['audit', noCalls])
    expect(plain.status).toBe(0)
    expect(plain.stderr.trim()).toBe(
      "toolstack audit: 2 requests read, but no tool call in any: nothing was audited. Calls are read from OpenAI chat completions' tool_calls, OpenAI Responses' function_call items and Anthropic Messages' tool_use blocks (not from legacy function_call messages).",
    )
    const gate = await runCli(['audit', '--fail-on-warn', noCalls])
    expect(gate.status).toBe(2)
    expect(gate.stderr).toContain('(--fail-on-warn: exit status 2, since nothing was audited)')
    // calls to tools the requests do not declare
    const undeclared = file('undeclared.jsonl', jsonl([{ messages: [assistant(toolCall('c1', 'ghost', { a: 1 }))] }]))
    const none = await runCli(['audit', '--fail-on-warn', undeclared])
    expect(none.status).toBe(2)
    expect(none.stderr).toContain('toolstack audit: 1 call read, but none could be audited')
    // a clean run says nothing of the kind
    const clean = await runCli([
      'audit',
      '--fail-on-warn',
      file('clean.jsonl', jsonl(session([fsRead], [[toolCall('k', 'fs_read', { path: '/' })]]))),
    ])
    expect([clean.status, clean.stderr]).toEqual([0, ''])
  })

  // what a log may hold to take over a terminal: an OSC that retitles it (ESC ] … BEL),
  // a CSI that clears it (ESC [ 2J), the same as a C1 CSI (U+009B), DEL, a newline
  const evilTool = 'fs_read\u001b]0;pwned\u0007'
  const evilKey = 'k\u001b[2J\u009b2J\u007f\nfake line'
  const evilId = 'c\u009b31m'
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

  it('escapes control characters from its input in human output, and keeps JSON output exact', async () => {
    const tool = {
      type: 'function',
      function: { name: evilTool, parameters: { type: 'object', properties: { path: {} } } },
    }
    const f = file(
      'evil.jsonl',
      jsonl([
        { tools: [tool], messages: [assistant(toolCall(evilId, evilTool, { path: '/', [evilKey]: 1 }))] },
        { tools: [], messages: 42 },
        '\u001b[2Jnot a request',
      ]),
    )
    const human = await runCli(['audit', f])
    for (const out of [human.stdout.toString(), human.stderr]) expect(out).not.toMatch(raw)
    // a key holding `[` is named by its path, ["…"], its control characters JSON-escaped
    expect(human.stdout.toString()).toContain(
      `fs_read\\u001b]0;pwned\\u0007 call c\\u009b31m carried undeclared argument key ${escapeControls(JSON.stringify(pathOf('', evilKey)))}`,
    )
    const json = await runCli(['audit', '--json', f])
    expect(json.stdout.toString()).not.toMatch(raw)
    const records = jsonLines(json.stdout)
    expect(records[0]).toMatchObject({ tool: evilTool, id: evilId, unknownKeys: [pathOf('', evilKey)] })
    expect(records.at(-1)).toMatchObject({ undeclared: [{ tool: evilTool, key: pathOf('', evilKey) }] })
  })

  it('exits 2 when a record was unusable, after auditing the others and printing the summary; 2 wins over 1', async () => {
    const good = jsonl(drifting).split('\n')
    // a truncated line among good ones, as a log cut short by a crash leaves it
    const f = file('truncated.jsonl', [good[0], good[1], (good[2] ?? '').slice(0, 40), good[3], ''].join('\n'))
    const r = await runCli(['audit', f])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(new RegExp(`^toolstack audit: ${f}:3: not valid JSON`))
    expect(lines(r.stdout).filter((l) => l.includes('carried'))).toHaveLength(2)
    expect(lines(r.stdout).at(-3)).toMatch(/^toolstack audit: 1 file, 3 requests .*, 1 bad record$/)
    const gate = await runCli(['audit', '--fail-on-warn', '--json', f])
    expect(gate.status).toBe(2)
    expect(jsonLines(gate.stdout).at(-1)).toMatchObject({ type: 'summary', warnings: 2, badRecords: 1 })
  })

  it('exits 1 on a warning only with --fail-on-warn', async () => {
    const warns = file('w.jsonl', jsonl(drifting))
    const clean = file('c.jsonl', jsonl(session([fsRead], [[toolCall('k', 'fs_read', { path: '/' })]])))
    expect((await runCli(['audit', warns])).status).toBe(0)
    expect((await runCli(['audit', '--fail-on-warn', warns])).status).toBe(1)
    expect((await runCli(['audit', '--fail-on-warn', clean])).status).toBe(0)
  })

  it('exits 2 for a file it cannot read or that holds no request body, after auditing the others', async () => {
    const warns = file('w.jsonl', jsonl(drifting))
    const empty = file('empty.jsonl', '')
    const junk = file('junk.jsonl', 'a\nb\n')
    const missing = join(tmp.dir, 'missing.jsonl')
    const r = await runCli(['audit', '--fail-on-warn', missing, warns, empty, junk, tmp.dir])
    expect(r.status).toBe(2)
    expect(r.stderr).toContain(`toolstack audit: ${missing}: cannot read: no such file`)
    expect(r.stderr).toContain(`toolstack audit: ${empty}: no readable request body in it`)
    expect(r.stderr).toContain(`toolstack audit: ${junk}: no readable request body in it`)
    expect(r.stderr).toContain(`toolstack audit: ${tmp.dir}: cannot read: is a directory`)
    expect(r.stderr).not.toMatch(/\n\s+at /)
    expect(lines(r.stdout).filter((l) => l.includes('carried'))).toHaveLength(2)
  })

  it('ends quietly when its output is closed early, as `… | head -n1` closes it', async () => {
    // enough warnings to fill the pipe many times over
    const many = Array.from({ length: 5000 }, (_, i) => ({
      tools: [fsRead],
      messages: [assistant(toolCall(`c${i}`, 'fs_read', { path: '/', [`key_${i}`]: 1 }))],
    }))
    const f = file('many.jsonl', jsonl(many))
    const child = track(process.execPath, cliArgs('audit', f), {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let err = ''
    child.stderr?.setEncoding('utf8').on('data', (t: string) => (err += t))
    // read the first line, then close the pipe, as head does
    child.stdout?.once('data', () => child.stdout?.destroy())
    const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (s, g) => resolve([s, g])),
    )
    expect(err).toBe('')
    // as a Unix tool killed by SIGPIPE ends: 128 + 13
    expect([status, signal]).toEqual([141, null])
  })

  it('reads a record longer than --max-line-bytes as a bad record, by file and line, and audits the rest', async () => {
    const long = {
      tools: [fsRead],
      messages: [assistant(toolCall('long', 'fs_read', { path: 'x'.repeat(3000), lenght: 1 }))],
    }
    const f = file('long.jsonl', jsonl([drifting[1], long, drifting[2], drifting[3]]))
    const r = await runCli(['audit', '--json', '--max-line-bytes', '2000', f])
    expect(r.stderr.trim()).toBe(
      `toolstack audit: ${f}:2: a line of ${JSON.stringify(long).length} bytes, longer than --max-line-bytes (2000): not read`,
    )
    const out = jsonLines(r.stdout)
    expect(out.filter((o) => o['type'] === 'warning').map((o) => [o['id'], o['line']])).toEqual([
      ['c1', 1],
      ['c4', 4],
    ])
    expect(out.at(-1)).toMatchObject({ badRecords: 1, requests: 3 })
  })

  it('gives up once on held input that outgrows --max-line-bytes and is neither JSON Lines nor a document', async () => {
    const f = file('junk.txt', 'not json\n'.repeat(1000))
    const r = await runCli(['audit', '--max-line-bytes', '1000', f])
    expect(r.status).toBe(2)
    const err = r.stderr.trim().split('\n')
    expect(err[0]).toBe(
      `toolstack audit: ${f}: neither JSON Lines nor a JSON document of at most 1000 bytes; the rest of it was not read`,
    )
    expect(err.slice(1)).toEqual([`toolstack audit: ${f}: no readable request body in it`])
    // a line over the limit is in no document of at most 1000 bytes: the input is read as JSON Lines, each bad
    // line reported, and nothing is given up
    const g = file('junk2.txt', `not json\n${'x'.repeat(2000)}\n${'not json\n'.repeat(10)}`)
    const r2 = await runCli(['audit', '--max-line-bytes', '1000', g])
    const err2 = r2.stderr.trim().split('\n')
    expect(err2).toHaveLength(1 + 1 + 10 + 1)
    expect(err2[0]).toMatch(new RegExp(`^toolstack audit: ${g}:1: not valid JSON`))
    expect(err2[1]).toBe(`toolstack audit: ${g}:2: a line of 2000 bytes, longer than --max-line-bytes (1000): not read`)
    expect(err2[11]).toMatch(new RegExp(`^toolstack audit: ${g}:12: not valid JSON`))
    expect(err2[12]).toBe(`toolstack audit: ${g}: no readable request body in it`)
  })

  it('audits the rest after a line over --max-line-bytes, even when the lines before it were held', async () => {
    const long = {
      tools: [fsRead],
      messages: [assistant(toolCall('long', 'fs_read', { path: 'x'.repeat(3000), lenght: 1 }))],
    }
    // a first line cut short, as a crash leaves it: the lines after it are held until they tell what the input is
    const f = file(
      'held.jsonl',
      ['{"truncated": tru', ...jsonl([long, drifting[1], drifting[2], drifting[3]]).split('\n')].join('\n'),
    )
    const r = await runCli(['audit', '--json', '--max-line-bytes', '2000', f])
    expect(r.status).toBe(2)
    const err = r.stderr.trim().split('\n')
    expect(err).toHaveLength(2)
    expect(err[0]).toMatch(new RegExp(`^toolstack audit: ${f}:1: not valid JSON`))
    expect(err[1]).toBe(
      `toolstack audit: ${f}:2: a line of ${JSON.stringify(long).length} bytes, longer than --max-line-bytes (2000): not read`,
    )
    const out = jsonLines(r.stdout)
    expect(out.filter((o) => o['type'] === 'warning').map((o) => [o['id'], o['line']])).toEqual([
      ['c1', 3],
      ['c4', 5],
    ])
    expect(out.at(-1)).toMatchObject({ requests: 3, badRecords: 2, unusableFiles: 0 })
  })

  it('refuses stdin named twice as a usage error, before reading anything', async () => {
    const input = jsonl(drifting)
    const said = 'toolstack audit: "-" (stdin) is named 2 times: stdin can be read only once (exit status 2)'
    // with warnings in it, and --fail-on-warn: neither 0 nor 1
    const warns = await runCli(['audit', '--fail-on-warn', '--json', '-', '-'], { input })
    expect([warns.status, warns.stderr.trim(), warns.stdout.length]).toEqual([2, said, 0])
    const empty = await runCli(['audit', '--fail-on-warn', '-', '-'])
    expect([empty.status, empty.stderr.trim()]).toEqual([2, said])
    const f = file('s.jsonl', input)
    const apart = await runCli(['audit', '-', f, '-'], { input })
    expect([apart.status, apart.stderr.trim(), apart.stdout.length]).toEqual([2, said, 0])
  })

  it('names the first MAX_SHAPES shapes of unknown records, counts the others, and keeps each line short', async () => {
    const hostile = { [`${'A'.repeat(300_000)}\u001b]0;pwned\u0007`]: 1 }
    const wide = Array.from({ length: MAX_SHAPES + 50 }, (_, i) =>
      Object.fromEntries(Array.from({ length: 6 }, (_, j) => [`${i}_${j}${'x'.repeat(2000)}`, 1])),
    )
    const f = file('shapes.jsonl', jsonl([hostile, ...wide, drifting[1]]))
    const r = await runCli(['audit', f])
    expect(r.status).toBe(2)
    const out = lines(r.stdout)
    const err = r.stderr.trim().split('\n')
    for (const l of [...out, ...err]) expect(l.length).toBeLessThan(1000)
    expect(r.stdout.includes(0x1b) || r.stderr.includes('\u001b')).toBe(false)
    const described = `an object with key "${'A'.repeat(40)}…"`
    expect(err[0]).toBe(
      `toolstack audit: ${f}:1: not a request body this command reads (OpenAI chat completions, OpenAI Responses, Anthropic Messages): ${described}`,
    )
    expect(out.filter((l) => l.includes(' of an unknown shape: '))).toHaveLength(MAX_SHAPES)
    expect(out).toContain(`  1 record of an unknown shape: ${described}`)
    expect(out).toContain(`  51 records of other unknown shapes (the first ${MAX_SHAPES} are named)`)
    const json = await runCli(['audit', '--json', f])
    const summaryLine = lines(json.stdout).at(-1) ?? ''
    expect(summaryLine.length).toBeLessThan(MAX_SHAPES * 400)
    const s = JSON.parse(summaryLine) as Record<string, unknown>
    expect(s['unknownShapes']).toHaveLength(MAX_SHAPES)
    expect(s).toMatchObject({ badRecords: MAX_SHAPES + 51, otherShapeRecords: 51, requests: 1 })
  })

  it('shows and remembers a call with a 10 MB id in a few dozen characters, and still counts it once', async () => {
    const id = 'i'.repeat(10_000_000)
    const a = toolCall(`${id}a`, 'fs_read', { path: '/', ffset: 1 })
    const b = toolCall(`${id}b`, 'fs_read', { path: '/', ffset: 2 })
    const f = file(
      'ids.jsonl',
      jsonl([
        { tools: [fsRead], messages: [assistant(a)] },
        { tools: [fsRead], messages: [assistant(a), assistant(b)] },
      ]),
    )
    for (const json of [false, true]) {
      const r = await runCli(['audit', ...(json ? ['--json'] : []), f])
      expect(r.status).toBe(0)
      const all = `${r.stdout.toString('utf8')}\n${r.stderr}`
      for (const l of all.split('\n')) expect(l.length).toBeLessThan(2000)
      expect(all.includes('i'.repeat(1001))).toBe(false)
      if (json)
        expect(jsonLines(r.stdout).at(-1)).toMatchObject({
          callsRead: 2,
          repeatedCalls: 1,
          undeclared: [{ tool: 'fs_read', key: 'ffset', calls: 2, firstId: `${'i'.repeat(64)}…` }],
        })
    }
  })

  it('keeps the summary short: a tool name as remembered, and the first 20 keys of a tool, then how many more', async () => {
    const long = `${'T'.repeat(500_000)}\u009b2J`
    const longTool = {
      type: 'function',
      function: { name: long, parameters: { type: 'object', properties: { a: {} } } },
    }
    const keys = (c: number): Record<string, number> =>
      Object.fromEntries(
        Array.from({ length: 30 }, (_, k) => [`k${c}_${String(k).padStart(2, '0')}_${'z'.repeat(75)}`, 1]),
      )
    const f = file(
      'summary.jsonl',
      jsonl([
        { tools: [longTool], messages: [assistant(toolCall('L', long, { a: 1, b: 1 }))] },
        ...[0, 1, 2].map((c) => ({
          tools: [fsRead],
          messages: [assistant(toolCall(`c${c}`, 'fs_read', { path: '/', ...keys(c) }))],
        })),
      ]),
    )
    const r = await runCli(['audit', f])
    expect(r.status).toBe(0)
    const out = lines(r.stdout)
    for (const l of out) expect(l.length).toBeLessThan(2500)
    expect([...r.stdout.toString('utf8')].filter((ch) => ch === '\u001b' || ch === '\u009b')).toEqual([])
    const summary = out.slice(out.findIndex((l) => l.startsWith('toolstack audit: ')))
    // a tool is remembered as a key is: a long name by its start and a digest
    expect(summary.slice(1)).toEqual([
      `  ${rememberedKey(long)}: "b" in 1 call`,
      expect.stringMatching(/^ {2}fs_read: "k0_00_z+" in 1 call, .* and 70 more$/),
    ])
    expect(summary[2]?.split(' in 1 call')).toHaveLength(21)
    const json = jsonLines((await runCli(['audit', '--json', f])).stdout).at(-1) ?? {}
    expect(JSON.stringify(json).length).toBeLessThan(5000)
    const undeclared = json['undeclared'] as AuditSummary['undeclared']
    expect(undeclared.map((k) => k.tool)).toEqual([rememberedKey(long), ...Array<string>(20).fill('fs_read')])
    expect(json['undeclaredKeyCounts']).toEqual([{ tool: 'fs_read', keys: 90 }])
  })

  it(
    'holds no more than its line limit of input that is not JSON Lines (200 MB of binary)',
    { timeout: 120_000 },
    async () => {
      const probe = file(
        'maxrss.mjs',
        "process.on('exit', () => process.stderr.write(`maxrss=${process.resourceUsage().maxRSS}\\n`))\n",
      )
      const bin = join(tmp.dir, 'blob.bin')
      const block = Buffer.alloc(1 << 20, 0xa5)
      for (let i = 0; i < 200; i++) writeFileSync(bin, block, { flag: 'a' })
      const r = await runCli(['audit', bin], { nodeArgs: ['--import', `file://${probe}`] })
      const peakMb = Number(/maxrss=(\d+)/.exec(r.stderr)?.[1]) / 1024
      expect(r.stderr).not.toMatch(/\n\s+at /)
      expect(r.stderr).toContain(
        `toolstack audit: ${bin}:1: a line of ${200 * (1 << 20)} bytes, longer than --max-line-bytes`,
      )
      expect(r.status).toBe(2)
      expect(peakMb).toBeLessThan(200)
    },
  )

  it('exits 2 on a usage error', async () => {
    const none = await runCli(['audit'])
    expect(none.status).toBe(2)
    expect(none.stderr).toContain("missing required argument 'files'")
    expect((await runCli(['audit', '--nope', 'x'])).status).toBe(2)
    expect((await runCli(['frobnicate'])).status).toBe(2)
  })
})

describe('the command itself', () => {
  it('prints help with examples for each subcommand, and exits 0', async () => {
    const top = await runCli(['--help'])
    expect(top.status).toBe(0)
    expect(top.stdout.toString()).toMatch(/audit[\s\S]*proxy[\s\S]*Examples:/)
    for (const sub of ['audit', 'proxy', 'serve', 'check', 'init', 'grants', 'pins']) {
      const r = await runCli([sub, '--help'])
      expect(r.status).toBe(0)
      expect(r.stdout.toString()).toContain(`Usage: toolstack ${sub}`)
      expect(r.stdout.toString()).toContain(`$ toolstack ${sub}`)
    }
  })

  it('names only the official scoped packages in its help, and shows the host configuration as it is', async () => {
    const helps = await Promise.all(
      [
        ['--help'],
        ['audit', '--help'],
        ['proxy', '--help'],
        ['serve', '--help'],
        ['init', '--help'],
        ['check', '--help'],
      ].map(async (args) => (await runCli(args)).stdout.toString()),
    )
    // what npx is told to fetch: the word after each -y, in a command line or in JSON
    const packages = helps.flatMap((h) => [...h.matchAll(/[\s[]"?-y"?,?\s+"?([^\s",\]]+)/g)].map((m) => m[1]))
    expect(packages.length).toBeGreaterThanOrEqual(3)
    expect(helps.join('\n').match(/\bnpx\b/g)?.length).toBe(packages.length)
    for (const p of packages) expect(p?.startsWith('@modelcontextprotocol/')).toBe(true)
    expect(helps.join('\n')).not.toMatch(/(?<!@modelcontextprotocol\/server-)\bmcp-server-/)
    const proxyHelp = helps[2] ?? ''
    expect(proxyHelp.replaceAll('\n  ', '\n')).toContain(HOST_CONFIG)
    // the command's reference shows the same text
    expect(readFileSync(join(root, 'docs/cli.md'), 'utf8')).toContain(HOST_CONFIG)
  })

  it('prints the version from package.json', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
    const r = await runCli(['--version'])
    expect(r.status).toBe(0)
    expect(r.stdout.toString().trim()).toBe(pkg.version)
  })

  it('colours a terminal, and not with NO_COLOR', () => {
    const f = file('s.jsonl', jsonl(drifting))
    // `script` gives the command a real terminal
    const onTty = (env: NodeJS.ProcessEnv): string =>
      execFileSync(
        'script',
        ['-qec', [process.execPath, ...cliArgs('audit', f)].map((a) => `'${a}'`).join(' '), '/dev/null'],
        {
          cwd: root,
          env,
          encoding: 'utf8',
          timeout: 30_000,
        },
      )
    const { NO_COLOR: _ignored, ...plain } = process.env
    expect(onTty(plain)).toContain('\u001b[')
    const noColor = onTty({ ...plain, NO_COLOR: '1' })
    expect(noColor).toContain('carried undeclared')
    expect(noColor).not.toContain('\u001b[')
  })
})

describe.runIf(process.env['TOOLSTACK_SLOW'] === '1')('toolstack audit on a large file (TOOLSTACK_SLOW=1)', () => {
  it(
    'keeps memory flat: peak RSS on ~150 MB of JSON Lines is close to that on ~10 MB',
    { timeout: 600_000 },
    async () => {
      const probe = file(
        'maxrss.mjs',
        "process.on('exit', () => process.stderr.write(`maxrss=${process.resourceUsage().maxRSS}\\n`))\n",
      )
      const write = (name: string, mb: number): string => {
        const p = join(tmp.dir, name)
        const chunks: Array<string> = []
        let size = 0
        let s = 0
        while (size < mb * 1024 * 1024) {
          const turns = Array.from({ length: 12 }, (_, i) => [
            toolCall(`s${s}c${i}`, i % 2 === 0 ? 'fs_read' : 'web_get', { path: `/p/${i}`, url: 'u', ffset: i }),
          ])
          for (const body of session([fsRead, webGet], turns)) {
            const line = JSON.stringify(body) + '\n'
            chunks.push(line)
            size += line.length
          }
          if (chunks.length > 2000) writeFileSync(p, chunks.splice(0).join(''), { flag: 'a' })
          s++
        }
        writeFileSync(p, chunks.join(''), { flag: 'a' })
        return p
      }
      const peak = async (p: string): Promise<number> => {
        const r = await runCli(['audit', '--json', p], { nodeArgs: ['--import', `file://${probe}`] })
        expect(r.status).toBe(0)
        return Number(/maxrss=(\d+)/.exec(r.stderr)?.[1]) / 1024
      }
      const small = await peak(write('small.jsonl', 10))
      const big = await peak(write('big.jsonl', 150))
      console.log(`audit peak RSS: ~10 MB file ${small.toFixed(0)} MB, ~150 MB file ${big.toFixed(0)} MB`)
      expect(big - small).toBeLessThan(60)
    },
  )
})
