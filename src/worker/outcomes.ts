import { EventEmitter } from 'node:events';
import type { ErrorDescription } from '../logging/logger.js';

/** How one SQS record ended. */
export const RecordStatus = {
  /** An output was written. */
  PROCESSED: 'processed',
  /** Nothing needed doing (already done, test event, input deleted, unsupported...): acknowledged. */
  SKIPPED: 'skipped',
  /** Reported as a batch item failure: the message comes back, and after maxReceiveCount goes to the DLQ. */
  FAILED: 'failed',
  /**
   * The deadline came near before all of the message's S3 records were done: the ones done are done,
   * the rest were sent back to the worker's queue as a new message (`requeuedAs`), and this message
   * was acknowledged. Not a failure: the new message starts with a receive count of 1.
   */
  REQUEUED: 'requeued',
} as const;
export type RecordStatus = (typeof RecordStatus)[keyof typeof RecordStatus];

/** An input with a valid output, and the ETag of the input content that output was built from. */
export interface CoveredInput {
  readonly bucket: string;
  readonly key: string;
  /** ETag without quotes. */
  readonly etag: string;
}

/** The classified outcome of one SQS record, with the reason an operator reads. */
export interface RecordOutcome {
  readonly messageId: string;
  readonly status: RecordStatus;
  readonly reason: string;
  readonly source?: { readonly bucket: string; readonly key: string };
  readonly outputKey?: string;
  /**
   * The inputs this record leaves with a valid output (written now or found done), each with the
   * ETag of the input content that output was built from: what a failure recorder needs to tell
   * which earlier failures of an input a success supersedes (FailureRecorder.inputCovered).
   */
  readonly covered?: readonly CoveredInput[];
  /** How many times SQS has delivered this message (ApproximateReceiveCount). */
  readonly receiveCount?: number;
  /** Side effects (e.g. webhook notifications) that ran for this record now, not replayed. */
  readonly effectsExecuted?: number;
  /** Entries the transform quarantined: the numeric `quarantined` of its summary, when it has one. */
  readonly quarantined?: number;
  /** Publish races (412) lost to another writer before the record's output was published or found done. */
  readonly publishRacesLost?: number;
  /** For failures: whether a retry can help. */
  readonly retryable?: boolean;
  /**
   * For failures caused by an error: the error as data (name, message, stack, SDK code, cause
   * chain), so the outcome's log line and the failure record say where it came from and why.
   */
  readonly error?: ErrorDescription;
  /**
   * For failures: the message was deferred (ChangeMessageVisibility) by this many seconds instead of
   * coming back after the queue's visibility timeout. A deferral still spends a receive.
   */
  readonly deferredSeconds?: number;
  /** For requeued records: how many of the message's S3 records went back to the queue. */
  readonly requeuedRecords?: number;
  /** For requeued records: the message id of the new message that carries them. */
  readonly requeuedAs?: string;
}

/**
 * The key of the process-wide outcome channel. `Symbol.for` is one registry per process, so every
 * copy of rerun-pipeline loaded into it (the sources `rerun dev` runs from in a checkout, the
 * package's dist/ a worker imports, a bundle with the library inside) reports to the same listeners:
 * `rerun dev` sees the outcomes of any in-process handler built with rerun, whichever copy it uses.
 */
const CHANNEL = Symbol.for('rerun-pipeline.recordOutcomes');

function channel(): EventEmitter {
  const holder = globalThis as { [CHANNEL]?: EventEmitter };
  let emitter = holder[CHANNEL];
  if (!emitter) {
    emitter = new EventEmitter();
    emitter.setMaxListeners(100);
    holder[CHANNEL] = emitter;
  }
  return emitter;
}

/**
 * Publishes a record outcome to in-process listeners (the batch handler calls it for every record).
 * Listeners are how `rerun dev` and the tests observe a handler they load as a module; they hear
 * the handlers of every copy of the library in the process (see CHANNEL).
 */
export function emitRecordOutcome(outcome: RecordOutcome): void {
  channel().emit('outcome', outcome);
}

/**
 * Subscribes to record outcomes of every batch handler in this process; returns the unsubscribe.
 *
 * @example
 * const stop = onRecordOutcome((o) => console.log(o.status, o.reason));
 * // ...
 * stop();
 */
export function onRecordOutcome(listener: (outcome: RecordOutcome) => void): () => void {
  const emitter = channel();
  emitter.on('outcome', listener);
  return () => emitter.off('outcome', listener);
}

/** What an {@link OutcomeHook} is told besides the outcome. */
export interface OutcomeHookContext {
  /** The handler's worker (or task handler) name, as in its log lines. */
  readonly worker: string;
}

/**
 * A batch handler's `onOutcome` option: called with every record's outcome, after the outcome is
 * logged and before the handler returns, then `flush` once per invocation after the last outcome.
 * Outcome metrics are its main use (see src/metrics/). Neither may fail a batch: an error thrown by
 * either is logged and the batch result stands.
 *
 * @example
 * const onOutcome: OutcomeHook = (outcome, { worker }) => counts.set(`${worker}:${outcome.status}`, ...);
 * createSqsBatchHandler({ worker, store, sqs, onOutcome });
 */
export type OutcomeHook = ((outcome: RecordOutcome, context: OutcomeHookContext) => void) & {
  /** Writes what the hook gathered over the invocation (e.g. one EMF line). @default none */
  readonly flush?: () => void | Promise<void>;
};
