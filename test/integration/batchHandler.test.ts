import { DeleteObjectCommand, PutObjectCommand as S3Put } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler, inProcessWaitMs, maxDeferralSeconds } from '../../src/batch/createSqsBatchHandler.js';
import { RerunError } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

const context = (remainingMs = 60_000): Context =>
  ({ awsRequestId: 'req-1', getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

const record = (messageId: string, body: string, arn = 'arn:aws:sqs:us-east-1:123456789012:q'): SQSRecord =>
  ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

const s3Event = (bucket: string, key: string) =>
  JSON.stringify({
    Records: [
      {
        eventSource: 'aws:s3',
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: bucket }, object: { key: encodeURIComponent(key).replace(/%20/g, '+') } },
      },
    ],
  });

describe('createSqsBatchHandler', () => {
  const clients = testClients();
  let input: string;
  let output: string;
  let seen: RecordOutcome[];
  const worker = (outputBucket: string, transform?: () => Promise<void>) =>
    copyWorker(outputBucket, transform ? { before: transform } : {});

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
    seen = [];
    const stop = onRecordOutcome((o) => seen.push(o));
    return stop;
  });

  it('acknowledges s3:TestEvent, fails a non-S3 message alone, and processes the rest (partial batch response)', async () => {
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'café +1.csv', Body: 'a' }));
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const event: SQSEvent = {
      Records: [
        record('m-test', JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: input })),
        record('m-junk', '{"hello":"world"}'),
        record('m-ok', s3Event(input, 'café +1.csv')),
      ],
    };
    const response = await handler(event, context());
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-junk' }] });
    expect(await readText(clients.s3, output, `out/${input}/café +1.csv`)).toBe('a');
    const byId = Object.fromEntries(seen.map((o) => [o.messageId, o]));
    expect(byId['m-test']).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/TestEvent/) });
    expect(byId['m-junk']).toMatchObject({
      status: 'failed',
      retryable: false,
      reason: expect.stringMatching(/not an S3 event/),
    });
    expect(byId['m-ok']).toMatchObject({ status: 'processed', outputKey: `out/${input}/café +1.csv` });
  });

  it('scales the default deadline margin with the function time: a 5 s function still starts its records', async () => {
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'short.csv', Body: 'a' }));
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const response = await handler({ Records: [record('s', s3Event(input, 'short.csv'))] }, context(5000));
    expect(response.batchItemFailures).toEqual([]);
    expect(seen[0]).toMatchObject({ status: 'processed' });
  });

  it('refuses a margin that leaves no time to start any record, saying which setting to change', async () => {
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      deadlineMarginMs: 5000,
    });
    const response = await handler({ Records: [record('c', s3Event(input, 'x'))] }, context(5000));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'c' }]);
    expect(seen[0]?.reason).toMatch(
      /deadlineMarginMs \(5000 ms\) is not below the function's time \(5000 ms\).*lower deadlineMarginMs or raise the function timeout/,
    );
    // Named by its object, not only by its message id.
    expect(seen[0]?.source).toEqual({ bucket: input, key: 'x' });
  });

  it('starts no record when the deadline is near and reports them all as failures, not lost', async () => {
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      deadlineMarginMs: 5000,
    });
    const response = await handler(
      { Records: [record('a', s3Event(input, 'x')), record('b', s3Event(input, 'y'))] },
      context(4000),
    );
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['a', 'b']);
    expect(seen.every((o) => o.reason.includes('deadline'))).toBe(true);
  });

  it('on a FIFO queue, reports every record after the first failure as failed, in order', async () => {
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'ok', Body: 'a' }));
    const fifoArn = 'arn:aws:sqs:us-east-1:123456789012:q.fifo';
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const response = await handler(
      {
        Records: [
          record('1', s3Event(input, 'ok'), fifoArn),
          record('2', 'junk', fifoArn),
          record('3', s3Event(input, 'ok'), fifoArn),
        ],
      },
      context(),
    );
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['2', '3']);
  });

  it('defers a message whose error asks for it (ChangeMessageVisibility) and reports it as a failure', async () => {
    const queueName = uniqueName('defer');
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'k', Body: 'a' }));
    await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: s3Event(input, 'k') }));
    const received = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 1 }));
    const message = received.Messages?.[0];
    const inProgress = Object.assign(new RerunError('side effect in progress elsewhere'), { retryAfterSeconds: 30 });
    const handler = createSqsBatchHandler({
      worker: worker(output, () => Promise.reject(inProgress)),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const event = {
      Records: [
        {
          ...record(message?.MessageId ?? '', message?.Body ?? '', Attributes?.QueueArn),
          receiptHandle: message?.ReceiptHandle ?? '',
        },
      ],
    };
    // 20 s left: a 30 s wait does not fit in this invocation, so the message is deferred.
    const response = await handler(event, context(20_000));
    expect(response.batchItemFailures).toHaveLength(1);
    expect(seen[0]?.reason).toMatch(/deferred 30 s/);
    // Without the deferral the message would be back after its 1 s visibility timeout.
    await new Promise((r) => setTimeout(r, 1500));
    const again = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }));
    expect(again.Messages ?? []).toHaveLength(0);
  });

  it('waits within the invocation, instead of spending a receive on a deferral, when the wait fits in the time left', async () => {
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'wait', Body: 'a' }));
    let calls = 0;
    const inProgress = Object.assign(new RerunError('side effect in progress elsewhere'), { retryAfterSeconds: 1 });
    const handler = createSqsBatchHandler({
      worker: worker(output, async () => {
        calls++;
        if (calls === 1) throw inProgress; // the other holder's lease ends 1 s later
      }),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const started = Date.now();
    const response = await handler({ Records: [record('w-1', s3Event(input, 'wait'))] }, context(60_000));
    expect(response.batchItemFailures).toEqual([]);
    expect(calls).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('reports what its metrics count: entries quarantined, publish races lost and effects executed, as one EMF line', async () => {
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'raced.csv', Body: 'a' }));
    const outputKey = deterministicKey({ prefix: 'out/', source: { bucket: input, key: 'raced.csv' } });
    let rounds = 0;
    const emf: string[] = [];
    const handler = createSqsBatchHandler({
      worker: defineWorker({
        name: 'quarantining',
        codeVersion: '1',
        outputBucket: output,
        outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
        async transform({ body }, { output: out }) {
          // Another writer creates the output while the first round transforms: its create gets a 412.
          if (++rounds === 1) await clients.s3.send(new S3Put({ Bucket: output, Key: outputKey, Body: 'other' }));
          for await (const chunk of body) await out.write(chunk as Uint8Array);
          return { records: 1, quarantined: 2 };
        },
      }),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      afterOutput: async () => ({ executed: true, note: 'notified' }),
      onOutcome: emfOutcomeMetrics({ sink: (l) => emf.push(l) }),
    });
    const response = await handler(
      { Records: [record('r-1', s3Event(input, 'raced.csv')), record('junk', 'nope')] },
      context(),
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'junk' }]);
    expect(rounds).toBe(2);
    expect(seen.find((o) => o.messageId === 'r-1')).toMatchObject({
      status: 'processed',
      quarantined: 2,
      publishRacesLost: 1,
      effectsExecuted: 1,
    });
    expect(emf).toHaveLength(1);
    expect(JSON.parse(emf[0] ?? '{}')).toMatchObject({
      _aws: { CloudWatchMetrics: [{ Namespace: 'rerun', Dimensions: [['Worker']] }] },
      Worker: 'quarantining',
      RecordsProcessed: 1,
      RecordsSkipped: 0,
      RecordsFailed: 1,
      EntriesQuarantined: 2,
      PublishRacesLost: 1,
      EffectsExecuted: 1,
    });
  });

  it('inProcessWaitMs: only for errors that ask, at most 3 times, and only when the wait and a reserve fit', () => {
    const asks = { retryAfterSeconds: 3 };
    expect(inProcessWaitMs(asks, 0, 7000, 1600)).toBe(3000);
    expect(inProcessWaitMs({ retryAfterSeconds: 6 }, 0, 7000, 1600)).toBeUndefined();
    expect(inProcessWaitMs(asks, 3, 60_000, 1600)).toBeUndefined();
    expect(inProcessWaitMs(new Error('plain'), 0, 60_000, 1600)).toBeUndefined();
    expect(inProcessWaitMs({ retryAfterSeconds: 0 }, 0, 60_000, 1600)).toBe(100);
  });

  it('clamps a deferral of 12 h or more to what SQS allows since the receive, and SQS accepts it', async () => {
    const queueName = uniqueName('defer-long');
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'long', Body: 'a' }));
    await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: s3Event(input, 'long') }));
    const received = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 1 }));
    const message = received.Messages?.[0];
    // A webhook's Retry-After of a day.
    const later = Object.assign(new RerunError('webhook asked to retry later'), { retryAfterSeconds: 86_400 });
    // The invocation has run 100 s when the record fails: the clock says so.
    let clock = 1_000_000;
    const handler = createSqsBatchHandler({
      worker: worker(output, async () => {
        clock += 100_000;
        throw later;
      }),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      now: () => clock,
    });
    const event = {
      Records: [
        {
          ...record(message?.MessageId ?? '', message?.Body ?? '', Attributes?.QueueArn),
          receiptHandle: message?.ReceiptHandle ?? '',
        },
      ],
    };
    await handler(event, context());
    // 43,200 s since the receive, less a batching window of 300 s and the 100 s the invocation ran.
    expect(seen[0]?.reason).toMatch(/\(deferred 42800 s\)$/);
    expect(maxDeferralSeconds(100_000)).toBe(42_800);
  });
  it('a young delete removes the outputs at once and sends itself again, delayed until every build that read the input before it has ended; a late one does not', async () => {
    const queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('look-again') }))).QueueUrl;
    const arn = `arn:aws:sqs:us-east-1:123456789012:${queueUrl?.split('/').pop()}`;
    const handler = createSqsBatchHandler({
      worker: worker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      now: () => Date.parse('2026-12-04T10:00:05.000Z'),
    });
    await clients.s3.send(new S3Put({ Bucket: input, Key: 'a b.csv', Body: 'a' }));
    await handler({ Records: [record('m-create', s3Event(input, 'a b.csv'), arn)] }, context());
    expect(await readText(clients.s3, output, `out/${input}/a b.csv`)).toBe('a');
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'a b.csv' }));
    const deleted = (eventTime: string) =>
      JSON.stringify({
        Records: [
          {
            eventSource: 'aws:s3',
            eventTime,
            eventName: 'ObjectRemoved:Delete',
            s3: { bucket: { name: input }, object: { key: 'a+b.csv' } },
          },
        ],
      });
    // 5 s after the delete, with a 60 s function timeout: due 120 s after the delete.
    const young = await handler({ Records: [record('m-delete', deleted('2026-12-04T10:00:00.000Z'), arn)] }, context());
    expect(young).toEqual({ batchItemFailures: [] });
    expect(seen.find((o) => o.messageId === 'm-delete')).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/removed main.*; looking again in 115 s$/),
    });
    expect(await listKeys(clients.s3, output)).toEqual([]);
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
    // The look again itself, once due (its time is the delete's): it removes, and sends nothing more.
    const lookAgain = await handler(
      { Records: [record('m-look', deleted('2026-12-04T09:57:00.000Z'), arn)] },
      context(),
    );
    expect(lookAgain).toEqual({ batchItemFailures: [] });
    expect(seen.find((o) => o.messageId === 'm-look')?.reason).not.toMatch(/looking again/);
    const after = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
    );
    expect(after.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
  });
});
