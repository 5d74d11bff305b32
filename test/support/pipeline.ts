import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { type LocalStackResources, provisionLocalStack } from '../../app/dev/provisionLocalStack.js';
import { type Topology, topology } from '../../app/topology.js';
import { LocalRunner } from '../../local/runner/LocalRunner.js';
import type { AwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { FaultProxy } from '../chaos/support/FaultProxy.js';
import { awsEndpoint, type RequestLog, uniqueName } from './aws.js';
import { startNormalizePool, TestRuntime, testRuntime } from './lambdaRuntime.js';

/** A test topology: the real one with short timeouts so retries and the DLQ happen in seconds. */
export const fastTopology: Topology = {
  ...topology,
  normalize: { ...topology.normalize, functionTimeoutSeconds: 4, visibilityTimeoutSeconds: 4, maxReceiveCount: 2 },
};

/**
 * The topology of the runtime-mode tests. The deployed handler keeps its own deadline margin (it
 * starts no record with less than 5 s left), so its function timeout must leave room past that;
 * the visibility timeout may not be shorter than the function timeout (Lambda refuses the mapping).
 */
export const lambdaTestTopology: Topology = {
  ...fastTopology,
  normalize: { ...fastTopology.normalize, functionTimeoutSeconds: 15, visibilityTimeoutSeconds: 15 },
};

/** The topology of this test run's runtime (see test/support/lambdaRuntime.ts). */
export const testTopology: Topology = testRuntime === TestRuntime.LAMBDA ? lambdaTestTopology : fastTopology;

/** Provisions a fresh local pipeline with unique names. */
export async function provisionTestPipeline(
  clients: AwsClients,
  t: Topology = testTopology,
  options: { versionedInput?: boolean } = {},
): Promise<LocalStackResources> {
  const id = uniqueName('p');
  return provisionLocalStack({
    clients,
    names: { inputBucket: `${id}-in`, outputBucket: `${id}-out`, queue: `${id}-q`, dlq: `${id}-dlq` },
    topology: t,
    ...(options.versionedInput ? { versionedInput: true } : {}),
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
    worker: createNormalizeWorker({ outputBucket: stack.outputBucket, prefixes: t }),
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

/** Options of {@link drainNormalize}. */
export interface DrainNormalizeOptions {
  readonly concurrency?: number;
  /** @default {@link testTopology} */
  readonly t?: Topology;
  /**
   * The log the test's clients record into. In the lambda runtime the function's requests do not
   * pass through those clients: they are counted on the wire by a proxy in front of the emulator
   * and appended here, so a test counts requests the same way in both runtimes.
   */
  readonly log?: RequestLog;
}

/**
 * Runs the normalize worker under the local runner until the queue is drained (at most 60 s), in
 * this run's runtime: the in-process handler ({@link normalizeRunner}), or with
 * `RERUN_TEST_RUNTIME=lambda` the synthesized bundle in Lambda runtime slots (aws-lambda-rie, Node 24,
 * aws-lambda-ric), stopped when the drain ends.
 */
export async function drainNormalize(
  clients: AwsClients,
  stack: LocalStackResources,
  options: DrainNormalizeOptions = {},
): Promise<void> {
  const t = options.t ?? testTopology;
  if (testRuntime === TestRuntime.IN_PROCESS) {
    await normalizeRunner(clients, stack, {
      t,
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    }).runUntilDrained({
      timeoutMs: 60_000,
    });
    return;
  }
  const proxy = await FaultProxy.start({ upstream: awsEndpoint() });
  const pool = await startNormalizePool({
    endpoint: proxy.url,
    inputBucket: stack.inputBucket,
    outputBucket: stack.outputBucket,
    timeoutSeconds: t.normalize.functionTimeoutSeconds,
    maxReceiveCount: t.normalize.maxReceiveCount,
  });
  try {
    await new LocalRunner({
      sqs: clients.sqs,
      queueUrl: stack.queueUrl,
      invoker: pool,
      functionName: 'rerun-normalize',
      timeoutSeconds: t.normalize.functionTimeoutSeconds,
      batchSize: t.normalize.batchSize,
      maxBatchingWindowSeconds: 0,
      maxConcurrency: options.concurrency ?? t.normalize.maxConcurrency,
      pollWaitSeconds: 0,
      // A killed or failed invocation emits no record outcome: say so, for whoever reads a slow or failing test.
      onInvocation: (report) => {
        if (report.error !== undefined) {
          process.stderr.write(
            `[lambda] invocation ${report.outcome} after ${report.durationMs} ms: ${report.error}\n`,
          );
        }
      },
    }).runUntilDrained({ timeoutMs: 60_000 });
  } finally {
    await pool.close();
    await proxy.stop();
  }
  for (const entry of proxy.log) {
    if (entry.service === 'HTTP') continue;
    options.log?.requests.push({ service: entry.service, operation: entry.operation, input: {} });
  }
}

/**
 * Uploads an input and returns its ETag and the version it made (in an input bucket provisioned with
 * `versionedInput`, as RerunPipeline creates it), as S3's event of it names them.
 */
export async function uploadVersion(
  clients: AwsClients,
  bucket: string,
  key: string,
  body: string | Uint8Array,
): Promise<{ eTag: string; versionId?: string }> {
  const out = await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  return { eTag: (out.ETag ?? '').replace(/"/g, ''), ...(out.VersionId ? { versionId: out.VersionId } : {}) };
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
  extra: { eTag?: string; versionId?: string; eventTime?: string; size?: number } = {},
): Promise<void> {
  const encoded = encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
  const body = {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        eventName: 'ObjectCreated:Put',
        ...(extra.eventTime ? { eventTime: extra.eventTime } : {}),
        s3: {
          bucket: { name: bucket },
          object: {
            key: encoded,
            ...(extra.eTag ? { eTag: extra.eTag } : {}),
            ...(extra.versionId ? { versionId: extra.versionId } : {}),
            ...(extra.size !== undefined ? { size: extra.size } : {}),
          },
        },
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
