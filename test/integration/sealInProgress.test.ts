import { HeadObjectCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { isRerunErrorNamed } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import { processObject } from '../../src/worker/processObject.js';
import type { ReadDeadline } from '../../src/worker/readGuard.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/** Copies lines through, upper-cased: a 6 MiB input makes a multipart output of two 5 MiB parts. */
function upperWorker(outputBucket: string): WorkerDefinition {
  return defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    partBytes: 5 * 1024 * 1024,
    async transform({ lines }, { output }) {
      let count = 0;
      for await (const line of lines()) {
        count++;
        await output.write(`${line.toUpperCase()}\n`);
      }
      return { lines: count };
    },
  });
}

/** An invocation of a function with a 60 s timeout, `clockAheadMs` after now, with `remainingMs` left. */
function deadline(remainingMs: number, clockAheadMs = 0): ReadDeadline {
  return {
    remainingTimeMs: () => remainingMs,
    marginMs: 1_000,
    timeLimitMs: 60_000,
    now: () => Date.now() + clockAheadMs,
  };
}

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const WRITES = ['PutObject', 'CreateMultipartUpload', 'UploadPart', 'UploadPartCopy', 'CompleteMultipartUpload'];

describe('a seal in progress is not a death: a delivery that finds a multipart output completed but not sealed yet', () => {
  const { s3, sqs } = testClients();
  let input: string;
  let output: string;
  let worker: WorkerDefinition;
  let event: { bucket: string; key: string; eventName: string; eTag: string; versionId: string };

  beforeEach(async () => {
    input = await createBucket(s3, uniqueName('in'));
    await s3.send(new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }));
    output = await createBucket(s3, uniqueName('out'));
    worker = upperWorker(output);
    const put = await s3.send(
      new PutObjectCommand({ Bucket: input, Key: 'big.txt', Body: `${'s'.repeat(1023)}\n`.repeat(6 * 1024) }),
    );
    event = {
      bucket: input,
      key: 'big.txt',
      eventName: 'ObjectCreated:Put',
      eTag: (put.ETag ?? '').replace(/"/g, ''),
      versionId: put.VersionId ?? '',
    };
  });

  /** The output's integrity metadata as S3 holds it now. */
  const integrity = async () =>
    (await s3.send(new HeadObjectCommand({ Bucket: output, Key: `out/${input}/big.txt.txt` }))).Metadata?.[
      'rerun-integrity'
    ];

  it('while its writer is between the completion and the seal: waits for the seal, then is done with no upload of its own', async () => {
    // The first writer stops at its seal until the duplicate has started waiting.
    const reachedSeal = gate();
    const releaseSeal = gate();
    const writerStore = new S3ObjectStore(testClients().s3);
    const seal = writerStore.sealInPlace.bind(writerStore);
    writerStore.sealInPlace = async (bucket, key, options) => {
      reachedSeal.open();
      await releaseSeal.promise;
      return seal(bucket, key, options);
    };
    // The writer and the duplicate are deliveries of two messages (S3 sent the event twice).
    const writer = processObject(worker, event, { store: writerStore, freshDelivery: true, messageId: 'message-1' });
    await reachedSeal.promise;
    expect(await integrity()).toBe('sha256-composite');

    const log = new RequestLog();
    const pauses: number[] = [];
    const duplicate = await processObject(worker, event, {
      store: new S3ObjectStore(testClients(log).s3),
      freshDelivery: true,
      messageId: 'message-2',
      deadline: deadline(50_000),
      // The duplicate's first pause lets the writer seal; it resumes once the writer is done.
      sleep: async (ms) => {
        pauses.push(ms);
        releaseSeal.open();
        await writer;
      },
    });
    // (Opened here too, so that a duplicate that never waited cannot leave the writer stopped.)
    releaseSeal.open();
    expect(await writer).toMatchObject({ status: 'processed' });
    expect(duplicate).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/already done/) });
    expect(pauses).toEqual([250]);
    // Two HEADs (unsealed, then sealed); the event's eTag is the output's source: no GET, and no write.
    expect(log.operations('S3')).toEqual(['HeadObject', 'HeadObject']);
    expect(log.requests.filter((r) => WRITES.includes(r.operation))).toEqual([]);
    expect(await integrity()).toMatch(/^sha256-parts:/);
  });

  it('whose writer must be dead (completed more than a function timeout ago): rebuilds it at once, without waiting', async () => {
    const dying = new S3ObjectStore(testClients().s3);
    dying.sealInPlace = async () => {
      throw new Error('killed before the seal');
    };
    await expect(processObject(worker, event, { store: dying, freshDelivery: true })).rejects.toThrow(
      'killed before the seal',
    );
    const log = new RequestLog();
    const pauses: number[] = [];
    // Its clock two minutes on: the 60 s function's writer must be dead.
    const rebuilt = await processObject(worker, event, {
      store: new S3ObjectStore(testClients(log).s3),
      freshDelivery: true,
      deadline: deadline(50_000, 120_000),
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    expect(rebuilt).toMatchObject({ status: 'processed', reason: expect.stringMatching(/its writer must be dead/) });
    expect(pauses).toEqual([]);
    expect(log.count({ operation: 'UploadPart' })).toBe(2);
    expect(log.count({ operation: 'UploadPartCopy' })).toBe(1);
    expect(await integrity()).toMatch(/^sha256-parts:/);
  });

  it('whose writer may be alive when this invocation has no time left to wait: deferred (SealInProgressError), nothing rebuilt', async () => {
    const stalled = new S3ObjectStore(testClients().s3);
    stalled.sealInPlace = async () => {
      throw new Error('stalled at the seal');
    };
    await expect(processObject(worker, event, { store: stalled, freshDelivery: true })).rejects.toThrow(
      'stalled at the seal',
    );
    const log = new RequestLog();
    // 2 s left with a 1 s margin: not even the first pause fits.
    const attempt = processObject(worker, event, {
      store: new S3ObjectStore(testClients(log).s3),
      freshDelivery: true,
      deadline: deadline(2_000),
      sleep: async () => {
        throw new Error('no pause fits');
      },
    });
    const error = await attempt.catch((e: unknown) => e);
    expect(isRerunErrorNamed(error, 'SealInProgressError')).toBe(true);
    expect(error).toMatchObject({ retryable: true, retryAfterSeconds: expect.any(Number) });
    const seconds = (error as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(log.operations('S3')).toEqual(['HeadObject']);
    expect(await integrity()).toBe('sha256-composite');
  });

  /**
   * A writer that completed the upload as the delivery of SQS message `writerMessageId` and then
   * stopped (killed, or still sealing: either way it never seals here), and a batch handler whose
   * every pause passes at once, on a 60 s function.
   */
  async function stalledThenHandler(writerMessageId: (queueUrl: string) => Promise<string>) {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('seal') }));
    const queueUrl = QueueUrl ?? '';
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const body = JSON.stringify({
      Records: [
        {
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          eventTime: new Date().toISOString(),
          s3: {
            bucket: { name: input },
            object: { key: 'big.txt', eTag: event.eTag, versionId: event.versionId, size: 6 * 1024 * 1024 },
          },
        },
      ],
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    const stalled = new S3ObjectStore(testClients().s3);
    stalled.sealInPlace = async () => {
      throw new Error('stalled at the seal');
    };
    const messageId = await writerMessageId(queueUrl);
    await expect(processObject(worker, event, { store: stalled, freshDelivery: true, messageId })).rejects.toThrow(
      'stalled at the seal',
    );
    /** The SQS record Lambda would hand the function for a message received from the queue. */
    const recordOf = (message: Message | undefined): SQSRecord =>
      ({
        messageId: message?.MessageId ?? '',
        receiptHandle: message?.ReceiptHandle ?? '',
        body,
        attributes: { ApproximateReceiveCount: message?.Attributes?.ApproximateReceiveCount ?? '1' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: Attributes?.QueueArn ?? '',
        awsRegion: 'us-east-1',
      }) as unknown as SQSRecord;
    const outcomes: RecordOutcome[] = [];
    const lines: string[] = [];
    const log = new RequestLog();
    const pauses: number[] = [];
    const handler = createSqsBatchHandler({
      worker: defineWorker({ ...worker, firstRun: 'check' }),
      store: new S3ObjectStore(testClients(log).s3),
      sqs,
      memoryBudget: false,
      logger: { debug() {}, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) },
      onOutcome: (outcome) => {
        outcomes.push(outcome);
      },
      // The pauses pass at once: the writer stays stalled whatever the wait.
      sleep: async (ms) => {
        pauses.push(ms);
      },
    });
    // A 60 s function: each pause fits, the writer's 60 s do not.
    const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
    const run = (record: SQSRecord) => handler({ Records: [record] }, context);
    return { queueUrl, recordOf, run, outcomes, lines, log, pauses };
  }

  it('through the batch handler, a delivery of another message while the writer may be alive and its invocation cannot wait for it: the message is deferred, with the outcome and the log saying so', async () => {
    // The writer was the delivery of another message (S3's other event for the same write, say).
    const batch = await stalledThenHandler(async () => 'another-message');
    const message = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: batch.queueUrl, VisibilityTimeout: 1 })))
      .Messages?.[0];
    const record = batch.recordOf(message);
    const response = await batch.run(record);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(batch.pauses).toEqual([250, 500, 1000, 2000, 4000]);
    expect(batch.outcomes[0]).toMatchObject({
      status: 'failed',
      retryable: true,
      reason: expect.stringMatching(/SealInProgressError.*not rebuilt, retried later.*\(deferred \d+ s\)/),
      deferredSeconds: expect.any(Number),
    });
    expect(batch.lines).toContain(
      'output still unsealed and its writer may be alive: deferring the message, not rebuilding',
    );
    expect(batch.log.requests.filter((r) => WRITES.includes(r.operation))).toEqual([]);
    // Deferred: not back after its 1 s visibility timeout.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(
      (await sqs.send(new ReceiveMessageCommand({ QueueUrl: batch.queueUrl, WaitTimeSeconds: 0 }))).Messages ?? [],
    ).toEqual([]);
  });

  it('through the batch handler, the same message received again after its writer was killed before the seal: rebuilt at once, no wait, with the log saying why', async () => {
    // The writer is the first receive of the message; SQS hands it out again once its 1 s visibility
    // timeout has run out (a Lambda queue's is at least the function's timeout: the writer is dead).
    const batch = await stalledThenHandler(async (queueUrl) => {
      const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, VisibilityTimeout: 1 }));
      return first.Messages?.[0]?.MessageId ?? '';
    });
    const again = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: batch.queueUrl,
        WaitTimeSeconds: 10,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    const record = batch.recordOf(again.Messages?.[0]);
    expect(record.attributes.ApproximateReceiveCount).toBe('2');
    const response = await batch.run(record);
    expect(response.batchItemFailures).toEqual([]);
    expect(batch.pauses).toEqual([]);
    expect(batch.outcomes[0]).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/its writer was an earlier receive of this same message/),
    });
    expect(batch.lines).toContain(
      'unsealed output written by an earlier receive of this same message, which is over: rebuilding it',
    );
    // One HEAD found it unsealed; the rebuild uploads two parts and seals them.
    expect(batch.log.operations('S3')[0]).toBe('HeadObject');
    expect(batch.log.count({ operation: 'UploadPart' })).toBe(2);
    expect(batch.log.count({ operation: 'UploadPartCopy' })).toBe(1);
    expect(await integrity()).toMatch(/^sha256-parts:/);
  });
});
