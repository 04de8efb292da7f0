// Runs an example the way a user would: a separate Node process over the built package.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tsx = createRequire(import.meta.url).resolve('tsx/cli')

export interface ExampleRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runExample = (file: string, input?: string): ExampleRun => {
  const r = spawnSync(process.execPath, [tsx, `examples/${file}`], {
    cwd: root,
    encoding: 'utf8',
    input: input ?? '',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}
