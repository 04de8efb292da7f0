// `npm run test:time [-- [--busy] RUNS]`: runs `npm test` RUNS times (3 by default), one after another, and prints
// each wall time and the median. Exits 1 when a run fails or the median is over the target: `npm test` in at most
// 4 minutes on a two-core machine, quiet or, with `--busy`, with every core kept busy by another process the whole
// time (issue 39: the tests must not lean on margins a loaded machine breaks). Not part of CI: it depends on the
// machine.
import { spawn, spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

const TARGET_S = 240
const args = process.argv.slice(2)
const busy = args.includes('--busy')
const given = args.filter((a) => a !== '--busy')[0]
const runs = Number(given ?? 3)
if (!Number.isSafeInteger(runs) || runs < 1) {
  console.error(`test-time: RUNS must be a whole number of at least 1, got ${JSON.stringify(given)}`)
  process.exit(2)
}

// with --busy, one process spinning per core for as long as the runs last
const burners = busy
  ? Array.from({ length: availableParallelism() }, () =>
      spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
    )
  : []
const stopBurners = () => {
  for (const b of burners) b.kill('SIGKILL')
}
process.on('exit', stopBurners)
if (busy) console.log(`every core kept busy: ${burners.length} spinning processes beside the tests`)

const seconds = []
for (let i = 1; i <= runs; i++) {
  const start = process.hrtime.bigint()
  const run = spawnSync('npm', ['test', '--', '--reporter=dot'], { stdio: 'pipe', maxBuffer: 1 << 28 })
  const s = Number(process.hrtime.bigint() - start) / 1e9
  if (run.status !== 0) {
    // vitest writes the failures' details to stderr, the summary to stdout
    process.stderr.write(run.stdout)
    process.stderr.write(run.stderr)
    console.error(`test-time: run ${i} failed (exit status ${run.status})`)
    process.exit(1)
  }
  seconds.push(s)
  console.log(`run ${i}: ${s.toFixed(1)} s`)
}
const sorted = [...seconds].sort((a, b) => a - b)
const median = sorted[Math.floor(sorted.length / 2)]
console.log(`npm test${busy ? ' (busy)' : ''}, median of ${runs}: ${median.toFixed(1)} s (target ≤ ${TARGET_S} s)`)
process.exit(median <= TARGET_S ? 0 : 1)
