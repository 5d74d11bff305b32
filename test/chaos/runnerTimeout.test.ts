import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { type RunnerEvent, RunnerSupervisor } from './support/RunnerSupervisor.js';

const LATE_WRITER = fileURLToPath(new URL('./fixtures/lateWriter.ts', import.meta.url));

describe('the chaos runner process on an invocation timeout', () => {
  it('cuts the timed-out handler off, as Lambda resets its environment: no request after its timeout, and the process runs on', async () => {
    const reached: string[] = [];
    const server = createServer((request, response) => {
      reached.push(String(request.url));
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { sqs } = testClients();
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('cutoff') }))).QueueUrl as string;
    const late = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'late' }));
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
        RUNNER_CUT_OFF_TIMEOUTS: '1',
        // The handler calls the server 1.5 s after its 1 s timeout.
        LATE_AFTER_MS: '2500',
        LATE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      },
    });
    runner.start();
    try {
      const outcomes = () => events.filter((e) => e.event === 'invocation').map((e) => e.outcome);
      for (let waited = 0; outcomes().length === 0 && waited < 20_000; waited += 100) await sleep(100);
      // Past the moment the handler calls the server, had it not been cut off.
      await sleep(3000);
      expect(outcomes()).toEqual(['timeout']);
      expect(reached).toEqual([]);
      expect(runner.totals.diedWhileHeld).toEqual({ [late.MessageId as string]: 1 });
      // The process was not reset: it still runs the next batch.
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'quick' }));
      for (let waited = 0; outcomes().length < 2 && waited < 20_000; waited += 100) await sleep(100);
      expect(outcomes()).toEqual(['timeout', 'success']);
    } finally {
      await runner.stop();
      server.close();
    }
  });
});
