import { configDefaults, defineConfig } from 'vitest/config';

/** `npm run test:lambda-runtime` (RERUN_TEST_RUNTIME=lambda): the seed tests on the deployed bundles. */
const lambdaRuntime = process.env.RERUN_TEST_RUNTIME === 'lambda';
/** `npm run test:sim` (RERUN_SIM=full): the simulation tier at full size (test/sim/simMode.ts). */
const simFull = process.env.RERUN_SIM === 'full';
/** `npm run test:second-user` (RERUN_SECOND_USER=1, as root): a second OS user on the same machine. */
const secondUser = process.env.RERUN_SECOND_USER === '1';
const reportName = lambdaRuntime
  ? 'vitest-lambda-runtime'
  : simFull
    ? 'vitest-sim'
    : secondUser
      ? 'vitest-second-user'
      : 'vitest';

export default defineConfig({
  test: {
    // test/second-user/ acts as the user nobody, which needs root: `npm run test:second-user` runs it alone.
    include: secondUser ? ['test/second-user/**/*.test.ts'] : ['test/**/*.test.ts'],
    // The deployed tier has its own config and emulator: npm run test:deployed (vitest.deployed.config.ts);
    // the browser tier its own Chromium: npm run test:browser (vitest.browser.config.ts).
    // test/lambda-runtime/ needs the tools of scripts/install-lambda-runtime.sh: `npm run test:lambda-runtime`
    // runs it, with the seed tests on the deployed bundle.
    exclude: lambdaRuntime
      ? [...configDefaults.exclude, 'test/deployed/**', 'test/browser/**']
      : [
          ...configDefaults.exclude,
          'test/deployed/**',
          'test/lambda-runtime/**',
          'test/browser/**',
          ...(secondUser ? [] : ['test/second-user/**']),
        ],
    globalSetup: ['test/globalSetup.ts'],
    // CI also writes a JSON report per run, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: `.ci-report/${reportName}.json` }]] : ['default'],
    // `npm test -- --coverage` (as .ci/run runs it): V8 coverage of the library the tests run in process.
    // Code that runs only in child processes (rerun dev, the Lambda runtime mode, the chaos runners) is
    // not counted, so the figure is a floor. A run under a threshold fails (CONTRIBUTING.md, "Coverage and
    // mutation gates").
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // .rerun/mutants/: the simulation tier's mutated copies of src/, loaded in process by its mutation suite.
      exclude: ['src/**/index.ts', '.rerun/**'],
      reporter: ['text-summary', ['json-summary', { file: 'coverage-summary.json' }]],
      reportsDirectory: 'coverage',
      // A run with a failure still says how much it covered.
      reportOnFailure: true,
      thresholds: {
        // All of src/: the figures measured on 2026-12-06 (lines 96.84 %, branches 89.22 %, functions 96.44 %,
        // statements 95.09 %), rounded down.
        lines: 96,
        branches: 89,
        functions: 96,
        statements: 95,
        // The done-check and the output writer: every line and branch.
        'src/done/**': { lines: 100, branches: 100 },
        'src/publish/**': { lines: 100, branches: 100 },
      },
    },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    },
  },
});
