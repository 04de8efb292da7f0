// One fixed seed for every property in CI, printed on failure by fast-check; set
// FC_SEED to replay a failure, FC_RUNS to search harder.
import fc from 'fast-check'

const seed = process.env['FC_SEED'] !== undefined ? Number(process.env['FC_SEED']) : 20261202
const numRuns = process.env['FC_RUNS'] !== undefined ? Number(process.env['FC_RUNS']) : 200

fc.configureGlobal({ seed, numRuns, verbose: 1 })
