// `npm run mutation [-- STRYKER OPTIONS]`: StrykerJS over the library (see docs/mutation.md),
// incremental by default. StrykerJS is pinned at 9.6, the last line that runs on Node 20
// (StrykerJS 10 needs Node 22), so it runs on the Node that runs this script.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const stryker = join(
  dirname(createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json')),
  'bin',
  'stryker.js',
)
const run = spawnSync(process.execPath, [stryker, 'run', '--incremental', ...process.argv.slice(2)], {
  stdio: 'inherit',
})
if (run.error !== undefined) {
  console.error(`mutation: could not start StrykerJS: ${run.error.message}`)
  process.exit(1)
}
process.exit(run.status ?? 1)
