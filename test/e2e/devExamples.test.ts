import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { command as dev } from '../../app/cli/commands/dev.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../app/cli/rerun.ts', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../fixtures/examples/', import.meta.url));

/** Every `rerun dev` command line of `rerun dev --help` (its details) and of the README's shell blocks. */
function documentedExamples(): string[] {
  const help = (dev.details ?? '')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => /^(rerun dev|npm start)\b/.test(line));
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const fromReadme = blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => /^(npx )?rerun dev\b/.test(line) || line === 'npm start');
  return [...new Set([...help, ...fromReadme])];
}

/**
 * Runs an example exactly as written, from `cwd`, with no AWS_ENDPOINT_URL: rerun dev starts its
 * embedded emulator, so the example needs nothing but itself. `rerun` is this project's CLI.
 */
function runExample(example: string, cwd = ROOT): Promise<{ code: number | null; stdout: string[]; stderr: string }> {
  const args = example.replace(/^(npx )?rerun /, '').split(/\s+/);
  const env = { ...process.env };
  delete env.AWS_ENDPOINT_URL;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.once('exit', (code) => resolve({ code, stdout: out.split('\n').filter(Boolean), stderr: err }));
  });
}

const summaryOf = (stdout: string[]) => {
  const line = stdout.find((l) => l.startsWith('SUMMARY '));
  return line ? (JSON.parse(line.slice('SUMMARY '.length)) as Record<string, number>) : undefined;
};

/**
 * How each documented example is exercised. Two run in their own tiers, which this test names and
 * checks: `npm start` (spawned through npm itself in test/e2e/dev.test.ts) and `--runtime lambda`
 * (needs aws-lambda-rie and the runtime's Node, installed by the lambda tier; its slot tests run the
 * synthesized bundles under the emulator, not this command line as written).
 */
const ELSEWHERE: Record<string, { file: string; evidence: RegExp }> = {
  'npm start': { file: 'test/e2e/dev.test.ts', evidence: /spawnCli\('npm', \['start'/ },
  'rerun dev --once --demo --runtime lambda': {
    file: 'test/lambda-runtime/lambdaRuntimeSlot.test.ts',
    evidence: /--runtime|runtime: 'lambda'|LambdaRuntime/,
  },
  'npx rerun dev --once --demo --runtime lambda': {
    file: 'test/lambda-runtime/lambdaRuntimeSlot.test.ts',
    evidence: /--runtime|runtime: 'lambda'|LambdaRuntime/,
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
