// `npm run test:time [-- RUNS]`: runs `npm test` RUNS times (3 by default), one after another, and prints each
// wall time and the median. Exits 1 when a run fails or the median is over the target: `npm test` in at most
// 4 minutes on a quiet two-core machine (issue 24). Timings depend on the machine, so it is not part of CI.
import { spawnSync } from 'node:child_process'

const TARGET_S = 240
const runs = Number(process.argv[2] ?? 3)
if (!Number.isSafeInteger(runs) || runs < 1) {
  console.error(`test-time: RUNS must be a whole number of at least 1, got ${JSON.stringify(process.argv[2])}`)
  process.exit(2)
}

const seconds = []
for (let i = 1; i <= runs; i++) {
  const start = process.hrtime.bigint()
  const run = spawnSync('npm', ['test', '--', '--reporter=dot'], { stdio: 'pipe', maxBuffer: 1 << 28 })
  const s = Number(process.hrtime.bigint() - start) / 1e9
  if (run.status !== 0) {
    process.stderr.write(run.stdout)
    console.error(`test-time: run ${i} failed (exit status ${run.status})`)
    process.exit(1)
  }
  seconds.push(s)
  console.log(`run ${i}: ${s.toFixed(1)} s`)
}
const sorted = [...seconds].sort((a, b) => a - b)
const median = sorted[Math.floor(sorted.length / 2)]
console.log(`npm test, median of ${runs}: ${median.toFixed(1)} s (target ≤ ${TARGET_S} s)`)
process.exit(median <= TARGET_S ? 0 : 1)
