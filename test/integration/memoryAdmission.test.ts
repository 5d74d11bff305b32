import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { MemoryBudget } from '../../src/batch/MemoryBudget.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket } from '../support/s3.js';

const MIB = 1024 * 1024;

const context = (memoryLimitInMB: string, remainingMs = 60_000): Context =>
  ({ awsRequestId: 'req-1', memoryLimitInMB, getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

const record = (i: number, bucket: string, key: string, size?: number): SQSRecord =>
  ({
    messageId: `m-${i}`,
    receiptHandle: `rh-${i}`,
    body: JSON.stringify({
      Records: [
        {
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: bucket }, object: { key, ...(size !== undefined ? { size } : {}) } },
        },
      ],
    }),
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

describe('concurrency by memory: done-checks all at once, transforms admitted by input size', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let input: string;
  let output: string;
  /** Transforms running now, the most seen at once, and which keys ran beside which. */
  let active: Set<string>;
  let maxActive: number;
  let overlaps: Map<string, Set<string>>;
  let barrierAt: number;
  let openBarrier: () => void;
  let barrier: Promise<void>;

  const worker = (outputBucket: string) =>
    defineWorker({
      name: 'copy',
      codeVersion: '1',
      outputBucket,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
      async transform({ source, body }, { output: out }) {
        active.add(source.key);
        maxActive = Math.max(maxActive, active.size);
        for (const other of active) overlaps.get(source.key)?.add(other);
        for (const other of active) overlaps.get(other)?.add(source.key);
        for await (const chunk of body) await out.write(chunk as Uint8Array);
        // Transforms that the budget lets run together meet here; the others pass after a short wait.
        if (active.size >= barrierAt) openBarrier();
        if (Number.isFinite(barrierAt))
          await Promise.race([barrier, new Promise((resolve) => setTimeout(resolve, 2_000))]);
        else for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        active.delete(source.key);
        return {};
      },
    });

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
    active = new Set();
    maxActive = 0;
    overlaps = new Map();
    barrierAt = Number.POSITIVE_INFINITY;
    barrier = new Promise((resolve) => {
      openBarrier = resolve;
    });
  });

  const upload = async (keys: string[]) => {
    for (const key of keys) {
      overlaps.set(key, new Set());
      await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: `${key}\n` }));
    }
  };

  it('ten small files: their ten done-checks are sent before any input is read, and the transforms run together', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `small-${i}.txt`);
    await upload(keys);
    barrierAt = keys.length;
    log.clear();
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const response = await handler(
      { Records: keys.map((key, i) => record(i, input, key, key.length + 1)) },
      context('512'),
    );
    expect(response.batchItemFailures).toEqual([]);
    const s3 = log.operations('S3');
    expect(s3.slice(0, 10)).toEqual(keys.map(() => 'HeadObject'));
    expect(maxActive).toBe(10);
  });

  it('a 1 GiB input runs alone at 512 MB: the small ones run before or after it, never beside it', async () => {
    const keys = ['a.txt', 'b.txt', 'huge.txt', 'c.txt', 'd.txt'];
    await upload(keys);
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    // The event's size decides the reservation before the input is read (the object itself is small here).
    const response = await handler(
      { Records: keys.map((key, i) => record(i, input, key, key === 'huge.txt' ? 1024 * MIB : 10)) },
      context('512'),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect([...(overlaps.get('huge.txt') ?? [])]).toEqual(['huge.txt']);
  });

  it('an input without a size in its event is reserved by its ContentLength once its GET answers', async () => {
    const keys = Array.from({ length: 4 }, (_, i) => `nosize-${i}.txt`);
    await upload(keys);
    log.clear();
    // A budget of 3 MiB admits one small transform at a time (each reserves 1 MiB + 2 x its bytes).
    const budget = new MemoryBudget(3 * MIB);
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      memoryBudget: budget,
    });
    const response = await handler({ Records: keys.map((key, i) => record(i, input, key)) }, context('512'));
    expect(response.batchItemFailures).toEqual([]);
    expect(maxActive).toBeLessThanOrEqual(2);
    expect(budget.reservedBytes).toBe(0);
    // A body that arrived while the budget was full was closed and read again once admitted.
    expect(log.count({ operation: 'GetObject' })).toBeGreaterThanOrEqual(keys.length);
    expect(log.count({ operation: 'PutObject' })).toBe(keys.length);
  });

  it('a transform that waited for memory until the deadline came near does not start: a retryable failure', async () => {
    // Two inputs each as large as the whole budget: whichever GET answers first runs, the other waits
    // for its memory (the order of the answers is the emulator's, not the test's).
    await upload(['big.txt', 'late.txt']);
    let remaining = 60_000;
    const slow = copyWorker(output, {
      name: 'slow',
      after: () => {
        remaining = 1_000; // the big transform used up the function's time
      },
    });
    const handler = createSqsBatchHandler({ worker: slow, store: new S3ObjectStore(clients.s3), sqs: clients.sqs });
    const ctx = { ...context('512'), getRemainingTimeInMillis: () => remaining } as Context;
    const outcomes: RecordOutcome[] = [];
    const stop = onRecordOutcome((o) => outcomes.push(o));
    try {
      const response = await handler(
        { Records: [record(0, input, 'big.txt', 1024 * MIB), record(1, input, 'late.txt', 1024 * MIB)] },
        ctx,
      );
      // The one that ran was processed; the one that waited did not start once the deadline came near.
      expect(response.batchItemFailures).toHaveLength(1);
      const failed = outcomes.find((o) => o.status === 'failed');
      expect(failed).toMatchObject({ retryable: true, reason: expect.stringMatching(/^DeadlineNearError: /) });
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: failed?.messageId }]);
      expect(outcomes.filter((o) => o.status === 'processed')).toHaveLength(1);
    } finally {
      stop();
    }
  });
});
