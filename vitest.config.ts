// Two projects, so that `npm test` stays quick:
// - unit (`npm test`): every test that stays in the test process: unit, property and
//   model-based tests, the `@example` blocks, the adapters and the MCP half in process.
//   It needs no build.
// - integration (`npm run test:integration`, which builds dist/ first): every test file
//   that starts a process of its own (the command, real MCP servers from npm, the
//   examples and the README's blocks run as a user runs them, the built and the packed
//   package). They are about nine tenths of the suite's time.
// `.ci/run` runs both; `npx vitest run FILE` finds a file in either project.
import { configDefaults, defineConfig } from 'vitest/config'

/** The test files that start a process of their own. */
export const integration: ReadonlyArray<string> = [
  // the command, run as a separate process
  'test/cli/audit.test.ts',
  'test/cli/proxy.test.ts',
  'test/cli/proxy-sdk.test.ts',
  'test/cli/proxy-log.test.ts',
  'test/cli/serve.test.ts',
  'test/cli/serve-catalog.test.ts',
  'test/cli/serveStore.test.ts',
  'test/cli/serve-guard.test.ts',
  'test/cli/otlp.test.ts',
  'test/cli/serve-start.test.ts',
  'test/cli/check.test.ts',
  'test/cli/init.test.ts',
  'test/cli/sighup-doc.test.ts',
  // a real browser (Debian's chromium) driven by playwright-core
  'test/cli/page.test.ts',
  // the built and the packed package, the examples and the docs' blocks, each in a process
  'test/smoke.test.ts',
  'test/pack.test.ts',
  'test/demo.test.ts',
  'test/examples.test.ts',
  'test/mcp/examples.test.ts',
  'test/adapters/examples.test.ts',
  'test/markdown.test.ts',
  // real MCP servers (from npm, or the fixtures) started over stdio
  'test/mcp/realServers.test.ts',
  'test/mcp/connectStdio.test.ts',
  'test/mcp/stdio.test.ts',
  'test/mcp/watchdog.test.ts',
  'test/mcp/serve-stdio.test.ts',
  'test/gateway/upstream.test.ts',
  'test/mcp/faults.test.ts',
  'test/mcp/server.test.ts',
  'test/gateway/gateway.test.ts',
  'test/gateway/catalog-gateway.test.ts',
  'test/gateway/gatewayReload.test.ts',
  'test/gateway/gatewayStore.test.ts',
  'test/gateway/gatewayPins.test.ts',
  'test/cli/reload.test.ts',
  'test/mcp/relay.test.ts',
  'test/ai-sdk/mcp.test.ts',
  'test/ai-sdk/mastra.test.ts',
  'test/openai-agents/agents.test.ts',
  'test/openai-agents/hooks.test.ts',
  'test/langchain/langchain.test.ts',
  // the Claude Agent SDK's bundled Claude Code CLI, started by query()
  'test/claude-agent/session.test.ts',
  // a real redis-server, started by the test
  'test/gateway/redisStore.test.ts',
  'test/cli/serve-fleet.test.ts',
  'test/cli/grants.test.ts',
  'test/cli/pins.test.ts',
  // and Debian's haproxy in front of two replicas
  'test/cli/fleet-haproxy.test.ts',
  'test/cli/serve-pins.test.ts',
]

/**
 * The unit test files that count fake timers (`vi.getTimerCount`): each runs in a worker of its own, for a timer
 * an earlier file's work left behind would be counted too (seen once with every file in one worker, under
 * `npm run test:time -- --busy`).
 */
export const fakeTimers: ReadonlyArray<string> = ['test/mcp/client.test.ts', 'test/mcp/serve.test.ts']

/** What every test run shares, the mutation run's included. */
export const shared = {
  setupFiles: ['test/support/seed.ts'],
  testTimeout: 30_000,
  hookTimeout: 30_000,
}

export default defineConfig({
  test: {
    ...shared,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...integration, ...fakeTimers],
          // each worker loads the modules once, not once per file: about 40 % less CPU, which is what `npm test`
          // takes on a busy machine (issue 39: at most 4 minutes with both cores busy; `npm run test:time -- --busy`)
          isolate: false,
        },
      },
      // npm test runs both unit projects
      { extends: true, test: { name: 'unit-timers', include: [...fakeTimers] } },
      { extends: true, test: { name: 'integration', include: [...integration] } },
    ],
  },
})
