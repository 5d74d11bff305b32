import { describe, expect, it } from 'vitest';
import { documentedExamples, exampleArgs, runExample, summaryOf } from '../support/devExample.js';

/**
 * The `--runtime lambda` example of `rerun dev --help` and the README, run as written: the demo
 * samples through the bundles `cdk deploy` would upload, each invocation in a warm aws-lambda-rie
 * slot. It needs the tools of scripts/install-lambda-runtime.sh, so it runs in
 * `npm run test:lambda-runtime` (test/e2e/devExamples.test.ts checks that this file exists and that
 * the tier's script includes test/lambda-runtime/).
 */
const LAMBDA_EXAMPLE = 'rerun dev --once --demo --runtime lambda';

describe('the rerun dev --runtime lambda example', () => {
  it('is documented as this test runs it (--help and the README; npx runs the same bin)', () => {
    expect(documentedExamples()).toContain(LAMBDA_EXAMPLE);
    expect(exampleArgs(`npx ${LAMBDA_EXAMPLE}`)).toEqual(exampleArgs(LAMBDA_EXAMPLE));
  });

  it('"rerun dev --once --demo --runtime lambda" processes the samples on the deployed bundles and exits 0', async () => {
    const run = await runExample(LAMBDA_EXAMPLE);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.map((l) => l.split(' ')[0])).toEqual(['READY', 'SUMMARY']);
    expect(summaryOf(run.stdout)).toMatchObject({ failed: 0, deadLettered: 0 });
    expect(summaryOf(run.stdout)?.processed).toBeGreaterThan(0);
    // It ran the synthesized bundles (the in-process runtime loads the sources instead).
    expect(run.stderr).toMatch(/Synthesizing the stack's worker bundles/);
    expect(run.stderr).toMatch(/invocation \S+ success: \d+ record\(s\)/);
  }, 300_000);
});
