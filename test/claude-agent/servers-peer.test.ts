// listServer without @modelcontextprotocol/sdk (an optional peer of toolstack/claude-agent): a module of the MCP
// client cannot be imported (vi.doMock, its factory throwing), and the listing says which package is missing and
// the command that installs it. The packed package's own missing peers are tested in pack.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { listServer } from '../../src/claude-agent/servers.js'

const SSE = '@modelcontextprotocol/sdk/client/sse.js'

afterEach(() => {
  vi.doUnmock(SSE)
})

describe('listServer, the MCP SDK missing', () => {
  it('rejects naming the package and the command that installs it; the import’s own error is its cause', async () => {
    const missing = new Error(`Cannot find package '@modelcontextprotocol/sdk' imported from servers.js`)
    vi.doMock(SSE, () => {
      throw missing
    })
    const e: unknown = await listServer('remote', { type: 'sse', url: 'http://127.0.0.1:1/sse' }).then(
      () => 'listed',
      (x: unknown) => x,
    )
    expect(e).toBeInstanceOf(Error)
    expect((e as Error).message).toMatch(
      /^toolstack\/claude-agent: listing an MCP server needs @modelcontextprotocol\/sdk, which is not installed; install it: npm install @modelcontextprotocol\/sdk \(with a global toolstack: npm install -g @modelcontextprotocol\/sdk\) \(.+\)$/,
    )
    // vitest hands the factory's throw over wrapped in an error of its own
    const causes: Array<unknown> = []
    for (let c: unknown = e; c instanceof Error; c = c.cause) causes.push(c)
    expect(causes).toContain(missing)
  })
})
