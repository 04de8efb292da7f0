// The AI SDK's own mock language model, scripted by the state of the prompt rather
// than by a call count, so the same script serves generateText, streamText and Mastra
// (which may call the model a different number of times).
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test'

export const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

export interface ScriptedCall {
  readonly id: string
  readonly tool: string
  readonly input: string
}

type Prompt = MockLanguageModelV4['doGenerateCalls'][number]['prompt']
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV4['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never

/** What the model says for a prompt: tool calls, or a final text. */
export type Script = (prompt: Prompt, turn: number) => ReadonlyArray<ScriptedCall> | string

/** Tool results the model has been sent so far, as `toolCallId → output`. */
export const toolOutputs = (prompt: Prompt): Map<string, unknown> => {
  const out = new Map<string, unknown>()
  for (const m of prompt)
    if (m.role === 'tool') for (const p of m.content) if (p.type === 'tool-result') out.set(p.toolCallId, p.output)
  return out
}

const assistantTurns = (prompt: Prompt): number => prompt.filter((m) => m.role === 'assistant').length

/** A mock model following `script`, in generate and in stream; it records every prompt. */
export const scriptedModel = (script: Script): MockLanguageModelV4 & { readonly prompts: Array<Prompt> } => {
  const prompts: Array<Prompt> = []
  const model = new MockLanguageModelV4({
    doGenerate: async (o) => {
      prompts.push(o.prompt)
      const said = script(o.prompt, assistantTurns(o.prompt))
      return typeof said === 'string'
        ? {
            content: [{ type: 'text', text: said }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage,
            warnings: [],
          }
        : {
            content: said.map((c) => ({
              type: 'tool-call' as const,
              toolCallId: c.id,
              toolName: c.tool,
              input: c.input,
            })),
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
    },
    doStream: async (o) => {
      prompts.push(o.prompt)
      const said = script(o.prompt, assistantTurns(o.prompt))
      const chunks: Array<StreamPart> =
        typeof said === 'string'
          ? [
              { type: 'stream-start' as const, warnings: [] },
              { type: 'text-start' as const, id: 't' },
              { type: 'text-delta' as const, id: 't', delta: said },
              { type: 'text-end' as const, id: 't' },
              { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage },
            ]
          : [
              { type: 'stream-start' as const, warnings: [] },
              ...said.flatMap((c) => [
                { type: 'tool-input-start' as const, id: c.id, toolName: c.tool },
                { type: 'tool-input-delta' as const, id: c.id, delta: c.input },
                { type: 'tool-input-end' as const, id: c.id },
                { type: 'tool-call' as const, toolCallId: c.id, toolName: c.tool, input: c.input },
              ]),
              { type: 'finish' as const, finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' }, usage },
            ]
      return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }) }
    },
  })
  return Object.assign(model, { prompts })
}
