/**
 * The host configuration shown by the help: one constant, so the help and the README show the same
 * text, and a test runs it.
 *
 * @since 0.1.0
 */

/**
 * An `mcpServers` entry (Claude Desktop's `claude_desktop_config.json`, and hosts that read the same
 * shape) running the reference filesystem server behind the proxy, with `toolstack` installed (see the
 * README's Install). It uses the official scoped package (the unscoped `mcp-server-filesystem` on npm
 * belongs to someone else), and not `npx -y toolstack`: the project does not own that npm name yet.
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
