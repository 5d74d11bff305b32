import type { RecordOutcome } from '../worker/outcomes.js';

/** One failed delivery, as a batch handler knows it. */
export interface FailedDelivery {
  /** `eventSourceARN` of the SQS record. */
  readonly queueArn: string;
  readonly messageId: string;
  /** ApproximateReceiveCount of this delivery. */
  readonly receiveCount: number;
  /** The handler's outcome for the record (status `failed`). */
  readonly outcome: RecordOutcome;
  /** What the message was about (`s3://bucket/key`, a partition), when known. */
  readonly subject?: string;
}

/**
 * Records why a worker gave up on a message, so an operator can read the reason before redriving
 * it. Batch handlers call it for every failed record; the recorder decides whether this failure is
 * a give-up (see giveUpReason) and must never throw: a failed record keeps its batch-item failure.
 *
 * @example
 * const recorder: FailureRecorder = new S3FailureRecorder({ store, sqs, bucket: 'rerun-output' });
 * createSqsBatchHandler({ worker, store, sqs, failureRecorder: recorder });
 */
export interface FailureRecorder {
  /** Records the failure when it is a give-up; resolves with the record's key, or undefined. */
  record(failure: FailedDelivery): Promise<string | undefined>;
}
