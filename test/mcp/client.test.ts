// fromMcpClient over fake clients, exactly: what each request is sent, every page and
// cursor rule, each failure's words, the timeout and abort races, the read-only pool,
// the routes a listing leaves, onToolsChanged, and what construction refuses.
import { ToolListChangedNotificationSchema, PaginatedResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Batch, ToolCall, ToolResult } from '../../src/index.js'
import { batchOf } from '../../src/steps/Batch.js'
import type { McpListingError, McpRequestOptions, McpToolClient, McpToolsPage } from '../../src/mcp/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { call } from '../support/fakes.js'

// ------------------------------------------------------------------------------------
// fixtures
// ------------------------------------------------------------------------------------

afterEach(() => {
  vi.useRealTimers()
})

const tool = (name: string, readOnly = false): unknown => ({
  name,
  inputSchema: { type: 'object' },
  ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
})

const text = (s: string) => ({ content: [{ type: 'text', text: s }] })

const ok = (id: string, s: string): ToolResult => ({
  role: 'tool',
  tool_call_id: id,
  content: s,
  mcp_content: [{ type: 'text', text: s }],
})

const failed = (id: string, content: string): ToolResult => ({
  role: 'tool',
  tool_call_id: id,
  content,
  is_error: true,
})

interface Recorded {
  readonly pages: Array<{ readonly params: unknown; readonly options: unknown }>
  readonly calls: Array<{
    readonly params: unknown
    readonly schema: unknown
    readonly options: McpRequestOptions | undefined
  }>
}

/** A fake client whose pages come by cursor (`''` is the first page) and whose calls `answer` answers; records every request. */
const fake = (
  pages: Readonly<Record<string, McpToolsPage>>,
  answer: (name: string) => unknown = (name) => Promise.resolve(text(name)),
): McpToolClient & Recorded => {
  const pagesAsked: Recorded['pages'] = []
  const calls: Recorded['calls'] = []
  return {
    pages: pagesAsked,
    calls,
    listTools: (params, options) => {
      pagesAsked.push({ params, options })
      const page = pages[params?.cursor ?? '']
      return page === undefined ? Promise.reject(new Error(`no page ${String(params?.cursor)}`)) : Promise.resolve(page)
    },
    callTool: (params, schema, options) => {
      calls.push({ params, schema, options })
      return answer(params.name) as Promise<unknown>
    },
  }
}

const oneTool = (...tools: ReadonlyArray<unknown>) => fake({ '': { tools } })

const rightOf = <A>(
  e: { readonly _tag: 'Left'; readonly left: unknown } | { readonly _tag: 'Right'; readonly right: A },
): A => {
  if (e._tag === 'Left') throw new Error(`expected a Right, got Left ${JSON.stringify(e.left)}`)
  return e.right
}

const leftOf = <A>(
  e: { readonly _tag: 'Left'; readonly left: McpListingError } | { readonly _tag: 'Right'; readonly right: A },
): McpListingError => {
  if (e._tag === 'Right') throw new Error('expected a Left')
  return e.left
}

/** Lets every pending promise callback run (no timers involved). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve()
}

const deferred = () => {
  let resolve: (u: unknown) => void = () => undefined
  const promise = new Promise<unknown>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

// ------------------------------------------------------------------------------------
// listing
// ------------------------------------------------------------------------------------

describe('fromMcpClient: what a listing asks', () => {
  it('asks for the first page without a cursor, then each page with the cursor the last one gave, with the request options', async () => {
    const client = fake({
      '': { tools: [tool('a')], nextCursor: 'c1' },
      c1: { tools: [tool('b')], nextCursor: 'c2' },
      c2: { tools: [tool('c')] },
    })
    const listed = rightOf(await fromMcpClient(client).toolsForLlm())
    expect(listed.map((d) => d.function.name)).toStrictEqual(['a', 'b', 'c'])
    expect(client.pages).toStrictEqual([
      { params: {}, options: { timeout: 60_000 } },
      { params: { cursor: 'c1' }, options: { timeout: 60_000 } },
      { params: { cursor: 'c2' }, options: { timeout: 60_000 } },
    ])
    const signal = new AbortController().signal
    const withOptions = fake({ '': { tools: [] } })
    rightOf(await fromMcpClient(withOptions, { timeout: 5, signal }).toolsForLlm())
    expect(withOptions.pages).toStrictEqual([{ params: {}, options: { timeout: 5, signal } }])
    expect((withOptions.pages[0]?.options as McpRequestOptions).signal).toBe(signal)
  })

  it('asks a refused page again as a plain request, with its cursor and the same options', async () => {
    const requests: Array<readonly [unknown, unknown, unknown]> = []
    const refused = Object.assign(new Error('invalid page'), { name: 'ZodError', issues: [] })
    const client: McpToolClient = {
      listTools: (params) =>
        params?.cursor === undefined
          ? Promise.resolve({ tools: [tool('a')], nextCursor: 'c1' })
          : Promise.reject(refused),
      callTool: () => Promise.resolve(text('x')),
      request: (r, schema, options) => {
        requests.push([r, schema, options])
        return Promise.resolve({ tools: [tool('b')], nextCursor: null })
      },
    }
    const listed = rightOf(await fromMcpClient(client, { timeout: 7 }).toolsForLlm())
    expect(listed.map((d) => d.function.name)).toStrictEqual(['a', 'b'])
    expect(requests).toStrictEqual([
      [{ method: 'tools/list', params: { cursor: 'c1' } }, PaginatedResultSchema, { timeout: 7 }],
    ])
  })

  it('asks again for anything thrown without a numeric code, and for nothing with one', async () => {
    const asked = async (e: unknown): Promise<number> => {
      let n = 0
      const client: McpToolClient = {
        listTools: () => Promise.reject(e),
        callTool: () => Promise.resolve(text('x')),
        request: () => {
          n++
          return Promise.resolve({ tools: [] })
        },
      }
      await fromMcpClient(client).toolsForLlm()
      return n
    }
    expect(await asked(null)).toBe(1)
    expect(await asked(undefined)).toBe(1)
    expect(await asked('a string')).toBe(1)
    expect(await asked({ code: '-32603' })).toBe(1)
    expect(await asked(new Error('plain'))).toBe(1)
    expect(await asked({ code: -32603 })).toBe(0)
    expect(await asked(Object.assign(new Error('closed'), { code: -32000 }))).toBe(0)
  })

  it('a failure names the page it happened on and keeps what was thrown', async () => {
    const boom = new Error('boom\nat somewhere')
    const client: McpToolClient = {
      listTools: (params) =>
        params?.cursor === undefined
          ? Promise.resolve({ tools: [tool('a')], nextCursor: 'next' })
          : Promise.reject(boom),
      callTool: () => Promise.resolve(text('x')),
    }
    const failure = leftOf(await fromMcpClient(client).toolsForLlm())
    expect(failure).toStrictEqual({
      _tag: 'McpListingError',
      message: 'tools/list failed on page 2: boom',
      cause: boom,
    })
    expect(failure.cause).toBe(boom)
  })

  it('a cursor handed back a second time fails the listing on that page', async () => {
    const client = fake({
      '': { tools: [tool('a')], nextCursor: 'x' },
      x: { tools: [tool('b')], nextCursor: 'y' },
      y: { tools: [tool('c')], nextCursor: 'x' },
    })
    const failure = leftOf(await fromMcpClient(client).toolsForLlm())
    expect(failure).toStrictEqual({
      _tag: 'McpListingError',
      message: 'tools/list failed on page 3: the server repeated the cursor "x"',
      cause: undefined,
    })
    expect(client.pages.map((p) => p.params)).toStrictEqual([{}, { cursor: 'x' }, { cursor: 'y' }])
  })

  it('reads at most 10 000 pages', async () => {
    const paging = (last: number) => {
      let asked = 0
      const client: McpToolClient = {
        listTools: (params) => {
          asked++
          const n = params?.cursor === undefined ? 1 : Number(params.cursor)
          return Promise.resolve(
            n === 1
              ? { tools: [tool('first')], nextCursor: '2' }
              : n < last
                ? { tools: [], nextCursor: String(n + 1) }
                : { tools: [tool('last')] },
          )
        },
        callTool: () => Promise.resolve(text('x')),
      }
      return { client, asked: () => asked }
    }
    const exactly = paging(10_000)
    expect(rightOf(await fromMcpClient(exactly.client).toolsForLlm()).map((d) => d.function.name)).toStrictEqual([
      'first',
      'last',
    ])
    expect(exactly.asked()).toBe(10_000)
    const more = paging(10_001)
    expect(leftOf(await fromMcpClient(more.client).toolsForLlm())).toStrictEqual({
      _tag: 'McpListingError',
      message: 'tools/list failed: more than 10000 pages',
      cause: undefined,
    })
    expect(more.asked()).toBe(10_000)
  })
})

describe('fromMcpClient: how a listing failure is worded', () => {
  const messageOf = async (e: unknown): Promise<string> =>
    leftOf(
      await fromMcpClient({ listTools: () => Promise.reject(e), callTool: () => Promise.resolve({}) }).toolsForLlm(),
    ).message

  it('tells a schema error by its name or by its issues, and only on an Error', async () => {
    expect(await messageOf(Object.assign(new Error('by issues'), { issues: [{}] }))).toBe(
      'tools/list failed on page 1: the answer could not be read (by issues)',
    )
    expect(await messageOf(Object.assign(new Error('by name'), { name: 'ZodError' }))).toBe(
      'tools/list failed on page 1: the answer could not be read (by name)',
    )
    expect(await messageOf(Object.assign(new Error('issues not a list'), { issues: 'many' }))).toBe(
      'tools/list failed on page 1: issues not a list',
    )
    expect(await messageOf({ name: 'ZodError', issues: [] })).toBe(
      'tools/list failed on page 1: {"name":"ZodError","issues":[]}',
    )
  })

  it('"Not connected" means closed only from an Error; a code means what it says on any object', async () => {
    expect(await messageOf({ message: 'Not connected' })).toBe(
      'tools/list failed on page 1: {"message":"Not connected"}',
    )
    expect(await messageOf(new Error('Not connected at all'))).toBe('tools/list failed on page 1: Not connected at all')
    expect(await messageOf({ code: -32000 })).toBe(
      'tools/list failed on page 1: the connection to the MCP server is closed',
    )
    expect(await messageOf({ code: -32001 })).toBe('tools/list failed on page 1: the MCP server did not answer in time')
    expect(await messageOf({ code: -32002, message: 'other' })).toBe(
      'tools/list failed on page 1: {"code":-32002,"message":"other"}',
    )
  })

  it('takes the first line with anything but blanks on it, cut at 300 characters', async () => {
    expect(await messageOf(new Error('   \n\t\nthe real line\nmore'))).toBe(
      'tools/list failed on page 1: the real line',
    )
    expect(await messageOf(new Error(`${'y'.repeat(301)}\nnext`))).toBe(
      `tools/list failed on page 1: ${'y'.repeat(300)}…`,
    )
    // only the text's first 2,400 characters are split: a line after them is not looked for
    expect(await messageOf(new Error(`${'\n'.repeat(3000)}far down`))).toBe(
      `tools/list failed on page 1: ${'\\u000a'.repeat(50)}…`,
    )
    // nothing but blanks: the text as it came, its line break escaped
    expect(await messageOf(new Error(' \n '))).toBe('tools/list failed on page 1:  \\u000a ')
  })
})

describe('fromMcpClient: what a listing publishes', () => {
  it('offers a description only when it is a string, parameters only when an object, and read-only only on readOnlyHint: true', async () => {
    const client = oneTool(
      { name: 'plain' },
      {
        name: 'described',
        description: 'says what it does',
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: true },
      },
      { name: 'odd', description: 7, inputSchema: [{ type: 'object' }], annotations: { readOnlyHint: 'true' } },
      { name: 'listy', inputSchema: null, annotations: Object.assign([], { readOnlyHint: true }) },
      { name: 'no.notes', annotations: null },
    )
    const tools = fromMcpClient(client)
    expect(tools.tools()).toStrictEqual([])
    const declarations = rightOf(await tools.toolsForLlm())
    expect(declarations).toStrictEqual([
      { type: 'function', function: { name: 'plain' } },
      {
        type: 'function',
        function: {
          name: 'described',
          description: 'says what it does',
          parameters: { type: 'object', properties: {} },
        },
      },
      { type: 'function', function: { name: 'odd' } },
      { type: 'function', function: { name: 'listy' } },
      { type: 'function', function: { name: 'no_notes_9e464601' } },
    ])
    expect(tools.tools()).toStrictEqual([
      { name: 'plain', mcpName: 'plain', readOnly: false },
      // the annotations as listed, when an object: what the gateway's pins keep with a definition
      { name: 'described', mcpName: 'described', readOnly: true, annotations: { readOnlyHint: true } },
      { name: 'odd', mcpName: 'odd', readOnly: false, annotations: { readOnlyHint: 'true' } },
      { name: 'listy', mcpName: 'listy', readOnly: false },
      { name: 'no_notes_9e464601', mcpName: 'no.notes', readOnly: false },
    ])
  })

  it('routes by the last successful listing, without listing again for each batch', async () => {
    let listing: ReadonlyArray<unknown> | 'fail' = [tool('a')]
    let listings = 0
    const called: Array<string> = []
    const client: McpToolClient = {
      listTools: () => {
        listings++
        return listing === 'fail' ? Promise.reject(new Error('down')) : Promise.resolve({ tools: listing })
      },
      callTool: (p) => {
        called.push(p.name)
        return Promise.resolve(text(p.name))
      },
    }
    const tools = fromMcpClient(client)
    rightOf(await tools.toolsForLlm())
    const first = tools.tools()
    expect(rightOf(await tools.executeToolCalls([call('1', 'a')])())).toStrictEqual([ok('1', 'a')])
    expect(rightOf(await tools.executeToolCalls([call('2', 'a')])())).toStrictEqual([ok('2', 'a')])
    expect(listings).toBe(1)
    listing = 'fail'
    expect(leftOf(await tools.toolsForLlm()).message).toBe('tools/list failed on page 1: down')
    expect(tools.tools()).toBe(first)
    expect(rightOf(await tools.executeToolCalls([call('3', 'a')])())).toStrictEqual([ok('3', 'a')])
    listing = [tool('b')]
    rightOf(await tools.toolsForLlm())
    expect(tools.tools()).toStrictEqual([{ name: 'b', mcpName: 'b', readOnly: false }])
    expect(rightOf(await tools.executeToolCalls([call('4', 'a')])())).toStrictEqual([
      failed('4', 'there is no tool named "a" on this MCP server; the tool was not called'),
    ])
    expect(called).toStrictEqual(['a', 'a', 'a'])
    expect(listings).toBe(3)
  })

  it('a listed tool that throws when read fails the listing, and answers every call of a batch that needed it', async () => {
    const hostile = {
      get name(): string {
        throw new Error('no name for you')
      },
    }
    const tools = fromMcpClient(oneTool(tool('a'), hostile))
    const failure = leftOf(await tools.toolsForLlm())
    expect(failure.message).toBe('tools/list failed: no name for you')
    expect(failure.cause).toBeInstanceOf(Error)
    expect(tools.tools()).toStrictEqual([])
    expect(rightOf(await tools.executeToolCalls([call('1', 'a'), call('2', 'b')])())).toStrictEqual([
      failed('1', 'the MCP provider failed: no name for you'),
      failed('2', 'the MCP provider failed: no name for you'),
    ])
  })
})

// ------------------------------------------------------------------------------------
// calling
// ------------------------------------------------------------------------------------

describe('fromMcpClient: what a call sends', () => {
  it('sends the MCP name and the arguments, no schema, and the timeout with a signal of its own', async () => {
    const outer = new AbortController()
    const client = oneTool(tool('files.read'))
    const tools = fromMcpClient(client, { timeout: 1234, signal: outer.signal })
    const name = rightOf(await tools.toolsForLlm())[0]?.function.name ?? ''
    expect(rightOf(await tools.executeToolCalls([call('1', name, { path: 'a' })])())).toStrictEqual([
      ok('1', 'files.read'),
    ])
    expect(client.calls).toHaveLength(1)
    const sent = client.calls[0]
    expect(sent?.params).toStrictEqual({ name: 'files.read', arguments: { path: 'a' } })
    expect(sent?.schema).toBe(undefined)
    expect(Object.keys(sent?.options ?? {})).toStrictEqual(['timeout', 'signal'])
    expect(sent?.options?.timeout).toBe(1234)
    expect(sent?.options?.signal).toBeInstanceOf(AbortSignal)
    expect(sent?.options?.signal).not.toBe(outer.signal)
    const byDefault = oneTool(tool('a'))
    await fromMcpClient(byDefault).executeToolCalls([call('1', 'a')])()
    expect(byDefault.calls[0]?.options?.timeout).toBe(60_000)
  })

  it('an empty batch asks nothing and answers nothing; a batch that is not a list is one refusal', async () => {
    const client = oneTool(tool('a'))
    const tools = fromMcpClient(client)
    expect(await tools.executeToolCalls([])()).toStrictEqual({ _tag: 'Right', right: [] })
    const refusal = rightOf(await tools.executeToolCalls('not a list' as never)())
    expect(refusal).toHaveLength(1)
    expect(refusal[0]).toMatchObject({ role: 'tool', tool_call_id: '', is_error: true })
    expect(refusal[0]?.content).toMatch(/^this batch of tool calls could not be read: .+; no call was run$/)
    expect([client.pages.length, client.calls.length]).toStrictEqual([0, 0])
  })
})

describe('fromMcpClient: a call that fails on the client side', () => {
  it('a callTool that throws at once is a failed call; one that answers a plain value is answered', async () => {
    const client: McpToolClient = {
      listTools: () => Promise.resolve({ tools: [tool('sync'), tool('plain')] }),
      callTool: (p) => {
        if (p.name === 'sync') throw new Error('thrown at once\nstack')
        return text('not a promise') as unknown as Promise<unknown>
      },
    }
    const out = rightOf(await fromMcpClient(client).executeToolCalls([call('1', 'sync'), call('2', 'plain')])())
    expect(out).toStrictEqual([failed('1', 'the tool call failed: thrown at once'), ok('2', 'not a promise')])
  })

  it('an answer that throws when read is an is_error result saying the answer could not be read', async () => {
    const hostile = {
      get content(): unknown {
        throw new Error('bad getter')
      },
    }
    const out = rightOf(await fromMcpClient(oneTool(tool('a')), {}).executeToolCalls([call('1', 'a')])())
    expect(out).toStrictEqual([ok('1', 'a')])
    const client = fake({ '': { tools: [tool('a')] } }, () => Promise.resolve(hostile))
    expect(rightOf(await fromMcpClient(client).executeToolCalls([call('1', 'a')])())).toStrictEqual([
      failed('1', "the MCP server's answer could not be read (bad getter)"),
    ])
  })

  it('a batch whose arguments cannot be read answers that call alone', async () => {
    const client = oneTool(tool('a'))
    const good = batchOf([call('1', 'a'), call('2', 'a')])
    const batch: Batch = {
      calls: good.calls,
      argsAt: (i) => {
        if (i === 0) throw new Error('argsAt broke')
        return good.argsAt(i)
      },
    }
    const tools = fromMcpClient(client)
    const run = tools.executeBatch(batch)
    expect(rightOf(await run())).toStrictEqual([
      failed('1', 'the call could not be read (argsAt broke); the tool was not called'),
      ok('2', 'a'),
    ])
  })

  it('a position that cannot be read is answered for itself, whether the listing worked or not', async () => {
    const calls = [call('1', 'r')] as Array<ToolCall>
    Object.defineProperty(calls, 1, {
      get: () => {
        throw new Error('slot 1 is cursed')
      },
      enumerable: true,
    })
    calls.push(call('3', 'r'))
    const unreadable = failed(
      '',
      'the tool call at position 1 of the batch could not be read (slot 1 is cursed), so it was not run',
    )
    const down = fromMcpClient({
      listTools: () => Promise.reject(new Error('down')),
      callTool: () => Promise.resolve({}),
    })
    const why =
      "the MCP server's tools could not be listed to route this call (tools/list failed on page 1: down); the tool was not called"
    expect(rightOf(await down.executeToolCalls(calls)())).toStrictEqual([
      failed('1', why),
      unreadable,
      failed('3', why),
    ])
    for (const readOnlyConcurrency of [1, 3]) {
      const up = fromMcpClient(oneTool(tool('r', true)), { readOnlyConcurrency })
      expect(rightOf(await up.executeToolCalls(calls)())).toStrictEqual([ok('1', 'r'), unreadable, ok('3', 'r')])
    }
  })
})

/** A client whose one tool, `slow`, never answers; `given` is the signal its call was given. */
const neverAnswering = () => {
  let signal: AbortSignal | undefined
  const client: McpToolClient = {
    listTools: () => Promise.resolve({ tools: [tool('slow')] }),
    callTool: (_p, _s, options) => {
      signal = options?.signal
      return new Promise(() => undefined)
    },
  }
  return { client, given: () => signal }
}
describe('fromMcpClient: timeout and abort', () => {
  it('an answer clears its timer, and a later abort of the signal reaches no finished call', async () => {
    vi.useFakeTimers()
    const outer = new AbortController()
    const client = oneTool(tool('a'), tool('b'))
    const tools = fromMcpClient(client, { timeout: 30, signal: outer.signal })
    rightOf(await tools.toolsForLlm())
    expect(rightOf(await tools.executeToolCalls([call('1', 'a'), call('2', 'b')])())).toStrictEqual([
      ok('1', 'a'),
      ok('2', 'b'),
    ])
    expect(vi.getTimerCount()).toBe(0)
    outer.abort(new Error('too late'))
    await vi.advanceTimersByTimeAsync(1000)
    expect(client.calls.map((c) => c.options?.signal?.aborted)).toStrictEqual([false, false])
  })

  it('times out at the timeout, not before, and aborts the signal the client was given with the reason', async () => {
    vi.useFakeTimers()
    const { client, given } = neverAnswering()
    const tools = fromMcpClient(client, { timeout: 30 })
    rightOf(await tools.toolsForLlm())
    let out: ReadonlyArray<ToolResult> | undefined
    void tools
      .executeToolCalls([call('1', 'slow')])()
      .then((r) => {
        out = rightOf(r)
      })
    await vi.advanceTimersByTimeAsync(29)
    expect(out).toBe(undefined)
    expect(given()?.aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(out).toStrictEqual([
      failed(
        '1',
        'the MCP server did not answer within 30 ms, so the call was cancelled; the tool may or may not have run',
      ),
    ])
    expect(given()?.aborted).toBe(true)
    expect(given()?.reason).toBeInstanceOf(Error)
    expect((given()?.reason as Error).message).toBe('timed out after 30 ms')
    expect(vi.getTimerCount()).toBe(0)
  })

  it('an abort ends the call in flight at once, passes its reason on, and clears the timer', async () => {
    vi.useFakeTimers()
    const outer = new AbortController()
    const { client, given } = neverAnswering()
    const tools = fromMcpClient(client, { timeout: 10_000, signal: outer.signal })
    rightOf(await tools.toolsForLlm())
    let out: ReadonlyArray<ToolResult> | undefined
    void tools
      .executeToolCalls([call('1', 'slow')])()
      .then((r) => {
        out = rightOf(r)
      })
    await settle()
    expect(given()?.aborted).toBe(false)
    const reason = new Error('stop pressed\nby the user')
    outer.abort(reason)
    await settle()
    expect(out).toStrictEqual([failed('1', 'the call was aborted (stop pressed); the tool may or may not have run')])
    expect(given()?.aborted).toBe(true)
    expect(given()?.reason).toBe(reason)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('a signal aborted before the batch calls nothing and words any reason', async () => {
    const client = oneTool(tool('a'))
    const outer = new AbortController()
    outer.abort('the user left')
    const out = rightOf(
      await fromMcpClient(client, { signal: outer.signal }).executeToolCalls([call('1', 'a'), call('2', 'a')])(),
    )
    expect(out).toStrictEqual([
      failed('1', 'the call was aborted (the user left); the tool may or may not have run'),
      failed('2', 'the call was aborted (the user left); the tool may or may not have run'),
    ])
    expect(client.calls).toStrictEqual([])
  })
})

// ------------------------------------------------------------------------------------
// concurrency
// ------------------------------------------------------------------------------------

describe('fromMcpClient: read-only concurrency', () => {
  /** A client whose calls end only when the test says; records when each starts. */
  const controlled = (tools: ReadonlyArray<unknown>) => {
    const started: Array<string> = []
    const pending = new Map<string, (u: unknown) => void>()
    const client: McpToolClient = {
      listTools: () => Promise.resolve({ tools }),
      callTool: (p) => {
        const id = String(p.arguments?.['id'])
        started.push(id)
        const d = deferred()
        pending.set(id, d.resolve)
        return d.promise
      },
    }
    const end = async (id: string): Promise<void> => {
      const r = pending.get(id)
      if (r === undefined) throw new Error(`${id} has not started`)
      pending.delete(id)
      r(text(`done ${id}`))
      await settle()
    }
    return { client, started, end, running: () => [...pending.keys()] }
  }

  it('runs at most readOnlyConcurrency read-only calls at once, starting each as another ends, answering in the caller’s order', async () => {
    const c = controlled([tool('r', true)])
    const tools = fromMcpClient(c.client, { readOnlyConcurrency: 2 })
    rightOf(await tools.toolsForLlm())
    let out: ReadonlyArray<ToolResult> | undefined
    void tools
      .executeToolCalls(['1', '2', '3', '4', '5'].map((id) => call(id, 'r', { id })))()
      .then((r) => {
        out = rightOf(r)
      })
    await settle()
    expect(c.running()).toStrictEqual(['1', '2'])
    await c.end('2')
    expect(c.running()).toStrictEqual(['1', '3'])
    await c.end('3')
    expect(c.running()).toStrictEqual(['1', '4'])
    await c.end('1')
    expect(c.running()).toStrictEqual(['4', '5'])
    await c.end('5')
    expect(out).toBe(undefined)
    await c.end('4')
    expect(c.started).toStrictEqual(['1', '2', '3', '4', '5'])
    expect(out).toStrictEqual(['1', '2', '3', '4', '5'].map((id) => ok(id, `done ${id}`)))
  })

  it('starts every call of a group smaller than the limit', async () => {
    const c = controlled([tool('r', true)])
    const tools = fromMcpClient(c.client, { readOnlyConcurrency: Number.MAX_SAFE_INTEGER })
    rightOf(await tools.toolsForLlm())
    void tools.executeToolCalls([call('1', 'r', { id: '1' }), call('2', 'r', { id: '2' })])()
    await settle()
    expect(c.running()).toStrictEqual(['1', '2'])
    await c.end('1')
    await c.end('2')
  })

  it('a call that is not read-only waits for the calls before it and holds back the calls after it', async () => {
    const c = controlled([tool('r', true), tool('w')])
    const tools = fromMcpClient(c.client, { readOnlyConcurrency: 4 })
    rightOf(await tools.toolsForLlm())
    let out: ReadonlyArray<ToolResult> | undefined
    const batch = [
      call('w1', 'w', { id: 'w1' }),
      call('r1', 'r', { id: 'r1' }),
      call('x', 'nope'),
      call('w2', 'w', { id: 'w2' }),
      call('r2', 'r', { id: 'r2' }),
      call('r3', 'r', { id: 'r3' }),
    ]
    void tools
      .executeToolCalls(batch)()
      .then((r) => {
        out = rightOf(r)
      })
    await settle()
    expect(c.running()).toStrictEqual(['w1'])
    await c.end('w1')
    expect(c.running()).toStrictEqual(['r1'])
    await c.end('r1')
    expect(c.running()).toStrictEqual(['w2'])
    await c.end('w2')
    expect(c.running()).toStrictEqual(['r2', 'r3'])
    await c.end('r3')
    await c.end('r2')
    expect(out).toStrictEqual([
      ok('w1', 'done w1'),
      ok('r1', 'done r1'),
      failed('x', 'there is no tool named "nope" on this MCP server; the tool was not called'),
      ok('w2', 'done w2'),
      ok('r2', 'done r2'),
      ok('r3', 'done r3'),
    ])
  })

  it('with the default of 1, read-only calls run one at a time too', async () => {
    const c = controlled([tool('r', true)])
    const tools = fromMcpClient(c.client)
    rightOf(await tools.toolsForLlm())
    void tools.executeToolCalls([call('1', 'r', { id: '1' }), call('2', 'r', { id: '2' })])()
    await settle()
    expect(c.running()).toStrictEqual(['1'])
    await c.end('1')
    expect(c.running()).toStrictEqual(['2'])
    await c.end('2')
  })
})

// ------------------------------------------------------------------------------------
// notifications
// ------------------------------------------------------------------------------------

describe('fromMcpClient: onToolsChanged', () => {
  const withHandler = () => {
    const installed: Array<readonly [unknown, (n: unknown) => void | Promise<void>]> = []
    const client: McpToolClient = {
      ...oneTool(),
      setNotificationHandler: (schema, handler) => {
        installed.push([schema, handler])
      },
    }
    const fire = (): void => {
      for (const [, h] of installed) void h({ method: 'notifications/tools/list_changed' })
    }
    return { client, installed, fire }
  }

  it('installs one handler for the list_changed schema on the first subscription, and tells every listener, in order', () => {
    const h = withHandler()
    const tools = fromMcpClient(h.client)
    const said: Array<string> = []
    const a = (): void => void said.push('a')
    const stopA1 = tools.onToolsChanged(a)
    tools.onToolsChanged(() => {
      throw new Error('a listener that throws')
    })
    tools.onToolsChanged(a)
    const stopB = tools.onToolsChanged(() => void said.push('b'))
    expect(h.installed).toHaveLength(1)
    expect(h.installed[0]?.[0]).toBe(ToolListChangedNotificationSchema)
    h.fire()
    expect(said).toStrictEqual(['a', 'a', 'b'])
    // unsubscribing is by subscription: `a`'s other subscription stays
    stopA1()
    stopA1()
    h.fire()
    expect(said).toStrictEqual(['a', 'a', 'b', 'a', 'b'])
    stopB()
    h.fire()
    expect(said).toStrictEqual(['a', 'a', 'b', 'a', 'b', 'a'])
    tools.onToolsChanged(() => void said.push('c'))
    expect(h.installed).toHaveLength(1)
  })

  it('a client without setNotificationHandler takes subscriptions and never calls them', () => {
    const tools = fromMcpClient(oneTool())
    const stop = tools.onToolsChanged(() => {
      throw new Error('never')
    })
    expect(typeof stop).toBe('function')
    stop()
  })
})

// ------------------------------------------------------------------------------------
// construction
// ------------------------------------------------------------------------------------

describe('fromMcpClient: construction', () => {
  const client = oneTool()

  it('refuses what is not a client, naming what came or what is missing', () => {
    expect(() => fromMcpClient('client' as never)).toThrow(
      new TypeError('fromMcpClient: expected an MCP client (with listTools and callTool), got the string "client"'),
    )
    expect(() => fromMcpClient(undefined as never)).toThrow(
      new TypeError('fromMcpClient: expected an MCP client (with listTools and callTool), got undefined'),
    )
    const fn = Object.assign(() => undefined, { listTools: () => undefined, callTool: () => undefined })
    expect(() => fromMcpClient(fn as never)).toThrow(
      new TypeError(
        'fromMcpClient: expected an MCP client (with listTools and callTool), got a function of 0 parameters',
      ),
    )
    expect(() => fromMcpClient({} as never)).toThrow(
      new TypeError(
        'fromMcpClient: expected an MCP client, but `listTools` is not a function and `callTool` is not a function',
      ),
    )
    expect(() => fromMcpClient({ listTools: 'yes', callTool: () => undefined } as never)).toThrow(
      new TypeError('fromMcpClient: expected an MCP client, but `listTools` is not a function'),
    )
  })

  it('refuses options outside their range, with the words of the range', () => {
    const ms = 'a whole number of milliseconds between 1 and 2147483647'
    const refused: ReadonlyArray<readonly [unknown, string]> = [
      [{ timeout: '5' }, `timeout must be ${ms}, got the string "5"`],
      [{ timeout: 0 }, `timeout must be ${ms}, got number 0`],
      [{ timeout: 2_147_483_648 }, `timeout must be ${ms}, got number 2147483648`],
      [{ timeout: 2.5 }, `timeout must be ${ms}, got number 2.5`],
      [{ readOnlyConcurrency: 0 }, 'readOnlyConcurrency must be a whole number of at least 1, got number 0'],
      [{ readOnlyConcurrency: '2' }, 'readOnlyConcurrency must be a whole number of at least 1, got the string "2"'],
      [
        { readOnlyConcurrency: Number.MAX_SAFE_INTEGER + 1 },
        'readOnlyConcurrency must be a whole number of at least 1, got number 9007199254740992',
      ],
      [{ signal: {} }, 'signal must be an AbortSignal, got an object'],
    ]
    for (const [options, message] of refused) {
      expect(() => fromMcpClient(client, options as never)).toThrow(new TypeError(`fromMcpClient: ${message}`))
    }
  })

  it('takes each end of each range', async () => {
    for (const timeout of [1, 2_147_483_647]) {
      const c = oneTool()
      await fromMcpClient(c, { timeout }).toolsForLlm()
      expect(c.pages[0]?.options).toStrictEqual({ timeout })
    }
    for (const readOnlyConcurrency of [1, Number.MAX_SAFE_INTEGER]) {
      expect(() => fromMcpClient(client, { readOnlyConcurrency })).not.toThrow()
    }
  })
})
