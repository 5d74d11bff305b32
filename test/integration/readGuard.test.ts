import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureQueue } from '../../local/provision.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { DeadlineNearError, InputTooLargeError } from '../../src/errors.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { processObject } from '../../src/worker/processObject.js';
import type { ReadDeadline } from '../../src/worker/readGuard.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

/** 200 KiB of CSV that gzips to a few KiB: stored far below the limit, decoded far above it. */
const rows = `id,name\n${Array.from({ length: 20_000 }, (_, i) => `${i % 10},aaaa`).join('\n')}\n`;
const gzipped = gzipSync(Buffer.from(rows));
const LIMIT = 64 * 1024;

/** A clock the transform advances by the bytes it reads: the read's pace, without wall-clock time. */
class ReadClock {
  t = 0;
  constructor(
    readonly timeLimitMs: number,
    readonly marginMs: number,
    start = 0,
  ) {
    this.t = start;
  }
  deadline(reads?: { active: number; started: number }): ReadDeadline {
    return {
      remainingTimeMs: () => this.timeLimitMs - this.t,
      marginMs: this.marginMs,
      timeLimitMs: this.timeLimitMs,
      now: () => this.t,
      ...(reads ? { reads } : {}),
    };
  }
}

describe('the read guard: decoded size and the time left, judged while the input streams', () => {
  const clients = testClients();
  const store = new S3ObjectStore(clients.s3);
  let input: string;
  let output: string;
  let queueArn: string;

  beforeAll(async () => {
    queueArn = (await ensureQueue(clients, uniqueName('rg-q'), {})).arn;
  });

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
  });

  const put = (key: string, body: Uint8Array | string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));

  it('a small .csv.gz whose decoded size passes the limit stops non-retryably, in decoded words, writing nothing', async () => {
    expect(gzipped.length).toBeLessThan(LIMIT);
    await put('incoming/bomb.csv.gz', gzipped);
    const worker = createNormalizeWorker({ outputBucket: output });
    const event = { bucket: input, key: 'incoming/bomb.csv.gz', eventName: 'ObjectCreated:Put', size: gzipped.length };
    const run = processObject(worker, event, { store, maxInputBytes: LIMIT });
    await expect(run).rejects.toThrow(InputTooLargeError);
    await expect(processObject(worker, event, { store, maxInputBytes: LIMIT })).rejects.toThrow(
      /incoming\/bomb\.csv\.gz decompresses past the limit of 64\.0 KiB \(MAX_INPUT_BYTES 65536.*nothing was written/,
    );
    expect(await listKeys(clients.s3, output)).toEqual([]);
    // The same input under a limit its decoded size fits is normalized whole.
    const fits = await processObject(worker, event, { store, maxInputBytes: rows.length * 2 });
    expect(fits.status).toBe('processed');
  });

  it('through the batch handler: a failed, non-retryable outcome and a failure record with the decoded reason', async () => {
    await put('incoming/bomb.csv.gz', gzipped);
    const seen: RecordOutcome[] = [];
    const stop = onRecordOutcome((o) => seen.push(o));
    try {
      const handler = createSqsBatchHandler({
        worker: createNormalizeWorker({ outputBucket: output }),
        store,
        sqs: clients.sqs,
        maxInputBytes: LIMIT,
        failureRecorder: new S3FailureRecorder({ store, sqs: clients.sqs, bucket: output }),
      });
      const record = {
        messageId: 'gz-1',
        receiptHandle: 'rh',
        body: JSON.stringify({
          Records: [
            {
              eventSource: 'aws:s3',
              eventName: 'ObjectCreated:Put',
              s3: { bucket: { name: input }, object: { key: 'incoming/bomb.csv.gz', size: gzipped.length } },
            },
          ],
        }),
        attributes: { ApproximateReceiveCount: '1' },
        eventSourceARN: queueArn,
      } as unknown as SQSRecord;
      const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
      const response = await handler({ Records: [record] }, context);
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'gz-1' }]);
      expect(seen[0]).toMatchObject({
        status: 'failed',
        retryable: false,
        reason: expect.stringMatching(/^InputTooLargeError: .*decompresses past the limit of 64\.0 KiB/),
      });
      const records = await listKeys(clients.s3, output, 'failures/');
      const own = records.find((k) => k.endsWith('/gz-1.json'));
      expect(own).toBeDefined();
      expect(await readText(clients.s3, output, own ?? '')).toMatch(/decompresses past the limit/);
    } finally {
      stop();
    }
  });

  describe('time', () => {
    const size = 1024 * 1024;
    /** Reads the body, advancing the clock by msPerByte for every byte, as a slow transform would. */
    const slowWorker = (clock: ReadClock, msPerByte: number) =>
      defineWorker({
        name: 'slow',
        codeVersion: '1',
        outputBucket: output,
        outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
        async transform({ body }, { output: out }) {
          for await (const chunk of body) {
            clock.t += (chunk as Uint8Array).length * msPerByte;
            await out.write(chunk as Uint8Array);
          }
          return {};
        },
      });
    const event = () => ({ bucket: input, key: 'slow.csv', eventName: 'ObjectCreated:Put', size });

    beforeEach(async () => {
      await put('slow.csv', Buffer.alloc(size, 'a'));
    });

    it('a read alone whose pace cannot finish in a whole invocation stops before the timeout: too large for this function', async () => {
      // The whole read would take 20 s; the invocation has 10 s.
      const clock = new ReadClock(10_000, 2_000);
      const run = processObject(slowWorker(clock, 20_000 / size), event(), {
        store,
        deadline: clock.deadline({ active: 0, started: 0 }),
      });
      await expect(run).rejects.toThrow(InputTooLargeError);
      await run.catch((error: Error) => {
        expect(error.message).toMatch(/slow\.csv is too large for this function: reading alone/);
      });
      expect(clock.t).toBeLessThan(clock.timeLimitMs);
      expect(await listKeys(clients.s3, output)).toEqual([]);
    });

    it('a read that only started late stops before the timeout, retryably: the input fits a fresh invocation', async () => {
      // The whole read takes 4 s, of the 10 s an invocation has; it starts with 5 s left.
      const clock = new ReadClock(10_000, 2_000, 5_000);
      const run = processObject(slowWorker(clock, 4_000 / size), event(), { store, deadline: clock.deadline() });
      await expect(run).rejects.toThrow(DeadlineNearError);
      await run.catch((error: Error) => expect(error.message).toMatch(/having started late in the invocation/));
      expect(clock.t).toBeLessThan(clock.timeLimitMs);
      expect(await listKeys(clients.s3, output)).toEqual([]);
    });

    it('a read slowed by another read in flight is never called too large: a crowded batch is not the input’s fault', async () => {
      const clock = new ReadClock(10_000, 2_000);
      // Another transform is reading at the same time (the invocation's shared count says so).
      const reads = { active: 1, started: 1 };
      const run = processObject(slowWorker(clock, 20_000 / size), event(), { store, deadline: clock.deadline(reads) });
      await expect(run).rejects.toThrow(DeadlineNearError);
      expect(reads.active).toBe(1);
    });

    it('a read that fits the time left finishes and publishes', async () => {
      const clock = new ReadClock(10_000, 2_000);
      const outcome = await processObject(slowWorker(clock, 4_000 / size), event(), {
        store,
        deadline: clock.deadline(),
      });
      expect(outcome.status).toBe('processed');
    });
  });
});
