import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { createPipelineClients } from '../../src/ledger/pipelineClients.js';
import { S3ObjectStore, WriteStatus } from '../../src/s3/S3ObjectStore.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';
import { FaultKind, type FaultPlan, FaultProxy } from './support/FaultProxy.js';
import { THROTTLING_CODES } from './support/faultResponses.js';

/**
 * The fault proxy must produce faults the SDK and the product code recognise as the real thing;
 * otherwise a green chaos run would prove nothing.
 */
describe('FaultProxy: HTTP-level faults in front of the emulator', () => {
  const direct = testClients();
  let bucket: string;
  let table: string;
  let queueUrl: string;
  const proxies: FaultProxy[] = [];

  const through = async (plan: FaultPlan, maxAttempts = 1) => {
    const proxy = await FaultProxy.start({ upstream: awsEndpoint(), seed: 3, plan });
    proxies.push(proxy);
    return { proxy, clients: createPipelineClients({ endpoint: proxy.url, region: 'us-east-1', maxAttempts }) };
  };
  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return error as { name: string; $metadata?: { httpStatusCode?: number }; code?: string };
    }
    throw new Error('expected the request to fail');
  };

  beforeAll(async () => {
    bucket = await createBucket(direct.s3, uniqueName('proxy'));
    table = uniqueName('proxy-ledger');
    await createLedgerTable({ client: direct.dynamodb, tableName: table });
    const { CreateQueueCommand } = await import('@aws-sdk/client-sqs');
    queueUrl = (await direct.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('proxy-q') }))).QueueUrl as string;
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.stop()));
  });

  it('tells work in flight from hung polls, and names what is in flight', async () => {
    const { proxy, clients } = await through({ rates: { [FaultKind.TIMEOUT]: 1 }, hangMs: 1500 });
    const poll = failure(clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 })));
    const head = failure(clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'hung.txt' })));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(proxy.inFlight).toBe(2);
    expect(proxy.inFlightWork).toBe(1); // the HEAD; a poll holds no work of its own
    expect(proxy.describeInFlight()).toEqual([
      expect.stringMatching(/^SQS:ReceiveMessage \d+\.\d s \(fault timeout, not forwarded\)$/),
      expect.stringMatching(/^S3:HeadObject \d+\.\d s \(fault timeout, not forwarded\)$/),
    ]);
    await Promise.all([poll, head]);
    expect(proxy.inFlight).toBe(0);
    expect(proxy.describeInFlight()).toEqual([]);
  });

  it('forwards and counts requests by service and operation, with body bytes', async () => {
    const { proxy, clients } = await through({});
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'count/a.txt', Body: 'hello' }));
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'count/a.txt' }));
    expect(await got.Body?.transformToString()).toBe('hello');
    await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'count/a.txt' }));
    await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    const stats = proxy.stats();
    expect(stats.byOperation).toEqual({
      'S3:PutObject': 1,
      'S3:GetObject': 1,
      'S3:HeadObject': 1,
      'SQS:ReceiveMessage': 1,
    });
    expect(stats.requestBodyBytes.S3).toBe(5);
    expect(stats.responseBodyBytes.S3).toBe(5);
    expect(stats.faults).toEqual({});
  });

  it('503 SlowDown reaches the SDK as S3 sends it, and the SDK retries it (3 attempts seen)', async () => {
    const once = await through({ rates: { [FaultKind.SLOW_DOWN_503]: 1 } });
    const error = await failure(once.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'count/a.txt' })));
    expect(error.name).toBe('SlowDown');
    expect(error.$metadata?.httpStatusCode).toBe(503);
    const retried = await through({ rates: { [FaultKind.SLOW_DOWN_503]: 1 } }, 3);
    await failure(retried.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'count/a.txt' })));
    expect(retried.proxy.stats().requests).toBe(3);
  });

  it('throttling reaches DynamoDB and SQS clients as a throttling error, which the SDK retries', async () => {
    const { proxy, clients } = await through({ rates: { [FaultKind.THROTTLE]: 1 } }, 3);
    const dynamo = await failure(
      clients.dynamodb.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'x' } } })),
    );
    expect(THROTTLING_CODES.DynamoDB).toContain(dynamo.name);
    expect(dynamo.$metadata?.httpStatusCode).toBe(400);
    const sqs = await failure(clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })));
    expect(THROTTLING_CODES.SQS).toContain(sqs.name);
    expect(proxy.stats().requests).toBe(6); // 3 attempts each: classified retryable
  });

  it('409 ConditionalRequestConflict hits conditional writes only, and the product retries it, then classifies it as a conflict', async () => {
    const { proxy, clients } = await through({ rates: { [FaultKind.CONFLICT_409]: 1 } });
    const store = new S3ObjectStore(clients.s3, { conflictRetry: { sleep: async () => {} } });
    const result = await store.put(bucket, 'conflict/a.txt', Buffer.from('x'), {
      condition: { ifNoneMatch: '*' },
      metadata: {},
      sha256Base64: 'LUsRiTIcdURfpnmx+yahvyjPzcyGGdGSzfNiBm1NQm0=',
    });
    expect(result).toEqual({ status: WriteStatus.CONFLICT });
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'conflict/plain.txt', Body: 'x' }));
    // The first attempt and the store's 3 retries; the unconditional put passes.
    expect(proxy.stats().faults).toEqual({ [FaultKind.CONFLICT_409]: 4 });
  });

  it('reset-after: the server applied the write, the client saw only a broken connection', async () => {
    const { clients } = await through({ rates: { [FaultKind.RESET_AFTER]: 1 } });
    const error = await failure(
      clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'reset/after.txt', Body: 'applied' })),
    );
    expect(error.$metadata?.httpStatusCode).toBeUndefined();
    const stored = await direct.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'reset/after.txt' }));
    expect(await stored.Body?.transformToString()).toBe('applied');
  });

  it('reset-before: nothing reaches the server', async () => {
    const { proxy, clients } = await through({ rates: { [FaultKind.RESET_BEFORE]: 1 } });
    await failure(clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'reset/before.txt', Body: 'lost' })));
    const head = await failure(direct.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'reset/before.txt' })));
    expect(head.$metadata?.httpStatusCode).toBe(404);
    expect(proxy.log[0]).toMatchObject({ forwarded: false, dropped: true });
  });

  it('reset-mid-body: GetObject answers 200, then its body stream breaks', async () => {
    await direct.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'mid/body.txt', Body: 'x'.repeat(100_000) }));
    const { clients } = await through({ rates: { [FaultKind.RESET_MID_BODY]: 1 } });
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'mid/body.txt' }));
    expect(got.$metadata.httpStatusCode).toBe(200);
    await expect(got.Body?.transformToString()).rejects.toThrow();
  });

  it('timeout: the request hangs for hangMs, then the connection drops', async () => {
    const { clients } = await through({ rates: { [FaultKind.TIMEOUT]: 1 }, hangMs: 400 });
    const started = Date.now();
    await failure(clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'count/a.txt' })));
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
  });

  it('latency delays a request without failing it', async () => {
    const { proxy, clients } = await through({ rates: { [FaultKind.LATENCY]: 1 }, latencyMs: [200, 200] });
    const started = Date.now();
    await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'count/a.txt' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(proxy.log[0]).toMatchObject({ fault: FaultKind.LATENCY, status: 200, forwarded: true });
  });

  it('an interceptor can drop a request after the server applied it (how the suite kills at a boundary)', async () => {
    const proxy = await FaultProxy.start({
      upstream: awsEndpoint(),
      intercept: (entry, phase) =>
        entry.operation === 'PutObject' && phase === 'after-response' ? 'drop' : 'continue',
    });
    proxies.push(proxy);
    const { s3 } = createPipelineClients({ endpoint: proxy.url, region: 'us-east-1', maxAttempts: 1 });
    await failure(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'intercept/a.txt', Body: 'kept' })));
    const stored = await direct.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'intercept/a.txt' }));
    expect(await stored.Body?.transformToString()).toBe('kept');
  });

  it('reset-after on ReceiveMessage: the interceptor still sees the messages SQS handed out, which the client never gets', async () => {
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    const sent = await direct.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'lost on the way back' }),
    );
    const seen: { phase: string; fault?: string; responseText?: string }[] = [];
    const proxy = await FaultProxy.start({
      upstream: awsEndpoint(),
      plan: { rates: { [FaultKind.RESET_AFTER]: 1 } },
      intercept: (entry, phase) => {
        if (entry.operation === 'ReceiveMessage') {
          seen.push({
            phase,
            ...(entry.fault ? { fault: entry.fault } : {}),
            ...(entry.responseText ? { responseText: entry.responseText } : {}),
          });
        }
        return 'continue';
      },
    });
    proxies.push(proxy);
    const { sqs } = createPipelineClients({ endpoint: proxy.url, region: 'us-east-1', maxAttempts: 1 });
    await failure(
      sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 })),
    );
    // SQS applied the receive (the message is in flight, its receive counted); only the proxy saw it.
    const after = seen.find((s) => s.phase === 'after-response');
    expect(after).toMatchObject({ fault: FaultKind.RESET_AFTER });
    expect(after?.responseText).toContain(sent.MessageId as string);
  });

  it('rejects unknown fault kinds and rates that add up to more than 1', async () => {
    await expect(
      FaultProxy.start({ upstream: awsEndpoint(), plan: { rates: { nope: 0.1 } as never } }),
    ).rejects.toThrow(/unknown fault kind/);
    await expect(
      FaultProxy.start({ upstream: awsEndpoint(), plan: { rates: { 'error-500': 0.6, 'reset-after': 0.6 } } }),
    ).rejects.toThrow(/more than 1/);
  });
});
