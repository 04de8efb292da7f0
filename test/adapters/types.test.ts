// Fits each framework's own types: checked by `tsc -p tsconfig.json --noEmit` (this file
// is in its `include`); the runtime assertions are trivial, the compile is the test.
import type { DynamicStructuredTool } from '@langchain/core/tools'
import type { ToolNode } from '@langchain/langgraph/prebuilt'
import type { Agent, FunctionTool, Runner } from '@openai/agents'
import type { LanguageModelMiddleware, ToolSet, generateText } from 'ai'
import type { ChatCompletionToolMessageParam } from 'openai/resources/chat/completions'
import type { ResponseCreateParamsNonStreaming, ResponseInputItem } from 'openai/resources/responses/responses'
import { describe, expectTypeOf, it } from 'vitest'
import type { Provider } from '../../src/index.js'
import type { PolicyApproval, UnknownKeyAuditMiddleware } from '../../src/ai-sdk/index.js'
import { fromAiSdkTools, toAiSdkTools } from '../../src/ai-sdk/index.js'
import { toLangChainTools } from '../../src/langchain/index.js'
import type { AgentsRunAudit } from '../../src/openai-agents/index.js'
import { auditAgent, auditAgentsTools, auditRunner, toAgentsTools } from '../../src/openai-agents/index.js'
import type { FunctionCallOutput } from '../../src/openai/index.js'
import { toResponsesTools, toToolMessages } from '../../src/openai/index.js'

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
})
