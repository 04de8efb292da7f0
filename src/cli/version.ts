/**
 * The package's version, read at run time from the `package.json` above the running script, so it is
 * correct from `src/cli` under tsx, from `dist/esm/cli` and behind a `node_modules/.bin` symlink.
 *
 * @since 0.1.0
 */
import { readFileSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'

const PACKAGE_NAME = 'toolstack'

const readPackage = (file: string): unknown => {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown
  } catch {
    return undefined
  }
}

/**
 * Walks up from `entry` (the running script, `process.argv[1]`) to the first `package.json` named
 * `toolstack` and returns its version, or `'unknown'` when there is none. Not `import.meta.url`:
 * src/ is also compiled to CommonJS, where it does not exist.
 *
 * @since 0.1.0
 */
export const readVersion = (entry: string | undefined): string => {
  if (entry === undefined) return 'unknown'
  let dir: string
  try {
    dir = dirname(realpathSync(entry))
  } catch {
    dir = dirname(entry)
  }
  for (;;) {
    const pkg = readPackage(join(dir, 'package.json'))
    if (typeof pkg === 'object' && pkg !== null && !Array.isArray(pkg)) {
      const name = Object.hasOwn(pkg, 'name') ? (pkg as { readonly name?: unknown }).name : undefined
      const version = Object.hasOwn(pkg, 'version') ? (pkg as { readonly version?: unknown }).version : undefined
      if (name === PACKAGE_NAME && typeof version === 'string') return version
    }
    const up = dirname(dir)
    if (up === dir) return 'unknown'
    dir = up
  }
}
