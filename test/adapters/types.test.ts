// Fits each framework's own types: checked by `tsc -p tsconfig.json --noEmit` (this file
// is in its `include`); the runtime assertions are trivial, the compile is the test.
import type { DynamicStructuredTool } from '@langchain/core/tools'
import type { ToolNode } from '@langchain/langgraph/prebuilt'
import type { Agent, FunctionTool, Runner } from '@openai/agents'
import type { LanguageModelMiddleware, ToolSet, generateText } from 'ai'
import type { ChatCompletionToolMessageParam } from 'openai/resources/chat/completions'
import type { ResponseCreateParamsNonStreaming, ResponseInputItem } from 'openai/resources/responses/responses'
import type { Middleware } from '@anthropic-ai/sdk'
import type { BetaToolRunnerParams } from '@anthropic-ai/sdk/lib/tools/BetaToolRunner'
import type { MessageCreateParamsNonStreaming, MessageParam } from '@anthropic-ai/sdk/resources/messages'
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages'
import type { CallableTool, Content, GenerateContentConfig, HttpOptions, Tool } from '@google/genai'
import type { CanUseTool, Options as ClaudeAgentOptions } from '@anthropic-ai/claude-agent-sdk'
import { describe, expectTypeOf, it } from 'vitest'
import type { Provider } from '../../src/index.js'
import type { PolicyApproval, UnknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { fromAiSdkTools, toAiSdkTools } from '../../src/ai-sdk/index.js'
import { toLangChainTools } from '../../src/langchain/index.js'
import type { AgentsRunAudit } from '../../src/openai-agents/index.js'
import { auditAgent, auditAgentsTools, auditRunner, toAgentsTools } from '../../src/openai-agents/index.js'
import type { FunctionCallOutput } from '../../src/openai/index.js'
import { toResponsesTools, toToolMessages } from '../../src/openai/index.js'
import type { ToolResultBlock, UnknownKeyAuditMiddleware as AnthropicMiddleware } from '../../src/anthropic/index.js'
import { toAnthropicTools, toRunnableTools } from '../../src/anthropic/index.js'
import type { FunctionResponsePart, UnknownKeyAuditFetch } from '../../src/google/index.js'
import { toCallableTool, toFunctionDeclarations } from '../../src/google/index.js'
import type { ClaudeAgentAudit, ClaudeAgentPolicy } from '../../src/claude-agent/index.js'

type GenerateOptions = Parameters<typeof generateText>[0]

describe('the adapters fit the frameworks’ types, without a cast', () => {
  it('AI SDK: the middleware is a LanguageModelMiddleware; the tools a ToolSet; the approval a toolApproval', () => {
    expectTypeOf<UnknownKeyAuditMiddleware>().toExtend<LanguageModelMiddleware>()
    expectTypeOf(toAiSdkTools).returns.resolves.toExtend<ToolSet>()
    expectTypeOf<PolicyApproval['toolApproval']>().toExtend<NonNullable<GenerateOptions['toolApproval']>>()
    expectTypeOf(fromAiSdkTools).returns.toExtend<Provider<Error>>()
  })

  it('Agents SDK: toAgentsTools and auditAgentsTools give an Agent’s tools, without a spread; auditAgent takes an Agent', () => {
    type AgentTools = NonNullable<ConstructorParameters<typeof Agent>[0]['tools']>
    expectTypeOf(toAgentsTools).returns.resolves.toExtend<AgentTools>()
    const audited = (tools: ReadonlyArray<FunctionTool>) => auditAgentsTools(tools).tools
    expectTypeOf(audited).returns.toExtend<AgentTools>()
    const hear = (agent: Agent, runner: Runner) => [auditAgent(agent), auditRunner(runner)]
    expectTypeOf(hear).returns.toExtend<ReadonlyArray<AgentsRunAudit>>()
  })

  it('LangChain: the tools go into a ToolNode', () => {
    expectTypeOf(toLangChainTools).returns.resolves.toExtend<Array<DynamicStructuredTool>>()
    expectTypeOf(toLangChainTools).returns.resolves.toExtend<ConstructorParameters<typeof ToolNode>[0]>()
  })

  it('openai: tool messages, Responses tools and outputs are what the client takes', () => {
    expectTypeOf(toToolMessages).returns.toExtend<Array<ChatCompletionToolMessageParam>>()
    expectTypeOf(toResponsesTools).returns.toExtend<NonNullable<ResponseCreateParamsNonStreaming['tools']>>()
    expectTypeOf<FunctionCallOutput>().toExtend<ResponseInputItem>()
  })

  it('Anthropic: the tools, the tool_result turn, the runner’s tools and the middleware are what the client takes', () => {
    expectTypeOf(toAnthropicTools).returns.toExtend<NonNullable<MessageCreateParamsNonStreaming['tools']>>()
    expectTypeOf<{ role: 'user'; content: Array<ToolResultBlock> }>().toExtend<MessageParam>()
    expectTypeOf<{ role: 'user'; content: Array<ToolResultBlock> }>().toExtend<BetaMessageParam>()
    expectTypeOf(toRunnableTools).returns.resolves.toExtend<BetaToolRunnerParams['tools']>()
    expectTypeOf<AnthropicMiddleware>().toExtend<Middleware>()
  })

  it('Google: the declarations, the response parts, the callable tool and the fetch are what the client takes', () => {
    expectTypeOf(toFunctionDeclarations).returns.toExtend<NonNullable<Tool['functionDeclarations']>>()
    expectTypeOf<{ functionDeclarations: ReturnType<typeof toFunctionDeclarations> }>().toExtend<
      NonNullable<GenerateContentConfig['tools']>[number]
    >()
    expectTypeOf<{ role: 'user'; parts: Array<FunctionResponsePart> }>().toExtend<Content>()
    expectTypeOf(toCallableTool).returns.toExtend<CallableTool>()
    expectTypeOf<UnknownKeyAuditFetch>().toExtend<NonNullable<HttpOptions['fetch']>>()
  })

  it('Claude Agent SDK: the audit’s options spread into query()’s; the policy’s canUseTool and hook are the SDK’s', () => {
    expectTypeOf<ClaudeAgentAudit['options']>().toExtend<ClaudeAgentOptions>()
    expectTypeOf<ClaudeAgentPolicy['canUseTool']>().toExtend<NonNullable<ClaudeAgentOptions['canUseTool']>>()
    expectTypeOf<ClaudeAgentPolicy['preToolUse']>().toExtend<
      NonNullable<NonNullable<ClaudeAgentOptions['hooks']>['PreToolUse']>[number]
    >()
    expectTypeOf<CanUseTool>().toExtend<ClaudeAgentPolicy['canUseTool']>()
  })
})
