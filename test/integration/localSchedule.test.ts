import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { startLocalSchedule } from '../../app/partition/localSchedule.js';
import { parseSummaryTask } from '../../app/partition/summaryTask.js';
import { testClients, uniqueName } from '../support/aws.js';

describe('the local daily schedule of rerun dev', () => {
  it('sends the same message as the stack rule at the scheduled time, to the FIFO summary queue', async () => {
    const clients = testClients();
    const queueUrl = (
      await clients.sqs.send(
        new CreateQueueCommand({
          QueueName: `${uniqueName('sched')}.fifo`,
          Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
        }),
      )
    ).QueueUrl as string;
    // A clock 150 ms before 01:15 UTC, advancing in real time.
    const offset = Date.parse('2026-01-06T01:14:59.850Z') - Date.now();
    const fired: number[] = [];
    const stop = startLocalSchedule({
      sqs: clients.sqs,
      queueUrl,
      time: { hourUtc: 1, minuteUtc: 15 },
      now: () => Date.now() + offset,
      onFire: (at) => fired.push(at),
    });
    try {
      const deadline = Date.now() + 5000;
      while (fired.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } finally {
      stop();
    }
    expect(fired).toEqual([Date.parse('2026-01-06T01:15:00Z')]);
    const out = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    expect(out.Messages).toHaveLength(1);
    const [message] = out.Messages ?? [];
    // Fired on Tuesday 2026-01-06: that weekday's group, as the stack's Tuesday rule sends it.
    expect(message?.Attributes?.MessageGroupId).toBe('schedule-TUE');
    expect(parseSummaryTask(message?.Body ?? '')).toMatchObject({ kind: 'task', day: '2026-01-05' });
  });
});
