/**
 * Issue 31's acceptance, deployed: the user's three-stage pipeline of test/support/clicksPipeline.ts
 * (the same files the `rerun dev` half runs, test/e2e/userPipelinePacked.test.ts), installed from
 * the packed tarball into a scratch project whose own CDK app (`app.mjs`: RerunPipeline and two
 * RerunWindowStage from `rerun-pipeline/cdk`) is deployed to MiniStack with IAM enforced. Every
 * tool is the installed `npx rerun ... --stack Clicks`, from a terminal holding PATH, HOME, TMPDIR,
 * the emulator's endpoint, region and certificate, and the operator's key (an IAM user whose every
 * request MiniStack judges): nothing else names a resource.
 */

import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { IAMClient } from '@aws-sdk/client-iam';
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveStackResources, type StackResources } from '../../app/common/stackTarget.js';
import {
  CDK_APP,
  CLICKS_DEPENDENCIES,
  CLICKS_DEPLOYED_DEPENDENCIES,
  CLICKS_FILES,
  CLICKS_STACK,
} from '../support/clicksPipeline.js';
import {
  bareTerminalEnv,
  killPackedRuns,
  type PackedCli,
  type PackedProject,
  packAndInstall,
  runPackedRerun,
} from '../support/packedProject.js';
import { readText } from '../support/s3.js';
import { cdkLocalDeploy } from './support/cdkLocalDeploy.js';
import { type CountingProxy, type RequestCounts, startCountingProxy } from './support/countingProxy.js';
import { deployedClients, drained, ministackEndpoint, ROOT_KEY, waitFor } from './support/deployedStack.js';
import { ensureMiniStackCertificate } from './support/ministackCertificate.js';
import { createOperator, type OperatorCredentials } from './support/operatorIdentity.js';

/** A UTC day `n` days before today, as a window name and as the key template's folders. */
function daysAgo(n: number): { iso: string; path: string } {
  const d = new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  const [y, m, day] = d.split('-');
  return { iso: d, path: `year=${y}/month=${m}/day=${day}` };
}

const [D1, D2] = [daysAgo(4), daysAgo(3)];
const INPUTS: Readonly<Record<string, string>> = {
  [`${D1.path}/hour=03/a.txt`]: 'a\nb\n',
  [`${D1.path}/hour=03/b.txt`]: 'c\n',
  [`${D1.path}/hour=04/c.txt`]: 'd\n',
  [`${D2.path}/hour=10/d.txt`]: 'e\nf\ng\n',
};
const GONE = `${D1.path}/hour=03/a.txt`;
const CORRUPT = `${D2.path}/hour=10/d.txt`;
const POISON = `${D2.path}/hour=11/poison.txt`;

const clients = deployedClients();
let project: PackedProject | undefined;
let stack: StackResources;
let operator: OperatorCredentials;
let proxy: CountingProxy;
const children: PackedCli['child'][] = [];

const inKey = (path: string) => `incoming/${path}`;
const outKey = (path: string) => `clean/${stack.inputBucket}/${path}.lines`;

beforeAll(async () => {
  const started = Date.now();
  project = packAndInstall({ ...CLICKS_FILES, 'app.mjs': CDK_APP }, [
    ...CLICKS_DEPENDENCIES,
    ...CLICKS_DEPLOYED_DEPENDENCIES,
  ]);
  const packed = Date.now();
  // The user's own app, run by plain node in the scratch project (the environment is bootstrapped by globalSetup).
  await cdkLocalDeploy({
    endpoint: ministackEndpoint(),
    cwd: project.dir,
    projectRoot: process.cwd(),
    stackName: CLICKS_STACK,
    app: 'node app.mjs',
    bootstrap: false,
    caBundle: process.env.NODE_EXTRA_CA_CERTS,
  });
  const aws = { endpoint: ministackEndpoint(), region: 'us-east-1', credentials: ROOT_KEY };
  stack = await resolveStackResources(new CloudFormationClient(aws), CLICKS_STACK, ministackEndpoint());
  operator = await createOperator(new IAMClient(aws), stack);
  // The tools talk to MiniStack through it: what each sent is counted there, not taken from its own report.
  proxy = await startCountingProxy(
    ministackEndpoint(),
    ensureMiniStackCertificate(join(process.cwd(), '.rerun', 'ministack-tls')),
  );
  process.stderr.write(
    `[deployed tier] packed and installed in ${packed - started} ms, ${CLICKS_STACK} deployed in ${Date.now() - packed} ms\n`,
  );
  for (const [path, body] of Object.entries(INPUTS)) {
    await clients.s3.send(new PutObjectCommand({ Bucket: stack.inputBucket, Key: inKey(path), Body: body }));
  }
  for (const path of Object.keys(INPUTS)) {
    await waitFor(`the clean output of ${path}`, () => head(stack.outputBucket, outKey(path)));
  }
  await drained(clients, stack.queueUrl);
}, 600_000);

afterAll(async () => {
  await proxy?.close();
  killPackedRuns(children);
  project?.remove();
}, 120_000);

async function head(bucket: string, key: string): Promise<{ etag: string } | undefined> {
  try {
    const out = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return { etag: out.ETag ?? '' };
  } catch {
    return undefined;
  }
}

/** `npx rerun <args> --stack Clicks` in the scratch project, from a terminal with the operator's key. */
function npxRerun(args: readonly string[]): PackedCli {
  const cli = runPackedRerun(
    project?.dir ?? '',
    [...args, '--stack', CLICKS_STACK],
    bareTerminalEnv({
      AWS_ENDPOINT_URL: proxy.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: operator.accessKeyId,
      AWS_SECRET_ACCESS_KEY: operator.secretAccessKey,
      // MiniStack serves HTTPS with the tier's own certificate (vitest.deployed.config.ts).
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS ?? '',
    }),
  );
  children.push(cli.child);
  return cli;
}

/** What the last {@link tool} run sent to MiniStack, as the counting proxy saw it. */
let sent: RequestCounts = {};

/** How many requests of {@link sent} are named starting with `name` (`s3 ListObjectsV2`, `s3 HeadObject clean/`). */
function counted(name: string): number {
  return Object.entries(sent)
    .filter(([k]) => k.startsWith(name))
    .reduce((n, [, v]) => n + v, 0);
}

/** Runs a tool to its end (exit 0) and parses its `--json` report; its requests are then in {@link sent}. */
async function tool<T>(args: readonly string[]): Promise<T> {
  proxy.take();
  const cli = npxRerun([...args, '--json']);
  const exit = await cli.exit;
  sent = proxy.take();
  process.stderr.write(`[clicks] rerun ${args.join(' ')}: ${JSON.stringify(sent)}\n`);
  expect(exit, `rerun ${args.join(' ')}\nstdout:\n${cli.stdout()}\nstderr:\n${cli.stderr()}`).toBe(0);
  return JSON.parse(cli.stdout()) as T;
}

/** Runs a tool to its end (exit 0) and returns its text output. */
async function text(args: readonly string[]): Promise<string> {
  const cli = npxRerun(args);
  const exit = await cli.exit;
  expect(exit, `rerun ${args.join(' ')}\nstdout:\n${cli.stdout()}\nstderr:\n${cli.stderr()}`).toBe(0);
  return cli.stdout();
}

interface WindowStatusJson {
  windows: { window: string; status: string; inputs: number }[];
  counts: Record<string, number>;
  requests: { list: number; head: number };
}

async function windowStatus(stage: string, from: string, to: string) {
  const report = await tool<WindowStatusJson>(['status', '--stage', stage, '--from', from, '--to', to]);
  return { report, by: Object.fromEntries(report.windows.map((w) => [w.window, w.status])) };
}

interface ReprocessJson {
  planned: number;
  enqueued: number;
  counts: Record<string, number>;
  sample: { state: string; inputKey: string; outputKey: string }[];
  requests: { list: number; lookup: number; head: number };
  waited?: string;
  done?: number;
}

const reprocess = (...args: string[]) =>
  tool<ReprocessJson>([
    'reprocess',
    '--stage',
    'clean',
    '--verify',
    ...args,
    '--timeout',
    '120',
    '--poll-interval',
    '500',
  ]);

describe('the packed plain-JavaScript pipeline of three stages, deployed by its own CDK app with IAM enforced', () => {
  it('rerun status --stack judges the three stages: four current outputs, the hours holding them and the days not built yet', async () => {
    const objects = await tool<{ counts: Record<string, number>; requests: { list: number; head: number } }>([
      'status',
      '--stage',
      'clean',
    ]);
    expect(objects.counts).toMatchObject({ current: 4, missing: 0, stale: 0, invalid: 0 });
    // A listing page each of the inputs and the outputs (and one more, as under `rerun dev`), no HEAD of an output.
    expect(objects.requests).toMatchObject({ list: 3, head: 0 });
    expect([counted('s3 ListObjectsV2'), counted('s3 HeadObject clean/')]).toEqual([3, 0]);
    const days = await windowStatus('daily', D1.iso, D2.iso);
    expect(days.by).toEqual({ [D1.iso]: 'missing', [D2.iso]: 'missing' });
    // Listings only: two per day (its hourly inputs, its output folder), no HEAD before anything is published.
    expect(days.report.requests).toEqual({ list: 4, head: 0 });
    // What the proxy counted agrees with what the tool reports.
    expect([counted('s3 ListObjectsV2'), counted('s3 HeadObject daily/')]).toEqual([4, 0]);
    const hours = await windowStatus('hourly', `${D1.iso}T03`, `${D1.iso}T04`);
    expect(hours.report.windows.map((w) => [w.window, w.status, w.inputs])).toEqual([
      [`${D1.iso}T03`, 'missing', 2],
      [`${D1.iso}T04`, 'missing', 1],
    ]);
    expect(hours.report.requests).toEqual({ list: 4, head: 0 });
  });

  it('backfill --stage hourly --downstream --wait publishes the 48 hours, then the 2 days over them, with exact totals', async () => {
    const first = await tool<{
      planned: number;
      enqueued: number;
      stages: {
        stage: string;
        enqueued: number;
        requests: { list: number; head: number };
        sendRequests: number;
        wait?: { ended: string; published: number };
      }[];
    }>([
      'backfill',
      '--stage',
      'hourly',
      '--from',
      `${D1.iso}T00`,
      '--to',
      `${D2.iso}T23`,
      '--downstream',
      '--wait',
      '--timeout',
      '240',
      '--poll-interval',
      '500',
    ]);
    expect(first).toMatchObject({ planned: 50, enqueued: 50 });
    expect(first.stages.map((s) => [s.stage, s.enqueued, s.wait?.ended, s.wait?.published])).toEqual([
      ['hourly', 48, 'complete', 48],
      ['daily', 2, 'complete', 2],
    ]);
    // Planning lists two prefixes per window (its inputs, its output folder); sends go in batches of 10.
    expect(first.stages.map((s) => [s.stage, s.requests, s.sendRequests])).toEqual([
      ['hourly', { list: 96, head: 0 }, 5],
      ['daily', { list: 4, head: 0 }, 1],
    ]);
    // The proxy saw those 6 batches; its listings also hold --wait's polls, which depend on timing.
    expect(counted('sqs SendMessageBatch')).toBe(6);
    const total = async (day: { path: string }) =>
      JSON.parse(await readText(clients.s3, stack.outputBucket, `daily/${day.path}/total.json`)) as unknown;
    expect(await total(D1)).toEqual({ day: D1.iso, hours: 24, busy: [`${D1.iso}T03`, `${D1.iso}T04`], lines: 4 });
    expect(await total(D2)).toEqual({ day: D2.iso, hours: 24, busy: [`${D2.iso}T10`], lines: 3 });
    const hours = await windowStatus('hourly', `${D1.iso}T00`, `${D2.iso}T23`);
    expect(hours.report.counts).toMatchObject({ published: 48, missing: 0, stale: 0 });
    expect((await windowStatus('daily', D1.iso, D2.iso)).by).toEqual({ [D1.iso]: 'published', [D2.iso]: 'published' });
  }, 300_000);

  it('reprocess --verify plans exactly the deleted and the corrupted output, repairs both, and then plans 0', async () => {
    await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: outKey(GONE) }));
    const corrupt = await head(stack.outputBucket, outKey(CORRUPT));
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: stack.outputBucket,
        Key: outKey(CORRUPT),
        Body: 'garbage\n',
        // The bucket policy denies blind overwrites of rerun's outputs.
        IfMatch: corrupt?.etag,
      }),
    );
    const plan = await reprocess('--dry-run');
    expect(plan).toMatchObject({
      planned: 2,
      enqueued: 0,
      counts: { missing: 1, invalid: 1, current: 2, stale: 0, 'old-code': 0, orphan: 0, skipped: 0 },
      // One listing page each of the inputs and the outputs, and one HEAD per output that looks current (--verify).
      requests: { list: 3, lookup: 0, head: 3 },
    });
    expect([counted('s3 ListObjectsV2'), counted('s3 HeadObject clean/')]).toEqual([3, 3]);
    expect(plan.sample.map((s) => [s.state, s.inputKey, s.outputKey])).toEqual([
      ['missing', inKey(GONE), outKey(GONE)],
      ['invalid', inKey(CORRUPT), outKey(CORRUPT)],
    ]);
    expect(await reprocess('--wait')).toMatchObject({ planned: 2, enqueued: 2, waited: 'complete', done: 2 });
    expect(await readText(clients.s3, stack.outputBucket, outKey(CORRUPT))).toBe('E\nF\nG\n');
    expect(await readText(clients.s3, stack.outputBucket, outKey(GONE))).toBe('A\nB\n');
    expect(await reprocess('--dry-run')).toMatchObject({ planned: 0, counts: { current: 4 } });
  }, 180_000);

  it('a poison input is dead-lettered with its failure record, and redrive --dry-run lists it under its stage’s DLQ', async () => {
    // The stack's clean queue waits 6 x the function timeout between receives and dead-letters after 5:
    // the test shortens the wait for the poison's receives only (as test/deployed/redrive.test.ts does).
    const visibility = (seconds: number) =>
      clients.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: stack.queueUrl, Attributes: { VisibilityTimeout: String(seconds) } }),
      );
    const before = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.queueUrl, AttributeNames: ['VisibilityTimeout'] }),
    );
    const saved = Number(before.Attributes?.VisibilityTimeout);
    await visibility(1);
    try {
      await clients.s3.send(new PutObjectCommand({ Bucket: stack.inputBucket, Key: inKey(POISON), Body: 'POISON\n' }));
      const listing = await waitFor(
        'the poison in the DLQ with its failure record',
        async () => {
          const out = await text(['redrive', '--dry-run']);
          return out.includes('POISON marker') ? out : undefined;
        },
        { timeoutMs: 150_000, intervalMs: 2_000 },
      );
      expect(listing).toContain(`clean DLQ (object stage): ${stack.dlqUrl}`);
      // Received 5 times: the stack's own maxReceiveCount, after which its redrive policy moved it.
      expect(listing).toMatch(
        new RegExp(
          `^\\S+\\s+5\\s+s3://${stack.inputBucket}/incoming/${D2.path}/hour=11/poison\\.txt\\s+Error: clean: the input holds the POISON marker$`,
          'm',
        ),
      );
      expect(listing).toMatch(/^SUMMARY \{"dryRun":true,"inspected":1,"moved":0,/m);
    } finally {
      await visibility(saved);
    }
  }, 200_000);

  it('rerun ui --stack answers /api/overview naming the stages', async () => {
    const ui = npxRerun(['ui']);
    await waitFor('the URL line', async () =>
      /^URL /m.test(ui.stdout()) || ui.child.exitCode !== null ? true : undefined,
    );
    const url = new URL(/^URL (\S+)$/m.exec(ui.stdout())?.[1] ?? '');
    const overview = await fetch(new URL('/api/overview', url), {
      headers: { 'x-rerun-token': url.searchParams.get('token') ?? '' },
    });
    expect(overview.status).toBe(200);
    const seen = (await overview.json()) as Record<string, unknown>;
    expect(seen).toMatchObject({
      stackName: CLICKS_STACK,
      inputBucket: stack.inputBucket,
      inputPrefix: 'incoming/',
      outputBucket: stack.outputBucket,
      // The pipeline's daily window stage, from the stack's published description (not rerun's own summary).
      codeVersion: 'daily@1',
      stage: { name: 'daily', kind: 'window' },
    });
    const days = await fetch(new URL(`/api/days?from=${D1.iso}&to=${D2.iso}`, url), {
      headers: { 'x-rerun-token': url.searchParams.get('token') ?? '' },
    });
    expect(days.status).toBe(200);
    const { partitions } = (await days.json()) as { partitions: { day: string; status: string }[] };
    expect(partitions.map((p) => [p.day, p.status])).toEqual([
      [D1.iso, 'published'],
      [D2.iso, 'published'],
    ]);
    if (ui.child.pid) process.kill(-ui.child.pid, 'SIGINT');
    await ui.exit;
  });
});
