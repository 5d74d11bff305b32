// @ts-check
/**
 * Mutation testing of the deciding core: `npm run test:mutation`, in .ci/run after npm test. The tests
 * it runs per mutant are those of vitest.mutation.config.ts; the score per folder is printed in the
 * clear-text table, and a score under `thresholds.break` fails the run. CONTRIBUTING.md ("Coverage and
 * mutation gates") says what the floor is, how long it takes and which survivors are judged equivalent.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  // The deciding core, and processObject with the phases of its rounds (src/worker/: the done-check, the
  // round, the transform and publish, the tidying after it, the round's result, the create's kept
  // output), the delete path (removeOutputs.ts) and the side-output protocol (sideOutputs.ts). Not
  // here: the worker's option declarations (processObjectOptions.ts, types and a name list):
  // CONTRIBUTING.md ("Coverage and mutation gates") says why.
  mutate: [
    'src/done/**/*.ts',
    'src/publish/**/*.ts',
    'src/ledger/ledgerDecision.ts',
    'src/worker/processObject.ts',
    'src/worker/doneCheck.ts',
    'src/worker/publishRound.ts',
    'src/worker/transformAndPublish.ts',
    'src/worker/tidyAfterPublish.ts',
    'src/worker/roundResult.ts',
    'src/worker/removeOutputs.ts',
    'src/worker/sideOutputs.ts',
    'src/worker/keptOutput.ts',
  ],
  // Each mutant runs only the tests that reached it in the first (coverage) run.
  coverageAnalysis: 'perTest',
  concurrency: 2,
  // Added to 1.5 times a mutant's tests' time in the first run: a mutant that loops is cut off early.
  timeoutMS: 10_000,
  // Stryker copies the project into .stryker-tmp/ for each run: the tests need none of these.
  ignorePatterns: ['.venv', '.tools', 'cdk.out', 'coverage', '.ci-report', 'dist', 'api-docs', '.rerun', 'reports'],
  // Stryker rewrites a tsconfig's paths that leave the sandbox with the TypeScript compiler API, which
  // TypeScript 7 (the project's) no longer has; the project's tsconfig.json has no such paths (no
  // `extends`, no `references`), so the rewrite is pointed at a file that does not exist and skipped.
  tsconfigFile: 'tsconfig.stryker-has-none.json',
  reporters: ['clear-text', 'progress-append-only', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  // break: the score measured on 2026-12-07 once every survivor was triaged (93.14 %), rounded down, less a
  // point of room for timeouts under load; raise it as survivors are killed (CONTRIBUTING.md).
  thresholds: { high: 90, low: 70, break: 92 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
