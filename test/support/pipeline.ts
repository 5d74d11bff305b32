import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createNormalizeWorker } from '../../functions/normalize/normalizeWorker.js';
import type { AwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { type LocalStackResources, provisionLocalStack } from '../../src/dev/provision.js';
import { LocalRunner } from '../../src/runner/LocalRunner.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { type Topology, topology } from '../../src/topology.js';
import { uniqueName } from './aws.js';

/** A test topology: the real one with short timeouts so retries and the DLQ happen in seconds. */
export const fastTopology: Topology = {
  ...topology,
  normalize: { ...topology.normalize, functionTimeoutSeconds: 4, visibilityTimeoutSeconds: 4, maxReceiveCount: 2 },
};

/** Provisions a fresh local pipeline with unique names. */
export async function provisionTestPipeline(
  clients: AwsClients,
  t: Topology = fastTopology,
): Promise<LocalStackResources> {
  const id = uniqueName('p');
  return provisionLocalStack({
    clients,
    names: { inputBucket: `${id}-in`, outputBucket: `${id}-out`, queue: `${id}-q`, dlq: `${id}-dlq` },
    topology: t,
  });
}

/** A local runner invoking the normalize worker's batch handler, configured like the deployed mapping. */
export function normalizeRunner(
  clients: AwsClients,
  stack: LocalStackResources,
  options: { concurrency?: number; t?: Topology } = {},
): LocalRunner {
  const t = options.t ?? fastTopology;
  const handler = createSqsBatchHandler({
    worker: createNormalizeWorker({ outputBucket: stack.outputBucket, topology: t }),
    store: new S3ObjectStore(clients.s3),
    sqs: clients.sqs,
    deadlineMarginMs: 1000,
  });
  return new LocalRunner({
    sqs: clients.sqs,
    queueUrl: stack.queueUrl,
    handler,
    timeoutSeconds: t.normalize.functionTimeoutSeconds,
    batchSize: t.normalize.batchSize,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: options.concurrency ?? t.normalize.maxConcurrency,
    pollWaitSeconds: 0,
  });
}

/** Uploads an input (the bucket notification enqueues its event). */
export async function upload(
  clients: AwsClients,
  bucket: string,
  key: string,
  body: string | Uint8Array,
): Promise<string> {
  const out = await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  return (out.ETag ?? '').replace(/"/g, '');
}

/** Sends an S3 event for `key` by hand: a duplicate, a replay or a late event. */
export async function sendS3Event(
  clients: AwsClients,
  queueUrl: string,
  bucket: string,
  key: string,
  extra: { eTag?: string } = {},
): Promise<void> {
  const encoded = encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
  const body = {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: bucket }, object: { key: encoded, ...(extra.eTag ? { eTag: extra.eTag } : {}) } },
      },
    ],
  };
  await clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
}

/** Messages in a queue (visible + in flight). */
export async function queueDepth(clients: AwsClients, queueUrl: string): Promise<number> {
  const out = await clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}
