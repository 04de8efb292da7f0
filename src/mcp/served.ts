/**
 * Resources, prompts and completions served by an MCP server: what a server built by `toMcpServer` answers for
 * them, whoever supplies them (the gateway's catalog of its upstreams, or a user's own). Sets the handlers and
 * sends the host `list_changed` and `resources/updated`.
 *
 * @since 0.1.0
 */
import type { IO } from 'fp-ts/lib/IO.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js'
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { tryNotify } from './notify.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------
/**
 * One session's subscriptions.
 *
 * @since 0.1.0
 * @category model
 */
export interface ResourceSession {
  readonly subscribe: (uri: string) => Promise<void>
  readonly unsubscribe: (uri: string) => Promise<void>
  /** Ends every subscription of the session (an upstream is unsubscribed when no session holds its URI). */
  readonly close: IO<void>
}

/**
 * Resources as `toMcpServer` serves them (its option `resources`); a failure is an `Error` with a JSON-RPC `code`.
 *
 * @since 0.1.0
 * @category model
 */
export interface ServedResources {
  readonly list: () => Promise<ReadonlyArray<Resource>>
  readonly listTemplates: () => Promise<ReadonlyArray<ResourceTemplate>>
  readonly read: (uri: string) => Promise<ReadResourceResult>
  /** A session whose `onUpdated` hears `notifications/resources/updated` for the URIs it subscribed to. */
  readonly openSession: (onUpdated: (uri: string) => void) => ResourceSession
  /** Calls `listener` when the resources or templates may have changed; returns the unsubscribe function. */
  readonly onListChanged: (listener: IO<void>) => IO<void>
}

/**
 * Prompts as `toMcpServer` serves them (its option `prompts`); a failure is an `Error` with a JSON-RPC `code`.
 *
 * @since 0.1.0
 * @category model
 */
export interface ServedPrompts {
  readonly list: () => Promise<ReadonlyArray<Prompt>>
  readonly get: (name: string, args: Readonly<Record<string, string>> | undefined) => Promise<GetPromptResult>
  /** Calls `listener` when the prompts may have changed; returns the unsubscribe function. */
  readonly onListChanged: (listener: IO<void>) => IO<void>
}

/**
 * Completion as `toMcpServer` serves it (its option `completions`): `completion/complete` for a prompt's or a
 * resource template's argument; a failure is an `Error` with a JSON-RPC `code`.
 *
 * @since 0.1.0
 * @category model
 */
export type ServedCompletions = (params: CompleteRequest['params']) => Promise<CompleteResult>

// -------------------------------------------------------------------------------------
// serving
// -------------------------------------------------------------------------------------

/**
 * The capabilities a server serving `options` declares.
 *
 * @since 0.1.0
 * @category serving
 */
export const catalogCapabilities = (options: {
  readonly resources?: ServedResources
  readonly prompts?: ServedPrompts
  readonly completions?: ServedCompletions
}): Pick<ServerCapabilities, 'resources' | 'prompts' | 'completions'> => ({
  ...(options.resources === undefined ? {} : { resources: { subscribe: true, listChanged: true } }),
  ...(options.prompts === undefined ? {} : { prompts: { listChanged: true } }),
  ...(options.completions === undefined ? {} : { completions: {} }),
})

/**
 * Sets `server`'s resource and prompt handlers (its capabilities must declare them: `catalogCapabilities`),
 * sends the host `list_changed` when told, and forwards `resources/updated` for the URIs this session
 * subscribed to; everything ends when the server closes.
 *
 * @since 0.1.0
 * @category serving
 */
export const serveCatalog = (
  server: Server,
  options: {
    readonly resources?: ServedResources
    readonly prompts?: ServedPrompts
    readonly completions?: ServedCompletions
  },
): void => {
  const offs: Array<IO<void>> = []
  const { resources, prompts, completions } = options
  if (completions !== undefined) server.setRequestHandler(CompleteRequestSchema, (req) => completions(req.params))
  if (resources !== undefined) {
    let session: ResourceSession | undefined
    let closed = false
    const sessionNow = (): ResourceSession =>
      (session ??= resources.openSession((uri) => tryNotify(() => server.sendResourceUpdated({ uri }))))
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [...(await resources.list())] }))
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: [...(await resources.listTemplates())],
    }))
    server.setRequestHandler(ReadResourceRequestSchema, (req) => resources.read(req.params.uri))
    server.setRequestHandler(SubscribeRequestSchema, async (req) => {
      if (closed) return {}
      await sessionNow().subscribe(req.params.uri)
      return {}
    })
    server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
      await session?.unsubscribe(req.params.uri)
      return {}
    })
    offs.push(resources.onListChanged(() => tryNotify(() => server.sendResourceListChanged())))
    offs.push(() => {
      closed = true
      session?.close()
    })
  }
  if (prompts !== undefined) {
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [...(await prompts.list())] }))
    server.setRequestHandler(GetPromptRequestSchema, (req) => prompts.get(req.params.name, req.params.arguments))
    offs.push(prompts.onListChanged(() => tryNotify(() => server.sendPromptListChanged())))
  }
  const previous = server.onclose
  server.onclose = () => {
    for (const off of offs) off()
    previous?.()
  }
}
