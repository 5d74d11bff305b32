import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../infra/paths.js';
import {
  type BatchOperationsFunction,
  runLocalBatchOperationsJob,
} from '../../local/batchOperations/LocalBatchOperationsJob.js';
import { LambdaRuntimeSlot } from '../../local/runner/LambdaRuntimeSlot.js';
import { locateLambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';
import { WORKER_BUNDLING } from '../../src/cdk/workerBundling.js';
import { encodeManifestKey } from '../../src/intake/parseBatchOperationsEvent.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';
import { ordersCsv } from '../support/summaryPipeline.js';

/**
 * The Batch Operations handler as Lambda runs it: functions/normalize/batchOperations.ts bundled with
 * the stack's bundling settings, in the emulator (aws-lambda-rie) with Node 24 and AWS's runtime
 * interface client, invoked by the local stand-in with the documented events (one task each).
 */
const tools = locateLambdaRuntimeTools(projectRoot);
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

describe('the Batch Operations handler in the Lambda runtime mode', () => {
  const clients = testClients();
  const store = new S3ObjectStore(clients.s3);
  let codeDirectory: string;
  const slots: LambdaRuntimeSlot[] = [];

  beforeAll(async () => {
    codeDirectory = mkdtempSync(join(tmpdir(), 'rerun-batch-operations-'));
    await build({
      entryPoints: [join(projectRoot, 'functions/normalize/batchOperations.ts')],
      outfile: join(codeDirectory, 'index.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: WORKER_BUNDLING.target,
      mainFields: [...WORKER_BUNDLING.mainFields],
      banner: { js: WORKER_BUNDLING.banner },
      logLevel: 'silent',
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(slots.map((slot) => slot.stop()));
    rmSync(codeDirectory, { recursive: true, force: true });
  });

  /** One execution environment of the handler, as a function the stand-in can invoke. */
  const environment = async (outputBucket: string): Promise<BatchOperationsFunction> =>
    (await environmentSlot(outputBucket)).handler;
  const environmentSlot = async (outputBucket: string) => {
    const slot = await LambdaRuntimeSlot.start({
      tools,
      function: {
        codeDirectory,
        functionName: 'rerun-normalize-batch-operations',
        timeoutSeconds: 30,
        memoryMiB: 512,
        environment: { OUTPUT_BUCKET: outputBucket, AWS_ENDPOINT_URL: awsEndpoint(), LOG_LEVEL: 'warn' },
        region: 'us-east-1',
        credentials,
      },
    });
    slots.push(slot);
    const handler: BatchOperationsFunction = async (event) => {
      const result = await slot.invoke(event as unknown as SQSEvent, randomUUID());
      if (result.kind !== 'returned') throw new Error(`${result.kind}: ${result.error}`);
      return result.value as Awaited<ReturnType<BatchOperationsFunction>>;
    };
    return { slot, handler };
  };

  /** Input and output buckets, `count` inputs, and a CSV manifest of them in the output bucket. */
  const setup = async (count: number) => {
    const input = await createBucket(clients.s3, uniqueName('bo-rt-in'));
    const output = await createBucket(clients.s3, uniqueName('bo-rt-out'));
    const keys = Array.from({ length: count }, (_, i) => `incoming/dt=2026-12-0${1 + (i % 3)}/part ${i}.csv`);
    for (const [i, key] of keys.entries()) {
      await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: ordersCsv(`r${i}`, 3) }));
    }
    const manifest = { bucket: output, key: 'ops/manifest.csv' };
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: output,
        Key: manifest.key,
        Body: keys.map((k) => `${input},${encodeManifestKey(k)}\n`).join(''),
      }),
    );
    const outputKey = (key: string) => `normalized/${input}/${key.slice('incoming/'.length)}.ndjson`;
    return { input, output, keys, manifest, outputKey };
  };

  it('runs a job (every task processed), and the same job run again is all skips', async () => {
    const s = await setup(6);
    const handler = await environment(s.output);
    const job = (jobId: string) =>
      runLocalBatchOperationsJob({
        s3: clients.s3,
        handler,
        manifest: s.manifest,
        report: { bucket: s.output, prefix: 'reports', scope: 'AllTasks' },
        jobId,
        invocationSchemaVersion: '2.0',
        // One execution environment serves one invocation at a time, as in Lambda.
        concurrency: 1,
      });
    const first = await job(randomUUID());
    expect(first).toMatchObject({ totalTasks: 6, succeeded: 6, failed: 0 });
    expect(first.tasks.map((t) => t.resultString.split(':')[0])).toEqual(Array(6).fill('processed'));
    const etags = new Map<string, string | undefined>();
    for (const key of s.keys) etags.set(key, (await store.head(s.output, s.outputKey(key)))?.etag);
    for (const [key, etag] of etags) expect(etag, key).toBeDefined();

    const second = await job(randomUUID());
    expect(second).toMatchObject({ totalTasks: 6, succeeded: 6, failed: 0 });
    expect(second.tasks.map((t) => t.resultString.split(':')[0])).toEqual(Array(6).fill('skipped'));
    // Nothing was written again.
    for (const [key, etag] of etags) expect((await store.head(s.output, s.outputKey(key)))?.etag, key).toBe(etag);
  }, 120_000);

  it('runs two jobs over the same inputs at once, in two execution environments: every task succeeds and each output is whole', async () => {
    const s = await setup(8);
    const [a, b] = await Promise.all([environment(s.output), environment(s.output)]);
    const job = (handler: BatchOperationsFunction) =>
      runLocalBatchOperationsJob({
        s3: clients.s3,
        handler,
        manifest: s.manifest,
        report: { bucket: s.output, prefix: 'reports', scope: 'AllTasks' },
        jobId: randomUUID(),
        invocationSchemaVersion: '2.0',
        concurrency: 1,
      });
    const [first, second] = await Promise.all([job(a), job(b)]);
    for (const result of [first, second]) expect(result).toMatchObject({ totalTasks: 8, succeeded: 8, failed: 0 });
    // Per input, at least one of the two tasks built the output (the other found it done, or built
    // the same bytes under the worker's conditional writes), and the output is whole.
    for (const [i, key] of s.keys.entries()) {
      const outcomes = [first.tasks[i]?.resultString, second.tasks[i]?.resultString];
      expect(
        outcomes.some((o) => o?.startsWith('processed')),
        `${key}: ${outcomes.join(' | ')}`,
      ).toBe(true);
      const body = await readText(clients.s3, s.output, s.outputKey(key));
      expect(body.trim().split('\n'), key).toHaveLength(3);
    }
    expect(await listKeys(clients.s3, s.output, 'failures/')).toEqual([]);
  }, 120_000);

  it('leaves no partial output when its execution environment is killed mid-task, and the next job builds it', async () => {
    const s = await setup(1);
    const key = s.keys[0] as string;
    // An input large enough (about 30 MB) that the task is still reading and writing when killed.
    const rows = 1_000_000;
    await clients.s3.send(new PutObjectCommand({ Bucket: s.input, Key: key, Body: ordersCsv('big', rows) }));
    const doomed = await environmentSlot(s.output);
    let killed = false;
    const first = await runLocalBatchOperationsJob({
      s3: clients.s3,
      handler: async (event, context) => {
        const running = doomed.handler(event, context);
        // The sandbox dies while the task runs, as Lambda kills one on a timeout or a crash.
        setTimeout(() => {
          killed = true;
          void doomed.slot.stop();
        }, 400);
        return running;
      },
      manifest: s.manifest,
      report: { bucket: s.output, prefix: 'reports', scope: 'AllTasks' },
      jobId: randomUUID(),
      invocationSchemaVersion: '2.0',
      concurrency: 1,
      maxAttempts: 1,
    });
    expect(killed).toBe(true);
    // Killed before it answered: the task failed (a function error), nothing half-written is visible.
    expect(first).toMatchObject({ totalTasks: 1, succeeded: 0, failed: 1 });
    expect(first.tasks[0]?.resultString).toMatch(/^Lambda returned function error/);
    const after = await store.head(s.output, s.outputKey(key));
    if (after) expect((await readText(clients.s3, s.output, s.outputKey(key))).trim().split('\n')).toHaveLength(rows);

    const second = await runLocalBatchOperationsJob({
      s3: clients.s3,
      handler: await environment(s.output),
      manifest: s.manifest,
      report: { bucket: s.output, prefix: 'reports', scope: 'AllTasks' },
      jobId: randomUUID(),
      invocationSchemaVersion: '2.0',
      concurrency: 1,
    });
    expect(second).toMatchObject({ totalTasks: 1, succeeded: 1, failed: 0 });
    expect((await readText(clients.s3, s.output, s.outputKey(key))).trim().split('\n')).toHaveLength(rows);
  }, 180_000);
});
