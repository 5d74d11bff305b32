import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documentedExamples, exampleArgs, ROOT, runExample, summaryOf } from '../support/devExample.js';

const EXAMPLES_DIR = fileURLToPath(new URL('../fixtures/examples/', import.meta.url));

/**
 * How each documented example is exercised. Two run in their own tiers, which this test names and
 * checks: `npm start` (spawned through npm itself in test/e2e/dev.test.ts) and `--runtime lambda`
 * (needs aws-lambda-rie and the runtime's Node, installed by scripts/install-lambda-runtime.sh:
 * test/lambda-runtime/devLambdaExample.test.ts runs it as written, in `npm run test:lambda-runtime`).
 */
const ELSEWHERE: Record<string, { file: string; evidence: RegExp }> = {
  'npm start': { file: 'test/e2e/dev.test.ts', evidence: /spawnCli\('npm', \['start'/ },
  'rerun dev --once --demo --runtime lambda': {
    file: 'test/lambda-runtime/devLambdaExample.test.ts',
    evidence: /runExample\(LAMBDA_EXAMPLE\)/,
  },
  // A pipeline of the user's with window stages: run as written (from the packed package, window stages hourly and
  // daily) by the acceptance test of a user's pipeline.
  'rerun dev --handler worker.mjs --pipeline pipeline.mjs --stage-handler daily=daily.mjs': {
    file: 'test/e2e/userPipelinePacked.test.ts',
    evidence:
      /'--handler',\s*'worker\.mjs',\s*'--pipeline',\s*'pipeline\.mjs',\s*'--stage-handler',[\s\S]*?'daily=daily\.mjs'/,
  },
  'npx rerun dev --once --demo --runtime lambda': {
    file: 'test/lambda-runtime/devLambdaExample.test.ts',
    evidence: /exampleArgs\(`npx \$\{LAMBDA_EXAMPLE\}`\)/,
  },
};

describe('every rerun dev example of --help and the README is exercised', () => {
  it('lists the examples it knows, and no example is left without a test', () => {
    const known = [
      'rerun dev --once --visibility-timeout 5 --function-timeout 5 --max-receive-count 2',
      'rerun dev --once --demo',
      'rerun dev --handler ./my-worker.ts --once',
      ...Object.keys(ELSEWHERE),
    ];
    for (const example of documentedExamples()) expect(known, `untested example: ${example}`).toContain(example);
    for (const [example, where] of Object.entries(ELSEWHERE)) {
      expect(readFileSync(`${ROOT}${where.file}`, 'utf8'), `${example} in ${where.file}`).toMatch(where.evidence);
    }
    // The lambda example's test runs in the lambda-runtime tier: that tier's script must include its folder.
    const scripts = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts as Record<string, string>;
    expect(scripts['test:lambda-runtime']).toMatch(/RERUN_TEST_RUNTIME=lambda vitest run test\/lambda-runtime\b/);
    expect(exampleArgs('npx rerun dev --once --demo --runtime lambda')).toEqual(
      exampleArgs('rerun dev --once --demo --runtime lambda'),
    );
  });

  it('"rerun dev --once --demo" processes the samples and exits 0 with nothing failed or dead-lettered', async () => {
    const run = await runExample('rerun dev --once --demo');
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run.stdout)).toMatchObject({ failed: 0, deadLettered: 0 });
    expect(summaryOf(run.stdout)?.processed).toBeGreaterThan(0);
  }, 180_000);

  it('the short timings the help recommends leave time for every record: with the demo, nothing is dead-lettered', async () => {
    const example = 'rerun dev --once --visibility-timeout 5 --function-timeout 5 --max-receive-count 2';
    const asWritten = await runExample(example);
    expect(asWritten.code, asWritten.stderr).toBe(0);
    const withDemo = await runExample(`${example} --demo`);
    expect(withDemo.code, withDemo.stderr).toBe(0);
    expect(summaryOf(withDemo.stdout)).toMatchObject({ failed: 0, deadLettered: 0 });
  }, 180_000);

  it('"rerun dev --handler ./my-worker.ts --once" loads the module relative to the working directory', async () => {
    const run = await runExample('rerun dev --handler ./my-worker.ts --once', EXAMPLES_DIR);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.map((l) => l.split(' ')[0])).toEqual(['READY', 'SUMMARY']);
  }, 180_000);
});
