import type { CoveredInput, RecordOutcome } from '../worker/outcomes.js';

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

/** A delivery whose attempt is starting, as a batch handler knows it. */
export interface StartedDelivery {
  /** `eventSourceARN` of the SQS record. */
  readonly queueArn: string;
  readonly messageId: string;
  /** ApproximateReceiveCount of this delivery. */
  readonly receiveCount: number;
  /** What the message was about (`s3://bucket/key`, a partition), when known. */
  readonly subject?: string;
}

/**
 * The provisional record written when a message's last attempt started: completed by
 * {@link FailureRecorder.record} when the attempt fails, removed by
 * {@link FailureRecorder.attemptSucceeded} when it succeeds, left as written when the attempt dies.
 */
export interface StartedRecord {
  /** The record's key in the bucket. */
  readonly key: string;
  /** Its ETag, so completing or removing it touches only what this attempt wrote (If-Match). */
  readonly etag: string;
  /** What the message is about, as in {@link StartedDelivery}. */
  readonly subject?: string | undefined;
  /** An earlier record of the message was found and kept (not a provisional record of this attempt's). */
  readonly kept?: boolean;
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
  /**
   * Records the failure when it is a give-up; resolves with the record's key, or undefined. With
   * `started`, the provisional record of this attempt is completed in place (If-Match on its ETag).
   */
  record(failure: FailedDelivery, started?: StartedRecord): Promise<string | undefined>;
  /**
   * Called before a record's attempt starts. On the message's last receive, writes the provisional
   * record "last attempt started, no outcome recorded: crashed or timed out", so a message whose last
   * attempt crashes, is killed or times out (nothing runs after that) reaches the DLQ with a reason.
   * Resolves with what was written, or undefined (not the last receive, or the write failed).
   * Never throws.
   * @default absent: only failures that are handled get a record
   */
  attemptStarted?(delivery: StartedDelivery): Promise<StartedRecord | undefined>;
  /**
   * The attempt succeeded: the message is about to be deleted, so its provisional record is removed
   * (a conditional delete on the ETag written at the start). Never throws.
   */
  attemptSucceeded?(started: StartedRecord): Promise<void>;
  /**
   * A delivery after the message's first succeeded, with no provisional record of its own: a record
   * that an earlier receive wrote (a non-retryable failure, which SQS retries all the same until the
   * DLQ) no longer names a message in the DLQ or on its way there, so it is removed with its index
   * entry (conditional deletes). A record of a later receive (a concurrent delivery) stands. Never
   * throws.
   * @default absent: such a record stays until the bucket's lifecycle rule expires it
   */
  retrySucceeded?(delivery: StartedDelivery): Promise<void>;
  /**
   * A record succeeded and left this input with a valid output built from the content with this
   * ETag: the failures of that input it supersedes (of any message: one `rerun redrive` moved back
   * under a new id, a duplicate given up on) no longer describe where the input stands, so their
   * index entries are removed, conditionally; a failure of newer content stands. Never throws.
   * @default absent: index entries stay until the bucket's lifecycle rule expires them
   */
  inputCovered?(input: CoveredInput): Promise<void>;
}
