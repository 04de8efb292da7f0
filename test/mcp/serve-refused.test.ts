// serveHttp and an initialize the SDK refuses (a host that accepts only JSON: 406; a body that is not said to be
// JSON: 415): a server is made for it before the SDK answers, and no session begins, so nothing but serveHttp itself
// can close that server. Each server made here holds what a gateway's session holds from the moment it is made (a
// subscription to the upstreams' tool changes, a session of the log hub), counted; after any number of refused
// initializes the counts are back where they were, and a session that did begin keeps its own. Real HTTP on
// loopback, in this process, so the counts can be read.
import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { HttpServing } from '../../src/mcp/index.js'
import { newLogHub, serveHttp, toMcpServer } from '../../src/mcp/index.js'
import type { Provider } from '../../src/kernel/model.js'
import { until } from '../support/until.js'

const servings: Array<HttpServing> = []
afterEach(async () => {
  await Promise.all(servings.splice(0).map((s) => s.close()))
})

const NOTHING: Provider<never> = { toolsForLlm: TE.right([]), executeToolCalls: () => TE.right([]) }

/** A server factory whose servers subscribe as a gateway's do, with the subscriptions live now counted. */
const counted = () => {
  const live = { made: 0, toolsChanged: 0, logSessions: 0 }
  const hub = newLogHub()
  const newServer = () => {
    live.made++
    return toMcpServer(
      NOTHING,
      { name: 'refused-under-test', version: '0' },
      {
        toolsChanged: () => {
          live.toolsChanged++
          return () => void live.toolsChanged--
        },
        logging: {
          ...hub,
          open: (send) => {
            const session = hub.open(send)
            live.logSessions++
            return {
              ...session,
              close: () => {
                live.logSessions--
                session.close()
              },
            }
          },
        },
      },
    )
  }
  return { live, newServer }
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
})

/** POSTs an initialize with `headers`; resolves with its status and session id. */
const initialize = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; session: unknown }>((resolve, reject) => {
    const u = new URL(url)
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, session: res.headers['mcp-session-id'] }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(INIT)
  })

const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' }
const NOT_JSON = { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' }
const GOOD = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

describe('serveHttp: an initialize the SDK refuses', () => {
  it('closes the server made for it: after any number, no subscription is left; a session that began keeps its own', async () => {
    const { live, newServer } = counted()
    const serving = await serveHttp(newServer, { port: 0 })
    servings.push(serving)
    const N = 60
    for (let i = 0; i < N; i += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, j) => initialize(serving.url, (i + j) % 2 === 0 ? JSON_ONLY : NOT_JSON)),
      )
      expect(new Set(answers.map((a) => a.status))).toStrictEqual(new Set([406, 415]))
      expect(answers.every((a) => a.session === undefined)).toBe(true)
    }
    // a server was made for each, and each is closed: its subscriptions ended
    expect(live.made).toBe(N)
    await until(() => live.toolsChanged === 0 && live.logSessions === 0, 5_000, 'every refused server closed')
    expect(serving.sessions()).toBe(0)

    // a session that begins keeps its server, and so its subscriptions
    const opened = await initialize(serving.url, GOOD)
    expect([opened.status, typeof opened.session]).toStrictEqual([200, 'string'])
    expect(serving.sessions()).toBe(1)
    expect(live).toStrictEqual({ made: N + 1, toolsChanged: 1, logSessions: 1 })
    // and one more refused initialize beside it leaves it as it is
    expect((await initialize(serving.url, JSON_ONLY)).status).toBe(406)
    await until(() => live.toolsChanged === 1 && live.logSessions === 1, 5_000, 'the refused server closed')
    expect(live).toStrictEqual({ made: N + 2, toolsChanged: 1, logSessions: 1 })
    expect(serving.sessions()).toBe(1)

    await serving.close()
    await until(() => live.toolsChanged === 0 && live.logSessions === 0, 5_000, 'the session closed')
  })
})
