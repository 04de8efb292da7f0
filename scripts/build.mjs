// Builds dist/esm (the package's native ESM) and dist/cjs (for `require`),
// each with its own .d.ts, and marks dist/cjs as CommonJS. The proxy's audit thread
// (dist/esm/cli/auditworker.js) is then bundled into one file: a thread loads it while
// the proxy starts, and one file with no CommonJS to scan loads in about a quarter of
// the time its module graph takes.
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { buildSync } from 'esbuild'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
rmSync('dist', { recursive: true, force: true })
for (const project of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' })
}
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n')

const worker = 'dist/esm/cli/auditworker.js'
buildSync({ entryPoints: [worker], outfile: worker, allowOverwrite: true, bundle: true, platform: 'node', target: 'node20', format: 'esm', logLevel: 'warning' })
