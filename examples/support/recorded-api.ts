// A stand-in for a hosted model API, for the examples that drive a real SDK offline: an HTTP server on
// 127.0.0.1 that answers each request with a recorded response, as JSON or as server-sent events. Point the
// SDK's own client at `url` (its `baseURL`, `httpOptions.baseUrl`, `ANTHROPIC_BASE_URL`); drop that option and
// set the API key, and nothing else in the example changes.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the server answers: JSON, or events (`event` named when given) ending in a blank line. */
export type Recorded =
  { readonly json: unknown } | { readonly events: ReadonlyArray<{ readonly event?: string; readonly data: unknown }> }

export interface RecordedApi {
  readonly url: string
  readonly close: () => Promise<void>
}

/** Starts the server; `answer` gets each request's path and parsed JSON body. */
export const recordedApi = async (answer: (path: string, body: unknown) => Recorded): Promise<RecordedApi> => {
  const server = createServer((req, res) => {
    let text = ''
    req.setEncoding('utf8').on('data', (c: string) => (text += c))
    req.on('end', () => {
      let body: unknown
      try {
        body = text === '' ? undefined : (JSON.parse(text) as unknown)
      } catch {
        body = undefined
      }
      const a = answer(req.url ?? '', body)
      if ('json' in a) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a.json))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const e of a.events)
        res.write(`${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${JSON.stringify(e.data)}\n\n`)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A Messages API message as the API streams it (what Claude Code asks for): its blocks' starts, deltas and stops. */
export const messageEvents = (message: {
  readonly content: ReadonlyArray<Record<string, unknown>>
  readonly stop_reason: string
}): ReadonlyArray<{ readonly event: string; readonly data: unknown }> => [
  { event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null } } },
  ...message.content.flatMap((block, index) => {
    const streamed = block['type'] === 'tool_use' || block['type'] === 'server_tool_use'
    const start = block['type'] === 'text' ? { ...block, text: '' } : streamed ? { ...block, input: {} } : block
    const delta =
      block['type'] === 'text'
        ? [{ type: 'text_delta', text: block['text'] }]
        : streamed
          ? [{ type: 'input_json_delta', partial_json: JSON.stringify(block['input']) }]
          : []
    return [
      { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } },
      ...delta.map((d) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } })),
      { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
    ]
  }),
  {
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: 1 },
    },
  },
  { event: 'message_stop', data: { type: 'message_stop' } },
]

/** How many assistant turns a Messages API request carries: the turn a model is answering. */
export const assistantTurns = (body: unknown): number => {
  if (typeof body !== 'object' || body === null || !('messages' in body) || !Array.isArray(body.messages)) return 0
  return body.messages.filter(
    (m: unknown) => typeof m === 'object' && m !== null && 'role' in m && m.role === 'assistant',
  ).length
}
