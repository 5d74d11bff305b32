import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';
import { formatOutcomeTable } from '../../app/dev/formatOutcomeTable.js';
import { OutcomeTracker } from '../../app/dev/OutcomeTracker.js';
import { ProgressReporter } from '../../app/dev/ProgressReporter.js';
import type { DevReady, DevSummary } from '../../app/dev/runDev.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';

const FIXTURE_HANDLER = 'test/fixtures/handlers/s3Copy.ts';
/** Short local timings so a failing message reaches the DLQ in seconds (2 receives x 3 s). */
const FAST = ['--visibility-timeout', '3', '--function-timeout', '1', '--max-receive-count', '2'];

interface CliRun {
  child: ChildProcess;
  stdout: string[];
  stderr: () => string;
  exit: Promise<number | null>;
  /** Resolves with the first stdout line matching, or rejects when the process exits first. */
  line(pattern: RegExp): Promise<string>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Spawns `node --import tsx app/cli/rerun.ts ...args` as a user would run it. */
function rerun(args: string[], env: Record<string, string | undefined>): CliRun {
  return spawnCli(process.execPath, ['--import', 'tsx', 'app/cli/rerun.ts', ...args], env);
}

/** Spawns `npm start [npmFlags] -- ...args`: the README's own command, npm's banner and all. */
function npmStart(npmFlags: string[], args: string[], env: Record<string, string | undefined>): CliRun {
  return spawnCli('npm', ['start', ...npmFlags, '--', ...args], env);
}

/** Spawns `npx ...args` in the checkout, as the README's commands are typed there. */
function npx(args: string[], env: Record<string, string | undefined>): CliRun {
  return spawnCli('npx', args, env);
}

function spawnCli(command: string, commandArgs: string[], env: Record<string, string | undefined>): CliRun {
  const childEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  const child = spawn(command, commandArgs, {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const stdout: string[] = [];
  let stderr = '';
  let partial = '';
  const listeners = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    stdout.push(...lines);
    for (const l of listeners) l();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const l of listeners) l();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = <T>(probe: () => T | undefined, what: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = probe();
        if (found !== undefined) {
          listeners.delete(check);
          resolve(found);
        }
      };
      listeners.add(check);
      check();
      void exit.then(() => {
        check();
        if (listeners.has(check)) reject(new Error(`rerun exited before ${what}. stderr:\n${stderr}`));
      });
    });
  return {
    child,
    stdout,
    stderr: () => stderr,
    exit,
    line: (pattern) => waitFor(() => stdout.find((l) => pattern.test(l)), `a stdout line ${pattern}`),
  };
}

/** Resolves once stderr matches (rejects when the process exits first). */
function waitForText(run: CliRun, pattern: RegExp, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = () => {
      if (pattern.test(run.stderr())) return resolve();
      if (run.child.exitCode !== null || Date.now() > deadline) {
        return reject(new Error(`stderr never matched ${pattern}:\n${run.stderr()}`));
      }
      setTimeout(check, 100);
    };
    check();
  });
}

function payload<T>(line: string, prefix: 'READY' | 'SUMMARY'): T {
  expect(line.startsWith(`${prefix} {`)).toBe(true);
  return JSON.parse(line.slice(prefix.length + 1)) as T;
}

async function put(bucket: string, key: string, body: string): Promise<void> {
  await testClients().s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

/** Polls until the handler has written `key` (the worker is asynchronous: S3 -> SQS -> runner). */
async function outputAppears(bucket: string, key: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await testClients().s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`s3://${bucket}/${key} never appeared`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

describe('rerun dev (spawned)', () => {
  it('--once: provisions, runs the handler on every upload under the prefix, prints READY, a table and SUMMARY', async () => {
    const appName = uniqueName('dev');
    const endpoint = awsEndpoint();
    // First session: provisions (nothing to process but the s3:TestEvent), so uploads can follow.
    const setup = rerun(['dev', '--once', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST], {
      AWS_ENDPOINT_URL: endpoint,
    });
    const setupReady = payload<DevReady>(await setup.line(/^READY /), 'READY');
    expect(await setup.exit).toBe(0);

    await put(setupReady.inputBucket, 'incoming/a.csv', 'id\n1\n');
    await put(setupReady.inputBucket, 'incoming/sub dir/b é+c.ndjson', '{"x":1}\n');
    await put(setupReady.inputBucket, 'incoming/notes.txt', 'not data');
    await put(setupReady.inputBucket, 'incoming/please-fail.csv', 'id\n');
    await put(setupReady.inputBucket, 'elsewhere/ignored.csv', 'id\n');

    const run = rerun(['dev', '--once', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST], {
      AWS_ENDPOINT_URL: endpoint,
    });
    // Drained, but one object failed and was dead-lettered: a script must not read it as success.
    expect(await run.exit).toBe(3);
    // stdout carries exactly the two machine-readable lines.
    expect(run.stdout).toHaveLength(2);
    const ready = payload<DevReady>(run.stdout[0] ?? '', 'READY');
    expect(ready).toEqual({
      endpoint,
      region: 'us-east-1',
      emulator: 'external',
      inputBucket: `${appName}-input`,
      inputPrefix: 'incoming/',
      outputBucket: `${appName}-output`,
      queueUrl: setupReady.queueUrl,
      dlqUrl: setupReady.dlqUrl,
      ledgerTable: `${appName}-ledger`,
      sinkUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    const summary = payload<DevSummary>(run.stdout[1] ?? '', 'SUMMARY');
    expect(summary).toMatchObject({
      processed: 2,
      skipped: 1,
      failed: 1,
      deadLettered: 1,
      outcomesSeen: true,
      uploaded: 0,
      ended: 'drained',
    });
    expect(summary.invocations).toBeGreaterThanOrEqual(2);

    const table = run.stderr();
    expect(table).toMatch(/reused|unchanged/);
    // Nothing changed on this second start, and nothing is said to have (moto cannot report the
    // DLQ's redrive-allow policy back: it is sent again, and the line says so).
    expect(table).not.toMatch(/^ {2}(updated|created) /m);
    expect(table).toMatch(/^ {2}sent {6}queue \S+-normalize-dlq redrive-allow policy$/m);
    expect(table).toMatch(/^ {2}\(sent: this endpoint does not report it back, so it is sent at every start\)$/m);
    expect(table).toMatch(/STATUS\s+TRIES\s+OBJECT\s+OUTPUT\s+REASON/);
    expect(table).toMatch(
      new RegExp(`processed\\s+1\\s+s3://${appName}-input/incoming/a\\.csv\\s+copied/incoming/a\\.csv`),
    );
    expect(table).toMatch(/processed\s+1\s+s3:\/\/\S+\/incoming\/sub dir\/b é\+c\.ndjson/);
    expect(table).toMatch(/skipped\s+1\s+s3:\/\/\S+\/incoming\/notes\.txt\s+-\s+unsupported extension/);
    expect(table).toMatch(/failed\s+2\s+s3:\/\/\S+\/incoming\/please-fail\.csv\s+-\s+fixture: asked to fail/);
    expect(table).toMatch(/1 message\(s\) in the DLQ/);
    // The handler really ran against the emulator with the environment rerun dev set for it.
    const copied = await testClients().s3.send(
      new GetObjectCommand({ Bucket: ready.outputBucket, Key: 'copied/incoming/sub dir/b é+c.ndjson' }),
    );
    expect(await copied.Body?.transformToString()).toBe('{"x":1}\n');
  });

  it('a session whose delivery failed with receives left, retried by another session, reports it retrying, not failed', async () => {
    const appName = uniqueName('beside');
    const endpoint = awsEndpoint();
    const args = ['dev', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST];
    // The first session yields the object (its side effect is in progress elsewhere), as a second
    // rerun dev beside a first does on a ledger conflict; it stops before the retry comes back.
    const first = rerun(args, { AWS_ENDPOINT_URL: endpoint, FIXTURE_YIELD: '1' });
    const ready = payload<DevReady>(await first.line(/^READY /), 'READY');
    await put(ready.inputBucket, 'incoming/yield.csv', 'id\n1\n');
    // The live line names the delivery as the table names the object: retried, not failed.
    await waitForText(
      first,
      /^retrying\s+s3:\/\/\S+\/incoming\/yield\.csv\s+fixture: side effect in progress elsewhere$/m,
    );
    first.child.kill('SIGINT');
    expect(await first.exit).toBe(0);
    // Another consumer takes the retry and writes the output.
    const second = rerun(['dev', '--once', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST], {
      AWS_ENDPOINT_URL: endpoint,
    });
    expect(await second.exit).toBe(0);
    expect(payload<DevSummary>(second.stdout[1] ?? '', 'SUMMARY')).toMatchObject({ processed: 1, failed: 0 });

    const summary = payload<DevSummary>(first.stdout[1] ?? '', 'SUMMARY');
    expect(summary).toMatchObject({
      processed: 0,
      failed: 0,
      retrying: 1,
      deliveries: { processed: 0, skipped: 1, failed: 1 },
      ended: 'interrupted',
    });
    const table = first.stderr();
    expect(table).toMatch(
      /retrying\s+1\s+s3:\/\/\S+\/incoming\/yield\.csv\s+-\s+fixture: side effect in progress elsewhere/,
    );
    expect(table).toMatch(/^retrying: its last delivery here failed with receives left, so the message went back/m);
    expect(table).not.toMatch(/^failed\s/m);
  });

  it('a session ended while a poison message waits for its move to the DLQ counts it in inFlight, as the queues hold it', async () => {
    const appName = uniqueName('poison');
    const endpoint = awsEndpoint();
    // One receive allowed, and a visibility timeout long enough that the session ends before it
    // lapses: SQS moves the message to the DLQ only at its next receive after that, so at the end it
    // is still in the source queue, held invisible.
    const args = ['dev', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName];
    const timings = ['--visibility-timeout', '60', '--function-timeout', '1', '--max-receive-count', '1'];
    const run = rerun([...args, ...timings], { AWS_ENDPOINT_URL: endpoint });
    const ready = payload<DevReady>(await run.line(/^READY /), 'READY');
    await put(ready.inputBucket, 'incoming/poison-fail.csv', 'id\n');
    await waitForText(run, /^failed\s+s3:\/\/\S+\/incoming\/poison-fail\.csv\s+fixture: asked to fail$/m);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);

    const summary = payload<DevSummary>(run.stdout[1] ?? '', 'SUMMARY');
    expect(summary).toMatchObject({ failed: 1, deadLettered: 0, inFlight: 1, ended: 'interrupted' });
    expect(run.stderr()).toMatch(
      new RegExp(`^1 message\\(s\\) still in the queue ${appName}-normalize-queue, not settled: `, 'm'),
    );
    // What the queues hold after the session: the counts above, not a guess.
    const attributes = async (queueUrl: string) =>
      (
        await testClients().sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: queueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        )
      ).Attributes;
    expect(await attributes(ready.queueUrl)).toEqual({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '1',
    });
    expect(await attributes(ready.dlqUrl)).toEqual({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  it("through npm start --silent, stdout holds exactly READY and SUMMARY; plain npm start adds only npm's banner before them", async () => {
    const appName = uniqueName('npmstart');
    const args = ['--once', '--app-name', appName];
    const first = npmStart(['--silent'], args, { AWS_ENDPOINT_URL: awsEndpoint() });
    expect(await first.exit).toBe(0);
    const second = npmStart([], args, { AWS_ENDPOINT_URL: awsEndpoint() });
    expect(await second.exit).toBe(0);
    const lines = first.stdout.filter((l) => l !== '');
    expect(lines, first.stderr()).toHaveLength(2);
    expect(lines[0]).toMatch(/^READY \{/);
    expect(lines[1]).toMatch(/^SUMMARY \{/);
    // npm prints its script banner on stdout unless told --silent (docs/guides/01-getting-started.md, "The rerun dev contract").
    expect(second.stdout.filter((l) => l !== '')).toEqual([
      '> rerun-pipeline@0.1.0 start',
      `> tsx app/cli/rerun.ts dev --demo ${args.join(' ')}`,
      expect.stringMatching(/^READY \{/),
      expect.stringMatching(/^SUMMARY \{/),
    ]);
    expect(payload<DevSummary>(second.stdout.filter(Boolean).at(-1) ?? '', 'SUMMARY')).toMatchObject({
      uploaded: 0,
      failed: 0,
      deadLettered: 0,
    });
    // Every demo upload of the second start answers the expected 412, silently.
    expect(second.stderr()).not.toMatch(/non-retryable streaming request/);
  });

  it('npx rerun that fails leaves stdout to rerun: SUMMARY stays the last line, --json output stays one JSON document', async () => {
    const appName = uniqueName('npx');
    const endpoint = awsEndpoint();
    const failing = npx(
      ['rerun', 'dev', '--once', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST],
      { AWS_ENDPOINT_URL: endpoint },
    );
    const ready = payload<DevReady>(await failing.line(/^READY /), 'READY');
    expect(await failing.exit).toBe(0);
    await put(ready.inputBucket, 'incoming/please-fail.csv', 'id\n');
    const again = npx(
      ['rerun', 'dev', '--once', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST],
      { AWS_ENDPOINT_URL: endpoint },
    );
    expect(await again.exit).toBe(3);
    expect(again.stdout.filter((l) => l !== '').map((l) => l.split(' ')[0])).toEqual(['READY', 'SUMMARY']);

    const status = npx(['rerun', 'status', '--from', '2026-01-01', '--to', '2026-01-02', '--json'], {
      AWS_ENDPOINT_URL: 'localhost:4566',
    });
    expect(await status.exit).toBe(1);
    expect(JSON.parse(status.stdout.join('\n'))).toEqual({
      error: { name: 'EndpointUnusableError', message: expect.stringMatching(/has no scheme/) },
    });
  });

  it('--demo uploads a directory create-only: a second run uploads (and processes) nothing again', async () => {
    const appName = uniqueName('demo');
    const dir = await mkdtemp(join(tmpdir(), 'rerun-demo-'));
    try {
      await mkdir(join(dir, 'nested'));
      await writeFile(join(dir, 'one.csv'), 'id\n1\n');
      await writeFile(join(dir, 'nested', 'two.ndjson'), '{"id":2}\n');
      await writeFile(join(dir, 'README.md'), 'describes the samples; not uploaded');
      const args = ['dev', '--once', '--demo', '--examples', dir, '--handler', FIXTURE_HANDLER, '--app-name', appName];
      const first = rerun([...args, ...FAST], { AWS_ENDPOINT_URL: awsEndpoint() });
      expect(await first.exit).toBe(0);
      expect(payload<DevSummary>(first.stdout[1] ?? '', 'SUMMARY')).toMatchObject({
        uploaded: 2,
        alreadyUploaded: 0,
        processed: 2,
        failed: 0,
        ended: 'drained',
      });
      expect(first.stderr()).toMatch(/processed\s+1\s+s3:\/\/\S+\/incoming\/nested\/two\.ndjson/);

      const second = rerun([...args, ...FAST], { AWS_ENDPOINT_URL: awsEndpoint() });
      expect(await second.exit).toBe(0);
      expect(payload<DevSummary>(second.stdout[1] ?? '', 'SUMMARY')).toMatchObject({
        uploaded: 0,
        alreadyUploaded: 2,
        processed: 0,
        ended: 'drained',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('without --once keeps processing new uploads until SIGINT, then prints SUMMARY and exits 0', async () => {
    const appName = uniqueName('watch');
    const run = rerun(['dev', '--no-demo', '--handler', FIXTURE_HANDLER, '--app-name', appName, ...FAST], {
      AWS_ENDPOINT_URL: awsEndpoint(),
    });
    const ready = payload<DevReady>(await run.line(/^READY /), 'READY');
    await put(ready.inputBucket, 'incoming/late.csv', 'id\n');
    await outputAppears(ready.outputBucket, 'copied/incoming/late.csv');
    await put(ready.inputBucket, 'incoming/later.csv', 'id\n');
    await outputAppears(ready.outputBucket, 'copied/incoming/later.csv');
    expect(run.stderr()).toMatch(/invocation \w+ success: \d+ record/);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);
    const summary = payload<DevSummary>(run.stdout[1] ?? '', 'SUMMARY');
    expect(summary).toMatchObject({ processed: 2, ended: 'interrupted' });
    expect(run.stderr()).toMatch(/processed\s+1\s+s3:\/\/\S+\/incoming\/later\.csv/);
  });

  it('without AWS_ENDPOINT_URL starts the embedded emulator and stops it at exit', async () => {
    const run = rerun(['dev', '--once', '--no-demo', '--handler', FIXTURE_HANDLER], {
      AWS_ENDPOINT_URL: undefined,
    });
    expect(await run.exit).toBe(0);
    const ready = payload<DevReady>(run.stdout[0] ?? '', 'READY');
    expect(ready.emulator).toBe('embedded');
    expect(ready.endpoint).not.toBe(awsEndpoint());
    expect(ready.inputBucket).toBe('rerun-input');
    expect(payload<DevSummary>(run.stdout[1] ?? '', 'SUMMARY')).toMatchObject({ skipped: 1, ended: 'drained' });
    await expect(fetch(`${ready.endpoint}/moto-api/`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  });

  it('names the cause and the fix within 10 s: a scheme-less endpoint, and no credentials', async () => {
    let started = Date.now();
    const schemeless = rerun(['dev', '--once', '--no-demo'], { AWS_ENDPOINT_URL: 'localhost:4566' });
    expect(await schemeless.exit).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(schemeless.stderr()).toMatch(/AWS_ENDPOINT_URL=localhost:4566 has no scheme: write http:\/\/localhost:4566/);

    // No credentials anywhere: no variables, no ~/.aws, no instance metadata to ask.
    const home = await mkdtemp(join(tmpdir(), 'rerun-nocreds-'));
    try {
      started = Date.now();
      const nocreds = rerun(['dev', '--once', '--no-demo', '--app-name', uniqueName('nocreds')], {
        AWS_ENDPOINT_URL: awsEndpoint(),
        AWS_ACCESS_KEY_ID: undefined,
        AWS_SECRET_ACCESS_KEY: undefined,
        AWS_SESSION_TOKEN: undefined,
        AWS_PROFILE: undefined,
        HOME: home,
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      expect(await nocreds.exit).toBe(1);
      expect(nocreds.stderr()).toMatch(
        /No AWS credentials to talk to .*export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test/,
      );
    } finally {
      await rm(home, { recursive: true, force: true });
    }
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('exits 1 with the cause when the handler module cannot be loaded', async () => {
    const run = rerun(
      ['dev', '--once', '--handler', 'test/fixtures/handlers/throwsOnImport.ts', '--app-name', uniqueName('bad')],
      {
        AWS_ENDPOINT_URL: awsEndpoint(),
      },
    );
    expect(await run.exit).toBe(1);
    expect(run.stdout).toEqual([]);
    expect(run.stderr()).toMatch(
      /^rerun dev: Importing the handler module .*throwsOnImport\.ts failed: fixture: OUTPUT_BUCKET is not configured$/m,
    );
  });
});

describe('rerun command line (in process)', () => {
  function io() {
    const out: string[] = [];
    let err = '';
    const value: CliIo = {
      stdout: (l) => void out.push(l),
      stderr: (t) => {
        err += t;
      },
      env: {},
      isTTY: false,
      signal: new AbortController().signal,
    };
    return { value, out, err: () => err };
  }

  it('rejects unknown options loudly, before running anything', async () => {
    const x = io();
    expect(await runCli(['dev', '--once', '--visiblity-timeout', '3'], x.value)).toBe(2);
    expect(x.err()).toMatch(/rerun dev: Unknown option '--visiblity-timeout'/);
    expect(x.out).toEqual([]);
  });

  it('rejects contradictory and malformed values', async () => {
    const contradictory = io();
    expect(await runCli(['dev', '--demo', '--no-demo'], contradictory.value)).toBe(2);
    expect(contradictory.err()).toMatch(/contradict/);
    const malformed = io();
    expect(await runCli(['dev', '--max-receive-count', 'five'], malformed.value)).toBe(2);
    expect(malformed.err()).toMatch(/--max-receive-count must be an integer/);
  });

  it('answers --help (on stdout) for the program and for each command, and refuses unknown commands', async () => {
    const global = io();
    expect(await runCli(['--help'], global.value)).toBe(0);
    expect(global.out.join('\n')).toMatch(/Commands:\n(?:.*\n)*\s+dev\s+Run the pipeline locally/);
    expect(global.err()).toBe('');
    const dev = io();
    expect(await runCli(['dev', '--help'], dev.value)).toBe(0);
    expect(dev.out.join('\n')).toMatch(/^Usage: rerun dev/);
    expect(dev.out.join('\n')).toMatch(/--visibility-timeout SECONDS/);
    expect(dev.err()).toBe('');
    const unknown = io();
    expect(await runCli(['deploy'], unknown.value)).toBe(2);
    expect(unknown.err()).toMatch(/unknown command "deploy"/);
  });
});

describe('rerun dev output (in process)', () => {
  it('keeps one row per object with its latest status, counting tries', () => {
    const tracker = new OutcomeTracker();
    const source = { bucket: 'in', key: 'incoming/a.csv' };
    tracker.add({ messageId: 'm1', status: 'failed', reason: 'throttled', source });
    tracker.add({ messageId: 'm1', status: 'processed', reason: 'output created', source, outputKey: 'out/a' });
    tracker.add({ messageId: 'm2', status: 'skipped', reason: 's3:TestEvent' });
    expect(tracker.rows()).toEqual([
      {
        subject: 's3://in/incoming/a.csv',
        status: 'processed',
        reason: 'output created',
        outputKey: 'out/a',
        attempts: 2,
      },
      { subject: 'message m2', status: 'skipped', reason: 's3:TestEvent', attempts: 1 },
    ]);
    expect(tracker.counts()).toEqual({ processed: 1, skipped: 1, failed: 0, retrying: 0 });
  });

  it('renders an aligned table with one line per object and shortened one-line reasons', () => {
    const table = formatOutcomeTable(
      [
        { subject: 's3://in/a.csv', status: 'processed', reason: 'ok', outputKey: 'out/a.ndjson', attempts: 1 },
        {
          subject: 's3://in/long name.csv',
          status: 'failed',
          reason: `line one\nline two ${'x'.repeat(100)}`,
          attempts: 3,
        },
      ],
      { maxReasonLength: 30 },
    );
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe('STATUS     TRIES  OBJECT                 OUTPUT        REASON');
    expect(lines[1]).toBe('processed  1      s3://in/a.csv          out/a.ndjson  ok');
    expect(lines[2]).toBe(
      `failed     3      s3://in/long name.csv  -             line one line two ${'x'.repeat(11)}…`,
    );
    expect(formatOutcomeTable([])).toBe('No records reached the handler.\n');
    expect(formatOutcomeTable([], { recordsDelivered: 3 })).toMatch(
      /^3 record\(s\) reached the handler, but none reported an outcome to rerun dev: a handler not built with rerun-pipeline's createSqsBatchHandler/,
    );
  });

  it('shows a line per invocation on a log, and one line updated in place on a terminal', () => {
    const report = {
      requestId: '0123456789abcdef',
      messageIds: ['a', 'b'],
      deleted: ['a'],
      retained: ['b'],
      outcome: 'partial' as const,
      durationMs: 12,
    };
    let log = '';
    const plain = new ProgressReporter({ write: (t) => (log += t) });
    plain.invocation(report);
    plain.invocation({ ...report, outcome: 'error', deleted: [], retained: ['a', 'b'], error: 'Error: boom' });
    expect(log).toBe(
      'invocation 01234567 partial: 2 record(s), 1 deleted, 1 retained, 12 ms\n' +
        'invocation 01234567 error: 2 record(s), 0 deleted, 2 retained, 12 ms - Error: boom\n',
    );
    let screen = '';
    const tty = new ProgressReporter({ write: (t) => (screen += t), tty: true });
    tty.invocation(report);
    tty.invocation(report);
    tty.finish();
    expect(screen.split('\r\x1b[2K')).toEqual([
      '',
      'invocations 1 | records 2 | deleted 1 | retained 1 | failed invocations 0',
      'invocations 2 | records 4 | deleted 2 | retained 2 | failed invocations 0\n',
    ]);
  });
});
