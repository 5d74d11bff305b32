import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { interpretBatchResponse } from '../../local/runner/batchResponse.js';
import {
  HandlerExportMissingError,
  HandlerModuleLoadError,
  RunnerConfigurationError,
  RunnerDrainTimeoutError,
} from '../../local/runner/errors.js';
import type { InvocationReport } from '../../local/runner/invocationReport.js';
import { LocalRunner } from '../../local/runner/LocalRunner.js';
import { loadHandler } from '../../local/runner/loadHandler.js';
import type { LocalRunnerOptions } from '../../local/runner/localRunnerOptions.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';

const { sqs } = testClients();

interface TestQueue {
  queueUrl: string;
  queueArn: string;
  dlqUrl?: string;
}

/** A fresh queue with a short visibility timeout (and a DLQ when maxReceiveCount is given). */
async function makeQueue(options: {
  visibility: number;
  maxReceiveCount?: number;
  fifo?: boolean;
}): Promise<TestQueue> {
  const name = uniqueName('runner');
  let dlqUrl: string | undefined;
  const attributes: Record<string, string> = { VisibilityTimeout: String(options.visibility) };
  if (options.maxReceiveCount !== undefined) {
    dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl as string;
    const dlqArn = await arnOf(dlqUrl);
    attributes.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: options.maxReceiveCount,
    });
  }
  if (options.fifo) attributes.FifoQueue = 'true';
  const queueUrl = (
    await sqs.send(new CreateQueueCommand({ QueueName: options.fifo ? `${name}.fifo` : name, Attributes: attributes }))
  ).QueueUrl as string;
  return { queueUrl, queueArn: await arnOf(queueUrl), ...(dlqUrl ? { dlqUrl } : {}) };
}

async function arnOf(queueUrl: string): Promise<string> {
  const r = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  return r.Attributes?.QueueArn as string;
}

/** Sends bodies in order; returns their message ids. */
async function send(queueUrl: string, bodies: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < bodies.length; i += 10) {
    const entries = bodies.slice(i, i + 10).map((body, j) => ({ Id: `e${j}`, MessageBody: body }));
    const r = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    const byId = new Map((r.Successful ?? []).map((s) => [s.Id, s.MessageId as string]));
    for (const e of entries) ids.push(byId.get(e.Id) as string);
  }
  return ids;
}

async function counts(queueUrl: string, client: SQSClient = sqs) {
  const r = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(r.Attributes?.ApproximateNumberOfMessages),
    notVisible: Number(r.Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
}

/** Collects invocation reports; `waitFor(n)` resolves once n invocations have settled. */
function reports() {
  const all: InvocationReport[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  return {
    all,
    onInvocation(report: InvocationReport) {
      all.push(report);
      for (const w of waiters) if (all.length >= w.n) w.resolve();
    },
    waitFor(n: number, timeoutMs = 15_000): Promise<void> {
      if (all.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${all.length} of ${n} invocations`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}

function runnerOptions(queueUrl: string, overrides: Partial<LocalRunnerOptions>): LocalRunnerOptions {
  return {
    sqs,
    queueUrl,
    handler: async () => {},
    timeoutSeconds: 1,
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 2,
    ...overrides,
  };
}

/** Runs one invocation over `bodies` with `handler`, stops, and returns its report. */
async function invokeOnce(
  handler: LocalRunnerOptions['handler'],
  bodies = ['a', 'b'],
): Promise<{ report: InvocationReport; ids: string[]; queue: TestQueue }> {
  const queue = await makeQueue({ visibility: 30 });
  const ids = await send(queue.queueUrl, bodies);
  const r = reports();
  const runner = new LocalRunner(
    // One slot, no window: moto returns both messages to the first receive, so this is one invocation.
    runnerOptions(queue.queueUrl, { handler, onInvocation: r.onInvocation, maxConcurrency: 1 }),
  );
  runner.start();
  await r.waitFor(1);
  await runner.stop();
  return { report: r.all[0] as InvocationReport, ids, queue };
}

describe('LocalRunner: the SQS event Lambda builds', () => {
  it('passes records with the fields, attribute shapes and digests of a Lambda SQS event', async () => {
    const queue = await makeQueue({ visibility: 30 });
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageBody: '{"hello":"world"}',
        MessageAttributes: {
          team: { DataType: 'String', StringValue: 'data' },
          size: { DataType: 'Number', StringValue: '42' },
          blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3, 250]) },
        },
      }),
    );
    const events: SQSEvent[] = [];
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        handler: async (event) => {
          events.push(structuredClone(event));
        },
        onInvocation: r.onInvocation,
      }),
    );
    runner.start();
    await r.waitFor(1);
    await runner.stop();

    const record = events[0]?.Records[0];
    expect(events[0]?.Records).toHaveLength(1);
    // Key order as in Lambda's events.
    expect(Object.keys(record ?? {})).toEqual([
      'messageId',
      'receiptHandle',
      'body',
      'attributes',
      'messageAttributes',
      'md5OfBody',
      'md5OfMessageAttributes',
      'eventSource',
      'eventSourceARN',
      'awsRegion',
    ]);
    expect(record?.messageId).toBe(sent.MessageId);
    expect(record?.receiptHandle).toEqual(expect.any(String));
    expect(record?.body).toBe('{"hello":"world"}');
    expect(record?.md5OfBody).toBe(createHash('md5').update('{"hello":"world"}').digest('hex'));
    expect(record?.md5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(record?.eventSource).toBe('aws:sqs');
    expect(record?.eventSourceARN).toBe(queue.queueArn);
    expect(record?.awsRegion).toBe('us-east-1');
    expect(Object.keys(record?.attributes ?? {}).slice(0, 4)).toEqual([
      'ApproximateReceiveCount',
      'SentTimestamp',
      'SenderId',
      'ApproximateFirstReceiveTimestamp',
    ]);
    expect(record?.attributes.ApproximateReceiveCount).toBe('1');
    expect(record?.attributes.SentTimestamp).toMatch(/^\d{13}$/);
    expect(record?.attributes.ApproximateFirstReceiveTimestamp).toMatch(/^\d{13}$/);
    expect(record?.attributes.SenderId).toEqual(expect.any(String));
    expect(record?.messageAttributes).toEqual({
      team: { stringValue: 'data', stringListValues: [], binaryListValues: [], dataType: 'String' },
      size: { stringValue: '42', stringListValues: [], binaryListValues: [], dataType: 'Number' },
      blob: {
        binaryValue: Buffer.from([1, 2, 3, 250]).toString('base64'),
        stringListValues: [],
        binaryListValues: [],
        dataType: 'Binary',
      },
    });
    expect(r.all[0]?.outcome).toBe('success');
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 0 });
  });

  it('adds the FIFO system attributes (MessageGroupId, MessageDeduplicationId, SequenceNumber) when present', async () => {
    const queue = await makeQueue({ visibility: 30, fifo: true });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageBody: 'fifo',
        MessageGroupId: 'group-1',
        MessageDeduplicationId: 'dedupe-1',
      }),
    );
    const events: SQSEvent[] = [];
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, { handler: async (e) => void events.push(e), onInvocation: r.onInvocation }),
    );
    runner.start();
    await r.waitFor(1);
    await runner.stop();
    const attributes = events[0]?.Records[0]?.attributes;
    expect(attributes?.MessageGroupId).toBe('group-1');
    expect(attributes?.MessageDeduplicationId).toBe('dedupe-1');
    expect(attributes?.SequenceNumber).toMatch(/^\d+$/);
  });

  it('gives a Lambda context whose remaining time counts down from the function timeout on the injected clock', async () => {
    const queue = await makeQueue({ visibility: 30 });
    await send(queue.queueUrl, ['one']);
    await send(queue.queueUrl, ['two']);
    let clock = 1_000_000;
    const contexts: Context[] = [];
    const remaining: number[] = [];
    const deprecated: string[] = [];
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        functionName: 'normalize-local',
        timeoutSeconds: 3,
        batchSize: 1,
        maxConcurrency: 1,
        memoryLimitInMB: 512,
        now: () => clock,
        handler: async (_event, context) => {
          contexts.push(context);
          remaining.push(context.getRemainingTimeInMillis());
          clock += 1200;
          remaining.push(context.getRemainingTimeInMillis());
          clock += 5000;
          remaining.push(context.getRemainingTimeInMillis());
          for (const call of [() => context.done(), () => context.fail('x'), () => context.succeed('x')]) {
            try {
              call();
            } catch (error) {
              deprecated.push((error as Error).message);
            }
          }
        },
        onInvocation: r.onInvocation,
      }),
    );
    runner.start();
    await r.waitFor(2);
    await runner.stop();

    expect(remaining.slice(0, 3)).toEqual([3000, 1800, 0]);
    const [first, second] = contexts;
    expect(first).toMatchObject({
      functionName: 'normalize-local',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:normalize-local',
      memoryLimitInMB: '512',
      logGroupName: '/aws/lambda/normalize-local',
      callbackWaitsForEmptyEventLoop: true,
    });
    expect(first?.logStreamName).toMatch(/^\d{4}\/\d{2}\/\d{2}\/\[\$LATEST\][0-9a-f]{32}$/);
    expect(first?.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second?.awsRequestId).not.toBe(first?.awsRequestId);
    expect(r.all.map((x) => x.requestId)).toEqual(contexts.map((c) => c.awsRequestId));
    // The same slot (one execution environment) keeps its log stream, as a warm Lambda does.
    expect(second?.logStreamName).toBe(first?.logStreamName);
    expect(deprecated).toHaveLength(6);
    expect(deprecated[0]).toMatch(/not supported/);
    expect(r.all[0]?.durationMs).toBe(6200);
  });
});

describe('LocalRunner: partial batch responses (ReportBatchItemFailures)', () => {
  it('deletes only the records not listed, and leaves the listed ones invisible until the visibility timeout', async () => {
    const queue = await makeQueue({ visibility: 3 });
    const ids = await send(queue.queueUrl, ['ok-1', 'bad-1', 'ok-2', 'bad-2', 'ok-3']);
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        maxConcurrency: 1,
        handler: async (event) => ({
          batchItemFailures: event.Records.filter((x) => x.body.startsWith('bad')).map((x) => ({
            itemIdentifier: x.messageId,
          })),
        }),
        onInvocation: r.onInvocation,
      }),
    );
    runner.start();
    await r.waitFor(1);
    const invokedAt = Date.now();
    // Not deleted and not made visible early: they wait out the visibility timeout.
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 2 });
    await runner.stop();

    const report = r.all[0] as InvocationReport;
    expect(report.outcome).toBe('partial');
    expect([...report.messageIds].sort()).toEqual([...ids].sort());
    expect([...report.deleted].sort()).toEqual([ids[0], ids[2], ids[4]].sort());
    expect([...report.retained].sort()).toEqual([ids[1], ids[3]].sort());
    await sleep(Math.max(0, invokedAt + 3200 - Date.now()));
    const again = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    expect((again.Messages ?? []).map((m) => m.Body).sort()).toEqual(['bad-1', 'bad-2']);
    expect((again.Messages ?? []).map((m) => m.Attributes?.ApproximateReceiveCount)).toEqual(['2', '2']);
  });

  // Each form runs on its own queue, concurrently (a stop waits out one long poll).
  it.concurrent.for<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['an empty object', {}],
    ['an empty batchItemFailures list', { batchItemFailures: [] }],
    ['a null batchItemFailures list', { batchItemFailures: null }],
  ])('treats %s as complete success and deletes every message', async ([, response], { expect }) => {
    const { report, ids, queue } = await invokeOnce(async () => response as never);
    expect(report.outcome).toBe('success');
    expect([...report.deleted].sort()).toEqual([...ids].sort());
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 0 });
  });

  const circular: Record<string, unknown> = { batchItemFailures: [] };
  circular.self = circular;
  it.concurrent.for<[string, (id: string) => unknown]>([
    ['batchItemFailures is not an array', () => ({ batchItemFailures: 'b' })],
    ['an itemIdentifier is an empty string', () => ({ batchItemFailures: [{ itemIdentifier: '' }] })],
    ['an itemIdentifier is null', () => ({ batchItemFailures: [{ itemIdentifier: null }] })],
    ['an itemIdentifier is not a string', () => ({ batchItemFailures: [{ itemIdentifier: 42 }] })],
    ['an itemIdentifier is unknown', () => ({ batchItemFailures: [{ itemIdentifier: 'not-in-batch' }] })],
    ['an entry has a wrong key name', (id: string) => ({ batchItemFailures: [{ itemId: id }] })],
    ['an entry is not an object', () => ({ batchItemFailures: ['x'] })],
    ['the response is a string', () => 'ok'],
    ['the response cannot be serialised to JSON', () => circular],
  ])('fails the whole batch (deletes nothing) when %s', async ([, respond], { expect }) => {
    const { report, ids, queue } = await invokeOnce(
      async (event) => respond(event.Records[0]?.messageId ?? '') as never,
    );
    expect(report.outcome).toBe('invalid-response');
    expect(report.deleted).toEqual([]);
    expect([...report.retained].sort()).toEqual([...ids].sort());
    expect(report.error).toEqual(expect.any(String));
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 2 });
  });

  it('fails the whole batch when the handler throws synchronously or its promise rejects', async () => {
    const thrown = await invokeOnce((() => {
      throw new TypeError('boom');
    }) as never);
    const rejected = await invokeOnce(async () => {
      throw new Error('async boom');
    });
    for (const { report, queue } of [thrown, rejected]) {
      expect(report.outcome).toBe('error');
      expect(report.deleted).toEqual([]);
      expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 2 });
    }
    expect(thrown.report.error).toBe('TypeError: boom');
    expect(rejected.report.error).toBe('Error: async boom');
  });

  it('reports the messages whose delete SQS refused, and leaves them in the queue', async () => {
    // Corrupt one receipt handle on its way to SQS: moto then answers a real per-entry failure.
    const client = testClients().sqs;
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Entries?: { ReceiptHandle?: string }[] };
        const first = input.Entries?.[0];
        if (first) first.ReceiptHandle = 'not-a-receipt-handle';
        return next(args);
      },
      { step: 'initialize', name: 'corruptFirstDelete' },
    );
    const queue = await makeQueue({ visibility: 30 });
    await send(queue.queueUrl, ['a', 'b', 'c']);
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, { sqs: client, maxBatchingWindowSeconds: 1, onInvocation: r.onInvocation }),
    );
    runner.start();
    await r.waitFor(1);
    await runner.stop();
    const report = r.all[0] as InvocationReport;
    expect(report.outcome).toBe('success');
    expect(report.deleted).toHaveLength(2);
    expect(report.deleteFailures).toEqual([
      { messageId: report.messageIds[0], code: 'ReceiptHandleIsInvalid', message: expect.any(String) },
    ]);
    expect(report.retained).toEqual([report.messageIds[0]]);
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 1 });
  });
});

describe('LocalRunner: timeouts, batching and concurrency', () => {
  it('on a function timeout deletes nothing, ignores the late result, and the batch returns after the visibility timeout', async () => {
    const queue = await makeQueue({ visibility: 3 });
    const [id] = await send(queue.queueUrl, ['slow']);
    const receiveCounts: string[] = [];
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        timeoutSeconds: 1,
        handler: async (event) => {
          receiveCounts.push(event.Records[0]?.attributes.ApproximateReceiveCount ?? '');
          // First delivery: finish after the timeout with a "success" that must not delete anything.
          if (receiveCounts.length === 1) await sleep(1500);
        },
        onInvocation: r.onInvocation,
      }),
    );
    runner.start();
    await r.waitFor(1);
    expect(r.all[0]).toMatchObject({ outcome: 'timeout', deleted: [], retained: [id] });
    expect(r.all[0]?.error).toMatch(/timed out after 1\.00 seconds/);
    await sleep(700); // the late result arrives here and is ignored
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 1 });
    await r.waitFor(2);
    await runner.stop();
    expect(receiveCounts).toEqual(['1', '2']);
    expect(r.all[1]).toMatchObject({ outcome: 'success', deleted: [id] });
  });

  it('never puts more than batchSize records in one invocation', async () => {
    const queue = await makeQueue({ visibility: 30 });
    await send(queue.queueUrl, ['1', '2', '3', '4', '5', '6', '7']);
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        batchSize: 3,
        maxBatchingWindowSeconds: 1,
        maxConcurrency: 1,
        onInvocation: r.onInvocation,
      }),
    );
    await runner.runUntilDrained({ timeoutMs: 20_000 });
    const sizes = r.all.map((x) => x.messageIds.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(7);
    expect(Math.max(...sizes)).toBe(3);
    expect(sizes.filter((n) => n === 3).length).toBeGreaterThanOrEqual(2);
  });

  it('gathers a batch over several ReceiveMessage calls within the batching window (batch size above 10)', async () => {
    const log = new RequestLog();
    const client = testClients(log).sqs;
    const queue = await makeQueue({ visibility: 30 });
    await send(
      queue.queueUrl,
      Array.from({ length: 25 }, (_, i) => `m${i}`),
    );
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        sqs: client,
        batchSize: 25,
        maxBatchingWindowSeconds: 2,
        maxConcurrency: 1,
        onInvocation: r.onInvocation,
      }),
    );
    runner.start();
    await r.waitFor(1);
    await runner.stop();
    expect(r.all[0]?.messageIds).toHaveLength(25);
    expect(new Set(r.all[0]?.messageIds).size).toBe(25);
    const receives = log.requests.filter((q) => q.operation === 'ReceiveMessage');
    expect(receives.length).toBeGreaterThanOrEqual(3);
    // SQS returns at most 10 per call: the runner asks for no more.
    expect(receives.every((q) => Number(q.input.MaxNumberOfMessages) <= 10)).toBe(true);
    expect(receives[0]?.input).toMatchObject({ MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] });
  });

  it('invokes with a partial batch once the batching window has passed', async () => {
    const queue = await makeQueue({ visibility: 30 });
    await send(
      queue.queueUrl,
      Array.from({ length: 12 }, (_, i) => `m${i}`),
    );
    const r = reports();
    const invokedAt: number[] = [];
    const started = Date.now();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        batchSize: 100,
        maxBatchingWindowSeconds: 1,
        maxConcurrency: 1,
        handler: async () => void invokedAt.push(Date.now() - started),
        onInvocation: r.onInvocation,
      }),
    );
    runner.start();
    await r.waitFor(1);
    await runner.stop();
    expect(r.all[0]?.messageIds).toHaveLength(12);
    expect(invokedAt[0]).toBeGreaterThanOrEqual(1000);
    expect(invokedAt[0]).toBeLessThan(4000);
  });

  it('runs at most maxConcurrency invocations at once (and does use them all)', async () => {
    const queue = await makeQueue({ visibility: 30 });
    await send(
      queue.queueUrl,
      Array.from({ length: 12 }, (_, i) => `m${i}`),
    );
    let running = 0;
    let maxRunning = 0;
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        batchSize: 1,
        maxConcurrency: 3,
        handler: async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await sleep(300);
          running--;
        },
      }),
    );
    await runner.runUntilDrained({ timeoutMs: 20_000, checkIntervalMs: 100 });
    expect(maxRunning).toBe(3);
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 0 });
  });

  it('receives only when a slot is free: waiting messages stay visible while every slot is busy', async () => {
    const queue = await makeQueue({ visibility: 30 });
    await send(queue.queueUrl, ['first', 'second', 'third']);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started: string[] = [];
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        batchSize: 1,
        maxConcurrency: 1,
        timeoutSeconds: 10,
        handler: async (event) => {
          started.push(event.Records[0]?.body ?? '');
          await gate;
        },
      }),
    );
    runner.start();
    while (started.length === 0) await sleep(50);
    await sleep(1500); // longer than a long poll: a greedy poller would have taken more by now
    expect(await counts(queue.queueUrl)).toEqual({ visible: 2, notVisible: 1 });
    expect(runner.inFlight).toBe(1);
    release();
    await runner.runUntilDrained({ timeoutMs: 10_000 });
    expect(started).toHaveLength(3);
  });

  it('lets the queue redrive policy move a poison message to the DLQ after maxReceiveCount receives', async () => {
    const queue = await makeQueue({ visibility: 1, maxReceiveCount: 2 });
    const [poisonId] = await send(queue.queueUrl, ['poison']);
    await send(queue.queueUrl, ['fine']);
    const seen: string[] = [];
    const r = reports();
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        batchSize: 1,
        handler: async (event) => {
          const record = event.Records[0];
          seen.push(`${record?.body}#${record?.attributes.ApproximateReceiveCount}`);
          if (record?.body === 'poison') throw new Error('cannot parse');
        },
        onInvocation: r.onInvocation,
      }),
    );
    await runner.runUntilDrained({ timeoutMs: 20_000 });
    expect(seen.filter((s) => s.startsWith('poison')).sort()).toEqual(['poison#1', 'poison#2']);
    expect(seen.filter((s) => s.startsWith('fine'))).toEqual(['fine#1']);
    const dlq = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect((dlq.Messages ?? []).map((m) => [m.MessageId, m.Body])).toEqual([[poisonId, 'poison']]);
  });

  it('runUntilDrained resolves once every message is handled, and stops polling', async () => {
    const log = new RequestLog();
    const client = testClients(log).sqs;
    const queue = await makeQueue({ visibility: 30 });
    await send(queue.queueUrl, ['a', 'b', 'c', 'd', 'e']);
    const handled: string[] = [];
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        sqs: client,
        handler: async (event) => void handled.push(...event.Records.map((x) => x.body)),
      }),
    );
    await runner.runUntilDrained({ timeoutMs: 20_000 });
    expect(handled.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await counts(queue.queueUrl)).toEqual({ visible: 0, notVisible: 0 });
    const requests = log.requests.length;
    await sleep(1200);
    expect(log.requests.length).toBe(requests);
  });

  it('runUntilDrained gives up with RunnerDrainTimeoutError when messages keep failing', async () => {
    const queue = await makeQueue({ visibility: 1 });
    await send(queue.queueUrl, ['always fails']);
    const runner = new LocalRunner(
      runnerOptions(queue.queueUrl, {
        handler: async () => {
          throw new Error('nope');
        },
      }),
    );
    await expect(runner.runUntilDrained({ timeoutMs: 1500 })).rejects.toThrow(RunnerDrainTimeoutError);
  });
});

describe('LocalRunner: settings Lambda refuses', () => {
  it.each([
    [{ batchSize: 11, maxBatchingWindowSeconds: 0 }, /above 10/],
    [{ batchSize: 10_001, maxBatchingWindowSeconds: 1 }, /batchSize/],
    [{ batchSize: 0 }, /batchSize/],
    [{ maxBatchingWindowSeconds: 301 }, /maxBatchingWindowSeconds/],
    [{ timeoutSeconds: 901 }, /timeoutSeconds/],
    [{ maxConcurrency: 0 }, /maxConcurrency/],
  ])('rejects %o', (overrides, message) => {
    expect(() => new LocalRunner(runnerOptions('http://unused', overrides))).toThrow(message);
    expect(() => new LocalRunner(runnerOptions('http://unused', overrides))).toThrow(RunnerConfigurationError);
  });

  it('refuses to run when the function timeout exceeds the queue visibility timeout, as Lambda does', async () => {
    const queue = await makeQueue({ visibility: 2 });
    const runner = new LocalRunner(runnerOptions(queue.queueUrl, { timeoutSeconds: 3 }));
    await expect(runner.runUntilDrained({ timeoutMs: 5000 })).rejects.toThrow(/exceeds the visibility timeout/);
    // A long-running caller learns it without calling stop().
    const started = new LocalRunner(runnerOptions(queue.queueUrl, { timeoutSeconds: 3 }));
    started.start();
    await expect(started.whenStopped()).rejects.toThrow(RunnerConfigurationError);
  });
});

describe('interpretBatchResponse', () => {
  it('keeps the listed ids and deletes the others, ignoring duplicates', () => {
    expect(
      interpretBatchResponse({ batchItemFailures: [{ itemIdentifier: 'b' }, { itemIdentifier: 'b' }] }, [
        'a',
        'b',
        'c',
      ]),
    ).toEqual({ outcome: 'partial', delete: ['a', 'c'], retain: ['b'] });
  });
});

describe('loadHandler', () => {
  it('imports a .ts module and returns the named export', async () => {
    const handler = await loadHandler('test/fixtures/handlers/namedExport.ts', 'process');
    expect(await handler({ Records: [] }, {} as Context)).toEqual({ batchItemFailures: [], seen: 0 });
  });

  it('names the module and its exports when the export is missing or not a function', async () => {
    await expect(loadHandler('test/fixtures/handlers/namedExport.ts')).rejects.toThrow(HandlerExportMissingError);
    await expect(loadHandler('test/fixtures/handlers/namedExport.ts', 'notAFunction')).rejects.toThrow(
      /no function export named "notAFunction" \(its exports: notAFunction, process\)/,
    );
  });

  it('explains a missing file and a module that fails while importing', async () => {
    await expect(loadHandler('test/fixtures/handlers/nope.ts')).rejects.toThrow(HandlerModuleLoadError);
    await expect(loadHandler('test/fixtures/handlers/nope.ts')).rejects.toThrow(/does not exist/);
    await expect(loadHandler('test/fixtures/handlers/throwsOnImport.ts')).rejects.toThrow(
      /Importing the handler module .*throwsOnImport\.ts failed: fixture: OUTPUT_BUCKET is not configured/,
    );
  });
});
