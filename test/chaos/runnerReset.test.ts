import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { type RunnerEvent, RunnerSupervisor } from './support/RunnerSupervisor.js';

const LATE_WRITER = fileURLToPath(new URL('./fixtures/lateWriter.ts', import.meta.url));

describe('the chaos runner process on an invocation timeout', () => {
  it('ends with the timed-out invocation, as Lambda resets its environment: the handler writes nothing after its timeout', async () => {
    const { sqs } = testClients();
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('reset') }))).QueueUrl as string;
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'late' }));
    const late = join(mkdtempSync(join(tmpdir(), 'rerun-reset-')), 'late-write');
    const events: RunnerEvent[] = [];
    const runner = new RunnerSupervisor({
      restart: false,
      onEvent: (event) => events.push(event),
      env: {
        AWS_ENDPOINT_URL: awsEndpoint(),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        RUNNER_QUEUE_URL: queueUrl,
        RUNNER_HANDLER: LATE_WRITER,
        RUNNER_FUNCTION_TIMEOUT: '1',
        RUNNER_RESET_ON_TIMEOUT: '1',
        // The handler would write 1.5 s after its 1 s timeout.
        LATE_WRITE_AFTER_MS: '2500',
        LATE_WRITE_FILE: late,
      },
    });
    runner.start();
    try {
      const exited = await Promise.race([runner.waitForExit().then(() => true), sleep(15_000).then(() => false)]);
      // Past the moment the handler would have written, had it run on.
      await sleep(2500);
      expect(events.filter((e) => e.event === 'invocation').map((e) => e.outcome)).toEqual(['timeout']);
      expect(exited).toBe(true);
      expect(existsSync(late)).toBe(false);
      expect(runner.totals.diedWhileHeld).toEqual({ [sent.MessageId as string]: 1 });
    } finally {
      await runner.stop();
    }
  });
});
