import type { Context, SQSEvent } from 'aws-lambda';
import { createSqsBatchHandler, type SqsBatchHandlerOptions } from '../../src/batch/createSqsBatchHandler.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';

/**
 * A batch handler's unit tests without S3 or SQS: records whose ids start with `junk` carry a body
 * that is not an S3 event (failed, not retryable); the others carry an `s3:TestEvent` (skipped).
 * Neither outcome touches the store or the queue.
 */

/** The least of a Lambda context: a request id and a minute left. */
export const OFFLINE_CONTEXT = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

/** One SQS record per id: `junk*` bodies are not S3 events, the others are s3:TestEvent. */
export const offlineEvent = (ids: string[]): SQSEvent =>
  ({
    Records: ids.map((id) => ({
      messageId: id,
      body: id.startsWith('junk') ? 'not json' : JSON.stringify({ Event: 's3:TestEvent' }),
      attributes: { ApproximateReceiveCount: '1' },
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
    })),
  }) as unknown as SQSEvent;

/** `createSqsBatchHandler` over a worker named `copy`, with a store and an SQS client never called. */
export const offlineBatchHandler = (options: Partial<SqsBatchHandlerOptions> = {}) =>
  createSqsBatchHandler({
    worker: defineWorker({
      name: 'copy',
      codeVersion: '1',
      outputBucket: 'out',
      outputKey: (s) => s.key,
      transform: async () => ({}),
    }),
    store: {} as S3ObjectStore,
    sqs: {} as never,
    ...options,
  });
