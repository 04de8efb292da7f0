// Builds dist/esm (the package's native ESM) and dist/cjs (for `require`),
// each with its own .d.ts, and marks dist/cjs as CommonJS.
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
rmSync('dist', { recursive: true, force: true })
for (const project of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' })
}
writeFileSync('dist/cjs/package.json', JSON.stringify({ type: 'commonjs' }) + '\n')
