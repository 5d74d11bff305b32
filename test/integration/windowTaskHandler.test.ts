import { PutObjectCommand } from '@aws-sdk/client-s3';
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { ensureQueue } from '../../local/provision.js';
import { toSqsRecord } from '../../local/runner/sqsRecord.js';
import { RerunError } from '../../src/errors.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { createWindowTaskHandler } from '../../src/window/createWindowTaskHandler.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { scheduledWindowTaskBody, windowTaskMessage } from '../../src/window/windowTaskMessage.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { OFFLINE_CONTEXT } from '../support/offlineBatch.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

const HOURLY = 'year={yyyy}/month={MM}/day={dd}/hour={HH}';
const CORRUPT_DAY = '2026-12-04';
const THROTTLED_DAY = '2026-12-03';

/**
 * A user's daily stage over hourly inputs; its build refuses 2026-12-04 as corrupt (not retryable)
 * and fails 2026-12-03 as a throttled read would (retryable).
 */
function dailyFiles(bucket: string) {
  return defineWindowTask({
    name: 'daily-files',
    codeVersion: 'daily-files@1',
    partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
    inputs: [{ name: 'hourly', prefix: 'events/', partitions: { kind: 'time', grain: 'hourly', template: HOURLY } }],
    output: { bucket, prefix: 'daily/', fileName: 'files.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      if (context.window.name === THROTTLED_DAY) {
        throw new RerunError('the lake answered 503 SlowDown', { retryable: true });
      }
      if (context.window.name === CORRUPT_DAY) {
        throw new RerunError(`an input of ${CORRUPT_DAY} is corrupt: fix it, then redrive`, { retryable: false });
      }
      const paths: string[] = [];
      for await (const input of inputs) {
        paths.push(input.path);
        input.body.resume();
      }
      writer.write(`${JSON.stringify({ window: context.window.name, paths })}\n`);
      return { files: paths.length };
    },
  });
}

describe('createWindowTaskHandler: a user window stage run from its FIFO queue, against the emulator', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let bucket: string;
  let queue: { url: string; arn: string; name: string };
  let handler: ReturnType<typeof createWindowTaskHandler>;

  const hour = (day: string, h: string, name: string) =>
    clients.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `events/year=2026/month=12/day=${day}/hour=${h}/${name}`,
        Body: '{"n":1}\n',
      }),
    );

  /** Sends the bodies to the FIFO queue and receives them as Lambda would hand them over, in the order sent. */
  async function deliver(messages: { body: string; groupId: string; deduplicationId: string }[]): Promise<SQSEvent> {
    for (const m of messages) {
      await clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: m.body,
          MessageGroupId: m.groupId,
          MessageDeduplicationId: m.deduplicationId,
        }),
      );
    }
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    const records = (received.Messages ?? []).map((m) => toSqsRecord(m, { queueArn: queue.arn, region: 'us-east-1' }));
    expect(records).toHaveLength(messages.length);
    // SQS returns several groups in no promised order; Lambda hands over what it received: pin the order sent.
    const order = messages.map((m) => m.body);
    records.sort((a, b) => order.indexOf(a.body) - order.indexOf(b.body));
    return { Records: records };
  }
  const ids = (event: SQSEvent) => event.Records.map((r: SQSRecord) => r.messageId);
  const recorder = () => new S3FailureRecorder({ store: new S3ObjectStore(clients.s3), sqs: clients.sqs, bucket });

  beforeEach(async () => {
    bucket = await createBucket(clients.s3, uniqueName('wth'));
    const name = `${uniqueName('wth-q')}.fifo`;
    const dlq = await ensureQueue(clients, name.replace('.fifo', '-dlq.fifo'), { FifoQueue: 'true' });
    const redrive = JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 3 });
    // A window stage's queue: 6 x its 900 s timeout (WINDOW_STAGE_DEFAULT_SETTINGS).
    queue = {
      ...(await ensureQueue(clients, name, { FifoQueue: 'true', RedrivePolicy: redrive, VisibilityTimeout: '5400' })),
      name,
    };
    handler = createWindowTaskHandler({ task: dailyFiles(bucket), clients });
    await hour('05', '00', 'a.json');
    await hour('05', '13', 'b.json');
    await hour('04', '10', 'c.json');
  });

  it('publishes the good window, records the failing one and answers the partial batch response', async () => {
    const good = windowTaskMessage({ stage: 'daily-files', window: '2026-12-05' });
    const corrupt = windowTaskMessage({ stage: 'daily-files', window: CORRUPT_DAY });
    const malformed = { body: '{"type":"rerun.window","version":1', groupId: 'junk', deduplicationId: 'junk-1' };
    const event = await deliver([good, corrupt, malformed]);
    const [goodId, corruptId, malformedId] = ids(event);

    const response = await handler(event, OFFLINE_CONTEXT);

    // The corrupt day failed; on a FIFO queue the record after it was not started (AWS keeps the order
    // of a FIFO batch only if every later record is reported too).
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: corruptId }, { itemIdentifier: malformedId }] });
    expect(JSON.parse(await readText(clients.s3, bucket, 'daily/dt=2026-12-05/files.json'))).toEqual({
      window: '2026-12-05',
      paths: ['year=2026/month=12/day=05/hour=00/a.json', 'year=2026/month=12/day=05/hour=13/b.json'],
    });
    expect(await listKeys(clients.s3, bucket, 'daily/dt=2026-12-04/')).toEqual([]);
    expect(goodId).toBeDefined();

    // The non-retryable failure is a give-up at once: its record names the window and the build's reason.
    const record = await recorder().read(queue.name, corruptId as string);
    expect(record).toMatchObject({
      messageId: corruptId,
      givenUp: 'non-retryable',
      retryable: false,
      subject: `s3://${bucket}/daily/dt=2026-12-04/files.json`,
    });
    expect(record?.reason).toContain('an input of 2026-12-04 is corrupt');
    // The unstarted record is retryable and has no record yet.
    expect(await recorder().read(queue.name, malformedId as string)).toBeUndefined();

    // Delivered again alone, the malformed body is refused by name, not retryable, with its record; it comes
    // back in 1 s, as every receive refuses it alike, so it reaches its DLQ in seconds.
    const again = { Records: event.Records.filter((r) => r.messageId === malformedId) };
    log.clear();
    expect(await handler(again, OFFLINE_CONTEXT)).toEqual({ batchItemFailures: [{ itemIdentifier: malformedId }] });
    expect(await recorder().read(queue.name, malformedId as string)).toMatchObject({
      givenUp: 'non-retryable',
      reason: 'not a window task message: the body is not a JSON object (deferred 1 s)',
    });
    expect(
      log.requests.filter((r) => r.operation === 'ChangeMessageVisibility').map((r) => r.input.VisibilityTimeout),
    ).toEqual([1]);
  });

  it("a failed window comes back soon, not after the queue's 90-minute visibility timeout: 60 s doubling per receive, 1 s when not retryable", async () => {
    const outcomes: { status: string; reason: string; deferredSeconds?: number }[] = [];
    const watched = createWindowTaskHandler({
      task: dailyFiles(bucket),
      clients,
      onOutcome: (o) => void outcomes.push(o),
    });
    const visibilities = () =>
      log.requests.filter((r) => r.operation === 'ChangeMessageVisibility').map((r) => r.input.VisibilityTimeout);

    const throttled = await deliver([windowTaskMessage({ stage: 'daily-files', window: THROTTLED_DAY })]);
    log.clear();
    expect(await watched(throttled, OFFLINE_CONTEXT)).toEqual({
      batchItemFailures: [{ itemIdentifier: ids(throttled)[0] }],
    });
    expect(visibilities()).toEqual([60]);
    // A cold handler's first failure looks its queue up once: the retry delay and the failure recorder
    // share the lookup (the recorder's maxReceiveCount is in the same GetQueueAttributes).
    expect(log.requests.filter((r) => r.operation.startsWith('GetQueue')).map((r) => r.operation)).toEqual([
      'GetQueueUrl',
      'GetQueueAttributes',
    ]);
    expect(outcomes.at(-1)).toMatchObject({
      status: 'failed',
      reason: 'RerunError: the lake answered 503 SlowDown (deferred 60 s)',
      deferredSeconds: 60,
    });
    const receive = (n: number) => ({
      Records: throttled.Records.map((r) => ({
        ...r,
        attributes: { ...r.attributes, ApproximateReceiveCount: `${n}` },
      })),
    });
    // Its second receive: 2 minutes.
    log.clear();
    await watched(receive(2), OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([120]);
    // Its last (the queue's maxReceiveCount, 3): 1 s, since only the DLQ comes after it.
    log.clear();
    await watched(receive(3), OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([1]);
    await clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: throttled.Records[0]?.receiptHandle }),
    );

    // Not retryable: back in 1 s, so its receives run out (and it reaches its DLQ) in seconds.
    const corrupt = await deliver([windowTaskMessage({ stage: 'daily-files', window: CORRUPT_DAY })]);
    log.clear();
    await watched(corrupt, OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([1]);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const back = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['All'] }),
    );
    expect(back.Messages?.map((m) => [m.MessageId, m.Attributes?.ApproximateReceiveCount])).toEqual([
      [ids(corrupt)[0], '2'],
    ]);

    // retryDelay: false leaves it to the queue's visibility timeout.
    const plain = createWindowTaskHandler({ task: dailyFiles(bucket), clients, retryDelay: false });
    log.clear();
    await plain(throttled, OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([]);

    // Never later than the queue's own timeout: a queue set for quick retries (rerun dev
    // --visibility-timeout 30) keeps them; the 1 s of a failure that is not retryable still applies.
    await clients.sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: queue.url, Attributes: { VisibilityTimeout: '30' } }),
    );
    const quick = createWindowTaskHandler({ task: dailyFiles(bucket), clients });
    log.clear();
    await quick(throttled, OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([]);
    const timeoutReads = () =>
      log.requests.filter(
        (r) =>
          r.operation === 'GetQueueAttributes' &&
          (r.input.AttributeNames as string[] | undefined)?.includes('VisibilityTimeout'),
      ).length;
    expect(timeoutReads()).toBe(1);
    await quick(corrupt, OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([1]);
    // The timeout is read once per queue.
    expect(timeoutReads()).toBe(1);
  });

  it('a duplicate message for a published window is skipped and nothing is rewritten', async () => {
    const first = await deliver([windowTaskMessage({ stage: 'daily-files', window: '2026-12-05' })]);
    expect(await handler(first, OFFLINE_CONTEXT)).toEqual({ batchItemFailures: [] });
    // What Lambda does with a success: delete it (a FIFO group delivers nothing behind a message in flight).
    await clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: first.Records[0]?.receiptHandle }),
    );
    const before = await listKeys(clients.s3, bucket, 'daily/');

    // A copy past FIFO's deduplication (another token): the same window asked for again.
    const duplicate = await deliver([
      windowTaskMessage({ stage: 'daily-files', window: '2026-12-05', token: 'again' }),
    ]);
    log.clear();
    const outcomes: { status: string; reason: string }[] = [];
    const watched = createWindowTaskHandler({
      task: dailyFiles(bucket),
      clients,
      onOutcome: (o) => void outcomes.push(o),
    });
    expect(await watched(duplicate, OFFLINE_CONTEXT)).toEqual({ batchItemFailures: [] });
    expect(outcomes).toMatchObject([{ status: 'skipped', reason: expect.stringMatching(/^2026-12-05: already done/) }]);
    expect(log.count({ operation: 'PutObject' })).toBe(0);
    expect(log.count({ operation: 'DeleteObject' })).toBe(0);
    expect(await listKeys(clients.s3, bucket, 'daily/')).toEqual(before);
  });

  it("refuses by name, not retryable, a message for another stage or a window outside the stage's scheme", async () => {
    const cases = [
      [
        windowTaskMessage({ stage: 'hourly-files', window: '2026-12-05' }),
        /for the stage "hourly-files", not "daily-files"/,
      ],
      [
        windowTaskMessage({ stage: 'daily-files', window: '2026-12-05T10' }),
        /the window "2026-12-05T10" is not one of the stage "daily-files"/,
      ],
      [
        {
          body: JSON.stringify({
            ...JSON.parse(windowTaskMessage({ stage: 'daily-files', window: '2026-12-05' }).body),
            version: 2,
          }),
          groupId: 'v2',
          deduplicationId: 'v2',
        },
        /version 2 is not one this handler reads/,
      ],
    ] as const;
    for (const [message, reason] of cases) {
      const event = await deliver([message]);
      const [id] = ids(event);
      expect(await handler(event, OFFLINE_CONTEXT)).toEqual({ batchItemFailures: [{ itemIdentifier: id }] });
      const record = await recorder().read(queue.name, id as string);
      expect(record).toMatchObject({ givenUp: 'non-retryable', retryable: false });
      expect(record?.reason).toMatch(reason);
    }
    expect(await listKeys(clients.s3, bucket, 'daily/')).toEqual([]);
  });

  it('starts no window when the invocation is past its deadline margin: the record comes back, nothing is written', async () => {
    const event = await deliver([windowTaskMessage({ stage: 'daily-files', window: '2026-12-05' })]);
    const late = createWindowTaskHandler({ task: dailyFiles(bucket), clients, deadlineMarginMs: 5_000 });
    const nearlyOut = { ...OFFLINE_CONTEXT, getRemainingTimeInMillis: () => 1_000 };
    expect(await late(event, nearlyOut)).toEqual({ batchItemFailures: [{ itemIdentifier: ids(event)[0] }] });
    expect(await listKeys(clients.s3, bucket, 'daily/')).toEqual([]);
  });

  it("a schedule's message builds the window that closed last before the rule fired", async () => {
    const body = JSON.stringify(scheduledWindowTaskBody('daily-files', '2026-12-06T00:15:00Z'));
    const event = await deliver([{ body, groupId: 'schedule-daily-files', deduplicationId: 's-1' }]);
    expect(await handler(event, OFFLINE_CONTEXT)).toEqual({ batchItemFailures: [] });
    expect(await listKeys(clients.s3, bucket, 'daily/dt=2026-12-05/files.json')).toEqual([
      'daily/dt=2026-12-05/files.json',
    ]);
  });
  it('a day built from its hours that runs out of time after a part goes on in a new message, not a receive', async () => {
    const task = dailyFiles(bucket);
    const withParts = defineWindowTask({
      ...task.definition,
      parts: {
        grain: 'hourly',
        async combine(hours, writer, context) {
          const paths: string[] = [];
          for await (const hour of hours) {
            const chunks: Buffer[] = [];
            for await (const chunk of hour.body) chunks.push(chunk as Buffer);
            paths.push(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { paths: string[] }).paths);
          }
          writer.write(`${JSON.stringify({ window: context.window.name, paths })}\n`);
          return { files: paths.length };
        },
      },
    });
    // One input per invocation: the day's two inputs (hours 00 and 13) are two parts.
    const parts = createWindowTaskHandler({ task: withParts, clients, limits: { maxInputs: 1 } });
    const partPublished = () =>
      log.requests.some(
        (r) => r.operation === 'PutObject' && String(r.input.Key).startsWith('daily/_parts/dt=2026-12-05/'),
      );
    // The invocation's time runs out once the first part is published.
    const runsOut = { ...OFFLINE_CONTEXT, getRemainingTimeInMillis: () => (partPublished() ? 0 : 60_000) };
    const event = await deliver([windowTaskMessage({ stage: 'daily-files', window: '2026-12-05' })]);
    const [firstId] = ids(event);
    log.clear();

    // Acknowledged: the part is published, and the window goes on in a new message of its group.
    expect(await parts(event, runsOut)).toEqual({ batchItemFailures: [] });
    expect(await listKeys(clients.s3, bucket, 'daily/')).toEqual([
      'daily/_parts/dt=2026-12-05/2026-12-05T00/files.json',
    ]);
    const sent = log.requests.filter((r) => r.operation === 'SendMessage');
    expect(sent.map((r) => [r.input.MessageGroupId, String(r.input.MessageDeduplicationId)])).toEqual([
      ['daily-files/2026-12-05', expect.stringMatching(/^daily-files\/2026-12-05:continued-[0-9a-f]{16}$/)],
    ]);
    await clients.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: event.Records[0]?.receiptHandle as string }),
    );

    // The new message: a receive count of 1, the same window; it builds the other hour and the day.
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    const next = (received.Messages ?? []).map((m) => toSqsRecord(m, { queueArn: queue.arn, region: 'us-east-1' }));
    expect(next.map((r) => [r.body, r.attributes.ApproximateReceiveCount, r.messageId === firstId])).toEqual([
      [windowTaskMessage({ stage: 'daily-files', window: '2026-12-05' }).body, '1', false],
    ]);
    expect(await parts({ Records: next }, OFFLINE_CONTEXT)).toEqual({ batchItemFailures: [] });
    expect(JSON.parse(await readText(clients.s3, bucket, 'daily/dt=2026-12-05/files.json'))).toEqual({
      window: '2026-12-05',
      paths: ['year=2026/month=12/day=05/hour=00/a.json', 'year=2026/month=12/day=05/hour=13/b.json'],
    });
    // The same message handled again (a redelivery after a crash past the send) sends a copy SQS drops.
    log.clear();
    await parts(event, runsOut);
    expect(log.requests.filter((r) => r.operation === 'SendMessage')).toHaveLength(0);
  });
});
