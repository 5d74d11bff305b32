import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LambdaRuntimeSlot } from '../../local/runner/LambdaRuntimeSlot.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { processObject } from '../../src/worker/processObject.js';
import { FaultProxy } from '../chaos/support/FaultProxy.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { startNormalizePool, TestRuntime, testRuntime } from '../support/lambdaRuntime.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

/**
 * The design's first promise: a worker killed with SIGKILL at any request boundary of an item is
 * rerun with no manual cleanup, and the final state is clean and correct.
 * The item is large enough to take the multipart path (3 parts) and has bad rows (a quarantine
 * side output), so every kind of request is a boundary: HEAD, GET, Create/UploadPart/Complete, PUT.
 *
 * In-process runtime: the item runs in a child process (test/fixtures/killableItem.ts, 5 MiB parts)
 * that SIGKILLs itself at the chosen boundary, and the rerun runs in this process.
 * Lambda runtime (`RERUN_TEST_RUNTIME=lambda`): the item is an SQS event invoked on the deployed
 * normalize bundle under aws-lambda-rie; a proxy in front of the emulator counts the function's S3
 * requests and, at the chosen boundary, SIGKILLs the slot's runtime process (the Node process that
 * runs the handler, as a sandbox dies) before forwarding request n, or after its answer arrived and
 * before the function sees it. The rerun is a redelivery of the same message (its id, the next
 * receive count) to the same slot, which starts a fresh runtime as Lambda does after a crash.
 */
const lambda = testRuntime === TestRuntime.LAMBDA;
// The deployed bundle has OutputWriter's default part size (5 MiB); the in-process item sets the same.
const PART_BYTES = 5 * 1024 * 1024;
const ROWS = 220_000;

function runItem(env: Record<string, string>): {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
} {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/killableItem.ts'], {
    env: { ...process.env, ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: child.status, signal: child.signal, stdout: child.stdout };
}

/** Where a kill happens: before request `at` is sent, or just after its answer arrived. */
interface KillPoint {
  readonly at: number;
  readonly when: 'before' | 'after';
}

/** One item run, possibly killed at a boundary: whether it was killed, and the requests it made. */
interface ItemRun {
  readonly killed: boolean;
  readonly requests: number;
}

/** Runs the item (first delivery) and reruns it (a plain redelivery), in one runtime. */
interface ItemRunner {
  run(outputBucket: string, kill?: KillPoint): Promise<ItemRun>;
  rerun(outputBucket: string): Promise<string>;
  close(): Promise<void>;
}

describe('kill mid-item, then rerun', () => {
  const { s3 } = testClients();
  const key = 'incoming/big file+1.csv';
  let input: string;
  let reference: Map<string, string>;
  let requestsPerCleanRun: number;
  const runners: ItemRunner[] = [];

  // ~11 MiB of rows with a bad row every 5,000: the output needs 3 parts.
  const rows = ['id,name,amount'];
  for (let i = 1; i <= ROWS; i++) rows.push(i % 5000 === 0 ? `${i},broken` : `${i},customer ${i},${(i * 7) % 1000}.50`);
  const body = `${rows.join('\n')}\n`;

  const envFor = (outputBucket: string) => ({
    AWS_ENDPOINT_URL: awsEndpoint(),
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    INPUT_BUCKET: input,
    INPUT_KEY: key,
    OUTPUT_BUCKET: outputBucket,
    PART_BYTES: String(PART_BYTES),
  });

  const inProcessRunner = (): ItemRunner => ({
    run: async (outputBucket, kill) => {
      const run = runItem({
        ...envFor(outputBucket),
        ...(kill ? { KILL_AT: String(kill.at), KILL_WHEN: kill.when } : {}),
      });
      if (!kill) expect(run.status).toBe(0);
      return { killed: run.signal === 'SIGKILL', requests: Number(/REQUESTS (\d+)/.exec(run.stdout)?.[1]) };
    },
    rerun: async (outputBucket) =>
      (
        await processObject(
          createNormalizeWorker({ outputBucket, partBytes: PART_BYTES }),
          { bucket: input, key, eventName: 'ObjectCreated:Put' },
          { store: new S3ObjectStore(s3) },
        )
      ).status,
    close: async () => {},
  });

  /** One warm slot and one proxy per output bucket (the function reads OUTPUT_BUCKET once, at init). */
  const lambdaRunner = (): ItemRunner => {
    const functions = new Map<
      string,
      { invoke: (messageId: string, receiveCount: number) => Promise<RecordOutcome | 'killed'> }
    >();
    /** Per output bucket: the message its item is delivered as, and how often SQS has handed it out. */
    const messages = new Map<string, { readonly messageId: string; receives: number }>();
    const closers: (() => Promise<void>)[] = [];
    let armed: KillPoint | undefined;
    let s3Requests = 0;
    /** The S3 request number (1-based, per run) of each proxied request. */
    const requestNumbers = new Map<number, number>();
    const functionFor = async (outputBucket: string) => {
      const existing = functions.get(outputBucket);
      if (existing) return existing;
      let slot: LambdaRuntimeSlot | undefined;
      const killRuntime = () => {
        for (const pid of slot?.runtimePids() ?? []) process.kill(pid, 'SIGKILL');
        armed = undefined;
      };
      const proxy = await FaultProxy.start({
        upstream: awsEndpoint(),
        intercept: (entry, phase) => {
          if (entry.service !== 'S3') return 'continue';
          if (phase === 'before-forward') requestNumbers.set(entry.id, ++s3Requests);
          const n = requestNumbers.get(entry.id);
          const when = phase === 'before-forward' ? 'before' : 'after';
          if (armed && armed.at === n && armed.when === when) {
            killRuntime();
            return 'drop';
          }
          return 'continue';
        },
      });
      const pool = await startNormalizePool({
        endpoint: proxy.url,
        inputBucket: input,
        outputBucket,
        timeoutSeconds: 60,
        onSlot: (started) => {
          slot = started;
        },
      });
      closers.push(
        () => pool.close(),
        () => proxy.stop(),
      );
      const fn = {
        invoke: async (messageId: string, receiveCount: number): Promise<RecordOutcome | 'killed'> => {
          const outcomes: RecordOutcome[] = [];
          const unsubscribe = onRecordOutcome((o) => {
            if (o.messageId === messageId) outcomes.push(o);
          });
          try {
            const result = await pool.invoke({
              event: sqsEventFor(input, key, messageId, receiveCount),
              requestId: randomUUID(),
            });
            if (result.kind === 'threw' && /signal: killed/.test(result.error)) return 'killed';
            expect(result, 'the invocation returned a batch response').toEqual({
              kind: 'returned',
              value: { batchItemFailures: [] },
            });
            // The outcome line is written before the handler returns; the slot's output may trail by a tick.
            for (let i = 0; i < 50 && outcomes.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
            expect(outcomes, 'one outcome logged for the record').toHaveLength(1);
            return outcomes[0] as RecordOutcome;
          } finally {
            unsubscribe();
          }
        },
      };
      functions.set(outputBucket, fn);
      return fn;
    };
    return {
      run: async (outputBucket, kill) => {
        const fn = await functionFor(outputBucket);
        s3Requests = 0;
        armed = kill;
        const message = { messageId: randomUUID(), receives: 1 };
        messages.set(outputBucket, message);
        const result = await fn.invoke(message.messageId, message.receives);
        return { killed: result === 'killed', requests: s3Requests };
      },
      // A redelivery of the same message (SQS hands it out again once the killed receive is over):
      // its id is the first delivery's, SQS counts the receive, and the handler sweeps side-output
      // debris on it. The same id tells the rerun that the killed receive's unsealed output has no
      // live writer (src/done/sealInProgress.ts).
      rerun: async (outputBucket) => {
        const message = messages.get(outputBucket);
        if (!message) throw new Error(`no delivery of ${outputBucket} to deliver again`);
        message.receives++;
        const result = await (await functionFor(outputBucket)).invoke(message.messageId, message.receives);
        return result === 'killed' ? 'killed' : result.status;
      },
      close: async () => {
        for (const close of closers) await close();
      },
    };
  };
  const itemRunner = () => {
    const runner = lambda ? lambdaRunner() : inProcessRunner();
    runners.push(runner);
    return runner;
  };
  afterEach(async () => {
    for (const runner of runners.splice(0)) await runner.close();
  });
  const snapshot = async (bucket: string) => {
    const state = new Map<string, string>();
    for (const k of await listKeys(s3, bucket)) state.set(k, await readText(s3, bucket, k));
    return state;
  };

  beforeAll(async () => {
    input = await createBucket(s3, uniqueName('kill-in'));
    await s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    const clean = await createBucket(s3, uniqueName('kill-ref'));
    const runner = itemRunner();
    try {
      const run = await runner.run(clean);
      expect(run.killed).toBe(false);
      requestsPerCleanRun = run.requests;
    } finally {
      runners.splice(runners.indexOf(runner), 1);
      await runner.close();
    }
    reference = await snapshot(clean);
  }, 120_000);

  it('the clean run takes the multipart path and writes an output and a quarantine object', () => {
    // HEAD, GET, CreateMultipartUpload, 3 x UploadPart, quarantine PUT, CompleteMultipartUpload;
    // the seal: CreateMultipartUpload, UploadPartCopy, CompleteMultipartUpload; and the closing
    // done-check (an output that lists a side output): HEAD output, HEAD quarantine, GET input (304).
    // The deployed handler (the Lambda runtime mode) has a failure recorder: a success of a delivery
    // that is not fresh (this event has no time) lists the input's failure-index entries once.
    expect(requestsPerCleanRun).toBe(lambda ? 15 : 14);
    expect([...reference.keys()]).toEqual([
      `normalized/${input}/big file+1.csv.ndjson`,
      `quarantine/${input}/big file+1.csv.ndjson`,
    ]);
    expect(reference.get(`quarantine/${input}/big file+1.csv.ndjson`)?.split('\n').filter(Boolean)).toHaveLength(
      ROWS / 5000,
    );
  });

  it('SIGKILL before or after every request, then a rerun: final state equals the clean run, nothing torn', async () => {
    const killPoints: KillPoint[] = [];
    for (let at = 1; at <= requestsPerCleanRun; at++) killPoints.push({ at, when: 'before' }, { at, when: 'after' });
    const runner = itemRunner();
    for (const point of killPoints) {
      const output = await createBucket(s3, uniqueName('kill-out'));
      const killed = await runner.run(output, point);
      expect(killed.killed, `kill ${point.when} request ${point.at}`).toBe(true);

      // The rerun is a plain rerun: no cleanup step, no special flag.
      const rerun = await runner.rerun(output);
      expect(rerun, `rerun after kill ${point.when} request ${point.at}`).toMatch(/processed|skipped/);
      expect(await snapshot(output), `state after kill ${point.when} request ${point.at}`).toEqual(reference);

      // And the rerun of the rerun is a no-op: the item is done.
      expect(await runner.rerun(output)).toBe('skipped');
    }
  }, 600_000);

  it('an upload abandoned by a kill stays invisible (the stack aborts it with a lifecycle rule)', async () => {
    const output = await createBucket(s3, uniqueName('kill-out'));
    const killed = await itemRunner().run(output, { at: 4, when: 'after' }); // after the first UploadPart
    expect(killed.killed).toBe(true);
    expect(await listKeys(s3, output)).toEqual([]);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: output }));
    expect(uploads.Uploads?.length).toBe(1);
  }, 120_000);
});

/** The SQS event Lambda's event source mapping would deliver for the S3 notification of `key`. */
function sqsEventFor(bucket: string, key: string, messageId: string, receiveCount: number): SQSEvent {
  const encoded = encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
  const notification = {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: bucket }, object: { key: encoded } },
      },
    ],
  };
  return {
    Records: [
      {
        messageId,
        receiptHandle: `receipt-${messageId}`,
        body: JSON.stringify(notification),
        attributes: {
          ApproximateReceiveCount: String(receiveCount),
          SentTimestamp: '0',
          SenderId: 's3',
          ApproximateFirstReceiveTimestamp: '0',
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:rerun-normalize-queue',
        awsRegion: 'us-east-1',
      },
    ],
  };
}
