// Fits the ecosystem's types: checked by `tsc -p tsconfig.json --noEmit` (this file
// is in its `include`); the runtime assertions are trivial, the compile is the test.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import type { Response, ResponseInputItem, ResponseOutputItem } from 'openai/resources/responses/responses'
import type { TaskEither } from 'fp-ts/lib/TaskEither.js'
import { describe, expectTypeOf, it } from 'vitest'
import type { Provider, ToolCall, ToolDeclaration, ToolResult } from '../../src/index.js'
import type { McpListingError, McpProvider, McpToolClient } from '../../src/mcp/index.js'
import { fromMcpClient } from '../../src/mcp/index.js'
import { executeChatToolCalls, toFunctionCallOutputs, toResponsesInput } from '../../src/openai/index.js'

describe('OpenAI chat-completions types', () => {
  it('declarations are chat-completion tools', () => {
    expectTypeOf<ToolDeclaration>().toExtend<ChatCompletionFunctionTool>()
    expectTypeOf<ToolDeclaration>().toExtend<ChatCompletionTool>()
    // OpenAI's `tools` is a mutable array: a copy of the listing is what a host passes
    const fromListing = (ds: ReadonlyArray<ToolDeclaration>): Array<ChatCompletionTool> => [...ds]
    expectTypeOf(fromListing).returns.toEqualTypeOf<Array<ChatCompletionTool>>()
  })

  it("an assistant message's function tool calls are accepted by executeToolCalls", () => {
    expectTypeOf<ChatCompletionMessageFunctionToolCall>().toExtend<ToolCall>()
    // custom (free-text) tool calls have no `function`: a host keeps the function ones
    expectTypeOf<ChatCompletionMessageToolCall>().not.toExtend<ToolCall>()
    const run = (tools: McpProvider, message: ChatCompletionMessage) =>
      tools.executeToolCalls(
        (message.tool_calls ?? []).filter((c): c is ChatCompletionMessageFunctionToolCall => c.type === 'function'),
      )
    expectTypeOf(run).returns.toExtend<ReturnType<McpProvider['executeToolCalls']>>()
    // or all of them, as they come: executeChatToolCalls answers a custom call itself
    const runAll = (tools: McpProvider, message: ChatCompletionMessage) =>
      executeChatToolCalls(tools)(message.tool_calls)
    expectTypeOf(runAll).returns.toExtend<TaskEither<McpListingError, ReadonlyArray<ToolResult>>>()
  })

  it("a response's output goes back into its input, and so do the function call outputs", () => {
    const next = (input: Array<ResponseInputItem>, response: Response, results: ReadonlyArray<ToolResult>) => {
      input.push(...toResponsesInput(response.output), ...toFunctionCallOutputs(results))
      return input
    }
    expectTypeOf(next).returns.toEqualTypeOf<Array<ResponseInputItem>>()
    // the SDK's own types do not allow it without the mapper
    expectTypeOf<ResponseOutputItem>().not.toExtend<ResponseInputItem>()
  })

  it('results are tool messages', () => {
    expectTypeOf<ToolResult>().toExtend<ChatCompletionToolMessageParam>()
    const next = (
      history: Array<ChatCompletionMessageParam>,
      results: ReadonlyArray<ToolResult>,
    ): Array<ChatCompletionMessageParam> => [...history, ...results]
    expectTypeOf(next).returns.toEqualTypeOf<Array<ChatCompletionMessageParam>>()
  })
})

describe('MCP SDK types', () => {
  it('a v1 Client is an McpToolClient, without a cast', () => {
    expectTypeOf<Client>().toExtend<McpToolClient>()
    const make = (client: Client): McpProvider => fromMcpClient(client)
    expectTypeOf(make).returns.toExtend<Provider<McpListingError>>()
  })

  it('a fake with just listTools and callTool is one too', () => {
    const fake = {
      listTools: () => Promise.resolve({ tools: [] }),
      callTool: (params: { name: string; arguments?: Record<string, unknown> }) =>
        Promise.resolve({ content: [{ type: 'text', text: params.name }] }),
    }
    expectTypeOf(fake).toExtend<McpToolClient>()
  })
})
