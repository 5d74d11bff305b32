import {
  CloudWatchLogsClient,
  CreateLogGroupCommand,
  CreateLogStreamCommand,
  PutLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failuresWithLogFallback } from '../../app/redrive/failureFromLogs.js';
import { redriveDeadLetters } from '../../app/redrive/redriveDeadLetters.js';
import { createAwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { InputTooLargeError } from '../../src/errors.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { createLogger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket } from '../support/s3.js';
import { S3DenyProxy } from '../support/s3DenyProxy.js';

const context = (): Context =>
  ({ awsRequestId: 'req-1', memoryLimitInMB: '1024', getRemainingTimeInMillis: () => 60_000 }) as unknown as Context;

describe('a failure record that cannot be written (403 on the failure prefix)', () => {
  const clients = testClients();
  let proxy: S3DenyProxy;
  beforeAll(async () => {
    // A bucket policy that denies the failure prefix, as IAM would answer it.
    proxy = await S3DenyProxy.start(awsEndpoint(), ({ method, key }) =>
      method === 'PUT' && key.startsWith('failures/') ? { status: 403, code: 'AccessDenied' } : undefined,
    );
  });
  afterAll(async () => proxy?.stop());

  it("redrive shows the recorder's 403 and the message's own reason, read back from the worker's log group, not 'a timeout, a crash, or no recorder'", async () => {
    const input = await createBucket(clients.s3, uniqueName('unw-in'));
    const output = await createBucket(clients.s3, uniqueName('unw-out'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'big.csv', Body: 'a' }));
    const sourceName = uniqueName('unw-q');
    const sourceUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: sourceName }))).QueueUrl ?? '';
    const dlqUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: `${sourceName}-dlq` }))).QueueUrl ?? '';
    const body = JSON.stringify({
      Records: [
        {
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: input }, object: { key: 'big.csv' } },
        },
      ],
    });
    // The dead letter as the redrive policy left it (a move keeps the message id).
    const messageId =
      (await clients.sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: body }))).MessageId ?? '';

    // The worker, its failure recorder writing through the denying proxy, its log lines kept as Lambda keeps them.
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line) });
    const proxied = createAwsClients({ endpoint: proxy.url, region: 'us-east-1', maxAttempts: 1 });
    const handler = createSqsBatchHandler({
      worker: copyWorker(output, {
        before: () => {
          throw new InputTooLargeError('s3://in/big.csv is larger than one invocation can read (maxInputBytes 1)');
        },
      }),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      logger,
      failureRecorder: new S3FailureRecorder({
        store: new S3ObjectStore(proxied.s3),
        sqs: clients.sqs,
        bucket: output,
        logger,
      }),
    });
    const record = {
      messageId,
      receiptHandle: 'rh',
      body,
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:123456789012:${sourceName}`,
      awsRegion: 'us-east-1',
    } as unknown as SQSRecord;
    await handler({ Records: [record] }, context());
    expect(proxy.refused.some((r) => r.includes('failures/'))).toBe(true);

    const logs = new CloudWatchLogsClient({ endpoint: awsEndpoint(), region: 'us-east-1' });
    const logGroup = `/aws/lambda/${uniqueName('unw-fn')}`;
    await logs.send(new CreateLogGroupCommand({ logGroupName: logGroup }));
    await logs.send(new CreateLogStreamCommand({ logGroupName: logGroup, logStreamName: 's' }));
    await logs.send(
      new PutLogEventsCommand({
        logGroupName: logGroup,
        logStreamName: 's',
        logEvents: lines.map((message) => ({ message, timestamp: Date.now() })),
      }),
    );

    const recorder = new S3FailureRecorder({ store: new S3ObjectStore(clients.s3), sqs: clients.sqs, bucket: output });
    const result = await redriveDeadLetters({
      sqs: clients.sqs,
      dlqUrl,
      sourceQueueUrl: sourceUrl,
      failures: failuresWithLogFallback(recorder, { logs, logGroup }),
      dryRun: true,
      receiveWaitSeconds: 0,
    });
    const letter = result.inspected.find((l) => l.messageId === messageId);
    expect(letter?.reason).toMatch(/^no failure record: the worker could not write it \(S3AccessDeniedError: .*403/);
    expect(letter?.reason).toContain(
      "its last reason, from the function's log: InputTooLargeError: s3://in/big.csv is larger than one invocation can read",
    );
  });
});
