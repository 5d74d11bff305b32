import type { InvocationOutcome } from './batchResponse.js';

/** What happened in one invocation. */
export interface InvocationReport {
  requestId: string;
  /** Ids of every message in the batch, in receive order. */
  messageIds: string[];
  /** Ids of the messages deleted from the queue. */
  deleted: string[];
  /** Ids of the messages left in the queue: they return after the visibility timeout. */
  retained: string[];
  outcome: InvocationOutcome;
  /** From invoke to settled (on the `now` clock), excluding the deletes. */
  durationMs: number;
  /** The handler's error, the invalid-response reason, or the timeout. */
  error?: string;
  /** Deletes that SQS refused (for example an expired receipt handle): those messages come back. */
  deleteFailures?: { messageId: string; code: string; message: string }[];
}
