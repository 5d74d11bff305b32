import { setImmediate as yieldTurn } from 'node:timers/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureQueue } from '../../local/provision.js';
import {
  createSqsBatchHandler,
  REQUEUED_FROM_ATTRIBUTE,
  REQUEUES_ATTRIBUTE,
} from '../../src/batch/createSqsBatchHandler.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys } from '../support/s3.js';

/** The invocation's clock: transforms advance it, the context and the handler read it. */
class Clock {
  t = 0;
  constructor(readonly timeLimitMs: number) {}
  context(): Context {
    return {
      awsRequestId: 'req',
      getRemainingTimeInMillis: () => this.timeLimitMs - this.t,
    } as unknown as Context;
  }
}

const s3Record = (bucket: string, key: string, i: number) => ({
  eventVersion: '2.1',
  eventSource: 'aws:s3',
  eventTime: `2026-12-01T10:00:${String(i % 60).padStart(2, '0')}.000Z`,
  eventName: 'ObjectCreated:Put',
  s3: { bucket: { name: bucket }, object: { key, size: 1, sequencer: `00${i}` } },
});

const sqsRecord = (messageId: string, body: string, queueArn: string, attributes = {}): SQSRecord =>
  ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: attributes,
    eventSourceARN: queueArn,
  }) as unknown as SQSRecord;

describe('the deadline between the records of one message: finish what fits, requeue the rest', () => {
  const clients = testClients();
  const store = new S3ObjectStore(clients.s3);
  let input: string;
  let output: string;
  let queue: { url: string; arn: string };
  let seen: RecordOutcome[];

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
    queue = await ensureQueue(clients, uniqueName('rq'), {});
    seen = [];
    return onRecordOutcome((o) => seen.push(o));
  });

  /** Copies its input, advancing the clock by `msPerRecord` as a slow transform would. */
  const worker = (clock: Clock, msPerRecord: number) =>
    copyWorker(output, {
      after: () => {
        clock.t += msPerRecord;
      },
    });

  const putInputs = async (n: number) => {
    const keys = Array.from({ length: n }, (_, i) => `k${i}.csv`);
    await Promise.all(keys.map((Key) => clients.s3.send(new PutObjectCommand({ Bucket: input, Key, Body: 'a' }))));
    return keys;
  };

  const receiveAll = async () => {
    const out = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
    );
    return out.Messages ?? [];
  };

  it('a many-record message under a short time limit finishes some, requeues exactly the rest as one message, and succeeds', async () => {
    const keys = await putInputs(6);
    const body = JSON.stringify({ Records: keys.map((k, i) => s3Record(input, k, i)) });
    const clock = new Clock(10_000);
    const handler = createSqsBatchHandler({
      worker: worker(clock, 2_000),
      store,
      sqs: clients.sqs,
      memoryBudget: false,
      deadlineMarginMs: 2_500,
      now: () => clock.t,
    });
    const response = await handler({ Records: [sqsRecord('many', body, queue.arn)] }, clock.context());
    // Records 0-3 fit (10 s, 2 s each, 2.5 s margin); 4 and 5 do not.
    expect(response.batchItemFailures).toEqual([]);
    expect(await listKeys(clients.s3, output, 'out/')).toEqual(keys.slice(0, 4).map((k) => `out/${input}/${k}`));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      messageId: 'many',
      status: 'requeued',
      requeuedRecords: 2,
      source: { bucket: input, key: 'k4.csv' },
      reason: expect.stringMatching(/deadline came near.*4 of 6 S3 records done \(4 processed\).*other 2 requeued/),
    });
    const messages = await receiveAll();
    expect(messages).toHaveLength(1);
    const requeued = messages[0];
    expect(seen[0]?.requeuedAs).toBe(requeued?.MessageId);
    // Exactly the remaining records, as they were (eventTime and sequencer kept).
    expect(JSON.parse(requeued?.Body ?? '{}')).toEqual({
      Records: keys.slice(4).map((k, i) => s3Record(input, k, i + 4)),
    });
    expect(requeued?.MessageAttributes?.[REQUEUED_FROM_ATTRIBUTE]?.StringValue).toBe('many');
    expect(requeued?.MessageAttributes?.[REQUEUES_ATTRIBUTE]?.StringValue).toBe('0');

    // The requeued message, delivered fresh, finishes the rest.
    const again = new Clock(10_000);
    const rest = createSqsBatchHandler({ worker: worker(again, 2_000), store, sqs: clients.sqs, memoryBudget: false });
    const attributes = { [REQUEUED_FROM_ATTRIBUTE]: { stringValue: 'many', dataType: 'String' } };
    const second = await rest(
      { Records: [sqsRecord(requeued?.MessageId ?? 'r', requeued?.Body ?? '', queue.arn, attributes)] },
      again.context(),
    );
    expect(second.batchItemFailures).toEqual([]);
    expect(await listKeys(clients.s3, output, 'out/')).toEqual(keys.map((k) => `out/${input}/${k}`));
  });

  it('a failed requeue send returns the message as a batch item failure: it comes back whole', async () => {
    const keys = await putInputs(3);
    const body = JSON.stringify({ Records: keys.map((k, i) => s3Record(input, k, i)) });
    const clock = new Clock(10_000);
    const handler = createSqsBatchHandler({
      worker: worker(clock, 4_000),
      store,
      sqs: clients.sqs,
      memoryBudget: false,
      deadlineMarginMs: 2_500,
      now: () => clock.t,
    });
    // A queue that does not exist: GetQueueUrl, and so the send, fails.
    const missing = 'arn:aws:sqs:us-east-1:123456789012:no-such-queue-for-requeue';
    const response = await handler({ Records: [sqsRecord('lost', body, missing)] }, clock.context());
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'lost' }]);
    expect(seen[0]).toMatchObject({
      status: 'failed',
      retryable: true,
      reason: expect.stringMatching(/2 of 3 S3 records done.*requeueing the 1 left failed.*comes back whole/),
    });
  });

  it('a burst of inputs at the limit in one batch: none fails or gets a failure record; what does not fit is requeued', async () => {
    const size = 256 * 1024;
    const keys = Array.from({ length: 10 }, (_, i) => `burst-${i}.csv`);
    await Promise.all(
      keys.map((Key) => clients.s3.send(new PutObjectCommand({ Bucket: input, Key, Body: Buffer.alloc(size, 'a') }))),
    );
    const clock = new Clock(10_000);
    // Each input alone takes 4 s of the 10 s: it fits a fresh invocation, but ten together do not.
    const msPerByte = 4_000 / size;
    // The ten share the function by construction, not by the emulator's timing: no transform reads a
    // byte before all ten have started (moto may answer the GETs one by one, and each read then ran
    // alone, stopped as "started late": the burst this test is about never happened).
    let transformsStarted = 0;
    let allStarted: () => void = () => {};
    const allTen = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const slow = defineWorker({
      name: 'slow',
      codeVersion: '1',
      outputBucket: output,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
      async transform({ body }, { output: out }) {
        if (++transformsStarted === keys.length) allStarted();
        await allTen;
        for await (const chunk of body) {
          clock.t += (chunk as Uint8Array).length * msPerByte;
          await out.write(chunk as Uint8Array);
          await yieldTurn();
        }
        return {};
      },
    });
    const handler = createSqsBatchHandler({
      worker: slow,
      store,
      sqs: clients.sqs,
      memoryBudget: false,
      concurrency: 10,
      maxInputBytes: size,
      deadlineMarginMs: 2_000,
      now: () => clock.t,
      failureRecorder: new S3FailureRecorder({ store, sqs: clients.sqs, bucket: output }),
    });
    const records = keys.map((k, i) =>
      sqsRecord(`b${i}`, JSON.stringify({ Records: [s3Record(input, k, i)] }), queue.arn),
    );
    const response = await handler({ Records: records }, clock.context());
    expect(response.batchItemFailures).toEqual([]);
    expect(seen).toHaveLength(10);
    expect(seen.filter((o) => o.status === 'failed')).toEqual([]);
    const requeued = seen.filter((o) => o.status === 'requeued');
    expect(requeued.length).toBeGreaterThan(0);
    // Stopped while sharing the function, or started after the others had used its time: retryable either way.
    for (const o of requeued)
      expect(o.reason).toMatch(/sharing the function with other transforms|having started late/);
    expect(requeued.some((o) => /sharing the function/.test(o.reason))).toBe(true);
    expect(await listKeys(clients.s3, output, 'failures/')).toEqual([]);
    // Every input is either done or on the queue again, as a fresh message.
    const done = (await listKeys(clients.s3, output, 'out/')).length;
    const back = [];
    for (let round = 0; round < 3 && back.length < requeued.length; round++) back.push(...(await receiveAll()));
    expect(done + back.length).toBe(10);
  });
});
