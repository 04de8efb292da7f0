// Lists the tools of an MCP server over stdio (the SDK's own client) and writes the listing as a
// fixture: `node scripts/capture-tools.mjs OUT.json SOURCE-NOTE -- COMMAND ARGS...`. Used to record
// the real listings under test/steps/audit/fixtures/tools/ (each file says where it came from).
import { writeFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const [out, source, dashes, command, ...args] = process.argv.slice(2)
if (out === undefined || source === undefined || dashes !== '--' || command === undefined) {
  console.error('usage: node scripts/capture-tools.mjs OUT.json SOURCE-NOTE -- COMMAND ARGS...')
  process.exit(2)
}
const transport = new StdioClientTransport({ command, args, stderr: 'ignore', env: { ...process.env } })
const client = new Client({ name: 'toolstack-capture', version: '0.0.0' })
await client.connect(transport)
const tools = []
let cursor
do {
  const page = await client.listTools(cursor === undefined ? {} : { cursor })
  tools.push(...page.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })))
  cursor = page.nextCursor
} while (cursor !== undefined)
const server = client.getServerVersion()
writeFileSync(out, JSON.stringify({ source, server, tools }, null, 1) + '\n')
console.log(`${out}: ${tools.length} tools from ${server?.name} ${server?.version}`)
await client.close()
