// The tests Stryker runs against each mutant (`npm run mutation`): every test that
// exercises src/ in this process. Left out, because no mutant can reach them: tests of
// the command (src/cli is not mutated), tests that run a separate process over the
// built package or an example (a mutant lives only in this process), and the README
// and docs checks. One project, not the unit/integration pair of vitest.config.ts.
// MUTATION_TESTS (comma-separated globs) narrows the tests for a run over a few files, e.g.
// MUTATION_TESTS='test/steps/policy/**,test/kernel/**' with `--mutate src/steps/policy/*.ts`.
import { defineConfig } from 'vitest/config'
import { shared } from './vitest.config.js'

const only = process.env['MUTATION_TESTS']?.split(',').filter((g) => g !== '')

export default defineConfig({
  test: {
    ...shared,
    include: only ?? ['test/**/*.test.ts'],
    isolate: false,
    exclude: [
      'node_modules/**',
      'test/cli/**',
      'test/pack.test.ts',
      'test/smoke.test.ts',
      'test/markdown.test.ts',
      'test/snippets.test.ts',
      'test/demo.test.ts',
      'test/examples.test.ts',
      'test/mcp/examples.test.ts',
      'test/adapters/examples.test.ts',
    ],
  },
})
