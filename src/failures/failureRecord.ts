/**
 * Why a worker gave up on a message, recorded where `rerun redrive` can find it before moving the
 * message back: one JSON object per message at a deterministic key,
 * `{failurePrefix}{queue name}/{message id}.json` in the output bucket. SQS keeps a message's id when
 * its redrive policy moves it to the DLQ, so the DLQ message's id finds its record.
 */

import type { ErrorDescription } from '../logging/logger.js';

/** Identifies the document format. */
export const FAILURE_RECORD_SCHEMA = 'rerun.failure/1';

/** Where failure records are written in the output bucket unless a recorder is told otherwise. */
export const DEFAULT_FAILURE_PREFIX = 'failures/';

/** Why the worker gave up: the message's last allowed receive, or an error no retry can fix. */
export const GiveUpReason = {
  /** ApproximateReceiveCount reached the queue's maxReceiveCount: SQS moves it to the DLQ next. */
  LAST_RECEIVE: 'last-receive',
  /** The failure is not retryable (e.g. not a valid message): every retry fails the same way. */
  NON_RETRYABLE: 'non-retryable',
} as const;
export type GiveUpReason = (typeof GiveUpReason)[keyof typeof GiveUpReason];

/**
 * The reason of the provisional record written when a message's last attempt starts: it stays only
 * when the attempt records no outcome of its own, which happens when the process crashed, was killed
 * or ran out of time (nothing of the handler runs after a Lambda timeout).
 */
export const LAST_ATTEMPT_STARTED_REASON = 'last attempt started, no outcome recorded: crashed or timed out';

/** The record of one given-up message. */
export interface FailureRecord {
  readonly schema: typeof FAILURE_RECORD_SCHEMA;
  readonly queueName: string;
  readonly queueArn: string;
  readonly messageId: string;
  /** ApproximateReceiveCount of the failed delivery. */
  readonly receiveCount: number;
  /** The queue's maxReceiveCount, when it has a redrive policy. */
  readonly maxReceiveCount?: number;
  readonly givenUp: GiveUpReason;
  readonly retryable: boolean;
  /** The reason the handler reported (error name and message). */
  readonly reason: string;
  /**
   * The error behind the failure, when one was thrown: name, message, stack, SDK code and HTTP
   * status, and its cause chain (see describeError), so the record shows where it came from.
   */
  readonly error?: ErrorDescription;
  /** What the message was about: `s3://bucket/key`, a partition, or absent. */
  readonly subject?: string;
  /** When the failure was recorded (ISO 8601, from the recorder's clock). */
  readonly failedAt: string;
}

/**
 * The key of a message's failure record.
 *
 * @example
 * failureRecordKey('failures/', 'rerun-normalize-queue', '5ff6d6c4-...'); // 'failures/rerun-normalize-queue/5ff6d6c4-....json'
 */
export function failureRecordKey(prefix: string, queueName: string, messageId: string): string {
  return `${prefix}${queueName}/${messageId}.json`;
}

/**
 * Whether a failed delivery is the worker giving up: a non-retryable failure (SQS will still
 * redeliver it until maxReceiveCount, failing the same way), or the last receive the queue allows.
 * Retryable failures before the last receive are not recorded: they are expected to recover.
 *
 * @example
 * giveUpReason({ retryable: true, receiveCount: 5 }, 5); // 'last-receive'
 * giveUpReason({ retryable: true, receiveCount: 2 }, 5); // undefined
 */
export function giveUpReason(
  failure: { readonly retryable?: boolean; readonly receiveCount: number },
  maxReceiveCount: number | undefined,
): GiveUpReason | undefined {
  if (failure.retryable === false) return GiveUpReason.NON_RETRYABLE;
  if (maxReceiveCount !== undefined && failure.receiveCount >= maxReceiveCount) return GiveUpReason.LAST_RECEIVE;
  return undefined;
}

/**
 * Reads a failure record back; undefined when the bytes are not one.
 *
 * @example
 * const record = parseFailureRecord(bytes);
 */
export function parseFailureRecord(bytes: Uint8Array): FailureRecord | undefined {
  try {
    const doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as Partial<FailureRecord>;
    if (doc?.schema !== FAILURE_RECORD_SCHEMA || typeof doc.reason !== 'string' || typeof doc.messageId !== 'string') {
      return undefined;
    }
    return doc as FailureRecord;
  } catch {
    return undefined;
  }
}

/** The queue name of a queue ARN (`arn:aws:sqs:region:account:name`). */
export function queueNameOfArn(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1);
}
