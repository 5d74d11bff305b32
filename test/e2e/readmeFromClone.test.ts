import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevReady, DevSummary } from '../../app/dev/runDev.js';
import { ensurePythonTool, PythonTool } from '../../local/emulator/pythonEnvironment.js';
import { codeBlocks } from '../../scripts/docPages.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The shell command lines of the README and the guides (scripts/docPages.ts), comments and blank lines left out. */
function readmeCommands(): string[] {
  return codeBlocks('sh')
    .flatMap((block) => block.code.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** The TypeScript blocks of the worker guide, in order. */
const workerGuideBlocks = () =>
  codeBlocks('ts')
    .filter((block) => block.page === 'docs/guides/05-writing-and-testing-a-worker.md')
    .map((block) => block.code);

/**
 * The commands of the README and the guides this file does not run, each with where it runs or why it
 * cannot here. Any other command of them must be run below (the first test fails on one left out).
 */
const NOT_RUN_HERE: Record<string, string> = {
  'npm install rerun-pipeline @aws-sdk/client-s3 @aws-sdk/client-sqs':
    'test/package/consumer.test.ts installs the packed package into a new project',
  'npm install @aws-sdk/client-dynamodb':
    'test/package/consumer.test.ts installs it beside the package for the ledger and rerun dev',
  'npm install --save-dev aws-cdk-lib constructs esbuild': 'test/package/consumer.test.ts synthesizes the CDK example',
  'npm ci': 'the clone links the node_modules this checkout installed with npm ci from the same lockfile',
  'npm test': 'this file is part of npm test',
  'npm run test:chaos': 'about 12 minutes, run by .ci/run; test/chaos/*.test.ts (in npm test) check its harness',
  'npm run bench': 'about 5 minutes of measuring, run by hand; test/unit/benchTargets.test.ts checks its judging',
  'bash scripts/install-lambda-runtime.sh':
    'the lambda-runtime tier (npm run test:lambda-runtime) installs and uses it',
  'npx rerun dev --once --demo --runtime lambda': 'test/lambda-runtime/devLambdaExample.test.ts',
  'npm run test:lambda-runtime': 'its own tier, run by .ci/run',
  'npx cdk bootstrap': 'needs an AWS account; the deployed tier deploys the same app to MiniStack',
  ...Object.fromEntries(
    [
      'rerun reprocess --stack my-pipeline --engine batch-operations --mode stale --wait',
      'rerun reprocess --stack my-pipeline --engine batch-operations --job 3f6e2a1c-... --wait',
      'rerun reprocess --stack my-pipeline --engine batch-operations --manifest s3://inventory/manifest.json --wait',
      // One command over two lines.
      'rerun reprocess --stack my-pipeline --engine batch-operations --generate-manifest \\',
      '--prefix incoming/dt=2026-11- --created-before 2026-12-01T00:00:00Z --wait',
    ].map((command) => [
      command,
      'needs AWS: no emulator here implements S3 Control jobs; test/e2e/reprocessBatchOperations.test.ts and reprocessBatchOperationsManifests.test.ts run the engine (CSV, Inventory and generated manifests) under rerun dev with the local stand-in, test/integration/batchOperationsEngine.test.ts the AWS path with S3 Control scripted',
    ]),
  ),
  'npx cdk deploy -c rerun:webhookSecret=rerun/webhook': 'needs an AWS account (as above)',
  'npx rerun ui':
    'serves until Ctrl+C; the browser tier (npm run test:browser) opens it against a running rerun dev: test/browser/demo.test.ts after rerun dev --demo, test/browser/console.test.ts over a seeded state',
};

/** A run of a command in the clone, as a person types it there. */
interface Run {
  readonly child: ChildProcess;
  /** Ctrl+C in the terminal: SIGINT to the command's whole process group. */
  interrupt(): void;
  stdout(): string[];
  stderr(): string;
  readonly exit: Promise<number | null>;
}

const children: ChildProcess[] = [];

/**
 * The README, run from a fresh clone: the repository's tracked files as they are now (a clone of
 * this commit, with any uncommitted change of a tracked file), nothing built, no dist/. Two things
 * come from this checkout instead of being made again: node_modules/ (what the quick start's
 * `npm ci` installs from the lockfile; installing again needs the network and minutes) and
 * .venv/moto (what the first `npm start` installs, covered by test/integration/pythonEnvironment.test.ts).
 */
/**
 * The tracked files as a clone has them, as a tar: HEAD, or the working tree's tracked changes on top
 * of it. Where git cannot answer (no repository, a checkout owned by another user, no identity for
 * `stash create`), the tree itself minus what `.gitignore` names: on a clean clone that is the same set.
 */
function trackedFiles(): Buffer {
  const identity = { GIT_AUTHOR_NAME: 'rerun test', GIT_AUTHOR_EMAIL: 'test@example.invalid' };
  const env = {
    ...process.env,
    ...identity,
    GIT_COMMITTER_NAME: identity.GIT_AUTHOR_NAME,
    GIT_COMMITTER_EMAIL: identity.GIT_AUTHOR_EMAIL,
  };
  const git = (args: string[]) =>
    execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd: ROOT, env, maxBuffer: 1 << 30 });
  try {
    const revision = git(['stash', 'create']).toString().trim() || 'HEAD';
    return git(['archive', '--format=tar', revision]);
  } catch {
    const ignored = readFileSync(join(ROOT, '.gitignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim().replace(/\/$/, ''))
      .filter((l) => l !== '' && !l.startsWith('#'));
    const excludes = ['.git', ...ignored].map((p) => `--exclude=${p}`);
    return execFileSync('tar', ['-c', ...excludes, '.'], { cwd: ROOT, maxBuffer: 1 << 30 });
  }
}

describe('the README and the guides, run as written in a fresh clone', () => {
  let clone = '';
  const run = (command: string, args: string[], env: NodeJS.ProcessEnv = {}): Run => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    if (!('AWS_ENDPOINT_URL' in env)) delete childEnv.AWS_ENDPOINT_URL;
    // The clone is a user's, not this test run's: no credentials of the suite.
    delete childEnv.AWS_ACCESS_KEY_ID;
    delete childEnv.AWS_SECRET_ACCESS_KEY;
    if (env.AWS_ACCESS_KEY_ID) childEnv.AWS_ACCESS_KEY_ID = env.AWS_ACCESS_KEY_ID;
    if (env.AWS_SECRET_ACCESS_KEY) childEnv.AWS_SECRET_ACCESS_KEY = env.AWS_SECRET_ACCESS_KEY;
    // A process group of its own, as a terminal gives a command: Ctrl+C signals the whole group
    // (npm does not relay a signal to its script; the terminal reaches it directly).
    const child = spawn(command, args, {
      cwd: clone,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    return {
      child,
      interrupt: () => process.kill(-(child.pid as number), 'SIGINT'),
      stdout: () => out.split('\n').filter((l) => l !== ''),
      stderr: () => err,
      // 'close': every process of the command has closed its output (npm's script outlives npm on Ctrl+C).
      exit: new Promise((resolve) => child.once('close', (code) => resolve(code))),
    };
  };
  /** A command line of the README, split as a shell splits it (no quoting in these lines). */
  const runLine = (line: string, env: NodeJS.ProcessEnv = {}) => {
    const [command, ...args] = line.split(/\s+/);
    return run(command as string, args, env);
  };
  const waitFor = async (what: () => boolean, timeoutMs: number, describe: () => string) => {
    const deadline = Date.now() + timeoutMs;
    while (!what()) {
      if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const summaryOf = (r: Run) =>
    JSON.parse(
      r
        .stdout()
        .find((l) => l.startsWith('SUMMARY '))
        ?.slice('SUMMARY '.length) ?? '{}',
    ) as DevSummary;

  beforeAll(async () => {
    await ensurePythonTool(PythonTool.MOTO, { progress: () => {} });
    clone = mkdtempSync(join(tmpdir(), 'rerun-clone-'));
    execFileSync('tar', ['-x', '-C', clone], { input: trackedFiles(), maxBuffer: 1 << 30 });
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    mkdirSync(join(clone, '.venv'));
    symlinkSync(join(ROOT, '.venv', 'moto'), join(clone, '.venv', 'moto'));
  }, 120_000);
  afterAll(() => {
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) {
        try {
          process.kill(-(c.pid as number), 'SIGKILL');
        } catch {
          // The group is gone already.
        }
      }
    }
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it('runs every command of the README and the guides here, or names where it runs and why not here', () => {
    const runHere = [
      'npm start',
      'npx rerun dev --handler functions/upper/handler.ts',
      ...readmeCommands().filter((c) => c.startsWith('npx rerun ') && !c.includes('--runtime lambda')),
    ];
    for (const command of readmeCommands()) {
      expect(runHere.includes(command) || command in NOT_RUN_HERE, `documented command left untested: ${command}`).toBe(
        true,
      );
    }
    for (const command of Object.keys(NOT_RUN_HERE)) expect(readmeCommands(), command).toContain(command);
    // No build output in the clone: the worker test below runs with the sources alone.
    expect(() => readFileSync(join(clone, 'dist', 'src', 'index.js'))).toThrow();
  });

  it('quick start: npm start uploads examples/, shows each outcome and the table, and on Ctrl+C prints SUMMARY', async () => {
    const start = run('npm', ['start']);
    // Fourteen records: thirteen samples and the s3:TestEvent. Then the person presses Ctrl+C.
    await waitFor(
      () => (start.stderr().match(/^(processed|skipped|failed|retrying) {2,}/gm) ?? []).length >= 14,
      120_000,
      () => start.stderr(),
    );
    start.interrupt();
    // npm itself ends by the signal (as in a terminal); rerun dev finishes its work and reports.
    await start.exit;
    expect(start.stderr()).toMatch(/^rerun: SIGINT received, finishing/m);
    // npm's banner first (README: npm start --silent leaves it out), then rerun's two lines.
    expect(start.stdout().map((l) => l.split(' ')[0])).toEqual(['>', '>', 'READY', 'SUMMARY']);
    expect(summaryOf(start)).toMatchObject({ processed: 12, skipped: 2, failed: 0, deadLettered: 0, uploaded: 13 });
    expect(start.stderr()).toMatch(/^STATUS\s+TRIES\s+OBJECT\s+OUTPUT\s+REASON$/m);
    // The commands that work against it, printed when it was ready (each finds the running session).
    expect(start.stderr()).toMatch(/^Outputs: {4}npx rerun ls s3:\/\/rerun-output\/normalized\/$/m);
  }, 180_000);

  it('"Write your own worker": the worker guide\'s handler.ts, in the checkout, with no build, runs under rerun dev', async () => {
    const [upper] = workerGuideBlocks();
    expect(upper).toContain("from 'rerun-pipeline'");
    mkdirSync(join(clone, 'functions', 'upper'), { recursive: true });
    writeFileSync(join(clone, 'functions', 'upper', 'handler.ts'), upper as string);
    // "Run it locally with npx rerun dev --handler path/to/handler.ts"; --once --demo so it ends.
    const dev = runLine('npx rerun dev --handler functions/upper/handler.ts --once --demo');
    expect(await dev.exit, dev.stderr()).toBe(0);
    expect(dev.stderr()).not.toMatch(/Cannot find module|dist\/src\/index\.js/);
    // It has no skip rule: all thirteen samples get an output; the s3:TestEvent is skipped.
    expect(summaryOf(dev)).toMatchObject({ processed: 13, skipped: 1, failed: 0, outcomesSeen: true });
    expect(dev.stderr()).toMatch(
      /^processed {2}s3:\/\/rerun-input\/incoming\/orders\.csv {2}output created: chars \d+$/m,
    );
    // Its outputs are under its own prefix: the hint, printed when it was ready, lists the whole bucket.
    expect(dev.stderr()).toMatch(/^Outputs: {4}npx rerun ls s3:\/\/rerun-output\/$/m);
  }, 180_000);

  it('the operator commands of the README and the guides run against the local stack of a running rerun dev', async () => {
    const dev = run('npx', ['rerun', 'dev', '--demo']);
    await waitFor(
      // Every sample done (thirteen and the s3:TestEvent): the backfill of the demo's days finds them normalized.
      () =>
        dev.stdout().some((l) => l.startsWith('READY ')) &&
        (dev.stderr().match(/^(processed|skipped|failed|retrying) {2,}/gm) ?? []).length >= 14,
      120_000,
      () => dev.stderr(),
    );
    const ready = JSON.parse(
      dev
        .stdout()
        .find((l) => l.startsWith('READY '))
        ?.slice('READY '.length) ?? '{}',
    ) as DevReady;
    // "works against AWS_ENDPOINT_URL (the local stack)"; an emulator takes any credentials.
    const env = { AWS_ENDPOINT_URL: ready.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const operator = readmeCommands().filter(
      (c) => c.startsWith('npx rerun ') && !c.startsWith('npx rerun dev') && !(c in NOT_RUN_HERE),
    );
    expect(operator.length).toBeGreaterThanOrEqual(8);
    try {
      for (const line of operator) {
        const r = runLine(line, env);
        const code = await r.exit;
        expect(code, `${line}\n${r.stderr()}`).toBe(0);
        expect(r.stderr(), line).not.toMatch(/^rerun \w+: /m);
        expect(r.stdout().at(-1), line).toMatch(/^SUMMARY \{/);
      }
    } finally {
      dev.interrupt();
      await dev.exit;
    }
  }, 300_000);
});
