// The recorded Messages API responses of test/anthropic/fixtures (written from the SDK's own types), as JSON
// answers and as the server-sent events of a streamed response, and the tools the loops declare.
import { readFileSync } from 'node:fs'
import type { Message, Tool } from '@anthropic-ai/sdk/resources/messages'
import type { ToolDeclaration } from '../../src/index.js'
import type { Answer, Event } from '../support/loopback.js'

const fixture = (name: string): Message =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as Message

/**
 * The recorded turns, in the order of a loop: a call carrying a misspelt nested key (`options.encodng`); a server
 * tool's blocks beside a second call with the same key; a parallel pair, one carrying a key of its own; the answer.
 */
export const turns = (): ReadonlyArray<Message> => [
  fixture('tool-use-nested'),
  fixture('server-tool'),
  fixture('parallel'),
  fixture('final'),
]

export const asJson = (m: Message): Answer => ({ json: m })

// a block as it starts in a stream: a tool use's input comes after, in deltas
const started = (block: Record<string, unknown>): Record<string, unknown> => {
  if (block['type'] === 'text') return { ...block, text: '' }
  if (block['type'] === 'tool_use' || block['type'] === 'server_tool_use') return { ...block, input: {} }
  return block
}

// a JSON text in three deltas, cut anywhere: a reader must join them before it parses
const inThree = (text: string): ReadonlyArray<string> => {
  const a = Math.floor(text.length / 3)
  const b = Math.floor((2 * text.length) / 3)
  return [text.slice(0, a), text.slice(a, b), text.slice(b)]
}

/** A message as the Messages API streams it: message_start, each block's start, deltas and stop, message_delta, message_stop. */
export const asEvents = (m: Message): ReadonlyArray<Event> => {
  const events: Array<Event> = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 1 } },
      },
    },
    { event: 'ping', data: { type: 'ping' } },
  ]
  m.content.forEach((b, index) => {
    const block = b as unknown as Record<string, unknown>
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: started(block) },
    })
    if (block['type'] === 'text')
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block['text'] } },
      })
    if (block['type'] === 'tool_use' || block['type'] === 'server_tool_use')
      for (const partial_json of inThree(JSON.stringify(block['input'])))
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
        })
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
  })
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: m.stop_reason, stop_sequence: null },
        usage: { output_tokens: m.usage.output_tokens },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  )
  return events
}

export const asStream = (m: Message): Answer => ({ sse: asEvents(m) })

/** The two tools the recorded turns call, as a host that keeps its own writes them for the API. */
export const ownTools: Array<Tool> = [
  {
    name: 'read_file',
    description: 'Reads a file',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        options: { type: 'object', properties: { encoding: { type: 'string' }, offset: { type: 'number' } } },
      },
      required: ['path'],
    },
  },
  {
    name: 'write_file',
    description: 'Writes a file',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
]

/** The same tools as a toolstack stack declares them. */
export const declarations: ReadonlyArray<ToolDeclaration> = ownTools.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description ?? '', parameters: t.input_schema },
}))
