// `npm run bench`: every figure a ratio measured side by side in one run.
//   --check    exit 1 when a figure misses its target
//   --lenient  with --check: only a tenfold miss counts (for CI on a noisy machine)
//   --quick    fewer rounds and smaller sizes
//   --only TEXT  only the sections whose title contains TEXT (e.g. --only OpenTelemetry)
import { existsSync } from 'node:fs'
import { auditFigures } from './audit.js'
import type { Figure } from './measure.js'
import { meets, render } from './measure.js'

const argv = process.argv.slice(2)
const check = argv.includes('--check')
const slack = argv.includes('--lenient') ? 10 : 1
const quick = argv.includes('--quick')
const only = argv.includes('--only') ? (argv[argv.indexOf('--only') + 1] ?? '') : undefined

const sections: Array<readonly [string, () => Promise<ReadonlyArray<Figure>>]> = [
  ['withUnknownKeyAudit', () => auditFigures(quick)],
]

const optional = async (file: string, exportName: string, title: string): Promise<void> => {
  if (!existsSync(new URL(file, import.meta.url))) return
  const mod = (await import(file)) as Record<string, unknown>
  const f = mod[exportName]
  if (typeof f === 'function')
    sections.push([title, () => (f as (q: boolean) => Promise<ReadonlyArray<Figure>>)(quick)])
}

const main = async (): Promise<void> => {
  await optional('./stack.ts', 'stackFigures', 'the whole stack')
  await optional('./cli.ts', 'runCliBench', 'the toolstack command')
  await optional('./serve.ts', 'serveFigures', 'toolstack serve')
  await optional('./peers.ts', 'peerFigures', 'toolstack serve beside the npm peers mcp-proxy and supergateway')
  await optional('./bounds.ts', 'boundFigures', "toolstack serve's bounds")
  await optional('./otel.ts', 'otelFigures', 'withUnknownKeyAudit with OpenTelemetry registered')
  if ((globalThis as { gc?: unknown }).gc === undefined)
    console.log('(run with node --expose-gc for the memory figures)')
  const all: Array<Figure> = []
  for (const [title, run] of sections.filter(([t]) => only === undefined || t.includes(only))) {
    console.log(`\n${title}`)
    for (const f of await run()) {
      all.push(f)
      console.log(`  ${render(f, slack)}`)
    }
  }
  const missed = all.filter((f) => !meets(f, slack))
  console.log(
    `\n${all.length - missed.length} of ${all.length} figures met their target${missed.length === 0 ? '' : `; missed: ${missed.map((f) => f.name).join('; ')}`}`,
  )
  if (check && missed.length > 0) process.exitCode = 1
}

main().catch((e: unknown) => {
  console.error(e)
  process.exitCode = 2
})
