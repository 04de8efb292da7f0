/**
 * The host configuration the help shows: one constant, so that every place showing it
 * (the help, the README) shows the same text, and a test runs it.
 *
 * @since 0.1.0
 */

/**
 * An `mcpServers` entry (Claude Desktop's `claude_desktop_config.json`, and hosts that
 * read the same shape) running the reference filesystem server behind the proxy, with
 * `toolstack` installed (see the README's Install). It names the official scoped
 * package: the unscoped `mcp-server-filesystem` on npm is somebody else's, and it does
 * not write `npx -y toolstack`, a name toolstack does not hold on the registry yet.
 *
 * @since 0.1.0
 */
export const HOST_CONFIG = `{
  "mcpServers": {
    "filesystem": {
      "command": "toolstack",
      "args": ["proxy", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/path/to/project"]
    }
  }
}`
