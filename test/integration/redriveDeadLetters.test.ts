import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  type ListMessageMoveTasksResultEntry,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { referenceRecheck } from '../../app/redrive/recheckDeadLetter.js';
import { RedriveMethod, redriveDeadLetters } from '../../app/redrive/redriveDeadLetters.js';
import type { FailureRecord } from '../../src/failures/failureRecord.js';
import { testClients, uniqueName } from '../support/aws.js';
import { queueDepth } from '../support/pipeline.js';

/**
 * An SQS client for the StartMessageMoveTask path. moto 5.2.1 answers StartMessageMoveTask and
 * ListMessageMoveTasks with HTTP 500 (not implemented), so this client implements those three
 * operations on top of the emulator, following the SQS API reference: the source must be a DLQ; with
 * no DestinationArn each message returns to the queue it was dead-lettered from (here: the DLQ's
 * only source queue, from ListDeadLetterSourceQueues); one active task per source queue
 * (AlreadyExists otherwise); MaxNumberOfMessagesPerSecond limits the rate; the task reports
 * ApproximateNumberOfMessagesMoved / ToMove and a Status. Every other operation goes to moto as is.
 */
class MoveTaskSqs {
  readonly calls: { name: string; input: Record<string, unknown> }[] = [];
  private readonly tasks: (ListMessageMoveTasksResultEntry & { cancelled?: boolean })[] = [];

  constructor(private readonly real: SQSClient) {}

  async send(command: { constructor: { name: string }; input: Record<string, unknown> }): Promise<unknown> {
    const name = command.constructor.name.replace(/Command$/, '');
    this.calls.push({ name, input: command.input });
    if (name === 'StartMessageMoveTask') return this.start(command.input);
    if (name === 'ListMessageMoveTasks') {
      const results = this.tasks.filter((t) => t.SourceArn === command.input.SourceArn).reverse();
      return { Results: results.map(({ cancelled: _c, ...t }) => ({ ...t })) };
    }
    if (name === 'CancelMessageMoveTask') {
      const task = this.tasks.find((t) => t.TaskHandle === command.input.TaskHandle);
      if (task) task.cancelled = true;
      return { ApproximateNumberOfMessagesMoved: task?.ApproximateNumberOfMessagesMoved ?? 0 };
    }
    return this.real.send(command as never);
  }

  /** Starts a task the way SQS does; `hold` keeps it RUNNING until released (for the "already running" case). */
  async start(input: Record<string, unknown>, hold?: Promise<void>): Promise<{ TaskHandle: string }> {
    const sourceArn = input.SourceArn as string;
    if (this.tasks.some((t) => t.SourceArn === sourceArn && t.Status === 'RUNNING')) {
      throw Object.assign(new Error('a task is already running'), { name: 'AlreadyExists' });
    }
    const dlqUrl = (await this.real.send(new GetQueueUrlCommand({ QueueName: sourceArn.split(':')[5] })))
      .QueueUrl as string;
    const [sourceUrl] =
      (await this.real.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlqUrl }))).queueUrls ?? [];
    const toMove = Number(
      (
        await this.real.send(
          new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
        )
      ).Attributes?.ApproximateNumberOfMessages,
    );
    const task = {
      TaskHandle: randomUUID(),
      SourceArn: sourceArn,
      Status: 'RUNNING',
      ApproximateNumberOfMessagesMoved: 0,
      ApproximateNumberOfMessagesToMove: toMove,
      MaxNumberOfMessagesPerSecond: input.MaxNumberOfMessagesPerSecond as number | undefined,
      StartedTimestamp: Date.now(),
    } as ListMessageMoveTasksResultEntry & { cancelled?: boolean };
    this.tasks.push(task);
    void (async () => {
      await hold;
      const pause = task.MaxNumberOfMessagesPerSecond ? 1000 / task.MaxNumberOfMessagesPerSecond : 0;
      while (!task.cancelled) {
        const out = await this.real.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 1 }));
        const message = out.Messages?.[0];
        if (!message) break;
        await this.real.send(new SendMessageCommand({ QueueUrl: sourceUrl, MessageBody: message.Body }));
        await this.real.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: message.ReceiptHandle }));
        task.ApproximateNumberOfMessagesMoved = (task.ApproximateNumberOfMessagesMoved ?? 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
      task.Status = task.cancelled ? 'CANCELLED' : 'COMPLETED';
    })();
    return { TaskHandle: task.TaskHandle as string };
  }
}

describe('redriveDeadLetters', () => {
  const clients = testClients();

  /** A work queue with a DLQ (maxReceiveCount 1) holding `count` dead letters. */
  async function deadLetters(count: number): Promise<{ queueUrl: string; dlqUrl: string; dlqArn: string }> {
    const name = uniqueName('rd');
    const dlqUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl as string;
    const dlqArn = (
      await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn as string;
    const queueUrl = (
      await clients.sqs.send(
        new CreateQueueCommand({
          QueueName: `${name}-q`,
          Attributes: {
            VisibilityTimeout: '1',
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
          },
        }),
      )
    ).QueueUrl as string;
    for (let i = 0; i < count; i++) {
      await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: `{"n":${i}}` }));
    }
    // One receive each, then the redrive policy moves them on the next receive.
    await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 1 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    expect(await queueDepth(clients, dlqUrl)).toBe(count);
    return { queueUrl, dlqUrl, dlqArn };
  }

  it('uses StartMessageMoveTask where the endpoint supports it: one task on the DLQ, at the rate, no resend by rerun', async () => {
    const { queueUrl, dlqUrl, dlqArn } = await deadLetters(4);
    const sqs = new MoveTaskSqs(clients.sqs);
    const progress: number[] = [];
    const result = await redriveDeadLetters({
      sqs: sqs as unknown as SQSClient,
      dlqUrl,
      ratePerSecond: 50,
      receiveWaitSeconds: 0,
      pollIntervalMs: 50,
      onProgress: (moved) => progress.push(moved),
    });
    expect(result).toMatchObject({ method: RedriveMethod.MOVE_TASK, moved: 4, failed: [], depth: 4 });
    expect(result.inspected).toHaveLength(4);
    const starts = sqs.calls.filter((c) => c.name === 'StartMessageMoveTask');
    expect(starts.map((c) => c.input)).toEqual([{ SourceArn: dlqArn, MaxNumberOfMessagesPerSecond: 50 }]);
    // No DestinationArn: SQS returns messages to their own source queue. rerun sends nothing itself.
    expect(sqs.calls.some((c) => c.name === 'SendMessage' || c.name === 'DeleteMessage')).toBe(false);
    expect(progress.at(-1)).toBe(4);
    expect(await queueDepth(clients, dlqUrl)).toBe(0);
    expect(await queueDepth(clients, queueUrl)).toBe(4);
  });

  it('follows a move task already running on the DLQ instead of starting a second one (one per queue)', async () => {
    const { dlqUrl, dlqArn } = await deadLetters(2);
    const sqs = new MoveTaskSqs(clients.sqs);
    let release = () => {};
    await sqs.start({ SourceArn: dlqArn }, new Promise<void>((resolve) => (release = resolve)));
    const running = redriveDeadLetters({
      sqs: sqs as unknown as SQSClient,
      dlqUrl,
      receiveWaitSeconds: 0,
      pollIntervalMs: 50,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const result = await running;
    expect(result.method).toBe(RedriveMethod.MOVE_TASK);
    expect(result.notes.join()).toMatch(/already running/);
    expect(sqs.calls.filter((c) => c.name === 'StartMessageMoveTask')).toHaveLength(0);
    expect(await queueDepth(clients, dlqUrl)).toBe(0);
  });

  it('with --max below the DLQ size moves exactly the inspected messages one by one, even where move tasks exist', async () => {
    const { queueUrl, dlqUrl } = await deadLetters(5);
    const sqs = new MoveTaskSqs(clients.sqs);
    const result = await redriveDeadLetters({
      sqs: sqs as unknown as SQSClient,
      dlqUrl,
      max: 2,
      receiveWaitSeconds: 0,
    });
    expect(result).toMatchObject({ method: RedriveMethod.RESEND, moved: 2, failed: [] });
    expect(result.notes.join()).toMatch(/--max 2 is below the DLQ's 5 messages/);
    expect(sqs.calls.filter((c) => c.name === 'StartMessageMoveTask')).toHaveLength(0);
    // Each send precedes its delete.
    const order = sqs.calls.filter((c) => c.name === 'SendMessage' || c.name === 'DeleteMessage').map((c) => c.name);
    expect(order).toEqual(['SendMessage', 'DeleteMessage', 'SendMessage', 'DeleteMessage']);
    expect(await queueDepth(clients, queueUrl)).toBe(2);
    expect(await queueDepth(clients, dlqUrl)).toBe(3);
  });

  it('falls back on moto (no move tasks), rate-limited, and a failed send leaves the message in the DLQ', async () => {
    const { queueUrl, dlqUrl } = await deadLetters(3);
    let sends = 0;
    const flaky = {
      send: async (command: { constructor: { name: string } }) => {
        if (command.constructor.name === 'SendMessageCommand' && ++sends === 2) {
          throw Object.assign(new Error('throttled'), { name: 'RequestThrottled', $metadata: { httpStatusCode: 400 } });
        }
        return clients.sqs.send(command as never);
      },
    };
    const started = Date.now();
    const result = await redriveDeadLetters({
      sqs: flaky as unknown as SQSClient,
      dlqUrl,
      sourceQueueUrl: queueUrl,
      ratePerSecond: 10,
      receiveWaitSeconds: 0,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200); // 3 messages at 10/s: 2 intervals of 100 ms
    expect(result.method).toBe(RedriveMethod.RESEND);
    expect(result.notes.join()).toMatch(/message move tasks unavailable here \(SyntaxError \(HTTP 500\)/);
    expect(result.moved).toBe(2);
    expect(result.failed).toEqual([
      { messageId: expect.any(String), error: expect.stringMatching(/^not sent: RequestThrottled/) },
    ]);
    expect(await queueDepth(clients, queueUrl)).toBe(2);
    expect(await queueDepth(clients, dlqUrl)).toBe(1); // released at once, not held until its timeout
  });

  it('a dry run shows the messages and leaves both queues as they were', async () => {
    const { queueUrl, dlqUrl } = await deadLetters(3);
    const result = await redriveDeadLetters({ sqs: clients.sqs, dlqUrl, dryRun: true, receiveWaitSeconds: 0 });
    expect(result).toMatchObject({ dryRun: true, method: RedriveMethod.NONE, moved: 0 });
    expect(result.inspected.map((l) => l.subject).sort()).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    expect(await queueDepth(clients, dlqUrl)).toBe(3);
    expect(await queueDepth(clients, queueUrl)).toBe(0);
    const visible = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(visible.Attributes?.ApproximateNumberOfMessages).toBe('3'); // released, not held
  });

  it('a dry run marks the dead letters that would fail again for the same deterministic reason, and only those', async () => {
    const { dlqUrl } = await deadLetters(2);
    const record = (messageId: string, retryable: boolean): FailureRecord => ({
      schema: 'rerun.failure/1',
      queueName: 'q',
      queueArn: 'arn:aws:sqs:us-east-1:123456789012:q',
      messageId,
      receiveCount: 1,
      givenUp: retryable ? 'last-receive' : 'non-retryable',
      retryable,
      reason: retryable ? 'TimeoutError: took too long' : 'not an S3 event: no Records',
      failedAt: '2026-01-06T01:15:00.000Z',
    });
    let n = 0;
    const result = await redriveDeadLetters({
      sqs: clients.sqs,
      dlqUrl,
      sourceQueueUrl: dlqUrl,
      dryRun: true,
      receiveWaitSeconds: 0,
      // The first record read is non-retryable, the second retryable: only the first is marked.
      failures: { read: async (_queue, id) => record(id, n++ > 0) },
      recheck: referenceRecheck('normalize'),
    });
    const marked = result.inspected.filter((l) => l.wouldFailAgain);
    expect(marked).toHaveLength(1);
    expect(marked[0]?.wouldFailAgain).toMatch(/^would fail again: not an S3 event: /);
    expect(result.inspected.filter((l) => !l.wouldFailAgain)).toHaveLength(1);
  });

  const doomedRecord = (messageId: string, retryable: boolean): FailureRecord => ({
    schema: 'rerun.failure/1',
    queueName: 'q',
    queueArn: 'arn:aws:sqs:us-east-1:123456789012:q',
    messageId,
    receiveCount: 5,
    givenUp: retryable ? 'last-receive' : 'non-retryable',
    retryable,
    reason: retryable ? 'TimeoutError: took too long' : 'not an S3 event: no Records',
    failedAt: '2026-01-06T01:15:00.000Z',
  });

  it('keeps them in the DLQ and moves the others one by one (a move task would take the whole DLQ)', async () => {
    const { queueUrl, dlqUrl } = await deadLetters(3);
    let n = 0;
    const result = await redriveDeadLetters({
      sqs: clients.sqs,
      dlqUrl,
      sourceQueueUrl: queueUrl,
      receiveWaitSeconds: 0,
      // The first record read is non-retryable (marked), the others retryable.
      failures: { read: async (_queue, id) => doomedRecord(id, n++ > 0) },
      recheck: referenceRecheck('normalize'),
    });
    const marked = result.inspected.filter((l) => l.wouldFailAgain).map((l) => l.messageId);
    expect(marked).toHaveLength(1);
    expect(result).toMatchObject({ method: RedriveMethod.RESEND, moved: 2, keptBack: marked, failed: [] });
    expect(result.notes.join('\n')).toMatch(
      /1 message\(s\) marked \[WOULD FAIL AGAIN\] stay in the DLQ \(--include-doomed/,
    );
    expect(await queueDepth(clients, queueUrl)).toBe(2);
    // Released at once, not held for the redrive's hold time.
    expect(await queueDepth(clients, dlqUrl)).toBe(1);
  });

  it('a dry run keeps back exactly what the real run would, and moves nothing', async () => {
    const { queueUrl, dlqUrl } = await deadLetters(3);
    let n = 0;
    const result = await redriveDeadLetters({
      sqs: clients.sqs,
      dlqUrl,
      sourceQueueUrl: queueUrl,
      dryRun: true,
      receiveWaitSeconds: 0,
      failures: { read: async (_queue, id) => doomedRecord(id, n++ > 0) },
      recheck: referenceRecheck('normalize'),
    });
    const marked = result.inspected.filter((l) => l.wouldFailAgain).map((l) => l.messageId);
    expect(marked).toHaveLength(1);
    expect(result).toMatchObject({ dryRun: true, moved: 0, keptBack: marked });
    expect(await queueDepth(clients, queueUrl)).toBe(0);
  });

  it('moves them too with includeDoomed', async () => {
    const { queueUrl, dlqUrl } = await deadLetters(2);
    const result = await redriveDeadLetters({
      sqs: clients.sqs,
      dlqUrl,
      sourceQueueUrl: queueUrl,
      receiveWaitSeconds: 0,
      failures: { read: async (_queue, id) => doomedRecord(id, false) },
      recheck: referenceRecheck('normalize'),
      includeDoomed: true,
    });
    expect(result.inspected.every((l) => l.wouldFailAgain)).toBe(true);
    expect(result).toMatchObject({ moved: 2, keptBack: [] });
    expect(await queueDepth(clients, queueUrl)).toBe(2);
    expect(await queueDepth(clients, dlqUrl)).toBe(0);
  });
});

describe('referenceRecheck', () => {
  const nonRetryable = { retryable: false } as FailureRecord;
  it('marks a non-retryable failure whose body the same classifier still rejects, never a retryable one or a valid body', () => {
    expect(referenceRecheck('normalize')('nope', nonRetryable)).toMatch(/^would fail again: not an S3 event/);
    expect(referenceRecheck('normalize')('nope', { retryable: true } as FailureRecord)).toBeUndefined();
    expect(referenceRecheck('normalize')('nope', undefined)).toBeUndefined();
    expect(referenceRecheck('normalize')('{"Event":"s3:TestEvent"}', nonRetryable)).toBeUndefined();
    expect(referenceRecheck('summarize')('{"type":"other"}', nonRetryable)).toMatch(
      /^would fail again: not a summary task/,
    );
    expect(
      referenceRecheck('summarize')('{"type":"summarize","partition":"dt=2026-01-05"}', nonRetryable),
    ).toBeUndefined();
  });
});
