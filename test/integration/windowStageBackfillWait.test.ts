import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { runWindowStageBackfill } from '../../app/backfill/runWindowStageBackfill.js';
import { ensureQueue } from '../../local/provision.js';
import { toSqsRecord } from '../../local/runner/sqsRecord.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { createWindowTaskHandler } from '../../src/window/createWindowTaskHandler.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { OFFLINE_CONTEXT } from '../support/offlineBatch.js';
import { createBucket } from '../support/s3.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;
const DAILY = { kind: 'time', grain: 'daily', template: 'year={yyyy}/month={MM}/day={dd}' } as const;
/** Days backfilled: enough that relisting every day on every check shows. */
const DAYS = 20;

/** A user's daily window stage over hourly inputs, DAYS days of one input each, and its FIFO queue. */
async function setUp(log: RequestLog) {
  const clients = testClients();
  const logged = testClients(log);
  const inputBucket = await createBucket(clients.s3, uniqueName('wait-in'));
  const outputBucket = await createBucket(clients.s3, uniqueName('wait-out'));
  const queue = await ensureQueue(clients, `${uniqueName('wait-daily')}.fifo`, { FifoQueue: 'true' });
  const task = defineWindowTask({
    name: 'daily',
    codeVersion: 'daily@1',
    partitions: DAILY,
    inputs: [{ name: 'hourly', bucket: inputBucket, prefix: 'hourly/', partitions: HOURLY }],
    output: { bucket: outputBucket, prefix: 'daily/', fileName: 'total.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      let files = 0;
      for await (const input of inputs) {
        for await (const _ of input.body) {
        }
        files++;
      }
      writer.write(`${JSON.stringify({ day: context.window.name, files })}\n`);
      return { files };
    },
  });
  const windows = task.scheme.windowsBetween('2026-12-01', `2026-12-${String(DAYS).padStart(2, '0')}`);
  const inputOf = (window: string) => {
    const [, mm, dd] = window.split('-');
    return `hourly/year=2026/month=${mm}/day=${dd}/hour=07/a.json`;
  };
  const writeInput = (window: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: inputOf(window), Body: body }));
  for (const w of windows) await writeInput(w.name, `{"day":"${w.name}"}\n`);
  const handler = createWindowTaskHandler({ task, clients });

  /**
   * The deployed function's part, beside a backfill: one message received each time a permit is
   * given, and handed to `work` (by default the user's handler) before it is deleted.
   */
  function drainer(work?: (record: ReturnType<typeof toSqsRecord>) => Promise<void>) {
    const state = { permits: 0, finished: false };
    const done = (async () => {
      while (!state.finished) {
        if (state.permits === 0) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        const received = await clients.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queue.url,
            MaxNumberOfMessages: 1,
            MessageSystemAttributeNames: ['All'],
          }),
        );
        const message = received.Messages?.[0];
        if (!message) continue;
        state.permits--;
        const record = toSqsRecord(message, { queueArn: queue.arn, region: 'us-east-1' });
        if (work) await work(record);
        else expect((await handler({ Records: [record] }, OFFLINE_CONTEXT))?.batchItemFailures ?? []).toEqual([]);
        await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }));
      }
    })();
    return { state, done };
  }

  /** A backfill --wait of the given windows while `drain` works the queue, one message per check. */
  async function backfillWaiting(selected: typeof windows, drain: ReturnType<typeof drainer>) {
    const result = await runWindowStageBackfill({
      reader: new S3PartitionStore(logged.s3),
      sqs: logged.sqs,
      stages: [{ task, queueUrl: queue.url }],
      windows: selected,
      token: uniqueName('wait-test'),
      wait: true,
      pollIntervalMs: 50,
      timeoutMs: 120_000,
      events: (event) => {
        // Count from the last send on: the requests of the wait alone.
        if (event.kind === 'enqueued' && event.sent === event.total) log.clear();
        if (event.kind === 'waiting') drain.state.permits = 1;
      },
    }).finally(() => {
      drain.state.finished = true;
    });
    await drain.done;
    return result;
  }
  return { windows, writeInput, drainer, backfillWaiting };
}

describe("backfill --wait of a user's window stage (moto)", () => {
  it('lists each check once for the windows not yet published, and judges a window again only when its folder changed', async () => {
    const log = new RequestLog();
    const { windows, drainer, backfillWaiting } = await setUp(log);
    const result = await backfillWaiting(windows, drainer());

    const wait = result.stages[0]?.wait;
    expect(wait).toMatchObject({ ended: 'complete', published: DAYS, total: DAYS, remaining: [] });
    const polls = wait?.polls ?? 0;
    expect(polls).toBeGreaterThan(DAYS);
    const listings = log.count({ service: 'S3', operation: 'ListObjectsV2' });
    // What the wait reports is what it sent.
    expect(wait?.requests.list).toBe(listings);
    // One listing of the remaining windows' folders per check, plus each day's own listings (its hour
    // inputs and its folder) at the first check and when its folder changes (output, then marker).
    // Relisting every day on every check would cost 2 x DAYS x polls.
    expect(listings).toBeLessThanOrEqual(polls + 3 * 2 * DAYS);
    console.info(`[figures] backfill --wait of ${DAYS} days: ${polls} checks, ${listings} ListObjectsV2`);
  });

  it('judges every remaining window once the queue is seen empty: a day whose input changed back is published with no write to its folder', async () => {
    const log = new RequestLog();
    const { windows, writeInput, drainer, backfillWaiting } = await setUp(log);
    const first = windows.slice(0, 1);
    const day = first[0]?.name as string;
    expect((await backfillWaiting(first, drainer())).stages[0]?.wait?.ended).toBe('complete');
    // The day's input rewritten: the day is stale and planned. Its task finds the input written back
    // as it was (same bytes, same ETag) and has nothing to publish; the day is published again.
    await writeInput(day, '{"changed":true}\n');
    const result = await backfillWaiting(
      first,
      drainer(async () => {
        await writeInput(day, `{"day":"${day}"}\n`);
      }),
    );
    expect(result.stages[0]?.tasks.map((t) => [t.window, t.status])).toEqual([[day, 'stale']]);
    expect(result.stages[0]?.wait).toMatchObject({ ended: 'complete', published: 1, total: 1, remaining: [] });
  });
});
