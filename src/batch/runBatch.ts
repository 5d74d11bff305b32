import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { FailureRecorder, StartedRecord } from '../failures/FailureRecorder.js';
import type { Logger } from '../logging/logger.js';
import { type OutcomeHook, type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import { mapWithConcurrency } from './mapWithConcurrency.js';
import { reportOutcomes } from './reportOutcomes.js';

/** The batch rules every rerun handler shares. */
export interface BatchRules {
  /** Records run at once (FIFO batches always run one at a time, in order). */
  readonly concurrency: number;
  /**
   * No record starts when less than this much of the function's time is left.
   * @default {@link defaultDeadlineMarginMs} of the time left when the invocation starts
   */
  readonly deadlineMarginMs?: number;
  /**
   * The object a record is about, read from its body, so that a record that never started is named
   * by its object (bucket and key) like every other outcome, not only by its message id.
   * @default none: unstarted records carry their message id only
   */
  readonly subjectOf?: (record: SQSRecord) => { readonly bucket: string; readonly key: string } | undefined;
  readonly logger: Logger;
  /** Records why a message was given up on; see createSqsBatchHandler. */
  readonly failureRecorder?: FailureRecorder;
  /** The handler's name, told to `onOutcome`. */
  readonly name: string;
  /** Called with every outcome, then flushed once per invocation; see {@link OutcomeHook}. */
  readonly onOutcome?: OutcomeHook;
}

/**
 * Runs one SQS batch by AWS's partial-batch-response rules: every record gets a classified outcome,
 * only failed ones are listed in `batchItemFailures`, and nothing throws for a record (a throw would
 * make AWS retry the whole batch). Bounded concurrency; records not started before the deadline
 * are reported as failures; on a FIFO queue, every record after the first failure is reported
 * failed too, so SQS redelivers them in order. Outcomes are logged and emitted to onRecordOutcome.
 *
 * @example
 * return runBatch(event, context, (record) => processRecord(record, context), rules);
 */
export async function runBatch(
  event: SQSEvent,
  context: Context,
  processRecord: (record: SQSRecord) => Promise<RecordOutcome>,
  rules: BatchRules,
): Promise<SQSBatchResponse> {
  const records = event.Records ?? [];
  const fifo = records[0]?.eventSourceARN?.endsWith('.fifo') ?? false;
  const timeAtStart = context.getRemainingTimeInMillis();
  const margin = rules.deadlineMarginMs ?? defaultDeadlineMarginMs(timeAtStart);
  // A margin that is not below the whole invocation's time can never let a record start: say which
  // setting to change instead of failing every record as "deadline is near" until the DLQ.
  const contradiction =
    margin >= timeAtStart
      ? `not started: deadlineMarginMs (${margin} ms) is not below the function's time (${timeAtStart} ms), so no record can ever start; lower deadlineMarginMs or raise the function timeout`
      : undefined;
  if (contradiction) rules.logger.error(contradiction.replace(/^not started: /, ''));
  let fifoBlocked = false;
  const run = async (record: SQSRecord): Promise<RecordOutcome> => {
    const notStarted = (reason: string): RecordOutcome => {
      const subject = rules.subjectOf?.(record);
      return {
        messageId: record.messageId,
        receiveCount: receiveCountOf(record),
        status: RecordStatus.FAILED,
        retryable: true,
        reason,
        ...(subject ? { source: subject } : {}),
      };
    };
    if (contradiction) return notStarted(contradiction);
    if (fifoBlocked) return notStarted('not started: an earlier record of this FIFO batch failed');
    if (context.getRemainingTimeInMillis() < margin) {
      return notStarted(`not started: function deadline is near (less than ${margin} ms left)`);
    }
    const outcome = await processRecord(record);
    if (fifo && outcome.status === RecordStatus.FAILED) fifoBlocked = true;
    return outcome;
  };
  // A last attempt that crashes, is killed or times out runs no code after it: its reason must be
  // on record before it starts, or the queue's redrive policy moves the message to the DLQ with none.
  const started = rules.failureRecorder
    ? await recordStarts(rules.failureRecorder, records, rules)
    : records.map(() => undefined);
  const outcomes = await mapWithConcurrency(records, fifo ? 1 : rules.concurrency, run);
  if (rules.failureRecorder) {
    await recordEnds(rules.failureRecorder, records, outcomes, started, rules.concurrency);
  }
  await reportOutcomes(outcomes, rules, 'batch');
  return {
    batchItemFailures: outcomes
      .filter((o) => o.status === RecordStatus.FAILED)
      .map((o) => ({ itemIdentifier: o.messageId })),
  };
}

/**
 * The default deadline margin: a tenth of the invocation's time, at least 250 ms and at most 5 s.
 * It scales with the function timeout, so a short local timeout (`rerun dev --function-timeout 5`)
 * still leaves time to start records, and a long one keeps 5 s for the record in flight.
 *
 * @example
 * defaultDeadlineMarginMs(60_000); // 5000
 * defaultDeadlineMarginMs(5_000);  // 500
 */
export function defaultDeadlineMarginMs(invocationTimeMs: number): number {
  return Math.min(5000, Math.max(250, Math.floor(invocationTimeMs / 10)));
}

/** SQS's ApproximateReceiveCount of a record (1 when absent). */
export function receiveCountOf(record: SQSRecord): number {
  return Number(record.attributes?.ApproximateReceiveCount ?? '1');
}

/** Tells the recorder about every record before any starts; it keeps a provisional record of each last receive. */
async function recordStarts(
  recorder: FailureRecorder,
  records: readonly SQSRecord[],
  rules: BatchRules,
): Promise<(StartedRecord | undefined)[]> {
  if (!recorder.attemptStarted) return records.map(() => undefined);
  const attemptStarted = recorder.attemptStarted.bind(recorder);
  return mapWithConcurrency(records, rules.concurrency, (record) => {
    const subject = rules.subjectOf?.(record);
    return attemptStarted({
      queueArn: record.eventSourceARN,
      messageId: record.messageId,
      receiveCount: receiveCountOf(record),
      ...(subject ? { subject: `s3://${subject.bucket}/${subject.key}` } : {}),
    });
  });
}

/**
 * Hands every failed record to the recorder, which keeps the give-ups (completing a provisional
 * record in place), and removes the provisional record of a last attempt that succeeded, or the
 * record an earlier receive wrote of a retry that succeeded (bounded concurrency).
 */
async function recordEnds(
  recorder: FailureRecorder,
  records: readonly SQSRecord[],
  outcomes: readonly RecordOutcome[],
  started: readonly (StartedRecord | undefined)[],
  concurrency: number,
): Promise<void> {
  const ends = outcomes.flatMap((outcome, i) => {
    const record = records[i];
    return record ? [{ record, outcome, started: started[i] }] : [];
  });
  await mapWithConcurrency(ends, concurrency, async ({ record, outcome, started }) => {
    if (outcome.status !== RecordStatus.FAILED) {
      if (started) await recorder.attemptSucceeded?.(started);
      else {
        // A retry that succeeded: a record an earlier receive wrote would name a message that never
        // reaches the DLQ (README: a record's message "is in the DLQ or on its way there").
        await recorder.retrySucceeded?.({
          queueArn: record.eventSourceARN,
          messageId: record.messageId,
          receiveCount: outcome.receiveCount ?? receiveCountOf(record),
        });
      }
      // Earlier failures of the same inputs, under other messages (one `rerun redrive` moved back
      // with a new id, a duplicate given up on): the index must not keep calling them dead-lettered.
      if (recorder.inputCovered) {
        for (const input of outcome.covered ?? []) await recorder.inputCovered(input);
      }
      return;
    }
    await recorder.record(
      {
        queueArn: record.eventSourceARN,
        messageId: record.messageId,
        receiveCount: outcome.receiveCount ?? receiveCountOf(record),
        outcome,
        ...(outcome.source ? { subject: `s3://${outcome.source.bucket}/${outcome.source.key}` } : {}),
      },
      started,
    );
  });
}
