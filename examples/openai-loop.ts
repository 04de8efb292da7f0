// A complete tool loop in the OpenAI chat-completions shape, over a real MCP server.
// The "model" is scripted (no network, no key) but has the very signature of
// `openai.chat.completions.create`, so swapping in `new OpenAI()` changes nothing
// else. The MCP server runs in-process; its tool names (`notes.search`) are not
// legal function names, so the model sees mapped ones and calls route back.
// Run with: npm run example:openai-loop
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessage,
  ChatCompletionMessageCustomToolCall,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import { z } from 'zod'
import { fromMcpClient } from 'toolstack/mcp'
import { executeChatToolCalls, toToolMessages } from 'toolstack/openai'

// ------------------------------------------------------------------------------------
// an MCP server with two tools
// ------------------------------------------------------------------------------------

const notes: Record<string, string> = {
  'plans.md': 'Ship the MCP adapter on Friday. The deadline for the demo is 2 December.',
  'groceries.md': 'Milk, bread, coffee.',
}

const server = new McpServer({ name: 'notes', version: '1.0.0' })
server.registerTool(
  'notes.search',
  {
    description: 'Finds the notes that mention a word',
    inputSchema: { query: z.string() },
    annotations: { readOnlyHint: true },
  },
  ({ query }) => {
    const hits = Object.keys(notes).filter((n) => notes[n]?.toLowerCase().includes(query.toLowerCase()))
    return { content: [{ type: 'text', text: hits.length === 0 ? 'no notes match' : hits.join('\n') }] }
  },
)
server.registerTool(
  'notes.read',
  { description: 'Reads one note', inputSchema: { name: z.string() }, annotations: { readOnlyHint: true } },
  ({ name }) => {
    const text = notes[name]
    return text === undefined
      ? { content: [{ type: 'text', text: `no note named ${name}` }], isError: true }
      : { content: [{ type: 'text', text }] }
  },
)

// ------------------------------------------------------------------------------------
// a scripted model, shaped like `openai.chat.completions.create`
// ------------------------------------------------------------------------------------

interface ChatClient {
  readonly chat: {
    readonly completions: { create(params: ChatCompletionCreateParamsNonStreaming): Promise<ChatCompletion> }
  }
}

const toolNamed = (tools: ReadonlyArray<ChatCompletionTool>, prefix: string): string => {
  const t = tools.find((x) => x.type === 'function' && x.function.name.startsWith(prefix))
  if (t === undefined || t.type !== 'function') throw new Error(`the model was not offered ${prefix}…`)
  return t.function.name
}

const completion = (message: ChatCompletionMessage): ChatCompletion => ({
  id: 'chatcmpl-scripted',
  object: 'chat.completion',
  created: 0,
  model: 'scripted',
  choices: [
    { index: 0, message, finish_reason: message.tool_calls === undefined ? 'stop' : 'tool_calls', logprobs: null },
  ],
})

const fnCall = (id: string, name: string, args: string): ChatCompletionMessageFunctionToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
})

const customCall = (id: string, name: string, input: string): ChatCompletionMessageCustomToolCall => ({
  id,
  type: 'custom',
  custom: { name, input },
})

const assistant = (
  content: string | null,
  tool_calls?: Array<ChatCompletionMessageToolCall>,
): ChatCompletionMessage => ({
  role: 'assistant',
  content,
  refusal: null,
  ...(tool_calls === undefined ? {} : { tool_calls }),
})

const scriptedModel: ChatClient = {
  chat: {
    completions: {
      create: (params) => {
        const tools = params.tools ?? []
        const turn = params.messages.filter((m) => m.role === 'assistant').length
        const lastTool = [...params.messages]
          .reverse()
          .find((m): m is ChatCompletionToolMessageParam => m.role === 'tool')
        switch (turn) {
          case 0:
            return Promise.resolve(
              completion(assistant(null, [fnCall('call_1', toolNamed(tools, 'notes_search'), '{"query":"deadline"}')])),
            )
          case 1:
            // one good call, one the generation cut off and one to a custom tool: three results, in order
            return Promise.resolve(
              completion(
                assistant(null, [
                  fnCall(
                    'call_2',
                    toolNamed(tools, 'notes_read'),
                    `{"name":${JSON.stringify(String(lastTool?.content ?? ''))}}`,
                  ),
                  fnCall('call_3', toolNamed(tools, 'notes_read'), '{"name":"groc'),
                  customCall('call_4', 'shell', 'cat plans.md'),
                ]),
              ),
            )
          default: {
            const read = params.messages.find(
              (m): m is ChatCompletionToolMessageParam => m.role === 'tool' && m.tool_call_id === 'call_2',
            )
            return Promise.resolve(
              completion(assistant(`From your notes: ${String(read?.content ?? 'nothing found')}`)),
            )
          }
        }
      },
    },
  },
}

// ------------------------------------------------------------------------------------
// the loop
// ------------------------------------------------------------------------------------

const main = async (): Promise<void> => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'openai-loop', version: '1.0.0' })
  await client.connect(clientSide)
  try {
    const provider = fromMcpClient(client)
    const listed = await provider.toolsForLlm()
    if (listed._tag === 'Left') throw new Error(listed.left.message)
    const tools: Array<ChatCompletionTool> = [...listed.right]
    console.log(
      `tools offered: ${tools.map((t) => (t.type === 'function' ? t.function.name : t.custom.name)).join(', ')}`,
    )
    for (const t of provider.tools()) console.log(`  ${t.name} → MCP tool ${JSON.stringify(t.mcpName)}`)

    const messages: Array<ChatCompletionMessageParam> = [{ role: 'user', content: 'When is the demo deadline?' }]
    console.log(`\nuser: ${String(messages[0]?.content)}`)
    for (let turn = 1; turn <= 5; turn++) {
      const reply = await scriptedModel.chat.completions.create({ model: 'scripted', messages, tools })
      const message = reply.choices[0]?.message
      if (message === undefined) throw new Error('the model gave no choice')
      messages.push(message)
      const calls = message.tool_calls ?? []
      if (calls.length === 0) {
        console.log(`\nassistant: ${message.content ?? ''}`)
        break
      }
      console.log(`\n── turn ${turn}`)
      for (const c of calls)
        console.log(
          c.type === 'function'
            ? `assistant → ${c.id} ${c.function.name}(${c.function.arguments})`
            : `assistant → ${c.id} custom tool ${c.custom.name}: ${c.custom.input}`,
        )
      // the calls as the SDK gives them: a custom (free-text) call is answered with an error, not run
      const results = await executeChatToolCalls(provider)(message.tool_calls)()
      if (results._tag === 'Left') throw new Error('unreachable: an MCP provider never fails a batch')
      for (const r of results.right)
        console.log(
          `tool      ← ${r.tool_call_id}${r.is_error === true ? ' (error)' : ''}: ${r.content.replace(/\n/g, ' | ')}`,
        )
      // role, tool_call_id and content only: the API refuses members it does not know
      messages.push(...toToolMessages(results.right))
    }
  } finally {
    await client.close()
    await server.close()
  }
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 1
})
