/**
 * The host configuration the help shows: one constant, so that every place showing it
 * (the help, the README) shows the same text, and a test runs it.
 *
 * @since 0.1.0
 */

/**
 * An `mcpServers` entry (Claude Desktop's `claude_desktop_config.json`, and hosts that
 * read the same shape) running the reference filesystem server behind the proxy. It
 * names the official scoped package: the unscoped `mcp-server-filesystem` on npm is
 * somebody else's.
 *
 * @since 0.1.0
 */
export const HOST_CONFIG = `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "toolstack", "proxy", "--",
               "npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/me/projects"]
    }
  }
}`
