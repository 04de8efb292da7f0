/**
 * `unknownKeyAuditProcessor`: the unknown-key audit as a Mastra processor, so it works whatever the
 * Agent's model is — a string id through Mastra's model router (`'openai/gpt-5'`) as well as a model
 * object. `processInputStep` reads the tools of each step; `processOutputStep` hears the step's tool
 * calls after the model wrote them and before Mastra validates them with each tool's schema (a zod
 * `z.object` strips every key it does not declare).
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import { asSchema } from 'ai'
import type { UnknownKeyAuditOptions } from '../combinators/UnknownKeys.js'
import { auditSessions } from '../combinators/UnknownKeys.js'
import type { Catalogue } from '../steps/audit/Catalogue.js'
import type { PairStat } from '../steps/audit/SeenSet.js'
import { argumentsOf, listedCatalogue } from '../adapter/adapter.js'
import { isRecord, memberOf } from '../kernel/guards.js'
import { declarationsOfRequest } from './middleware.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What `processInputStep` reads of Mastra's arguments: the step's tools and the request's message list.
 *
 * @since 0.1.0
 * @category model
 */
export interface MastraInputStep {
  readonly tools?: Readonly<Record<string, unknown>> | undefined
  readonly messageList: object
}

/**
 * What `processOutputStep` reads of Mastra's arguments: the step's tool calls, and the request's message
 * list, which it hands back untouched.
 *
 * @since 0.1.0
 * @category model
 */
export interface MastraOutputStep<L> {
  readonly toolCalls?: ReadonlyArray<{ readonly toolName: string; readonly toolCallId: string; readonly args: unknown }>
  readonly messageList: L
}

/**
 * A Mastra processor (for both `inputProcessors` and `outputProcessors`) plus what it audits.
 *
 * @since 0.1.0
 * @category model
 */
export interface UnknownKeyAuditProcessor {
  /** `'toolstack-unknown-key-audit'`: the processor's id in Mastra. */
  readonly id: string
  /** `'toolstack unknown-key audit'`. */
  readonly name: string
  readonly processInputStep: (args: MastraInputStep) => Promise<undefined>
  readonly processOutputStep: <L>(args: MastraOutputStep<L>) => L
  /** Sorted names of the tools audited in the most recent step. */
  readonly auditedTools: IO<ReadonlyArray<string>>
  /** Every (tool, undeclared key) pair ever seen, with how many calls carried it; sorted by tool, then key. */
  readonly stats: IO<ReadonlyArray<PairStat>>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// a step's tools as the middleware reads a request's: each tool's input schema as JSON Schema
const requestToolsOf = async (
  tools: Readonly<Record<string, unknown>> | undefined,
): Promise<ReadonlyArray<unknown>> => {
  const out: Array<unknown> = []
  for (const [name, t] of Object.entries(isRecord(tools) ? tools : {})) {
    try {
      // Mastra hands a step its tools converted, the schema as `parameters`; an AI SDK tool has `inputSchema`;
      // with neither, asSchema answers an object that declares nothing, which is not audited
      const schema = memberOf(t, 'parameters') ?? memberOf(t, 'inputSchema')
      const inputSchema: unknown = await asSchema(schema as Parameters<typeof asSchema>[0]).jsonSchema
      out.push({ type: 'function', name, inputSchema })
    } catch {
      // a tool whose schema cannot be read is not audited
    }
  }
  return out
}

/**
 * A Mastra processor that audits each tool call's arguments, as the model wrote them, against the tools of
 * its step, and warns once per (tool, key), with the options, warning and memory of `withUnknownKeyAudit`
 * (a `sharedUnknownKeyAudit` included: its warnings say `via: 'mastra-processor'`). It changes nothing:
 * it hands Mastra back its own message list. Give it as both an input and an output processor:
 *
 * ```ts
 * const audit = unknownKeyAuditProcessor({ onWarn })
 * new Agent({ id, name, instructions, model: 'openai/gpt-5', tools, inputProcessors: [audit], outputProcessors: [audit] })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const unknownKeyAuditProcessor = (options?: UnknownKeyAuditOptions): UnknownKeyAuditProcessor => {
  const session = auditSessions('unknownKeyAuditProcessor', options, 'mastra-processor')()
  // each request's catalogue, by its message list: Mastra gives the input and output phases different
  // state objects, but the same list; gone with the request
  const catalogues = new WeakMap<object, Catalogue>()

  const processInputStep = async ({ tools, messageList }: MastraInputStep): Promise<undefined> => {
    try {
      catalogues.set(messageList, listedCatalogue(session, declarationsOfRequest(await requestToolsOf(tools))))
    } catch {
      // a step that cannot be read is not audited
    }
    return undefined
  }

  const processOutputStep = <L>({ toolCalls, messageList }: MastraOutputStep<L>): L => {
    try {
      // a list that is not an object has no catalogue (a WeakMap answers undefined)
      const catalogue = catalogues.get(messageList as object)
      if (catalogue !== undefined)
        for (const c of toolCalls ?? []) {
          // one unreadable call (not an object: its read throws) does not keep the others from being heard; a
          // name that is not a string names no tool
          try {
            session.check(catalogue, {
              id: typeof c.toolCallId === 'string' ? c.toolCallId : '',
              function: { name: c.toolName, arguments: argumentsOf(c.args) },
            })
          } catch {
            // not audited
          }
        }
    } catch {
      // calls that cannot be read are not audited, and go on as they came
    }
    return messageList
  }

  return {
    id: 'toolstack-unknown-key-audit',
    name: 'toolstack unknown-key audit',
    processInputStep,
    processOutputStep,
    auditedTools: session.auditedTools,
    stats: session.stats,
  }
}
