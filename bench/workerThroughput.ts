import { randomBytes } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { encodeS3EventKey, reprocessMessageBody } from '../app/reprocess/reprocessMessage.js';
import { topology } from '../app/topology.js';
import { createLambdaContext } from '../local/runner/lambdaContext.js';
import { toSqsRecord } from '../local/runner/sqsRecord.js';
import { createSqsBatchHandler } from '../src/batch/createSqsBatchHandler.js';
import { mapWithConcurrency } from '../src/batch/mapWithConcurrency.js';
import type { PipelineClients } from '../src/ledger/pipelineClients.js';
import { createNormalizeWorker } from '../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';
import { createIdempotencyTable, createPowertoolsNormalizeHandler } from './baseline/powertoolsWorker.js';

/** Items per second of a worker invoked directly, without SQS in the loop. */
export interface WorkerThroughput {
  /** Median of the first runs (each on a fresh output bucket and, for Powertools, a fresh table). */
  readonly firstItemsPerSecond: number;
  readonly firstRuns: readonly number[];
  /** The same batches again, everything done: the median of as many runs as first runs. */
  readonly rerunItemsPerSecond: number;
  readonly rerunRuns: readonly number[];
}

/**
 * Per-request latencies added by a proxy to model AWS instead of a local emulator (same-region
 * Lambda: S3 small-object requests take tens of milliseconds, DynamoDB single-item writes a few).
 * Assumed round figures, not measurements: they only show how the comparison moves when round
 * trips, not the emulator's CPU, bound the throughput.
 */
export const MODELLED_AWS_LATENCY_MS = { S3: 25, DynamoDB: 8, SQS: 10 } as const;

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * Invokes a worker's batch handler directly with the batches Lambda would deliver (10 records each,
 * 4 invocations at once, as the deployed mapping), against the emulator without a proxy. Both
 * workers run every record of a batch at once: Powertools' BatchProcessor by design, rerun's batch
 * handler by default (its done-checks all at once, its transforms admitted by a memory budget of
 * the function's 512 MB, which these small inputs never fill). This is
 * the worker's own throughput: on this machine the local runner's end-to-end figure is capped by
 * the emulator's ReceiveMessage (about 200 ms per call in moto 5.2.1, one call per batch), which
 * on AWS takes milliseconds and is made by many pollers in parallel.
 *
 * @example
 * const figures = await measureWorkerThroughput({ clients, system: 'rerun', inputBucket, keys, repeats: 3 });
 */
export async function measureWorkerThroughput(options: {
  readonly clients: PipelineClients;
  readonly system: 'rerun' | 'powertools';
  readonly inputBucket: string;
  readonly inputs: readonly {
    readonly key: string;
    readonly etag: string;
    readonly size: number;
    readonly versionId?: string;
  }[];
  readonly repeats: number;
}): Promise<WorkerThroughput> {
  const { clients } = options;
  // Built for each run: the first runs' events as S3 delivers them, just now (fresh deliveries of S3's
  // own); the reruns' as `rerun reprocess` sends them (with their send time: fresh, rerun's own).
  const events = (how: 's3' | 'reprocess') => batches(options.inputBucket, options.inputs, how);
  const firstRuns: number[] = [];
  let handler: Handler | undefined;
  for (let i = 0; i < options.repeats; i++) {
    handler = await freshHandler(clients, options.system);
    firstRuns.push(await invokeAll(handler, events('s3'), options.inputs.length));
  }
  if (!handler) throw new Error('repeats must be at least 1');
  const rerunRuns: number[] = [];
  for (let i = 0; i < options.repeats; i++) {
    rerunRuns.push(await invokeAll(handler, events('reprocess'), options.inputs.length));
  }
  return {
    firstItemsPerSecond: median(firstRuns),
    firstRuns,
    rerunItemsPerSecond: median(rerunRuns),
    rerunRuns,
  };
}

function median(runs: readonly number[]): number {
  const sorted = [...runs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** A handler writing to a fresh output bucket (and idempotency table): every item is new to it. */
async function freshHandler(clients: PipelineClients, system: 'rerun' | 'powertools'): Promise<Handler> {
  const id = `bench-w-${randomBytes(3).toString('hex')}`;
  const outputBucket = `${id}-out`;
  await clients.s3.send(new CreateBucketCommand({ Bucket: outputBucket }));
  if (system === 'rerun') {
    // What functions/normalize/handler.ts builds, without a side effect (no NOTIFY_URL).
    return createSqsBatchHandler({
      worker: createNormalizeWorker({ outputBucket }),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
  }
  const idempotencyTable = `${id}-idempotency`;
  await createIdempotencyTable(clients.dynamodb, idempotencyTable);
  return createPowertoolsNormalizeHandler({
    s3: clients.s3,
    dynamodb: clients.dynamodb,
    outputBucket,
    idempotencyTable,
  });
}

async function invokeAll(handler: Handler, events: readonly SQSEvent[], items: number): Promise<number> {
  const started = performance.now();
  await mapWithConcurrency(events, topology.normalize.maxConcurrency, async (event, i) => {
    const context = createLambdaContext({
      functionName: 'bench',
      region: 'us-east-1',
      accountId: '123456789012',
      memoryLimitInMB: topology.normalize.memoryMiB,
      awsRequestId: `bench-${i}`,
      logStreamName: 'bench',
      deadline: Date.now() + topology.normalize.functionTimeoutSeconds * 1000,
      now: Date.now,
    });
    const response = await handler(event, context);
    if (response.batchItemFailures.length > 0) {
      throw new Error(`a benchmark batch failed: ${JSON.stringify(response.batchItemFailures)}`);
    }
  });
  return Math.round((items * 10_000) / (performance.now() - started)) / 10;
}

/**
 * The inputs' ObjectCreated events with an event time of now, first receive: fresh deliveries, as S3
 * sends them (key, ETag and size) or as `rerun reprocess` sends them.
 */
function batches(
  bucket: string,
  inputs: readonly { key: string; etag: string; size: number; versionId?: string }[],
  how: 's3' | 'reprocess',
): SQSEvent[] {
  const sentAt = Date.now();
  const records = inputs.map(({ key, etag, size, versionId }, i) =>
    toSqsRecord(
      {
        MessageId: `bench-${i}`,
        ReceiptHandle: `bench-${i}`,
        Body:
          how === 'reprocess'
            ? reprocessMessageBody({ bucket, key, etag, size, sentAt })
            : JSON.stringify({
                Records: [
                  {
                    eventVersion: '2.1',
                    eventSource: 'aws:s3',
                    awsRegion: 'us-east-1',
                    eventTime: new Date(sentAt).toISOString(),
                    eventName: 'ObjectCreated:Put',
                    s3: {
                      bucket: { name: bucket },
                      object: { key: encodeS3EventKey(key), eTag: etag, size, ...(versionId ? { versionId } : {}) },
                    },
                  },
                ],
              }),
        Attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(sentAt) },
      },
      { queueArn: 'arn:aws:sqs:us-east-1:123456789012:bench', region: 'us-east-1' },
    ),
  );
  const size = topology.normalize.batchSize;
  return Array.from({ length: Math.ceil(records.length / size) }, (_, i) => ({
    Records: records.slice(i * size, (i + 1) * size),
  }));
}
