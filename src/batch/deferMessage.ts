import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { Logger } from '../logging/logger.js';
import { errorMessage } from './errorMessage.js';
import type { SourceQueues } from './sourceQueues.js';

/** An error that asks for its message to come back after a delay (e.g. a side effect in progress elsewhere). */
interface DeferrableError {
  readonly retryAfterSeconds: number;
}

/**
 * Defers a record's message when its error asks for a later retry (`retryAfterSeconds`, e.g. a
 * ledger lease held by another delivery): ChangeMessageVisibility delays its next delivery. Returns
 * the seconds it was deferred by, or undefined when the error does not ask, no time is left under
 * SQS's limit, or the call failed (then the message returns after the queue's visibility timeout).
 *
 * @example
 * const deferred = await deferIfAsked(queues, record, error, logger, now, invocationStart);
 */
export async function deferIfAsked(
  queues: SourceQueues,
  record: SQSRecord,
  error: unknown,
  logger: Logger,
  now: () => number,
  invocationStart: number,
): Promise<number | undefined> {
  const seconds = (error as Partial<DeferrableError> | undefined)?.retryAfterSeconds;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return undefined;
  // docs/AWS-BEHAVIOUR.md, "ChangeMessageVisibility": it delays the next delivery: wait for the other
  // holder instead of burning receives. Its limit is 12 hours counted from this receive, not from
  // the call; SQS refuses anything beyond. The receive happened before the invocation started,
  // at most a batching window (300 s) earlier, so that and the time run so far are left out.
  const visibility = Math.min(Math.ceil(seconds), maxDeferralSeconds(now() - invocationStart));
  if (visibility <= 0) return undefined;
  try {
    const queueUrl = await queues.queueUrlOf(record.eventSourceARN);
    await queues.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: visibility,
      }),
    );
    return visibility;
  } catch (deferError) {
    logger.warn('could not defer the message; it returns after the queue visibility timeout', {
      error: errorMessage(deferError),
    });
    return undefined;
  }
}

/**
 * A failed record's reason and deferral, as its outcome carries them: the error's message (a reason
 * given as a string, as it is), with " (deferred N s)" when the message was deferred.
 *
 * @example
 * failedWithDeferral(new Error('throttled'), 60); // { reason: 'Error: throttled (deferred 60 s)', deferredSeconds: 60 }
 */
export function failedWithDeferral(
  error: unknown,
  deferred: number | undefined,
): { reason: string; deferredSeconds?: number } {
  const reason = errorMessage(error);
  return deferred ? { reason: `${reason} (deferred ${deferred} s)`, deferredSeconds: deferred } : { reason };
}

/** SQS's visibility limit: 12 hours from the receive (ChangeMessageVisibility API reference). */
const SQS_MAX_VISIBILITY_SECONDS = 43_200;
/** Lambda's longest batching window: how long before the invocation a record may have been received. */
const MAX_BATCHING_WINDOW_SECONDS = 300;

/**
 * The longest deferral SQS accepts for a record of an invocation that has run `elapsedMs`: 12 hours
 * from the receive, less the batching window the record may have waited in and the time run so far.
 *
 * @example
 * maxDeferralSeconds(0); // 42900
 */
export function maxDeferralSeconds(elapsedMs: number): number {
  return SQS_MAX_VISIBILITY_SECONDS - MAX_BATCHING_WINDOW_SECONDS - Math.ceil(elapsedMs / 1000);
}

/** In-process waits per object before the message is deferred instead. */
const MAX_IN_PROCESS_WAITS = 3;

/**
 * How long to wait in this invocation before running an object again, for an error that asks for a
 * later retry (`retryAfterSeconds`, e.g. a ledger lease held elsewhere): undefined when the error
 * does not ask, the waits are used up, or the wait plus `reserveMs` does not fit in `remainingMs`
 * (then the message is deferred with ChangeMessageVisibility, which spends a receive).
 *
 * @example
 * inProcessWaitMs({ retryAfterSeconds: 3 }, 0, 7000, 1600); // 3000
 * inProcessWaitMs({ retryAfterSeconds: 6 }, 0, 7000, 1600); // undefined
 */
export function inProcessWaitMs(
  error: unknown,
  waits: number,
  remainingMs: number,
  reserveMs: number,
): number | undefined {
  const seconds = (error as Partial<DeferrableError> | undefined)?.retryAfterSeconds;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return undefined;
  if (waits >= MAX_IN_PROCESS_WAITS) return undefined;
  // At least a moment: a lease that just ended may read as 0 s left.
  const waitMs = Math.max(100, Math.ceil(seconds * 1000));
  return waitMs + reserveMs < remainingMs ? waitMs : undefined;
}
