import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { FullBatchFailureError } from '../../src/errors.js';
import { createLogger } from '../../src/logging/logger.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';

const context = { awsRequestId: 'r-1', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

/** `junk*` bodies are not S3 events (failed, not retryable); others are s3:TestEvent (skipped). */
const event = (ids: string[]): SQSEvent =>
  ({
    Records: ids.map((id) => ({
      messageId: id,
      body: id.startsWith('junk') ? 'not json' : JSON.stringify({ Event: 's3:TestEvent' }),
      attributes: { ApproximateReceiveCount: '1' },
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
    })),
  }) as unknown as SQSEvent;

const handlerWith = (options: { throwOnFullBatchFailure?: boolean }, emf: string[] = [], lines: string[] = []) =>
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
    logger: createLogger({ sink: (l) => lines.push(l) }),
    onOutcome: emfOutcomeMetrics({ sink: (l) => emf.push(l) }),
    ...options,
  });

describe('throwOnFullBatchFailure', () => {
  it('is off by default: a batch whose every record failed returns them all as batch item failures', async () => {
    const response = await handlerWith({})(event(['junk-1', 'junk-2']), context);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'junk-1' }, { itemIdentifier: 'junk-2' }]);
  });

  it('when set, throws FullBatchFailureError with the count and message ids, after the outcomes are logged and flushed', async () => {
    const emf: string[] = [];
    const lines: string[] = [];
    const thrown = await handlerWith(
      { throwOnFullBatchFailure: true },
      emf,
      lines,
    )(event(['junk-1', 'junk-2']), context).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(FullBatchFailureError);
    expect(thrown).toMatchObject({
      name: 'FullBatchFailureError',
      failedCount: 2,
      messageIds: ['junk-1', 'junk-2'],
      retryable: true,
      message: expect.stringMatching(/^All 2 records of the batch failed \(message ids junk-1, junk-2\)/),
    });
    expect(lines.map((l) => JSON.parse(l).message)).toEqual(['record failed', 'record failed']);
    expect(JSON.parse(emf[0] ?? '{}')).toMatchObject({ RecordsFailed: 2 });
  });

  it('when set, still returns a partial failure, and an empty batch, normally', async () => {
    const handler = handlerWith({ throwOnFullBatchFailure: true });
    await expect(handler(event(['t1', 'junk']), context)).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: 'junk' }],
    });
    await expect(handler(event([]), context)).resolves.toEqual({ batchItemFailures: [] });
  });

  it('names at most ten message ids in its message, and keeps them all', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `m-${i}`);
    const error = new FullBatchFailureError(ids);
    expect(error.message).toMatch(/m-9 and 2 more\)/);
    expect(error.messageIds).toHaveLength(12);
  });
});
