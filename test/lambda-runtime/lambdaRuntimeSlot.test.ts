import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../infra/paths.js';
import { synthesizeWorkerBundles } from '../../infra/workerBundles.js';
import type { InvocationReport } from '../../local/runner/invocationReport.js';
import { LambdaRuntimePool } from '../../local/runner/LambdaRuntimePool.js';
import { type LambdaFunctionSettings, LambdaRuntimeSlot } from '../../local/runner/LambdaRuntimeSlot.js';
import { LocalRunner } from '../../local/runner/LocalRunner.js';
import { locateLambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';
import { isRunning } from '../../local/runner/linuxProcesses.js';
import { parseRecordOutcomeLogLine } from '../../src/batch/recordOutcomeLog.js';
import { testClients, uniqueName } from '../support/aws.js';

/**
 * One Lambda execution environment run locally: the emulator (aws-lambda-rie) with the stack's Node
 * major and AWS's runtime interface client. These tests prove what the runtime mode promises: the
 * handler loads as Lambda loads it (from its folder alone), the context counts down, and a timeout
 * kills the invocation's runtime as Lambda does.
 */
const tools = locateLambdaRuntimeTools(projectRoot);
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/** Whether any folder from `dir` up to the root holds node_modules (Node's resolution would find it). */
function nodeModulesInReach(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules'))) return join(at, 'node_modules');
    if (dirname(at) === at) return undefined;
  }
}

describe('a Lambda runtime slot running a probe handler', () => {
  let codeDirectory: string;
  const slots: LambdaRuntimeSlot[] = [];
  const start = async (overrides: Partial<LambdaFunctionSettings> = {}) => {
    const slot = await LambdaRuntimeSlot.start({
      tools,
      function: {
        codeDirectory,
        functionName: 'probe',
        timeoutSeconds: 3,
        memoryMiB: 256,
        environment: { OUTPUT_BUCKET: 'probe-output' },
        region: 'us-east-1',
        credentials,
        ...overrides,
      },
    });
    slots.push(slot);
    return slot;
  };
  const probe = async (slot: LambdaRuntimeSlot, event: Record<string, unknown>) =>
    slot.invoke(event as unknown as SQSEvent, randomUUID());

  beforeAll(() => {
    codeDirectory = mkdtempSync(join(tmpdir(), 'rerun-probe-'));
    copyFileSync(join(projectRoot, 'test/fixtures/lambdaRuntime/probe.mjs'), join(codeDirectory, 'index.mjs'));
  });
  afterAll(async () => {
    await Promise.all(slots.map((slot) => slot.stop()));
    rmSync(codeDirectory, { recursive: true, force: true });
  });

  it('runs the handler on Node 24 from its folder, with the function environment only, and a remaining time that counts down', async () => {
    process.env.RERUN_PARENT_ONLY = 'must not reach the function';
    const slot = await start();
    delete process.env.RERUN_PARENT_ONLY;
    const requestId = randomUUID();
    const result = await slot.invoke({ mode: 'probe', sleepMs: 400 } as unknown as SQSEvent, requestId);
    expect(result.kind).toBe('returned');
    const value = (result as { value: Record<string, unknown> }).value;
    expect(value).toMatchObject({
      cwd: codeDirectory,
      taskRoot: codeDirectory,
      functionName: 'probe',
      memoryLimitInMB: '256',
      awsRequestId: requestId,
      outputBucket: 'probe-output',
      leaked: null,
      // Nothing outside the bundle is importable: no node_modules in reach, no NODE_PATH to the runner's.
      bareImport: 'ERR_MODULE_NOT_FOUND',
    });
    expect(String(value.node)).toMatch(/^v24\./);
    expect(nodeModulesInReach(codeDirectory)).toBeUndefined();
    // getRemainingTimeInMillis counts down from the 3 s timeout (MiniStack's is constant).
    expect(value.before as number).toBeLessThanOrEqual(3000);
    expect(value.before as number).toBeGreaterThan(1500);
    expect((value.before as number) - (value.after as number)).toBeGreaterThanOrEqual(350);
  });

  it('a timeout kills the runtime process and fails the invocation; the next invocation gets a fresh runtime', async () => {
    const slot = await start({ timeoutSeconds: 1 });
    const first = await probe(slot, { mode: 'probe' });
    const pid = (first as { value: { pid: number } }).value.pid;
    expect(slot.runtimePids()).toContain(pid);

    const startedAt = Date.now();
    const timedOut = await probe(slot, { mode: 'sleep', ms: 10_000 });
    expect(timedOut).toEqual({ kind: 'timeout', error: 'Task timed out after 1.00 seconds' });
    expect(Date.now() - startedAt).toBeLessThan(3000);
    // The process that ran the handler is gone (SIGKILL), as Lambda discards a timed-out sandbox's runtime.
    expect(isRunning(pid)).toBe(false);

    const after = await probe(slot, { mode: 'probe' });
    expect(after.kind).toBe('returned');
    expect((after as { value: { pid: number } }).value.pid).not.toBe(pid);
  });

  it('a thrown error and a dead runtime fail the invocation (Lambda fails the whole batch)', async () => {
    const slot = await start();
    expect(await probe(slot, { mode: 'throw' })).toEqual({ kind: 'threw', error: 'TypeError: thrown by the probe' });
    const exited = await probe(slot, { mode: 'exit' });
    expect(exited.kind).toBe('threw');
    expect((exited as { error: string }).error).toMatch(/HTTP 502.*Runtime\.ExitError.*exit status 7/);
    expect((await probe(slot, { mode: 'probe' })).kind).toBe('returned');
  });

  it('stop() kills the emulator and its runtime', async () => {
    const slot = await start();
    await probe(slot, { mode: 'probe' });
    const [runtime] = slot.runtimePids();
    expect(runtime).toBeTypeOf('number');
    await slot.stop();
    expect(slot.alive).toBe(false);
    expect(isRunning(runtime as number)).toBe(false);
  });
});

describe('LocalRunner on a LambdaRuntimePool', () => {
  it('a timed-out invocation retains its whole batch (no partial response); slots stay warm and serve one invocation each', async () => {
    const { sqs } = testClients();
    const queue = await sqs.send(
      new CreateQueueCommand({ QueueName: uniqueName('rie-q'), Attributes: { VisibilityTimeout: '30' } }),
    );
    const queueUrl = queue.QueueUrl as string;
    const codeDirectory = mkdtempSync(join(tmpdir(), 'rerun-probe-'));
    copyFileSync(join(projectRoot, 'test/fixtures/lambdaRuntime/probe.mjs'), join(codeDirectory, 'index.mjs'));
    const pool = new LambdaRuntimePool({
      tools,
      function: {
        codeDirectory,
        functionName: 'probe',
        timeoutSeconds: 2,
        memoryMiB: 128,
        environment: {},
        region: 'us-east-1',
        credentials,
      },
    });
    const reports: InvocationReport[] = [];
    const runner = new LocalRunner({
      sqs,
      queueUrl,
      invoker: pool,
      timeoutSeconds: 2,
      batchSize: 1,
      maxBatchingWindowSeconds: 0,
      maxConcurrency: 2,
      pollWaitSeconds: 0,
      onInvocation: (report) => reports.push(report),
    });
    try {
      const send = (body: Record<string, unknown>) =>
        sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
      const stuck = await send({ mode: 'sleep', ms: 10_000 });
      for (let i = 0; i < 4; i++) await send({ mode: 'probe' });
      runner.start();
      for (let waited = 0; reports.length < 5 && waited < 20_000; waited += 100) await sleep(100);
      await runner.stop();
      const timedOut = reports.find((r) => r.messageIds.includes(stuck.MessageId as string));
      expect(timedOut).toMatchObject({
        outcome: 'timeout',
        error: 'Task timed out after 2.00 seconds',
        deleted: [],
        retained: [stuck.MessageId],
      });
      expect(reports.filter((r) => r.outcome === 'success')).toHaveLength(4);
      // Two invocations at a time at most, each in its own execution environment, reused when idle.
      expect(pool.size).toBe(2);
    } finally {
      await pool.close();
      rmSync(codeDirectory, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a Lambda runtime slot running the deployed normalize bundle', () => {
  it('loads the synthesized asset with no node_modules in reach and answers an SQS batch by the batch-response rules', async () => {
    const { normalize } = await synthesizeWorkerBundles();
    expect(nodeModulesInReach(normalize.directory)).toBeUndefined();
    // The settings come from the synthesized template, not from a second copy of them.
    expect(normalize).toMatchObject({
      handler: 'index.handler',
      runtime: 'nodejs24.x',
      timeoutSeconds: 60,
      memoryMiB: 512,
      logging: { format: 'JSON', applicationLogLevel: 'INFO' },
      environment: { LOG_LEVEL: 'info', NODE_OPTIONS: '--enable-source-maps', MAX_RECEIVE_COUNT: '5' },
      // No webhook by default: NOTIFY_URL is set only with a secret or SSM parameter (a dynamic reference).
      deployTimeEnvironment: ['OUTPUT_BUCKET', 'INPUT_BUCKETS', 'LEDGER_TABLE'],
    });
    const lines: string[] = [];
    const startedAt = Date.now();
    const slot = await LambdaRuntimeSlot.start({
      tools,
      function: {
        codeDirectory: normalize.directory,
        handler: normalize.handler,
        functionName: 'rerun-normalize',
        timeoutSeconds: normalize.timeoutSeconds,
        memoryMiB: normalize.memoryMiB,
        logging: normalize.logging,
        // No AWS at all: an s3:TestEvent needs none, and without CODE_VERSION_PREFIX the first batch
        // writes no code-version marker (the stack's value would make it write one).
        environment: {
          ...normalize.environment,
          OUTPUT_BUCKET: 'unused',
          LEDGER_TABLE: 'unused',
          NOTIFY_URL: '',
          CODE_VERSION_PREFIX: '',
        },
        region: 'us-east-1',
        credentials,
      },
      onOutput: (line) => lines.push(line),
    });
    try {
      const messageId = randomUUID();
      const event: SQSEvent = {
        Records: [
          {
            messageId,
            receiptHandle: 'r',
            body: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'in' }),
            attributes: {
              ApproximateReceiveCount: '1',
              SentTimestamp: '0',
              SenderId: 's3',
              ApproximateFirstReceiveTimestamp: '0',
            },
            messageAttributes: {},
            md5OfBody: '',
            eventSource: 'aws:sqs',
            eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
            awsRegion: 'us-east-1',
          },
        ],
      };
      expect(await slot.invoke(event, randomUUID())).toEqual({ kind: 'returned', value: { batchItemFailures: [] } });
      const coldMs = Date.now() - startedAt;
      const warmStart = Date.now();
      expect((await slot.invoke(event, randomUUID())).kind).toBe('returned');
      const warmMs = Date.now() - warmStart;
      // The record's outcome reaches the runner through the function's log, as it reaches CloudWatch.
      const outcomes = lines.flatMap((line) => parseRecordOutcomeLogLine(line) ?? []);
      expect(outcomes[0]).toMatchObject({ messageId, status: 'skipped' });
      console.info(
        `normalize bundle under aws-lambda-rie: cold start + first invoke ${coldMs} ms, warm invoke ${warmMs} ms`,
      );
    } finally {
      await slot.stop();
    }
  });
});
