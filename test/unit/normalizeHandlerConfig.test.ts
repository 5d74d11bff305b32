import { execFile, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';

/** Imports the Lambda entry module in a fresh process with the given environment, as Lambda's init does. */
function initHandler(env: Record<string, string>) {
  const script =
    "const m = await import('./functions/normalize/handler.ts'); if (typeof m.handler !== 'function') process.exit(3);";
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    encoding: 'utf8',
  });
}

describe('functions/normalize/handler.ts configuration at init', () => {
  it("loads with the stack's default environment (ledger table set, no webhook: NOTIFY_URL unset)", () => {
    const result = initHandler({ OUTPUT_BUCKET: 'out', LEDGER_TABLE: 'ledger', MAX_INPUT_BYTES: '455081984' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('refuses to start with a webhook but no ledger, naming the missing variable', () => {
    const result = initHandler({ OUTPUT_BUCKET: 'out', NOTIFY_URL: 'https://hooks.example.com/x' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/LEDGER_TABLE is required/);
  });

  it('refuses to start without OUTPUT_BUCKET', () => {
    const result = initHandler({});
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/OUTPUT_BUCKET is required/);
  });
});

/**
 * Imports the entry module in a fresh process (a cold sandbox) and invokes it once with one fresh S3
 * event, against a local endpoint that records each request's service (from its signature's
 * credential scope) and answers 404 (S3: the input is gone) or 400 (anything else).
 */
async function firstItemServices(
  env: Record<string, string>,
  entry = './functions/normalize/handler.ts',
  body?: string,
): Promise<string[]> {
  const services: string[] = [];
  const server = createServer((request, response) => {
    const scope = /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\//.exec(request.headers.authorization ?? '');
    const service = scope?.[1] ?? 'unsigned';
    // An SQS request with its operation (the JSON protocol names it in X-Amz-Target).
    const target = String(request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    services.push(service === 'sqs' && target ? `sqs:${target}` : service);
    request.resume();
    request.on('end', () => {
      // A listing finds nothing; every object is missing.
      if (service === 's3' && request.method === 'GET' && request.url?.includes('list-type=2')) {
        response
          .writeHead(200, { 'content-type': 'application/xml' })
          .end(
            '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>',
          );
      } else if (service === 's3') response.writeHead(404, { 'content-type': 'application/xml' }).end();
      else
        response
          .writeHead(400, { 'content-type': 'application/x-amz-json-1.0' })
          .end(JSON.stringify({ __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'no such queue here' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const s3Event = {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventTime: new Date().toISOString(),
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: 'in' }, object: { key: 'incoming/a.csv', size: 10, eTag: 'abc' } },
      },
    ],
  };
  const sqsEvent = {
    Records: [
      {
        messageId: 'm-1',
        receiptHandle: 'r-1',
        body: body ?? JSON.stringify(s3Event),
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:rerun-normalize',
        awsRegion: 'us-east-1',
      },
    ],
  };
  const script =
    `const { handler } = await import('${entry}');` +
    `await handler(${JSON.stringify(sqsEvent)}, { awsRequestId: 'req-1', functionName: 'rerun-normalize', getRemainingTimeInMillis: () => 60000 });` +
    'process.exit(0);';
  try {
    await new Promise<void>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        {
          env: {
            PATH: process.env.PATH,
            AWS_REGION: 'us-east-1',
            AWS_ACCESS_KEY_ID: 'test',
            AWS_SECRET_ACCESS_KEY: 'test',
            AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            LOG_LEVEL: 'error',
            OUTPUT_BUCKET: 'out',
            INPUT_BUCKETS: 'in',
            INPUT_BUCKET: 'in',
            ...env,
          },
          encoding: 'utf8',
        },
        (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve()),
      ),
    );
  } finally {
    server.close();
  }
  return services;
}

describe("functions/normalize/handler.ts on a cold start: the stack's MAX_RECEIVE_COUNT", () => {
  it("sends only the item's own S3 requests when the stack gives MAX_RECEIVE_COUNT", async () => {
    const services = await firstItemServices({ MAX_RECEIVE_COUNT: '5' });
    expect(services.length).toBeGreaterThan(0);
    expect(services.every((s) => s === 's3')).toBe(true);
  }, 60_000);

  it('asks the queue for its maxReceiveCount first without it (GetQueueUrl: an SQS request before the item)', async () => {
    const services = await firstItemServices({});
    expect(services[0]).toBe('sqs:GetQueueUrl');
    expect(services).toContain('s3');
  }, 60_000);

  it('refuses a MAX_RECEIVE_COUNT that is not an integer in 1..1000, naming it', () => {
    const result = initHandler({ OUTPUT_BUCKET: 'out', MAX_RECEIVE_COUNT: 'five' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/MAX_RECEIVE_COUNT must be an integer in 1\.\.1000, not "five"/);
  });
});

describe("functions/summarize/handler.ts on a cold start: the stack's MAX_RECEIVE_COUNT", () => {
  const summarize = './functions/summarize/handler.ts';
  const TASK = '{"type":"summarize","partition":"dt=2026-01-05"}';

  it('sends no SQS request before its first task when the stack gives MAX_RECEIVE_COUNT; a failed task looks its queue up for the retry delay alone', async () => {
    // Every object is missing here, so the task fails: its message is deferred (ChangeMessageVisibility
    // needs the queue's URL), and nothing else of SQS is asked.
    const services = await firstItemServices({ MAX_RECEIVE_COUNT: '5' }, summarize, TASK);
    expect(services[0]).toBe('s3');
    expect(services.filter((s) => s.startsWith('sqs'))).toEqual(['sqs:GetQueueUrl']);
  }, 60_000);

  it('asks the queue for its maxReceiveCount without it', async () => {
    expect(await firstItemServices({}, summarize)).toContain('sqs:GetQueueUrl');
  }, 60_000);
});
