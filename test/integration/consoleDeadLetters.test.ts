import { ChangeMessageVisibilityCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleApi } from '../../app/ui/consoleApi.js';
import type { DeadLetterView } from '../../app/ui/consoleDeadLetters.js';
import { type ConsoleServer, startConsoleServer } from '../../app/ui/consoleServer.js';
import { type ConsoleSource, resolveConsoleSource } from '../../app/ui/consoleSource.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { awsEndpoint, testClients } from '../support/aws.js';
import { queueDepth, upload } from '../support/pipeline.js';
import {
  normalizeStageRunner,
  ordersCsv,
  provisionTwoStagePipeline,
  type TwoStagePipeline,
} from '../support/summaryPipeline.js';

const DAY = '2026-04-08';

/** Every SQS command the console's client sent (recorded after its read-only guard). */
function recordSqsCommands(source: ConsoleSource, sent: string[]): void {
  (
    source.target.clients.sqs as unknown as { middlewareStack: { add(mw: unknown, o: Record<string, unknown>): void } }
  ).middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      sent.push(context.commandName ?? '?');
      return next(args);
    },
    { step: 'finalizeRequest', name: 'testSqsRecorder' },
  );
}

describe('rerun ui: the Dead letters view', () => {
  const clients = testClients();
  let p: TwoStagePipeline;
  let source: ConsoleSource;
  let server: ConsoleServer;
  const sent: string[] = [];

  /**
   * Each DLQ message's ApproximateReceiveCount, read by one receive of the test's own (which counts
   * itself), then made visible again at once.
   */
  const receiveCounts = async (): Promise<Record<string, number>> => {
    const counts: Record<string, number> = {};
    for (let tries = 0; tries < 5 && Object.keys(counts).length < 2; tries++) {
      const out = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: p.stack.dlqUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 30,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      for (const m of out.Messages ?? []) {
        counts[m.MessageId as string] = Number(m.Attributes?.ApproximateReceiveCount);
        await clients.sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: p.stack.dlqUrl,
            ReceiptHandle: m.ReceiptHandle as string,
            VisibilityTimeout: 0,
          }),
        );
      }
    }
    return counts;
  };
  const view = async (queue: string): Promise<DeadLetterView> => {
    const response = await fetch(`http://127.0.0.1:${server.port}/api/dead-letters?queue=${queue}`, {
      headers: { 'X-Rerun-Token': server.token },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as DeadLetterView;
  };

  beforeAll(async () => {
    p = await provisionTwoStagePipeline(clients);
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/good.csv`, ordersCsv('g', 2));
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/poison.csv`, ordersCsv('p', 1));
    // No S3 event: rejected for good (non-retryable) on every receive, recorded with no object.
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: p.stack.queueUrl, MessageBody: 'not an S3 event' }));
    const real = createNormalizeWorker({ outputBucket: p.stack.outputBucket, prefixes: p.t });
    const buggy = defineWorker({
      ...real,
      async transform(input, out) {
        if (input.source.key.includes('poison')) throw new Error('cannot parse amount "1.000,50" (bug #42)');
        return real.transform(input, out);
      },
    });
    await normalizeStageRunner(clients, p, buggy).runUntilDrained({ timeoutMs: 60_000 });
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(2);
    source = await resolveConsoleSource({ 'app-name': p.appName }, { AWS_ENDPOINT_URL: awsEndpoint() });
    recordSqsCommands(source, sent);
    server = await startConsoleServer({ api: new ConsoleApi(source) });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it("leaves every DLQ message's receive count as it was, and shows each with its failure record's reason", async () => {
    const before = await receiveCounts();
    expect(Object.keys(before)).toHaveLength(2);

    // The view opened three times (a person switching tabs), and the other worker's too.
    let letters = await view('normalize');
    await view('normalize');
    await view('summarize');
    letters = await view('normalize');

    // Only this test's receive has counted since (one each), none of the console's.
    const after = await receiveCounts();
    expect(after).toEqual(Object.fromEntries(Object.entries(before).map(([id, n]) => [id, n + 1])));
    expect(sent.filter((c) => c !== 'GetQueueAttributesCommand' && c !== 'GetQueueUrlCommand')).toEqual([]);

    expect(letters).toMatchObject({
      depth: 2,
      inFlight: 0,
      more: false,
      recordsAt: `s3://${p.stack.outputBucket}/failures/${p.stack.queueUrl.slice(p.stack.queueUrl.lastIndexOf('/') + 1)}/`,
      command: `rerun redrive --queue normalize --app-name ${p.appName}`,
      notes: [],
    });
    const byId = Object.fromEntries(letters.letters.map((l) => [l.messageId, l]));
    expect(Object.keys(byId).sort()).toEqual(Object.keys(before).sort());
    const poison = letters.letters.find((l) => l.subject.endsWith('/poison.csv'));
    expect(poison).toMatchObject({
      subject: `s3://${p.stack.inputBucket}/incoming/dt=${DAY}/poison.csv`,
      reason: 'Error: cannot parse amount "1.000,50" (bug #42)',
      retryable: true,
      givenUp: 'last-receive',
    });
    const invalid = letters.letters.find((l) => l !== poison);
    expect(invalid).toMatchObject({ retryable: false, givenUp: 'non-retryable' });
    expect(invalid?.subject).toBe(`message ${invalid?.messageId}`);
    expect(invalid?.reason).toMatch(/S3 event/);
  });

  it('says how many DLQ messages have no failure record to show', async () => {
    // A message dead-lettered without a record (as after a function timeout): counted, not listed.
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: p.stack.dlqUrl, MessageBody: 'timed out' }));
    const letters = await view('normalize');
    expect(letters.depth).toBe(3);
    expect(letters.letters).toHaveLength(2);
    expect(letters.notes).toEqual([
      expect.stringMatching(/^The DLQ holds 3 message\(s\) and 2 have a failure record: the others ended without one/),
    ]);
  });
});
