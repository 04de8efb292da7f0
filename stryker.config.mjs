// Mutation testing (`npm run mutation`, see docs/mutation.md). Not part of `npm test`
// nor of CI: a full run takes about two hours on a two-core machine, so the script runs
// it incrementally (only mutants whose code or tests changed are tested again);
// `npm run mutation -- --force` tests every mutant.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // related: false, so the @example blocks test/docs.test.ts imports at run time count too
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // A static mutant (module-level code: codecs, frozen lists, constants) is live from the
  // moment its module loads, so each would run the whole suite; here they are 7% of the
  // mutants and about 60% of the time. They are left out of the run and of the score.
  ignoreStatic: true,
  mutate: [
    'src/**/*.ts',
    '!src/cli/**',
    // re-exports only
    '!src/index.ts',
    '!src/extend.ts',
    '!src/*/index.ts',
  ],
  ignorePatterns: ['dist', 'coverage', 'bench', 'reports', 'test/.docs', 'test/.md', '.stryker-tmp*'],
  concurrency: 2,
  timeoutMS: 10_000,
  // the first run of the whole suite, with coverage, on a busy two-core machine takes more than the default 5 minutes
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  incrementalFile: 'reports/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
}
