import { describe, expect, it } from 'vitest';
import { FullBatchFailureError } from '../../src/errors.js';
import { createLogger } from '../../src/logging/logger.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';
import { OFFLINE_CONTEXT, offlineBatchHandler, offlineEvent } from '../support/offlineBatch.js';

const context = OFFLINE_CONTEXT;
const event = offlineEvent;

const handlerWith = (options: { throwOnFullBatchFailure?: boolean }, emf: string[] = [], lines: string[] = []) =>
  offlineBatchHandler({
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
