// `npm run mutation [-- STRYKER OPTIONS]`: StrykerJS over the library (see docs/mutation.md),
// incremental by default. StrykerJS 10 needs Node 22 or later while the package supports
// Node 20, so on an older Node this script runs StrykerJS on a Node 22 that npx fetches
// from the npm registry (the `node` package, built for this platform) into npm's cache,
// once, and says so; the Node that runs the script is left alone. No Node binary is a
// devDependency: one would tie every install to one platform.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const NODE_MAJOR = 22
const stryker = join(
  dirname(createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json')),
  'bin',
  'stryker.js',
)
const args = [stryker, 'run', '--incremental', ...process.argv.slice(2)]

const major = Number(process.versions.node.split('.')[0])
let run
if (major >= NODE_MAJOR) {
  run = spawnSync(process.execPath, args, { stdio: 'inherit' })
} else {
  console.error(
    `mutation: StrykerJS needs Node ${NODE_MAJOR} or later, and this is Node ${process.version}; ` +
      `running it on Node ${NODE_MAJOR} from npx (npx -y node@${NODE_MAJOR}, fetched into npm's cache the first time). ` +
      `To use a Node of your own instead, run this script with any Node ${NODE_MAJOR} or later.`,
  )
  const npx = ['exec', '--yes', `--package=node@${NODE_MAJOR}`, '--', 'node', ...args]
  // under `npm run`, npm_execpath is npm's own CLI: running it with this Node avoids a shell (npx.cmd on Windows)
  const npm = process.env.npm_execpath
  run =
    npm !== undefined && /npm-cli\.c?js$/.test(npm)
      ? spawnSync(process.execPath, [npm, ...npx], { stdio: 'inherit' })
      : spawnSync('npm', npx, { stdio: 'inherit', shell: process.platform === 'win32' })
}
if (run.error !== undefined) {
  console.error(`mutation: could not start StrykerJS: ${run.error.message}`)
  process.exit(1)
}
process.exit(run.status ?? 1)
